//! Running one compaction plan's job: split into key ranges run in
//! parallel (`run_in_ranges`, subcompactions), each range's job built
//! (`job_for`) and run, rerun when a snapshot taken meanwhile must see
//! what its filter changed (`run_until_admitted`). Called by the runner
//! (`runner.rs`), which installs the results (`execute`, `execute_job`).

use std::sync::Arc;

use parking_lot::MutexGuard;

use crate::build::writer::OutputSpec;
use crate::compaction::job::{CompactionJob, CompactionResult};
use crate::compaction::picker::Plan;
use crate::compaction::subcompaction;
use crate::error::{Error, Result};
use crate::events::records::{CompactionDiscarded, Kind};
use crate::events::TableFileCreationReason;
use crate::io::accounting::{self, Purpose};
use crate::iter::merging::MergingIterator;
use crate::memory::Part;
use crate::options::CfOptions;
use crate::range_del::Fragments;
use crate::sst::{ReadaheadPolicy, TableOptions};
use crate::version::filename::table_file_name;

use crate::base::snapshots::{Admission, InstallHold};
use crate::shared::obsolete::delete_obsolete_files;
use crate::shared::{DbInner, DbState};

/// Runs `job` over its inputs: split into up to `max_subcompactions` key
/// ranges (see `compaction::subcompaction`) run on scoped threads, or as
/// one range. The outputs of all ranges, in key order, make the result;
/// if any range fails, every range's outputs are removed. Output numbers go
/// to `allocated` (the caller releases them from `pending_outputs`).
pub(crate) fn run_in_ranges(
    db: &Arc<DbInner>,
    job: &CompactionJob<'_>,
    inputs: &[Arc<crate::version::FileMeta>],
    topts: &TableOptions,
    target: u64,
    allocated: &parking_lot::Mutex<Vec<u64>>,
) -> Result<CompactionResult> {
    // The inputs' range tombstones, fragmented together.
    let mut sets = Vec::new();
    for f in inputs {
        if let Some(r) = db.table_cache.get(f)?.range_fragments() {
            sets.push(Arc::clone(r));
        }
    }
    let range_dels = match sets.len() {
        0 => None,
        1 => sets.pop(),
        _ => Some(Arc::new(Fragments::merge(sets.iter().map(|s| s.as_ref())))),
    };
    let n = db.mutable.max_subcompactions();
    // An intra-L0 job writes one L0 file: never split. Nor a job with
    // range tombstones (ranges would have to cut them too).
    let splits = if n > 1 && job.plan.output_level > 0 && range_dels.is_none() {
        let mut anchors = Vec::new();
        for f in inputs {
            anchors.extend(db.table_cache.get(f)?.key_anchors(ANCHORS_PER_TABLE)?);
        }
        subcompaction::split_points(anchors, n, target / 2)
    } else {
        Vec::new()
    };
    let ranges = subcompaction::ranges(&splits);
    if ranges.len() == 1 {
        return run_range(db, job, topts, target, None, None, range_dels, allocated);
    }
    let range = |(lo, hi): &subcompaction::SubRange| {
        run_range(
            db,
            job,
            topts,
            target,
            lo.as_deref(),
            hi.clone(),
            None,
            allocated,
        )
    };
    let results: Vec<Result<CompactionResult>> = std::thread::scope(|scope| {
        // Ranges after the first on threads of their own (`None`: no thread
        // could be had, the range runs here after the first).
        let handles: Vec<_> = ranges[1..]
            .iter()
            .enumerate()
            .map(|(i, r)| {
                std::thread::Builder::new()
                    .name(format!("shale-subcompaction-{}", i + 1))
                    .spawn_scoped(scope, move || range(r))
                    .ok()
            })
            .collect();
        let mut results = vec![range(&ranges[0])];
        for (h, r) in handles.into_iter().zip(&ranges[1..]) {
            results.push(match h {
                Some(h) => h.join().unwrap_or_else(|_| {
                    Err(Error::Io {
                        context: format!("a subcompaction of a job in family {}", job.cf),
                        kind: std::io::ErrorKind::Other,
                        message: "the subcompaction thread panicked".into(),
                    })
                }),
                None => range(r),
            });
        }
        results
    });
    let mut combined = CompactionResult::default();
    let mut first_error = None;
    for r in results {
        match r {
            Ok(r) => combined.absorb(r),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_error {
        for f in &combined.outputs.files {
            let _ = db.fs.remove(&db.dir.join(table_file_name(f.number)));
        }
        return Err(e);
    }
    Ok(combined)
}

/// Runs `job` (the DB mutex released) until its outputs may be installed
/// (see `SnapshotList::admit`): outputs that a snapshot taken meanwhile
/// would read differently are discarded and the job runs once more, with
/// the current snapshots and without the user's filter (so at most twice).
/// Returns the outputs, their numbers (still in `pending_outputs`: the
/// caller releases them after its MANIFEST edit) and the hold on new
/// snapshots to drop once the outputs are readable. On error the numbers
/// are released.
pub(crate) fn run_until_admitted(
    db: &Arc<DbInner>,
    st: &mut MutexGuard<'_, DbState>,
    job: &mut CompactionJob<'_>,
    id: u64,
    inputs: &[Arc<crate::version::FileMeta>],
    topts: &TableOptions,
    target: u64,
) -> Result<(CompactionResult, Vec<u64>, Option<InstallHold>)> {
    let release = |st: &mut DbState, allocated: &[u64]| {
        for n in allocated {
            st.pending_outputs.remove(n);
        }
    };
    loop {
        let allocated: parking_lot::Mutex<Vec<u64>> = parking_lot::Mutex::new(Vec::new());
        let result = MutexGuard::unlocked(st, || {
            run_in_ranges(db, job, inputs, topts, target, &allocated)
        });
        let allocated = allocated.into_inner();
        let r = match result {
            Ok(r) => r,
            Err(e) => {
                release(st, &allocated);
                return Err(e);
            }
        };
        match db.snapshots.admit(&job.snapshots, r.counts.oldest_filtered) {
            Admission::Install(hold) => return Ok((r, allocated, hold)),
            Admission::RunAgain => {
                // Its tables were written: announce them, so that their
                // deletion by the sweep below follows a creation.
                for f in &r.outputs.files {
                    crate::shared::events::table_created(
                        db,
                        st,
                        job.cf,
                        id,
                        TableFileCreationReason::Compaction,
                        f,
                        job.plan.output_level,
                        &r.outputs.props,
                    );
                }
                release(st, &allocated);
                job.snapshots = db.snapshots.all();
                job.user_filter = None;
                db.log.event(&CompactionDiscarded {
                    event: Kind::new(),
                    job: id,
                    cf: job.cf,
                    reason: "filtered a value a new snapshot reads",
                    cf_name: crate::shared::events::cf_name(st, job.cf),
                });
                delete_obsolete_files(db, st);
            }
        }
    }
}

/// Sample points read from each input table's index to split a job.
const ANCHORS_PER_TABLE: usize = 128;

/// One range `[lo, hi)` of `job` (`None`: unbounded), with its own input
/// iterators and output writer.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_range(
    db: &Arc<DbInner>,
    job: &CompactionJob<'_>,
    topts: &TableOptions,
    target: u64,
    lo: Option<&[u8]>,
    hi: Option<Vec<u8>>,
    range_dels: Option<Arc<Fragments>>,
    allocated: &parking_lot::Mutex<Vec<u64>>,
) -> Result<CompactionResult> {
    // On a subcompaction's own thread too.
    let _io = accounting::scope(Purpose::Compaction);
    let plan = job.plan;
    let mut levels: Vec<(usize, &[Arc<crate::version::FileMeta>])> =
        vec![(plan.level, &plan.inputs)];
    levels.extend(plan.middle.iter().map(|(l, f)| (*l, f.as_slice())));
    levels.push((plan.output_level, &plan.output_inputs));
    let children = db
        .table_cache
        .compaction_inputs(&levels, compaction_readahead(db))?;
    let mut iter = subcompaction::RangeIter::new(MergingIterator::new(children), lo, hi);
    let mut alloc = || {
        let mut mine = Vec::with_capacity(1);
        let n = db.new_output_number(&mut mine);
        allocated.lock().push(n);
        n
    };
    let mut spec = OutputSpec {
        file_opts: db.opts.flush_file_options(),
        range_dels: Vec::new(),
        memory: Some(db.memory.meter(Part::Buffers)),
        builder_memory_limit: builder_memory_limit(db),
        rate_limit: db.rate_limit(crate::io::IoPriority::Low),
        fs: &db.fs,
        dir: &db.dir,
        table_opts: topts.clone(),
        target_file_size: target,
        new_file_number: &mut alloc,
        shutting_down: &db.shutting_down,
        bytes_per_sync: db.mutable.bytes_per_sync(),
        blob: job.blob_output.clone(),
        // Set by the job.
        partitioner: None,
        streams: None,
    };
    job.run(&mut iter, &mut spec, range_dels)
}

pub(crate) fn dropped_error(cf: u32) -> crate::error::Error {
    crate::error::Error::InvalidArgument(format!("column family {cf} was dropped"))
}

/// The job for `plan` in family `cf`, with the family's options; `None`
/// once the family is dropped.
pub(crate) fn job_for<'p>(
    db: &DbInner,
    st: &DbState,
    cf: u32,
    plan: &'p Plan,
) -> Option<(CompactionJob<'p>, TableOptions, u64)> {
    let opts = &st.cf(cf)?.cf.opts();
    let mut topts = crate::shared::table_options::table_options(
        db,
        st,
        cf,
        opts,
        plan.output_level,
        plan.bottommost,
    );
    if plan.uncompressed {
        topts.compression = crate::sst::Compression::None;
    }
    let job = CompactionJob {
        cf,
        plan,
        version: st.versions.current(cf),
        snapshots: db.snapshots.all(),
        compression: topts.compression,
        max_grandparent_overlap: max_grandparent_overlap(opts),
        // Universal outputs are cut by the overlap rule alone (RocksDB's).
        align_outputs: opts.level_compaction_dynamic_file_size
            && opts.compaction_style != crate::options::CompactionStyle::Universal,
        merge_op: opts.merge_operator.clone(),
        user_filter: opts.compaction_filter.clone(),
        now: db.opts.clock.now_secs(),
        blob_output: crate::shared::blob_glue::output_spec(
            db,
            cf,
            opts,
            &st.versions.current(cf),
            plan.output_level,
            false,
        ),
        // An intra-L0 merge must leave fewer files than it took: never cut
        // (its loops, FIFO's manual one included, end because of that).
        partitioner: opts
            .sst_partitioner_factory
            .filter(|_| plan.output_level > 0),
        // Runs must fill 1/128 of the level's target file size.
        streams: match plan.output_level {
            0 => None,
            l => opts.stream_detector(opts.target_file_size(l)),
        },
        ingest_behind: db.opts.allow_ingest_behind,
    };
    // An intra-L0 output is one file, as a flush's.
    let target = match plan.output_level {
        0 => u64::MAX,
        l => opts.target_file_size(l),
    };
    Some((job, topts, target))
}

