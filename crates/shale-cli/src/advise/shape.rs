//! What every compaction-style model produces: the predicted steady-state
//! shape of the tree (its sorted runs, newest first), the write-amp broken
//! down by where the bytes are written, the space-amp, and the options to
//! set. The read, memory and device estimates (`estimate`) are computed
//! from a `Shape` the same way for every style.
//!
//! Plain data. Invariants: `runs` is newest (probed first) to oldest;
//! write-amp terms are device bytes per user byte written.

use serde::Serialize;

/// The compaction styles the model covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Style {
    /// RocksDB's level compaction (L0 tiered, L1.. one sorted run each).
    Leveled,
    /// RocksDB's universal (size-tiered) compaction.
    Universal,
    /// FIFO: no compaction, the oldest tables are dropped.
    Fifo,
}

impl Style {
    /// The name RocksDB's `compaction_style` option uses.
    pub fn rocksdb_name(self) -> &'static str {
        match self {
            Style::Leveled => "kCompactionStyleLevel",
            Style::Universal => "kCompactionStyleUniversal",
            Style::Fifo => "kCompactionStyleFIFO",
        }
    }
}

/// A group of sorted runs a point read may probe.
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    /// `L0`, `L3`, `tier 2`...
    pub name: String,
    /// Table bytes.
    pub bytes: f64,
    /// Entries (all versions, not only live keys).
    pub entries: f64,
    /// Sorted runs in the group (L0: its average file count; a level: 1).
    pub count: f64,
}

/// One term of the write-amp.
#[derive(Debug, Clone, Serialize)]
pub struct WriteTerm {
    /// `wal`, `flush`, `L0->L1`...
    pub name: String,
    /// Device bytes written per user byte.
    pub amp: f64,
}

/// The predicted steady state of one configuration.
#[derive(Debug, Clone, Serialize)]
pub struct Shape {
    /// The compaction style.
    pub style: Style,
    /// A short label, e.g. `leveled f=10 L1=8MiB`.
    pub label: String,
    /// Sorted runs, newest first.
    pub runs: Vec<Run>,
    /// Write-amp terms; their sum is the total.
    pub write_terms: Vec<WriteTerm>,
    /// Table bytes over live table bytes, averaged over time.
    pub space_amp_steady: f64,
    /// The highest table bytes over live table bytes (compaction outputs
    /// exist before their inputs are deleted).
    pub space_amp_peak: f64,
    /// Memtable bytes the configuration holds at most.
    pub memtable_bytes: f64,
    /// RocksDB option names and values to set.
    pub options: Vec<(String, String)>,
    /// Caveats (data dropped by FIFO, levels run out...).
    pub notes: Vec<String>,
}

impl Shape {
    /// Total write-amp (device bytes per user byte, WAL included).
    pub fn write_amp(&self) -> f64 {
        self.write_terms.iter().map(|t| t.amp).sum()
    }

    /// Sorted runs a point read may probe.
    pub fn sorted_runs(&self) -> f64 {
        self.runs.iter().map(|r| r.count).sum()
    }

    /// Table bytes of the runs.
    pub fn table_bytes(&self) -> f64 {
        self.runs.iter().map(|r| r.bytes).sum()
    }
}

/// `bytes` in binary units, for labels and options (`64MiB`).
pub fn human(bytes: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}{}", UNITS[u])
    } else {
        format!("{v:.1}{}", UNITS[u])
    }
}
