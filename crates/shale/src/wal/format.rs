//! The log format shared by the WAL and the MANIFEST: constants, record types
//! and the file-bound checksum. Byte by byte in `docs/format/wal.md`.
//!
//! A log is a sequence of [`BLOCK_SIZE`] blocks. Each physical record is a
//! [`HEADER_LEN`]-byte header (masked CRC32C: 4 bytes LE, payload length:
//! 2 bytes LE, type: 1 byte) and the payload; a record never crosses a block
//! boundary, so a logical record longer than the space left is split into
//! FIRST, MIDDLE..., LAST fragments. A block tail shorter than a header is
//! zero-filled. The checksum covers the type byte and the payload and is
//! seeded with the log number, so a record copied from another log fails it.
//!
//! Pure functions and constants; no state.

use crate::codec::{crc32c, crc32c_extend, mask_crc};

/// Size of a log block.
///
/// FROZEN: on-disk (docs/format/wal.md).
pub(crate) const BLOCK_SIZE: usize = 32 * 1024;

/// Size of a physical record header: CRC (4) + length (2) + type (1).
///
/// FROZEN: on-disk (docs/format/wal.md).
pub(crate) const HEADER_LEN: usize = 7;

/// Largest payload of one physical record (a whole block minus its header).
#[cfg(test)]
pub(crate) const MAX_FRAGMENT_LEN: usize = BLOCK_SIZE - HEADER_LEN;

/// Physical record types.
///
/// FROZEN: on-disk (docs/format/wal.md). Never renumber. 0 is reserved for
/// zero-filled (preallocated) space; 5..=127 are unknown to this version and
/// read as corruption; 128 and above are metadata records
/// ([`METADATA_BIT`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum RecordType {
    /// A whole logical record.
    Full = 1,
    /// First fragment of a logical record.
    First = 2,
    /// Interior fragment.
    Middle = 3,
    /// Last fragment.
    Last = 4,
}

impl RecordType {
    /// Decodes a type byte; `None` for 0 and unknown types.
    #[inline]
    pub(crate) fn from_u8(b: u8) -> Option<RecordType> {
        Some(match b {
            1 => RecordType::Full,
            2 => RecordType::First,
            3 => RecordType::Middle,
            4 => RecordType::Last,
            _ => return None,
        })
    }
}

/// Type bytes with this bit set are metadata records: one physical record
/// each (never fragmented), between logical records. A reader skips the
/// ones it does not know (after checking their checksum).
///
/// FROZEN: on-disk (docs/format/wal.md).
pub(crate) const METADATA_BIT: u8 = 0x80;

/// Type byte of the predecessor-WAL record: the first record of a WAL
/// created by a memtable switch names the WAL before it and that WAL's
/// final size ([`PredecessorWal`]).
///
/// FROZEN: on-disk (docs/format/wal.md).
pub(crate) const PREDECESSOR_WAL_TYPE: u8 = 130;

/// Type byte of the recycled-log record: a WAL written over an obsolete
/// WAL's file (`recycle_log_file_num`) says so right after its
/// predecessor-WAL record (payload: the old log's number, u64 LE). In such a
/// log the first record that fails its checks is the end of the log: the
/// old bytes left after the new ones (docs/format/wal.md, "Recycled logs").
///
/// FROZEN: on-disk (docs/format/wal.md).
pub(crate) const RECYCLED_WAL_TYPE: u8 = 131;

/// Type byte of the time record (WAL archiving only, `Options::wal_ttl_seconds`
/// or `wal_size_limit_mb`): every write before it in the log was made at or
/// before the time it names. Payload: [`SeqTime`].
///
/// FROZEN: on-disk (docs/format/wal.md).
pub(crate) const TIME_TYPE: u8 = 132;

/// Type byte of the unlogged-writes record (WAL archiving only): the
/// sequence numbers it names were used by writes that are not in any WAL
/// (`disable_wal`, an ingested file's global sequence number), at this point
/// of the log. Payload: two little-endian u64s, first and last.
///
/// FROZEN: on-disk (docs/format/wal.md).
pub(crate) const UNLOGGED_TYPE: u8 = 133;

/// Type byte of the ingestion record (WAL archiving only): an ingestion
/// of external files took the sequence numbers it names (two little-endian
/// u64s, first and last); the files are in the MANIFEST, not in a WAL.
///
/// FROZEN: on-disk (docs/format/wal.md).
pub(crate) const INGESTED_TYPE: u8 = 135;

