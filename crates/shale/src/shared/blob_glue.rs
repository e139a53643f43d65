//! Connects key-value separation to the DB: the blob side of each flush,
//! compaction and recovery flush at open (`BlobOutputSpec` from the
//! family's options and version: extraction, the garbage-collection
//! cutoff), the forced collection's trigger, and the `shale.blob-*`
//! properties.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::blob::source::BlobSource;
use crate::build::blob_output::{BlobOutputSpec, Relocation};
use crate::options::{BlobOptions, CfOptions, PrepopulateBlobCache};
use crate::version::Version;

use crate::shared::DbInner;

/// The blob side of a job of family `cf` writing `output_level` on
/// version `v` (`flush`: a memtable flush). `None` when the family has no
/// blob file and writes none.
pub(crate) fn output_spec(
    db: &DbInner,
    cf: u32,
    opts: &CfOptions,
    v: &Version,
    output_level: usize,
    flush: bool,
) -> Option<BlobOutputSpec> {
    let b = &opts.blob;
    let extract = b.extracts_at(output_level);
    if !extract && v.blob_files().is_empty() {
        return None;
    }
    let relocate = if flush {
        Relocation::default()
    } else {
        relocation(v, b)
    };
    let prepopulate = flush && b.prepopulate_blob_cache == PrepopulateBlobCache::FlushOnly;
    Some(spec(&db.blobs, cf, b, extract, relocate, prepopulate))
}

/// The blob side of a recovery flush at open (RocksDB's
/// `WriteLevel0TableForRecovery`): with `enable_blob_files` and
/// `blob_file_starting_level` 0, values of `min_blob_size` bytes or more
/// go to blob files as a flush's do; nothing is relocated (a memtable
/// holds no reference) and nothing prepopulates the cache (RocksDB
/// prepopulates for flushes only). `None`: values stay in the tables.
pub(crate) fn recovery_spec(
    blobs: &Arc<BlobSource>,
    cf: u32,
    opts: &CfOptions,
) -> Option<BlobOutputSpec> {
    let b = &opts.blob;
    b.extracts_at(0)
        .then(|| spec(blobs, cf, b, true, Relocation::default(), false))
}

fn spec(
    blobs: &Arc<BlobSource>,
    cf: u32,
    b: &BlobOptions,
    extract: bool,
    relocate: Relocation,
    prepopulate: bool,
) -> BlobOutputSpec {
    BlobOutputSpec {
        cf,
        min_blob_size: extract.then_some(b.min_blob_size),
        blob_file_size: b.blob_file_size,
        compression: b.blob_compression_type,
        relocate,
        readahead: b.blob_compaction_readahead_size,
        prepopulate,
        source: Arc::clone(blobs),
    }
}

/// Garbage collection's cutoff: references into blob files numbered
/// below it are relocated (the oldest `age_cutoff` share of the family's
/// blob files, RocksDB's rule); 0 with collection off.
pub(crate) fn relocate_below(v: &Version, b: &BlobOptions) -> u64 {
    if !b.enable_blob_garbage_collection {
        return 0;
    }
    let files = v.blob_files();
    let n = (files.len() as f64 * b.blob_garbage_collection_age_cutoff) as usize;
    match (n, files.keys().nth(n)) {
        (0, _) => 0,
        (_, Some(&first_kept)) => first_kept,
        (_, None) => files.keys().next_back().map_or(0, |&last| last + 1),
    }
}

/// What garbage collection relocates in a compaction on version `v`:
/// references below the age cutoff ([`relocate_below`]), except into
/// files whose garbage share is under
/// `blob_garbage_collection_min_garbage_ratio`, unless they belong to
/// the oldest batch a forced collection empties ([`forced_batch`]: that
/// compaction exists to relocate them, and skipping them would pick it
/// again and again).
pub(crate) fn relocation(v: &Version, b: &BlobOptions) -> Relocation {
    let below = relocate_below(v, b);
    let ratio = b.blob_garbage_collection_min_garbage_ratio;
    if below == 0 || ratio <= 0.0 {
        return Relocation::below(below);
    }
    let forced_end = forced_batch(v, b).map_or(0, |(_, end)| end);
    let keep = v
        .blob_files()
        .range(forced_end..below)
        .filter(|(_, f)| (f.garbage_bytes as f64) < ratio * f.bytes as f64)
        .map(|(&n, _)| n)
        .collect();
    Relocation { below, keep }
}

