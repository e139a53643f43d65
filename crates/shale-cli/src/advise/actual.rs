//! The measured side of "predicted vs actual": the shape of a DB (bytes
//! and files per level, from `Db::stats()` as `shale stats --typed` prints
//! it) and the figures of a `shale-bench --json` record (write-amp in total
//! and per level, space-amp, the flags of the run).
//!
//! Parsing only: the caller opens the DB read-only or reads the file. Only
//! the fields used are read, so other fields may come and go.

use std::collections::BTreeMap;

use serde::Deserialize;

/// One level of a measured shape.
#[derive(Debug, Clone, Deserialize)]
pub struct LevelDoc {
    /// Level number.
    pub level: usize,
    /// Table files.
    pub files: u64,
    /// Table bytes.
    pub bytes: u64,
}

/// The measured shape of one family.
#[derive(Debug, Clone, Deserialize)]
pub struct FamilyDoc {
    /// Family name.
    pub name: String,
    /// Per level, L0 first.
    pub levels: Vec<LevelDoc>,
    /// The level L0 compacts into.
    #[serde(default)]
    pub base_level: Option<usize>,
    /// Entries in tables and memtables (all versions).
    #[serde(default)]
    pub estimated_num_keys: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct StatsDoc {
    families: Vec<FamilyDoc>,
}

/// The families of a `Db::stats()` JSON value.
pub fn families(stats: serde_json::Value) -> Result<Vec<FamilyDoc>, String> {
    let d: StatsDoc = serde_json::from_value(stats)
        .map_err(|e| format!("not the output of `shale stats --typed`: {e}"))?;
    Ok(d.families)
}

impl FamilyDoc {
    /// Table bytes of every level.
    pub fn bytes(&self) -> u64 {
        self.levels.iter().map(|l| l.bytes).sum()
    }

    /// Bytes of the last non-empty level below L0 (where the live keys are).
    pub fn last_level_bytes(&self) -> u64 {
        self.levels
            .iter()
            .filter(|l| l.level > 0 && l.bytes > 0)
            .map(|l| l.bytes)
            .next_back()
            .unwrap_or(0)
    }
}

/// The fields of one `shale-bench --json` record the comparison uses.
#[derive(Debug, Clone, Deserialize)]
pub struct BenchDoc {
    /// Benchmark name (`overwrite`, `fillrandom`...).
    pub benchmark: String,
    /// Device bytes the engine wrote (WAL, flush, compaction) per user byte.
    #[serde(default)]
    pub engine_write_amp: Option<f64>,
    /// Bytes written into each level (L0 first) per user byte.
    #[serde(default)]
    pub level_write_amp: Option<Vec<f64>>,
    /// DB directory bytes over live user bytes.
    #[serde(default)]
    pub space_amp: Option<f64>,
    /// DB directory bytes after the run.
    #[serde(default)]
    pub db_size_bytes: u64,
    /// Live keys times (key + value size).
    #[serde(default)]
    pub live_bytes_estimate: Option<u64>,
    /// User bytes (keys and values) the benchmark wrote.
    #[serde(default)]
    pub user_bytes_written: u64,
    /// Every flag of the run, as text.
    #[serde(default)]
    pub flags: BTreeMap<String, String>,
}

impl BenchDoc {
    /// Flag `name` parsed as a number.
    pub fn flag(&self, name: &str) -> Option<f64> {
        self.flags.get(name)?.trim().parse().ok()
    }

    /// Flag `name` as a boolean (`true`/`1`).
    pub fn flag_bool(&self, name: &str) -> Option<bool> {
        match self.flags.get(name)?.trim() {
            "true" | "1" => Some(true),
            "false" | "0" => Some(false),
            _ => None,
        }
    }
}

/// The records of a `--json` file (one object per line; blank lines
/// skipped). `source` names the file in errors.
pub fn bench_records(text: &str, source: &str) -> Result<Vec<BenchDoc>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l)
                .map_err(|e| format!("{source}:{}: not a shale-bench --json record: {e}", i + 1))
        })
        .collect()
}
