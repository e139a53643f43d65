//! Flush: the oldest immutable memtable of a column family becomes an L0 SST
//! of that family.
//!
//! The table is written without the DB mutex; the version edit (new file,
//! the family's new log number, last sequence) is logged to the MANIFEST
//! (the mutex is released for that IO too, see `manifest_writer`), and only
//! then is the memtable dropped from the family's super version and its WAL
//! made obsolete (once no other family needs it). The oldest immutable
//! memtable stays `imm[0]` throughout: one flush per family runs at a time
//! (`CfState::flush_running`). If the family is dropped meanwhile, the
//! table is discarded.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::MutexGuard;

use crate::compaction::filter::EntryFilter;
use crate::compaction::job::{write_outputs, OutputSpec};
use crate::error::Result;
use crate::iter::InternalIterator;
use crate::memtable::MemTable;
use crate::stats::{thread_cpu_micros, LevelCompactionStats};
use crate::version::VersionEdit;

use super::obsolete::delete_obsolete_files;
use super::{DbInner, DbState};

pub(crate) fn flush(
    db: &Arc<DbInner>,
    st: &mut MutexGuard<'_, DbState>,
    cf: u32,
    mem: Arc<MemTable>,
) -> Result<()> {
    let snapshots = db.snapshots.all();
    let Some(opts) = st.cf(cf).map(|c| c.cf.opts.clone()) else {
        return Ok(());
    };
    let topts = super::compaction_job::table_options(db, &opts, 0, false);
    let compression = topts.compression;
    let started = Instant::now();
    let cpu0 = thread_cpu_micros();
    let mut allocated: Vec<u64> = Vec::new();
    let outputs = MutexGuard::unlocked(st, || {
        let mut iter = mem.iter();
        iter.seek_to_first();
        let mut filter = EntryFilter::new(snapshots, None);
        let mut alloc = || db.new_output_number(&mut allocated);
        let mut spec = OutputSpec {
            fs: &db.fs,
            dir: &db.dir,
            table_opts: topts,
            target_file_size: u64::MAX,
            new_file_number: &mut alloc,
            shutting_down: &db.shutting_down,
        };
        let r = write_outputs(&mut iter, &mut filter, &mut spec);
        crate::sync_point!("FlushJob::AfterOutputs");
        r.map(|o| (o, filter.keys_in, filter.keys_dropped))
    });
    let (outputs, keys_in, keys_dropped) = match outputs {
        Ok(o) => o,
        Err(e) => {
            // Only this job's outputs: other jobs' stay protected.
            for n in &allocated {
                st.pending_outputs.remove(n);
            }
            return Err(e);
        }
    };
    let Some(c) = st.cf(cf) else {
        // Dropped while the table was written.
        for n in &allocated {
            st.pending_outputs.remove(n);
        }
        return Ok(());
    };
    let next_log = c.imm.get(1).map_or_else(|| c.mem.id(), |m| m.id());
    let last_seq = st.versions.last_sequence().max(db.last_visible());
    let mut edit = VersionEdit {
        column_family: cf,
        log_number: Some(next_log),
        prev_log_number: Some(0),
        last_sequence: Some(last_seq),
        ..VersionEdit::default()
    };
    let mut bytes = 0;
    for mut f in outputs.files {
        bytes += f.file_size;
        f.compression = compression.code();
        let fields = vec![
            format!("\"file_number\": {}", f.number),
            format!("\"file_size\": {}", f.file_size),
            format!("\"num_entries\": {}", f.num_entries),
            "\"level\": 0".to_string(),
        ];
        db.log.event("table_file_creation", &fields);
        edit.add_file(0, f);
    }
    let r = super::manifest_writer::log_and_apply_if_live(db, st, &mut edit);
    for n in &allocated {
        st.pending_outputs.remove(n);
    }
    if !r? {
        return Ok(()); // dropped while waiting for the MANIFEST
    }
    st.errors.job_succeeded();
    if let Some(c) = st.cfs.get_mut(&cf) {
        c.imm.remove(0);
    }
    st.budget_flush_pending = false;
    db.install_super_version(st, cf);
    let job = LevelCompactionStats {
        bytes_written: bytes,
        micros: started.elapsed().as_micros() as u64,
        cpu_micros: thread_cpu_micros().saturating_sub(cpu0),
        count: 1,
        keys_in,
        keys_dropped,
        files_out: edit.new_file_numbers().len() as u64,
        ..Default::default()
    };
    db.stats.add_level(0, &job);
    db.stats.flush_bytes.fetch_add(bytes, Ordering::Relaxed);
    db.log.event(
        "flush_finished",
        &[
            format!("\"cf\": {cf}"),
            format!("\"memtable_id\": {}", mem.id()),
            format!("\"num_entries\": {}", mem.num_entries()),
            format!("\"num_deletes\": {}", mem.num_deletes()),
            format!("\"first_seq\": {}", json_seq(mem.first_seq())),
            format!("\"largest_seq\": {}", json_seq(mem.largest_seq())),
            format!("\"bytes_written\": {bytes}"),
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
