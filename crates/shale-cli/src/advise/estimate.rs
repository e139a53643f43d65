//! From a predicted `Shape` to what an operator weighs: read-amp of a point
//! read (bloom false positives per run) and of a range scan, filter and
//! index memory, the block cache left in the budget, and device time per
//! operation. The same for every compaction style.
//!
//! Assumes filters and index blocks are held in memory, and that the block
//! cache keeps the newest (smallest) runs first: a run whose bytes fit in
//! what is left of the cache costs no device read. Pure functions.

use serde::Serialize;

use super::bloom;
use super::shape::Shape;
use super::workload::{Device, Memory, Workload};

/// Bytes an index entry costs per data block: its separator key (about a
/// key) plus a block handle (offset and size varints) and restart slot.
const INDEX_ENTRY_OVERHEAD: f64 = 12.0;

/// Everything predicted for one configuration.
#[derive(Debug, Clone, Serialize)]
pub struct Estimate {
    /// The shape it was computed from.
    pub shape: Shape,
    /// Total write-amp (device bytes per user byte, WAL included).
    pub write_amp: f64,
    /// Sorted runs a point read may probe.
    pub sorted_runs: f64,
    /// Bloom bits per key used (uniform across runs).
    pub bloom_bits_per_key: f64,
    /// Expected device block reads of a point read of an existing key.
    pub point_read_ios: f64,
    /// Expected device block reads of a point read of a missing key.
    pub point_miss_ios: f64,
    /// The same as `point_miss_ios`, with the same filter memory spread
    /// over the runs as Monkey would (more bits for smaller runs).
    pub point_miss_ios_monkey: f64,
    /// Monkey's bits per key of each run, newest first.
    pub monkey_bits_per_key: Vec<f64>,
    /// Device block reads of a range scan (one seek per sorted run plus the
    /// blocks the scanned entries fill).
    pub scan_ios: f64,
    /// Filter bytes (all runs).
    pub filter_bytes: f64,
    /// Index bytes (all runs).
    pub index_bytes: f64,
    /// Budget left for the block cache after memtables, filters and index
    /// (negative: over budget).
    pub cache_bytes: f64,
    /// Device seconds per put (its share of WAL, flush and compaction IO).
    pub write_secs: f64,
    /// Device seconds per point read.
    pub point_read_secs: f64,
    /// Device seconds per range scan.
    pub scan_secs: f64,
    /// Device busy fraction of the whole workload (1.0 = saturated).
    pub device_utilisation: f64,
}

/// Computes the estimate of `shape`.
pub fn estimate(shape: Shape, w: &Workload, d: &Device, m: &Memory, bloom_bits: f64) -> Estimate {
    let entries: Vec<f64> = shape.runs.iter().map(|r| r.entries).collect();
    let filter_bytes = entries.iter().sum::<f64>() * bloom_bits / 8.0;
    let blocks: f64 = shape.table_bytes() / m.block_size;
    let index_bytes = blocks * (w.key_size + INDEX_ENTRY_OVERHEAD);
    let cache_bytes = m.budget_bytes - shape.memtable_bytes - filter_bytes - index_bytes;
    // Which runs the cache holds, newest first.
    let mut left = cache_bytes.max(0.0);
    let cached: Vec<bool> = shape
        .runs
        .iter()
        .map(|r| {
            let fits = r.bytes <= left;
            if fits {
                left -= r.bytes;
            }
            fits
        })
        .collect();
    let fp = bloom::false_positive_rate(bloom_bits);
    let monkey = bloom::monkey_bits(&entries, entries.iter().sum::<f64>() * bloom_bits.max(0.0));
    let total_entries: f64 = w.live_keys.max(1.0);
    let mut reach = 1.0; // probability the read gets to this run
    let (mut hit, mut miss, mut miss_monkey) = (0.0, 0.0, 0.0);
    let n = shape.runs.len();
    for (i, r) in shape.runs.iter().enumerate() {
        let io = if cached[i] { 0.0 } else { 1.0 };
        // Probability that the key's newest version is here.
        let here = if i + 1 == n {
            1.0
        } else {
            (r.entries / total_entries).min(1.0)
        };
        hit += reach * (here * io + (1.0 - here) * fp * r.count * io);
        miss += fp * r.count * io;
        miss_monkey += bloom::false_positive_rate(monkey[i]) * r.count * io;
        reach *= 1.0 - here;
    }
    let seeks: f64 = shape
        .runs
        .iter()
        .zip(&cached)
        .map(|(r, &c)| if c { 0.0 } else { r.count })
        .sum();
    let scan_bytes = w.scan_length * w.sst_entry_bytes();
    let scan_ios = seeks + scan_bytes / m.block_size;
    let write_amp = shape.write_amp();
    let user = w.user_entry_bytes();
    let wal_flush: f64 = shape
        .write_terms
        .iter()
        .filter(|t| t.name == "wal" || t.name == "flush")
        .map(|t| t.amp)
        .sum();
    // Compaction reads about what it writes.
    let compaction_read = (write_amp - wal_flush).max(0.0);
    let write_secs =
        write_amp * user / d.write_bytes_per_sec + compaction_read * user / d.read_bytes_per_sec;
    let point_read_secs = hit / d.read_iops;
    let scan_secs = seeks / d.read_iops + scan_bytes / d.read_bytes_per_sec;
    let device_utilisation = w.writes_per_sec * write_secs
        + w.point_reads_per_sec * point_read_secs
        + w.scans_per_sec * scan_secs;
    Estimate {
        write_amp,
        sorted_runs: shape.sorted_runs(),
        bloom_bits_per_key: bloom_bits,
        point_read_ios: hit,
        point_miss_ios: miss,
        point_miss_ios_monkey: miss_monkey,
        monkey_bits_per_key: monkey,
        scan_ios,
        filter_bytes,
        index_bytes,
        cache_bytes,
        write_secs,
        point_read_secs,
        scan_secs,
        device_utilisation,
        shape,
    }
}
