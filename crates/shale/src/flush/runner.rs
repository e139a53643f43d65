//! Runs a `flush::job::FlushJob` against the DB: the oldest immutable
//! memtable of a column family becomes an L0 table of that family.
//!
//! The table is written and the closed WALs are synced without the DB
//! mutex (several tables when the family's partitioner or an insert
//! stream's end cuts it; those that fit the base level are installed
//! there, see `place_below_l0`); the job's edit (new file, the family's new log number, last
//! sequence) is logged to the MANIFEST (the mutex is released for that IO
//! too, see `shared::manifest`), and only then
//! is the memtable dropped from the family's super version and its WAL made
//! obsolete (once no other family needs it). The oldest immutable memtable
//! stays `imm[0]` throughout: one flush per family runs at a time
//! (`CfState::flush_running`). If the family is dropped meanwhile, the
//! table is discarded.
//!
//! If the user's filter changed a value that a snapshot taken while the
//! table was written can read, the table is discarded too and the job runs
//! once more, without the filter (see `SnapshotList::admit`).
//!
//! Events (`shared::events`: a LOG line and a listener call each, the
//! listeners' delivered later on the event thread): `flush_started` before
//! the table is written, `table_file_creation` once it is written and
//! synced (before the edit; a discarded run's table too, so its deletion
//! follows a creation), `flush_finished` after the install; a flush that
//! installs nothing (it failed, or its family was dropped) tells only the
//! listeners it completed (then the caller records a failure as the
//! background error).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::MutexGuard;

use crate::build::writer::OutputSpec;
use crate::compaction::picker;
use crate::error::Result;
use crate::events::records::{FlushDiscarded, FlushFinished, Kind};
use crate::events::TableFileCreationReason;
use crate::flush::job::{FlushJob, FlushResult};
use crate::io::accounting::{self, Purpose};
use crate::memory::Part;
use crate::memtable::MemTable;
use crate::sst::TableOptions;
use crate::stats::RunningJob;
use crate::version::VersionEdit;

use crate::base::snapshots::Admission;
use crate::shared::obsolete::delete_obsolete_files;
use crate::shared::{DbInner, DbState};

pub(crate) fn flush(
    db: &Arc<DbInner>,
    st: &mut MutexGuard<'_, DbState>,
    cf: u32,
    mem: Arc<MemTable>,
) -> Result<()> {
    if st.cf(cf).is_none() {
        return Ok(());
    }
    let _io = accounting::scope(Purpose::Flush);
    let job_id = db.stats.next_job_id.fetch_add(1, Ordering::Relaxed);
    let started = crate::shared::events::flush_started(db, st, cf, job_id, &mem);
    let r = run(db, st, cf, &mem, job_id);
    // Installed (or failed): this job's reference goes now, so the
    // memtable's memory is freed before the listeners and the deletion of
    // obsolete files (a WAL unlink on a file system that discards on
    // unlink can take a while), not after them.
    drop(mem);
    match &r {
        Ok(Some(finished)) => crate::shared::events::emit(db, finished),
        Ok(None) => crate::shared::events::flush_completed(db, &started, Ok(())),
        Err(e) => crate::shared::events::flush_completed(db, &started, Err(e.clone())),
    }
    let r = r.map(|_| ());
    if r.is_ok() {
        delete_obsolete_files(db, st);
    }
    r
}

