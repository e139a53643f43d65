"""Type stubs of the `shale` module (the API is implemented in Rust, `_shale`)."""

from os import PathLike
from types import TracebackType
from typing import Any, Iterable, Optional, Type, TypeVar, Union, final, overload

from typing_extensions import disjoint_base

_Key = Union[bytes, bytearray, str]
"""Keys and values: bytes (read in place), bytearray (copied) or str (UTF-8)."""

_T = TypeVar("_T")

class Error(Exception):
    """Base class of every Shale error."""

class CorruptionError(Error):
    """Damaged data: `file` and `offset` name where it was found."""

    file: str
    offset: int

class LockedError(Error):
    """The DB's LOCK is held by another open DB."""

class InvalidArgumentError(Error):
    """An argument or option the engine refuses."""

class ClosedError(Error):
    """The DB is closed, or the snapshot released."""

@final
class Iterator:
    """Keys, values or (key, value) tuples in key order (or reverse)."""

    def __iter__(self) -> "Iterator": ...
    def __next__(self) -> Any: ...

@disjoint_base
class Reader:
    """The read API of a DB, a column family and a snapshot."""

    @overload
    def get(self, key: _Key) -> Optional[bytes]: ...
    @overload
    def get(self, key: _Key, default: _T) -> Union[bytes, _T]: ...
    def __getitem__(self, key: _Key, /) -> bytes: ...
    def __contains__(self, key: _Key, /) -> bool: ...
    def get_many(self, keys: Iterable[_Key]) -> list[Optional[bytes]]: ...
    def iter(
        self,
        start: Optional[_Key] = None,
        stop: Optional[_Key] = None,
        prefix: Optional[_Key] = None,
        reverse: bool = False,
    ) -> Iterator:
        """(key, value) tuples from start (inclusive) to stop (exclusive)."""
    def items(
        self,
        start: Optional[_Key] = None,
        stop: Optional[_Key] = None,
        prefix: Optional[_Key] = None,
        reverse: bool = False,
    ) -> Iterator: ...
    def keys(
        self,
        start: Optional[_Key] = None,
        stop: Optional[_Key] = None,
        prefix: Optional[_Key] = None,
        reverse: bool = False,
    ) -> Iterator: ...
    def values(
        self,
        start: Optional[_Key] = None,
        stop: Optional[_Key] = None,
        prefix: Optional[_Key] = None,
        reverse: bool = False,
    ) -> Iterator: ...
    def __iter__(self) -> Iterator: ...

@final
class Snapshot(Reader):
    """A consistent point-in-time view; a context manager releasing it."""

    @property
    def sequence(self) -> Optional[int]: ...
    def release(self) -> None: ...
    def __enter__(self) -> "Snapshot": ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool: ...

@final
class WriteBatch:
    """Writes applied atomically; see DB.write and DB.write_batch."""

    def __init__(self) -> None: ...
    def put(
        self, key: _Key, value: _Key, cf: Optional["DB"] = None, ttl: Optional[float] = None
    ) -> None: ...
    def delete(self, key: _Key, cf: Optional["DB"] = None) -> None: ...
    def single_delete(self, key: _Key, cf: Optional["DB"] = None) -> None: ...
    def merge(self, key: _Key, operand: _Key, cf: Optional["DB"] = None) -> None: ...
    def delete_range(self, start: _Key, end: _Key, cf: Optional["DB"] = None) -> None: ...
    def clear(self) -> None: ...
    def __len__(self) -> int: ...
    def __enter__(self) -> "WriteBatch": ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool: ...

