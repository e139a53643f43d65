//! Tests of the linearizability checker: hand-made legal and illegal
//! histories, randomized histories from real sequential executions, and a
//! brute-force cross-check on small histories.

use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shale_stress::lincheck::porcupine_json::{read_history, write_history};
use shale_stress::lincheck::{check, CheckResult, OpKind, Operation};

const TIMEOUT: Duration = Duration::from_secs(10);

fn put(c: usize, k: &str, v: &str, call: u64, ret: u64) -> Operation {
    Operation::new(c, k.as_bytes(), OpKind::Put(v.into()), call, ret)
}
fn del(c: usize, k: &str, call: u64, ret: u64) -> Operation {
    Operation::new(c, k.as_bytes(), OpKind::Delete, call, ret)
}
fn get(c: usize, k: &str, v: Option<&str>, call: u64, ret: u64) -> Operation {
    let v = v.map(|v| v.as_bytes().to_vec());
    Operation::new(c, k.as_bytes(), OpKind::Get(v), call, ret)
}
fn maybe_put(c: usize, k: &str, v: &str, call: u64) -> Operation {
    Operation::maybe(c, k.as_bytes(), OpKind::Put(v.into()), call)
}

fn verdict(h: &[Operation]) -> CheckResult {
    check(h, TIMEOUT).result
}

#[test]
fn legal_histories() {
    assert_eq!(verdict(&[]), CheckResult::Ok);
    // Sequential put, read, delete, read.
    let h = [
        put(0, "k", "a", 0, 1),
        get(1, "k", Some("a"), 2, 3),
        del(0, "k", 4, 5),
        get(1, "k", None, 6, 7),
    ];
    assert_eq!(verdict(&h), CheckResult::Ok);
    // Reads overlapping a write may see old or new, but once a read sees
    // the new value a later read cannot see the old.
    let h = [
        put(0, "k", "a", 0, 1),
        put(0, "k", "b", 10, 20),
        get(1, "k", Some("b"), 11, 12),
        get(2, "k", Some("a"), 11, 13),
        get(1, "k", Some("b"), 14, 15),
    ];
    assert_eq!(verdict(&h), CheckResult::Ok);
    // Independent keys.
    let h = [put(0, "x", "a", 0, 1), get(1, "y", None, 2, 3)];
    assert_eq!(verdict(&h), CheckResult::Ok);
}

#[test]
fn stale_read_is_illegal() {
    let h = [
        put(0, "k", "a", 0, 1),
        put(0, "k", "b", 2, 3),
        get(1, "k", Some("a"), 4, 5),
    ];
    let r = check(&h, TIMEOUT);
    assert_eq!(r.result, CheckResult::Illegal);
    assert_eq!(r.illegal_keys, vec![b"k".to_vec()]);
    // New then old across two sequential reads, both overlapping the write.
    let h = [
        put(0, "k", "a", 0, 1),
        put(0, "k", "b", 10, 20),
        get(1, "k", Some("b"), 11, 12),
        get(1, "k", Some("a"), 13, 14),
    ];
    assert_eq!(verdict(&h), CheckResult::Illegal);
}

#[test]
fn lost_write_is_illegal() {
    let h = [put(0, "k", "a", 0, 1), get(1, "k", None, 2, 3)];
    assert_eq!(verdict(&h), CheckResult::Illegal);
    // A delete that does not stick.
    let h = [
        put(0, "k", "a", 0, 1),
        del(0, "k", 2, 3),
        get(1, "k", Some("a"), 4, 5),
    ];
    assert_eq!(verdict(&h), CheckResult::Illegal);
}

#[test]
fn read_of_never_written_value_is_illegal() {
    let h = [put(0, "k", "a", 0, 1), get(1, "k", Some("z"), 2, 3)];
    assert_eq!(verdict(&h), CheckResult::Illegal);
    // A value written to another key does not count.
    let h = [put(0, "j", "z", 0, 1), get(1, "k", Some("z"), 2, 3)];
    assert_eq!(verdict(&h), CheckResult::Illegal);
}

