//! Where flush and compaction outputs end besides their size: at key
//! partitions the user declares (`SstPartitioner`, RocksDB's
//! `sst_partitioner_factory`) and at the ends of ascending insert streams
//! found in a memtable or in a compaction's merged inputs
//! (`StreamDetector`, beyond RocksDB).
//!
//! Why: a table whose key range spans two places where writes keep
//! arriving overlaps every later table of those places, so it can never be
//! moved down a level by a MANIFEST edit (a trivial move) and each level
//! rewrites it. N interleaved ascending streams (time series per device,
//! logs per tenant) make every flush span all of them: RocksDB's write-amp
//! there grows from 1 (N = 1) to ~7 (N ≥ 32). Cut at stream boundaries,
//! each table covers one stream's recent keys, overlaps nothing, and moves
//! down without a rewrite.
//!
//! Invariants:
//! - Cuts happen only between user keys (the caller asks at the first
//!   entry of each user key), so the versions of one key never span files.
//! - Neither rule reads anything but the keys it is shown: the outputs'
//!   contents are the same with or without cuts, only their file
//!   boundaries move.
//! - The stream detector cuts an output only after a run of at least
//!   `MIN_RUN_KEYS` keys whose newest sequence numbers rise with the key
//!   and that fills `min_run_bytes` of it: random inserts (runs of about
//!   two keys) never cut, and one flush makes at most
//!   `memtable bytes / min_run_bytes` extra files.

use crate::base::SeqNo;
use crate::error::{Error, Result};

/// Partitions of the key space that outputs never span (RocksDB's
/// `SstPartitionerFactory`; only its fixed-prefix kind exists).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SstPartitioner {
    /// Keys whose first `n` bytes differ go to different files (RocksDB's
    /// `NewSstPartitionerFixedPrefixFactory(n)`); keys shorter than `n`
    /// never force a cut.
    FixedPrefix(usize),
}

const FIXED_PREFIX_ID: &str = "SstPartitionerFixedPrefixFactory";

impl SstPartitioner {
    /// True when an output must end between `prev` and `next` (consecutive
    /// user keys, `prev < next`).
    #[inline]
    pub(crate) fn must_cut(&self, prev: &[u8], next: &[u8]) -> bool {
        match *self {
            SstPartitioner::FixedPrefix(n) => {
                prev.len() >= n && next.len() >= n && prev[..n] != next[..n]
            }
        }
    }

    /// True when a file spanning `[smallest, largest]` (user keys) lies in
    /// one partition, so moving it by a MANIFEST edit keeps the levels
    /// partitioned (RocksDB's `CanDoTrivialMove`).
    pub(crate) fn can_move(&self, smallest: &[u8], largest: &[u8]) -> bool {
        !self.must_cut(smallest, largest)
    }

    /// RocksDB's options-file spelling:
    /// `{id=SstPartitionerFixedPrefixFactory;length=8;}`.
    pub fn name(&self) -> String {
        match self {
            SstPartitioner::FixedPrefix(n) => format!("{{id={FIXED_PREFIX_ID};length={n};}}"),
        }
    }

    /// Parses [`name`](Self::name) output (fields in any order, the
    /// trailing `;` optional); `InvalidArgument` for anything else.
    pub fn parse(text: &str) -> Result<SstPartitioner> {
        let bad = || {
            Error::InvalidArgument(format!(
                "sst_partitioner_factory {text:?}: expected {{id={FIXED_PREFIX_ID};length=N;}}"
            ))
        };
        let body = text
            .strip_prefix('{')
            .and_then(|t| t.strip_suffix('}'))
            .ok_or_else(bad)?;
        let (mut id, mut length) = (None, None);
        for field in body.split(';').filter(|f| !f.is_empty()) {
            match field.split_once('=').ok_or_else(bad)? {
                ("id", v) => id = Some(v),
                ("length", v) => length = Some(v.parse::<usize>().map_err(|_| bad())?),
                _ => return Err(bad()),
            }
        }
        match (id, length) {
            (Some(FIXED_PREFIX_ID), Some(n)) => Ok(SstPartitioner::FixedPrefix(n)),
            _ => Err(bad()),
        }
    }

    /// Checks the partitioner's parameters.
    pub(crate) fn validate(&self) -> Result<()> {
        match *self {
            SstPartitioner::FixedPrefix(n) if n == 0 || n > 1 << 20 => {
                Err(Error::InvalidArgument(format!(
                    "sst_partitioner_factory {}: length must be in 1..=1048576",
                    self.name()
                )))
            }
            SstPartitioner::FixedPrefix(_) => Ok(()),
        }
    }
}

/// Fewest keys of an ascending run that may end an output.
pub(crate) const MIN_RUN_KEYS: u64 = 16;

/// Fewest bytes a run must fill, for memtables of at least 512 KiB (a
/// smaller memtable's runs must fill 1/8 of it).
const MIN_RUN_BYTES_FLOOR: u64 = 64 << 10;

/// Ends flush outputs where an ascending insert stream ends.
///
/// In a memtable written by N ascending streams (disjoint key ranges each
/// written in key order), the newest sequence numbers of consecutive user
/// keys rise through each stream's keys and fall at the next stream's
/// first key (written long before the previous stream's last). The
/// detector watches those numbers; when one falls after a run of at least
/// [`MIN_RUN_KEYS`] keys that filled at least `min_run_bytes` of the
/// current output, the output ends there.
///
/// Only the end of a run cuts (the start of a run is known only once it is
/// long, when its first keys are written): keys of other writes before a
/// stream's keys share its file.
#[derive(Debug, Clone)]
pub(crate) struct StreamDetector {
    min_run_bytes: u64,
    prev_seq: SeqNo,
    run_keys: u64,
    /// Output bytes written before the run's first key.
    run_start_bytes: u64,
}

impl StreamDetector {
    /// A detector for outputs of about `output_size` bytes (a flush's
    /// memtable, a compaction level's target file size): runs must fill
    /// 1/128 of that, at least 64 KiB (1/8 of an output under 512 KiB), so
    /// one output's worth of input adds at most ~128 files.
    pub(crate) fn for_output_size(output_size: u64) -> StreamDetector {
        StreamDetector::new((output_size / 128).max(MIN_RUN_BYTES_FLOOR.min(output_size / 8)))
    }

    pub(crate) fn new(min_run_bytes: u64) -> StreamDetector {
        StreamDetector {
            min_run_bytes,
            prev_seq: 0,
            run_keys: 0,
            run_start_bytes: 0,
        }
    }

    /// Called with the newest sequence number of each user key, in key
    /// order, and the bytes of the output written so far (0 when none is
    /// open): true when the output should end before this key.
    #[inline]
    pub(crate) fn should_cut(&mut self, seq: SeqNo, output_bytes: u64) -> bool {
        let mut cut = false;
        if self.run_keys > 0 && seq < self.prev_seq {
            cut = self.run_keys >= MIN_RUN_KEYS
                && output_bytes.saturating_sub(self.run_start_bytes) >= self.min_run_bytes;
            self.run_keys = 0;
            self.run_start_bytes = output_bytes;
        }
        self.run_keys += 1;
        self.prev_seq = seq;
        cut
    }

    /// The output ended (for whatever reason) before the last key shown:
    /// the current run's bytes count from the new output's start.
    pub(crate) fn output_ended(&mut self) {
        self.run_start_bytes = 0;
    }
}

#[cfg(test)]
mod tests;
