use super::*;
use crate::base::make_internal_key;
use crate::iter::level::tests::VecIter;
use crate::merge::{StringAppendOperator, UInt64AddOperator};

fn ik(k: &str, s: u64, kind: ValueKind) -> Vec<u8> {
    let mut v = Vec::new();
    make_internal_key(&mut v, k.as_bytes(), s, kind as u8);
    v
}

/// Runs `entries` (in internal-key order) through `f`: what is written,
/// as (key, seq, kind, value).
fn run_full(
    f: &mut EntryFilter,
    entries: &[(&str, u64, ValueKind, &str)],
) -> Vec<(String, u64, ValueKind, String)> {
    let mut it = VecIter::new(
        entries
            .iter()
            .map(|(k, s, kind, v)| (ik(k, *s, *kind), v.as_bytes().to_vec()))
            .collect(),
    );
    it.seek_to_first();
    let mut out = Vec::new();
    while f.advance(&mut it, "t").unwrap() {
        let (k, v) = f.entry(&it);
        let p = parse_internal_key(k).unwrap();
        out.push((
            String::from_utf8(p.user_key.to_vec()).unwrap(),
            p.seq,
            p.kind,
            String::from_utf8_lossy(v).into_owned(),
        ));
    }
    out
}

fn run(f: &mut EntryFilter, entries: &[(&str, u64, ValueKind)]) -> Vec<u64> {
    let e: Vec<(&str, u64, ValueKind, &str)> = entries
        .iter()
        .map(|(k, s, kind)| (*k, *s, *kind, ""))
        .collect();
    run_full(f, &e).into_iter().map(|e| e.1).collect()
}

const V: ValueKind = ValueKind::Value;
const D: ValueKind = ValueKind::Deletion;
const M: ValueKind = ValueKind::Merge;
const SD: ValueKind = ValueKind::SingleDeletion;

#[test]
fn drops_shadowed_without_snapshots() {
    let mut f = EntryFilter::new(vec![], None);
    let kept = run(
        &mut f,
        &[("a", 9, V), ("a", 5, V), ("a", 1, D), ("b", 3, V)],
    );
    assert_eq!(kept, vec![9, 3]);
    assert_eq!(f.keys_dropped, 2);
    assert_eq!(f.keys_in, 4);
}

#[test]
fn keeps_versions_visible_to_snapshots() {
    // Snapshot at 6 sees a@5; snapshot at 2 sees a@1.
    let mut f = EntryFilter::new(vec![6, 2], None);
    let kept = run(
        &mut f,
        &[
            ("a", 9, V),
            ("a", 8, V),
            ("a", 5, V),
            ("a", 4, V),
            ("a", 1, V),
        ],
    );
    assert_eq!(kept, vec![9, 5, 1]);
}

#[test]
fn tombstones_dropped_only_at_base_level_and_oldest_stripe() {
    let mut f = EntryFilter::new(vec![], Some(Box::new(|_| true)));
    let kept = run(&mut f, &[("a", 9, D), ("a", 5, V), ("b", 4, V)]);
    assert_eq!(kept, vec![4]);
    // Not at the base level: the tombstone must stay.
    let mut f = EntryFilter::new(vec![], Some(Box::new(|_| false)));
    assert_eq!(run(&mut f, &[("a", 9, D), ("a", 5, V)]), vec![9]);
    // A snapshot older than the tombstone still needs a@5 and the
    // tombstone hides it from newer readers: both stay.
    let mut f = EntryFilter::new(vec![6], Some(Box::new(|_| true)));
    assert_eq!(run(&mut f, &[("a", 9, D), ("a", 5, V)]), vec![9, 5]);
}

fn append() -> Option<Arc<dyn MergeOperator>> {
    Some(Arc::new(StringAppendOperator::new(b",")))
}

#[test]
fn merges_collapse_onto_their_base_within_a_stripe() {
    let mut f = EntryFilter::new(vec![], None).with_merge_operator(append());
    let out = run_full(
        &mut f,
        &[
            ("a", 9, M, "c"),
            ("a", 8, M, "b"),
            ("a", 5, V, "x"),
            ("a", 2, V, "old"),
        ],
    );
    assert_eq!(out, vec![("a".into(), 9, V, "x,b,c".into())]);
    assert_eq!((f.keys_in, f.keys_dropped), (4, 3));
    // A tombstone base: the merge starts from nothing.
    let mut f = EntryFilter::new(vec![], None).with_merge_operator(append());
    let out = run_full(&mut f, &[("a", 9, M, "c"), ("a", 5, D, "")]);
    assert_eq!(out, vec![("a".into(), 9, V, "c".into())]);
}

