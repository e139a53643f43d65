use super::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

fn t(s: &str, e: &str, seq: SeqNo) -> RangeTombstone {
    RangeTombstone {
        start: s.as_bytes().to_vec(),
        end: e.as_bytes().to_vec(),
        seq,
    }
}

fn shape(f: &Fragments) -> Vec<(String, String, Vec<SeqNo>)> {
    f.fragments()
        .iter()
        .map(|f| {
            (
                String::from_utf8(f.start.clone()).unwrap(),
                String::from_utf8(f.end.clone()).unwrap(),
                f.seqs.clone(),
            )
        })
        .collect()
}

#[test]
fn overlapping_tombstones_are_cut_at_every_edge() {
    let f = Fragments::build(&[t("a", "e", 5), t("c", "g", 9), t("x", "x", 3)]);
    assert_eq!(
        shape(&f),
        vec![
            ("a".into(), "c".into(), vec![5]),
            ("c".into(), "e".into(), vec![9, 5]),
            ("e".into(), "g".into(), vec![9]),
        ]
    );
    assert_eq!(f.max_covering(b"d", 100), Some(9));
    assert_eq!(f.max_covering(b"d", 8), Some(5));
    assert_eq!(f.max_covering(b"d", 4), None);
    assert_eq!(f.max_covering(b"g", 100), None, "end is exclusive");
    assert_eq!(f.max_covering(b"a", 100), Some(5));
    assert_eq!(f.num_tombstones(), 4);
}

#[test]
fn adjacent_pieces_with_equal_seqs_join() {
    let f = Fragments::build(&[t("a", "c", 5), t("c", "e", 5)]);
    assert_eq!(shape(&f), vec![("a".into(), "e".into(), vec![5])]);
}

#[test]
fn clipping_and_merging() {
    let f = Fragments::build(&[t("a", "m", 5)]);
    let c = f.clipped(Some(b"c"), Some(b"f"));
    assert_eq!(c.len(), 1);
    assert_eq!(
        (c[0].start.as_slice(), c[0].end.as_slice()),
        (&b"c"[..], &b"f"[..])
    );
    assert!(f.clipped(Some(b"m"), None).is_empty());
    let g = Fragments::build(&[t("k", "z", 7)]);
    let m = Fragments::merge([&f, &g]);
    assert_eq!(m.max_covering(b"l", 100), Some(7));
    assert_eq!(m.max_covering(b"l", 6), Some(5));
    assert_eq!(m.max_covering(b"y", 6), None);
}

#[test]
fn output_keeps_the_newest_of_each_stripe() {
    let f = Fragments::build(&[
        t("a", "c", 3),
        t("a", "c", 5),
        t("a", "c", 9),
        t("c", "d", 2),
    ]);
    // Snapshot at 6: stripes {<=6} and {>6}.
    let out = f.for_output(&[6], false);
    assert_eq!(out.len(), 2);
    assert_eq!(out[0].seqs, vec![9, 5]);
    assert_eq!(out[1].seqs, vec![2]);
    // Nothing below: the oldest stripe goes.
    let out = f.for_output(&[6], true);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].seqs, vec![9]);
    assert!(f.for_output(&[], true).is_empty());
}

#[test]
fn random_tombstones_match_a_brute_force_scan() {
    let mut rng = SmallRng::seed_from_u64(13);
    for _ in 0..200 {
        let n = rng.gen_range(0..12);
        let ts: Vec<RangeTombstone> = (0..n)
            .map(|_| {
                let a = rng.gen_range(0..30u8);
                let b = rng.gen_range(0..30u8);
                RangeTombstone {
                    start: vec![a],
                    end: vec![b],
                    seq: rng.gen_range(1..20),
                }
            })
            .collect();
        let f = Fragments::build(&ts);
        for w in f.fragments().windows(2) {
            assert!(w[0].end <= w[1].start);
        }
        for k in 0..32u8 {
            for read in [0, 5, 10, 25] {
                let want = ts
                    .iter()
                    .filter(|t| {
                        t.start.as_slice() <= [k].as_slice() && [k].as_slice() < t.end.as_slice()
                    })
                    .map(|t| t.seq)
                    .filter(|&s| s <= read)
                    .max();
                assert_eq!(
                    f.max_covering(&[k], read),
                    want,
                    "key {k} at {read}: {ts:?}"
                );
            }
        }
    }
}
