"""Shale, an embedded LSM-tree key-value store, for Python.

    import shale
    with shale.DB("/tmp/mydb") as db:
        db[b"k"] = b"v"
        assert db[b"k"] == b"v"
        for key, value in db.iter(prefix=b"k"):
            ...

Keys and values are bytes; str is accepted and encoded as UTF-8. See the
type stubs (__init__.pyi) for the whole API.
"""

from ._shale import (
    DB,
    BackupEngine,
    ClosedError,
    CorruptionError,
    Error,
    InvalidArgumentError,
    Iterator,
    LockedError,
    Reader,
    Snapshot,
    WriteBatch,
    list_column_families,
    write_sst,
)

__all__ = [
    "DB",
    "BackupEngine",
    "ClosedError",
    "CorruptionError",
    "Error",
    "InvalidArgumentError",
    "Iterator",
    "LockedError",
    "Reader",
    "Snapshot",
    "WriteBatch",
    "list_column_families",
    "write_sst",
]