#[test]
fn maybe_applied_writes() {
    // It justifies a later read...
    let h = [maybe_put(0, "k", "a", 0), get(1, "k", Some("a"), 10, 11)];
    assert_eq!(verdict(&h), CheckResult::Ok);
    // ...or may not have happened...
    let h = [maybe_put(0, "k", "a", 0), get(1, "k", None, 10, 11)];
    assert_eq!(verdict(&h), CheckResult::Ok);
    // ...or happen late, but once seen it cannot be undone.
    let h = [
        maybe_put(0, "k", "a", 0),
        get(1, "k", None, 10, 11),
        get(1, "k", Some("a"), 12, 13),
        get(1, "k", None, 14, 15),
    ];
    assert_eq!(verdict(&h), CheckResult::Illegal);
    // It cannot take effect before its call.
    let h = [get(1, "k", Some("a"), 0, 1), maybe_put(0, "k", "a", 5)];
    assert_eq!(verdict(&h), CheckResult::Illegal);
}

/// A random linearizable history: ops executed sequentially at points
/// 100*i, each given a random interval around its point; some writes are
/// marked maybe-applied (they did apply) and some maybe-writes never applied
/// (and are never read).
fn random_history(rng: &mut SmallRng, n: usize, keys: usize, width: u64) -> Vec<Operation> {
    let mut state: Vec<Option<Vec<u8>>> = vec![None; keys];
    let mut h = Vec::with_capacity(n);
    for i in 0..n {
        let point = 100 * i as u64 + width;
        let call = point - rng.gen_range(0..width);
        let ret = point + rng.gen_range(0..width);
        let k = rng.gen_range(0..keys);
        let key = format!("k{k}").into_bytes();
        let client = rng.gen_range(0..4);
        let kind = match rng.gen_range(0..10) {
            0..=3 => {
                let v = format!("v{i}").into_bytes();
                state[k] = Some(v.clone());
                OpKind::Put(v)
            }
            4 => {
                state[k] = None;
                OpKind::Delete
            }
            5 => {
                // A write that never took effect, outcome unknown.
                let kind = OpKind::Put(format!("lost{i}").into_bytes());
                h.push(Operation::maybe(client, &key, kind, call));
                continue;
            }
            _ => OpKind::Get(state[k].clone()),
        };
        let mut op = Operation::new(client, &key, kind, call, ret);
        if !matches!(op.kind, OpKind::Get(_)) && rng.gen_ratio(1, 20) {
            op.ret = None;
        }
        h.push(op);
    }
    h
}

#[test]
fn random_linearizable_histories_are_ok() {
    for seed in 0..40u64 {
        let mut rng = SmallRng::seed_from_u64(seed);
        let width = [50, 300, 2000][seed as usize % 3];
        let h = random_history(&mut rng, 1500, 8, width);
        let r = check(&h, TIMEOUT);
        assert_eq!(
            r.result,
            CheckResult::Ok,
            "seed {seed} width {width}: {r:?}"
        );
    }
}

#[test]
fn mutated_read_is_usually_illegal() {
    let (mut illegal, mut total) = (0, 0);
    for seed in 0..60u64 {
        let mut rng = SmallRng::seed_from_u64(1000 + seed);
        let mut h = random_history(&mut rng, 400, 4, 150);
        let reads: Vec<usize> = (0..h.len())
            .filter(|&i| matches!(h[i].kind, OpKind::Get(_)))
            .collect();
        let victim = reads[rng.gen_range(0..reads.len())];
        // Replace the output with another value of the same key (or absent).
        let key = h[victim].key.clone();
        let mut others: Vec<Option<Vec<u8>>> = h
            .iter()
            .filter(|o| o.key == key)
            .filter_map(|o| match &o.kind {
                OpKind::Put(v) if !v.starts_with(b"lost") => Some(Some(v.clone())),
                _ => None,
            })
            .collect();
        others.push(None);
        let OpKind::Get(old) = h[victim].kind.clone() else {
            unreachable!()
        };
        others.retain(|v| *v != old);
        let new = others[rng.gen_range(0..others.len())].clone();
        h[victim].kind = OpKind::Get(new);
        let r = check(&h, TIMEOUT);
        assert_ne!(r.result, CheckResult::Unknown, "seed {seed}");
        total += 1;
        if r.result == CheckResult::Illegal {
            illegal += 1;
        }
    }
    println!("mutated reads: {illegal}/{total} illegal");
    assert!(illegal * 10 >= total * 8, "only {illegal}/{total} illegal");
}

