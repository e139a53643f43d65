//! The leveled model: level sizes (dynamic or static, as
//! `version::sizing` sizes them), per-level write-amp with the dedup of
//! overwrites, space-amp, and the number of levels that minimises write-amp
//! (Lambert W). See docs/ADVISOR.md for the derivations.
//!
//! Assumes a steady state of uniformly random overwrites of `live_keys`
//! keys: every level holds a uniform sample of the key space, and the last
//! level holds (about) every live key. Pure functions.

use serde::Serialize;

use super::shape::{human, Run, Shape, Style, WriteTerm};
use super::workload::Workload;

/// The options of one leveled configuration.
#[derive(Debug, Clone, Serialize)]
pub struct LeveledConfig {
    /// `max_bytes_for_level_multiplier`.
    pub multiplier: f64,
    /// `max_bytes_for_level_base` (target of the base level).
    pub l1_bytes: f64,
    /// `num_levels` (L0 included).
    pub num_levels: usize,
    /// `level_compaction_dynamic_level_bytes`.
    pub dynamic: bool,
    /// `write_buffer_size`.
    pub write_buffer_size: f64,
    /// `max_write_buffer_number`.
    pub max_write_buffer_number: f64,
    /// `level0_file_num_compaction_trigger`.
    pub l0_trigger: f64,
    /// `target_file_size_base`.
    pub target_file_size: f64,
}

/// Bytes of each level L1..num_levels-1 (index 0 is L1; 0.0 = empty) in
/// the steady state, and the base level (where L0 compacts into).
pub fn level_bytes(c: &LeveledConfig, live: f64) -> (Vec<f64>, usize) {
    let n = c.num_levels.max(2) - 1; // levels below L0
    let mut sizes = vec![0.0; n];
    if c.dynamic {
        // Sized backwards from the last level: each level above holds the
        // one below divided by the multiplier, up to the first level whose
        // size is at most the base target.
        // Every level but the last holds at least the base target (its
        // target is never below it, as in RocksDB and `sizing`).
        let mut size = live;
        let mut i = n;
        loop {
            i -= 1;
            sizes[i] = if i + 1 == n {
                size
            } else {
                size.max(c.l1_bytes)
            };
            if size <= c.l1_bytes || i == 0 {
                break;
            }
            size /= c.multiplier;
        }
        (sizes, i + 1)
    } else {
        // L1 = base, each level `multiplier` times the one above; the upper
        // levels sit at their targets, the first level whose target holds
        // the live data holds it (or the last level does).
        let mut target = c.l1_bytes;
        for (i, size) in sizes.iter_mut().enumerate() {
            if live <= target || i + 1 == n {
                *size = live;
                break;
            }
            *size = target;
            target *= c.multiplier;
        }
        (sizes, 1)
    }
}

