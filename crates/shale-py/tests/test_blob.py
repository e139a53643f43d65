"""Key-value separation (blob files) through keyword options: values
round-trip through blob files, the blob properties read as numbers, bad
values are refused by name."""

import random

import pytest

import shale

BLOB = dict(
    enable_blob_files=True,
    min_blob_size=100,
    blob_file_size=256 << 10,
    write_buffer_size=64 << 10,
)

BLOB_PROPERTIES = [
    "shale.num-blob-files",
    "shale.total-blob-file-size",
    "shale.live-blob-file-size",
    "shale.live-blob-file-garbage-size",
    "shale.blob-cache-hits",
    "shale.blob-cache-misses",
    "shale.blob-reads",
    "shale.blob-bytes-read",
]


def value(i, n=1000):
    """Incompressible bytes, the same for the same i."""
    return random.Random(i).randbytes(n)


def fill(db, n=400, size=1000):
    for i in range(n):
        db[b"k%05d" % i] = value(i, size)[:size]
    db[b"small"] = b"tiny"  # under min_blob_size: stays in the table
    db.flush()


def check(db, n=400, size=1000):
    for i in range(n):
        assert db[b"k%05d" % i] == value(i, size)[:size]
    assert db[b"small"] == b"tiny"
    got = list(db.items(start=b"k", stop=b"k1"))
    assert [k for k, _ in got] == [b"k%05d" % i for i in range(n)]
    assert all(v == value(i, size)[:size] for i, (_, v) in enumerate(got))


@pytest.mark.parametrize("compression", ["none", "lz4", "zstd"])
def test_values_round_trip_through_blob_files(path, compression):
    with shale.DB(path, blob_compression_type=compression, **BLOB) as db:
        fill(db)
        assert int(db.property("shale.num-blob-files")) > 0
        assert int(db.property("shale.live-blob-file-size")) >= 400 * 1000 // 2
        check(db)
        db.compact_range()
        check(db)
        assert db.get_many([b"k00007", b"small", b"none"]) == [value(7)[:1000], b"tiny", None]
    # The options of each open apply: reopened with them, new writes go to
    # blob files; reopened without, the blobs written before still read
    # and new values stay in the tables (as RocksDB).
    with shale.DB(path, blob_compression_type=compression, **BLOB) as db:
        check(db)
        before = int(db.property("shale.num-blob-files"))
        db[b"k99999"] = b"x" * 500
        db.flush()
        assert int(db.property("shale.num-blob-files")) == before + 1
    with shale.DB(path) as db:
        check(db)
        before = int(db.property("shale.num-blob-files"))
        db[b"k99998"] = b"y" * 500
        db.flush()
        assert int(db.property("shale.num-blob-files")) == before
        assert db[b"k99999"] == b"x" * 500 and db[b"k99998"] == b"y" * 500


def test_blob_properties_read_as_numbers(path):
    with shale.DB(
        path,
        enable_blob_garbage_collection=True,
        blob_garbage_collection_age_cutoff=1.0,
        blob_garbage_collection_force_threshold=0.5,
        blob_compaction_readahead_size=64 << 10,
        prepopulate_blob_cache="flush_only",
        cache_size=8 << 20,
        **BLOB,
    ) as db:
        fill(db)
        # Overwrite everything: the first generation of blobs is garbage,
        # and collection (cutoff 1.0: every blob file) relocates the rest.
        fill(db, size=900)
        db.compact_range()
        check(db, size=900)
        numbers = {p: db.property(p) for p in BLOB_PROPERTIES}
        assert all(v is not None and int(v) >= 0 for v in numbers.values()), numbers
        assert int(numbers["shale.num-blob-files"]) > 0
        assert int(numbers["shale.blob-reads"]) > 0
        assert float(db.property("shale.blob-space-amp")) >= 1.0
        # Flushes put their blobs in the cache (flush_only): reads hit.
        assert int(numbers["shale.blob-cache-hits"]) > 0
        # RocksDB's names answer too.
        assert db.property("rocksdb.num-blob-files") == numbers["shale.num-blob-files"]


def test_min_garbage_ratio_leaves_files_without_garbage_in_place(path):
    # Every blob file is below the cutoff (1.0), none holds garbage: with
    # the ratio nothing is relocated, without it every blob is.
    for ratio, relocated in [(0.5, False), (0.0, True)]:
        with shale.DB(
            f"{path}-{ratio}",
            enable_blob_garbage_collection=True,
            blob_garbage_collection_age_cutoff=1.0,
            blob_garbage_collection_min_garbage_ratio=ratio,
            **BLOB,
        ) as db:
            fill(db)
            db.compact_range()
            before = int(db.property("shale.blob-reads"))
            db.compact_range()
            # A relocation reads each of the 400 blobs.
            assert (int(db.property("shale.blob-reads")) - before >= 400) == relocated
            check(db)


def test_blob_files_start_at_a_level(path):
    # No automatic compaction: the flushes' tables stay in level 0.
    no_compaction = dict(
        level0_file_num_compaction_trigger=100,
        level0_slowdown_writes_trigger=200,
        level0_stop_writes_trigger=300,
    )
    with shale.DB(path, blob_file_starting_level=1, **no_compaction, **BLOB) as db:
        fill(db, size=900)
        fill(db)
        # Flushes write level 0: no blob file yet.
        assert db.property("shale.num-blob-files") == "0"
        # The two fills overlap: compacting them rewrites the values into
        # level 1 and below, where they go to blob files (a file moved down
        # without a rewrite keeps its values, as in RocksDB).
        db.compact_range()
        assert int(db.property("shale.num-blob-files")) > 0
        check(db)


def test_column_family_blob_options(path):
    with shale.DB(path) as db:
        cf = db.create_column_family("big", **BLOB)
        fill(cf)
        check(cf)
        fill(db)
        check(db)
        assert int(cf.property("shale.num-blob-files")) > 0
        assert db.property("shale.num-blob-files") == "0"


@pytest.mark.parametrize(
    "kw, exc, match",
    [
        ({"blob_file_size": 0}, shale.InvalidArgumentError, "blob_file_size"),
        ({"blob_garbage_collection_age_cutoff": 1.5}, shale.InvalidArgumentError, "age_cutoff"),
        ({"blob_garbage_collection_force_threshold": -0.1}, shale.InvalidArgumentError, "force_threshold"),
        ({"blob_garbage_collection_min_garbage_ratio": 2.0}, shale.InvalidArgumentError, "min_garbage_ratio"),
        ({"blob_compression_type": "snappy"}, shale.InvalidArgumentError, "snappy"),
        ({"prepopulate_blob_cache": "always"}, shale.InvalidArgumentError, "prepopulate_blob_cache"),
        (
            {"enable_blob_files": True, "compaction_style": "fifo", "fifo_max_table_files_size": 1 << 30},
            shale.InvalidArgumentError,
            "FIFO",
        ),
        ({"min_blob_size": -1}, OverflowError, None),
        ({"enable_blob_files": "yes"}, TypeError, None),
        ({"blob_garbage_collection_age_cutoff": "half"}, TypeError, None),
    ],
)
def test_bad_blob_options_are_refused(path, kw, exc, match):
    with pytest.raises(exc, match=match):
        shale.DB(path, **kw)
    with shale.DB(path) as db:
        with pytest.raises(exc, match=match):
            db.create_column_family("cf", **kw)
