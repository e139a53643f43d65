//! A column family's key-value separation options (RocksDB's integrated
//! BlobDB options, same names, meanings and defaults). Validation and the
//! persisted text live in `options::blob`, which re-exports these types.
//!
//! Every option may change between opens: blob files already written stay
//! readable whatever the options say now, and the new values apply to the
//! next flush or compaction.

use crate::base::declare::{bad_value, declare_options, TextValue};
use crate::error::Result;
use crate::sst::Compression;

/// Whether flushes also put the blobs they write into the block cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PrepopulateBlobCache {
    /// Blobs enter the cache only when read (RocksDB's `kDisable`).
    #[default]
    Disable,
    /// Blobs written by flushes are inserted at once (`kFlushOnly`): for
    /// workloads that read what they just wrote.
    FlushOnly,
}

impl PrepopulateBlobCache {
    /// RocksDB's name (`kDisable`, `kFlushOnly`).
    pub fn name(self) -> &'static str {
        match self {
            PrepopulateBlobCache::Disable => "kDisable",
            PrepopulateBlobCache::FlushOnly => "kFlushOnly",
        }
    }

    /// Parses RocksDB's names (also `disable`, `flush_only`).
    pub fn parse(s: &str) -> Option<PrepopulateBlobCache> {
        match s {
            "kDisable" | "disable" | "0" => Some(PrepopulateBlobCache::Disable),
            "kFlushOnly" | "flush_only" | "1" => Some(PrepopulateBlobCache::FlushOnly),
            _ => None,
        }
    }
}

impl TextValue for PrepopulateBlobCache {
    fn text(&self) -> String {
        self.name().to_string()
    }
    fn set(&mut self, name: &str, v: &str) -> Result<()> {
        *self = PrepopulateBlobCache::parse(v).ok_or_else(|| bad_value(name, v))?;
        Ok(())
    }
}

declare_options! {
    /// Key-value separation of one column family.
    #[derive(Debug, Clone, PartialEq)]
    pub struct BlobOptions;
    {
        /// Values of at least `min_blob_size` bytes are written to blob files
        /// by flushes and compactions (from `blob_file_starting_level` on);
        /// the tables keep a small reference. Default false.
        enable_blob_files / EnableBlobFiles: bool = false, mutable sparse Cf "enable_blob_files";
        /// Smallest value moved to a blob file. Default 0 (every value).
        min_blob_size / MinBlobSize: u64 = 0, mutable sparse Cf "min_blob_size";
        /// A blob file is closed and a new one started past this size.
        /// Default 256 MiB.
        blob_file_size / BlobFileSize: u64 = 256 << 20, mutable sparse Cf "blob_file_size",
            check(v) *v == 0 => "blob_file_size must be > 0".into();
        /// Compression of each blob. Default none.
        blob_compression_type / BlobCompressionType: Compression = Compression::None, mutable sparse Cf "blob_compression_type";
        /// Compactions relocate the blobs of the oldest
        /// `blob_garbage_collection_age_cutoff` share of blob files, so those
        /// files empty and are deleted. Default false.
        enable_blob_garbage_collection / EnableBlobGarbageCollection: bool = false, mutable sparse Cf "enable_blob_garbage_collection";
        /// Share (0..=1) of the blob files, oldest first, whose live blobs
        /// garbage collection relocates. Default 0.25.
        blob_garbage_collection_age_cutoff / BlobGarbageCollectionAgeCutoff: f64 = 0.25, mutable sparse Cf "blob_garbage_collection_age_cutoff",
            check(v) !(0.0..=1.0).contains(v) => format!("blob_garbage_collection_age_cutoff {v} not in [0, 1]");
        /// Shale's own (RocksDB has no such option): a blob file below the age
        /// cutoff has its blobs relocated only once at least this share
        /// (0..=1) of its blob bytes is garbage. Default 0.0: every file below
        /// the cutoff, RocksDB's rule. Under RocksDB's rule a compaction that
        /// reads the oldest files relocates them however little garbage they
        /// hold, so the bytes relocated grow with the number of compactions;
        /// with a ratio they grow with the garbage (see docs/BLOB.md). The
        /// oldest batch of a forced collection is relocated whatever its
        /// files' shares.
        blob_garbage_collection_min_garbage_ratio / BlobGarbageCollectionMinGarbageRatio: f64 = 0.0, mutable sparse Cf "blob_garbage_collection_min_garbage_ratio",
            check(v) !(0.0..=1.0).contains(v) => format!("blob_garbage_collection_min_garbage_ratio {v} not in [0, 1]");
        /// When the garbage share of the oldest blob files reaches this
        /// (0..=1), the tables referencing them are compacted for that alone.
        /// Default 1.0 (only files entirely garbage, which are dropped anyway).
        blob_garbage_collection_force_threshold / BlobGarbageCollectionForceThreshold: f64 = 1.0, mutable sparse Cf "blob_garbage_collection_force_threshold",
            check(v) !(0.0..=1.0).contains(v) => format!("blob_garbage_collection_force_threshold {v} not in [0, 1]");
        /// Bytes read ahead from a blob file by compactions that relocate its
        /// blobs (0: one read per blob). Default 0.
        blob_compaction_readahead_size / BlobCompactionReadaheadSize: u64 = 0, mutable sparse Cf "blob_compaction_readahead_size";
        /// The first level whose compactions write blob files; 0 (the default)
        /// also has flushes write them.
        blob_file_starting_level / BlobFileStartingLevel: usize = 0, mutable sparse Cf "blob_file_starting_level";
        /// Whether flushes insert the blobs they write into the block cache.
        /// Default `Disable`.
        prepopulate_blob_cache / PrepopulateBlobCache: PrepopulateBlobCache = PrepopulateBlobCache::Disable, mutable sparse Cf "prepopulate_blob_cache";
    }
}

impl BlobOptions {
    /// True when a job writing `output_level` moves values of
    /// `min_blob_size` bytes or more to blob files.
    pub(crate) fn extracts_at(&self, output_level: usize) -> bool {
        self.enable_blob_files && output_level >= self.blob_file_starting_level
    }
}
