//! `CompactionJob`: one planned compaction of one column family, as a
//! computation: merge the input stream through the entry filter into output
//! tables, then describe the result as a MANIFEST edit, level statistics and
//! LOG event fields. It knows nothing of the DB's state: the caller (the
//! DB's compaction runner) hands it the plan, the inputs, the version the
//! plan was made on, the snapshots and a file-number allocator, and
//! installs what it returns.
//!
//! Invariant: the version the job checks "is this key bottommost?" against
//! cannot change below the output level while the job runs: levels below
//! only receive files from compactions whose key ranges are disjoint from
//! this one's (their inputs would overlap this job's being-compacted files).
//!
//! Thread-safety: owned by one thread; `run` does the IO and must be called
//! without the DB mutex.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use crate::base::SeqNo;
use crate::error::Result;
use crate::iter::InternalIterator;
use crate::sst::Compression;
use crate::stats::{thread_cpu_micros, LevelCompactionStats};
use crate::version::{FileMeta, Version, VersionEdit};

use super::picker::{key_is_bottommost, Plan};
use crate::build::blob_output::{add_refs, garbage, BlobRefMeter, BlobRefs};
use crate::build::filter::{BaseLevelCheck, EntryFilter, FilterCounts};
use crate::build::user_filter::CompactionFilter;
use crate::build::writer::{write_outputs_cut, GrandparentCutter, OutputSpec, Outputs};
use crate::merge::MergeOperator;
use crate::range_del::Fragments;

/// A compaction ready to run.
pub(crate) struct CompactionJob<'a> {
    pub cf: u32,
    pub plan: &'a Plan,
    /// The version the plan was picked on.
    pub version: Arc<Version>,
    /// Live snapshots when the job started.
    pub snapshots: Vec<SeqNo>,
    /// Compression of the output tables (also in `spec.table_opts`).
    pub compression: Compression,
    /// Most grandparent bytes one output may overlap.
    pub max_grandparent_overlap: u64,
    /// Cut outputs at grandparent file boundaries
    /// (`level_compaction_dynamic_file_size`).
    pub align_outputs: bool,
    /// The family's merge operator and compaction filter.
    pub merge_op: Option<Arc<dyn MergeOperator>>,
    pub user_filter: Option<Arc<dyn CompactionFilter>>,
    /// The clock (Unix seconds): values expired by then become tombstones.
    pub now: u64,
    /// Key-value separation of the outputs (`None`: the family has no blob
    /// files and writes none).
    pub blob_output: Option<crate::build::blob_output::BlobOutputSpec>,
    /// Where outputs must end (`sst_partitioner_factory`).
    pub partitioner: Option<crate::build::cuts::SstPartitioner>,
    /// Ends outputs where an ascending insert stream of the inputs ends
    /// (`detect_insert_streams`; `None` for intra-L0 outputs and non-leveled
    /// families).
    pub streams: Option<crate::build::cuts::StreamDetector>,
    /// The last level is reserved for files ingested behind
    /// (`allow_ingest_behind`): no key is bottommost, so tombstones, merge
    /// operands and sequence numbers stay for the data that may arrive
    /// beneath (RocksDB keeps tombstones likewise).
    pub ingest_behind: bool,
}

/// What `CompactionJob::run` produced.
#[derive(Default)]
pub(crate) struct CompactionResult {
    pub outputs: Outputs,
    pub keys_in: u64,
    pub keys_dropped: u64,
    pub cpu_micros: u64,
    /// Key ranges the job ran as (1 without subcompactions).
    pub subcompactions: u64,
    pub counts: FilterCounts,
    /// Blob references the inputs held (per blob file), counted when the
    /// job writes blob outputs.
    pub blob_refs_in: BlobRefs,
}

impl CompactionResult {
    /// Adds the result of the next key range (subcompactions, in key
    /// order) to this one.
    pub(crate) fn absorb(&mut self, r: CompactionResult) {
        self.outputs.files.extend(r.outputs.files);
        self.outputs.props.extend(r.outputs.props);
        self.outputs.bytes_written += r.outputs.bytes_written;
        self.outputs.blobs.absorb(r.outputs.blobs);
        add_refs(&mut self.blob_refs_in, &r.blob_refs_in);
        self.keys_in += r.keys_in;
        self.keys_dropped += r.keys_dropped;
        self.cpu_micros += r.cpu_micros;
        self.subcompactions += r.subcompactions;
        self.counts.add(r.counts);
    }
}

