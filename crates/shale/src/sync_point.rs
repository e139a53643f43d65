//! Test-only sync points: named places in background and read paths where a
//! test can pause one thread until another has passed a given point, so
//! that a race window (a flush between two steps of a read, a crash in the
//! middle of recovery) is hit every time instead of by chance.
//!
//! As RocksDB's `SyncPoint`: `load_dependency(&[("A", "B")])` makes every
//! thread reaching `B` wait until some thread has passed `A`; `set_callback`
//! runs code when a point is reached (before it counts as passed).
//!
//! A point is never placed where the DB mutex is held: a test pausing there
//! would stop every writer and background job.
//!
//! Cost when unused: one relaxed load of a static flag per point. The
//! registry is process-global: a callback set by one test fires in every
//! DB of the process that reaches the point. So a test that sets points
//! holds [`exclusive`] for its whole run, and every other test of the same
//! binary holds [`shared`]: those run beside each other, never beside a
//! test whose pause another test's flush could take
//! (`tests/sync_point_guards.rs` checks that every test of such a binary
//! holds one of the two).
//!
//! Thread safety: all state is behind one mutex; waiting threads sleep on a
//! condition variable and are woken by every passed point.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

type Callback = Arc<dyn Fn() + Send + Sync>;

#[derive(Default)]
struct Registry {
    /// point -> points that must have been passed before it proceeds.
    predecessors: HashMap<String, Vec<String>>,
    passed: HashSet<String>,
    callbacks: HashMap<String, Callback>,
}

static ENABLED: AtomicBool = AtomicBool::new(false);
static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);
static PASSED: Condvar = Condvar::new();
static EXCLUSIVE: RwLock<()> = RwLock::new(());

fn registry() -> MutexGuard<'static, Option<Registry>> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// Marks the point `name` as reached (see the module docs). Called through
/// `sync_point!`.
#[inline]
pub fn process(name: &str) {
    if ENABLED.load(Ordering::Relaxed) {
        process_slow(name);
    }
}

#[cold]
fn process_slow(name: &str) {
    let mut g = registry();
    loop {
        let Some(r) = g.as_ref() else { return };
        let ready = r
            .predecessors
            .get(name)
            .is_none_or(|pre| pre.iter().all(|p| r.passed.contains(p)));
        if ready || !ENABLED.load(Ordering::Relaxed) {
            break;
        }
        g = PASSED.wait(g).unwrap_or_else(|e| e.into_inner());
    }
    let cb = g.as_ref().and_then(|r| r.callbacks.get(name).cloned());
    drop(g);
    if let Some(cb) = cb {
        cb();
    }
    if let Some(r) = registry().as_mut() {
        r.passed.insert(name.to_string());
    }
    PASSED.notify_all();
}

/// Held for the whole of a test that sets sync points: no other test of the
/// binary that holds [`exclusive`] or [`shared`] runs meanwhile.
pub fn exclusive() -> RwLockWriteGuard<'static, ()> {
    EXCLUSIVE.write().unwrap_or_else(|e| e.into_inner())
}

/// Held for the whole of a test that sets no sync points but shares a
/// binary with tests that do: it runs beside other such tests, never while
/// a test holds [`exclusive`] (whose callbacks its DBs would reach).
pub fn shared() -> RwLockReadGuard<'static, ()> {
    EXCLUSIVE.read().unwrap_or_else(|e| e.into_inner())
}

/// Each `(before, after)`: a thread reaching `after` waits until `before`
/// has been passed. Replaces earlier dependencies.
pub fn load_dependency(pairs: &[(&str, &str)]) {
    let mut g = registry();
    let r = g.get_or_insert_with(Registry::default);
    r.predecessors.clear();
    for (before, after) in pairs {
        r.predecessors
            .entry(after.to_string())
            .or_default()
            .push(before.to_string());
    }
}

/// Runs `f` each time a thread reaches `name`.
pub fn set_callback(name: &str, f: impl Fn() + Send + Sync + 'static) {
    let mut g = registry();
    let r = g.get_or_insert_with(Registry::default);
    r.callbacks.insert(name.to_string(), Arc::new(f));
}

/// True once some thread has passed `name` since the last `reset`.
pub fn passed(name: &str) -> bool {
    registry().as_ref().is_some_and(|r| r.passed.contains(name))
}

/// Turns the points on.
pub fn enable() {
    registry().get_or_insert_with(Registry::default);
    ENABLED.store(true, Ordering::SeqCst);
}

/// Turns the points off, forgets dependencies, callbacks and passed points,
/// and releases every waiting thread.
pub fn reset() {
    ENABLED.store(false, Ordering::SeqCst);
    *registry() = None;
    PASSED.notify_all();
}

/// `sync_point!("Name")`: see the module docs.
#[macro_export]
#[doc(hidden)]
macro_rules! sync_point {
    ($name:expr) => {
        $crate::sync_point::process($name)
    };
}

#[cfg(test)]
mod tests;
