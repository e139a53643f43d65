//! The FIFO model: every flushed table stays in L0 until the tables add up
//! to `max_table_files_size`, then the oldest is deleted. No compaction.
//! See docs/ADVISOR.md.
//!
//! Only sound for data that may expire (caches, logs with a TTL): FIFO
//! deletes the oldest tables by size or age whatever is live in them, so
//! `rank` recommends it only when `Workload::data_expires` says so. When
//! the live data exceeds the maximum, FIFO drops live keys even then, and
//! the shape says so in its notes. Pure functions.

use serde::Serialize;

use super::shape::{human, Run, Shape, Style, WriteTerm};
use super::workload::Workload;

/// The options of one FIFO configuration.
#[derive(Debug, Clone, Serialize)]
pub struct FifoConfig {
    /// `compaction_options_fifo.max_table_files_size`.
    pub max_size: f64,
    /// `write_buffer_size`.
    pub write_buffer_size: f64,
    /// `max_write_buffer_number`.
    pub max_write_buffer_number: f64,
}

/// True when FIFO would delete live keys: their tables outgrow the maximum.
pub fn drops_live_data(c: &FifoConfig, w: &Workload) -> bool {
    w.live_sst_bytes() > c.max_size
}

/// The predicted shape of `c` under `w`.
pub fn model(c: &FifoConfig, w: &Workload) -> Shape {
    let live = w.live_sst_bytes();
    let flushed = w.flushed_bytes(c.write_buffer_size);
    let files = (c.max_size / flushed).max(1.0);
    let entry = w.sst_entry_bytes();
    let mut terms = Vec::new();
    if w.wal {
        terms.push(WriteTerm {
            name: "wal".into(),
            amp: w.wal_ratio(),
        });
    }
    terms.push(WriteTerm {
        name: "flush".into(),
        amp: w.sst_ratio(),
    });
    let mut notes = Vec::new();
    if drops_live_data(c, w) {
        notes.push(format!(
            "drops live data: {} of live tables over a {} maximum",
            human(live),
            human(c.max_size)
        ));
    }
    Shape {
        style: Style::Fifo,
        label: format!("fifo max={}", human(c.max_size)),
        runs: vec![Run {
            name: "L0".into(),
            bytes: c.max_size,
            entries: c.max_size / entry,
            count: files,
        }],
        write_terms: terms,
        space_amp_steady: c.max_size / live,
        space_amp_peak: (c.max_size + flushed) / live,
        memtable_bytes: c.write_buffer_size * c.max_write_buffer_number,
        options: vec![
            ("compaction_style".into(), Style::Fifo.rocksdb_name().into()),
            (
                "compaction_options_fifo.max_table_files_size".into(),
                format!("{}", c.max_size as u64),
            ),
            (
                "write_buffer_size".into(),
                format!("{}", c.write_buffer_size as u64),
            ),
        ],
        notes,
    }
}