/// The predicted shape of `c` under `w`.
pub fn model(c: &LeveledConfig, w: &Workload) -> Shape {
    let live = w.live_sst_bytes();
    let (sizes, base) = level_bytes(c, live);
    let entry = w.sst_entry_bytes();
    let l0_full = c.l0_trigger * w.flushed_bytes(c.write_buffer_size);
    let mut notes = Vec::new();
    let last_nonempty = sizes.iter().rposition(|&s| s > 0.0).unwrap_or(0);
    if sizes[base - 1] > c.l1_bytes * 1.0001 && sizes[base - 1] < live {
        notes.push(format!(
            "levels run out: L{base} holds {} over its {} target",
            human(sizes[base - 1]),
            human(c.l1_bytes)
        ));
    }
    let s = w.sst_ratio();
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
    // Fraction of the key space a level covers: the share of moved-in
    // entries that overwrite an entry already there (and vanish).
    let covers = |bytes: f64| (bytes / live).min(1.0);
    // L0 -> base: every L0 compaction merges the whole L0 (random keys
    // span the key range) with the whole base level.
    let b = sizes[base - 1];
    let mut flow = 1.0; // user bytes reaching the level being compacted
    terms.push(WriteTerm {
        name: format!("L0->L{base}"),
        amp: s * flow * (1.0 + b / l0_full - covers(b)),
    });
    flow *= 1.0 - covers(b);
    // Ln -> Ln+1: a compaction moves one key range of Ln and rewrites the
    // part of Ln+1 it overlaps. Compactions visit the key ranges of Ln in
    // turn (round robin, or the least overlapping file first), so the range
    // picked has gathered data for a whole cycle: twice the level's average
    // density. Each byte moved so rewrites r / 2 bytes of Ln+1 (r = size
    // ratio of the two levels), and adds itself unless it overwrites a key
    // there.
    for i in base..=last_nonempty {
        let (up, down) = (sizes[i - 1], sizes[i]);
        if up <= 0.0 {
            continue;
        }
        let r = down / up;
        let amp = r / 2.0 + 1.0 - covers(down);
        terms.push(WriteTerm {
            name: format!("L{i}->L{}", i + 1),
            amp: s * flow * amp,
        });
        flow *= 1.0 - covers(down);
    }
    let mut runs = vec![Run {
        name: "L0".into(),
        // Between compactions L0 holds 0..trigger flushed tables.
        bytes: l0_full / 2.0,
        entries: l0_full / 2.0 / entry,
        count: c.l0_trigger / 2.0,
    }];
    for (i, &bytes) in sizes.iter().enumerate() {
        if bytes > 0.0 {
            runs.push(Run {
                name: format!("L{}", i + 1),
                bytes,
                entries: bytes / entry,
                count: 1.0,
            });
        }
    }
    let total: f64 = runs.iter().map(|r| r.bytes).sum();
    // The largest transient: an L0 compaction (full L0 and the base level
    // rewritten) or one file pushed into the level below (it and the f
    // files it overlaps), whichever is larger.
    let transient = (l0_full + b).max(c.target_file_size * (c.multiplier + 1.0));
    let l0_extra = l0_full / 2.0; // L0 full rather than half full
    Shape {
        style: Style::Leveled,
        label: format!(
            "leveled f={} L1={}{}",
            c.multiplier,
            human(c.l1_bytes),
            if c.dynamic { "" } else { " static" }
        ),
        runs,
        write_terms: terms,
        space_amp_steady: total / live,
        space_amp_peak: (total + l0_extra + transient) / live,
        memtable_bytes: c.write_buffer_size * c.max_write_buffer_number,
        options: vec![
            (
                "compaction_style".into(),
                Style::Leveled.rocksdb_name().into(),
            ),
            (
                "max_bytes_for_level_multiplier".into(),
                format!("{}", c.multiplier),
            ),
            (
                "max_bytes_for_level_base".into(),
                format!("{}", c.l1_bytes as u64),
            ),
            ("num_levels".into(), c.num_levels.to_string()),
            (
                "level_compaction_dynamic_level_bytes".into(),
                c.dynamic.to_string(),
            ),
            (
                "write_buffer_size".into(),
                format!("{}", c.write_buffer_size as u64),
            ),
            (
                "target_file_size_base".into(),
                format!("{}", c.target_file_size as u64),
            ),
        ],
        notes,
    }
}

/// Lambert W (principal branch) of `x >= -1/e`, by Newton's method.
pub fn lambert_w(x: f64) -> f64 {
    let mut w = if x < 1.0 { x } else { x.ln() };
    for _ in 0..100 {
        let e = w.exp();
        let next = w - (w * e - x) / (e * (w + 1.0));
        if (next - w).abs() < 1e-15 {
            return next;
        }
        w = next;
    }
    w
}

/// The number of levels (real-valued) that minimises total write-amp for a
/// total fanout `t` (DB size over memtable size) when each level costs
/// `w + 1` (LWA-2): n = ln(t) / (1 + W(1/e)). With LWA-1 (`w` per level)
/// the answer is ln(t).
pub fn optimal_levels(t: f64) -> f64 {
    t.ln() / (1.0 + lambert_w((-1.0f64).exp()))
}

/// Total write-amp of `n` levels of equal fanout t^(1/n), each costing
/// `w + 1` (LWA-2), the seed's cost function.
pub fn uniform_write_amp(t: f64, n: f64) -> f64 {
    n * (t.powf(1.0 / n) + 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lambert_w_of_one_over_e() {
        assert!((lambert_w((-1.0f64).exp()) - 0.278_464_5).abs() < 1e-6);
        assert!((lambert_w(1.0) - 0.567_143_3).abs() < 1e-6);
    }

    #[test]
    fn optimal_levels_for_fanout_1024_is_the_seeds_5_42() {
        let n = optimal_levels(1024.0);
        assert!((n - 5.4217).abs() < 1e-3, "{n}");
        let at = uniform_write_amp(1024.0, n);
        assert!(at < uniform_write_amp(1024.0, n - 0.5));
        assert!(at < uniform_write_amp(1024.0, n + 0.5));
    }
}
