"""Keyword options: applied, or refused by name; never ignored."""

import pytest

import shale


def test_known_options_open(path):
    with shale.DB(
        path,
        write_buffer_size=1 << 20,
        max_write_buffer_number=3,
        bloom_bits_per_key=12,
        compression="lz4",
        bottommost_compression="zstd",
        cache_size=8 << 20,
        cache_type="clock",
        max_background_jobs=2,
        max_subcompactions=2,
        num_levels=5,
        manual_wal_flush=False,
        default_ttl_secs=0,
        memory_budget=16 << 20,
        advise_random_on_open=True,
        compaction_readahead_size=1 << 20,
        bytes_per_sync=1 << 20,
        wal_bytes_per_sync=1 << 20,
        recycle_log_file_num=2,
        rate_limiter_bytes_per_sec=64 << 20,
        detect_insert_streams=False,
        sst_partitioner_fixed_prefix_len=4,
    ) as db:
        db[b"a"] = b"1"
        db.flush()
        assert db[b"a"] == b"1"
        assert db.stats()["num_files_at_level"] and len(db.stats()["num_files_at_level"]) == 5


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"no_such_option": 1}, "unknown option 'no_such_option'"),
        ({"compression": "snappy"}, "snappy"),
        ({"cache_type": "arc"}, "cache_type"),
        ({"merge_operator": "sum"}, "merge_operator"),
        ({"write_buffer_size": 0}, "write_buffer_size"),
        ({"memory_budget": 1 << 19}, "memory_budget"),
        ({"compaction_style": "universal", "detect_insert_streams": True}, "detect_insert_streams"),
        ({"block_align": True, "compression": "lz4"}, "block_align"),
        ({"block_align": True, "block_size": 3000}, "block_align"),
        ({"block_size_deviation": 101}, "block_size_deviation"),
    ],
)
def test_bad_options_are_refused(path, kw, match):
    with pytest.raises(shale.InvalidArgumentError, match=match):
        shale.DB(path, **kw)


def test_block_align(path):
    with shale.DB(path, block_align=True, compression="none", block_size=4096) as db:
        for i in range(2000):
            db[b"k%05d" % i] = b"v" * 300
        db.flush()
        assert all(db[b"k%05d" % i] == b"v" * 300 for i in range(0, 2000, 7))


def test_block_size_deviation(path):
    with shale.DB(path, block_size_deviation=50, compression="none", block_size=4096) as db:
        for i in range(2000):
            db[b"k%05d" % i] = b"v" * 300
        db.flush()
        assert all(db[b"k%05d" % i] == b"v" * 300 for i in range(0, 2000, 7))


def test_disable_auto_compactions(path):
    opts = dict(
        disable_auto_compactions=True,
        level0_file_num_compaction_trigger=2,
        level0_slowdown_writes_trigger=3,
        level0_stop_writes_trigger=4,
    )
    with shale.DB(path, **opts) as db:
        for t in range(6):
            for i in range(100):
                db[b"k%03d" % i] = b"%d" % t
            db.flush()
        db.wait_for_compaction()
        # Past the stop trigger, no stall and no compaction.
        assert db.property("shale.num-files-at-level0") == "6"
        db.compact_range()
        assert db.property("shale.num-files-at-level0") == "0"
        assert db[b"k042"] == b"5"


def test_direct_io_where_the_file_system_takes_it(path):
    try:
        db = shale.DB(path, use_direct_reads=True, use_direct_io_for_flush_and_compaction=True)
    except shale.InvalidArgumentError as e:
        # A file system without O_DIRECT (tmpfs on old kernels, overlay):
        # refused at open, naming the option.
        assert "use_direct" in str(e)
        return
    with db:
        for i in range(1000):
            db[b"k%04d" % i] = b"v" * 100
        db.flush()
        db.compact_range()
        assert db[b"k0500"] == b"v" * 100


def test_wrong_type_is_a_type_error(path):
    with pytest.raises(TypeError):
        shale.DB(path, write_buffer_size="big")


