"""Options changed while the DB is open (RocksDB's SetOptions and
SetDBOptions): applied and read back, or refused whole with
InvalidArgumentError."""

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
        ({"max_background_jobs": 4}, "set_db_options"),
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


def test_the_prefix_extractor_changes_while_open(path):
    with pytest.raises(shale.InvalidArgumentError, match="prefix_extractor"):
        shale.DB(path, prefix_extractor="rocksdb.SomePrefix.2")
    with shale.DB(path, bloom_bits_per_key=10, prefix_extractor="rocksdb.FixedPrefix.2") as db:
        assert db.get_options()["prefix_extractor"] == "rocksdb.FixedPrefix.2"
        db.set_options({"prefix_extractor": "nullptr"})
        assert db.get_options()["prefix_extractor"] == "nullptr"
        for i in range(300):
            db[b"%c%04d" % (97 + i % 3, i)] = b"v"
        db.flush()
        db.set_options({"prefix_extractor": "rocksdb.FixedPrefix.1", "whole_key_filtering": False})
        for i in range(300, 600):
            db[b"%c%04d" % (97 + i % 3, i)] = b"v"
        db.flush()
        db.set_options({"prefix_extractor": "rocksdb.CappedPrefix.2"})
        # Tables filtered by no extractor, by the old one and (after this
        # flush) by the new one: every key is found, in order.
        db.flush()
        assert all(db.get(b"%c%04d" % (97 + i % 3, i)) == b"v" for i in range(600))
        assert [k for k, _ in db.items(prefix=b"b")] == sorted(
            b"b%04d" % i for i in range(600) if i % 3 == 1
        )
        with pytest.raises(shale.InvalidArgumentError):
            db.set_options({"prefix_extractor": "rocksdb.NoSuchPrefix.1"})


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


# set_db_options: DB-wide options (RocksDB's SetDBOptions), read back from
# the [DBOptions] section of the newest OPTIONS file.


def options_file(path):
    """The newest OPTIONS-NNNNNN file of the DB at path."""
    files = glob.glob(os.path.join(path, "OPTIONS-*"))
    assert files
    return max(files, key=lambda f: int(os.path.basename(f).split("-", 1)[1]))


def db_options_section(path):
    """The [DBOptions] section of the newest OPTIONS file, as name -> text."""
    with open(options_file(path)) as f:
        text = f.read()
    section, out = None, {}
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
        elif section == "DBOptions" and "=" in line:
            k, v = line.split("=", 1)
            out[k] = v
    assert out, text
    return out


def test_db_options_change_and_show_in_the_options_file(db, path):
    before = db_options_section(path)
    assert before["delayed_write_rate"] != "1048576"
    assert before["max_background_jobs"] != "4"
    db.set_db_options({"delayed_write_rate": 1048576, "max_background_jobs": 4})
    assert db_options_section(path) == {
        **before,
        "delayed_write_rate": "1048576",
        "max_background_jobs": "4",
    }
    db[b"k"] = b"v"
    assert db[b"k"] == b"v"


def test_every_db_option_changes_with_values_of_each_type(db, path):
    before = db_options_section(path)
    db.set_db_options(
        {
            "max_background_jobs": "3",  # text as in the OPTIONS file
            "max_subcompactions": 2,
            "delayed_write_rate": 8 << 20,
            "max_total_wal_size": 256 << 20,
            "bytes_per_sync": 1 << 20,
            "wal_bytes_per_sync": 512 << 10,
            "compaction_readahead_size": 4 << 20,
        }
    )
    changed = {
        "max_background_jobs": "3",
        "max_subcompactions": "2",
        "delayed_write_rate": str(8 << 20),
        "max_total_wal_size": str(256 << 20),
        "bytes_per_sync": str(1 << 20),
        "wal_bytes_per_sync": str(512 << 10),
        "compaction_readahead_size": str(4 << 20),
    }
    if "max_total_wal_size" not in before:
        # The engine takes it but does not write it in the OPTIONS file.
        del changed["max_total_wal_size"]
    assert db_options_section(path) == {**before, **changed}


