//! The inputs of the model: the workload (write rate, key and value sizes,
//! read and scan mix, DB size, whether its data expires), the device (bandwidth and IOPS), the memory
//! budget, and the per-entry byte overheads of Shale's formats that turn
//! user bytes into bytes on disk and in memtables.
//!
//! Plain data, validated once by [`Workload::validate`]; every other part
//! of the model requires a validated workload.

use serde::Serialize;

/// Bytes an entry costs in a table beyond its key and value: the 8-byte
/// internal key trailer (sequence number and kind) and the three varints of
/// a block entry (shared, unshared and value lengths), plus the restart
/// points, index entry and block trailer spread over the block's entries,
/// minus the key prefix shared with the previous entry (sorted keys in a
/// block share several bytes). Measured: flushes of 16-byte db_bench keys
/// write 1.07 bytes per user byte at 100-byte values (8 bytes over 116).
pub const SST_ENTRY_OVERHEAD: f64 = 8.0;

/// Bytes an entry costs in the WAL beyond its key and value when each
/// write is a batch of one: the record header (7), the batch header (12),
/// the entry's kind byte and its two length varints.
pub const WAL_ENTRY_OVERHEAD: f64 = 22.0;

/// Bytes an entry costs in a memtable beyond its key and value: internal
/// key trailer, length prefixes and skiplist node (tower pointers of
/// average height 4/3, arena alignment).
pub const MEMTABLE_ENTRY_OVERHEAD: f64 = 32.0;

/// What the application does.
#[derive(Debug, Clone, Serialize)]
pub struct Workload {
    /// Puts per second (each a new key or an overwrite of a live one).
    pub writes_per_sec: f64,
    /// Key bytes.
    pub key_size: f64,
    /// Value bytes (after compression, if any).
    pub value_size: f64,
    /// Point reads per second.
    pub point_reads_per_sec: f64,
    /// Range scans per second.
    pub scans_per_sec: f64,
    /// Entries each scan returns.
    pub scan_length: f64,
    /// Live keys in the DB.
    pub live_keys: f64,
    /// Whether writes go through the WAL.
    pub wal: bool,
    /// Whether the application lets its data expire (a cache, logs kept
    /// for a retention period): only then may a style that deletes the
    /// oldest data by age or size, whatever is live (FIFO), be recommended.
    pub data_expires: bool,
}

/// The storage device.
#[derive(Debug, Clone, Serialize)]
pub struct Device {
    /// Sequential read bandwidth, bytes/s.
    pub read_bytes_per_sec: f64,
    /// Sequential write bandwidth, bytes/s.
    pub write_bytes_per_sec: f64,
    /// Random reads per second (of one block).
    pub read_iops: f64,
}

/// Memory the DB may use (memtables, filters, index, block cache).
#[derive(Debug, Clone, Serialize)]
pub struct Memory {
    /// Bytes.
    pub budget_bytes: f64,
    /// Data block size in bytes (RocksDB's `block_size`).
    pub block_size: f64,
}

impl Workload {
    /// User bytes of one entry (key + value).
    pub fn user_entry_bytes(&self) -> f64 {
        self.key_size + self.value_size
    }

    /// Bytes of one entry in a table.
    pub fn sst_entry_bytes(&self) -> f64 {
        self.user_entry_bytes() + SST_ENTRY_OVERHEAD
    }

    /// Bytes of one entry in the WAL.
    pub fn wal_entry_bytes(&self) -> f64 {
        self.user_entry_bytes() + WAL_ENTRY_OVERHEAD
    }

    /// Bytes of one entry in a memtable.
    pub fn memtable_entry_bytes(&self) -> f64 {
        self.user_entry_bytes() + MEMTABLE_ENTRY_OVERHEAD
    }

    /// Table bytes per user byte written.
    pub fn sst_ratio(&self) -> f64 {
        self.sst_entry_bytes() / self.user_entry_bytes()
    }

    /// WAL bytes per user byte written (0 without the WAL).
    pub fn wal_ratio(&self) -> f64 {
        if self.wal {
            self.wal_entry_bytes() / self.user_entry_bytes()
        } else {
            0.0
        }
    }

    /// Table bytes of the live data (one version of every key).
    pub fn live_sst_bytes(&self) -> f64 {
        self.live_keys * self.sst_entry_bytes()
    }

    /// User bytes of the live data.
    pub fn live_user_bytes(&self) -> f64 {
        self.live_keys * self.user_entry_bytes()
    }

    /// Table bytes one flushed memtable of `write_buffer_size` makes.
    pub fn flushed_bytes(&self, write_buffer_size: f64) -> f64 {
        write_buffer_size / self.memtable_entry_bytes() * self.sst_entry_bytes()
    }

    /// `Err` naming the first input that cannot work.
    pub fn validate(&self) -> Result<(), String> {
        positive("key size", self.key_size)?;
        non_negative("value size", self.value_size)?;
        non_negative("write rate", self.writes_per_sec)?;
        non_negative("point read rate", self.point_reads_per_sec)?;
        non_negative("scan rate", self.scans_per_sec)?;
        non_negative("scan length", self.scan_length)?;
        positive("DB size (live keys)", self.live_keys)
    }
}

impl Device {
    /// `Err` naming the first input that cannot work.
    pub fn validate(&self) -> Result<(), String> {
        positive("device read bandwidth", self.read_bytes_per_sec)?;
        positive("device write bandwidth", self.write_bytes_per_sec)?;
        positive("device read IOPS", self.read_iops)
    }
}

impl Memory {
    /// `Err` naming the first input that cannot work.
    pub fn validate(&self) -> Result<(), String> {
        non_negative("memory budget", self.budget_bytes)?;
        positive("block size", self.block_size)
    }
}

fn positive(what: &str, v: f64) -> Result<(), String> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(format!("{what} must be a positive number (got {v})"))
    }
}

fn non_negative(what: &str, v: f64) -> Result<(), String> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(format!("{what} must be zero or more (got {v})"))
    }
}
