//! Per-key expiry (`Db::put_with_ttl`, a family's `default_ttl`): the clock
//! the engine reads time from, and the layout of an expiring value.
//!
//! An entry of kind `ValueWithExpiry` holds `value ++ fixed64 LE expiry`,
//! the expiry in Unix seconds of the DB's clock. From that second on the
//! key reads as deleted (the entry hides older versions, as a tombstone
//! does); compaction turns it into a tombstone, or drops it where nothing
//! lies below.

use std::time::{SystemTime, UNIX_EPOCH};

/// Bytes of the expiry suffix.
pub(crate) const EXPIRY_LEN: usize = 8;

/// Where the engine reads the time for expiries, archived WALs' ages and
/// the WAL's time records. Tests inject their own.
pub trait Clock: Send + Sync {
    /// Seconds since the Unix epoch.
    fn now_secs(&self) -> u64;

    /// Microseconds since the Unix epoch (default: `now_secs` × 10⁶).
    fn now_micros(&self) -> u64 {
        self.now_secs().saturating_mul(1_000_000)
    }
}

/// The system clock (`SystemTime::now`).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_secs(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    }

    fn now_micros(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
    }
}

/// The value and expiry of an expiring entry's stored bytes; `None` when
/// they are shorter than the suffix (corruption).
#[inline]
pub(crate) fn split_expiring(stored: &[u8]) -> Option<(&[u8], u64)> {
    let at = stored.len().checked_sub(EXPIRY_LEN)?;
    let (v, e) = stored.split_at(at);
    Some((v, u64::from_le_bytes(e.try_into().ok()?)))
}

/// The expiry of a value written at second `now` that must live at least
/// `ttl`: `now + ceil(ttl) + 1` (a write late in second `now` still lives
/// `ttl`), or `now` for a zero `ttl` (expired at once).
#[inline]
pub(crate) fn expiry_after(now: u64, ttl: std::time::Duration) -> u64 {
    if ttl.is_zero() {
        return now;
    }
    let secs = ttl.as_secs() + u64::from(ttl.subsec_nanos() > 0);
    now.saturating_add(secs).saturating_add(1)
}

/// True when an entry expiring at `expiry` is gone at `now`.
#[inline]
pub(crate) fn expired(expiry: u64, now: u64) -> bool {
    expiry <= now
}

#[cfg(test)]
mod tests;
