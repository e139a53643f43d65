//! Options of the `LOG` file (the human-readable info log): its level and
//! rotation, as RocksDB's `info_log_level`, `max_log_file_size` and
//! `keep_log_file_num`. `events::info_log` takes the narrow [`InfoLogOptions`].

/// Severity of a LOG line; lines below `Options::info_log_level` are not
/// written. Ordered as RocksDB's `InfoLogLevel`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum InfoLogLevel {
    /// Detail for debugging the engine.
    Debug,
    /// What the engine does: opens, recoveries, flushes, compactions (the
    /// `EVENT_LOG_v1` lines are at this level). The default.
    Info,
    /// Something unexpected the engine worked around.
    Warn,
    /// An operation failed (background errors, listener panics).
    Error,
    /// The DB cannot go on.
    Fatal,
    /// Only the lines written whatever the level (none today: every Shale
    /// line has a level below it).
    Header,
}

impl InfoLogLevel {
    /// The name in the OPTIONS file (RocksDB's spelling).
    pub(crate) fn name(self) -> &'static str {
        match self {
            InfoLogLevel::Debug => "DEBUG_LEVEL",
            InfoLogLevel::Info => "INFO_LEVEL",
            InfoLogLevel::Warn => "WARN_LEVEL",
            InfoLogLevel::Error => "ERROR_LEVEL",
            InfoLogLevel::Fatal => "FATAL_LEVEL",
            InfoLogLevel::Header => "HEADER_LEVEL",
        }
    }
}

/// What `events::info_log` needs of `Options`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct InfoLogOptions {
    pub level: InfoLogLevel,
    /// Rotate before a line would take `LOG` past this many bytes (0:
    /// never).
    pub max_file_size: u64,
    /// Old logs (`LOG.old.<micros>`) kept; older ones are deleted.
    pub keep_file_num: usize,
}
