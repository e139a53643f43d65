//! `Db::ingest_external_file`: table files written by
//! [`SstFileWriter`](super::SstFileWriter) join a family's LSM without going
//! through the write path (RocksDB's `IngestExternalFile`).
//!
//! Steps:
//! 1. Validate, before anything is copied: open every file (footer,
//!    metaindex, properties, index, filter and range-deletion blocks are
//!    verified; with `verify_checksums_before_ingest` every data block
//!    too), require it to be an external table whose entries are at
//!    sequence number 0, and find its key range. A damaged file is
//!    `Corruption` naming it. Files of one family must not overlap each
//!    other (RocksDB's rule; `InvalidArgument`).
//! 2. Copy each file into the DB directory under a new file number (hard
//!    linked with `move_files`, copied when the link fails), synced, then
//!    the directory synced; with `move_files` the callers' names are
//!    removed once the ingestion is installed (RocksDB's behaviour). The numbers are pending outputs, so the
//!    obsolete-file pass leaves them alone; a crash leaves them unnamed by
//!    the MANIFEST, and the next open deletes them.
//! 3. Stop writes: the DB mutex, no MANIFEST write in flight, then the WAL
//!    lock with no write group in flight (the memtable switch's protocol),
//!    so no sequence number is handed out or published meanwhile. If a
//!    file's range overlaps a memtable of its family: with
//!    `allow_blocking_flush` (else `InvalidArgument`), stop new write
//!    groups (a write stall, `WriteStop`), let go, flush, and start step 3
//!    again; the stall lasts until the ingestion ends.
//! 4. Place each file (below) and, if any needs one, take the global
//!    sequence number `last + 1`; write one MANIFEST edit per family in one
//!    atomic group, without releasing the DB mutex (the WAL lock is held,
//!    and the lock order is DB mutex then WAL); then publish the sequence
//!    number and the families' super versions. A crash leaves every file in
//!    the LSM or none.
//!
//! Placement (RocksDB's): going down from L0, a file goes to the lowest
//! level at and above which no file's key range overlaps its own, and
//! where no running compaction may write an output over its range (the
//! span of every file being compacted at or above that level). It needs a
//! global sequence number when some level overlaps it, or, with
//! `snapshot_consistency`, when snapshots exist (so they do not see it);
//! otherwise its entries keep sequence number 0 (nothing older exists
//! under its range). Universal compaction: the last level (sequence
//! number 0) or L0 (a global one), so sorted runs stay in age order. FIFO:
//! always L0, with a global sequence number whenever L0 holds files (FIFO
//! drops the oldest first; ingested data is the newest). With the DB
//! option `allow_ingest_behind` the last level is reserved (see below): the
//! files go no lower than the level above it, and a file overlapping the
//! last level gets a global sequence number.
//!
//! `ingest_behind` (RocksDB's): the files go to the last level at sequence
//! number 0, beneath everything, so every version of a key already in the
//! DB, however old, shadows theirs (and merge operands above apply to
//! them). Needs the DB option `allow_ingest_behind`, which keeps
//! compactions out of the last level; refused (`InvalidArgument`) without
//! it, or when a file overlaps a file already in the last level (the files
//! must not overlap each other either, as always). The memtables need no
//! flush (anything in them is newer) and snapshots see the files (as in
//! RocksDB: sequence number 0 is below every snapshot).
//!
//! The global sequence number is recorded in the MANIFEST's file entry
//! (docs/format/manifest.md, sub-field 1), and the table reader presents
//! every entry at it (`sst::Table::open_at`). `repair_db` takes it from
//! the old MANIFEST; known limit: without a readable old MANIFEST entry for
//! the table, repair lists the table at sequence number 0 (older versions
//! of its keys may then win).
//!
//! Files are linked or copied through the `FileSystem` seam, never
//! renamed: a crash before the MANIFEST edit leaves the callers' files
//! where they were (and the DB's unnamed copies, which the next open
//! deletes).

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::base::{compare_internal, make_internal_key, ValueKind, MAX_SEQNO, TRAILER_LEN};
use crate::cf::Cf;
use crate::db::Db;
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::options::CompactionStyle;
use crate::shared::{DbInner, DbState, Reason};
use crate::sst::{ReadaheadPolicy, Table};
use crate::version::filename::table_file_name;
use crate::version::{FileMeta, Version, VersionEdit};