/// Most bytes of the level below its output level one compaction output
/// may overlap: `max_compaction_bytes`, or with incremental universal
/// compaction 1.5 target files (RocksDB's `GetMaxOverlappingBytes`): an
/// output then ends before it would span two whole files of the level
/// below, so the later slices of that level rewrite little outside them.
fn max_grandparent_overlap(opts: &CfOptions) -> u64 {
    if opts.compaction_style == crate::options::CompactionStyle::Universal
        && opts.compaction_options_universal.incremental
    {
        opts.target_file_size_base / 2 * 3
    } else {
        opts.max_compaction_bytes()
    }
}

/// How compaction inputs are read: `compaction_readahead_size` bytes per
/// read from the first block on, or automatic readahead when it is 0; never
/// more than the device serves as one request (`max_read_request`; the
/// kernel would split a larger read), so with the default 2 MiB each read is
/// one request as large as the device takes (RocksDB's bug 12038 shrank
/// compaction reads to 4 KiB). Under a
/// `memory_budget`, also at most 1/128 of it per input (at least 64 KiB): a
/// compaction of 20 inputs then buffers under a sixth of the budget.
fn compaction_readahead(db: &DbInner) -> ReadaheadPolicy {
    let cap = match db.opts.memory_budget {
        0 => usize::MAX,
        b => (b / 128).max(64 << 10),
    }
    .min(db.max_read_request);
    match db.mutable.compaction_readahead_size() {
        0 => ReadaheadPolicy::Auto {
            max: db.opts.max_auto_readahead_size.min(cap),
        },
        n => ReadaheadPolicy::Fixed(n.min(cap)),
    }
}

/// Under a `memory_budget`, a compaction output is cut once its builder
/// holds 1/32 of the budget (at least 1 MiB): with small entries a 64 MiB
/// table's pending filter alone is 16 MiB. Flushes are never cut.
fn builder_memory_limit(db: &DbInner) -> usize {
    match db.opts.memory_budget {
        0 => usize::MAX,
        b => (b / 32).max(1 << 20),
    }
}
