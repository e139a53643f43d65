//! Random DB options per run, derived from the seed and printed, so each run
//! of the crash test exercises another shape of LSM (RocksDB's crash test
//! draws its options the same way).
//!
//! `num_levels` is not drawn here: it is fixed when the DB is created and
//! kept in the expected-state file (a DB cannot reopen with fewer levels).
//!
//! Key-value separation (issue 14): each run draws the blob options of the
//! default family and of every other family (`random_blob`, from
//! generators of their own, so the other draws of a seed are unchanged):
//! off, or every option drawn, `min_blob_size` from 0 (every value) to
//! 1 KiB against values of 12 bytes to 4 KiB (`value.rs`);
//! `--enable_blob_files` forces them on or off. Never with FIFO (refused by
//! the engine: see `use_fifo`). A run may turn them off, on, or change them
//! over blob files an earlier run wrote.
//! Every family gets the stress merge operator (`merge_op.rs`) in every run,
//! with merges or not: operands written by an earlier run need it.

use std::path::Path;
use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use shale::{
    BlobOptions, CfOptions, CompactionStyle, Compression, FifoCompactionOptions, Options,
    PrepopulateBlobCache, RateLimiter, UniversalCompactionOptions, UniversalStopStyle,
};

use super::merge_op::StressMergeOperator;

/// Picks one of `choices`. Requires a non-empty slice.
fn pick<T: Copy>(rng: &mut SmallRng, choices: &[T]) -> T {
    *choices.choose(rng).unwrap_or(&choices[0])
}

/// The number of levels for a new DB.
pub fn random_num_levels(seed: u64) -> u32 {
    SmallRng::seed_from_u64(seed ^ 0x1e5e1).gen_range(3..=7)
}

/// Options for a run with `seed` on a DB with `num_levels` levels; `blob`
/// forces blob files on or off (`--enable_blob_files`), else they are
/// drawn.
pub fn random_options(seed: u64, num_levels: u32, blob: Option<bool>) -> Options {
    let mut rng = SmallRng::seed_from_u64(seed ^ 0x0970_1105);
    let compression = pick(
        &mut rng,
        &[Compression::None, Compression::Lz4, Compression::Zstd],
    );
    let l0_trigger = pick(&mut rng, &[2, 4, 8]);
    let mut o = Options {
        create_if_missing: true,
        cf: CfOptions {
            write_buffer_size: pick(&mut rng, &[16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20]),
            max_write_buffer_number: pick(&mut rng, &[2, 3, 4]),
            block_size: pick(&mut rng, &[256, 1024, 4096, 16 << 10]),
            block_restart_interval: pick(&mut rng, &[1, 4, 16]),
            bloom_bits_per_key: pick(&mut rng, &[0, 5, 10, 16]),
            compression_per_level: vec![compression],
            bottommost_compression: rng.gen_ratio(1, 3).then_some(Compression::Zstd),
            level0_file_num_compaction_trigger: l0_trigger,
            level0_slowdown_writes_trigger: l0_trigger * 5,
            level0_stop_writes_trigger: l0_trigger * 9,
            max_bytes_for_level_base: pick(&mut rng, &[64 << 10, 256 << 10, 1 << 20, 8 << 20]),
            max_bytes_for_level_multiplier: pick(&mut rng, &[2.0, 4.0, 10.0]),
            level_compaction_dynamic_level_bytes: rng.gen_bool(0.5),
            target_file_size_base: pick(&mut rng, &[32 << 10, 256 << 10, 2 << 20]),
            level_compaction_dynamic_file_size: rng.gen_bool(0.7),
            merge_operator: Some(Arc::new(StressMergeOperator)),
            ..Default::default()
        },
        num_levels: num_levels as usize,
        max_background_jobs: pick(&mut rng, &[1, 2, 4]),
        cache_size: pick(&mut rng, &[0, 64 << 10, 8 << 20]),
        // One memory budget over memtables, table readers, buffers and the
        // cache (which then gets what the rest leaves), or none.
        memory_budget: pick(&mut rng, &[0, 0, 1 << 20, 4 << 20, 16 << 20]),
        advise_random_on_open: rng.gen_bool(0.7),
        max_subcompactions: pick(&mut rng, &[1, 2, 4]),
        // Direct IO (O_DIRECT) for user reads and for flushes and
        // compactions; dropped by `keep_direct_io_if_supported` where the
        // DB's file system refuses it.
        use_direct_reads: rng.gen_bool(0.3),
        use_direct_io_for_flush_and_compaction: rng.gen_bool(0.3),
        // Flush and compaction writes paced by a limiter from slow (jobs
        // wait, writes stall behind them) to roomy, auto-tuned or not; or
        // none.
        rate_limiter: random_rate_limiter(&mut rng),
        ..Options::default()
    };
    (o.compaction_style, o.compaction_options_universal) =
        random_style(&mut rng, num_levels as usize);
    o.blob = random_blob(&mut SmallRng::seed_from_u64(seed ^ 0xb10b), blob);
    (o.sst_partitioner_factory, o.detect_insert_streams) = random_cuts(
        &mut SmallRng::seed_from_u64(seed ^ 0xc075),
        o.compaction_style,
    );
    random_block_align(&mut SmallRng::seed_from_u64(seed ^ 0xa119), &mut o);
    o.block_size_deviation =
        [0, 10, 10, 50, 100][SmallRng::seed_from_u64(seed ^ 0xde71).gen_range(0..5)];
    // Now and then no automatic compaction (the next run's draw compacts
    // the backlog).
    o.disable_auto_compactions = SmallRng::seed_from_u64(seed ^ 0xa070).gen_bool(0.1);
    o
}