def test_a_family_object_changes_the_whole_db(path):
    with shale.DB(path) as db:
        users = db.create_column_family("users")
        before = db_options_section(path)
        users.set_db_options({"max_subcompactions": 3})
        assert db_options_section(path) == {**before, "max_subcompactions": "3"}


def test_db_options_last_until_the_db_is_closed(path):
    with shale.DB(path) as db:
        opened_with = db_options_section(path)
        db.set_db_options({"delayed_write_rate": 1048576, "max_background_jobs": 4})
        assert db_options_section(path)["delayed_write_rate"] == "1048576"
    with shale.DB(path):
        assert db_options_section(path) == opened_with


@pytest.mark.parametrize(
    "changes, match",
    [
        # A family's option, a DB-wide one fixed while open, an unknown one.
        ({"write_buffer_size": 1 << 20}, "write_buffer_size"),
        ({"max_open_files": 100}, "max_open_files"),
        ({"no_such_option": 1}, "no_such_option"),
        ({"delayed_write_rate": 0}, "delayed_write_rate"),
        ({"max_subcompactions": 0}, "max_subcompactions"),
        ({"max_background_jobs": 0}, "max_background_jobs"),
        ({"max_background_jobs": "many"}, "max_background_jobs"),
        ({"delayed_write_rate": -1}, "delayed_write_rate"),
        ({"delayed_write_rate": 1.5}, "delayed_write_rate"),
        ({"bytes_per_sync": True}, "bytes_per_sync"),
        ({}, "no option given"),
        # Good values do not apply beside a refused one.
        (
            {"delayed_write_rate": 1048576, "max_background_jobs": 4, "max_subcompactions": 0},
            "max_subcompactions",
        ),
        ({"max_background_jobs": 4, "write_buffer_size": 1 << 20}, "write_buffer_size"),
    ],
)
def test_refused_db_option_changes_change_nothing(db, path, changes, match):
    before_file = options_file(path)
    before = db_options_section(path)
    with pytest.raises(shale.InvalidArgumentError, match=match):
        db.set_db_options(changes)
    assert options_file(path) == before_file
    assert db_options_section(path) == before
    # A later good change still applies.
    db.set_db_options({"delayed_write_rate": 1048576})
    assert db_options_section(path) == {**before, "delayed_write_rate": "1048576"}


def test_db_option_values_of_other_types_are_type_errors(db, path):
    before = db_options_section(path)
    for value in (None, b"4", [4], {"a": 4}):
        with pytest.raises(TypeError, match="max_background_jobs"):
            db.set_db_options({"max_background_jobs": value})
    with pytest.raises(TypeError):
        db.set_db_options({4: 4})
    with pytest.raises(TypeError):
        db.set_db_options([("max_background_jobs", 4)])
    assert db_options_section(path) == before


def test_writes_and_reads_after_raising_and_lowering_background_jobs(path):
    value = b"v" * 100
    with shale.DB(path, write_buffer_size=64 << 10, level0_file_num_compaction_trigger=2) as db:
        db.set_db_options({"max_background_jobs": 8, "max_subcompactions": 4})
        for i in range(4000):
            db[b"a%05d" % i] = value
        db.wait_for_compaction()
        db.set_db_options({"max_background_jobs": 1, "max_subcompactions": 1})
        for i in range(4000):
            db[b"b%05d" % i] = value
        for i in range(0, 4000, 2):
            del db[b"a%05d" % i]
        db.flush()
        db.wait_for_compaction()
        assert db_options_section(path)["max_background_jobs"] == "1"
        assert all(db.get(b"a%05d" % i) == (None if i % 2 == 0 else value) for i in range(4000))
        assert all(db[b"b%05d" % i] == value for i in range(4000))
        assert sum(1 for _ in db.keys()) == 6000
        db.set_db_options({"max_background_jobs": 6})
        db.compact_range()
        assert sum(1 for _ in db.keys()) == 6000
        assert db[b"b03999"] == value
    with shale.DB(path) as db:
        assert sum(1 for _ in db.keys()) == 6000
