//! The typed records of table and blob file events (`table_file_creation`
//! with RocksDB's `table_properties`, `table_file_deletion`,
//! `blob_file_deletion`): see `records` for how a record becomes a LOG
//! line and a listener call.

use super::notifier::Event;
use super::{TableFileCreationInfo, TableFileCreationReason, TableFileDeletionInfo, TableFileInfo};
use crate::error::Error;
use serde::Serialize;
use std::path::PathBuf;

use super::records::{creation_reason, status, Kind, Record};

/// The `table_properties` object of `table_file_creation`: RocksDB's names
/// and order, the properties Shale's tables store.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct TablePropertiesRecord {
    pub data_size: u64,
    pub index_size: u64,
    pub filter_size: u64,
    pub raw_key_size: u64,
    pub raw_average_key_size: u64,
    pub raw_value_size: u64,
    pub raw_average_value_size: u64,
    pub num_data_blocks: u64,
    pub num_entries: u64,
    pub num_deletions: u64,
    pub num_range_deletions: u64,
    pub format_version: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column_family_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column_family_id: Option<u32>,
    pub prefix_extractor_name: String,
    pub compression: String,
    pub creation_time: u64,
    pub newest_key_time: u64,
    pub db_id: String,
    pub orig_file_number: u64,
}

/// `table_file_creation`: a flush or compaction wrote (and synced) a
/// table (RocksDB's, `EventHelpers::LogAndNotifyTableFileCreationFinished`;
/// no file checksum). Written for every table a job writes, a discarded
/// run's too. The listeners' `on_table_file_created`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TableFileCreation {
    pub cf_name: String,
    pub job: u64,
    pub event: Kind<Self>,
    pub file_number: u64,
    pub file_size: u64,
    pub smallest_seqno: u64,
    pub largest_seqno: u64,
    pub table_properties: TablePropertiesRecord,
    /// The smallest blob file the table references (absent: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oldest_blob_file_number: Option<u64>,
    #[serde(serialize_with = "status")]
    pub status: Result<(), Error>,
    pub cf: u32,
    /// The level the job installs the table in.
    pub level: usize,
    /// `table_properties.num_entries` and `.num_deletions` (Shale's older
    /// fields).
    pub num_entries: u64,
    pub num_deletions: u64,
    #[serde(serialize_with = "creation_reason")]
    pub reason: TableFileCreationReason,
    /// The file's path (listeners only: the LOG names the directory at
    /// open).
    #[serde(skip)]
    pub file_path: PathBuf,
}

impl Record for TableFileCreation {
    const NAME: &'static str = "table_file_creation";
    fn listener_event(&self) -> Option<Event> {
        Some(Event::TableFileCreated(self.info()))
    }
}

impl TableFileCreation {
    pub(crate) fn info(&self) -> TableFileCreationInfo {
        TableFileCreationInfo {
            cf_name: self.cf_name.clone(),
            cf_id: self.cf,
            job_id: self.job,
            reason: self.reason,
            file: TableFileInfo {
                file_number: self.file_number,
                level: self.level,
                file_size: self.file_size,
            },
            file_path: self.file_path.clone(),
            num_entries: self.num_entries,
        }
    }
}

/// `table_file_deletion`: an obsolete table was deleted, or deleting it
/// failed (RocksDB's, `EventHelpers::LogAndNotifyTableFileDeletion`; no
/// `job`: Shale's deletions belong to no job). The listeners'
/// `on_table_file_deleted`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TableFileDeletion {
    pub event: Kind<Self>,
    pub file_number: u64,
    #[serde(serialize_with = "status")]
    pub status: Result<(), Error>,
    #[serde(skip)]
    pub file_path: PathBuf,
}

impl Record for TableFileDeletion {
    const NAME: &'static str = "table_file_deletion";
    fn listener_event(&self) -> Option<Event> {
        Some(Event::TableFileDeleted(self.info()))
    }
}

impl TableFileDeletion {
    pub(crate) fn info(&self) -> TableFileDeletionInfo {
        TableFileDeletionInfo {
            file_number: self.file_number,
            file_path: self.file_path.clone(),
            status: self.status.clone(),
        }
    }
}

/// `blob_file_deletion`: an obsolete blob file was deleted (RocksDB's,
/// without `job`).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct BlobFileDeletion {
    pub event: Kind<Self>,
    pub file_number: u64,
    #[serde(serialize_with = "status")]
    pub status: Result<(), Error>,
}

impl Record for BlobFileDeletion {
    const NAME: &'static str = "blob_file_deletion";
}