/// RocksDB's `IngestExternalFileOptions`. The defaults are RocksDB's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IngestOptions {
    /// Hard-link the files into the DB directory instead of copying them
    /// (copied when the link fails, e.g. across file systems), and remove
    /// the callers' names once the ingestion is installed. Default false.
    pub move_files: bool,
    /// Give the files a global sequence number when snapshots exist, so
    /// that reads at those snapshots do not see them. Default true.
    pub snapshot_consistency: bool,
    /// Allow a global sequence number at all; without it, a file that
    /// needs one is refused (`InvalidArgument`). Default true.
    pub allow_global_seqno: bool,
    /// Flush a memtable the files overlap, blocking writes meanwhile;
    /// without it such an ingestion is refused. Default true.
    pub allow_blocking_flush: bool,
    /// Put the files in the last level at sequence number 0, beneath every
    /// existing version of their keys (needs the DB option
    /// `allow_ingest_behind`, else `InvalidArgument`; see the module
    /// comment of `ops/ingest.rs`). Default false.
    pub ingest_behind: bool,
    /// Read and check every block of every file before ingesting it (the
    /// file's meta blocks are checked either way). Default false.
    pub verify_checksums_before_ingest: bool,
    /// Refuse (`InvalidArgument`) unless every file can go to the last
    /// level. Default false.
    pub fail_if_not_bottommost_level: bool,
}

impl Default for IngestOptions {
    fn default() -> Self {
        IngestOptions {
            move_files: false,
            snapshot_consistency: true,
            allow_global_seqno: true,
            allow_blocking_flush: true,
            ingest_behind: false,
            verify_checksums_before_ingest: false,
            fail_if_not_bottommost_level: false,
        }
    }
}

impl Db {
    /// Ingests external table files into the `default` family. See the
    /// module comment of `ops/ingest.rs` (RocksDB's `IngestExternalFile`).
    pub fn ingest_external_file(&self, files: &[PathBuf], opts: &IngestOptions) -> Result<()> {
        let cf = self.default_cf();
        self.ingest_external_file_cf(&cf, files, opts)
    }

    /// `ingest_external_file` into family `cf`.
    pub fn ingest_external_file_cf(
        &self,
        cf: &Cf,
        files: &[PathBuf],
        opts: &IngestOptions,
    ) -> Result<()> {
        self.ingest_external_files(&[(cf, files)], opts)
    }

    /// Ingests files into several families at once: all of them, or (on
    /// error or crash) none (RocksDB's `IngestExternalFiles`).
    pub fn ingest_external_files(
        &self,
        args: &[(&Cf, &[PathBuf])],
        opts: &IngestOptions,
    ) -> Result<()> {
        let mut jobs = Vec::with_capacity(args.len());
        for (cf, files) in args {
            let fam = self.family(cf)?;
            if jobs.iter().any(|j: &Job| j.cf == fam.id) {
                return Err(Error::InvalidArgument(format!(
                    "ingest: family {} named twice",
                    fam.name
                )));
            }
            jobs.push(Job {
                cf: fam.id,
                paths: files.to_vec(),
                files: Vec::new(),
            });
        }
        ingest(self.inner(), jobs, opts)
    }
}

/// The files of one family.
struct Job {
    cf: u32,
    paths: Vec<PathBuf>,
    files: Vec<External>,
}

/// One validated external file.
struct External {
    path: PathBuf,
    /// User-key range, both ends inclusive (a range deletion's exclusive
    /// end counts, conservatively).
    lo: Vec<u8>,
    hi: Vec<u8>,
    /// Smallest and largest internal keys at sequence number 0.
    smallest: (Vec<u8>, u8),
    largest: Option<(Vec<u8>, u8)>,
    range_end: Option<Vec<u8>>,
    range_del_span: Option<(Vec<u8>, Vec<u8>)>,
    num_entries: u64,
    num_deletions: u64,
    num_range_deletions: u64,
    compression: u8,
    creation_time: u64,
    /// Set once copied: the new file number and size.
    number: u64,
    file_size: u64,
    /// Set at placement.
    level: usize,
    global: bool,
}

