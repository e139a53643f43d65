//! The Wing & Gong linearizability search for one key's sub-history, with
//! Lowe's memoization, as in Porcupine's `checker.go` (`checkSingle`).
//!
//! Calls and returns sit in one doubly linked list ordered by time (calls
//! before returns at equal times). Walking from the head:
//! - at a call whose step is legal in the current state, and whose
//!   (linearized set + this op, next state) was never seen, the op is
//!   linearized: its call and return are lifted out of the list, the choice
//!   is pushed on a stack, and the walk restarts from the head;
//! - at a return whose op is not linearized yet, some op that must precede it
//!   has no legal place: pop the last choice, put it back in the list, and
//!   try the entry after it. An empty stack means the history is illegal.
//!
//! The list empties exactly when every op is linearized. Maybe-applied ops
//! return at +infinity, so they can always be linearized last (no effect).
//!
//! An *optional* op (a write cut by a crash) returns at its crash time but
//! may also be linearized as a no-op: at its call the search tries the
//! effect first and keeps the no-op as the alternative; backtracking into it
//! takes the alternative before moving on. Both choices are memoized like any
//! other (linearized set, state) pair.
//!
//! Thread safety: a search is single-threaded; it polls `kill` so a caller
//! can abandon it (timeout, or another partition already failed).

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};

use super::bitset::Bitset;
use super::model::{State, Step, ABSENT};

/// "No node" in the index-linked list.
const NIL: usize = usize::MAX;

/// One timed step of a partition, ready for the search.
#[derive(Debug, Clone, Copy)]
pub struct TimedStep {
    /// The interned operation.
    pub step: Step,
    /// Call time.
    pub call: u64,
    /// Return time (`u64::MAX` for maybe-applied ops).
    pub ret: u64,
    /// True if the op may also be linearized as a no-op before `ret`.
    pub optional: bool,
}

/// A list node: node 0 is the head sentinel, then one call and one return
/// node per op.
#[derive(Clone, Copy)]
struct Node {
    op: usize,
    /// For a call node, the index of its return node; `NIL` for returns.
    ret_node: usize,
    prev: usize,
    next: usize,
}

struct List {
    nodes: Vec<Node>,
}

impl List {
    fn build(ops: &[TimedStep]) -> List {
        // (time, is_return, op): calls sort before returns at equal times.
        let mut events: Vec<(u64, bool, usize)> = Vec::with_capacity(ops.len() * 2);
        for (i, op) in ops.iter().enumerate() {
            events.push((op.call, false, i));
            events.push((op.ret, true, i));
        }
        events.sort_unstable();
        let mut return_node = vec![NIL; ops.len()];
        for (pos, &(_, is_ret, op)) in events.iter().enumerate() {
            if is_ret {
                return_node[op] = pos + 1;
            }
        }
        let n = events.len();
        let mut nodes = Vec::with_capacity(n + 1);
        nodes.push(Node {
            op: NIL,
            ret_node: NIL,
            prev: NIL,
            next: if n > 0 { 1 } else { NIL },
        });
        for (pos, &(_, is_ret, op)) in events.iter().enumerate() {
            let idx = pos + 1;
            nodes.push(Node {
                op,
                ret_node: if is_ret { NIL } else { return_node[op] },
                prev: idx - 1,
                next: if idx < n { idx + 1 } else { NIL },
            });
        }
        List { nodes }
    }

    fn unlink(&mut self, i: usize) {
        let Node { prev, next, .. } = self.nodes[i];
        self.nodes[prev].next = next;
        if next != NIL {
            self.nodes[next].prev = prev;
        }
    }

    fn relink(&mut self, i: usize) {
        let Node { prev, next, .. } = self.nodes[i];
        self.nodes[prev].next = i;
        if next != NIL {
            self.nodes[next].prev = i;
        }
    }

    /// Removes a call and its return (return first: it is later).
    fn lift(&mut self, call: usize) {
        let ret = self.nodes[call].ret_node;
        self.unlink(call);
        self.unlink(ret);
    }

    /// Undoes `lift` (in reverse order, so the saved links are valid).
    fn unlift(&mut self, call: usize) {
        let ret = self.nodes[call].ret_node;
        self.relink(ret);
        self.relink(call);
    }
}

