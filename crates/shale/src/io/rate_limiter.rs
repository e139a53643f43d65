//! [`RateLimiter`]: RocksDB's `GenericRateLimiter`, a token bucket that
//! paces the table writes of flushes and compactions (`Options::
//! rate_limiter`), so background IO leaves the device to reads and the WAL.
//!
//! The bucket holds at most one refill's worth of bytes: every
//! `refill_period_us` (default 100 ms) it is set to `bytes_per_second ×
//! refill_period_us / 1e6` bytes (the *single burst*; at least 100). A
//! request takes what is available; the rest waits, FIFO within its
//! priority. Refills happen only while someone waits (an idle limiter does
//! not save up bytes), and are made by a waiting thread: the first waiter
//! sleeps until the next refill time (a *drain* of the bucket), the others
//! sleep until granted or asked to take over. A refill serves the waiting
//! requests in priority order, high ([`IoPriority::High`], flushes) first,
//! except once in `fairness` refills (at random) when low (compactions)
//! goes first, so compactions are never starved. A request larger than
//! the single burst is split into bursts (each waits its turn).
//!
//! Auto-tuned mode (RocksDB's `auto_tuned`): the configured rate is the
//! maximum; the limiter starts at half of it and, every 100 refill periods,
//! looks at the share of periods that drained the bucket: none, the rate
//! falls to the minimum (max / 20); under 50%, it falls by 5%; over 90%, it
//! rises by 5%; always within [max / 20, max]. An idle DB thus ends at the
//! minimum and climbs back while compactions keep the bucket drained.
//!
//! Only writes are limited (RocksDB's default mode, `kWritesOnly`): reads,
//! including compaction reads, never wait here. Nor do WAL and MANIFEST
//! writes (they are on the user's write path).
//!
//! Thread-safety: one mutex guards the bucket; waiters sleep on their own
//! condition variable with it released. Never call [`RateLimiter`] waits
//! with a DB lock held. A wait ends early, unsatisfied, when its `cancel`
//! flag is set and [`RateLimiter::wake_all`] (or a refill) wakes it: the DB
//! does that when it closes, so closing never waits on the limiter.
//!
//! Invariants (under the mutex): bytes are available only while both
//! queues are empty; every queued request has `remaining > 0`; at most one
//! waiter sleeps until the refill time (`leader_waiting`).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::error::{Error, Result};

/// Default refill period (RocksDB's `refill_period_us`): 100 ms.
pub const DEFAULT_REFILL_PERIOD_US: u64 = 100_000;
/// Default fairness (RocksDB's): low priority goes first in 1 refill of 10.
pub const DEFAULT_FAIRNESS: u32 = 10;
/// The smallest single burst (RocksDB's `kMinRefillBytesPerPeriod`).
const MIN_REFILL_BYTES: u64 = 100;
/// Auto-tuning: refill periods between two tunings.
const REFILLS_PER_TUNE: u64 = 100;
/// Auto-tuning: below this share of drained periods (percent) the rate falls.
const LOW_WATERMARK_PCT: u64 = 50;
/// Auto-tuning: above this share of drained periods the rate rises.
const HIGH_WATERMARK_PCT: u64 = 90;
/// Auto-tuning: each step changes the rate by this many percent.
const ADJUST_PCT: u64 = 5;
/// Auto-tuning: the rate never falls below max / this.
const RANGE_FACTOR: u64 = 20;

/// Priority of a limited write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoPriority {
    /// Compaction writes (RocksDB's `IO_LOW`).
    Low = 0,
    /// Flush writes (RocksDB's `IO_HIGH`): served first.
    High = 1,
}

/// One waiting request.
struct Waiter {
    /// Bytes not yet granted; changed only under the bucket's mutex.
    remaining: AtomicU64,
    cv: Condvar,
}

impl Waiter {
    fn remaining(&self) -> u64 {
        self.remaining.load(Ordering::Relaxed)
    }
}

/// The token bucket's state. Pure: time is passed in (microseconds since
/// the limiter was made), so tests drive it with a fake clock.
struct Bucket {
    refill_period_us: u64,
    fairness: u32,
    auto_tuned: bool,
    /// The configured rate (the ceiling in auto-tuned mode).
    max_bytes_per_sec: u64,
    /// The rate in force.
    bytes_per_sec: u64,
    /// The single burst: bytes per refill at `bytes_per_sec`.
    refill_bytes: u64,
    available: u64,
    next_refill_us: u64,
    /// A waiter sleeps until `next_refill_us` (then refills).
    leader_waiting: bool,
    /// Waiting requests by priority (`IoPriority as usize`).
    queues: [VecDeque<Arc<Waiter>>; 2],
    bytes_through: [u64; 2],
    requests: [u64; 2],
    wait_micros: [u64; 2],
    /// Refill periods that drained the bucket since the last tuning, and
    /// the refill time of the last one counted (counted once per period).
    drains: u64,
    drained_refill_us: u64,
    tuned_at_us: u64,
    rng: u64,
}