fn ingest(db: &Arc<DbInner>, mut jobs: Vec<Job>, opts: &IngestOptions) -> Result<()> {
    db.check_writable()?;
    if opts.ingest_behind && !db.opts.allow_ingest_behind {
        return Err(Error::InvalidArgument(
            "ingest_behind needs a DB opened with allow_ingest_behind".into(),
        ));
    }
    if jobs.iter().all(|j| j.paths.is_empty()) {
        return Err(Error::InvalidArgument("ingest: no files given".into()));
    }
    // 1. Validate.
    for job in &mut jobs {
        for p in &job.paths {
            job.files
                .push(validate(db, p, opts.verify_checksums_before_ingest)?);
        }
        job.files.sort_by(|a, b| a.lo.cmp(&b.lo));
        for w in job.files.windows(2) {
            if w[0].hi >= w[1].lo {
                return Err(Error::InvalidArgument(format!(
                    "ingest: files {} and {} overlap",
                    w[0].path.display(),
                    w[1].path.display()
                )));
            }
        }
    }
    // 2. Copy (or move) in, under pending file numbers.
    let mut numbers = Vec::new();
    let r = copy_in(db, &mut jobs, opts.move_files, &mut numbers)
        .and_then(|()| install(db, &mut jobs, opts));
    if r.is_err() {
        undo_copies(db, &jobs);
    }
    let mut st = db.state.lock();
    for n in &numbers {
        st.pending_outputs.remove(n);
    }
    drop(st);
    if r.is_ok() && opts.move_files {
        // Installed: the DB holds its own names; the callers' go (as
        // RocksDB does). A failure here loses nothing.
        for f in jobs.iter().flat_map(|j| &j.files) {
            let _ = db.fs.remove(&f.path);
        }
    }
    r
}

/// Opens `path` as a table and reads what placement and the MANIFEST need.
fn validate(db: &DbInner, path: &Path, verify: bool) -> Result<External> {
    let name = path.display().to_string();
    let file = db.fs.open_random(path)?;
    let t = Table::open(file, name.clone(), 0, None, false)?;
    let p = t.properties().clone();
    if p.external_version == 0 {
        return Err(Error::InvalidArgument(format!(
            "{name}: not an external SST file (write it with SstFileWriter)"
        )));
    }
    if p.largest_seqno != 0 {
        return Err(Error::corruption(
            &name,
            0,
            format!(
                "external SST file with sequence numbers up to {}",
                p.largest_seqno
            ),
        ));
    }
    let mut it = t.iter_with(false, ReadaheadPolicy::Fixed(1 << 20));
    // The kind is the low byte of the little-endian trailer.
    let split = |k: &[u8]| {
        let n = k.len().saturating_sub(TRAILER_LEN);
        (
            k.get(..n).unwrap_or(&[]).to_vec(),
            k.get(n).copied().unwrap_or(0),
        )
    };
    it.seek_to_first();
    it.status()?;
    let first = it.valid().then(|| split(it.key()));
    if verify {
        verify_table(&t, &name)?;
    }
    it.seek_to_last();
    it.status()?;
    let last = it.valid().then(|| split(it.key()));
    let span = t.range_fragments().and_then(|f| {
        let fr = f.fragments();
        Some((fr.first()?.start.clone(), fr.last()?.end.clone()))
    });
    let (lo, hi) = match (&first, &last, &span) {
        (Some(f), Some(l), None) => (f.0.clone(), l.0.clone()),
        (Some(f), Some(l), Some((s, e))) => {
            (f.0.clone().min(s.clone()), l.0.clone().max(e.clone()))
        }
        (_, _, Some((s, e))) => (s.clone(), e.clone()),
        _ => {
            return Err(Error::corruption(
                &name,
                0,
                "external SST file with no entries",
            ))
        }
    };
    let smallest = match (&first, &span) {
        (Some(f), Some((s, _))) if s < &f.0 => (s.clone(), ValueKind::RangeDeletion as u8),
        (Some(f), _) => f.clone(),
        (None, Some((s, _))) => (s.clone(), ValueKind::RangeDeletion as u8),
        (None, None) => return Err(Error::corruption(&name, 0, "empty")),
    };
    let range_end = span.as_ref().map(|(_, e)| e.clone());
    Ok(External {
        path: path.to_path_buf(),
        lo,
        hi,
        smallest,
        largest: last,
        range_end,
        range_del_span: span,
        num_entries: p.num_entries,
        num_deletions: p.num_deletions,
        num_range_deletions: p.num_range_deletions,
        compression: compression_code(&p.compression_name),
        creation_time: p.creation_time,
        number: 0,
        file_size: 0,
        level: 0,
        global: false,
    })
}

