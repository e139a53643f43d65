//! Blob-file figures of one benchmark (key-value separation, the
//! `--enable_blob_files` flags): after the benchmark, the blob files'
//! count, bytes, live and garbage bytes and space-amp; during it, where the
//! engine counts them, the blob cache hit ratio and the blob bytes written.
//!
//! Read from engine properties, of the `default` family where they are per
//! family: Shale's `shale.num-blob-files`, `shale.total-blob-file-size`,
//! `shale.live-blob-file-size`, `shale.live-blob-file-garbage-size` and
//! the DB-wide `shale.blob-cache-hits` / `shale.blob-cache-misses`;
//! RocksDB's `rocksdb.num-blob-files`, `rocksdb.total-blob-file-size`,
//! `rocksdb.live-blob-file-size`, `rocksdb.live-blob-file-garbage-size`
//! (no cache counters: RocksDB keeps those in its statistics). Blob bytes
//! written come from the runner (Shale: the flush and compaction IO
//! accounting, which covers `.sst` and `.blob` files, minus the table
//! bytes; see `runner`). Plain functions of the properties.

use serde::{Deserialize, Serialize};

use crate::engine::Engine;
use crate::flags::Flags;

/// Blob figures of one benchmark.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BlobFigures {
    /// Blob files after the benchmark.
    pub files: u64,
    /// Their bytes on disk.
    pub file_bytes: u64,
    /// Bytes of the blobs still referenced.
    pub live_bytes: u64,
    /// Bytes of the blobs no longer referenced (garbage).
    pub garbage_bytes: u64,
    /// File bytes ÷ live bytes (None without live bytes).
    pub space_amp: Option<f64>,
    /// Blob cache hits ÷ (hits + misses) during the benchmark (None when
    /// the engine does not count them or nothing was looked up).
    pub cache_hit_ratio: Option<f64>,
    /// Blob bytes flushes and compactions wrote during the benchmark.
    pub bytes_written: Option<u64>,
    /// `bytes_written` ÷ user bytes written (the blob share of the
    /// engine's write-amp).
    pub write_amp: Option<f64>,
}

/// The property names of (files, file bytes, live bytes, garbage bytes)
/// of `engine`, or None when it has none.
fn file_properties(engine: &str) -> Option<[&'static str; 4]> {
    match engine {
        "shale" => Some([
            "shale.num-blob-files",
            "shale.total-blob-file-size",
            "shale.live-blob-file-size",
            "shale.live-blob-file-garbage-size",
        ]),
        "rocksdb" => Some([
            "rocksdb.num-blob-files",
            "rocksdb.total-blob-file-size",
            "rocksdb.live-blob-file-size",
            "rocksdb.live-blob-file-garbage-size",
        ]),
        _ => None,
    }
}

fn number(db: &dyn Engine, name: &str) -> Option<u64> {
    db.property(name).and_then(|v| v.trim().parse().ok())
}

/// Blob cache (hits, misses) so far, when the engine counts them.
pub fn cache_counters(db: &dyn Engine) -> Option<(u64, u64)> {
    if db.name() != "shale" {
        return None;
    }
    Some((
        number(db, "shale.blob-cache-hits")?,
        number(db, "shale.blob-cache-misses")?,
    ))
}

/// The figures after a benchmark: None unless the engine reports blob
/// files and blob files are on (`--enable_blob_files=1`) or the DB has
/// some. `cache_before` / `cache_after` are [`cache_counters`] around the
/// benchmark; `bytes_written` the blob bytes it wrote, `user_bytes` the
/// bytes it put.
pub fn figures(
    db: &dyn Engine,
    flags: &Flags,
    cache_before: Option<(u64, u64)>,
    cache_after: Option<(u64, u64)>,
    bytes_written: Option<u64>,
    user_bytes: u64,
) -> Option<BlobFigures> {
    let names = file_properties(db.name())?;
    let [files, file_bytes, live_bytes, garbage_bytes] = names.map(|n| number(db, n));
    let (files, file_bytes, live_bytes, garbage_bytes) =
        (files?, file_bytes?, live_bytes?, garbage_bytes?);
    if !flags.enable_blob_files && files == 0 {
        return None;
    }
    let cache_hit_ratio = match (cache_before, cache_after) {
        (Some((h0, m0)), Some((h1, m1))) => {
            let (h, m) = (h1.saturating_sub(h0), m1.saturating_sub(m0));
            (h + m > 0).then(|| h as f64 / (h + m) as f64)
        }
        _ => None,
    };
    Some(BlobFigures {
        files,
        file_bytes,
        live_bytes,
        garbage_bytes,
        space_amp: (live_bytes > 0).then(|| file_bytes as f64 / live_bytes as f64),
        cache_hit_ratio,
        bytes_written,
        write_amp: bytes_written
            .and_then(|b| (user_bytes > 0).then(|| b as f64 / user_bytes as f64)),
    })
}

fn opt(v: Option<f64>, prec: usize) -> String {
    v.map(|x| format!("{x:.prec$}"))
        .unwrap_or_else(|| "n/a".to_string())
}

fn mib(b: u64) -> String {
    format!("{:.1}MiB", b as f64 / 1_048_576.0)
}

impl BlobFigures {
    /// The summary line's blob part (leading space).
    pub fn summary(&self) -> String {
        let mut s = format!(
            " blob_files={} blob_size={} blob_live={} blob_garbage={} blob_space_amp={}",
            self.files,
            mib(self.file_bytes),
            mib(self.live_bytes),
            mib(self.garbage_bytes),
            opt(self.space_amp, 2),
        );
        if let Some(r) = self.cache_hit_ratio {
            s.push_str(&format!(" blob_cache_hit={r:.3}"));
        }
        if let Some(w) = self.write_amp {
            s.push_str(&format!(" blob_write_amp={w:.2}"));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::memory::MemoryEngine;

    #[test]
    fn summary_names_every_figure() {
        let b = BlobFigures {
            files: 3,
            file_bytes: 3 << 20,
            live_bytes: 2 << 20,
            garbage_bytes: 1 << 20,
            space_amp: Some(1.5),
            cache_hit_ratio: Some(0.25),
            bytes_written: Some(4 << 20),
            write_amp: Some(1.25),
        };
        assert_eq!(
            b.summary(),
            " blob_files=3 blob_size=3.0MiB blob_live=2.0MiB blob_garbage=1.0MiB blob_space_amp=1.50 \
             blob_cache_hit=0.250 blob_write_amp=1.25"
        );
        let bare = BlobFigures {
            space_amp: None,
            cache_hit_ratio: None,
            write_amp: None,
            ..b
        };
        assert!(
            bare.summary().ends_with("blob_space_amp=n/a"),
            "{}",
            bare.summary()
        );
    }

    #[test]
    fn engines_without_blob_properties_report_none() {
        let m = MemoryEngine::open(std::path::Path::new("/memtest/blob-stats"));
        let f = Flags::parse(&["--engine=memory"]).unwrap();
        assert_eq!(cache_counters(&m), None);
        assert_eq!(figures(&m, &f, None, None, None, 0), None);
    }
}