def test_create_if_missing_and_error_if_exists(path):
    with pytest.raises(shale.Error):
        shale.DB(path, create_if_missing=False)
    shale.DB(path).close()
    with pytest.raises(shale.Error):
        shale.DB(path, error_if_exists=True)


def test_universal_compaction_options(path):
    with shale.DB(
        path,
        write_buffer_size=64 << 10,
        compaction_style="universal",
        universal_size_ratio=10,
        universal_min_merge_width=2,
        universal_max_merge_width=8,
        universal_max_size_amplification_percent=150,
        universal_compression_size_percent=-1,
        universal_stop_style="similar_size",
        universal_allow_trivial_move=True,
    ) as db:
        for round in range(8):
            for i in range(500):
                db[b"k%05d" % i] = b"v%d" % round
            db.flush()
        db.compact_range()
        assert db[b"k00042"] == b"v7"
        # One sorted run in the last level after a manual compaction.
        assert db.property("shale.num-sorted-runs") == "1"


def test_universal_incremental(path):
    # Space-amplification merges as slices of the level above the last.
    with shale.DB(
        path,
        write_buffer_size=16 << 10,
        target_file_size_base=16 << 10,
        max_compaction_bytes=64 << 10,
        compaction_style="universal",
        universal_max_size_amplification_percent=50,
        universal_incremental=True,
    ) as db:
        for round in range(20):
            for i in range(1000):
                db[b"k%05d" % i] = b"v%d-" % round + b"x" * 50
            db.flush()
        db.wait_for_compaction()
        assert db[b"k00042"] == b"v19-" + b"x" * 50
        assert int(db.property("shale.num-files-at-level6")) > 1


@pytest.mark.parametrize(
    "kw",
    [
        {"compaction_style": "tiered"},
        {"compaction_style": "universal", "universal_min_merge_width": 1},
        {"universal_stop_style": "sometimes"},
        {"compaction_style": "universal", "universal_incremental": True, "num_levels": 2},
    ],
)
def test_bad_compaction_style_options_are_refused(path, kw):
    with pytest.raises(shale.InvalidArgumentError):
        shale.DB(path, **kw)


def _keywords():
    """The keywords of crates/shale-py/src/keywords.rs, by table."""
    import pathlib
    import re

    text = (pathlib.Path(__file__).parent.parent / "src" / "keywords.rs").read_text()
    tables = {}
    for name in ("CF_KEYWORDS", "DB_KEYWORDS"):
        body = text.split(f"pub const {name}")[1].split("];")[0]
        tables[name] = re.findall(r'\(\s*"([a-z0-9_]+)",\s*"', body)
    return tables


def test_every_keyword_is_applied(path):
    """Each keyword of the table has its own handling: a value of no
    option's type is a TypeError (or an error naming the option), never
    'unknown option' (the engine's workspace test checks the table against
    the engine's option list)."""
    tables = _keywords()
    assert len(tables["CF_KEYWORDS"]) > 40 and len(tables["DB_KEYWORDS"]) > 20
    for kw in tables["CF_KEYWORDS"] + tables["DB_KEYWORDS"]:
        if kw == "create_if_missing":
            continue
        with pytest.raises((TypeError, shale.InvalidArgumentError)) as e:
            shale.DB(path, **{kw: object()})
        assert "unknown option" not in str(e.value), kw
    with shale.DB(path) as db:
        for kw in tables["CF_KEYWORDS"]:
            with pytest.raises((TypeError, shale.InvalidArgumentError)) as e:
                db.create_column_family("f", **{kw: object()})
            assert "unknown option" not in str(e.value), kw
        for kw in tables["DB_KEYWORDS"]:
            if kw == "create_if_missing":
                continue
            with pytest.raises(shale.InvalidArgumentError, match="DB-wide"):
                db.create_column_family("f", **{kw: 1})


def test_options_without_a_keyword_say_why(path):
    with pytest.raises(shale.InvalidArgumentError, match="compaction_filter.*not available"):
        shale.DB(path, compaction_filter="x")
