//! Compaction: which entries survive a merge (`filter`), the writer of output
//! tables shared with flushes (`output`), one planned compaction as a
//! computation (`job`: inputs → outputs, edit, statistics), and the picker
//! that chooses what to compact (`picker`, with level targets and scores in
//! `sizing`; `universal` for tiered families, with
//! `universal_incremental`'s key-range slices of its space-amplification
//! merges), and the split of one job into key ranges run in parallel
//! (`subcompaction`), the user's per-key hook (`user_filter`), and the
//! removal of files wholly under range tombstones (`delete_only`), and the
//! FIFO style's picker (`fifo`: whole tables dropped by size or age,
//! small newest L0 tables merged), and key-value separation in the outputs
//! (`blob_output`: values to blob files, blob garbage), and where outputs
//! end besides their size (`cuts`: the user's partitioner, insert streams). The DB runs jobs against its state in db/compaction_runner.rs.

pub(crate) mod delete_only;
pub(crate) mod fifo;

pub(crate) mod job;

pub(crate) mod picker;
pub(crate) mod sizing;

pub(crate) mod subcompaction;
pub(crate) mod universal;
pub(crate) mod universal_incremental;
