//! A Prometheus endpoint for a Shale DB: [`serve`] answers `GET /metrics`
//! with `Db::stats()` in the text exposition format (OpenMetrics text, as
//! `prometheus-client`'s encoder writes it), every metric `shale_`
//! prefixed; see docs/METRICS.md for the names, types and labels.
//!
//! Thread safety: one server thread answers requests one at a time; each
//! scrape reads `Db::stats()` (the DB mutex briefly, as a property) and
//! builds its registry afresh, so the endpoint keeps no state of its own.
//! The server holds a clone of the `Db`: the DB stays open until the
//! server is stopped (or dropped), which joins its thread.

mod encode;
mod error;
mod server;

pub use encode::render;
pub use error::Error;
pub use server::{serve, MetricsServer};