/// Brute force: some order of all ops, respecting real time, with every
/// maybe-op either applied at some point or dropped, is legal.
fn brute_force(h: &[Operation]) -> bool {
    fn go(
        h: &[Operation],
        used: &mut Vec<bool>,
        state: &mut Vec<(Vec<u8>, Option<Vec<u8>>)>,
    ) -> bool {
        if used.iter().all(|&u| u) {
            return true;
        }
        // Candidates: unused ops that no unused completed op must precede.
        let min_ret = (0..h.len())
            .filter(|&i| !used[i])
            .filter_map(|i| h[i].ret)
            .min()
            .unwrap_or(u64::MAX);
        for i in 0..h.len() {
            if used[i] || h[i].call > min_ret {
                continue;
            }
            let key = &h[i].key;
            let pos = state.iter().position(|(k, _)| k == key);
            let cur = pos.and_then(|p| state[p].1.clone());
            let next = match &h[i].kind {
                OpKind::Put(v) => Some(Some(v.clone())),
                OpKind::Delete => Some(None),
                OpKind::Get(v) => (*v == cur).then_some(cur.clone()),
            };
            let mut options = vec![];
            if let Some(n) = next {
                options.push(n);
            }
            if h[i].ret.is_none() {
                options.push(cur.clone()); // dropped: no effect
            }
            for n in options {
                used[i] = true;
                let saved = state.clone();
                match pos {
                    Some(p) => state[p].1 = n,
                    None => state.push((key.clone(), n)),
                }
                let ok = go(h, used, state);
                *state = saved;
                used[i] = false;
                if ok {
                    return true;
                }
            }
        }
        false
    }
    go(h, &mut vec![false; h.len()], &mut Vec::new())
}

#[test]
fn agrees_with_brute_force_on_small_histories() {
    let mut rng = SmallRng::seed_from_u64(7);
    let (mut ok, mut bad) = (0, 0);
    for case in 0..3000 {
        let n = rng.gen_range(1..=7);
        let h: Vec<Operation> = (0..n)
            .map(|i| {
                let call = rng.gen_range(0..20);
                let ret = call + rng.gen_range(0..8);
                let k = if rng.gen_ratio(1, 4) { "j" } else { "k" };
                let v = ["a", "b", "c"][rng.gen_range(0..3)];
                match rng.gen_range(0..6) {
                    0 | 1 => put(i % 3, k, v, call, ret),
                    2 => del(i % 3, k, call, ret),
                    3 => maybe_put(i % 3, k, v, call),
                    4 => get(i % 3, k, None, call, ret),
                    _ => get(i % 3, k, Some(v), call, ret),
                }
            })
            .collect();
        let expected = brute_force(&h);
        let got = verdict(&h);
        assert_eq!(
            got == CheckResult::Ok,
            expected,
            "case {case}: checker {got:?}, brute force {expected}: {h:#?}"
        );
        if expected {
            ok += 1
        } else {
            bad += 1
        }
    }
    println!("brute-force agreement: {ok} legal, {bad} illegal");
    assert!(ok > 300 && bad > 300);
}

#[test]
fn porcupine_json_round_trip_keeps_verdict() {
    let mut rng = SmallRng::seed_from_u64(99);
    let h = random_history(&mut rng, 300, 4, 200);
    let mut buf = Vec::new();
    write_history(&h, &mut buf).unwrap();
    let back = read_history(&buf[..]).unwrap();
    assert_eq!(back, h);
    assert_eq!(verdict(&back), CheckResult::Ok);
}

#[test]
fn timeout_gives_unknown() {
    // Many fully concurrent writes and a read of a value never written:
    // proving it illegal means exploring every subset of the writes, so a
    // zero timeout must give Unknown.
    let mut h = Vec::new();
    for i in 0..2000u64 {
        h.push(put(0, "k", &format!("v{i}"), 0, 1_000_000));
    }
    h.push(get(1, "k", Some("never"), 0, 1_000_000));
    let r = check(&h, Duration::ZERO);
    assert_eq!(r.result, CheckResult::Unknown, "{r:?}");
}
