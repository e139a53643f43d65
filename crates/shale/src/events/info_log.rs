//! The `LOG` file: human-readable lines plus `EVENT_LOG_v1 {json}` lines,
//! one per event of a flush, compaction, trivial move, file creation and
//! deletion, stall condition change, family and option change. Each is a
//! typed record of `records` serialized by serde_json with RocksDB's
//! `JSONWriter` spacing, `time_micros` first (docs/format/log-events.md).
//!
//! Rotation (RocksDB's): at open an existing `LOG` is renamed
//! `LOG.old.<micros>`, and so is the live one before a line would take it
//! past `max_log_file_size` (when non-zero); then the oldest `LOG.old.*`
//! beyond `keep_log_file_num` are deleted. So `LOG` never exceeds the
//! bound unless a single line does, and at most `keep_log_file_num` old
//! logs remain. Lines below `info_log_level` are dropped before
//! formatting.
//!
//! Logging never fails an operation: write and rotation errors are ignored
//! (the LOG is advisory). Thread safety: one mutex around the file and its
//! size; rotation runs under it (the DB mutex may be held by the caller,
//! as for every LOG line: a rename and a directory listing per
//! `max_log_file_size` bytes).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;

use serde::Serialize;

use super::log_options::{InfoLogLevel, InfoLogOptions};
use super::records::Record;
use crate::fs::{FileSystem, WritableFile};

/// Prefix of rotated logs; the suffix is the rotation time in micros.
const OLD_PREFIX: &str = "LOG.old.";

pub(crate) struct InfoLog {
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    opts: InfoLogOptions,
    file: Mutex<LogFile>,
}

struct LogFile {
    file: Option<Box<dyn WritableFile>>,
    /// Bytes in the live `LOG`.
    size: u64,
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

/// serde_json's compact output with RocksDB's `JSONWriter` spacing: `", "`
/// between members and array elements, `": "` after a key
/// (`{"time_micros": 1, "files": [1, 2]}`).
struct RocksDbJson;

impl serde_json::ser::Formatter for RocksDbJson {
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }
}

/// An event line's object: `time_micros`, then the record's members.
#[derive(Serialize)]
struct Stamped<'a, R> {
    time_micros: u64,
    #[serde(flatten)]
    record: &'a R,
}

/// The JSON object of an `EVENT_LOG_v1` line for `record` at `time_micros`.
pub(crate) fn event_json<R: Record>(time_micros: u64, record: &R) -> String {
    let mut out = Vec::with_capacity(256);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, RocksDbJson);
    // Records hold numbers, strings, lists and maps with string keys:
    // serializing them does not fail; if it ever did, the LOG (advisory,
    // see the module header) gets the error in place of the members.
    let stamped = Stamped {
        time_micros,
        record,
    };
    if let Err(e) = stamped.serialize(&mut ser) {
        return format!(
            "{{\"time_micros\": {time_micros}, \"error\": {:?}}}",
            e.to_string()
        );
    }
    // serde_json writes UTF-8.
    String::from_utf8_lossy(&out).into_owned()
}

fn now_micros() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_micros() as u64
}

impl InfoLog {
    /// Opens `dir/LOG`, rotating an existing one to `LOG.old.<micros>`.
    pub(crate) fn open(fs: &Arc<dyn FileSystem>, dir: &Path, opts: InfoLogOptions) -> InfoLog {
        let log = InfoLog {
            fs: Arc::clone(fs),
            dir: dir.to_path_buf(),
            opts,
            file: Mutex::new(LogFile {
                file: None,
                size: 0,
            }),
        };
        {
            let mut f = log.file.lock();
            log.rotate(&mut f);
        }
        log
    }

    /// Renames a live `LOG` to a fresh `LOG.old.<micros>`, starts a new
    /// one and deletes the oldest old logs beyond `keep_file_num`.
    fn rotate(&self, f: &mut LogFile) {
        f.file = None; // closed before the rename
        let path = self.dir.join("LOG");
        if self.fs.exists(&path) {
            let mut micros = now_micros();
            while self
                .fs
                .exists(&self.dir.join(format!("{OLD_PREFIX}{micros}")))
            {
                micros += 1;
            }
            let _ = self
                .fs
                .rename(&path, &self.dir.join(format!("{OLD_PREFIX}{micros}")));
        }
        f.file = self.fs.create(&path).ok();
        f.size = 0;
        self.purge_old();
    }

    fn purge_old(&self) {
        let Ok(names) = self.fs.list(&self.dir) else {
            return;
        };
        let mut old: Vec<(u64, String)> = names
            .into_iter()
            .filter_map(|n| Some((n.strip_prefix(OLD_PREFIX)?.parse().ok()?, n)))
            .collect();
        if old.len() <= self.opts.keep_file_num {
            return;
        }
        old.sort();
        let excess = old.len() - self.opts.keep_file_num;
        for (_, n) in old.into_iter().take(excess) {
            let _ = self.fs.remove(&self.dir.join(n));
        }
    }

    fn enabled(&self, level: InfoLogLevel) -> bool {
        level >= self.opts.level
    }

    fn line(&self, level: InfoLogLevel, tag: &str, msg: &str) {
        if !self.enabled(level) {
            return;
        }
        let l = format!("{} {tag} {msg}\n", timestamp());
        let mut f = self.file.lock();
        let max = self.opts.max_file_size;
        if max > 0 && f.size > 0 && f.size + l.len() as u64 > max {
            self.rotate(&mut f);
        }
        if let Some(file) = f.file.as_mut() {
            let ok = file.append(l.as_bytes()).is_ok();
            let _ = file.flush();
            if ok {
                f.size += l.len() as u64;
            }
        }
    }

    pub(crate) fn info(&self, msg: &str) {
        self.line(InfoLogLevel::Info, "[INFO]", msg);
    }

    pub(crate) fn warn(&self, msg: &str) {
        self.line(InfoLogLevel::Warn, "[WARN]", msg);
    }

    pub(crate) fn error(&self, msg: &str) {
        self.line(InfoLogLevel::Error, "[ERROR]", msg);
    }

    /// Logs `record` as an `EVENT_LOG_v1` line: a JSON object of
    /// `time_micros` and the record's fields (see `records`).
    pub(crate) fn event<R: Record>(&self, record: &R) {
        if !self.enabled(InfoLogLevel::Info) {
            return;
        }
        let json = event_json(now_micros(), record);
        self.line(InfoLogLevel::Info, "EVENT_LOG_v1", &json);
    }
}

#[cfg(test)]
mod tests;