impl CompactionJob<'_> {
    /// Every input file, input level first.
    pub(crate) fn inputs(&self) -> Vec<Arc<FileMeta>> {
        self.plan.all_inputs().cloned().collect()
    }

    /// Merges `input` (the plan's files, merged) into output tables
    /// written as `spec` says. On error the outputs written are removed.
    pub(crate) fn run(
        &self,
        input: &mut dyn InternalIterator,
        spec: &mut OutputSpec<'_>,
        range_dels: Option<Arc<Fragments>>,
    ) -> Result<CompactionResult> {
        let cpu0 = thread_cpu_micros();
        // With blob files, the references read are counted: what the
        // outputs do not hold again is garbage.
        let mut meter = BlobRefMeter::new(input, spec.blob.is_some());
        let input: &mut dyn InternalIterator = &mut meter;
        input.seek_to_first();
        let output_level = self.plan.output_level;
        // An intra-L0 output keeps every tombstone: L0 files outside the
        // job (and every level below) may hold older versions of its keys.
        let check: Option<BaseLevelCheck<'_>> = if output_level == 0 || self.ingest_behind {
            None
        } else if self.plan.bottommost {
            Some(Box::new(|_| true))
        } else {
            let v = &self.version;
            Some(Box::new(move |k: &[u8]| {
                key_is_bottommost(v, output_level, k)
            }))
        };
        if let Some(f) = &range_dels {
            // Tombstones every snapshot sees go where nothing lies below:
            // the entries they cover are all in this job's inputs.
            let mut snaps = self.snapshots.clone();
            snaps.sort_unstable();
            let drop_oldest = self.plan.bottommost && output_level > 0 && !self.ingest_behind;
            spec.range_dels = f.for_output(&snaps, drop_oldest);
        }
        let mut filter = EntryFilter::new(self.snapshots.clone(), check)
            .with_merge_operator(self.merge_op.clone())
            .with_user_filter(self.user_filter.clone(), output_level)
            .with_range_dels(range_dels)
            .with_now(self.now)
            .with_blob_source(self.blob_output.as_ref().map(|b| Arc::clone(&b.source)));
        spec.partitioner = self.partitioner;
        spec.streams = self.streams.clone();
        let mut cutter = GrandparentCutter::new(
            &self.plan.grandparents,
            self.max_grandparent_overlap,
            spec.target_file_size,
            self.align_outputs,
        );
        let outputs = write_outputs_cut(input, &mut filter, spec, Some(&mut cutter))?;
        crate::sync_point!("CompactionJob::AfterOutputs");
        Ok(CompactionResult {
            outputs,
            keys_in: filter.keys_in,
            keys_dropped: filter.keys_dropped,
            cpu_micros: thread_cpu_micros().saturating_sub(cpu0),
            subcompactions: 1,
            counts: filter.counts,
            blob_refs_in: meter.refs,
        })
    }

    /// The edit replacing the inputs (found on their levels in `current`)
    /// by the outputs, with the blob files written and the garbage left.
    pub(crate) fn edit(&self, current: &Version, r: &CompactionResult) -> VersionEdit {
        let outputs = &r.outputs.files;
        let mut edit = VersionEdit {
            column_family: self.cf,
            blob_file_additions: r.outputs.blobs.additions(),
            blob_file_garbage: garbage(&r.blob_refs_in, &r.outputs.blobs.refs_out),
            ..VersionEdit::default()
        };
        // The outputs hold the inputs' entries: as young as the youngest
        // input, not the time of the rewrite (unknown when one is unknown).
        let inputs = self.inputs();
        let newest_key_time = if inputs.iter().any(|f| f.newest_key_time == 0) {
            0
        } else {
            inputs.iter().map(|f| f.newest_key_time).max().unwrap_or(0)
        };
        for f in inputs {
            let level = level_of(current, f.number).unwrap_or(self.plan.level);
            edit.delete_file(level, f.number);
        }
        for f in outputs {
            let mut f = f.clone();
            f.compression = self.compression.code();
            f.newest_key_time = newest_key_time;
            edit.add_file(self.plan.output_level, f);
        }
        edit
    }

    /// The statistics booked on the output level.
    pub(crate) fn stats(&self, r: &CompactionResult, started: Instant) -> LevelCompactionStats {
        let plan = self.plan;
        let middle = plan.middle.iter().flat_map(|(_, f)| f.iter());
        let read_non_output: u64 = plan.inputs.iter().chain(middle).map(|f| f.file_size).sum();
        let read_output: u64 = plan.output_inputs.iter().map(|f| f.file_size).sum();
        let same_level = plan.level == plan.output_level;
        let outputs: HashSet<u64> = r.outputs.files.iter().map(|f| f.number).collect();
        LevelCompactionStats {
            bytes_read_non_output: if same_level { 0 } else { read_non_output },
            bytes_read_output: read_output + if same_level { read_non_output } else { 0 },
            bytes_written: r.outputs.bytes_written,
            blob_bytes_read: r.outputs.blobs.bytes_read,
            blob_bytes_written: r.outputs.blobs.bytes_written,
            micros: started.elapsed().as_micros() as u64,
            cpu_micros: r.cpu_micros,
            count: 1,
            keys_in: r.keys_in,
            keys_dropped: r.keys_dropped,
            files_in_non_output: (plan.inputs.len()
                + plan.middle.iter().map(|(_, f)| f.len()).sum::<usize>())
                as u64,
            files_in_output: plan.output_inputs.len() as u64,
            files_out: outputs.len() as u64,
            bytes_moved: 0,
            merge_failures: r.counts.merge_failures,
            single_delete_mismatches: r.counts.single_delete_mismatches,
            filtered: r.counts.filtered,
        }
    }

    /// The edit of a trivial move: the inputs change level, nothing is
    /// rewritten. Returns the edit and the bytes moved.
    pub(crate) fn trivial_move_edit(&self) -> (VersionEdit, u64) {
        let mut edit = VersionEdit {
            column_family: self.cf,
            ..VersionEdit::default()
        };
        let mut moved = 0;
        let levels = std::iter::once((self.plan.level, &self.plan.inputs))
            .chain(self.plan.middle.iter().map(|(l, f)| (*l, f)));
        for (level, files) in levels {
            for f in files {
                edit.delete_file(level, f.number);
                moved += f.file_size;
                edit.add_file(self.plan.output_level, f.as_ref().clone_meta());
            }
        }
        (edit, moved)
    }
}

fn level_of(v: &Version, number: u64) -> Option<usize> {
    (0..v.num_levels()).find(|&l| v.files(l).iter().any(|f| f.number == number))
}