fn refill_bytes_for(bytes_per_sec: u64, refill_period_us: u64) -> u64 {
    let b = u128::from(bytes_per_sec) * u128::from(refill_period_us) / 1_000_000;
    u64::try_from(b).unwrap_or(u64::MAX).max(MIN_REFILL_BYTES)
}

impl Bucket {
    fn new(rate: u64, refill_period_us: u64, fairness: u32, auto_tuned: bool, seed: u64) -> Self {
        let start = if auto_tuned { (rate / 2).max(1) } else { rate };
        Bucket {
            refill_period_us,
            fairness,
            auto_tuned,
            max_bytes_per_sec: rate,
            bytes_per_sec: start,
            refill_bytes: refill_bytes_for(start, refill_period_us),
            available: 0,
            next_refill_us: 0,
            leader_waiting: false,
            queues: [VecDeque::new(), VecDeque::new()],
            bytes_through: [0; 2],
            requests: [0; 2],
            wait_micros: [0; 2],
            drains: 0,
            drained_refill_us: u64::MAX,
            tuned_at_us: 0,
            rng: seed | 1,
        }
    }

    /// Sets the rate in force; bytes left from a larger burst are cut to
    /// the new one, so a lowered rate holds from now on.
    fn set_rate(&mut self, rate: u64) {
        self.bytes_per_sec = rate;
        self.refill_bytes = refill_bytes_for(rate, self.refill_period_us);
        self.available = self.available.min(self.refill_bytes);
    }

    /// True once in `fairness` calls, at random (xorshift64*).
    fn one_in_fairness(&mut self) -> bool {
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let r = self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32;
        r.is_multiple_of(u64::from(self.fairness))
    }

    /// Counts a request of `bytes` (at most one burst) and takes what is
    /// available now; returns the bytes still to wait for.
    fn take(&mut self, bytes: u64, pri: IoPriority, now_us: u64) -> u64 {
        self.maybe_tune(now_us);
        let p = pri as usize;
        self.requests[p] += 1;
        let granted = self.available.min(bytes);
        self.available -= granted;
        self.bytes_through[p] += granted;
        bytes - granted
    }

    /// Starts a new period at `now_us`: the bucket holds one burst, given
    /// to the waiting requests in priority order (low first once in
    /// `fairness` refills). Granted waiters are dequeued and woken.
    fn refill(&mut self, now_us: u64) {
        self.next_refill_us = now_us + self.refill_period_us;
        self.available = self.refill_bytes;
        let order = if self.one_in_fairness() {
            [IoPriority::Low, IoPriority::High]
        } else {
            [IoPriority::High, IoPriority::Low]
        };
        for pri in order {
            let p = pri as usize;
            while let Some(front) = self.queues[p].front() {
                let want = front.remaining();
                if self.available < want {
                    front
                        .remaining
                        .store(want - self.available, Ordering::Relaxed);
                    self.bytes_through[p] += self.available;
                    self.available = 0;
                    break;
                }
                self.available -= want;
                self.bytes_through[p] += want;
                front.remaining.store(0, Ordering::Relaxed);
                front.cv.notify_one();
                self.queues[p].pop_front();
            }
        }
    }

    /// Counts a drain: a waiter found the bucket empty before the refill
    /// at `next_refill_us` (once per refill period).
    fn note_drain(&mut self) {
        if self.drained_refill_us != self.next_refill_us {
            self.drained_refill_us = self.next_refill_us;
            self.drains += 1;
        }
    }

    fn maybe_tune(&mut self, now_us: u64) {
        if self.auto_tuned
            && now_us.saturating_sub(self.tuned_at_us) >= REFILLS_PER_TUNE * self.refill_period_us
        {
            self.tune(now_us);
        }
    }

    /// RocksDB's `TuneLocked`: moves the rate by the share of periods since
    /// the last tuning that drained the bucket.
    fn tune(&mut self, now_us: u64) {
        let elapsed = now_us.saturating_sub(self.tuned_at_us);
        self.tuned_at_us = now_us;
        let periods = elapsed.div_ceil(self.refill_period_us).max(1);
        let drained_pct = self.drains.saturating_mul(100) / periods;
        self.drains = 0;
        let min = (self.max_bytes_per_sec / RANGE_FACTOR).max(1);
        let prev = self.bytes_per_sec;
        let new = if drained_pct == 0 {
            min
        } else if drained_pct < LOW_WATERMARK_PCT {
            (prev.saturating_mul(100) / (100 + ADJUST_PCT)).max(min)
        } else if drained_pct > HIGH_WATERMARK_PCT {
            (prev.saturating_mul(100 + ADJUST_PCT) / 100).min(self.max_bytes_per_sec)
        } else {
            prev
        };
        if new != prev {
            self.set_rate(new);
        }
    }

