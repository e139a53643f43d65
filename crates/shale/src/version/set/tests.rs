//! Tests of `VersionSet`: create, log_and_apply, recover (clean, torn tail,
//! corrupt), MANIFEST rolling, failure handling and live-file tracking.
//! Uses real files in temp dirs (PosixFileSystem) and a fault-injecting
//! wrapper around it.

use std::collections::BTreeMap;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::fs::{FaultInjectionFs, FaultKind, FaultOp, FaultRule, PosixFileSystem, Trigger};
use crate::version::current::{read_current, set_current};
use crate::version::file_meta::FileMeta;
use crate::version::filename::{manifest_file_name, parse_file_name, table_file_name, FileType};
use crate::version::version::tests::file;

const LEVELS: usize = 4;

fn posix() -> Arc<dyn FileSystem> {
    Arc::new(PosixFileSystem::default())
}

/// The persisted content of a version, level by level.
fn shape(v: &Version) -> Vec<Vec<FileMeta>> {
    (0..v.num_levels())
        .map(|l| v.files(l).iter().map(|f| (**f).clone()).collect())
        .collect()
}

fn manifests(dir: &Path) -> Vec<u64> {
    let mut out: Vec<u64> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| parse_file_name(e.unwrap().file_name().to_str()?))
        .filter(|(t, _)| *t == FileType::Manifest)
        .map(|(_, n)| n)
        .collect();
    out.sort_unstable();
    out
}

/// Adds one L0 file holding `[lo, hi]` and seqnos up to `seq` (like a flush).
fn flush(vs: &mut VersionSet, lo: &[u8], hi: &[u8], seq: u64) -> u64 {
    let n = vs.new_file_number();
    let log = vs.new_file_number();
    vs.set_last_sequence(seq + 10);
    let mut e = VersionEdit {
        log_number: Some(log),
        ..Default::default()
    };
    e.add_file(0, file(n, lo, hi, seq));
    vs.log_and_apply(&mut e).unwrap();
    n
}

struct Expected {
    shape: Vec<Vec<FileMeta>>,
    last_sequence: u64,
    log_number: u64,
    next_file_number: u64,
    db_id: String,
}

fn expected(vs: &VersionSet) -> Expected {
    Expected {
        shape: shape(&vs.current(0)),
        last_sequence: vs.last_sequence(),
        log_number: vs.log_number(0),
        next_file_number: vs.next_file_number(),
        db_id: vs.db_id().to_string(),
    }
}

fn assert_recovered(vs: &VersionSet, want: &Expected) {
    assert_eq!(shape(&vs.current(0)), want.shape);
    assert_eq!(vs.last_sequence(), want.last_sequence);
    assert_eq!(vs.log_number(0), want.log_number);
    assert_eq!(vs.db_id(), want.db_id);
    // Recovery rolled to MANIFEST-<next>, so the counter moved by one.
    assert_eq!(vs.manifest_file_number(), want.next_file_number);
    assert_eq!(vs.next_file_number(), want.next_file_number + 1);
    assert_eq!(manifests(vs.dir()), vec![vs.manifest_file_number()]);
    assert_eq!(
        read_current(vs.fs.as_ref(), vs.dir()).unwrap(),
        vs.manifest_file_number()
    );
}

fn corruption(r: Result<VersionSet>) -> (String, u64, String) {
    match r {
        Err(Error::Corruption { file, offset, what }) => (file, offset, what),
        Err(e) => panic!("expected corruption, got {e}"),
        Ok(_) => panic!("expected corruption, got a VersionSet"),
    }
}

#[test]
fn create_writes_manifest_and_current() {
    let d = tempfile::tempdir().unwrap();
    let vs = VersionSet::create_new(posix(), d.path(), LEVELS, "id-1").unwrap();
    assert_eq!(
        std::fs::read(d.path().join("CURRENT")).unwrap(),
        b"MANIFEST-000001\n"
    );
    assert_eq!(manifests(d.path()), vec![1]);
    assert_eq!(vs.manifest_file_number(), 1);
    assert_eq!(vs.next_file_number(), 2);
    assert_eq!(vs.current(0).total_files(), 0);
    assert_eq!(vs.current(0).num_levels(), LEVELS);
    let want = expected(&vs);
    drop(vs);
    let vs = VersionSet::recover_unchecked(posix(), d.path(), LEVELS).unwrap();
    assert_recovered(&vs, &want);
    assert_eq!(vs.manifest_file_number(), 2);
    assert_eq!(
        std::fs::read(d.path().join("CURRENT")).unwrap(),
        b"MANIFEST-000002\n"
    );
}