/// Reads every entry of `t` (so every data block's checksum is checked),
/// checking their order and their count against the table's properties;
/// `Corruption` naming `name` (also the import's check, `ops/import.rs`).
pub(super) fn verify_table(t: &Arc<Table>, name: &str) -> Result<()> {
    let mut it = t.iter_with(false, ReadaheadPolicy::Fixed(1 << 20));
    it.seek_to_first();
    let mut n = 0u64;
    let mut last: Option<Vec<u8>> = None;
    while it.valid() {
        if last
            .as_deref()
            .is_some_and(|l| compare_internal(l, it.key()).is_ge())
        {
            return Err(Error::corruption(name, 0, "keys out of order"));
        }
        last = Some(it.key().to_vec());
        n += 1;
        it.next();
    }
    it.status()?;
    let want = t.properties().num_entries;
    if n != want {
        return Err(Error::corruption(
            name,
            0,
            format!("{n} entries, the properties say {want}"),
        ));
    }
    Ok(())
}

/// The trailer code of a compression named in a table's properties.
fn compression_code(name: &str) -> u8 {
    [
        crate::sst::Compression::None,
        crate::sst::Compression::Lz4,
        crate::sst::Compression::Zstd,
    ]
    .into_iter()
    .find(|c| c.name() == name)
    .map_or(0, |c| c.code())
}

/// Copies (or moves) every file into the DB directory under a new number,
/// recorded in `numbers` (pending outputs until the caller removes them).
fn copy_in(db: &DbInner, jobs: &mut [Job], move_files: bool, numbers: &mut Vec<u64>) -> Result<()> {
    for job in jobs.iter_mut() {
        for f in &mut job.files {
            f.number = {
                let mut st = db.state.lock();
                let n = st.versions.new_file_number();
                st.pending_outputs.insert(n);
                n
            };
            numbers.push(f.number);
            let dest = db.dir.join(table_file_name(f.number));
            // A hard link where the file system can; a copy otherwise.
            let linked = move_files && db.fs.link(&f.path, &dest).is_ok();
            if !linked {
                db.fs.copy_file(&f.path, &dest, None)?;
            }
            f.file_size = db.fs.file_size(&dest)?;
            crate::sync_point!("IngestExternalFile:Copied");
        }
    }
    db.fs.sync_dir(&db.dir)
}

/// After a failure: the DB's names go (the callers' files are untouched:
/// linked or copied, never moved).
fn undo_copies(db: &DbInner, jobs: &[Job]) {
    for f in jobs.iter().flat_map(|j| &j.files) {
        if f.number != 0 {
            let _ = db.fs.remove(&db.dir.join(table_file_name(f.number)));
        }
    }
}

/// The key of the write stop an ingestion holds in `DbState::stalled`
/// while it flushes (no family has this id).
const INGEST_STOP: u32 = u32::MAX;

/// Stops new write groups (RocksDB's ingestion enters the write queue):
/// a `Stopped` stall that leaders wait out in `make_room`, attributed to
/// the memtable stop (writes wait for a flush). Taken only when a memtable
/// must be flushed, so that a steady writer cannot keep refilling it;
/// lifted on drop (never with the DB mutex held).
struct WriteStop<'a>(&'a DbInner);

impl<'a> WriteStop<'a> {
    fn new(db: &'a DbInner) -> WriteStop<'a> {
        let mut st = db.state.lock();
        st.stalled.insert(
            INGEST_STOP,
            crate::stats::StallCondition::Stopped(crate::stats::StallCause::MemtableStop),
        );
        db.room_clear.store(false, Ordering::SeqCst);
        WriteStop(db)
    }
}

impl Drop for WriteStop<'_> {
    fn drop(&mut self) {
        let mut st = self.0.state.lock();
        st.stalled.remove(&INGEST_STOP);
        drop(st);
        self.0.bg_cv.notify_all();
    }
}

