//! Process and file-system measurements for the summary line: CPU time
//! (getrusage), IO bytes (/proc/self/io), peak RSS (VmHWM, reset per
//! benchmark through /proc/self/clear_refs when the kernel allows it) and
//! the size of the DB directory. Linux-specific; on other systems the
//! /proc figures read as absent. Thread-safe (no state).

use std::path::Path;

/// CPU time of the whole process (all threads), user + system, in µs.
pub fn cpu_micros() -> u64 {
    // SAFETY: `ru` is plain data that getrusage fills in.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut ru) != 0 {
            return 0;
        }
        ru
    };
    let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Counters of /proc/self/io.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IoCounters {
    /// Bytes read through read-like calls (including page-cache hits).
    pub rchar: u64,
    /// Bytes passed to write-like calls.
    pub wchar: u64,
    /// Bytes fetched from storage.
    pub read_bytes: u64,
    /// Bytes sent (or to be sent) to storage.
    pub write_bytes: u64,
    /// Dirty bytes truncated before writeback.
    pub cancelled_write_bytes: u64,
}

impl IoCounters {
    /// Parses the text of /proc/<pid>/io.
    pub fn parse(text: &str) -> IoCounters {
        let mut c = IoCounters::default();
        for line in text.lines() {
            let Some((k, v)) = line.split_once(':') else {
                continue;
            };
            let v: u64 = v.trim().parse().unwrap_or(0);
            match k.trim() {
                "rchar" => c.rchar = v,
                "wchar" => c.wchar = v,
                "read_bytes" => c.read_bytes = v,
                "write_bytes" => c.write_bytes = v,
                "cancelled_write_bytes" => c.cancelled_write_bytes = v,
                _ => {}
            }
        }
        c
    }

    /// This process's counters (None where /proc/self/io is missing).
    pub fn read() -> Option<IoCounters> {
        std::fs::read_to_string("/proc/self/io")
            .ok()
            .map(|t| IoCounters::parse(&t))
    }

    /// `self − earlier`, saturating.
    pub fn delta(&self, earlier: &IoCounters) -> IoCounters {
        IoCounters {
            rchar: self.rchar.saturating_sub(earlier.rchar),
            wchar: self.wchar.saturating_sub(earlier.wchar),
            read_bytes: self.read_bytes.saturating_sub(earlier.read_bytes),
            write_bytes: self.write_bytes.saturating_sub(earlier.write_bytes),
            cancelled_write_bytes: self
                .cancelled_write_bytes
                .saturating_sub(earlier.cancelled_write_bytes),
        }
    }

    /// Bytes that reached (or will reach) storage: write_bytes minus
    /// cancelled writeback.
    pub fn net_write_bytes(&self) -> u64 {
        self.write_bytes.saturating_sub(self.cancelled_write_bytes)
    }
}

fn status_kib(field: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Peak resident set size in bytes since the last `reset_peak_rss`.
pub fn peak_rss_bytes() -> Option<u64> {
    status_kib("VmHWM:").map(|k| k * 1024)
}

/// Current resident set size in bytes.
pub fn rss_bytes() -> Option<u64> {
    status_kib("VmRSS:").map(|k| k * 1024)
}

/// Resets the peak RSS to the current RSS (Linux ≥ 4.0); false if refused.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Total apparent size of the regular files under `dir` (recursive).
pub fn dir_size(dir: &Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut total = 0;
    for e in rd.flatten() {
        let Ok(md) = e.metadata() else { continue };
        if md.is_dir() {
            total += dir_size(&e.path());
        } else if md.is_file() {
            total += md.len();
        }
    }
    total
}

/// `<n> * <model>` and the cache size from /proc/cpuinfo (db_bench's
/// `CPU:` and `CPUCache:` lines).
pub fn cpu_info() -> (String, String) {
    let text = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let mut n = 0;
    let mut model = String::new();
    let mut cache = String::new();
    for l in text.lines() {
        if let Some((k, v)) = l.split_once(':') {
            match k.trim() {
                "model name" => {
                    n += 1;
                    model = v.trim().to_string();
                }
                "cache size" => cache = v.trim().to_string(),
                _ => {}
            }
        }
    }
    (format!("{n} * {model}"), cache)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_io() {
        let t = "rchar: 10\nwchar: 20\nsyscr: 1\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 4096\n";
        let c = IoCounters::parse(t);
        assert_eq!(
            c,
            IoCounters {
                rchar: 10,
                wchar: 20,
                read_bytes: 4096,
                write_bytes: 8192,
                cancelled_write_bytes: 4096
            }
        );
        assert_eq!(c.net_write_bytes(), 4096);
        let d = c.delta(&IoCounters {
            wchar: 5,
            ..IoCounters::default()
        });
        assert_eq!(d.wchar, 15);
    }

    #[test]
    fn measures_this_process() {
        let before = cpu_micros();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_add(i * i);
        }
        assert!(x > 0);
        assert!(cpu_micros() >= before);
        if cfg!(target_os = "linux") {
            assert!(peak_rss_bytes().unwrap() > 0);
            assert!(rss_bytes().unwrap() > 0);
            assert!(IoCounters::read().is_some());
        }
    }

    #[test]
    fn dir_size_sums_files_recursively() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a"), vec![0u8; 100]).unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        std::fs::write(d.path().join("sub/b"), vec![0u8; 23]).unwrap();
        assert_eq!(dir_size(d.path()), 123);
        assert_eq!(dir_size(&d.path().join("missing")), 0);
    }
}