/// Aligned data blocks (`block_align`, issue 16) in a quarter of the runs,
/// from a generator of its own: compression off on every level, as the
/// option requires (the drawn block sizes are powers of two).
pub fn random_block_align(rng: &mut SmallRng, o: &mut Options) {
    if rng.gen_bool(0.25) {
        o.block_align = true;
        o.compression_per_level = vec![Compression::None];
        o.bottommost_compression = None;
    }
}

/// Where a family's outputs are cut besides their size (issue 15), from a
/// generator of its own: a fixed-prefix partitioner over the 8-byte
/// big-endian keys (none; 1 or 4 bytes: one partition; 6 bytes: 65,536
/// keys each) and
/// insert-stream detection (the style's default, off, or on for leveled).
pub fn random_cuts(
    rng: &mut SmallRng,
    style: CompactionStyle,
) -> (Option<shale::SstPartitioner>, Option<bool>) {
    let partitioner = rng
        .gen_bool(0.3)
        .then(|| shale::SstPartitioner::FixedPrefix(pick(rng, &[1, 4, 6])));
    let detect = match rng.gen_range(0..3) {
        0 => None,
        1 => Some(false),
        _ => (style == CompactionStyle::Level).then_some(true),
    };
    (partitioner, detect)
}

/// A family's blob options (see the module documentation): with `force`
/// unset, off in 1 run in 3; otherwise every option drawn, blob files on
/// (or as forced). Garbage collection is on in most draws, so runs with
/// blob files relocate blobs and delete old files.
pub fn random_blob(rng: &mut SmallRng, force: Option<bool>) -> BlobOptions {
    let drawn_on = rng.gen_ratio(2, 3);
    let b = BlobOptions {
        enable_blob_files: force.unwrap_or(drawn_on),
        // Values are 12-52 bytes, 1 in 16 up to 4 KiB: 0 and 16 move all
        // or most values, 32 and 48 part of the small ones, 64 and more
        // only the large ones.
        min_blob_size: pick(rng, &[0, 16, 32, 48, 64, 256, 1024]),
        blob_file_size: pick(rng, &[16 << 10, 256 << 10, 4 << 20, 256 << 20]),
        blob_compression_type: pick(
            rng,
            &[Compression::None, Compression::Lz4, Compression::Zstd],
        ),
        enable_blob_garbage_collection: rng.gen_ratio(7, 10),
        blob_garbage_collection_age_cutoff: pick(rng, &[0.0, 0.25, 0.5, 1.0]),
        blob_garbage_collection_min_garbage_ratio: pick(rng, &[0.0, 0.0, 0.2, 0.5]),
        blob_garbage_collection_force_threshold: pick(rng, &[0.0, 0.5, 1.0]),
        blob_compaction_readahead_size: pick(rng, &[0, 4096, 1 << 20]),
        blob_file_starting_level: pick(rng, &[0, 0, 1, 2]),
        prepopulate_blob_cache: pick(
            rng,
            &[
                PrepopulateBlobCache::Disable,
                PrepopulateBlobCache::FlushOnly,
            ],
        ),
    };
    if b.enable_blob_files || b.enable_blob_garbage_collection {
        b
    } else {
        // Off: what an earlier run wrote stays in its blob files.
        BlobOptions::default()
    }
}

/// Leveled (most runs) or universal compaction with its options drawn; a
/// run may switch the style of a DB an earlier run wrote. `incremental`
/// only with `num_levels` ≥ 3 (refused with fewer; new DBs draw 3 to 7, a
/// DB of an older build may have 2).
fn random_style(
    rng: &mut SmallRng,
    num_levels: usize,
) -> (CompactionStyle, UniversalCompactionOptions) {
    if rng.gen_bool(0.6) {
        return (
            CompactionStyle::Level,
            UniversalCompactionOptions::default(),
        );
    }
    let min_merge_width = pick(rng, &[2, 3]);
    let u = UniversalCompactionOptions {
        size_ratio: pick(rng, &[0, 1, 10]),
        min_merge_width,
        max_merge_width: pick(rng, &[min_merge_width, 8, u32::MAX]),
        max_size_amplification_percent: pick(rng, &[50, 200]),
        compression_size_percent: pick(rng, &[-1, 50]),
        stop_style: pick(
            rng,
            &[
                UniversalStopStyle::TotalSize,
                UniversalStopStyle::SimilarSize,
            ],
        ),
        allow_trivial_move: rng.gen_bool(0.5),
        incremental: num_levels >= 3 && rng.gen_bool(0.5),
    };
    (CompactionStyle::Universal, u)
}