/// Steps 3 and 4 of the module comment.
fn install(db: &Arc<DbInner>, jobs: &mut [Job], opts: &IngestOptions) -> Result<()> {
    let mut stop: Option<WriteStop<'_>> = None;
    for attempt in 0.. {
        let mut st = db.state.lock();
        crate::shared::manifest::wait_for_manifest_writer(db, &mut st);
        let mut wal = db.wals.lock_wal_quiesced(&db.visible_seq);
        // A family dropped meanwhile: refused.
        for job in jobs.iter() {
            if st.cf(job.cf).is_none() {
                return Err(Error::InvalidArgument(format!(
                    "ingest: column family {} was dropped",
                    job.cf
                )));
            }
        }
        // Files ingested behind lie under the memtables' entries anyway.
        let flush: Vec<u32> = jobs
            .iter()
            .filter(|j| !opts.ingest_behind && overlaps_memtables(&st, j))
            .map(|j| j.cf)
            .collect();
        if !flush.is_empty() {
            if !opts.allow_blocking_flush {
                return Err(Error::InvalidArgument(
                    "ingest: the files overlap the memtable and allow_blocking_flush is off".into(),
                ));
            }
            if attempt >= 8 {
                return Err(Error::InvalidArgument(
                    "ingest: writes kept overlapping the files' key range".into(),
                ));
            }
            drop(wal);
            drop(st);
            if stop.is_none() {
                stop = Some(WriteStop::new(db));
            }
            for cf in flush {
                crate::bg::scheduler::flush_and_wait(db, cf)?;
            }
            continue;
        }
        let snapshots = db.snapshots.oldest().is_some();
        let mut any_global = false;
        for job in jobs.iter_mut() {
            let version = st.versions.current(job.cf);
            let style = st
                .cf(job.cf)
                .map_or(CompactionStyle::Level, |c| c.cf.opts().compaction_style);
            let reserved = db.opts.allow_ingest_behind;
            for f in &mut job.files {
                if opts.ingest_behind {
                    f.level = behind_level(&version, f)?;
                    f.global = false;
                    continue;
                }
                let (level, overlap) = place(&version, style, reserved, &f.lo, &f.hi);
                f.level = level;
                f.global = overlap || (opts.snapshot_consistency && snapshots);
                if f.global && !opts.allow_global_seqno {
                    return Err(Error::InvalidArgument(format!(
                        "ingest: {} needs a global sequence number (it overlaps data in the \
                         DB, or snapshots exist) and allow_global_seqno is off",
                        f.path.display()
                    )));
                }
                let bottom = version.num_levels() - usize::from(reserved);
                if opts.fail_if_not_bottommost_level && level + 1 != bottom {
                    return Err(Error::InvalidArgument(format!(
                        "ingest: {} cannot go to the bottommost level (it would go to L{level})",
                        f.path.display()
                    )));
                }
                any_global |= f.global;
            }
        }
        let seq = wal.last_allocated + 1;
        // With WAL archiving the ingestion takes a sequence number even when
        // its files need none, and the WAL says so: a point-in-time restore
        // past it must start from a backup made after it.
        let marked = db.opts.archives_wals();
        if marked {
            use crate::shared::wal_marks::{mark_wal, Logged};
            mark_wal(db, &mut wal, seq, seq, Logged::Ingested)?;
        }
        let mut edits: Vec<VersionEdit> = jobs
            .iter()
            .map(|job| {
                let mut e = VersionEdit {
                    column_family: job.cf,
                    ..Default::default()
                };
                for f in &job.files {
                    e.add_file(f.level, file_meta(f, seq));
                }
                if any_global || marked {
                    e.last_sequence = Some(seq);
                }
                e
            })
            .collect();
        crate::sync_point!("IngestExternalFile:BeforeManifestWrite");
        let r = crate::shared::manifest::log_and_apply_locked(db, &mut st, &mut edits);
        if any_global || marked {
            // Used either way (a failed write may have persisted it).
            wal.last_allocated = seq;
            db.visible_seq.store(seq, Ordering::Release);
        }
        if let Err(e) = r {
            drop(wal);
            db.set_bg_error(&mut st, e.clone(), Reason::ManifestWrite);
            return Err(e);
        }
        for job in jobs.iter() {
            db.install_super_version(&mut st, job.cf);
        }
        drop(wal);
        db.bg_cv.notify_all();
        return Ok(());
    }
    Err(Error::InvalidArgument("ingest: gave up".into()))
}

