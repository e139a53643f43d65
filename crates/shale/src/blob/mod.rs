//! Blob files: the storage side of key-value separation (RocksDB's
//! BlobDB). Large values are written once, at flush, into blob files
//! (`NNNNNN.blob`) and the SST keeps only a small [`BlobIndex`] (file
//! number, offset, size, compression) as the value of a
//! `ValueKind::BlobIndex` entry, so compactions rewrite the small
//! references instead of the large values. A blob file is immutable: a
//! header, records of `(key, value)` back to back, each with its own
//! checksum bound to the file number and the record's offset, and a footer
//! with the record count and bytes. Byte layout in `docs/format/blob.md`.
//!
//! [`BlobFileBuilder`] writes a file, [`BlobFileReader`] reads values back
//! through their index and verifies a whole file; [`source::BlobSource`]
//! serves reads (open readers, the block cache at bottom priority);
//! `recycle` keeps the buffers of blobs the cache evicted for the next read;
//! `options` holds a family's blob options. Which values go to blob files
//! and the garbage of a job are decided in `build::blob_output`; blob
//! files are tracked in the MANIFEST (`version::edit`).
//!
//! Invariants: a blob file is complete (footer written) and synced, and its
//! directory entry synced, before any MANIFEST edit names it; readers
//! return the exact value written or `Corruption` naming the blob file and
//! the offset of the damage, never a wrong value.
//!
//! Thread-safety: a builder is owned by one job; a reader is `Send + Sync`.

pub(crate) mod builder;
pub(crate) mod format;
pub(crate) mod index;
pub(crate) mod options;
pub(crate) mod reader;
pub(crate) mod recycle;
pub(crate) mod source;
#[cfg(test)]
mod tests;

pub(crate) use {
    builder::{BlobFileBuilder, BlobFileInfo},
    index::BlobIndex,
    reader::BlobFileReader,
};