#[test]
fn log_and_apply_then_recover() {
    let d = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::create_new(posix(), d.path(), LEVELS, "id-2").unwrap();
    let a = flush(&mut vs, b"a", b"m", 100);
    let b = flush(&mut vs, b"c", b"z", 200);
    let c = flush(&mut vs, b"b", b"d", 300);
    assert_eq!(
        vs.current(0)
            .files(0)
            .iter()
            .map(|f| f.number)
            .collect::<Vec<_>>(),
        vec![c, b, a]
    );

    // Compaction: L0 → two L1 files.
    let (x, y) = (vs.new_file_number(), vs.new_file_number());
    let mut e = VersionEdit::default();
    for n in [a, b, c] {
        e.delete_file(0, n);
    }
    e.add_file(1, file(x, b"a", b"k", 100));
    e.add_file(1, file(y, b"l", b"z", 100));
    vs.log_and_apply(&mut e).unwrap();
    assert_eq!(e.next_file_number, Some(vs.next_file_number()), "filled in");
    assert_eq!(e.last_sequence, Some(310));

    // Trivial move of y to L2.
    let mut mv = VersionEdit::default();
    mv.delete_file(1, y);
    mv.add_file(2, (**vs.current(0).file_by_number(1, y).unwrap()).clone());
    vs.log_and_apply(&mut mv).unwrap();
    flush(&mut vs, b"q", b"r", 400);
    assert_eq!(
        vs.current(0).level_summary(),
        "files[1 1 1 0] bytes[1010 1008 1009 0]"
    );

    let mut want = expected(&vs);
    drop(vs);
    for _ in 0..3 {
        // Each recovery rolls to a new MANIFEST that recovers the same state.
        let vs = VersionSet::recover_unchecked(posix(), d.path(), LEVELS).unwrap();
        assert_recovered(&vs, &want);
        want.next_file_number = vs.next_file_number();
    }
}

#[test]
fn randomized_against_model_with_reopens_and_rolls() {
    let seed: u64 = rand::random();
    println!("seed {seed}");
    let mut rng = SmallRng::seed_from_u64(seed);
    let d = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::create_new(posix(), d.path(), LEVELS, "rnd").unwrap();
    vs.set_max_manifest_size(rng.gen_range(100..3000));
    // Model: number -> (level, lo, hi). L1+ files get a range unique to their
    // number, so they never overlap.
    let mut model: BTreeMap<u64, usize> = BTreeMap::new();
    let mut seq = 0;
    for step in 0..150 {
        let mut e = VersionEdit::default();
        for (&n, &level) in &model {
            if rng.gen_bool(0.15) {
                e.delete_file(level, n);
            }
        }
        for (_, n) in &e.deleted_files {
            model.remove(n);
        }
        for _ in 0..rng.gen_range(0..3) {
            let n = vs.new_file_number();
            let level = rng.gen_range(0..LEVELS);
            let k = format!("{n:08}");
            seq += 10;
            e.add_file(
                level,
                file(
                    n,
                    format!("{k}a").as_bytes(),
                    format!("{k}z").as_bytes(),
                    seq,
                ),
            );
            model.insert(n, level);
        }
        vs.set_last_sequence(seq);
        vs.log_and_apply(&mut e).unwrap();
        if rng.gen_bool(0.1) {
            let want = expected(&vs);
            drop(vs);
            vs = VersionSet::recover_unchecked(posix(), d.path(), LEVELS).unwrap();
            assert_recovered(&vs, &want);
            vs.set_max_manifest_size(rng.gen_range(100..3000));
        }
        let v = vs.current(0);
        let got: BTreeMap<u64, usize> = (0..LEVELS)
            .flat_map(|l| v.files(l).iter().map(move |f| (f.number, l)))
            .collect();
        assert_eq!(got, model, "step {step}");
        assert_eq!(manifests(d.path()), vec![vs.manifest_file_number()]);
    }
}

