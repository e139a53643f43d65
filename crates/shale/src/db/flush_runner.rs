//! Runs a `flush::job::FlushJob` against the DB: the oldest immutable
//! memtable of a column family becomes an L0 table of that family.
//!
//! The table is written and the closed WALs are synced without the DB
//! mutex; the job's edit (new file, the family's new log number, last
//! sequence) is logged to the MANIFEST (the mutex is released for that IO
//! too, see `manifest_writer`), and only then
//! is the memtable dropped from the family's super version and its WAL made
//! obsolete (once no other family needs it). The oldest immutable memtable
//! stays `imm[0]` throughout: one flush per family runs at a time
//! (`CfState::flush_running`). If the family is dropped meanwhile, the
//! table is discarded.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::MutexGuard;

use crate::compaction::output::OutputSpec;
use crate::error::Result;
use crate::flush::job::FlushJob;
use crate::memtable::MemTable;

use super::obsolete::delete_obsolete_files;
use super::{DbInner, DbState};

pub(crate) fn flush(
    db: &Arc<DbInner>,
    st: &mut MutexGuard<'_, DbState>,
    cf: u32,
    mem: Arc<MemTable>,
) -> Result<()> {
    let Some(opts) = st.cf(cf).map(|c| c.cf.opts.clone()) else {
        return Ok(());
    };
    let topts = super::compaction_runner::table_options(db, &opts, 0, false);
    let job = FlushJob {
        cf,
        mem: Arc::clone(&mem),
        snapshots: db.snapshots.all(),
        compression: topts.compression,
        merge_op: opts.merge_operator.clone(),
        user_filter: opts.compaction_filter.clone(),
        now: db.opts.clock.now_secs(),
    };
    let started = Instant::now();
    let mut allocated: Vec<u64> = Vec::new();
    let result = MutexGuard::unlocked(st, || {
        let mut alloc = || db.new_output_number(&mut allocated);
        let mut spec = OutputSpec {
            range_dels: Vec::new(),
            fs: &db.fs,
            dir: &db.dir,
            table_opts: topts,
            target_file_size: u64::MAX,
            new_file_number: &mut alloc,
            shutting_down: &db.shutting_down,
        };
        let r = job.run(&mut spec)?;
        // The memtable's WALs are closed (a switch made it immutable) but
        // maybe not synced: they must be durable before the edit that lets
        // recovery skip them, or after a power loss this family would keep
        // writes that a family replaying them loses (see `switch_memtable`).
        db.writer.sync_closed_wals()?;
        Ok(r)
    });
    let release = |st: &mut MutexGuard<'_, DbState>| {
        // Only this job's outputs: other jobs' stay protected.
        for n in &allocated {
            st.pending_outputs.remove(n);
        }
    };
    let r = match result {
        Ok(r) => r,
        Err(e) => {
            release(st);
            return Err(e);
        }
    };
    let Some(c) = st.cf(cf) else {
        release(st); // dropped while the table was written
        return Ok(());
    };
    let next_log = c.imm.get(1).map_or_else(|| c.mem.id(), |m| m.id());
    let last_seq = st.versions.last_sequence().max(db.last_visible());
    let mut edit = job.edit(&r, next_log, last_seq);
    for f in &r.outputs.files {
        db.log.event(
            "table_file_creation",
            &[
                format!("\"cf\": {cf}"),
                format!("\"file_number\": {}", f.number),
                format!("\"file_size\": {}", f.file_size),
                format!("\"num_entries\": {}", f.num_entries),
                "\"level\": 0".to_string(),
            ],
        );
    }
    let logged = super::manifest_writer::log_and_apply_if_live(db, st, &mut edit);
    release(st);
    if !logged? {
        return Ok(()); // dropped while waiting for the MANIFEST
    }
    st.errors.job_succeeded();
    if let Some(c) = st.cfs.get_mut(&cf) {
        c.imm.remove(0);
    }
    db.install_super_version(st, cf);
    db.stats.add_level(0, &job.stats(&r, started));
    db.stats.flushes.fetch_add(1, Ordering::Relaxed);
    db.stats
        .flush_bytes
        .fetch_add(r.outputs.bytes_written, Ordering::Relaxed);
    db.log.event(
        "flush_finished",
        &[
            format!("\"cf\": {cf}"),
            format!("\"memtable_id\": {}", mem.id()),
            format!("\"num_entries\": {}", mem.num_entries()),
            format!("\"num_deletes\": {}", mem.num_deletes()),
            format!("\"first_seq\": {}", json_seq(mem.first_seq())),
            format!("\"largest_seq\": {}", json_seq(mem.largest_seq())),
            format!("\"bytes_written\": {}", r.outputs.bytes_written),
            format!(
                "\"lsm_state\": {:?}",
                st.versions.current(cf).files_per_level()
            ),
        ],
    );
    delete_obsolete_files(db, st);
    Ok(())
}

/// A sequence number for a LOG event field (`null` for an empty memtable).
fn json_seq(s: Option<crate::base::SeqNo>) -> String {
    s.map_or_else(|| "null".to_string(), |s| s.to_string())
}
