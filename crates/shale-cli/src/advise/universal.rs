//! The universal (size-tiered) model: Shale's universal picker
//! (`crates/shale/src/compaction/universal.rs`, RocksDB's
//! `UniversalCompactionPicker`) replayed on run sizes. See docs/ADVISOR.md.
//!
//! Sorted runs are newest first; a flush adds one run; while there are at
//! least `level0_file_num_compaction_trigger` runs the picker's rules apply
//! in its order: the space-amplification merge (runs before the oldest add
//! up to `max_size_amplification_percent`% of it: all runs merge), the
//! size-ratio window (`TotalSize`: from the newest run on, the first window
//! of at least two runs where each next run is at most `(100 + size_ratio)%`
//! of the runs picked so far), then the run-count merge (the newest
//! `runs - trigger + 1` runs). Compactions are taken as instantaneous (the
//! engine keeps up: no stall).
//!
//! Dedup: keys are overwritten uniformly at random, so a run of `x` bytes
//! holds a random `x / S` of the live keys; a merge of runs of sizes `x_i`
//! writes `S (1 - prod(1 - x_i / S))` bytes (the union). This is what the
//! closed form missed: the runs above the last one can never add up to more
//! than about `S`, so with `max_size_amplification_percent` = 200 the
//! space-amp merge hardly ever fires; the last run is merged by the
//! size-ratio rule instead, once the upper runs reach its size.
//!
//! Steady state: from one run of `S`, flushes until the last run has been
//! merged `WARMUP + CYCLES` times (or `MAX_FLUSHES`); the averages are taken
//! after the first `WARMUP` merges into the last run. Pure functions.

use serde::Serialize;

use super::shape::{human, Run, Shape, Style, WriteTerm};
use super::workload::Workload;

/// Merges into the last run before the averages start.
const WARMUP: usize = 1;
/// Merges into the last run averaged over.
const CYCLES: usize = 4;
/// Most flushes replayed (bounds the time of one candidate).
const MAX_FLUSHES: usize = 2_000_000;

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

/// What a replay of the picker measured, per flushed (table) byte.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Replay {
    /// Bytes written by merges that leave the last run alone.
    pub upper_merges: f64,
    /// Bytes written by merges into the last run (size ratio or space amp).
    pub last_merges: f64,
    /// Of those, merges the space-amplification rule picked.
    pub space_amp_merges: usize,
    /// Merges into the last run averaged over.
    pub cycles: usize,
    /// Table bytes over live table bytes, averaged over flushes.
    pub space_amp_avg: f64,
    /// The most table bytes over live (a merge's output and inputs coexist).
    pub space_amp_peak: f64,
    /// Sorted runs, averaged over flushes.
    pub runs_avg: f64,
    /// Bytes in the runs above the last one, averaged over flushes.
    pub upper_bytes_avg: f64,
}

/// The window `[start, end)` the picker merges among `runs` (newest first),
/// and whether the space-amplification rule picked it.
pub fn pick(
    runs: &[f64],
    size_ratio: f64,
    max_size_amp_percent: f64,
    trigger: usize,
) -> Option<(usize, usize, bool)> {
    let trigger = trigger.max(1);
    if runs.len() < trigger {
        return None;
    }
    if let Some((oldest, newer)) = runs.split_last() {
        if !newer.is_empty() && newer.iter().sum::<f64>() * 100.0 >= max_size_amp_percent * oldest {
            return Some((0, runs.len(), true));
        }
    }
    let grow = (100.0 + size_ratio) / 100.0;
    for start in 0..runs.len() {
        let mut picked = runs[start];
        let mut count = 1;
        for &next in &runs[start + 1..] {
            if picked * grow < next {
                break;
            }
            picked += next;
            count += 1;
        }
        if count >= 2 {
            return Some((start, start + count, false));
        }
    }
    if runs.len() > trigger {
        return Some((0, runs.len() - trigger + 1, false));
    }
    None
}

