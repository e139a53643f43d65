//! The LSM cost model behind `shale advise`: from a workload, a device and
//! a memory budget, the predicted write-, space- and read-amplification,
//! memory and device time of leveled, universal and FIFO configurations,
//! and the measured shape to compare them with. One concept per module:
//!
//! - `workload`: the inputs and the per-entry byte overheads;
//! - `shape`: what a style model predicts (runs, write-amp terms, space);
//! - `leveled`, `universal`, `fifo`: the three style models;
//! - `bloom`: false-positive rates and the Monkey allocation;
//! - `estimate`: read-amp, memory and device time from a shape;
//! - `rank`: ordering the candidates (FIFO only when the data expires);
//! - `costs`: what each candidate costs, in words;
//! - `actual`: the measured shape of a DB or a `shale-bench --json` run;
//! - `compare`: predicted vs measured for one `shale-bench --json` record.
//!
//! Pure functions of their inputs (no IO except in `actual`), documented
//! with their formulas in docs/ADVISOR.md. The model never calls the
//! engine's compaction code: it predicts what a style should do.

pub mod actual;
pub mod bloom;
pub mod compare;
pub mod costs;
pub mod estimate;
pub mod fifo;
pub mod leveled;
pub mod rank;
pub mod shape;
pub mod universal;
pub mod workload;
