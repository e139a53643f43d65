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
    // Stack of (call node, state before it).
    let mut calls: Vec<(usize, State)> = Vec::new();
    let mut state = ABSENT;
    let mut entry = list.nodes[0].next;
    let mut iterations: u64 = 0;
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
            let next_state = ops[node.op].step.apply(state);
            let fresh = next_state.is_some_and(|s| {
                let mut l = linearized.clone();
                l.set(node.op);
                cache.insert((l, s))
            });
            match next_state {
                Some(s) if fresh => {
                    calls.push((entry, state));
                    state = s;
                    linearized.set(node.op);
                    list.lift(entry);
                    entry = list.nodes[0].next;
                }
                _ => entry = node.next,
            }
        } else {
            // A return whose op is not linearized: backtrack.
            let Some((call, prev_state)) = calls.pop() else {
                return Some(false);
            };
            state = prev_state;
            linearized.clear(list.nodes[call].op);
            list.unlift(call);
            entry = list.nodes[call].next;
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
        TimedStep { step, call, ret }
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
