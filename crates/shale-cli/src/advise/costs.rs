//! What a candidate configuration costs, in words: its write-amp and where
//! the bytes are written, its read cost (device reads of a point read that
//! finds its key, of one that does not, of a range scan, and the sorted
//! runs they probe), its space-amp, and, for FIFO, that it deletes the
//! oldest tables whatever is live in them.
//!
//! The numbers are the estimate's own, so the words agree with the ranking
//! table's columns. Pure functions.

use serde::Serialize;

use super::estimate::Estimate;
use super::shape::{human, Style};
use super::workload::Workload;

/// One sentence per kind of cost.
#[derive(Debug, Clone, Serialize)]
pub struct Costs {
    /// Write-amp: how many times each byte put is written, and where.
    pub write: String,
    /// Read cost: device reads of a point read, a missed point read and a
    /// range scan.
    pub read: String,
    /// Space-amp: the tables over the live data, steady and at peak.
    pub space: String,
    /// What the configuration deletes by itself (FIFO), if anything.
    pub deletes: Option<String>,
}

impl Costs {
    /// The sentences in order: write, read, space, then what it deletes.
    pub fn lines(&self) -> Vec<&str> {
        let mut v = vec![self.write.as_str(), self.read.as_str(), self.space.as_str()];
        if let Some(d) = &self.deletes {
            v.push(d);
        }
        v
    }
}

/// The costs of `e` under `w`, in words.
pub fn costs(e: &Estimate, w: &Workload) -> Costs {
    let s = &e.shape;
    let term = |name: &str| -> f64 {
        s.write_terms
            .iter()
            .filter(|t| t.name == name)
            .map(|t| t.amp)
            .sum()
    };
    let (wal, flush) = (term("wal"), term("flush"));
    let compaction = (e.write_amp - wal - flush).max(0.0);
    let wal_words = if w.wal {
        format!("WAL {wal:.2}")
    } else {
        "no WAL".to_string()
    };
    let compaction_words = if s.style == Style::Fifo {
        "no compaction".to_string()
    } else {
        format!("compaction {compaction:.2}")
    };
    let write = format!(
        "write-amp {:.2}: the device writes {:.2} bytes for each byte put ({wal_words}, flush {flush:.2}, \
         {compaction_words})",
        e.write_amp, e.write_amp
    );
    let read = format!(
        "read cost: a point read takes {:.2} device reads when the key exists and {:.3} when it does not \
         ({:.0} sorted runs to probe); a scan of {:.0} entries takes {:.1}",
        e.point_read_ios, e.point_miss_ios, e.sorted_runs, w.scan_length, e.scan_ios
    );
    let space = format!(
        "space-amp {:.2}: the tables take {:.0}% more space than the live data ({:.0}% more at peak)",
        s.space_amp_steady,
        (s.space_amp_steady - 1.0) * 100.0,
        (s.space_amp_peak - 1.0) * 100.0
    );
    let deletes = (s.style == Style::Fifo).then(|| {
        format!(
            "deletes data: FIFO deletes the oldest tables by size (once the tables pass {}, \
             max_table_files_size) or by age (when a ttl is set), whatever is live in them",
            human(s.table_bytes())
        )
    });
    Costs {
        write,
        read,
        space,
        deletes,
    }
}
