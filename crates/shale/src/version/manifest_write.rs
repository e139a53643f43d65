//! `ManifestWrite`: one MANIFEST write, prepared by `VersionSet::begin_apply`
//! under the DB mutex, performed by `run` without it, and completed by
//! `VersionSet::finish_apply` under the mutex again (RocksDB's
//! `LogAndApply`, which releases the DB mutex for the MANIFEST IO).
//!
//! Invariants:
//! - At most one `ManifestWrite` exists per `VersionSet` at a time: while it
//!   is in flight the MANIFEST writer lives here, not in the set, and
//!   `begin_apply` refuses to prepare another (the DB queues callers on a
//!   condition variable, see `shared/manifest.rs`).
//! - Everything `run` needs (the encoded records, the new version, the file
//!   numbers) was captured by `begin_apply`; `run` reads no `VersionSet`
//!   state, so the set may be read (and file numbers handed out) meanwhile.
//! - A roll writes the new MANIFEST (snapshot + the edit), syncs it, switches
//!   CURRENT, and only then deletes the previous MANIFEST. If the write
//!   fails before CURRENT was touched the new file is removed; once
//!   `set_current` was attempted CURRENT may name either file, so both stay
//!   (`current_attempted` tells `finish_apply` to protect the new one).
//!
//! Thread-safety: owned by one thread; `run` does IO only.

use std::path::PathBuf;
use std::sync::Arc;

use crate::base::FileNum;
use crate::error::Result;
use crate::fs::FileSystem;
use crate::wal::LogWriter;

use super::current::set_current;
use super::filename::manifest_file_name;
use super::version::Version;

/// What one edit does to the set once written (see `VersionSet::finish_apply`).
pub(crate) enum Change {
    /// A new family with its first version.
    Add {
        cf: u32,
        name: String,
        options: String,
        version: Arc<Version>,
        log_number: FileNum,
    },
    /// A dropped family.
    Drop { cf: u32 },
    /// A family's new version, log number or options.
    Update {
        cf: u32,
        version: Option<Arc<Version>>,
        log_number: Option<FileNum>,
        options: Option<String>,
    },
}

/// A roll to a new MANIFEST.
pub(crate) struct Roll {
    /// Number of the new MANIFEST.
    pub number: FileNum,
    /// The encoded snapshot edits (the new file's first records).
    pub snapshot: Vec<Vec<u8>>,
    /// The MANIFEST CURRENT named when the roll was prepared (0: none).
    pub previous: FileNum,
}

/// One prepared MANIFEST write; see the module comment.
pub(crate) struct ManifestWrite {
    pub(super) fs: Arc<dyn FileSystem>,
    pub(super) dir: PathBuf,
    /// The live writer (an append), or after a successful roll the new one.
    pub(super) writer: Option<LogWriter>,
    pub(super) roll: Option<Roll>,
    /// The encoded edits (none for a bare roll at create/recover).
    pub(super) records: Vec<Vec<u8>>,
    /// What to install once the write succeeded, one per edit.
    pub(super) changes: Vec<Change>,
    pub(super) prev_log_number: Option<FileNum>,
    /// The largest `min_log_number_to_keep` of the edits.
    pub(super) min_log_number_to_keep: Option<FileNum>,
    /// Tables the edit adds: kept if the write fails (it may have reached
    /// the disk).
    pub(super) added: Vec<FileNum>,
    /// `set_current` was called (CURRENT may name the new MANIFEST).
    pub(super) current_attempted: bool,
}

impl ManifestWrite {
    /// Leaves the MANIFEST a roll switches away from in place (file
    /// deletions are disabled: the obsolete-file sweep removes it once
    /// they are enabled again).
    pub(crate) fn keep_previous_manifest(&mut self) {
        if let Some(roll) = &mut self.roll {
            roll.previous = 0;
        }
    }

    /// Appends and syncs (or rolls). IO only: call it without the DB mutex.
    pub(crate) fn run(&mut self) -> Result<()> {
        let Some(roll) = &self.roll else {
            let Some(w) = self.writer.as_mut() else {
                return Err(crate::error::Error::InvalidArgument(
                    "no MANIFEST writer".into(),
                ));
            };
            for rec in &self.records {
                w.add_record(rec)?;
            }
            return w.sync();
        };
        let path = self.dir.join(manifest_file_name(roll.number));
        let written = (|| {
            let mut writer = LogWriter::new(self.fs.create(&path)?, roll.number);
            for rec in roll.snapshot.iter().chain(&self.records) {
                writer.add_record(rec)?;
            }
            writer.sync()?;
            Ok(writer)
        })();
        let writer = match written {
            Ok(w) => w,
            Err(e) => {
                // CURRENT does not name it yet: remove it (best effort).
                let _ = self.fs.remove(&path);
                return Err(e);
            }
        };
        self.current_attempted = true;
        set_current(self.fs.as_ref(), &self.dir, roll.number)?;
        self.writer = Some(writer);
        if roll.previous != 0 && roll.previous != roll.number {
            // Best effort: a leftover MANIFEST is obsolete and is removed by
            // the DB's obsolete-file sweep.
            let _ = self
                .fs
                .remove(&self.dir.join(manifest_file_name(roll.previous)));
        }
        Ok(())
    }
}