@final
class DB(Reader):
    """An open DB bound to one column family (`default` unless from column_family()).

    Options are RocksDB's names (the table is crates/shale-py/src/keywords.rs,
    checked against the engine's option list). Per family: write_buffer_size,
    max_write_buffer_number, memtable_bloom_size_ratio, block_size,
    block_restart_interval, block_restart_bytes, block_align (bool),
    block_size_deviation, bloom_bits_per_key, bloom_bits_per_key_per_level
    (list of float, by output level), whole_key_filtering (bool),
    memtable_whole_key_filtering (bool),
    prefix_extractor ("rocksdb.FixedPrefix.<n>", "rocksdb.CappedPrefix.<n>";
    prefix bloom filters for items(prefix=...) and prefix seeks; changes with
    set_options too), compression ("none", "lz4",
    "zstd"), bottommost_compression, level0_file_num_compaction_trigger,
    level0_slowdown_writes_trigger, level0_stop_writes_trigger,
    max_bytes_for_level_base, max_bytes_for_level_multiplier,
    level_compaction_dynamic_level_bytes (bool), target_file_size_base,
    target_file_size_multiplier, max_compaction_bytes,
    level_compaction_dynamic_file_size (bool),
    soft_pending_compaction_bytes_limit, hard_pending_compaction_bytes_limit,
    merge_operator ("uint64add",
    "max", "stringappend", "stringappend:<delimiter>"), default_ttl_secs,
    compaction_style ("level", "universal", "fifo"), universal_size_ratio,
    universal_min_merge_width, universal_max_merge_width,
    universal_max_size_amplification_percent,
    universal_compression_size_percent, universal_stop_style
    ("similar_size", "total_size"), universal_allow_trivial_move,
    universal_incremental (bool; needs num_levels >= 3),
    fifo_max_table_files_size, fifo_allow_compaction, fifo_ttl; key-value
    separation (RocksDB's integrated BlobDB): enable_blob_files (bool),
    min_blob_size (int), blob_file_size (int), blob_compression_type ("none",
    "lz4", "zstd"), enable_blob_garbage_collection (bool),
    blob_garbage_collection_age_cutoff (float, 0..1),
    blob_garbage_collection_force_threshold (float, 0..1),
    blob_compaction_readahead_size (int), blob_file_starting_level (int),
    prepopulate_blob_cache ("disable", "flush_only"). Blobs are cached in the
    block cache (cache_size) at bottom priority; the properties
    shale.num-blob-files, shale.total-blob-file-size,
    shale.live-blob-file-size, shale.live-blob-file-garbage-size,
    shale.blob-space-amp, shale.blob-cache-hits, shale.blob-cache-misses,
    shale.blob-reads and shale.blob-bytes-read describe them.
    DB-wide: error_if_exists, paranoid_checks, manual_wal_flush, num_levels,
    max_background_jobs, max_subcompactions, cache_size, cache_type ("lru",
    "clock"), max_open_files, db_write_buffer_size, memory_budget, max_total_wal_size,
    create_missing_column_families, use_direct_reads,
    use_direct_io_for_flush_and_compaction, advise_random_on_open,
    compaction_readahead_size, bytes_per_sync, wal_bytes_per_sync,
    recycle_log_file_num, rate_limiter_bytes_per_sec (0: none), wal_recovery_mode
    ("PointInTime", "AbsoluteConsistency", "TolerateCorruptedTailRecords",
    "SkipAnyCorruptedRecords"), wal_mmap_writes, allow_concurrent_memtable_write,
    delayed_write_rate, max_bgerror_resume_count, bgerror_resume_retry_interval,
    cache_numshardbits, cache_high_pri_pool_ratio, cache_low_pri_pool_ratio,
    cache_strict_capacity_limit, cache_index_and_filter_blocks,
    max_auto_readahead_size, info_log_level ("DEBUG_LEVEL", "INFO_LEVEL", ...),
    max_log_file_size, keep_log_file_num, allow_ingest_behind. Any other name raises
    InvalidArgumentError.

    While the DB is open, set_options() changes a family's options
    (RocksDB's SetOptions) and get_options() reads the main ones back;
    set_db_options() changes DB-wide ones (RocksDB's SetDBOptions).
    """

    def __new__(
        cls,
        path: Union[str, "PathLike[str]"],
        create_if_missing: bool = True,
        read_only: bool = False,
        **options: Any,
    ) -> "DB": ...
    @property
    def path(self) -> str: ...
    @property
    def name(self) -> str: ...
    def put(self, key: _Key, value: _Key, *, ttl: Optional[float] = None, sync: bool = False) -> None: ...
    def __setitem__(self, key: _Key, value: _Key, /) -> None: ...
    def delete(self, key: _Key, *, sync: bool = False) -> None: ...
    def __delitem__(self, key: _Key, /) -> None: ...
    def single_delete(self, key: _Key, *, sync: bool = False) -> None: ...
    def merge(self, key: _Key, operand: _Key, *, sync: bool = False) -> None: ...
    def delete_range(self, start: _Key, end: _Key, *, sync: bool = False) -> None: ...
    def write(self, batch: WriteBatch, *, sync: bool = False, disable_wal: bool = False) -> None: ...
    def write_batch(self, *, sync: bool = False, disable_wal: bool = False) -> WriteBatch: ...
    def snapshot(self) -> Snapshot: ...
    def flush(self) -> None: ...
    def flush_wal(self, sync: bool = False) -> None: ...
    def compact_range(self, start: Optional[_Key] = None, end: Optional[_Key] = None) -> None: ...
    def reclaim(self, start: Optional[_Key] = None, end: Optional[_Key] = None) -> int: ...
    def latest_sequence_number(self) -> int: ...
    def checkpoint(
        self, dir: Union[str, "PathLike[str]"], *, log_size_for_flush: int = 0
    ) -> dict[str, Union[int, bool]]: ...
    def ingest(
        self,
        files: list[Union[str, "PathLike[str]"]],
        *,
        move_files: bool = False,
        snapshot_consistency: bool = True,
        allow_global_seqno: bool = True,
        allow_blocking_flush: bool = True,
        verify_checksums_before_ingest: bool = False,
        fail_if_not_bottommost_level: bool = False,
        ingest_behind: bool = False,
    ) -> None: ...
    def wait_for_compaction(self) -> None: ...
    def property(self, name: str) -> Optional[str]: ...
    def stats(self) -> dict[str, Any]: ...
    def set_options(
        self, options: dict[str, Union[str, int, float, bool]], cf: Optional["DB"] = None
    ) -> None:
        """Changes options of this family (or of cf, a family of this DB) while open.

        Names are the OPTIONS file's (write_buffer_size,
        disable_auto_compactions, level0_file_num_compaction_trigger,
        compression_per_level, compaction_options_universal.size_ratio,
        enable_blob_files, ...) or shale.DB()'s keyword names (compression,
        universal_*, fifo_*). Values are str (the OPTIONS file's text, e.g.
        "NoCompression:LZ4"), bool, int or float. All apply or none: an
        unknown name, one that changes only on reopen (compaction_style,
        merge_operator, block_align, ...), a DB-wide name,
        a bad value or a refused combination raises InvalidArgumentError and
        changes nothing; a value of another type raises TypeError. The
        default family's changes last until the DB is closed (it reopens
        with the options given to shale.DB()); another family's persist.
        """
    def set_db_options(self, options: dict[str, Union[str, int, float, bool]]) -> None:
        """Changes DB-wide options while the DB is open (RocksDB's SetDBOptions).

        Names are the OPTIONS file's [DBOptions] ones that change while
        open: max_background_jobs (more background threads start at once;
        fewer lets the extra ones idle), max_subcompactions,
        delayed_write_rate (bytes/s while writes are slowed down),
        max_total_wal_size, bytes_per_sync and wal_bytes_per_sync (for
        files started after), compaction_readahead_size. Values are str
        (the OPTIONS file's text), bool, int or float. All apply or none:
        an empty dict, any other name (a family's option such as
        write_buffer_size goes to set_options), a bad value or a refused
        one (delayed_write_rate=0, max_subcompactions=0) raises
        InvalidArgumentError and changes nothing; a value of another type
        raises TypeError. Changes show in a new OPTIONS file and last until
        the DB is closed (it reopens with the options given to shale.DB()).
        Called on any family's DB object, it changes the whole DB's.
        """
    def get_options(self, cf: Optional["DB"] = None) -> dict[str, Any]:
        """The current options of this family (or of cf) that set_options most often changes.

        Keys: write_buffer_size, max_write_buffer_number,
        disable_auto_compactions, level0_file_num_compaction_trigger,
        level0_slowdown_writes_trigger, level0_stop_writes_trigger,
        target_file_size_base, target_file_size_multiplier,
        max_bytes_for_level_base, max_bytes_for_level_multiplier,
        max_compaction_bytes, soft_pending_compaction_bytes_limit,
        hard_pending_compaction_bytes_limit, block_size, bloom_bits_per_key,
        whole_key_filtering, prefix_extractor ("nullptr" for none),
        compression_per_level and bottommost_compression (the OPTIONS file's
        text), default_ttl_secs. set_options(get_options()) changes nothing.
        """
    def column_families(self) -> list[str]: ...
    def column_family(self, name: str) -> "DB": ...
    def create_column_family(self, name: str, **options: Any) -> "DB": ...
    def export_column_family(
        self, cf: str, dir: Union[str, "PathLike[str]"]
    ) -> dict[str, Any]: ...
    def create_column_family_with_import(
        self,
        name: str,
        dir: Union[str, "PathLike[str]"],
        *,
        move_files: bool = False,
        **options: Any,
    ) -> "DB": ...
    def drop_column_family(self, name: str) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> "DB": ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool: ...