#[test]
fn manifest_rolls_past_size_limit() {
    let d = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::create_new(posix(), d.path(), LEVELS, "roll").unwrap();
    vs.set_max_manifest_size(300);
    let first = vs.manifest_file_number();
    let mut rolls = 0;
    let mut last = first;
    for i in 0..40u64 {
        flush(
            &mut vs,
            format!("k{i:03}").as_bytes(),
            format!("k{i:03}z").as_bytes(),
            i * 100,
        );
        assert!(vs.manifest_file_size() > 0);
        if vs.manifest_file_number() != last {
            rolls += 1;
            last = vs.manifest_file_number();
            assert_eq!(
                manifests(d.path()),
                vec![last],
                "old MANIFEST deleted after roll"
            );
        }
    }
    assert!(rolls >= 3, "only {rolls} rolls");
    let want = expected(&vs);
    drop(vs);
    let vs = VersionSet::recover_unchecked(posix(), d.path(), LEVELS).unwrap();
    assert_recovered(&vs, &want);
    assert_eq!(vs.current(0).num_files(0), 40);
}

/// Sets up a DB with `edits` flushes and returns (dir, state before the last
/// flush, MANIFEST size before the last flush, MANIFEST name).
fn db_with_flushes(edits: u64) -> (tempfile::TempDir, Expected, u64, String) {
    let d = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::create_new(posix(), d.path(), LEVELS, "t").unwrap();
    for i in 0..edits - 1 {
        flush(
            &mut vs,
            format!("a{i}").as_bytes(),
            format!("b{i}").as_bytes(),
            i * 100,
        );
    }
    let before = expected(&vs);
    let size_before = vs.manifest_file_size();
    flush(&mut vs, b"x", b"y", 9999);
    let name = manifest_file_name(vs.manifest_file_number());
    (d, before, size_before, name)
}

#[test]
fn torn_manifest_tail_is_tolerated() {
    let (d, before, size_before, name) = db_with_flushes(5);
    let full = std::fs::read(d.path().join(&name)).unwrap();
    let current = std::fs::read(d.path().join("CURRENT")).unwrap();
    assert!(full.len() as u64 > size_before + 1);
    for len in size_before..full.len() as u64 {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("CURRENT"), &current).unwrap();
        std::fs::write(t.path().join(&name), &full[..len as usize]).unwrap();
        let vs = VersionSet::recover_unchecked(posix(), t.path(), LEVELS)
            .unwrap_or_else(|e| panic!("truncated to {len}: {e}"));
        // The last edit was lost; next_file_number comes from the last
        // surviving edit.
        assert_eq!(shape(&vs.current(0)), before.shape, "len {len}");
        assert_eq!(vs.last_sequence(), before.last_sequence);
        assert_eq!(vs.log_number(0), before.log_number);
        assert_eq!(manifests(t.path()), vec![vs.manifest_file_number()]);
    }
}

#[test]
fn flipped_byte_mid_manifest_is_corruption() {
    let (d, _, _, name) = db_with_flushes(30);
    let path = d.path().join(&name);
    let mut bytes = std::fs::read(&path).unwrap();
    let pos = bytes.len() / 3;
    bytes[pos] ^= 0x20;
    std::fs::write(&path, &bytes).unwrap();
    let (file, offset, what) = corruption(VersionSet::recover_unchecked(posix(), d.path(), LEVELS));
    assert!(file.ends_with(&name), "{file}");
    assert!(
        offset <= pos as u64,
        "offset {offset} after the damage at {pos}"
    );
    assert!(!what.is_empty());
}