/// Clears the drawn direct IO options when the file system of `db` (or
/// of its nearest existing ancestor, for a DB not created yet) refuses
/// `O_DIRECT`, saying so.
pub fn keep_direct_io_if_supported(opts: &mut Options, db: &Path) {
    if !opts.use_direct_reads && !opts.use_direct_io_for_flush_and_compaction {
        return;
    }
    let Some(dir) = db.ancestors().find(|d| d.is_dir()) else {
        return;
    };
    if let Err(e) = shale::fs::PosixFileSystem::probe_direct_io(dir) {
        println!(
            "direct IO options dropped: {} refuses O_DIRECT: {e}",
            dir.display()
        );
        opts.use_direct_reads = false;
        opts.use_direct_io_for_flush_and_compaction = false;
    }
}

/// None (half the runs), or a rate limiter of 2 MiB/s to 256 MiB/s,
/// auto-tuned or not.
fn random_rate_limiter(rng: &mut SmallRng) -> Option<Arc<RateLimiter>> {
    let rate = pick(rng, &[0, 0, 0, 2 << 20, 16 << 20, 256 << 20]);
    let auto_tuned = rng.gen_bool(0.5);
    (rate > 0).then(|| {
        Arc::new(
            RateLimiter::generic(rate, 100_000, 10, auto_tuned)
                .expect("a positive rate, period and fairness"),
        )
    })
}

/// The name of family number `i`: `default`, then `cf1`, `cf2`, ...
pub fn cf_name(i: u32) -> String {
    if i == 0 {
        "default".to_string()
    } else {
        format!("cf{i}")
    }
}

/// Options of family number `i >= 1` for a run with `seed`: the default
/// family's shape (`opts`) with its own write buffer size, L0 trigger and
/// blob options (`blob` forces blob files on or off), so families switch
/// memtables, flush and compact at different times.
pub fn random_cf_options(seed: u64, opts: &Options, i: u32, blob: Option<bool>) -> CfOptions {
    let mut rng = SmallRng::seed_from_u64(seed ^ 0x00cf_0000 ^ u64::from(i));
    let l0_trigger = pick(&mut rng, &[2, 4, 8]);
    let write_buffer_size = pick(&mut rng, &[16 << 10, 64 << 10, 256 << 10, 1 << 20]);
    let mut o = CfOptions {
        // A FIFO family keeps every table: memtables of at least the
        // default family's (see `use_fifo`).
        write_buffer_size: if opts.compaction_style == CompactionStyle::Fifo {
            write_buffer_size.max(opts.write_buffer_size)
        } else {
            write_buffer_size
        },
        level0_file_num_compaction_trigger: l0_trigger,
        level0_slowdown_writes_trigger: l0_trigger * 5,
        level0_stop_writes_trigger: l0_trigger * 9,
        ..opts.cf.clone()
    };
    // A FIFO DB keeps FIFO in every family (fixed at creation); the others
    // draw leveled or universal per family and run.
    if opts.compaction_style != CompactionStyle::Fifo {
        (o.compaction_style, o.compaction_options_universal) =
            random_style(&mut rng, opts.num_levels);
        let mut blob_rng = SmallRng::seed_from_u64(seed ^ 0xb10b_00cf ^ u64::from(i));
        o.blob = random_blob(&mut blob_rng, blob);
    }
    let mut cuts_rng = SmallRng::seed_from_u64(seed ^ 0xc075_00cf ^ u64::from(i));
    (o.sst_partitioner_factory, o.detect_insert_streams) =
        random_cuts(&mut cuts_rng, o.compaction_style);
    o
}

/// FIFO compaction for every family (`--compaction_style=2`, fixed when
/// the expected state is created): a cap no run reaches (1 TiB), so
/// nothing is dropped and verification stays exact while flushes, intra-L0
/// merges (on) and the FIFO picker run; memtables of at least 1 MiB, as
/// FIFO keeps every table in L0 and thousands of tiny ones would make
/// every read slow. No blob files (FIFO refuses them; a FIFO DB never had
/// any, as the style is fixed at creation).
pub fn use_fifo(o: &mut Options) {
    o.blob = BlobOptions::default();
    // Detection is for leveled families only.
    o.detect_insert_streams = o.detect_insert_streams.filter(|d| !d);
    o.compaction_style = CompactionStyle::Fifo;
    o.compaction_options_fifo = FifoCompactionOptions {
        max_table_files_size: 1 << 40,
        allow_compaction: true,
        ttl_secs: 0,
    };
    o.write_buffer_size = o.write_buffer_size.max(1 << 20);
}

