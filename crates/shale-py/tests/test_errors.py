"""Errors: LOCK held, damaged files, closed DBs."""

import glob
import os

import pytest

import shale


def test_second_open_gets_locked_error(db, path):
    with pytest.raises(shale.LockedError):
        shale.DB(path)
    assert issubclass(shale.LockedError, shale.Error)


def test_flipped_byte_in_a_table_is_corruption_with_file_and_offset(path):
    with shale.DB(path, compression="none") as db:
        for i in range(2000):
            db[b"k%05d" % i] = b"value-%05d" % i
        db.flush()
    tables = glob.glob(os.path.join(path, "*.sst"))
    assert len(tables) == 1
    with open(tables[0], "r+b") as f:
        f.seek(100)  # inside the first data block
        b = f.read(1)
        f.seek(100)
        f.write(bytes([b[0] ^ 0xFF]))
    with shale.DB(path) as db:
        with pytest.raises(shale.CorruptionError) as e:
            db[b"k00001"]
        assert os.path.basename(tables[0]) in e.value.file
        assert e.value.offset == 0  # the block's offset in the file
        assert isinstance(e.value, shale.Error)
        with pytest.raises(shale.CorruptionError):
            list(db.items())
        # Keys in other blocks still read.
        assert db[b"k01999"] == b"value-01999"


def test_closed_db_raises_closed_error(path):
    db = shale.DB(path)
    db[b"a"] = b"1"
    fam = db.create_column_family("f")
    snap = db.snapshot()
    db.close()
    for call in (
        lambda: db[b"a"],
        lambda: db.put(b"a", b"2"),
        lambda: fam.get(b"a"),
        lambda: snap.get(b"a"),
        lambda: db.flush(),
        lambda: list(db.keys()),
        lambda: db.snapshot(),
        lambda: db.stats(),
        lambda: db.property("shale.stats"),
        lambda: db.column_families(),
        lambda: db.column_family("f"),
        lambda: fam.stats(),
        lambda: db.create_column_family("g"),
        lambda: db.get_many([b"a"]),
        lambda: db.compact_range(),
        lambda: db.set_options({"write_buffer_size": 1 << 20}),
        lambda: db.get_options(),
        lambda: fam.set_options({"write_buffer_size": 1 << 20}),
        lambda: db.set_db_options({"max_background_jobs": 4}),
        lambda: fam.set_db_options({"max_background_jobs": 4}),
    ):
        with pytest.raises(shale.ClosedError):
            call()
    # The LOCK is released: the DB opens again at once.
    with shale.DB(path) as again:
        assert again[b"a"] == b"1"


def test_exception_hierarchy():
    for cls in (shale.CorruptionError, shale.LockedError, shale.InvalidArgumentError, shale.ClosedError):
        assert issubclass(cls, shale.Error)
    assert issubclass(shale.Error, Exception)


def test_read_only_open_beside_a_writer_reads_and_refuses_changes(db, path):
    db[b"k"] = b"v"
    db.flush()
    db[b"tail"] = b"unflushed"
    with shale.DB(path, read_only=True) as ro:
        assert ro[b"k"] == b"v"
        assert ro[b"tail"] == b"unflushed"
        with pytest.raises(shale.Error, match="read-only"):
            ro[b"x"] = b"y"
    with pytest.raises(shale.InvalidArgumentError):
        shale.DB(os.path.join(path, "absent"), read_only=True)