/// True when a file of `job` overlaps a memtable of its family.
fn overlaps_memtables(st: &DbState, job: &Job) -> bool {
    let Some(c) = st.cf(job.cf) else {
        return false;
    };
    c.imm.iter().chain(std::iter::once(&c.mem)).any(|m| {
        if m.num_entries() == 0 && m.num_range_deletes() == 0 {
            return false;
        }
        job.files.iter().any(|f| {
            let mut it = m.iter();
            let mut seek = Vec::new();
            make_internal_key(&mut seek, &f.lo, MAX_SEQNO, crate::base::KIND_FOR_SEEK);
            it.seek(&seek);
            let point = it.valid() && crate::base::extract_user_key(it.key()) <= f.hi.as_slice();
            let range = m.range_fragments().is_some_and(|fr| {
                let i = fr.first_ending_after(&f.lo);
                fr.fragments()
                    .get(i)
                    .is_some_and(|x| x.start.as_slice() <= f.hi.as_slice())
            });
            point || range
        })
    })
}

/// The last level, for a file ingested behind: refused when it overlaps
/// a file there.
fn behind_level(v: &Version, f: &External) -> Result<usize> {
    let last = v.num_levels() - 1;
    if let Some(g) = v.overlapping_files(last, &f.lo, &f.hi).first() {
        return Err(Error::InvalidArgument(format!(
            "ingest_behind: {} overlaps table {} in the last level (L{last})",
            f.path.display(),
            g.number
        )));
    }
    Ok(last)
}

/// The level for a file spanning user keys `[lo, hi]`, and whether some
/// level overlaps it (then it needs a global sequence number). With the
/// last level `reserved` (`allow_ingest_behind`) the file goes above it,
/// and overlapping it counts.
fn place(
    v: &Version,
    style: CompactionStyle,
    reserved: bool,
    lo: &[u8],
    hi: &[u8],
) -> (usize, bool) {
    let levels = v.num_levels() - usize::from(reserved);
    let mut target = 0;
    let mut overlap = false;
    // The span of every file being compacted at or above each level.
    let mut busy: Option<(Vec<u8>, Vec<u8>)> = None;
    for level in 0..levels {
        for f in v.files(level).iter().filter(|f| f.is_being_compacted()) {
            let (s, l) = (f.smallest_user_key(), f.largest_user_key());
            busy = Some(match busy.take() {
                None => (s.to_vec(), l.to_vec()),
                Some((a, b)) => (a.min(s.to_vec()), b.max(l.to_vec())),
            });
        }
        if !v.overlapping_files(level, lo, hi).is_empty() {
            overlap = true;
            break;
        }
        let free = busy
            .as_ref()
            .is_none_or(|(a, b)| a.as_slice() > hi || b.as_slice() < lo);
        if level == 0 || free {
            target = level;
        }
    }
    if reserved && !overlap {
        overlap = !v.overlapping_files(levels, lo, hi).is_empty();
    }
    match style {
        CompactionStyle::Fifo => (0, overlap || !v.files(0).is_empty()),
        CompactionStyle::Universal if overlap || target + 1 != levels => (0, true),
        _ => (target, overlap),
    }
}

/// The MANIFEST's entry for `f` (at global sequence number `seq` when it
/// needs one).
fn file_meta(f: &External, seq: u64) -> FileMeta {
    let s = if f.global { seq } else { 0 };
    let mut smallest = Vec::new();
    make_internal_key(&mut smallest, &f.smallest.0, s, f.smallest.1);
    let mut largest = Vec::new();
    match (&f.largest, &f.range_end) {
        (Some((k, _)), Some(end)) if k < end => {
            make_internal_key(&mut largest, end, MAX_SEQNO, ValueKind::RangeDeletion as u8)
        }
        (Some((k, kind)), _) => make_internal_key(&mut largest, k, s, *kind),
        (None, Some(end)) => {
            make_internal_key(&mut largest, end, MAX_SEQNO, ValueKind::RangeDeletion as u8)
        }
        (None, None) => largest = smallest.clone(),
    }
    let mut m = FileMeta::new(
        f.number,
        f.file_size,
        smallest,
        largest,
        s,
        s,
        f.num_entries,
        f.num_deletions,
    );
    m.num_range_deletions = f.num_range_deletions;
    m.compression = f.compression;
    m.newest_key_time = f.creation_time;
    m.global_seqno = f.global.then_some(seq);
    if let Some(span) = &f.range_del_span {
        let _ = m.range_del_span.set(span.clone());
    }
    m
}