/// One line describing the drawn options.
pub fn describe(o: &Options) -> String {
    format!(
        "write_buffer_size={} max_write_buffer_number={} block_size={} restart_interval={} \
         bloom_bits={} compression={} bottommost={} num_levels={} l0_trigger={} \
         level_base={} multiplier={} dynamic={} target_file_size={} bg_jobs={} cache={} \
         dynamic_file_size={} subcompactions={} memory_budget={} advise_random={} \
         direct_reads={} direct_flush_compaction={} rate_limiter={} compaction_style={}{} \
         blob={} sst_partitioner={} detect_insert_streams={:?} block_align={} \
         block_size_deviation={} disable_auto_compactions={}",
        o.write_buffer_size,
        o.max_write_buffer_number,
        o.block_size,
        o.block_restart_interval,
        o.bloom_bits_per_key,
        o.compression_per_level.first().map_or("?", |c| c.name()),
        o.bottommost_compression.map_or("same", |c| c.name()),
        o.num_levels,
        o.level0_file_num_compaction_trigger,
        o.max_bytes_for_level_base,
        o.max_bytes_for_level_multiplier,
        o.level_compaction_dynamic_level_bytes,
        o.target_file_size_base,
        o.max_background_jobs,
        o.cache_size,
        o.level_compaction_dynamic_file_size,
        o.max_subcompactions,
        o.memory_budget,
        o.advise_random_on_open,
        o.use_direct_reads,
        o.use_direct_io_for_flush_and_compaction,
        o.rate_limiter
            .as_ref()
            .map_or("none".to_string(), |l| format!(
                "{}{}",
                l.get_max_bytes_per_second(),
                if l.is_auto_tuned() { "/auto" } else { "" }
            )),
        o.compaction_style.name(),
        if o.compaction_style == CompactionStyle::Universal {
            format!(" {:?}", o.compaction_options_universal)
        } else {
            String::new()
        },
        describe_blob(&o.blob),
        o.sst_partitioner_factory
            .map_or("none".to_string(), |p| p.name()),
        o.detect_insert_streams,
        o.block_align,
        o.block_size_deviation,
        o.disable_auto_compactions
    )
}

/// The blob options in one word: `off`, or their values joined by `/`.
pub fn describe_blob(b: &BlobOptions) -> String {
    if *b == BlobOptions::default() {
        return "off".to_string();
    }
    format!(
        "files:{}/min:{}/file_size:{}/{}/gc:{}/cutoff:{}/min_garbage:{}/force:{}/readahead:{}/start_level:{}/{}",
        u8::from(b.enable_blob_files),
        b.min_blob_size,
        b.blob_file_size,
        b.blob_compression_type.name(),
        u8::from(b.enable_blob_garbage_collection),
        b.blob_garbage_collection_age_cutoff,
        b.blob_garbage_collection_min_garbage_ratio,
        b.blob_garbage_collection_force_threshold,
        b.blob_compaction_readahead_size,
        b.blob_file_starting_level,
        b.prepopulate_blob_cache.name()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drawn_options_are_valid_and_reproducible() {
        let (mut blob_on, mut blob_off) = (0, 0);
        for seed in 0..200 {
            let o = random_options(seed, random_num_levels(seed), None);
            o.validate().unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            for i in 1..4 {
                let c = random_cf_options(seed, &o, i, None);
                c.validate()
                    .unwrap_or_else(|e| panic!("seed {seed} family {i}: {e}"));
                if c.blob.enable_blob_files {
                    blob_on += 1;
                } else {
                    blob_off += 1;
                }
            }
            assert_eq!(
                describe(&o),
                describe(&random_options(seed, random_num_levels(seed), None))
            );
            // Forced on: every family; FIFO: none.
            let mut forced = random_options(seed, random_num_levels(seed), Some(true));
            assert!(forced.blob.enable_blob_files);
            assert!(
                random_cf_options(seed, &forced, 1, Some(true))
                    .blob
                    .enable_blob_files
            );
            assert!(!random_options(seed, 3, Some(false)).blob.enable_blob_files);
            use_fifo(&mut forced);
            forced
                .validate()
                .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            let c = random_cf_options(seed, &forced, 2, Some(true));
            c.validate()
                .unwrap_or_else(|e| panic!("seed {seed} FIFO family: {e}"));
            assert!(!c.blob.enable_blob_files);
        }
        assert!(
            blob_on > 100 && blob_off > 100,
            "{blob_on} on, {blob_off} off"
        );
    }
}