/// Replays the picker on flushes of `flushed` bytes over `live` bytes of
/// live tables (see the module header). When `MAX_FLUSHES` do not get
/// through the warm-up (live data of millions of memtables), the averages
/// are taken from the first flush on and `cycles` is 0: the write-amp is
/// then that of the merges below the last run so far, a lower bound.
pub fn replay(c: &UniversalConfig, live: f64, flushed: f64) -> Replay {
    replay_after(c, live, flushed, WARMUP).unwrap_or_else(|| {
        replay_after(c, live, flushed, 0).expect("a replay without warm-up measures every flush")
    })
}

/// [`replay`], averaging after `warmup` merges into the last run; `None`
/// when the replay ends before that.
fn replay_after(c: &UniversalConfig, live: f64, flushed: f64, warmup: usize) -> Option<Replay> {
    let trigger = c.l0_trigger.max(1.0) as usize;
    let mut runs: Vec<f64> = vec![live];
    let mut r = Replay::default();
    let (mut ingested, mut samples, mut last_seen) = (0.0, 0usize, 0usize);
    let (mut space, mut count, mut upper) = (0.0, 0.0, 0.0);
    for _ in 0..MAX_FLUSHES {
        let measuring = last_seen >= warmup;
        runs.insert(0, flushed);
        if measuring {
            ingested += flushed;
        }
        while let Some((a, b, by_space)) =
            pick(&runs, c.size_ratio, c.max_size_amp_percent, trigger)
        {
            let miss: f64 = runs[a..b]
                .iter()
                .map(|x| 1.0 - (x / live).min(1.0))
                .product();
            let out = live * (1.0 - miss);
            let into_last = b == runs.len();
            if measuring {
                r.space_amp_peak = r
                    .space_amp_peak
                    .max((runs.iter().sum::<f64>() + out) / live);
                if into_last {
                    r.last_merges += out;
                    r.space_amp_merges += usize::from(by_space);
                } else {
                    r.upper_merges += out;
                }
            }
            runs.splice(a..b, [out]);
            if into_last {
                last_seen += 1;
                if measuring {
                    r.cycles += 1;
                }
            }
        }
        if measuring {
            let total: f64 = runs.iter().sum();
            space += total / live;
            count += runs.len() as f64;
            upper += total - runs[runs.len() - 1];
            samples += 1;
        }
        if r.cycles >= CYCLES {
            break;
        }
    }
    if samples == 0 || ingested == 0.0 {
        return None;
    }
    r.upper_merges /= ingested;
    r.last_merges /= ingested;
    r.space_amp_avg = space / samples as f64;
    r.runs_avg = count / samples as f64;
    r.upper_bytes_avg = upper / samples as f64;
    Some(r)
}

/// The predicted shape of `c` under `w`.
pub fn model(c: &UniversalConfig, w: &Workload) -> Shape {
    let live = w.live_sst_bytes();
    let flushed = w.flushed_bytes(c.write_buffer_size);
    let s = w.sst_ratio();
    let rp = replay(c, live, flushed);
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
        amp: s * rp.upper_merges,
    });
    terms.push(WriteTerm {
        name: "full merges".into(),
        amp: s * rp.last_merges,
    });
    let entry = w.sst_entry_bytes();
    let upper = rp.upper_bytes_avg;
    let runs = vec![
        Run {
            name: "upper runs".into(),
            bytes: upper,
            entries: upper / entry,
            count: (rp.runs_avg - 1.0).max(0.0),
        },
        Run {
            name: "last run".into(),
            bytes: live,
            entries: live / entry,
            count: 1.0,
        },
    ];
    let mut notes = vec![format!(
        "merges peak at {} of tables",
        human(live * rp.space_amp_peak)
    )];
    if rp.cycles == 0 {
        notes.push(format!(
            "replay cut at {MAX_FLUSHES} flushes before the last run merged: write-amp is a lower bound"
        ));
    } else if rp.cycles < CYCLES {
        notes.push(format!(
            "replay cut at {MAX_FLUSHES} flushes after {} merges into the last run",
            rp.cycles
        ));
    }
    Shape {
        style: Style::Universal,
        label: format!(
            "universal ratio={} amp={}%",
            c.size_ratio, c.max_size_amp_percent
        ),
        runs,
        write_terms: terms,
        space_amp_steady: rp.space_amp_avg,
        space_amp_peak: rp.space_amp_peak,
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
        notes,
    }
}
