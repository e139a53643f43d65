//! The cross-key check: write batches are atomic and a snapshot read (a
//! group of reads, see [`Operation::group`]) sees one consistent cut.
//!
//! The per-key check lets each read of a group take effect at its own point
//! in the group's interval, so a half-applied batch or a read that mixes two
//! points in time passes it. Here, for every read group R and every ordered
//! pair of keys (k, k') that R read: R saw the value of write W on k and the
//! value of write Y on k', so R's cut is after Y took effect. If some write X
//! on k certainly took effect after W and no later than Y, k no longer held
//! W's value at the cut, and the history is not explained by atomic batches
//! and atomic snapshots:
//! - X certainly took effect after W when X was called after W's latest
//!   possible effect time (W's return, else its crash bound, else never);
//! - X certainly took effect no later than Y when X returned before Y was
//!   called, or X is the write to k of Y's own batch (a batch takes effect
//!   at one point). This second case is batch atomicity: a snapshot that sees
//!   a batch's value on one key sees it, or something not certainly older,
//!   on every other key the batch wrote.
//!
//! Values are unique per key (the recorders guarantee it), so a value names
//! its write. A read of "absent" on k is explained by the initial state or
//! by any delete of k; the latest possible one is taken (the most lenient
//! W). A read of "absent" on k' gives no Y, and a value no write produced
//! gives neither (the per-key check reports it). X must have completed (ret
//! known) unless it is in Y's batch: a write cut by a crash may never have
//! taken effect.
//!
//! The check is sound (it flags only histories that no such linearization
//! explains) but not complete: with concurrent writes it gives the benefit
//! of the doubt. Cost: O(G · n² · log m) for G read groups of n keys and m
//! writes per key.

use std::collections::{BTreeMap, HashMap};

use super::history::{OpKind, Operation};

/// What the cross-key check found.
#[derive(Debug, Clone, Default)]
pub struct CutReport {
    /// Read groups with at least two keys.
    pub groups: usize,
    /// Ordered key pairs examined.
    pub pairs: u64,
    /// Pairs whose reads cannot come from one cut (descriptions, up to 20).
    pub violations: Vec<String>,
    /// Number of violations.
    pub violation_count: u64,
}

/// Completed writes of one key, sorted by call time, with the suffix
/// minimum of their return times (and which op has it).
struct Completed {
    calls: Vec<u64>,
    suffix_min_ret: Vec<(u64, usize)>,
}

impl Completed {
    fn build(mut ops: Vec<(u64, u64, usize)>) -> Completed {
        ops.sort_unstable();
        let mut suffix_min_ret = vec![(u64::MAX, usize::MAX); ops.len()];
        let mut min = (u64::MAX, usize::MAX);
        for (i, &(_, ret, op)) in ops.iter().enumerate().rev() {
            if ret < min.0 {
                min = (ret, op);
            }
            suffix_min_ret[i] = min;
        }
        Completed {
            calls: ops.iter().map(|o| o.0).collect(),
            suffix_min_ret,
        }
    }

    /// A completed write called after `after` (None: at any time) that
    /// returned before `before`.
    fn between(&self, after: Option<u64>, before: u64) -> Option<usize> {
        let i = after.map_or(0, |a| self.calls.partition_point(|&c| c <= a));
        let &(ret, op) = self.suffix_min_ret.get(i)?;
        (ret < before).then_some(op)
    }
}

