//! `FlushJob`: one memtable written as L0 tables of its column family, as a
//! computation: the entries every snapshot may still need (tombstones
//! included: data below may exist) go to one output file, or several when
//! the family's partitioner or the end of an insert stream cuts it
//! (`build::cuts`; the files are then disjoint); the result is
//! described as a MANIFEST edit (the table and the family's new log number)
//! and level statistics. It knows nothing of the DB's state; the caller
//! allocates file numbers, logs the edit and installs it.
//!
//! Thread-safety: owned by one thread; `run` does the IO and must be called
//! without the DB mutex.

use std::sync::Arc;
use std::time::Instant;

use crate::base::SeqNo;
use crate::build::cuts::{SstPartitioner, StreamDetector};
use crate::build::filter::{EntryFilter, FilterCounts};
use crate::build::user_filter::CompactionFilter;
use crate::build::writer::{write_outputs, OutputSpec, Outputs};
use crate::error::Result;
use crate::iter::InternalIterator;
use crate::memtable::MemTable;
use crate::merge::MergeOperator;
use crate::sst::Compression;
use crate::stats::{thread_cpu_micros, LevelCompactionStats};
use crate::version::VersionEdit;

/// A flush ready to run.
pub(crate) struct FlushJob {
    pub cf: u32,
    pub mem: Arc<MemTable>,
    /// Live snapshots when the job started.
    pub snapshots: Vec<SeqNo>,
    /// Compression of the table (also in the spec's table options).
    pub compression: Compression,
    /// The family's merge operator and compaction filter.
    pub merge_op: Option<Arc<dyn MergeOperator>>,
    pub user_filter: Option<Arc<dyn CompactionFilter>>,
    /// The clock (Unix seconds): values expired by then become tombstones.
    pub now: u64,
    /// Key-value separation of the outputs (`None`: the family has no blob
    /// files and writes none).
    pub blob_output: Option<crate::build::blob_output::BlobOutputSpec>,
    /// Where outputs must end (`sst_partitioner_factory`).
    pub partitioner: Option<SstPartitioner>,
    /// Ends outputs where an insert stream ends (`None`: one output).
    pub streams: Option<StreamDetector>,
}

/// What `FlushJob::run` produced.
pub(crate) struct FlushResult {
    pub outputs: Outputs,
    pub keys_in: u64,
    pub keys_dropped: u64,
    pub cpu_micros: u64,
    pub counts: FilterCounts,
}

impl FlushJob {
    /// Writes the memtable's surviving entries as `spec` says (one file
    /// unless the job's cuts end it).
    pub(crate) fn run(&self, spec: &mut OutputSpec<'_>) -> Result<FlushResult> {
        let cpu0 = thread_cpu_micros();
        let mut iter = self.mem.iter();
        iter.seek_to_first();
        let frags = self.mem.range_fragments();
        spec.partitioner = self.partitioner;
        spec.streams = self.streams.clone();
        if let Some(f) = &frags {
            let mut snaps = self.snapshots.clone();
            snaps.sort_unstable();
            spec.range_dels = f.for_output(&snaps, false);
        }
        let mut filter = EntryFilter::new(self.snapshots.clone(), None)
            .with_merge_operator(self.merge_op.clone())
            .with_user_filter(self.user_filter.clone(), 0)
            .with_range_dels(frags)
            .with_now(self.now)
            .with_blob_source(self.blob_output.as_ref().map(|b| Arc::clone(&b.source)));
        let outputs = write_outputs(&mut iter, &mut filter, spec)?;
        crate::sync_point!("FlushJob::AfterOutputs");
        Ok(FlushResult {
            outputs,
            keys_in: filter.keys_in,
            keys_dropped: filter.keys_dropped,
            cpu_micros: thread_cpu_micros().saturating_sub(cpu0),
            counts: filter.counts,
        })
    }

    /// The edit adding the table to L0 and moving the family's log number
    /// to `next_log` (the WAL of its next memtable).
    pub(crate) fn edit(&self, r: &FlushResult, next_log: u64, last_seq: SeqNo) -> VersionEdit {
        let mut edit = VersionEdit {
            column_family: self.cf,
            blob_file_additions: r.outputs.blobs.additions(),
            log_number: Some(next_log),
            prev_log_number: Some(0),
            last_sequence: Some(last_seq),
            ..VersionEdit::default()
        };
        for f in &r.outputs.files {
            let mut f = f.clone();
            f.compression = self.compression.code();
            // Every entry was written before the flush ran.
            f.newest_key_time = self.now;
            edit.add_file(0, f);
        }
        edit
    }

    /// The statistics booked on L0.
    pub(crate) fn stats(&self, r: &FlushResult, started: Instant) -> LevelCompactionStats {
        LevelCompactionStats {
            bytes_written: r.outputs.bytes_written,
            blob_bytes_written: r.outputs.blobs.bytes_written,
            micros: started.elapsed().as_micros() as u64,
            cpu_micros: r.cpu_micros,
            count: 1,
            keys_in: r.keys_in,
            keys_dropped: r.keys_dropped,
            files_out: r.outputs.files.len() as u64,
            merge_failures: r.counts.merge_failures,
            single_delete_mismatches: r.counts.single_delete_mismatches,
            filtered: r.counts.filtered,
            ..Default::default()
        }
    }
}
