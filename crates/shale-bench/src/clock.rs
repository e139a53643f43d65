//! Time sources: a monotonic microsecond clock for measurements and wall
//! time for seeds and log-line timestamps. Thread-safe.

use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Monotonic microseconds since the first call in this process.
#[inline]
pub fn now_micros() -> u64 {
    epoch().elapsed().as_micros() as u64
}

/// Wall-clock microseconds since the Unix epoch.
pub fn wall_micros() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

/// Local time as db_bench's `TimeToString`: `YYYY/MM/DD-HH:MM:SS`.
pub fn time_string(unix_secs: i64) -> String {
    // SAFETY: `tm` is plain data; localtime_r only writes into it and
    // reads the time_t we pass by pointer.
    let tm = unsafe {
        let t: libc::time_t = unix_secs as libc::time_t;
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&t, &mut tm);
        tm
    };
    format!(
        "{:04}/{:02}/{:02}-{:02}:{:02}:{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    )
}

/// Local time as C's `ctime` without the newline (db_bench's `Date:` line).
pub fn ctime_string(unix_secs: i64) -> String {
    let mut buf = [0 as libc::c_char; 64];
    // SAFETY: ctime_r writes at most 26 bytes plus NUL into `buf` (64 bytes).
    let s = unsafe {
        let t: libc::time_t = unix_secs as libc::time_t;
        if libc::ctime_r(&t, buf.as_mut_ptr()).is_null() {
            return String::new();
        }
        std::ffi::CStr::from_ptr(buf.as_ptr())
    };
    s.to_string_lossy().trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_and_formatted() {
        let a = now_micros();
        let b = now_micros();
        assert!(b >= a);
        let s = time_string(0);
        assert_eq!(s.len(), 19);
        assert_eq!(&s[4..5], "/");
        assert_eq!(&s[10..11], "-");
        assert!(ctime_string(0).contains("19")); // 1969 or 1970 depending on TZ
        assert!(wall_micros() > 1_600_000_000_000_000);
    }
}