#[test]
fn corrupt_current_is_corruption() {
    let d = tempfile::tempdir().unwrap();
    drop(VersionSet::create_new(posix(), d.path(), LEVELS, "c").unwrap());
    let cur = d.path().join("CURRENT");
    for bad in [&b""[..], b"garbage", b"MANIFEST-000001", b"MANIFEST-x\n"] {
        std::fs::write(&cur, bad).unwrap();
        let (file, offset, _) =
            corruption(VersionSet::recover_unchecked(posix(), d.path(), LEVELS));
        assert!(file.ends_with("CURRENT"), "{file}");
        assert_eq!(offset, 0);
    }
    std::fs::write(&cur, b"MANIFEST-000099\n").unwrap();
    let (file, _, what) = corruption(VersionSet::recover_unchecked(posix(), d.path(), LEVELS));
    assert!(
        file.ends_with("CURRENT") && what.contains("MANIFEST-000099"),
        "{file}: {what}"
    );
    // Intact again after restoring CURRENT.
    std::fs::write(&cur, b"MANIFEST-000001\n").unwrap();
    VersionSet::recover_unchecked(posix(), d.path(), LEVELS).unwrap();
}

/// Writes MANIFEST-000001 holding `edits` and a CURRENT naming it.
fn handmade_manifest(dir: &Path, edits: &[VersionEdit]) -> String {
    let fs = posix();
    let path = dir.join(manifest_file_name(1));
    let mut w = LogWriter::new(fs.create(&path).unwrap(), 1);
    for e in edits {
        let mut rec = Vec::new();
        e.encode(&mut rec);
        w.add_record(&rec).unwrap();
    }
    w.sync().unwrap();
    set_current(fs.as_ref(), dir, 1).unwrap();
    path.display().to_string()
}

fn base_edit() -> VersionEdit {
    VersionEdit {
        comparator: Some(COMPARATOR_NAME.into()),
        log_number: Some(3),
        next_file_number: Some(5),
        last_sequence: Some(77),
        ..Default::default()
    }
}

#[test]
fn recover_rejects_inconsistent_manifests() {
    // Deleting a file that is not there: Corruption at the second record.
    let d = tempfile::tempdir().unwrap();
    let mut del = VersionEdit::default();
    del.delete_file(1, 42);
    let name = handmade_manifest(d.path(), &[base_edit(), del]);
    let (file_name, offset, what) =
        corruption(VersionSet::recover_unchecked(posix(), d.path(), LEVELS));
    assert_eq!(file_name, name);
    assert!(offset > 0, "second record");
    assert!(what.contains("deletes file 42"), "{what}");

    // Missing counters.
    let d = tempfile::tempdir().unwrap();
    handmade_manifest(
        d.path(),
        &[VersionEdit {
            log_number: Some(1),
            ..Default::default()
        }],
    );
    let (_, _, what) = corruption(VersionSet::recover_unchecked(posix(), d.path(), LEVELS));
    assert!(what.contains("next file number"), "{what}");

    // Another comparator.
    let d = tempfile::tempdir().unwrap();
    handmade_manifest(
        d.path(),
        &[VersionEdit {
            comparator: Some("rev".into()),
            ..base_edit()
        }],
    );
    assert!(matches!(
        VersionSet::recover_unchecked(posix(), d.path(), LEVELS),
        Err(Error::InvalidArgument(_))
    ));

    // More levels than we open with.
    let d = tempfile::tempdir().unwrap();
    let mut deep = base_edit();
    deep.add_file(LEVELS, file(4, b"a", b"b", 1));
    handmade_manifest(d.path(), &[deep]);
    assert!(matches!(
        VersionSet::recover_unchecked(posix(), d.path(), LEVELS),
        Err(Error::InvalidArgument(_))
    ));

    // An edit of a column family that was never created.
    let d = tempfile::tempdir().unwrap();
    handmade_manifest(
        d.path(),
        &[VersionEdit {
            column_family: 2,
            ..base_edit()
        }],
    );
    assert!(matches!(
        VersionSet::recover_unchecked(posix(), d.path(), LEVELS),
        Err(Error::Corruption { .. })
    ));
}

#[test]
fn recover_never_reuses_a_used_file_number() {
    let d = tempfile::tempdir().unwrap();
    let mut e = base_edit(); // next_file_number 5 ...
    e.add_file(2, file(9, b"a", b"b", 1)); // ... but file 9 exists
    handmade_manifest(d.path(), &[e]);
    let mut vs = VersionSet::recover_unchecked(posix(), d.path(), LEVELS).unwrap();
    assert_eq!(vs.manifest_file_number(), 10);
    assert_eq!(vs.new_file_number(), 11);
    assert_eq!(vs.last_sequence(), 77);
    assert_eq!(vs.log_number(0), 3);
}

