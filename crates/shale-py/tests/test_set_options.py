"""Options changed while the DB is open (RocksDB's SetOptions): applied and
read back, or refused whole with InvalidArgumentError."""

import glob
import os

import pytest

import shale


def test_a_change_reads_back(db):
    before = db.get_options()
    assert before["disable_auto_compactions"] is False
    db.set_options(
        {
            "write_buffer_size": 8 << 20,
            "disable_auto_compactions": True,
            "level0_file_num_compaction_trigger": 2,
            "level0_slowdown_writes_trigger": 10,
            "level0_stop_writes_trigger": 30,
            "target_file_size_base": 4 << 20,
            "max_bytes_for_level_base": 32 << 20,
            "max_bytes_for_level_multiplier": 8.5,
            "compression_per_level": "NoCompression:LZ4",
            "bottommost_compression": "ZSTD",
            "max_write_buffer_number": "4",  # text as in the OPTIONS file
        }
    )
    after = db.get_options()
    assert after == {
        **before,
        "write_buffer_size": 8 << 20,
        "disable_auto_compactions": True,
        "level0_file_num_compaction_trigger": 2,
        "level0_slowdown_writes_trigger": 10,
        "level0_stop_writes_trigger": 30,
        "target_file_size_base": 4 << 20,
        "max_bytes_for_level_base": 32 << 20,
        "max_bytes_for_level_multiplier": 8.5,
        "compression_per_level": "NoCompression:LZ4",
        "bottommost_compression": "ZSTD",
        "max_write_buffer_number": 4,
    }
    db.set_options({"disable_auto_compactions": False})
    assert db.get_options()["disable_auto_compactions"] is False


def test_get_options_fed_back_changes_nothing(db):
    db.set_options({"compression": "lz4", "bottommost_compression": "Disabled"})
    opts = db.get_options()
    assert opts["compression_per_level"] == "LZ4"
    assert opts["bottommost_compression"] == "Disabled"
    db.set_options(opts)
    assert db.get_options() == opts


@pytest.mark.parametrize(
    "changes, match",
    [
        ({"no_such_option": 1}, "unknown option"),
        ({"compaction_style": "universal"}, "compaction_style cannot change"),
        ({"merge_operator": "max"}, "merge_operator cannot change"),
        ({"block_align": True}, "block_align cannot change"),
        ({"write_buffer_size": "big"}, "write_buffer_size"),
        ({"write_buffer_size": -1}, "write_buffer_size"),
        ({"write_buffer_size": 1.5}, "write_buffer_size"),
        ({"disable_auto_compactions": "yes"}, "disable_auto_compactions"),
        ({"compression_per_level": "Snappy"}, "snappy"),
        ({"write_buffer_size": 100}, "write_buffer_size 100 < 4096"),
        # Valid alone, refused together with the default stop trigger.
        ({"level0_slowdown_writes_trigger": 1000}, "L0 triggers"),
        ({"cache_size": 1 << 20}, "DB-wide"),
        ({}, "no option given"),
    ],
)
def test_refused_changes_change_nothing(db, changes, match):
    before = db.get_options()
    with pytest.raises(shale.InvalidArgumentError, match=match):
        db.set_options(changes)
    assert db.get_options() == before


def test_a_refused_change_refuses_the_whole_dict(db):
    before = db.get_options()
    for bad in ({"compaction_style": "fifo"}, {"no_such_option": "1"}, {"write_buffer_size": "x"}):
        with pytest.raises(shale.InvalidArgumentError):
            db.set_options({"write_buffer_size": 1 << 20, "disable_auto_compactions": True, **bad})
        assert db.get_options() == before


def test_values_of_other_types_are_type_errors(db):
    before = db.get_options()
    for value in (None, b"1048576", [1], {"a": 1}):
        with pytest.raises(TypeError, match="write_buffer_size"):
            db.set_options({"write_buffer_size": value})
    with pytest.raises(TypeError):
        db.set_options({1: 2})
    with pytest.raises(TypeError):
        db.set_options([("write_buffer_size", 1 << 20)])
    assert db.get_options() == before