/// Checks one partition: `Some(true)` linearizable, `Some(false)` not,
/// `None` if `kill` was raised first.
pub fn check_steps(ops: &[TimedStep], kill: &AtomicBool) -> Option<bool> {
    let mut list = List::build(ops);
    let mut linearized = Bitset::new(ops.len());
    let mut cache: HashSet<(Bitset, State)> = HashSet::new();
    // Stack of (call node, state before it, no-op alternative still open).
    let mut calls: Vec<(usize, State, bool)> = Vec::new();
    let mut state = ABSENT;
    let mut entry = list.nodes[0].next;
    let mut iterations: u64 = 0;
    // True if (linearized + op, next) was never seen; records it.
    let mut fresh = |linearized: &Bitset, op: usize, next: State| {
        let mut l = linearized.clone();
        l.set(op);
        cache.insert((l, next))
    };
    while list.nodes[0].next != NIL {
        iterations += 1;
        if iterations & 4095 == 0 && kill.load(Ordering::Relaxed) {
            return None;
        }
        let Some(&node) = list.nodes.get(entry) else {
            // Cannot happen: every call precedes its own return, so the walk
            // meets a return before running off the end.
            return Some(false);
        };
        if node.ret_node != NIL {
            let op = &ops[node.op];
            let effect = op
                .step
                .apply(state)
                .filter(|&s| fresh(&linearized, node.op, s));
            let choice = match effect {
                // The no-op stays open if it differs from the effect.
                Some(s) => Some((s, op.optional && s != state)),
                None if op.optional && fresh(&linearized, node.op, state) => Some((state, false)),
                None => None,
            };
            match choice {
                Some((s, alternative)) => {
                    calls.push((entry, state, alternative));
                    state = s;
                    linearized.set(node.op);
                    list.lift(entry);
                    entry = list.nodes[0].next;
                }
                None => entry = node.next,
            }
        } else {
            // A return whose op is not linearized: backtrack.
            let Some((call, prev_state, alternative)) = calls.pop() else {
                return Some(false);
            };
            let op = list.nodes[call].op;
            state = prev_state;
            linearized.clear(op);
            list.unlift(call);
            if alternative && fresh(&linearized, op, state) {
                // Take the optional op's no-op instead.
                calls.push((call, state, false));
                linearized.set(op);
                list.lift(call);
                entry = list.nodes[0].next;
            } else {
                entry = list.nodes[call].next;
            }
        }
    }
    Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(ops: &[TimedStep]) -> bool {
        check_steps(ops, &AtomicBool::new(false)).unwrap_or(false)
    }

    fn op(step: Step, call: u64, ret: u64) -> TimedStep {
        TimedStep {
            step,
            call,
            ret,
            optional: false,
        }
    }

    fn optional(step: Step, call: u64, ret: u64) -> TimedStep {
        TimedStep {
            optional: true,
            ..op(step, call, ret)
        }
    }

    #[test]
    fn optional_ops_apply_or_not_but_only_before_their_bound() {
        // Put(1) cut by a crash at 10: later reads may see it or not...
        assert!(run(&[
            optional(Step::Put(1), 0, 10),
            op(Step::Get(1), 20, 21)
        ]));
        assert!(run(&[
            optional(Step::Put(1), 0, 10),
            op(Step::Get(ABSENT), 20, 21)
        ]));
        // ...but not first not and then yes: it cannot apply after 10.
        assert!(!run(&[
            optional(Step::Put(1), 0, 10),
            op(Step::Get(ABSENT), 20, 21),
            op(Step::Get(1), 22, 23),
        ]));
        // An unbounded maybe (ret = +inf) would allow exactly that.
        assert!(run(&[
            op(Step::Put(1), 0, u64::MAX),
            op(Step::Get(ABSENT), 20, 21),
            op(Step::Get(1), 22, 23),
        ]));
        // A cut delete: the key may stay, or vanish before 10, not later.
        let put = op(Step::Put(1), 0, 1);
        assert!(run(&[
            put,
            optional(Step::Delete, 2, 10),
            op(Step::Get(1), 20, 21)
        ]));
        assert!(run(&[
            put,
            optional(Step::Delete, 2, 10),
            op(Step::Get(ABSENT), 20, 21)
        ]));
        assert!(!run(&[
            put,
            optional(Step::Delete, 2, 10),
            op(Step::Get(1), 20, 21),
            op(Step::Get(ABSENT), 22, 23),
        ]));
        // Backtracking into the no-op: the effect first looks fine (the read
        // at 5 overlaps), then a read must see the old value.
        assert!(run(&[
            put,
            optional(Step::Put(2), 2, 10),
            op(Step::Get(1), 3, 9),
            op(Step::Get(1), 20, 21),
        ]));
    }

    #[test]
    fn empty_and_sequential() {
        assert!(run(&[]));
        assert!(run(&[op(Step::Get(ABSENT), 0, 1)]));
        assert!(!run(&[op(Step::Get(1), 0, 1)]));
        assert!(run(&[
            op(Step::Put(1), 0, 1),
            op(Step::Get(1), 2, 3),
            op(Step::Delete, 4, 5),
            op(Step::Get(ABSENT), 6, 7),
        ]));
    }

    #[test]
    fn concurrent_orders() {
        // A read overlapping a write may see either value.
        assert!(run(&[op(Step::Put(1), 0, 10), op(Step::Get(ABSENT), 5, 6)]));
        assert!(run(&[op(Step::Put(1), 0, 10), op(Step::Get(1), 5, 6)]));
        // Two reads in sequence cannot see new then old.
        assert!(!run(&[
            op(Step::Put(1), 0, 10),
            op(Step::Get(1), 2, 3),
            op(Step::Get(ABSENT), 4, 5),
        ]));
    }

    #[test]
    fn killed_search_reports_none() {
        let kill = AtomicBool::new(true);
        let ops: Vec<TimedStep> = (0..5000).map(|i| op(Step::Put(1), i, i + 1)).collect();
        assert_eq!(check_steps(&ops, &kill), None);
    }
}
