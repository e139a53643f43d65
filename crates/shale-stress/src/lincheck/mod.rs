//! A linearizability checker for key-value histories.
//!
//! The history is partitioned by key (a history of independent registers is
//! linearizable iff each key's sub-history is: Herlihy & Wing's locality,
//! used by Porcupine's `Partition`), and each partition is searched with
//! Wing & Gong's algorithm plus Lowe's memoization ([`wgl`]). Partitions are
//! checked in parallel on scoped threads; the first illegal partition stops
//! the others, and a timeout stops all of them with [`CheckResult::Unknown`].
//!
//! Multi-key operations (write batches, snapshot reads of several keys) are
//! recorded as one operation per key with the group's interval; this per-key
//! check cannot see their atomicity, which [`cut`] checks separately.
//! Writes cut by a crash are optional ops bounded by the crash (see
//! [`Operation::crash`] and [`wgl`]).
//!
//! Histories can be saved in Porcupine's operation JSON ([`porcupine_json`])
//! and cross-checked offline with the Go tool.

mod bitset;
pub mod cut;
mod history;
mod model;
pub mod porcupine_json;
mod wgl;

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub use history::{OpKind, Operation};

use model::{Interner, State, Step};
use wgl::TimedStep;

/// The verdict of a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckResult {
    /// Every partition has a linearization.
    Ok,
    /// Some partition has none.
    Illegal,
    /// The timeout expired before a verdict (no partition was found illegal).
    Unknown,
}

/// A verdict with the details needed to investigate it.
#[derive(Debug, Clone)]
pub struct CheckReport {
    /// The verdict.
    pub result: CheckResult,
    /// Keys whose sub-history was found illegal (sorted; possibly not all of
    /// them, since the check stops at the first).
    pub illegal_keys: Vec<Vec<u8>>,
    /// Number of partitions (distinct keys).
    pub partitions: usize,
    /// Operations checked (reads with unknown outcome are skipped).
    pub operations: usize,
    /// Wall time of the check.
    pub elapsed: Duration,
}

/// Checks `history` against a per-key register model, giving up after
/// `timeout`.
pub fn check(history: &[Operation], timeout: Duration) -> CheckReport {
    let start = Instant::now();
    let parts = partition(history);
    let operations = parts.iter().map(|(_, ops)| ops.len()).sum();
    let kill = AtomicBool::new(false);
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(parts.len())
        .max(1);
    let mut illegal_keys = Vec::new();
    let mut timed_out = false;
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel::<(usize, Option<bool>)>();
        for _ in 0..workers {
            let tx = tx.clone();
            let (parts, kill, next) = (&parts, &kill, &next);
            s.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((_, steps)) = parts.get(i) else {
                    break;
                };
                if kill.load(Ordering::Relaxed) {
                    break;
                }
                if tx.send((i, wgl::check_steps(steps, kill))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let deadline = start + timeout;
        let mut done = 0;
        while done < parts.len() {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok((_, Some(true))) => done += 1,
                Ok((i, Some(false))) => {
                    done += 1;
                    illegal_keys.push(parts[i].0.clone());
                    kill.store(true, Ordering::Relaxed);
                }
                // Killed: only after an illegal partition or the timeout.
                Ok((_, None)) => done += 1,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    timed_out = true;
                    kill.store(true, Ordering::Relaxed);
                    break;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if !illegal_keys.is_empty() {
                break;
            }
        }
        kill.store(true, Ordering::Relaxed);
    });
    illegal_keys.sort();
    let result = if !illegal_keys.is_empty() {
        CheckResult::Illegal
    } else if timed_out {
        CheckResult::Unknown
    } else {
        CheckResult::Ok
    };
    CheckReport {
        result,
        illegal_keys,
        partitions: parts.len(),
        operations,
        elapsed: start.elapsed(),
    }
}

/// The operations of `key`, in history order (for reports on illegal keys).
pub fn sub_history<'a>(history: &'a [Operation], key: &[u8]) -> Vec<&'a Operation> {
    history.iter().filter(|op| op.key == key).collect()
}

/// Splits the history by key and interns each partition.
///
/// Two kinds of operations are dropped because they constrain nothing, and
/// maybe-applied ones would otherwise double the search space each:
/// - reads without a return;
/// - maybe-applied puts (unbounded or cut by a crash) of a value that no
///   read of the key observed: applying one creates a state no read can
///   match, so any linearization that applies it stays legal with it removed
///   (the next op must be a write), and removing it is one of its choices.
fn partition(history: &[Operation]) -> Vec<(Vec<u8>, Vec<TimedStep>)> {
    let mut by_key: BTreeMap<&[u8], (Interner, Vec<TimedStep>)> = BTreeMap::new();
    for op in history {
        if op.is_maybe() && matches!(op.kind, OpKind::Get(_)) {
            continue;
        }
        let (interner, steps) = by_key.entry(&op.key).or_default();
        steps.push(TimedStep {
            step: interner.step(op),
            call: op.call,
            ret: op.effect_deadline(),
            optional: op.ret.is_none() && op.crash.is_some(),
        });
    }
    by_key
        .into_iter()
        .map(|(k, (_, mut steps))| {
            let read: HashSet<State> = steps
                .iter()
                .filter_map(|s| match s.step {
                    Step::Get(v) => Some(v),
                    _ => None,
                })
                .collect();
            steps.retain(|s| match s.step {
                Step::Put(v) => !(s.ret == u64::MAX || s.optional) || read.contains(&v),
                _ => true,
            });
            (k.to_vec(), steps)
        })
        .collect()
}
