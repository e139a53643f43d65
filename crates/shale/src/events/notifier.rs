//! Delivers recorded events to the listeners on one thread per open DB.
//!
//! `record` appends to a queue under a short mutex of its own (never the
//! DB mutex's IO-free rule broken: it only pushes); the `shale-events`
//! thread pops events in order and calls every listener for each, with no
//! lock held. `recorded` and `delivered` count events so that a caller can
//! wait until everything recorded before it has been delivered. With no
//! listener installed nothing is recorded and no thread runs.
//!
//! Invariants: `delivered <= recorded`; events are delivered in the order
//! recorded; after `shutdown` returns (from any thread but the event
//! thread) every recorded event has been delivered.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, OnceLock};
use std::thread::{JoinHandle, ThreadId};

use parking_lot::{Condvar, Mutex};

use super::*;

/// One recorded event.
pub(crate) enum Event {
    FlushBegin(FlushJobInfo),
    FlushCompleted(FlushJobInfo),
    CompactionBegin(CompactionJobInfo),
    CompactionCompleted(CompactionJobInfo),
    TableFileCreated(TableFileCreationInfo),
    TableFileDeleted(TableFileDeletionInfo),
    StallConditionsChanged(WriteStallInfo),
    BackgroundError(BackgroundErrorInfo),
    ErrorRecoveryBegin(ErrorRecoveryInfo),
    ErrorRecoveryCompleted(ErrorRecoveryCompletedInfo),
}

impl Event {
    fn name(&self) -> &'static str {
        match self {
            Event::FlushBegin(_) => "on_flush_begin",
            Event::FlushCompleted(_) => "on_flush_completed",
            Event::CompactionBegin(_) => "on_compaction_begin",
            Event::CompactionCompleted(_) => "on_compaction_completed",
            Event::TableFileCreated(_) => "on_table_file_created",
            Event::TableFileDeleted(_) => "on_table_file_deleted",
            Event::StallConditionsChanged(_) => "on_stall_conditions_changed",
            Event::BackgroundError(_) => "on_background_error",
            Event::ErrorRecoveryBegin(_) => "on_error_recovery_begin",
            Event::ErrorRecoveryCompleted(_) => "on_error_recovery_completed",
        }
    }

    fn deliver(&self, l: &dyn EventListener) {
        match self {
            Event::FlushBegin(i) => l.on_flush_begin(i),
            Event::FlushCompleted(i) => l.on_flush_completed(i),
            Event::CompactionBegin(i) => l.on_compaction_begin(i),
            Event::CompactionCompleted(i) => l.on_compaction_completed(i),
            Event::TableFileCreated(i) => l.on_table_file_created(i),
            Event::TableFileDeleted(i) => l.on_table_file_deleted(i),
            Event::StallConditionsChanged(i) => l.on_stall_conditions_changed(i),
            Event::BackgroundError(i) => l.on_background_error(i),
            Event::ErrorRecoveryBegin(i) => l.on_error_recovery_begin(i),
            Event::ErrorRecoveryCompleted(i) => l.on_error_recovery_completed(i),
        }
    }
}

#[derive(Default)]
struct Queue {
    events: VecDeque<Event>,
    recorded: u64,
    delivered: u64,
    closed: bool,
}

/// Where a listener's panic is reported (the LOG).
pub(crate) type PanicLog = Box<dyn Fn(&str) + Send + Sync>;

/// The event queue and its delivery thread.
pub(crate) struct Notifier {
    listeners: Vec<Arc<dyn EventListener>>,
    on_panic: PanicLog,
    queue: Mutex<Queue>,
    cv: Condvar,
    thread: Mutex<Option<JoinHandle<()>>>,
    thread_id: OnceLock<ThreadId>,
}

impl Notifier {
    /// A notifier for `listeners`; its thread starts with the first one.
    pub(crate) fn start(listeners: Vec<Arc<dyn EventListener>>, on_panic: PanicLog) -> Arc<Self> {
        let n = Arc::new(Notifier {
            listeners,
            on_panic,
            queue: Mutex::new(Queue::default()),
            cv: Condvar::new(),
            thread: Mutex::new(None),
            thread_id: OnceLock::new(),
        });
        if !n.listeners.is_empty() {
            let me = Arc::clone(&n);
            match std::thread::Builder::new()
                .name("shale-events".into())
                .spawn(move || me.run())
            {
                Ok(h) => {
                    let _ = n.thread_id.set(h.thread().id());
                    *n.thread.lock() = Some(h);
                }
                Err(e) => (n.on_panic)(&format!(
                    "could not start the event thread ({e}): listeners will not be called"
                )),
            }
        }
        n
    }

    /// True when events are delivered (some listener is installed): the
    /// engine builds event infos only then.
    pub(crate) fn enabled(&self) -> bool {
        !self.listeners.is_empty() && self.thread_id.get().is_some()
    }

    /// Queues `ev` for delivery (dropped when disabled or after shutdown).
    pub(crate) fn record(&self, ev: Event) {
        if !self.enabled() {
            return;
        }
        let mut q = self.queue.lock();
        if q.closed {
            return;
        }
        q.events.push_back(ev);
        q.recorded += 1;
        self.cv.notify_all();
    }

    /// Waits until every event recorded so far has been delivered. Returns
    /// at once on the event thread itself (a listener calling `flush`).
    pub(crate) fn wait_delivered(&self) {
        if !self.enabled() || self.on_event_thread() {
            return;
        }
        let mut q = self.queue.lock();
        let target = q.recorded;
        while q.delivered < target && !(q.closed && q.events.is_empty()) {
            self.cv.wait(&mut q);
        }
    }

    fn on_event_thread(&self) -> bool {
        self.thread_id.get() == Some(&std::thread::current().id())
    }

    /// Delivers what is queued, then stops the thread. Called by close
    /// after the background jobs stopped (nothing records afterwards).
    pub(crate) fn shutdown(&self) {
        self.queue.lock().closed = true;
        self.cv.notify_all();
        if self.on_event_thread() {
            return; // a listener closed the DB: the thread ends by itself
        }
        if let Some(h) = self.thread.lock().take() {
            let _ = h.join();
        }
    }

    fn run(&self) {
        let mut q = self.queue.lock();
        loop {
            if let Some(ev) = q.events.pop_front() {
                drop(q);
                for l in &self.listeners {
                    let r = catch_unwind(AssertUnwindSafe(|| ev.deliver(l.as_ref())));
                    if let Err(p) = r {
                        let msg = p
                            .downcast_ref::<&str>()
                            .map(|s| s.to_string())
                            .or_else(|| p.downcast_ref::<String>().cloned())
                            .unwrap_or_else(|| "(no message)".into());
                        (self.on_panic)(&format!(
                            "event listener panicked in {}: {msg}",
                            ev.name()
                        ));
                    }
                }
                q = self.queue.lock();
                q.delivered += 1;
                self.cv.notify_all();
                continue;
            }
            if q.closed {
                return;
            }
            self.cv.wait(&mut q);
        }
    }
}
