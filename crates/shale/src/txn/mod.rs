//! Reading writes before they are committed: [`WriteBatchWithIndex`], a
//! write batch with an ordered index of its keys, readable alone or laid
//! over the DB at a snapshot (`wbwi.rs`); its index (`index.rs`); and the
//! cursor merging it with a DB cursor (`base_delta.rs`). Transactions will
//! build on it here.
//!
//! Layering: above `db` (it reads through `Db`'s cursors and point reads),
//! below `ops`. Thread safety and invariants: see each file.

mod base_delta;
mod index;
mod wbwi;

pub use base_delta::{WbwiIterator, WbwiRange};
pub use wbwi::{BatchRead, WriteBatchWithIndex, WriteType};
