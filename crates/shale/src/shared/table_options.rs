//! The SST options of a job's output tables (flush or compaction): the
//! family's options for the level written, with the DB's path and the
//! family's id and name recorded in each table.

use crate::options::CfOptions;
use crate::sst::TableOptions;

use super::{DbInner, DbState};

/// SST options for files written to `level` of family `cf` (with `opts`;
/// its name recorded in each table as the family was named in `st`).
pub(crate) fn table_options(
    db: &DbInner,
    st: &DbState,
    cf: u32,
    opts: &CfOptions,
    level: usize,
    bottommost: bool,
) -> TableOptions {
    let mut t = opts.table_options(
        level,
        opts.compression_for_level(level, bottommost),
        &db.dir.display().to_string(),
    );
    t.column_family = st.versions.family(cf).map(|f| (cf, f.name.clone()));
    t
}