/// The flush itself; returns its `flush_finished` record once its tables
/// (none when every entry was dropped) are installed, `None` when the
/// family was dropped.
fn run(
    db: &Arc<DbInner>,
    st: &mut MutexGuard<'_, DbState>,
    cf: u32,
    mem: &Arc<MemTable>,
    job_id: u64,
) -> Result<Option<FlushFinished>> {
    let Some(opts) = st.cf(cf).map(|c| c.cf.opts().clone()) else {
        return Ok(None);
    };
    let topts = crate::shared::table_options::table_options(db, st, cf, &opts, 0, false);
    let mut job = FlushJob {
        cf,
        mem: Arc::clone(mem),
        snapshots: db.snapshots.all(),
        compression: topts.compression,
        merge_op: opts.merge_operator.clone(),
        user_filter: opts.compaction_filter.clone(),
        now: db.opts.clock.now_secs(),
        blob_output: crate::shared::blob_glue::output_spec(
            db,
            cf,
            &opts,
            &st.versions.current(cf),
            0,
            true,
        ),
        partitioner: opts.flush_partitioner(),
        streams: opts.stream_detector(opts.write_buffer_size as u64),
    };
    let started = Instant::now();
    // At most two runs: the second has no filter, so nothing to refuse.
    let (r, allocated, hold) = loop {
        let (r, allocated) = write_table(db, st, &job, &topts)?;
        match db.snapshots.admit(&job.snapshots, r.counts.oldest_filtered) {
            // Its tables' creation is recorded once their level is known.
            Admission::Install(hold) => break (r, allocated, hold),
            Admission::RunAgain => {
                for f in &r.outputs.files {
                    let reason = TableFileCreationReason::Flush;
                    let props = &r.outputs.props;
                    crate::shared::events::table_created(db, st, cf, job_id, reason, f, 0, props);
                }
                // The table is wrong for a snapshot taken while it was
                // written: it becomes obsolete, and the job runs again.
                release(st, &allocated);
                job.snapshots = db.snapshots.all();
                job.user_filter = None;
                db.log.event(&FlushDiscarded {
                    event: Kind::new(),
                    job: job_id,
                    cf,
                    memtable_id: mem.id(),
                    reason: "filtered a value a new snapshot reads",
                    cf_name: crate::shared::events::cf_name(st, cf),
                });
                delete_obsolete_files(db, st);
            }
        }
    };
    let Some(c) = st.cf(cf) else {
        release(st, &allocated); // dropped while the table was written
        return Ok(None);
    };
    let next_log = c.imm.get(1).map_or_else(|| c.mem.id(), |m| m.id());
    let last_seq = st.versions.last_sequence().max(db.last_visible());
    let mut edit = job.edit(&r, next_log, last_seq);
    // With other families, the WALs this flush frees may still be read by
    // recovery for a family idle since its last flush (its log number is
    // not advanced): the edit carries the DB-wide floor, computed as if
    // the flush were installed. A family written from now on writes into
    // the current WAL or a later one.
    if st.cfs.len() > 1 {
        let current_wal = db.wals.current.lock().number;
        let others = st
            .cfs
            .iter()
            .filter(|(&id, _)| id != cf)
            .filter_map(|(_, c)| c.oldest_unflushed_wal())
            .fold(current_wal, u64::min);
        edit.min_log_number_to_keep = Some(others.min(next_log));
    }
    let reserved = place_below_l0(db, st, cf, &mut edit);
    for (level, f) in &edit.new_files {
        let reason = TableFileCreationReason::Flush;
        let props = &r.outputs.props;
        crate::shared::events::table_created(db, st, cf, job_id, reason, f, *level, props);
    }
    let logged = crate::shared::manifest::log_and_apply_if_live(db, st, &mut edit);
    db.stats
        .running
        .lock()
        .retain(|j| !reserved.contains(&j.id));
    release(st, &allocated);
    if !logged? {
        return Ok(None); // dropped while waiting for the MANIFEST
    }
    st.errors.job_succeeded();
    if let Some(c) = st.cfs.get_mut(&cf) {
        c.imm.remove(0);
    }
    db.install_super_version(st, cf);
    // Snapshots taken from now on read the table.
    drop(hold);
    db.stats.add_level(0, &job.stats(&r, started));
    db.stats.flushes.fetch_add(1, Ordering::Relaxed);
    db.stats
        .flush_bytes
        .fetch_add(r.outputs.bytes_written, Ordering::Relaxed);
    db.stats
        .flush_blob_bytes
        .fetch_add(r.outputs.blobs.bytes_written, Ordering::Relaxed);
    let (blob_file_head, blob_file_tail) = crate::shared::events::blob_file_span(st, cf);
    // The edit keeps its files (and their levels) once logged.
    Ok(Some(FlushFinished {
        job: job_id,
        event: Kind::new(),
        output_compression: topts.compression.name(),
        lsm_state: crate::shared::events::lsm_state(st, cf),
        blob_file_head,
        blob_file_tail,
        immutable_memtables: st.cf(cf).map_or(0, |c| c.imm.len() as u64),
        cf_name: crate::shared::events::cf_name(st, cf),
        cf,
        memtable_id: mem.id(),
        num_entries: mem.num_entries() as u64,
        num_deletes: mem.num_deletes() as u64,
        first_seq: mem.first_seq(),
        largest_seq: mem.largest_seq(),
        bytes_written: r.outputs.bytes_written,
        output_files: edit
            .new_files
            .iter()
            .map(|(level, f)| crate::shared::events::file_info(f, *level))
            .collect(),
    }))
}