/// One past the newest blob file whose references a compaction on `v`
/// relocates (0: none). A table whose oldest blob file is at or above it
/// holds no reference garbage collection would move (those below the age
/// cutoff point into files `blob_garbage_collection_min_garbage_ratio`
/// keeps), so it may move by a MANIFEST edit (`compaction::picker`). With
/// the ratio 0 this is the age cutoff's file, or the file just past the
/// newest one below it.
pub(crate) fn relocated_end(v: &Version, b: &BlobOptions) -> u64 {
    let r = relocation(v, b);
    v.blob_files()
        .range(..r.below)
        .rev()
        .map(|(&n, _)| n)
        .find(|&n| r.relocates(n))
        .map_or(0, |n| n + 1)
}

/// The cutoff of a forced collection: `oldest + 1` of [`forced_batch`],
/// so the tables whose oldest blob file is the oldest one are compacted
/// (see `compaction::picker`); 0: nothing forced.
pub(crate) fn forced_gc_below(v: &Version, b: &BlobOptions) -> u64 {
    forced_batch(v, b).map_or(0, |(oldest, _)| oldest + 1)
}

/// The batch of a forced collection (RocksDB's
/// `ComputeFilesMarkedForForcedBlobGC`), as (its oldest file, the number
/// past its last file): the *oldest batch* is the oldest blob file and
/// the files after it that no table names as its oldest blob file (they
/// are kept alive by the same tables); when the batch lies wholly below
/// the collection cutoff and its garbage share reaches
/// `blob_garbage_collection_force_threshold` (and it has garbage), the
/// tables referencing the oldest file are compacted for that alone:
/// their references below the cutoff move to new files and the batch
/// goes. `None`: nothing forced.
///
/// The share is the batch's alone, not that of every file below the
/// cutoff: a relocation leaves garbage in the newer files the compacted
/// tables shared with others, so a share over all of them stayed above a
/// low threshold for ever and each step relocated the (garbage-free)
/// oldest file again, a compaction loop that never ended (regression test
/// `tests/model.rs::model_seed_387621_forced_blob_collection_ends`).
fn forced_batch(v: &Version, b: &BlobOptions) -> Option<(u64, u64)> {
    let cutoff = relocate_below(v, b);
    let &oldest = v.blob_files().keys().next()?;
    if cutoff == 0 {
        return None;
    }
    let linked: std::collections::HashSet<u64> = (0..v.num_levels())
        .flat_map(|l| v.files(l).iter().map(|f| f.oldest_blob_file))
        .filter(|&n| n != 0)
        .collect();
    let (mut garbage, mut total, mut end) = (0u64, 0u64, oldest + 1);
    for (&n, f) in v.blob_files() {
        if n != oldest && linked.contains(&n) {
            break;
        }
        if n >= cutoff {
            // The batch reaches past the cutoff: not collected yet.
            return None;
        }
        garbage += f.garbage_bytes;
        total += f.bytes;
        end = n + 1;
    }
    let share = garbage as f64 / total.max(1) as f64;
    (garbage > 0 && share >= b.blob_garbage_collection_force_threshold).then_some((oldest, end))
}

/// Blob sums over a version: (files, file bytes, live blob bytes, garbage
/// bytes).
pub(crate) fn blob_sums(v: &Version) -> (u64, u64, u64, u64) {
    v.blob_files()
        .values()
        .fold((0, 0, 0, 0), |(n, size, live, garbage), f| {
            (
                n + 1,
                size + f.file_size,
                live + f.live_bytes(),
                garbage + f.garbage_bytes,
            )
        })
}

/// `shale.num-blob-files`, `shale.total-blob-file-size`,
/// `shale.live-blob-file-size`, `shale.live-blob-file-garbage-size`,
/// `shale.blob-space-amp` (file bytes over live blob bytes) of version
/// `v`, and the DB-wide `shale.blob-cache-hits/misses`,
/// `shale.blob-reads`, `shale.blob-bytes-read`, `shale.num-open-blob-files`;
/// `None` for other names.
pub(crate) fn property(db: &DbInner, v: &Version, name: &str) -> Option<String> {
    let (files, size, live, garbage) = blob_sums(v);
    let s = &db.blobs.stats;
    Some(match name {
        "shale.num-blob-files" => files.to_string(),
        "shale.total-blob-file-size" => size.to_string(),
        "shale.live-blob-file-size" => live.to_string(),
        "shale.live-blob-file-garbage-size" => garbage.to_string(),
        "shale.blob-space-amp" => match live {
            0 => "0.000".to_string(),
            live => format!("{:.3}", size as f64 / live as f64),
        },
        "shale.blob-cache-hits" => s.cache_hits.load(Ordering::Relaxed).to_string(),
        "shale.blob-cache-misses" => s.cache_misses.load(Ordering::Relaxed).to_string(),
        "shale.blob-reads" => s.reads.load(Ordering::Relaxed).to_string(),
        "shale.blob-bytes-read" => s.bytes_read.load(Ordering::Relaxed).to_string(),
        "shale.num-open-blob-files" => db.blobs.num_open().to_string(),
        _ => return None,
    })
}
