//! Compaction: which entries survive a merge (`filter`), the job that merges
//! input files into output files (`job`), and the picker that chooses what
//! to compact (`picker`, with level targets and scores in `sizing`).

pub(crate) mod filter;
pub(crate) mod job;
pub(crate) mod picker;
pub(crate) mod sizing;