    /// Removes a waiter that gives up (cancelled).
    fn remove(&mut self, pri: IoPriority, w: &Arc<Waiter>) {
        self.queues[pri as usize].retain(|q| !Arc::ptr_eq(q, w));
    }

    /// Wakes the first waiter of the highest non-empty queue, so someone
    /// takes over the waiting for the next refill.
    fn wake_front(&self) {
        for q in self.queues.iter().rev() {
            if let Some(w) = q.front() {
                w.cv.notify_one();
                return;
            }
        }
    }
}

/// A token-bucket limit on the bytes per second that flushes and
/// compactions write (RocksDB's `GenericRateLimiter`; see the module
/// documentation for the algorithm). Share one between DBs through
/// `Options::rate_limiter` to give them one budget.
pub struct RateLimiter {
    bucket: Mutex<Bucket>,
    epoch: Instant,
}

impl std::fmt::Debug for RateLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let b = self.bucket.lock();
        f.debug_struct("RateLimiter")
            .field("bytes_per_second", &b.bytes_per_sec)
            .field("max_bytes_per_second", &b.max_bytes_per_sec)
            .field("refill_period_us", &b.refill_period_us)
            .field("fairness", &b.fairness)
            .field("auto_tuned", &b.auto_tuned)
            .finish()
    }
}

/// What [`RateLimiter::request`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Grant {
    /// Every byte was granted.
    Granted,
    /// The cancel flag was set: the caller stopped waiting.
    Cancelled,
}

impl RateLimiter {
    /// A limiter of `rate_bytes_per_sec` with RocksDB's defaults: refills
    /// every 100 ms, fairness 10, not auto-tuned. `rate_bytes_per_sec` must
    /// be > 0.
    pub fn new(rate_bytes_per_sec: u64) -> Result<RateLimiter> {
        RateLimiter::generic(
            rate_bytes_per_sec,
            DEFAULT_REFILL_PERIOD_US,
            DEFAULT_FAIRNESS,
            false,
        )
    }

    /// RocksDB's `NewGenericRateLimiter(rate_bytes_per_sec,
    /// refill_period_us, fairness, kWritesOnly, auto_tuned)`: all must be
    /// positive (`InvalidArgument` otherwise). With `auto_tuned` the rate
    /// starts at half of `rate_bytes_per_sec` and moves within
    /// [rate / 20, rate].
    pub fn generic(
        rate_bytes_per_sec: u64,
        refill_period_us: u64,
        fairness: u32,
        auto_tuned: bool,
    ) -> Result<RateLimiter> {
        if rate_bytes_per_sec == 0 || refill_period_us == 0 || fairness == 0 {
            return Err(Error::InvalidArgument(format!(
                "rate limiter: rate_bytes_per_sec {rate_bytes_per_sec}, refill_period_us \
                 {refill_period_us} and fairness {fairness} must all be > 0"
            )));
        }
        let epoch = Instant::now();
        let seed = std::ptr::addr_of!(epoch) as u64 ^ epoch_nanos();
        Ok(RateLimiter {
            bucket: Mutex::new(Bucket::new(
                rate_bytes_per_sec,
                refill_period_us,
                fairness,
                auto_tuned,
                seed,
            )),
            epoch,
        })
    }

    /// The rate in force, in bytes per second (in auto-tuned mode, where
    /// the tuning has taken it).
    pub fn get_bytes_per_second(&self) -> u64 {
        self.bucket.lock().bytes_per_sec
    }

    /// The configured rate: the one given at construction or by
    /// [`RateLimiter::set_bytes_per_second`] (in auto-tuned mode, the
    /// ceiling of the tuning).
    pub fn get_max_bytes_per_second(&self) -> u64 {
        self.bucket.lock().max_bytes_per_sec
    }

    /// Changes the rate at run time: waiting requests see it at the next
    /// refill, and bytes left over from a larger burst are cut to the new
    /// single burst (RocksDB leaves them). In auto-tuned mode this sets the ceiling and clamps the rate
    /// in force into [rate / 20, rate] (RocksDB sets the rate in force and
    /// leaves the ceiling). 0 is refused with `InvalidArgument`.
    pub fn set_bytes_per_second(&self, rate_bytes_per_sec: u64) -> Result<()> {
        if rate_bytes_per_sec == 0 {
            return Err(Error::InvalidArgument(
                "rate limiter: bytes per second must be > 0".into(),
            ));
        }
        let mut b = self.bucket.lock();
        b.max_bytes_per_sec = rate_bytes_per_sec;
        let rate = if b.auto_tuned {
            b.bytes_per_sec.clamp(
                (rate_bytes_per_sec / RANGE_FACTOR).max(1),
                rate_bytes_per_sec,
            )
        } else {
            rate_bytes_per_sec
        };
        b.set_rate(rate);
        Ok(())
    }