fn show(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn show_value(v: &Option<Vec<u8>>) -> String {
    v.as_deref().map_or("absent".into(), show)
}

fn show_write(kind: &OpKind) -> String {
    match kind {
        OpKind::Put(v) => format!("the put of {}", show(v)),
        OpKind::Delete => "the delete".into(),
        OpKind::Get(_) => "a read".into(),
    }
}

/// Checks every read group of `history` against the batches and single
/// writes around it (see the module comment).
pub fn check_cuts(history: &[Operation]) -> CutReport {
    let mut writers: HashMap<(&[u8], &[u8]), usize> = HashMap::new();
    let mut latest_delete: HashMap<&[u8], u64> = HashMap::new();
    let mut completed: HashMap<&[u8], Vec<(u64, u64, usize)>> = HashMap::new();
    let mut batch_write: HashMap<(u64, &[u8]), usize> = HashMap::new();
    let mut read_groups: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (i, op) in history.iter().enumerate() {
        let key = op.key.as_slice();
        match &op.kind {
            OpKind::Get(_) => {
                if let (Some(g), Some(_)) = (op.group, op.ret) {
                    read_groups.entry(g).or_default().push(i);
                }
                continue;
            }
            OpKind::Put(v) => {
                writers.insert((key, v.as_slice()), i);
            }
            OpKind::Delete => {
                let d = latest_delete.entry(key).or_insert(0);
                *d = (*d).max(op.effect_deadline());
            }
        }
        if let Some(ret) = op.ret {
            completed.entry(key).or_default().push((op.call, ret, i));
        }
        if let Some(g) = op.group {
            batch_write.insert((g, key), i);
        }
    }
    let completed: HashMap<&[u8], Completed> = completed
        .into_iter()
        .map(|(k, ops)| (k, Completed::build(ops)))
        .collect();

    let mut report = CutReport::default();
    for (&group, reads) in &read_groups {
        if reads.len() < 2 {
            continue;
        }
        report.groups += 1;
        for &a in reads {
            let r_k = &history[a];
            let OpKind::Get(seen_k) = &r_k.kind else {
                continue;
            };
            let k = r_k.key.as_slice();
            // W's latest effect time; None: the initial state.
            let w_bound: Option<u64> = match seen_k {
                Some(v) => match writers.get(&(k, v.as_slice())) {
                    Some(&w) => Some(history[w].effect_deadline()),
                    None => continue,
                },
                None => latest_delete.get(k).copied(),
            };
            for &b in reads {
                let r_k2 = &history[b];
                let k2 = r_k2.key.as_slice();
                if k2 == k {
                    continue;
                }
                let OpKind::Get(Some(seen_k2)) = &r_k2.kind else {
                    continue;
                };
                let Some(&y) = writers.get(&(k2, seen_k2.as_slice())) else {
                    continue;
                };
                report.pairs += 1;
                let y_op = &history[y];
                let in_batch = y_op
                    .group
                    .and_then(|g| batch_write.get(&(g, k)))
                    .copied()
                    .filter(|&x| w_bound.is_none_or(|wb| history[x].call > wb));
                let ordered = || completed.get(k)?.between(w_bound, y_op.call);
                let Some(x) = in_batch.or_else(ordered) else {
                    continue;
                };
                report.violation_count += 1;
                if report.violations.len() < 20 {
                    let x_op = &history[x];
                    let why = if in_batch.is_some() {
                        "is in the same batch as".to_string()
                    } else {
                        format!("returned (at {:?}) before the call of", x_op.ret)
                    };
                    report.violations.push(format!(
                        "read group {group} saw {} = {} and {} = {} (written at {}..{:?}), \
                         but {} = {} is older than {} of {} (called at {}), which {why} \
                         the write {} saw",
                        show(k),
                        show_value(seen_k),
                        show(k2),
                        show(seen_k2),
                        y_op.call,
                        y_op.ret,
                        show(k),
                        show_value(seen_k),
                        show_write(&x_op.kind),
                        show(k),
                        x_op.call,
                        show(k2)
                    ));
                }
            }
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(k: &str, v: &str, call: u64, ret: u64) -> Operation {
        Operation::new(0, k.as_bytes(), OpKind::Put(v.into()), call, ret)
    }
    fn read(group: u64, seen: &[(&str, Option<&str>)], call: u64, ret: u64) -> Vec<Operation> {
        seen.iter()
            .map(|(k, v)| {
                let v = v.map(|v| v.as_bytes().to_vec());
                Operation::new(1, k.as_bytes(), OpKind::Get(v), call, ret).in_group(group)
            })
            .collect()
    }

    fn violations(h: &[Operation]) -> u64 {
        check_cuts(h).violation_count
    }

    #[test]
    fn whole_and_half_batches() {
        let batch = |v: &str, call, ret| {
            vec![
                put("a", v, call, ret).in_group(100),
                put("b", v, call, ret).in_group(100),
            ]
        };
        let mut h = batch("t1", 10, 20);
        h.extend(read(1, &[("a", Some("t1")), ("b", Some("t1"))], 30, 40));
        h.extend(read(2, &[("a", None), ("b", None)], 0, 5));
        assert_eq!(violations(&h), 0);
        // Half a batch: a has it, b is still initial.
        let mut bad = batch("t1", 10, 20);
        bad.extend(read(3, &[("a", Some("t1")), ("b", None)], 15, 40));
        assert_eq!(violations(&bad), 1, "{:?}", check_cuts(&bad));
        // Same, with b's older value written before the batch.
        let mut bad = vec![put("b", "old", 0, 5)];
        bad.extend(batch("t1", 10, 20));
        bad.extend(read(3, &[("a", Some("t1")), ("b", Some("old"))], 15, 40));
        assert_eq!(violations(&bad), 1);
        // A later value of b (written concurrently with the batch) is fine.
        let mut ok = batch("t1", 10, 20);
        ok.push(put("b", "new", 12, 25));
        ok.extend(read(4, &[("a", Some("t1")), ("b", Some("new"))], 30, 40));
        assert_eq!(violations(&ok), 0);
        // A batch cut by a crash: all or nothing still.
        let cut = |k: &str| {
            Operation::cut_by_crash(0, k.as_bytes(), OpKind::Put(b"t2".to_vec()), 10, 50)
                .in_group(7)
        };
        let mut h = vec![cut("a"), cut("b")];
        h.extend(read(5, &[("a", Some("t2")), ("b", Some("t2"))], 60, 70));
        assert_eq!(violations(&h), 0);
        let mut h = vec![cut("a"), cut("b")];
        h.extend(read(5, &[("a", None), ("b", Some("t2"))], 60, 70));
        assert_eq!(violations(&h), 1);
    }

    #[test]
    fn snapshot_reads_see_one_point_in_time() {
        // a := 1 then b := 1, in real-time order. A cut seeing b = 1 must
        // see a = 1.
        let h0 = vec![put("a", "1", 0, 1), put("b", "1", 2, 3)];
        let mut bad = h0.clone();
        bad.extend(read(1, &[("a", None), ("b", Some("1"))], 4, 5));
        assert_eq!(violations(&bad), 1);
        let mut ok = h0.clone();
        ok.extend(read(1, &[("a", Some("1")), ("b", None)], 0, 5));
        assert_eq!(violations(&ok), 0);
        // Reads not in one group are not constrained together.
        let mut ok = h0;
        ok.push(Operation::new(1, b"a", OpKind::Get(None), 0, 1));
        ok.push(Operation::new(
            1,
            b"b",
            OpKind::Get(Some(b"1".to_vec())),
            4,
            5,
        ));
        assert_eq!(violations(&ok), 0);
        // An absent key explained by a delete concurrent with b's write.
        let h = vec![
            put("a", "1", 0, 1),
            Operation::new(0, b"a", OpKind::Delete, 2, 10),
            put("b", "1", 3, 4),
        ];
        let mut ok = h.clone();
        ok.extend(read(1, &[("a", None), ("b", Some("1"))], 11, 12));
        assert_eq!(violations(&ok), 0);
    }
}