/// Installs the outputs of a flush cut into several files (insert streams,
/// partitions) that fit the base level there instead of in L0
/// (`picker::flush_output_level`), and reserves each one's range at that
/// level as a running output until the edit is installed (the MANIFEST
/// write releases the DB mutex: a compaction picked meanwhile must not
/// write over it). Returns the reservations' ids, for the caller to remove
/// once the edit is logged or failed. Requires the DB mutex.
///
/// Never while a manual compaction runs: its plans ignore running outputs
/// (it waits for `running` to empty before it starts instead).
fn place_below_l0(db: &DbInner, st: &DbState, cf: u32, edit: &mut VersionEdit) -> Vec<u64> {
    if edit.new_files.len() < 2 || st.manual_compactions > 0 {
        return Vec::new();
    }
    let Some(o) = crate::compaction::runner::family_picker_options(db, st, cf) else {
        return Vec::new();
    };
    let v = st.versions.current(cf);
    let running = crate::compaction::runner::running_outputs(db, cf);
    let mut reserved = Vec::new();
    for (level, f) in &mut edit.new_files {
        let to = picker::flush_output_level(&v, &o, &running, f);
        if to == 0 {
            continue;
        }
        *level = to;
        let id = db.stats.next_job_id.fetch_add(1, Ordering::Relaxed);
        db.stats.running.lock().push(RunningJob {
            id,
            cf,
            input_level: 0,
            output_level: to,
            smallest: f.smallest_user_key().to_vec(),
            largest: f.largest_user_key().to_vec(),
        });
        reserved.push(id);
    }
    reserved
}

/// Writes `job`'s table without the DB mutex and syncs the closed WALs.
/// Returns the result and the output numbers (in `pending_outputs` until
/// the caller releases them; released here on error).
fn write_table(
    db: &Arc<DbInner>,
    st: &mut MutexGuard<'_, DbState>,
    job: &FlushJob,
    topts: &TableOptions,
) -> Result<(FlushResult, Vec<u64>)> {
    let mut allocated: Vec<u64> = Vec::new();
    // RocksDB's rule (`FlushMemTableToOutputFile`): the closed WALs must be
    // durable before this flush's edit only when another family may replay
    // them, or when they are to be recycled (a reused file must hold
    // exactly its records). With one family they hold only this family's
    // older writes, which the table now holds: after a power loss recovery
    // skips them, so syncing them would only write every WAL byte to the
    // device. A family created later writes into the current WAL, not
    // these. Sync writes still sync every closed WAL first.
    let sync_closed = st.cfs.len() > 1 || db.opts.recycle_log_file_num > 0;
    let result = MutexGuard::unlocked(st, || {
        let mut alloc = || db.new_output_number(&mut allocated);
        let mut spec = OutputSpec {
            file_opts: db.opts.flush_file_options(),
            range_dels: Vec::new(),
            memory: Some(db.memory.meter(Part::Buffers)),
            builder_memory_limit: usize::MAX,
            rate_limit: db.rate_limit(crate::io::IoPriority::High),
            fs: &db.fs,
            dir: &db.dir,
            table_opts: topts.clone(),
            target_file_size: u64::MAX,
            new_file_number: &mut alloc,
            shutting_down: &db.shutting_down,
            bytes_per_sync: db.mutable.bytes_per_sync(),
            blob: job.blob_output.clone(),
            // Set by the job.
            partitioner: None,
            streams: None,
        };
        let r = job.run(&mut spec)?;
        // The memtable's WALs are closed (a switch made it immutable) but
        // maybe not synced: with other families they must be durable
        // before the edit that lets recovery skip them, or after a power
        // loss this family would keep writes that a family replaying them
        // loses (see `switch_memtable`).
        if sync_closed {
            db.wals.sync_closed_wals(db.fs.as_ref(), &db.dir)?;
        }
        Ok(r)
    });
    match result {
        Ok(r) => Ok((r, allocated)),
        Err(e) => {
            release(st, &allocated);
            Err(e)
        }
    }
}

/// Releases a run's output numbers from `pending_outputs` (only this job's:
/// other jobs' stay protected). Tables not installed by then become
/// obsolete.
fn release(st: &mut DbState, allocated: &[u64]) {
    for n in allocated {
        st.pending_outputs.remove(n);
    }
}

/// Flushes family `cf`'s oldest immutable memtable (`cf` is marked as
/// flushing meanwhile). Requires the DB mutex.
pub(crate) fn flush_one(
    db: &Arc<DbInner>,
    st: &mut MutexGuard<'_, DbState>,
    cf: u32,
) -> Result<()> {
    let Some(c) = st.cfs.get_mut(&cf) else {
        return Ok(());
    };
    let Some(mem) = c.imm.first().cloned() else {
        return Ok(());
    };
    c.flush_running = true;
    st.flushes_running += 1;
    let result = flush(db, st, cf, mem);
    st.flushes_running -= 1;
    if let Some(c) = st.cfs.get_mut(&cf) {
        c.flush_running = false;
        if !c.imm.is_empty() {
            st.flush_queue.push_back(cf);
        }
    }
    db.bg_cv.notify_all();
    result
}
