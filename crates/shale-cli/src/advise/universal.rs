//! The universal (size-tiered) model: sorted runs whose sizes grow
//! geometrically, merged by `size_ratio`, plus the full merges that
//! `max_size_amplification_percent` forces. See docs/ADVISOR.md.
//!
//! Not yet validated: Shale's universal compaction is being written. The
//! model is RocksDB's documented behaviour, not Shale's code. Pure
//! functions.

use serde::Serialize;

use super::shape::{human, Run, Shape, Style, WriteTerm};
use super::workload::Workload;

/// The options of one universal configuration.
#[derive(Debug, Clone, Serialize)]
pub struct UniversalConfig {
    /// `compaction_options_universal.size_ratio` (percent).
    pub size_ratio: f64,
    /// `compaction_options_universal.max_size_amplification_percent`.
    pub max_size_amp_percent: f64,
    /// `write_buffer_size`.
    pub write_buffer_size: f64,
    /// `max_write_buffer_number`.
    pub max_write_buffer_number: f64,
    /// `level0_file_num_compaction_trigger`.
    pub l0_trigger: f64,
}

/// Growth of a run per merge: a run of size X is merged with the newer runs
/// once they add up to X / (1 + size_ratio/100), so it grows by the factor
/// (2 + r) / (1 + r), r = size_ratio / 100 (2 for r = 0).
pub fn growth_per_merge(size_ratio: f64) -> f64 {
    let r = size_ratio / 100.0;
    (2.0 + r) / (1.0 + r)
}

/// The predicted shape of `c` under `w`.
pub fn model(c: &UniversalConfig, w: &Workload) -> Shape {
    let live = w.live_sst_bytes();
    let p = c.max_size_amp_percent / 100.0;
    let flushed = w.flushed_bytes(c.write_buffer_size);
    let s = w.sst_ratio();
    // The runs above the last one grow from 0 to p * live between full
    // merges (0 to p*live: p/2 on average).
    let upper_max = p * live;
    let g = growth_per_merge(c.size_ratio);
    // Each byte above the last run is rewritten once per merge of its run,
    // and its run grows by g per merge from one flush to the upper size.
    let merges = ((upper_max / 2.0).max(flushed) / flushed).ln() / g.ln();
    let mut terms = Vec::new();
    if w.wal {
        terms.push(WriteTerm {
            name: "wal".into(),
            amp: w.wal_ratio(),
        });
    }
    terms.push(WriteTerm {
        name: "flush".into(),
        amp: s,
    });
    terms.push(WriteTerm {
        name: "tier merges".into(),
        amp: s * merges,
    });
    // A full merge rewrites live + upper once the upper runs reach p * live:
    // (1 + p) * live written per p * live ingested.
    terms.push(WriteTerm {
        name: "full merges".into(),
        amp: s * (1.0 + p) / p,
    });
    let entry = w.sst_entry_bytes();
    let upper_avg = upper_max / 2.0;
    let tiers = merges.max(0.0) + c.l0_trigger / 2.0;
    let runs = vec![
        Run {
            name: "upper runs".into(),
            bytes: upper_avg,
            entries: upper_avg / entry,
            count: tiers,
        },
        Run {
            name: "last run".into(),
            bytes: live,
            entries: live / entry,
            count: 1.0,
        },
    ];
    Shape {
        style: Style::Universal,
        label: format!(
            "universal ratio={} amp={}%",
            c.size_ratio, c.max_size_amp_percent
        ),
        runs,
        write_terms: terms,
        space_amp_steady: 1.0 + p / 2.0,
        // A full merge writes its output (live) before deleting its inputs
        // (live + upper).
        space_amp_peak: 2.0 + p,
        memtable_bytes: c.write_buffer_size * c.max_write_buffer_number,
        options: vec![
            (
                "compaction_style".into(),
                Style::Universal.rocksdb_name().into(),
            ),
            (
                "compaction_options_universal.size_ratio".into(),
                format!("{}", c.size_ratio),
            ),
            (
                "compaction_options_universal.max_size_amplification_percent".into(),
                format!("{}", c.max_size_amp_percent),
            ),
            (
                "write_buffer_size".into(),
                format!("{}", c.write_buffer_size as u64),
            ),
        ],
        notes: vec![format!(
            "unvalidated: universal compaction is not in Shale yet; full merges peak at {} of tables",
            human(live * (2.0 + p))
        )],
    }
}
