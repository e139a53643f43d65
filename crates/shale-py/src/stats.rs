//! The engine properties `db.stats()` gathers into a dict.
//!
//! Only properties whose value is one integer; names as the engine's without
//! the `shale.` prefix. `estimate-num-keys` is an estimate (the engine has
//! no exact live key count), which is also why `DB` has no `__len__`.

/// Integer-valued per-family properties, without the `shale.` prefix.
pub const NUMERIC: &[&str] = &[
    "estimate-num-keys",
    "total-sst-files-size",
    "live-sst-files-size",
    "cur-size-all-mem-tables",
    "cur-size-active-mem-table",
    "num-entries-active-mem-table",
    "num-immutable-mem-table",
    "mem-table-flush-pending",
    "size-all-mem-tables-db",
    "num-running-compactions",
    "num-running-flushes",
    "compaction-pending",
    "estimate-pending-compaction-bytes",
    "compaction-bytes-written",
    "delete-only-bytes",
    "num-column-families",
    "live-wal-files",
    "live-wal-bytes",
    "background-errors",
    "bg-error-recovery-count",
    "is-write-stopped",
    "stall-micros",
    "base-level",
    "num-snapshots",
    "last-sequence",
    "merge-failures",
    "single-delete-mismatches",
];
