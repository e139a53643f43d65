//! The typed records of events outside jobs: a family's stall condition
//! changing, families created and dropped, options changed (see `records`
//! for how a record becomes a LOG line and a listener call).

use super::notifier::Event;
use super::{WriteStallCondition, WriteStallInfo};
use serde::Serialize;

use super::records::{stall, Kind, Record};

/// `stall_condition_changed` (Shale's; RocksDB tells only listeners): a
/// family's write stall condition changed. The listeners'
/// `on_stall_conditions_changed`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct StallConditionChanged {
    pub event: Kind<Self>,
    pub cf: u32,
    #[serde(serialize_with = "stall")]
    pub prev: WriteStallCondition,
    #[serde(serialize_with = "stall")]
    pub cur: WriteStallCondition,
    /// What holds writers now (`none` when `cur` is `Normal`).
    pub cause: &'static str,
    pub cf_name: String,
}

impl Record for StallConditionChanged {
    const NAME: &'static str = "stall_condition_changed";
    fn listener_event(&self) -> Option<Event> {
        Some(Event::StallConditionsChanged(self.info()))
    }
}

impl StallConditionChanged {
    pub(crate) fn info(&self) -> WriteStallInfo {
        WriteStallInfo {
            cf_name: self.cf_name.clone(),
            cf_id: self.cf,
            prev: self.prev,
            cur: self.cur,
        }
    }
}

/// `column_family_created` (Shale's).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ColumnFamilyCreated {
    pub event: Kind<Self>,
    pub id: u32,
    pub name: String,
}

impl Record for ColumnFamilyCreated {
    const NAME: &'static str = "column_family_created";
}

/// `column_family_dropped` (Shale's).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ColumnFamilyDropped {
    pub event: Kind<Self>,
    pub id: u32,
    pub name: String,
}

impl Record for ColumnFamilyDropped {
    const NAME: &'static str = "column_family_dropped";
}

/// `options_changed` (Shale's): `Db::set_options_cf` succeeded.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct OptionsChanged {
    pub event: Kind<Self>,
    /// The family's name.
    pub cf: String,
    /// `name=value ...` as given.
    pub changes: String,
}

impl Record for OptionsChanged {
    const NAME: &'static str = "options_changed";
}

/// `db_options_changed` (Shale's): `Db::set_db_options` succeeded.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct DbOptionsChanged {
    pub event: Kind<Self>,
    pub changes: String,
}

impl Record for DbOptionsChanged {
    const NAME: &'static str = "db_options_changed";
}
