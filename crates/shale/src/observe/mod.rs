//! What the DB reports about itself, read from every subsystem: the
//! `Db::property` strings (`properties`), the typed `Db::stats` report
//! (`stats_report`) and the explanation of a write stall
//! (`stall_explain`). The writing side of observability (LOG lines,
//! listener events, counters) sits low, in `events/` and `stats/`, where
//! every job can reach it; this side sits above the jobs it reads.

pub(crate) mod cache_properties;
pub(crate) mod properties;
pub(crate) mod stall_explain;
pub(crate) mod stats_report;
