//! Per-level write-amp of one benchmark: the bytes flushes (into L0) and
//! compactions (into L1 and below) wrote into each level while it ran,
//! over the user bytes it wrote. Read from the engine's per-level counters
//! before and after (Shale: `bytes_written` of each row of
//! `shale.compaction-stats-json`, which counts DB-wide, every family).
//!
//! The sum over the levels is the table part of `engine_write_amp` (the
//! rest is the WAL). None for engines without the counters and for
//! benchmarks that wrote no user bytes. Plain functions of the counters.

use crate::engine::Engine;

/// Bytes written into each level so far (L0 first), or None when the
/// engine does not report them.
pub fn read(db: &dyn Engine) -> Option<Vec<u64>> {
    if db.name() != "shale" {
        return None;
    }
    let text = db.property("shale.compaction-stats-json")?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v.get("levels")?
        .as_array()?
        .iter()
        .map(|l| l.get("bytes_written")?.as_u64())
        .collect()
}

/// Per level, the bytes written between `before` and `after` over
/// `user_bytes`; None unless both readings exist and user bytes were
/// written. A level missing from `before` counts from 0.
pub fn write_amp(
    before: Option<&[u64]>,
    after: Option<&[u64]>,
    user_bytes: u64,
) -> Option<Vec<f64>> {
    let (before, after) = (before?, after?);
    if user_bytes == 0 {
        return None;
    }
    Some(
        after
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let b = before.get(i).copied().unwrap_or(0);
                a.saturating_sub(b) as f64 / user_bytes as f64
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_over_user_bytes() {
        let w = write_amp(Some(&[100, 0]), Some(&[300, 50, 20]), 100).unwrap();
        assert_eq!(w, vec![2.0, 0.5, 0.2]);
        assert_eq!(write_amp(Some(&[1]), Some(&[2]), 0), None);
        assert_eq!(write_amp(None, Some(&[2]), 10), None);
    }

    #[test]
    fn engines_without_the_counters_report_none() {
        let m = crate::engine::memory::MemoryEngine::open(std::path::Path::new("/memtest/amp"));
        assert_eq!(read(&m), None);
    }
}