#[test]
fn merges_without_a_base_are_partial_unless_nothing_lies_below() {
    let ops = [("a", 9, M, "c"), ("a", 8, M, "b")];
    // Data may lie below: one combined operand.
    let mut f = EntryFilter::new(vec![], None).with_merge_operator(append());
    assert_eq!(
        run_full(&mut f, &ops),
        vec![("a".into(), 9, M, "b,c".into())]
    );
    // Nothing below: a full merge from nothing.
    let mut f = EntryFilter::new(vec![], Some(Box::new(|_| true))).with_merge_operator(append());
    assert_eq!(
        run_full(&mut f, &ops),
        vec![("a".into(), 9, V, "b,c".into())]
    );
    // No operator: the operands stay as they are.
    let mut f = EntryFilter::new(vec![], Some(Box::new(|_| true)));
    assert_eq!(
        run_full(&mut f, &ops),
        vec![
            ("a".into(), 9, M, "c".into()),
            ("a".into(), 8, M, "b".into())
        ]
    );
}

#[test]
fn merges_stop_at_snapshot_stripes() {
    // A snapshot at 6 reads "x,b": the stripe above keeps its operand.
    let mut f = EntryFilter::new(vec![6], Some(Box::new(|_| true))).with_merge_operator(append());
    let out = run_full(
        &mut f,
        &[("a", 9, M, "c"), ("a", 5, M, "b"), ("a", 3, V, "x")],
    );
    assert_eq!(
        out,
        vec![
            ("a".into(), 9, M, "c".into()),
            ("a".into(), 5, V, "x,b".into())
        ]
    );
}

#[test]
fn failed_merges_keep_every_operand_and_the_base() {
    let add: Option<Arc<dyn MergeOperator>> = Some(Arc::new(UInt64AddOperator));
    let mut f = EntryFilter::new(vec![], None).with_merge_operator(add);
    let out = run_full(&mut f, &[("a", 9, M, "12345678"), ("a", 5, V, "bad")]);
    assert_eq!(
        out,
        vec![
            ("a".into(), 9, M, "12345678".into()),
            ("a".into(), 5, V, "bad".into())
        ]
    );
    assert_eq!(f.counts.merge_failures, 1);
}

#[test]
fn single_delete_vanishes_with_its_value() {
    let mut f = EntryFilter::new(vec![], None);
    assert_eq!(
        run(&mut f, &[("a", 9, SD), ("a", 5, V), ("b", 1, V)]),
        vec![1]
    );
    assert_eq!(f.counts.single_delete_mismatches, 0);
    // A snapshot between them keeps both.
    let mut f = EntryFilter::new(vec![6], None);
    assert_eq!(run(&mut f, &[("a", 9, SD), ("a", 5, V)]), vec![9, 5]);
    // Alone at the base level it goes; above data it stays.
    let mut f = EntryFilter::new(vec![], Some(Box::new(|_| true)));
    assert_eq!(run(&mut f, &[("a", 9, SD)]), Vec::<u64>::new());
    let mut f = EntryFilter::new(vec![], Some(Box::new(|_| false)));
    assert_eq!(run(&mut f, &[("a", 9, SD)]), vec![9]);
}

#[test]
fn single_delete_misuse_is_counted() {
    // Written twice: the single delete takes one put, the older comes
    // back (RocksDB: undefined), and the misuse is counted.
    let mut f = EntryFilter::new(vec![], None);
    assert_eq!(
        run(&mut f, &[("a", 9, SD), ("a", 5, V), ("a", 3, V)]),
        vec![3]
    );
    assert_eq!(f.counts.single_delete_mismatches, 1);
    // Over a tombstone.
    let mut f = EntryFilter::new(vec![], None);
    assert_eq!(run(&mut f, &[("a", 9, SD), ("a", 5, D)]), vec![9]);
    assert_eq!(f.counts.single_delete_mismatches, 1);
}

