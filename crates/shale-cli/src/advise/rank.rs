//! Ranking the candidate configurations: those that keep every live key
//! and fit the memory budget first, then by device utilisation (device
//! seconds per second of the workload), then by steady space-amp.
//!
//! Pure function; ties keep the input order.

use std::cmp::Ordering;

use super::estimate::Estimate;
use super::shape::Style;

/// Why a configuration is ranked after the sound ones (empty: sound).
pub fn demerits(e: &Estimate) -> Vec<String> {
    let mut d = Vec::new();
    if e.shape.style == Style::Fifo && e.shape.notes.iter().any(|n| n.starts_with("drops")) {
        d.push("drops live data".to_string());
    }
    if e.cache_bytes < 0.0 {
        d.push("memtables, filters and index exceed the memory budget".to_string());
    }
    d
}

/// `estimates` ordered best first.
pub fn rank(mut estimates: Vec<Estimate>) -> Vec<Estimate> {
    estimates.sort_by(|a, b| {
        let (da, db) = (demerits(a).len(), demerits(b).len());
        da.cmp(&db)
            .then(
                a.device_utilisation
                    .partial_cmp(&b.device_utilisation)
                    .unwrap_or(Ordering::Equal),
            )
            .then(
                a.shape
                    .space_amp_steady
                    .partial_cmp(&b.shape.space_amp_steady)
                    .unwrap_or(Ordering::Equal),
            )
    });
    estimates
}
