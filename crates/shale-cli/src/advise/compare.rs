//! Predicted vs measured for one `shale-bench --json` record: the
//! configuration read from the record's flags (db_bench's names), the
//! workload from its key and value sizes and live data, the model's shape,
//! and one JSON object with the predicted and measured write-amp (total and
//! per level), space-amp and the errors.
//!
//! Pure: the caller reads the file (`actual::bench_records`).

use serde_json::{json, Value};

use super::actual::BenchDoc;
use super::leveled::{self, LeveledConfig};
use super::shape::Shape;
use super::universal::{self, UniversalConfig};
use super::workload::Workload;

/// The configuration of a shale-bench run, from its flags (db_bench's
/// names): leveled, or universal (`compaction_style=1`, with
/// `universal_size_ratio` and `universal_max_size_amplification_percent`).
enum BenchConfig {
    Leveled(LeveledConfig),
    Universal(UniversalConfig),
}

impl BenchConfig {
    fn model(&self, w: &Workload) -> Shape {
        match self {
            BenchConfig::Leveled(c) => leveled::model(c, w),
            BenchConfig::Universal(c) => universal::model(c, w),
        }
    }

    fn write_buffer_size(&self) -> f64 {
        match self {
            BenchConfig::Leveled(c) => c.write_buffer_size,
            BenchConfig::Universal(c) => c.write_buffer_size,
        }
    }

    fn multiplier(&self) -> Option<f64> {
        match self {
            BenchConfig::Leveled(c) => Some(c.multiplier),
            BenchConfig::Universal(_) => None,
        }
    }
}

/// The configuration, key size, value size and WAL use of a run.
fn bench_config(r: &BenchDoc) -> Result<(BenchConfig, f64, f64, bool), String> {
    let num = |n: &str| {
        r.flag(n)
            .ok_or_else(|| format!("the record has no numeric flag '{n}'"))
    };
    let wal = !r.flag_bool("disable_wal").unwrap_or(false);
    let wb = num("write_buffer_size")?;
    let mwb = num("max_write_buffer_number")?;
    let trigger = num("level0_file_num_compaction_trigger")?;
    let c = match r.flag("compaction_style").unwrap_or(0.0) as i64 {
        0 => BenchConfig::Leveled(LeveledConfig {
            multiplier: num("max_bytes_for_level_multiplier")?,
            l1_bytes: num("max_bytes_for_level_base")?,
            num_levels: num("num_levels")? as usize,
            dynamic: r
                .flag_bool("level_compaction_dynamic_level_bytes")
                .unwrap_or(false),
            write_buffer_size: wb,
            max_write_buffer_number: mwb,
            l0_trigger: trigger,
            target_file_size: num("target_file_size_base")?,
        }),
        1 => BenchConfig::Universal(UniversalConfig {
            // shale-bench's 0 means the engine's default (1 and 200).
            size_ratio: r
                .flag("universal_size_ratio")
                .filter(|&v| v > 0.0)
                .unwrap_or(1.0),
            max_size_amp_percent: r
                .flag("universal_max_size_amplification_percent")
                .filter(|&v| v > 0.0)
                .unwrap_or(200.0),
            write_buffer_size: wb,
            max_write_buffer_number: mwb,
            l0_trigger: trigger,
        }),
        s => {
            return Err(format!(
                "compaction_style={s}: only leveled (0) and universal (1) runs can be compared"
            ))
        }
    };
    Ok((c, num("key_size")?, num("value_size")?, wal))
}

/// Per-level write-amp of a shape: index 0 the flush into L0, index k the
/// bytes written into Lk.
fn predicted_level_amp(s: &Shape) -> Vec<f64> {
    let mut v: Vec<f64> = Vec::new();
    for t in &s.write_terms {
        let level = if t.name == "flush" {
            0
        } else if let Some((_, to)) = t.name.split_once("->L") {
            match to.parse::<usize>() {
                Ok(l) => l,
                Err(_) => continue,
            }
        } else {
            continue;
        };
        if v.len() <= level {
            v.resize(level + 1, 0.0);
        }
        v[level] += t.amp;
    }
    v
}

fn pct(pred: f64, actual: f64) -> f64 {
    if actual == 0.0 {
        0.0
    } else {
        (pred - actual) / actual * 100.0
    }
}

/// The comparison of record `r`: `label`, `value_size`, `multiplier`,
/// `live_keys`, `predicted`, `measured` and `error_pct` (percent,
/// predicted over measured). `Err` says what the record lacks.
pub fn compare_record(r: &BenchDoc) -> Result<Value, String> {
    let (c, key, value, wal) = bench_config(r)?;
    let user_entry = key + value;
    let live_user =
        r.live_bytes_estimate
            .ok_or_else(|| "the record has no live_bytes_estimate".to_string())? as f64;
    let w = Workload {
        writes_per_sec: 0.0,
        key_size: key,
        value_size: value,
        point_reads_per_sec: 0.0,
        scans_per_sec: 0.0,
        scan_length: 0.0,
        live_keys: live_user / user_entry,
        wal,
        data_expires: false,
    };
    w.validate()?;
    let shape = c.model(&w);
    // The run's space-amp is the DB directory (tables and the WAL of
    // the unflushed memtables) over live user bytes.
    let wal_bytes = if wal {
        c.write_buffer_size() / w.memtable_entry_bytes() * w.wal_entry_bytes()
    } else {
        0.0
    };
    let pred_space = (shape.table_bytes() + wal_bytes) / w.live_user_bytes();
    let pred_wa = shape.write_amp();
    Ok(json!({
        "label": shape.label,
        "value_size": value,
        "multiplier": c.multiplier(),
        "live_keys": w.live_keys,
        "predicted": {
            "write_amp": pred_wa,
            "level_write_amp": predicted_level_amp(&shape),
            "space_amp": pred_space,
            "space_amp_tables": shape.table_bytes() / w.live_user_bytes(),
            "levels": shape.runs.iter().map(|r| json!({"name": r.name, "bytes": r.bytes})).collect::<Vec<_>>(),
            "write_terms": shape.write_terms,
        },
        "measured": {
            "write_amp": r.engine_write_amp,
            "level_write_amp": r.level_write_amp,
            "space_amp": r.space_amp,
            "db_size_bytes": r.db_size_bytes,
        },
        "error_pct": {
            "write_amp": r.engine_write_amp.map(|m| pct(pred_wa, m)),
            "space_amp": r.space_amp.map(|m| pct(pred_space, m)),
        },
    }))
}