#[test]
fn single_delete_under_a_newer_value_still_deletes_the_older_one() {
    // put@8, single delete@9, put@10: valid use. The single delete meets
    // its put here: both go.
    let mut f = EntryFilter::new(vec![], None);
    assert_eq!(
        run(&mut f, &[("a", 10, V), ("a", 9, SD), ("a", 8, V)]),
        vec![10]
    );
    // Its put lies below the output: the single delete must stay, or a
    // later single delete of put@10 would bring put@8 back.
    let mut f = EntryFilter::new(vec![], Some(Box::new(|_| false)));
    assert_eq!(run(&mut f, &[("a", 10, V), ("a", 9, SD)]), vec![10, 9]);
    // Nothing below: it can go.
    let mut f = EntryFilter::new(vec![], Some(Box::new(|_| true)));
    assert_eq!(run(&mut f, &[("a", 10, V), ("a", 9, SD)]), vec![10]);
    // Then the later single delete: both pairs vanish in one pass, or
    // the older single delete stays above its put below.
    let mut f = EntryFilter::new(vec![], None);
    let all = [("a", 11, SD), ("a", 10, V), ("a", 9, SD), ("a", 8, V)];
    assert_eq!(run(&mut f, &all), Vec::<u64>::new());
    assert_eq!(f.counts.single_delete_mismatches, 0);
    let mut f = EntryFilter::new(vec![], Some(Box::new(|_| false)));
    assert_eq!(run(&mut f, &all[..3]), vec![9]);
    assert_eq!(f.counts.single_delete_mismatches, 0);
}

struct Upper;
impl CompactionFilter for Upper {
    fn name(&self) -> &str {
        "upper"
    }
    fn filter(&self, _: usize, _: &[u8], v: &[u8]) -> FilterDecision {
        match v {
            b"drop" => FilterDecision::Remove,
            b"keep" => FilterDecision::Keep,
            _ => FilterDecision::ChangeValue(v.to_ascii_uppercase()),
        }
    }
}

#[test]
fn user_filter_sees_only_what_no_snapshot_reads() {
    let mut f = EntryFilter::new(vec![4], None).with_user_filter(Some(Arc::new(Upper)), 1);
    let out = run_full(
        &mut f,
        &[
            ("a", 9, V, "abc"),
            ("a", 3, V, "old"),
            ("b", 8, V, "drop"),
            ("b", 2, V, "x"),
            ("c", 7, V, "keep"),
            ("d", 1, V, "snap"),
        ],
    );
    assert_eq!(
        out,
        vec![
            ("a".into(), 9, V, "ABC".into()),
            ("a".into(), 3, V, "old".into()),
            ("b".into(), 8, D, "".into()),
            ("b".into(), 2, V, "x".into()),
            ("c".into(), 7, V, "keep".into()),
            ("d".into(), 1, V, "snap".into()),
        ]
    );
    assert_eq!(f.counts.filtered, 2);
    // "a"@9 changed, "b"@8 removed, "c"@7 kept.
    assert_eq!(f.counts.oldest_filtered, Some(8));
    let mut sum = FilterCounts::default();
    sum.add(f.counts);
    sum.add(FilterCounts::default());
    assert_eq!(sum.oldest_filtered, Some(8));
}

#[test]
fn keeps_a_tombstone_right_under_the_newest_value_for_a_later_single_delete() {
    // Not at the base level: the tombstone at 2 must outlive the value at 3
    // (a single delete may remove it), and still hides a@1.
    let mut f = EntryFilter::new(vec![], None);
    let kept = run(&mut f, &[("a", 3, V), ("a", 2, D), ("a", 1, V)]);
    assert_eq!(kept, vec![3, 2]);
    // Where tombstones may go, it goes.
    let mut f = EntryFilter::new(vec![], Some(Box::new(|_: &[u8]| true)));
    let kept = run(&mut f, &[("a", 3, V), ("a", 2, D), ("a", 1, V)]);
    assert_eq!(kept, vec![3]);
    // Written twice since the delete: a single delete would be a misuse,
    // the tombstone is shadowed.
    let mut f = EntryFilter::new(vec![], None);
    let kept = run(&mut f, &[("a", 4, V), ("a", 3, V), ("a", 2, D)]);
    assert_eq!(kept, vec![4]);
    // The single delete then removes the value; the tombstone is no misuse.
    let mut f = EntryFilter::new(vec![], None);
    let kept = run(
        &mut f,
        &[("a", 4, SD), ("a", 3, V), ("a", 2, D), ("a", 1, V)],
    );
    assert_eq!(kept, vec![2]);
    assert_eq!(f.counts.single_delete_mismatches, 0);
}