#[test]
fn live_files_include_held_old_versions() {
    let d = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::create_new(posix(), d.path(), LEVELS, "live").unwrap();
    let a = flush(&mut vs, b"a", b"c", 10);
    let b = flush(&mut vs, b"b", b"d", 20);
    let held = vs.current(0);
    let c = vs.new_file_number();
    let mut e = VersionEdit::default();
    e.delete_file(0, a);
    e.delete_file(0, b);
    e.add_file(1, file(c, b"a", b"d", 10));
    vs.log_and_apply(&mut e).unwrap();
    let unheld_file = flush(&mut vs, b"x", b"y", 30);
    let mut e = VersionEdit::default();
    e.delete_file(0, unheld_file);
    vs.log_and_apply(&mut e).unwrap();

    assert_eq!(vs.live_files(), HashSet::from([a, b, c]));
    drop(held);
    assert_eq!(vs.live_files(), HashSet::from([c]));
    flush(&mut vs, b"p", b"q", 40);
    assert!(
        vs.families[&0].older.len() <= 2,
        "dead versions pruned: {}",
        vs.families[&0].older.len()
    );
}

#[test]
fn invalid_edit_is_rejected_without_writing() {
    let d = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::create_new(posix(), d.path(), LEVELS, "inv").unwrap();
    let size = vs.manifest_file_size();
    let mut e = VersionEdit::default();
    e.delete_file(0, 1234);
    assert!(matches!(
        vs.log_and_apply(&mut e),
        Err(Error::InvalidArgument(_))
    ));
    let mut e = VersionEdit {
        log_number: Some(1000),
        ..Default::default()
    };
    assert!(matches!(
        vs.log_and_apply(&mut e),
        Err(Error::InvalidArgument(_))
    ));
    // A family that does not exist.
    let mut e = VersionEdit {
        column_family: 1,
        ..Default::default()
    };
    assert!(matches!(
        vs.log_and_apply(&mut e),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(vs.manifest_file_size(), size);
}

// ---- fault injection --------------------------------------------------------

/// Makes every write, flush and sync of `fs` fail from now on.
fn fail_writes(fs: &FaultInjectionFs) {
    let ops = [FaultOp::Append, FaultOp::Flush, FaultOp::Sync];
    fs.add_rule(FaultRule::new(FaultKind::Eio, Trigger::FromIndex(0)).ops(&ops));
}

#[test]
fn failed_manifest_write_does_not_install_and_next_call_rolls() {
    let d = tempfile::tempdir().unwrap();
    let faults = Arc::new(FaultInjectionFs::new(Arc::new(PosixFileSystem::default())));
    let fs: Arc<dyn FileSystem> = Arc::clone(&faults) as Arc<dyn FileSystem>;
    let mut vs = VersionSet::create_new(Arc::clone(&fs), d.path(), LEVELS, "f").unwrap();
    let a = flush(&mut vs, b"a", b"b", 10);
    let before = vs.current(0);
    let manifest_before = vs.manifest_file_number();

    fail_writes(&faults);
    let lost = vs.new_file_number();
    let mut e = VersionEdit::default();
    e.add_file(0, file(lost, b"c", b"d", 20));
    assert!(matches!(vs.log_and_apply(&mut e), Err(Error::Io { .. })));
    assert!(Arc::ptr_eq(&before, &vs.current(0)), "not installed");

    // Rolling while the disk still fails also fails and installs nothing.
    let mut e = VersionEdit::default();
    e.add_file(0, file(vs.new_file_number(), b"c", b"d", 20));
    assert!(vs.log_and_apply(&mut e).is_err());
    assert!(Arc::ptr_eq(&before, &vs.current(0)));

    faults.clear_rules();
    let b = flush(&mut vs, b"e", b"f", 30);
    assert_ne!(
        vs.manifest_file_number(),
        manifest_before,
        "rolled after the failure"
    );
    let want = expected(&vs);
    drop(vs);
    let vs = VersionSet::recover_unchecked(fs, d.path(), LEVELS).unwrap();
    assert_recovered(&vs, &want);
    let mut live: Vec<u64> = vs.live_files().into_iter().collect();
    live.sort_unstable();
    assert_eq!(live, vec![a, b]);
}

#[test]
fn failed_edit_tables_stay_live_until_the_next_roll() {
    let d = tempfile::tempdir().unwrap();
    let faults = Arc::new(FaultInjectionFs::new(Arc::new(PosixFileSystem::default())));
    let fs: Arc<dyn FileSystem> = Arc::clone(&faults) as Arc<dyn FileSystem>;
    let mut vs = VersionSet::create_new(Arc::clone(&fs), d.path(), LEVELS, "u").unwrap();
    let a = flush(&mut vs, b"a", b"b", 10);
    // The append reaches the file; only the fsync fails.
    faults.add_rule(FaultRule::new(FaultKind::Eio, Trigger::OnIndex(0)).ops(&[FaultOp::Sync]));
    let unsure = vs.new_file_number();
    let mut e = VersionEdit::default();
    e.add_file(0, file(unsure, b"c", b"d", 20));
    assert!(vs.log_and_apply(&mut e).is_err());
    assert!(!vs.has_manifest_writer());
    assert_eq!(
        vs.live_files(),
        HashSet::from([a, unsure]),
        "a failed edit's table may be named by the MANIFEST on disk"
    );
    // The next write rolls: the new MANIFEST does not have the failed edit.
    let b = flush(&mut vs, b"e", b"f", 30);
    assert!(vs.has_manifest_writer());
    assert_eq!(vs.live_files(), HashSet::from([a, b]));
}

#[test]
fn failed_current_switch_protects_the_new_manifest() {
    let d = tempfile::tempdir().unwrap();
    let faults = Arc::new(FaultInjectionFs::new(Arc::new(PosixFileSystem::default())));
    let fs: Arc<dyn FileSystem> = Arc::clone(&faults) as Arc<dyn FileSystem>;
    let mut vs = VersionSet::create_new(Arc::clone(&fs), d.path(), LEVELS, "c").unwrap();
    vs.set_max_manifest_size(0); // every write rolls
    let before = vs.manifest_file_number();
    // The new MANIFEST is written; the CURRENT rename fails after it.
    faults.add_rule(FaultRule::new(FaultKind::Eio, Trigger::OnIndex(0)).ops(&[FaultOp::Rename]));
    let mut e = VersionEdit::default();
    e.add_file(0, file(vs.new_file_number(), b"a", b"b", 10));
    assert!(vs.log_and_apply(&mut e).is_err());
    assert_eq!(vs.manifest_file_number(), before);
    let protected = vs.protected_manifests();
    assert_eq!(protected.len(), 1);
    assert!(manifests(d.path()).contains(&protected[0]), "kept on disk");
    flush(&mut vs, b"c", b"d", 20);
    assert!(vs.protected_manifests().is_empty());
}

#[test]
fn only_one_manifest_write_is_in_flight() {
    let d = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::create_new(posix(), d.path(), LEVELS, "one").unwrap();
    let mut e1 = VersionEdit::default();
    e1.add_file(0, file(vs.new_file_number(), b"a", b"b", 10));
    let mut w = vs.begin_apply(std::slice::from_mut(&mut e1)).unwrap();
    assert!(vs.manifest_write_in_flight());
    // Numbers handed out meanwhile are above the captured counter.
    let n = vs.new_file_number();
    assert!(n >= e1.next_file_number.unwrap());
    let mut e2 = VersionEdit::default();
    assert!(matches!(
        vs.begin_apply(std::slice::from_mut(&mut e2)),
        Err(Error::InvalidArgument(_))
    ));
    let r = w.run();
    vs.finish_apply(w, r).unwrap();
    assert!(!vs.manifest_write_in_flight());
    assert_eq!(vs.current(0).num_files(0), 1);
    let mut e2 = VersionEdit::default();
    e2.add_file(0, file(n, b"c", b"d", 20));
    vs.log_and_apply(&mut e2).unwrap();
    assert_eq!(vs.current(0).num_files(0), 2);
}

#[test]
fn recover_names_a_missing_table_with_the_edit_offset() {
    let d = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::create_new(posix(), d.path(), LEVELS, "id").unwrap();
    let n = flush(&mut vs, b"a", b"b", 10);
    drop(vs);
    let (file, offset, what) = corruption(VersionSet::recover(posix(), d.path(), LEVELS));
    assert!(file.contains("MANIFEST-"), "{file}");
    assert!(offset > 0, "the adding edit follows the snapshot record");
    assert!(what.contains(&table_file_name(n)), "{what}");
    // With the table present, recovery succeeds.
    std::fs::write(d.path().join(table_file_name(n)), b"").unwrap();
    VersionSet::recover(posix(), d.path(), LEVELS).unwrap();
}

/// A creating edit for family `id` named `name`.
fn add_cf(id: u32, name: &str) -> VersionEdit {
    VersionEdit {
        column_family: id,
        cf_add: Some(name.into()),
        cf_options: Some(format!("write_buffer_size={}", 4096 + id)),
        ..Default::default()
    }
}

fn family_names(vs: &VersionSet) -> Vec<(u32, String)> {
    vs.families().map(|(id, f)| (id, f.name.clone())).collect()
}

#[test]
fn families_are_created_changed_dropped_and_recovered() {
    let d = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::create_new(posix(), d.path(), LEVELS, "cf").unwrap();
    let (a, b) = (vs.new_column_family_id(), vs.new_column_family_id());
    vs.log_and_apply_group(&mut [add_cf(a, "a"), add_cf(b, "b")])
        .unwrap();
    assert_eq!(
        family_names(&vs),
        [(0, "default".into()), (a, "a".into()), (b, "b".into())]
    );
    // A table in family b, a log number of its own, then drop a.
    let n = vs.new_file_number();
    let log = vs.new_file_number();
    let mut e = VersionEdit {
        column_family: b,
        log_number: Some(log),
        ..Default::default()
    };
    e.add_file(0, file(n, b"k", b"m", 5));
    vs.log_and_apply(&mut e).unwrap();
    assert_eq!(vs.current(b).num_files(0), 1);
    assert_eq!(vs.current(0).num_files(0), 0);
    assert_eq!(vs.log_number(b), log);
    let mut drop_a = VersionEdit {
        column_family: a,
        cf_drop: true,
        ..Default::default()
    };
    vs.log_and_apply(&mut drop_a).unwrap();
    // Existing names, unknown families and the default one are refused.
    let c = vs.new_column_family_id();
    for mut bad in [
        add_cf(c, "b"),
        VersionEdit {
            column_family: a,
            ..Default::default()
        },
        VersionEdit {
            column_family: 0,
            cf_drop: true,
            ..Default::default()
        },
        add_cf(c + 5, "never-handed-out"),
    ] {
        assert!(
            matches!(vs.log_and_apply(&mut bad), Err(Error::InvalidArgument(_))),
            "{bad:?}"
        );
    }
    drop(vs);
    for roll in [false, true] {
        let mut vs = VersionSet::recover_unchecked(posix(), d.path(), LEVELS).unwrap();
        assert_eq!(
            family_names(&vs),
            [(0, "default".into()), (b, "b".into())],
            "roll {roll}"
        );
        assert_eq!(vs.current(b).num_files(0), 1);
        assert_eq!(vs.log_number(b), log);
        assert_eq!(
            vs.family(b).unwrap().options,
            format!("write_buffer_size={}", 4096 + b)
        );
        // Ids of families that existed are never reused (one a failed
        // create took was never written anywhere and may be).
        assert!(vs.new_column_family_id() > b);
        if roll {
            vs.set_max_manifest_size(1);
        }
        let mut e = VersionEdit::default();
        vs.log_and_apply(&mut e).unwrap();
    }
    assert_eq!(
        VersionSet::list_column_families(posix().as_ref(), d.path()).unwrap(),
        ["default", "b"]
    );
}

#[test]
fn an_atomic_group_cut_short_is_discarded_whole() {
    let d = tempfile::tempdir().unwrap();
    let mut first = add_cf(1, "a");
    first.atomic_group = Some(1);
    let mut base = base_edit();
    base.max_column_family = Some(1);
    handmade_manifest(d.path(), &[base, first]);
    let vs = VersionSet::recover_unchecked(posix(), d.path(), LEVELS).unwrap();
    assert_eq!(family_names(&vs), [(0, "default".into())]);
    assert_eq!(
        VersionSet::list_column_families(posix().as_ref(), d.path()).unwrap(),
        ["default"]
    );
    // A complete group applies.
    let d = tempfile::tempdir().unwrap();
    let mut first = add_cf(1, "a");
    first.atomic_group = Some(1);
    let mut second = add_cf(2, "b");
    second.atomic_group = Some(0);
    handmade_manifest(d.path(), &[base_edit(), first, second]);
    let vs = VersionSet::recover_unchecked(posix(), d.path(), LEVELS).unwrap();
    assert_eq!(family_names(&vs).len(), 3);
    // An edit interrupting a group is corruption.
    let d = tempfile::tempdir().unwrap();
    let mut first = add_cf(1, "a");
    first.atomic_group = Some(1);
    handmade_manifest(d.path(), &[base_edit(), first, add_cf(2, "b")]);
    assert!(matches!(
        VersionSet::recover_unchecked(posix(), d.path(), LEVELS),
        Err(Error::Corruption { .. })
    ));
}

#[test]
fn a_format_1_manifest_is_read() {
    // Written by builds before column families: edit format version 1.
    let d = tempfile::tempdir().unwrap();
    let fs = posix();
    let path = d.path().join(manifest_file_name(1));
    let mut w = LogWriter::new(fs.create(&path).unwrap(), 1);
    let mut e = base_edit();
    e.add_file(1, file(4, b"a", b"c", 9));
    let mut rec = Vec::new();
    e.encode(&mut rec);
    assert_eq!(&rec[..2], [1, 2]);
    rec[1] = 1;
    w.add_record(&rec).unwrap();
    w.sync().unwrap();
    set_current(fs.as_ref(), d.path(), 1).unwrap();
    let vs = VersionSet::recover_unchecked(posix(), d.path(), LEVELS).unwrap();
    assert_eq!(family_names(&vs), [(0, "default".into())]);
    assert_eq!(vs.current(0).num_files(1), 1);
    assert_eq!(vs.log_number(0), 3);
}

/// The DB-wide `min_log_number_to_keep` only grows, survives recovery and
/// MANIFEST rolls (the snapshot carries it while it says more than the
/// families' log numbers), and raises the first WAL recovery reads above
/// an idle family's log number.
#[test]
fn min_log_number_to_keep_is_persisted_and_raises_the_recovery_floor() {
    let d = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::create_new(posix(), d.path(), LEVELS, "keep").unwrap();
    vs.set_max_manifest_size(400);
    assert_eq!(vs.recovery_log_floor(), 0);
    let mut keep = 0;
    for i in 0..30u64 {
        flush(&mut vs, b"a", b"b", i * 100);
        // The DB-wide floor set past the family's own log number (as a
        // flush does while another family is idle).
        keep = vs.new_file_number();
        let mut e = VersionEdit {
            log_number: Some(vs.log_number(0)),
            min_log_number_to_keep: Some(keep),
            ..Default::default()
        };
        vs.log_and_apply(&mut e).unwrap();
        // A smaller value later never lowers it.
        let mut e = VersionEdit {
            min_log_number_to_keep: Some(keep - 1),
            ..Default::default()
        };
        vs.log_and_apply(&mut e).unwrap();
        assert_eq!(vs.min_log_number_to_keep(), keep);
        assert_eq!(vs.recovery_log_floor(), keep.max(vs.min_log_number()));
    }
    let floor = vs.recovery_log_floor();
    drop(vs);
    for _ in 0..2 {
        let vs = VersionSet::recover_unchecked(posix(), d.path(), LEVELS).unwrap();
        assert_eq!(vs.min_log_number_to_keep(), keep);
        assert_eq!(vs.recovery_log_floor(), floor);
    }
}
