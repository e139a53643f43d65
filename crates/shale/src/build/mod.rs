//! From a sorted stream of entries to table (and blob) files: the layer
//! flushes and compactions both use. `writer` cuts the stream into output
//! tables (by size, by the user's partitioner and insert streams from
//! `cuts`, by grandparent overlap), `filter` decides which entries survive
//! (snapshots, tombstones, merges, TTL, the user's `CompactionFilter` from
//! `user_filter`), and `blob_output` moves large values into blob files.
//!
//! Nothing here knows the DB: callers pass narrow specs (`OutputSpec`,
//! `BlobOutputSpec`) and get files and statistics back; installing them in
//! a version is the caller's (flush's or compaction's) job.

pub(crate) mod blob_output;
pub(crate) mod cuts;
pub(crate) mod filter;
pub(crate) mod user_filter;
pub(crate) mod writer;