def list_column_families(path: Union[str, "PathLike[str]"]) -> list[str]: ...
def write_sst(
    path: Union[str, "PathLike[str]"], items: Iterable[tuple[_Key, _Key]]
) -> dict[str, Any]:
    """Writes (key, value) pairs in strictly increasing key order into an external table for DB.ingest."""

@final
class BackupEngine:
    """Incremental backups of DBs in one directory; read_only=True allows list, verify and restore."""

    def __new__(
        cls,
        dir: Union[str, "PathLike[str]"],
        *,
        read_only: bool = False,
        backup_rate_limit: Optional[int] = None,
        restore_rate_limit: Optional[int] = None,
    ) -> "BackupEngine": ...
    def create_backup(self, db: DB, metadata: str = "") -> int: ...
    def list(self) -> list[dict[str, Any]]: ...
    def verify(self, id: int) -> None: ...
    def restore(self, id: int, target: Union[str, "PathLike[str]"]) -> None: ...
    def backup_wals(self, db: DB) -> dict[str, int]: ...
    def restore_to(
        self, target: Union[str, "PathLike[str]"], sequence: int
    ) -> dict[str, int]: ...
    def restore_to_time(
        self, target: Union[str, "PathLike[str]"], timestamp: float
    ) -> dict[str, int]: ...
    def delete(self, id: int) -> None: ...
    def purge_old(self, keep: int) -> None: ...

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