/// Type byte of the family-change record (WAL archiving only): a column
/// family was created or dropped (a MANIFEST edit) after every write up to
/// the sequence number it names (payload: that number and the family's
/// id, two little-endian u64s).
///
/// FROZEN: on-disk (docs/format/wal.md).
pub(crate) const FAMILY_TYPE: u8 = 136;

/// Type byte of the padding record: fills the end of a block that a
/// metadata record does not fit in (its payload is zeros, any length).
///
/// FROZEN: on-disk (docs/format/wal.md).
pub(crate) const PADDING_TYPE: u8 = 134;

/// Two little-endian u64s: the payload of a time record (`first`: the last
/// sequence number written before it, `second`: Unix microseconds) and of
/// an unlogged-writes record (`first..=second`).
///
/// FROZEN: on-disk (docs/format/wal.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SeqTime {
    pub first: u64,
    pub second: u64,
}

impl SeqTime {
    /// Encoded length.
    pub(crate) const LEN: usize = 16;

    pub(crate) fn encode(&self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        b[..8].copy_from_slice(&self.first.to_le_bytes());
        b[8..].copy_from_slice(&self.second.to_le_bytes());
        b
    }

    /// `None` unless `b` is exactly [`Self::LEN`] bytes.
    pub(crate) fn decode(b: &[u8]) -> Option<Self> {
        let (a, c) = b.split_first_chunk::<8>()?;
        let c: &[u8; 8] = c.try_into().ok()?;
        Some(SeqTime {
            first: u64::from_le_bytes(*a),
            second: u64::from_le_bytes(*c),
        })
    }
}

/// The payload of a predecessor-WAL record: three little-endian u64s.
///
/// FROZEN: on-disk (docs/format/wal.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PredecessorWal {
    /// Number of the WAL written before this one.
    pub log_number: u64,
    /// Bytes that WAL held when it was closed: a recovered copy shorter
    /// than this lost its tail.
    pub size: u64,
    /// The last sequence number allocated when it was closed
    /// (informational: writes without the WAL take numbers too).
    pub last_sequence: u64,
}

impl PredecessorWal {
    /// Encoded length.
    pub(crate) const LEN: usize = 24;

    pub(crate) fn encode(&self) -> [u8; Self::LEN] {
        let mut b = [0u8; Self::LEN];
        b[..8].copy_from_slice(&self.log_number.to_le_bytes());
        b[8..16].copy_from_slice(&self.size.to_le_bytes());
        b[16..].copy_from_slice(&self.last_sequence.to_le_bytes());
        b
    }

    /// `None` unless `b` is exactly [`Self::LEN`] bytes.
    pub(crate) fn decode(b: &[u8]) -> Option<Self> {
        let b: &[u8; Self::LEN] = b.try_into().ok()?;
        let u = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&b[i..i + 8]);
            u64::from_le_bytes(w)
        };
        Some(PredecessorWal {
            log_number: u(0),
            size: u(8),
            last_sequence: u(16),
        })
    }
}

/// Highest type byte the per-type CRC table covers.
const MAX_TYPE: usize = RecordType::Last as usize;

/// CRC32C of `log_number` (8 bytes LE) extended with each type byte
/// `0..=MAX_TYPE`: the state a record's checksum starts from before its
/// payload. Computed once per log so records need no allocation.
#[derive(Debug, Clone)]
pub(crate) struct CrcSeeds {
    log_seed: u32,
    by_type: [u32; MAX_TYPE + 1],
}

impl CrcSeeds {
    /// Seeds for the log numbered `log_number`.
    pub(crate) fn new(log_number: u64) -> Self {
        let log_seed = crc32c(&log_number.to_le_bytes());
        let mut by_type = [0u32; MAX_TYPE + 1];
        for (t, slot) in by_type.iter_mut().enumerate() {
            *slot = crc32c_extend(log_seed, &[t as u8]);
        }
        CrcSeeds { log_seed, by_type }
    }

    /// The masked checksum stored for a record of type byte `typ` with
    /// `payload` (any type byte, known or not).
    #[inline]
    pub(crate) fn record_crc(&self, typ: u8, payload: &[u8]) -> u32 {
        let seed = match self.by_type.get(typ as usize) {
            Some(&s) => s,
            None => crc32c_extend(self.log_seed, &[typ]),
        };
        mask_crc(crc32c_extend(seed, payload))
    }
}

#[cfg(test)]
mod tests;