    /// Bytes one request may take at once (one refill's worth); larger
    /// requests are split.
    pub fn get_single_burst_bytes(&self) -> u64 {
        self.bucket.lock().refill_bytes
    }

    /// True when the rate is auto-tuned.
    pub fn is_auto_tuned(&self) -> bool {
        self.bucket.lock().auto_tuned
    }

    /// The refill period in microseconds.
    pub fn refill_period_us(&self) -> u64 {
        self.bucket.lock().refill_period_us
    }

    /// Bytes granted so far at `pri` (`None`: both priorities), RocksDB's
    /// `GetTotalBytesThrough`.
    pub fn get_total_bytes_through(&self, pri: Option<IoPriority>) -> u64 {
        let b = self.bucket.lock();
        by_priority(&b.bytes_through, pri)
    }

    /// Requests so far at `pri` (`None`: both), RocksDB's
    /// `GetTotalRequests`. A write larger than the single burst counts one
    /// request per burst.
    pub fn get_total_requests(&self, pri: Option<IoPriority>) -> u64 {
        let b = self.bucket.lock();
        by_priority(&b.requests, pri)
    }

    /// Microseconds requests at `pri` (`None`: both) spent waiting.
    pub fn get_total_wait_micros(&self, pri: Option<IoPriority>) -> u64 {
        let b = self.bucket.lock();
        by_priority(&b.wait_micros, pri)
    }

    fn now_us(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    /// Waits until `bytes` may be written at `pri`, in bursts of at most
    /// the single burst. Returns `Cancelled` (with part of the bytes maybe
    /// not granted) once `cancel` is set and the waiter is woken
    /// ([`RateLimiter::wake_all`]); returns at once if it is set already.
    pub(crate) fn request(&self, bytes: u64, pri: IoPriority, cancel: &AtomicBool) -> Grant {
        let mut left = bytes;
        while left > 0 {
            if cancel.load(Ordering::Acquire) {
                return Grant::Cancelled;
            }
            let chunk = left.min(self.get_single_burst_bytes());
            if self.request_burst(chunk, pri, cancel) == Grant::Cancelled {
                return Grant::Cancelled;
            }
            left -= chunk;
        }
        Grant::Granted
    }

    /// One burst (RocksDB's `Request`): take what is available, else queue
    /// and take turns waiting for the refill time and refilling.
    fn request_burst(&self, bytes: u64, pri: IoPriority, cancel: &AtomicBool) -> Grant {
        let mut b = self.bucket.lock();
        let left = b.take(bytes, pri, self.now_us());
        if left == 0 {
            return Grant::Granted;
        }
        let started = Instant::now();
        let me = Arc::new(Waiter {
            remaining: AtomicU64::new(left),
            cv: Condvar::new(),
        });
        b.queues[pri as usize].push_back(Arc::clone(&me));
        let grant = loop {
            if cancel.load(Ordering::Acquire) {
                b.remove(pri, &me);
                break Grant::Cancelled;
            }
            let now = self.now_us();
            if now < b.next_refill_us {
                if b.leader_waiting {
                    // Another waiter sleeps until the refill; it wakes us
                    // when we are granted or needed.
                    me.cv.wait(&mut b);
                } else {
                    b.note_drain();
                    b.leader_waiting = true;
                    let until = Duration::from_micros(b.next_refill_us - now);
                    me.cv.wait_for(&mut b, until);
                    b.leader_waiting = false;
                }
            } else {
                b.refill(now);
            }
            if me.remaining() == 0 {
                break Grant::Granted;
            }
        };
        // Someone must wait for the next refill if requests remain.
        b.wake_front();
        let waited = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        b.wait_micros[pri as usize] += waited;
        grant
    }

    /// Wakes every waiting request, so those whose cancel flag is set give
    /// up (the others go back to waiting).
    pub(crate) fn wake_all(&self) {
        let b = self.bucket.lock();
        for q in &b.queues {
            for w in q {
                w.cv.notify_one();
            }
        }
    }

    /// Requests waiting now (tests).
    #[cfg(test)]
    fn waiting(&self) -> usize {
        let b = self.bucket.lock();
        b.queues.iter().map(VecDeque::len).sum()
    }
}

fn by_priority(counts: &[u64; 2], pri: Option<IoPriority>) -> u64 {
    match pri {
        Some(p) => counts[p as usize],
        None => counts.iter().sum(),
    }
}

fn epoch_nanos() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

#[cfg(test)]
mod tests;
