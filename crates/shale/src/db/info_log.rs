//! The `LOG` file: human-readable lines plus one `EVENT_LOG_v1 {json}` line
//! per flush, compaction, trivial move, file creation and deletion.
//!
//! Logging never fails an operation: write errors are ignored (the LOG is
//! advisory). Thread safety: one mutex around the file.

use std::path::Path;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;

use crate::fs::{FileSystem, WritableFile};

pub(crate) struct InfoLog {
    file: Mutex<Option<Box<dyn WritableFile>>>,
}

/// `YYYY/MM/DD-HH:MM:SS.uuuuuu` in UTC.
pub(crate) fn timestamp() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let secs = now.as_secs() as i64;
    let (y, m, d) = civil_from_days(secs.div_euclid(86400));
    let sod = secs.rem_euclid(86400);
    format!(
        "{y:04}/{m:02}/{d:02}-{:02}:{:02}:{:02}.{:06}",
        sod / 3600,
        (sod / 60) % 60,
        sod % 60,
        now.subsec_micros()
    )
}

/// Days since 1970-01-01 to (year, month, day) (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Escapes a string for a JSON string literal.
pub(crate) fn json_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o
}

impl InfoLog {
    /// Opens `dir/LOG`, keeping the previous one as `LOG.old`.
    pub(crate) fn open(fs: &Arc<dyn FileSystem>, dir: &Path) -> InfoLog {
        let path = dir.join("LOG");
        if fs.exists(&path) {
            let _ = fs.rename(&path, &dir.join("LOG.old"));
        }
        InfoLog {
            file: Mutex::new(fs.create(&path).ok()),
        }
    }

    fn line(&self, level: &str, msg: &str) {
        let mut f = self.file.lock();
        if let Some(f) = f.as_mut() {
            let l = format!("{} {level} {msg}\n", timestamp());
            let _ = f.append(l.as_bytes());
            let _ = f.flush();
        }
    }

    pub(crate) fn info(&self, msg: &str) {
        self.line("[INFO]", msg);
    }

    pub(crate) fn warn(&self, msg: &str) {
        self.line("[WARN]", msg);
    }

    pub(crate) fn error(&self, msg: &str) {
        self.line("[ERROR]", msg);
    }

    /// Logs an `EVENT_LOG_v1` line. `fields` are pre-rendered JSON members
    /// (`"key": value`), appended after `time_micros` and `event`.
    pub(crate) fn event(&self, event: &str, fields: &[String]) {
        let micros = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_micros();
        let mut json = format!(
            "{{\"time_micros\": {micros}, \"event\": \"{}\"",
            json_escape(event)
        );
        for f in fields {
            json.push_str(", ");
            json.push_str(f);
        }
        json.push('}');
        self.line("EVENT_LOG_v1", &json);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_escaping() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_000), (2024, 10, 4));
        assert_eq!(json_escape("a\"b\\c\n"), "a\\\"b\\\\c\\u000a");
        let ts = timestamp();
        assert_eq!(ts.len(), 26);
    }
}
