//! What the DB's handle (`db/`) and its background jobs (`flush/`,
//! `compaction/`, `bg/`) share: the DB's state ([`DbInner`], with
//! [`DbState`] under the DB mutex) and the steps every one of them takes on
//! it: logging a version edit to the MANIFEST (`manifest`), switching a
//! memtable and its WAL (`memtables`, `wal_files`), deleting obsolete
//! files (`obsolete`) or archiving WALs (`wal_archive`), point-in-time records in the WAL
//! (`wal_marks`), recording a background error (`errors`), reporting
//! events to the LOG and the listeners (`events`), when writes stall
//! (`stall`), the options of a job's output tables (`table_options`), and
//! the glue that hands the blob files to the readers and writers
//! (`blob_glue`). The background-error severities are `error_state`.
//!
//! Nothing here starts a job or calls a job's runner: the scheduler (`bg/`)
//! does, so this layer sits below flush and compaction and the jobs call
//! down into it.

pub(crate) mod blob_glue;
pub(crate) mod error_state;
pub(crate) mod errors;
pub(crate) mod events;
mod inner;
pub(crate) mod manifest;
pub(crate) mod memtables;
pub(crate) mod obsolete;
pub(crate) mod stall;
pub(crate) mod table_options;
pub(crate) mod wal_archive;
pub(crate) mod wal_files;
pub(crate) mod wal_marks;

pub(crate) use error_state::Reason;
pub(crate) use inner::{DbInner, DbState};
