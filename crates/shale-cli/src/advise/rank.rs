//! Ranking the candidate configurations: those that may be recommended for
//! the workload come first, then those that keep every live key and fit the
//! memory budget, then by device utilisation (device seconds per second of
//! the workload), then by steady space-amp.
//!
//! FIFO deletes the oldest tables by age or size whatever is live in them,
//! so it may only be recommended when the workload says its data expires
//! (`Workload::data_expires`); otherwise it is ranked after every other
//! style and marked [`NOT_APPLICABLE`], however cheap its numbers are.
//!
//! Pure functions; ties keep the input order.

use std::cmp::Ordering;

use super::estimate::Estimate;
use super::shape::Style;
use super::workload::Workload;

/// The demerit of a FIFO candidate for a workload whose data does not
/// expire.
pub const NOT_APPLICABLE: &str = "not applicable: drops live data";

/// Whether `e` may be recommended for `w`: every style but FIFO may; FIFO
/// only when the data expires.
pub fn applicable(e: &Estimate, w: &Workload) -> bool {
    e.shape.style != Style::Fifo || w.data_expires
}

/// Why a configuration is ranked after the sound ones (empty: sound).
pub fn demerits(e: &Estimate, w: &Workload) -> Vec<String> {
    let mut d = Vec::new();
    if !applicable(e, w) {
        d.push(NOT_APPLICABLE.to_string());
    } else if e.shape.style == Style::Fifo && e.shape.notes.iter().any(|n| n.starts_with("drops")) {
        d.push("drops live data".to_string());
    }
    if e.cache_bytes < 0.0 {
        d.push("memtables, filters and index exceed the memory budget".to_string());
    }
    d
}

/// `estimates` ordered best first for `w`: the candidates that are not
/// applicable to it last.
pub fn rank(mut estimates: Vec<Estimate>, w: &Workload) -> Vec<Estimate> {
    estimates.sort_by(|a, b| {
        let (na, nb) = (!applicable(a, w), !applicable(b, w));
        let (da, db) = (demerits(a, w).len(), demerits(b, w).len());
        na.cmp(&nb)
            .then(da.cmp(&db))
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

/// The candidate to recommend among `ranked` (best first): the first one
/// applicable to `w`; `None` when none is (every candidate is FIFO and the
/// data does not expire).
pub fn recommended<'a>(ranked: &'a [Estimate], w: &Workload) -> Option<&'a Estimate> {
    ranked.iter().find(|e| applicable(e, w))
}