def test_a_family_changes_alone_and_keeps_it_after_reopen(path):
    with shale.DB(path) as db:
        users = db.create_column_family("users")
        users.set_options({"write_buffer_size": 1 << 20, "level0_file_num_compaction_trigger": 3})
        # The same through cf= (a DB object of the family, as in WriteBatch).
        db.set_options({"max_bytes_for_level_base": 16 << 20}, cf=users)
        db.set_options({"level0_stop_writes_trigger": 77})
        u = users.get_options()
        assert (u["write_buffer_size"], u["level0_file_num_compaction_trigger"]) == (1 << 20, 3)
        assert u["max_bytes_for_level_base"] == 16 << 20
        assert db.get_options(cf=users) == u
        assert u["level0_stop_writes_trigger"] != 77
        d = db.get_options()
        assert d["level0_stop_writes_trigger"] == 77
        assert d["write_buffer_size"] != 1 << 20
        assert users.get_options(cf=db) == d
        with pytest.raises(shale.InvalidArgumentError, match="users"):
            users.set_options({"compaction_style": "universal"})
        assert users.get_options() == u
        users[b"k"] = b"v"
        users.flush()
    with shale.DB(path) as db:
        users = db.column_family("users")
        # A family's changes are persisted; the default family reopens with
        # the options shale.DB() is given.
        assert users.get_options() == u
        assert users[b"k"] == b"v"
        assert db.get_options()["level0_stop_writes_trigger"] != 77


def test_keyword_names_of_open_are_taken(path):
    with shale.DB(path, compaction_style="universal") as db:
        db.set_options(
            {
                "compression": "zstd",
                "universal_size_ratio": 10,
                "universal_stop_style": "similar_size",
                "universal_allow_trivial_move": True,
            }
        )
        assert db.get_options()["compression_per_level"] == "ZSTD"
        with pytest.raises(shale.InvalidArgumentError, match="sst_partitioner"):
            db.set_options({"sst_partitioner_fixed_prefix_len": 4})
        (options_file,) = glob.glob(os.path.join(path, "OPTIONS-*"))
        with open(options_file) as f:
            text = f.read()
        assert "compaction_options_universal.size_ratio=10\n" in text
        assert "compaction_options_universal.stop_style=kCompactionStopStyleSimilarSize\n" in text
        assert "compaction_options_universal.allow_trivial_move=true\n" in text
        assert "compression_per_level=ZSTD\n" in text


def test_writes_and_reads_after_a_smaller_write_buffer(path):
    value = b"v" * 100
    with shale.DB(path, disable_auto_compactions=True) as db:
        for i in range(2000):
            db[b"a%05d" % i] = value
        assert db.property("shale.num-files-at-level0") == "0"  # one 64 MiB memtable
        db.set_options({"write_buffer_size": 64 << 10})
        for i in range(6000):
            db[b"b%05d" % i] = value
        # ~700 KB through 64 KiB memtables: about a dozen flushes, below the
        # slowdown trigger (20 L0 files).
        flushed = int(db.property("shale.num-files-at-level0"))
        assert flushed >= 6, flushed
        assert all(db[b"a%05d" % i] == value for i in range(2000))
        assert all(db[b"b%05d" % i] == value for i in range(6000))
        assert sum(1 for _ in db.keys()) == 8000
        # Auto compactions back on: L0 is compacted down at once.
        db.set_options({"disable_auto_compactions": False})
        db.wait_for_compaction()
        assert int(db.property("shale.num-files-at-level0")) < flushed
        assert db.get(b"a00042") == value and db.get(b"b05999") == value
    with shale.DB(path) as db:
        assert sum(1 for _ in db.keys()) == 8000


def test_a_family_of_another_db_or_a_dropped_one_is_refused(path):
    with shale.DB(path) as a, shale.DB(path + "-b") as b:
        fb = b.create_column_family("f")
        with pytest.raises(shale.InvalidArgumentError, match="another DB"):
            a.set_options({"write_buffer_size": 1 << 20}, cf=fb)
        with pytest.raises(shale.InvalidArgumentError, match="another DB"):
            a.get_options(cf=fb)
        b.drop_column_family("f")
        with pytest.raises(shale.InvalidArgumentError, match="dropped"):
            fb.set_options({"write_buffer_size": 1 << 20})
        with pytest.raises(shale.InvalidArgumentError, match="dropped"):
            fb.get_options()
        with pytest.raises(TypeError):
            a.set_options({"write_buffer_size": 1 << 20}, cf=a.snapshot())
