//! A listener that counts the engine's events and checks their order as
//! they arrive (a job's begin before its tables' creation before its
//! completion, one completion per job, no table deleted twice). Its counts
//! go to the run's summary line; an ordering break counts as a failure.
//!
//! Thread safety: one mutex over the job set and the counts (events come
//! from the engine's single event thread; the summary reads them after
//! close).

use std::collections::BTreeSet;
use std::sync::Mutex;

use shale::{
    BackgroundErrorInfo, CompactionJobInfo, ErrorRecoveryCompletedInfo, EventListener,
    FlushJobInfo, TableFileCreationInfo, TableFileDeletionInfo, WriteStallInfo,
};

#[derive(Default)]
struct State {
    /// Jobs begun, not completed (ids restart at each open; every job
    /// completes before close).
    running: BTreeSet<u64>,
    deleted: BTreeSet<u64>,
    flushes: u64,
    compactions: u64,
    failed_jobs: u64,
    created: u64,
    deleted_count: u64,
    stalls: u64,
    bg_errors: u64,
    recoveries: u64,
    violations: Vec<String>,
}

/// Counts and checks events; see the module comment.
#[derive(Default)]
pub struct EventCounter {
    state: Mutex<State>,
}

impl EventCounter {
    fn with(&self, f: impl FnOnce(&mut State)) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut s);
    }

    fn begin(&self, job: u64) {
        self.with(|s| {
            if !s.running.insert(job) {
                s.violations.push(format!("job {job} begun twice"));
            }
        });
    }

    fn completed(&self, job: u64, ok: bool, flush: bool) {
        self.with(|s| {
            if !s.running.remove(&job) {
                s.violations
                    .push(format!("job {job} completed, not running"));
            }
            match (ok, flush) {
                (false, _) => s.failed_jobs += 1,
                (true, true) => s.flushes += 1,
                (true, false) => s.compactions += 1,
            }
        });
    }

    /// Ordering breaks seen, plus jobs never completed (call after close).
    pub fn violations(&self) -> Vec<String> {
        let s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let mut v = s.violations.clone();
        if !s.running.is_empty() {
            v.push(format!("jobs never completed: {:?}", s.running));
        }
        v
    }

    /// `events: flushes=.. compactions=.. ...` for the summary.
    pub fn summary(&self) -> String {
        let s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        format!(
            "events: flushes={} compactions={} failed_jobs={} tables_created={} tables_deleted={} \
             stall_changes={} background_errors={} recoveries={} order_violations={}",
            s.flushes,
            s.compactions,
            s.failed_jobs,
            s.created,
            s.deleted_count,
            s.stalls,
            s.bg_errors,
            s.recoveries,
            s.violations.len()
        )
    }
}

impl EventListener for EventCounter {
    fn on_flush_begin(&self, i: &FlushJobInfo) {
        self.begin(i.job_id);
    }
    fn on_flush_completed(&self, i: &FlushJobInfo) {
        self.completed(i.job_id, i.status.is_ok(), true);
    }
    fn on_compaction_begin(&self, i: &CompactionJobInfo) {
        self.begin(i.job_id);
    }
    fn on_compaction_completed(&self, i: &CompactionJobInfo) {
        self.completed(i.job_id, i.status.is_ok(), false);
    }
    fn on_table_file_created(&self, i: &TableFileCreationInfo) {
        self.with(|s| {
            s.created += 1;
            if !s.running.contains(&i.job_id) {
                let m = format!(
                    "table {} created outside job {}",
                    i.file.file_number, i.job_id
                );
                s.violations.push(m);
            }
        });
    }
    fn on_table_file_deleted(&self, i: &TableFileDeletionInfo) {
        self.with(|s| {
            s.deleted_count += 1;
            if !s.deleted.insert(i.file_number) {
                s.violations
                    .push(format!("table {} deleted twice", i.file_number));
            }
        });
    }
    fn on_stall_conditions_changed(&self, _: &WriteStallInfo) {
        self.with(|s| s.stalls += 1);
    }
    fn on_background_error(&self, _: &BackgroundErrorInfo) {
        self.with(|s| s.bg_errors += 1);
    }
    fn on_error_recovery_completed(&self, _: &ErrorRecoveryCompletedInfo) {
        self.with(|s| s.recoveries += 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_flags_breaks() {
        let c = EventCounter::default();
        let flush = |job, status| FlushJobInfo {
            cf_name: "default".into(),
            cf_id: 0,
            job_id: job,
            num_entries: 1,
            num_deletes: 0,
            output_files: Vec::new(),
            status,
        };
        c.on_flush_begin(&flush(1, Ok(())));
        c.on_flush_completed(&flush(1, Ok(())));
        assert!(c.violations().is_empty());
        c.on_flush_completed(&flush(2, Ok(())));
        assert_eq!(c.violations(), vec!["job 2 completed, not running"]);
        assert!(c.summary().contains("flushes=2"), "{}", c.summary());
    }
}
