"""The dict-like API: [], get, in, del, get_many, str keys, bad types."""

import pytest

import shale


def test_set_get_contains_delete(db):
    db[b"k1"] = b"v1"
    assert db[b"k1"] == b"v1"
    assert b"k1" in db
    assert db.get(b"k1") == b"v1"
    del db[b"k1"]
    assert b"k1" not in db
    assert db.get(b"k1") is None
    assert db.get(b"k1", b"dflt") == b"dflt"
    with pytest.raises(KeyError) as e:
        db[b"k1"]
    assert e.value.args == (b"k1",)


def test_deleting_a_missing_key_is_not_an_error(db):
    del db[b"never"]
    db.delete(b"never", sync=True)
    assert b"never" not in db


def test_str_is_utf8_and_bytearray_is_copied(db):
    db["ключ"] = "значение"
    assert db["ключ".encode()] == "значение".encode()
    buf = bytearray(b"abc")
    db[buf] = buf
    buf[0] = ord("z")
    assert db[b"abc"] == b"abc"


@pytest.mark.parametrize("bad", [1, 1.5, None, [b"a"], object()])
def test_other_types_are_refused(db, bad):
    with pytest.raises(TypeError, match="bytes or str"):
        db[bad] = b"v"
    with pytest.raises(TypeError):
        db.get(bad)


def test_empty_key_and_value_round_trip(db):
    db[b""] = b""
    assert db[b""] == b""
    assert list(db.items()) == [(b"", b"")]


def test_large_value_round_trips_through_flush(db):
    big = bytes(range(256)) * 4096  # 1 MiB
    db[b"big"] = big
    db.flush()
    assert db[b"big"] == big


def test_get_many_reads_present_and_absent(db):
    for i in range(100):
        db[b"k%03d" % i] = b"v%d" % i
    db.flush()
    db[b"k005"] = b"new"
    got = db.get_many([b"k000", b"k005", b"zzz", "k099"])
    assert got == [b"v0", b"new", None, b"v99"]
    assert db.get_many([]) == []
    assert db.get_many(iter([b"k001"])) == [b"v1"]


def test_put_sync_and_single_delete(db):
    db.put(b"a", b"1", sync=True)
    db.single_delete(b"a", sync=True)
    assert b"a" not in db


def test_len_is_absent_because_counts_are_estimates(db):
    db[b"a"] = b"1"
    with pytest.raises(TypeError):
        len(db)
    assert db.stats()["estimate_num_keys"] >= 1


def test_merge_with_shipped_operators(path):
    with shale.DB(path, merge_operator="uint64add") as db:
        for _ in range(10):
            db.merge(b"hits", (3).to_bytes(8, "little"))
        db.flush()
        db.merge(b"hits", (1).to_bytes(8, "little"))
        assert int.from_bytes(db[b"hits"], "little") == 31
    with shale.DB(path + "-s", merge_operator="stringappend:|") as db:
        db.merge(b"l", b"a")
        db.merge(b"l", b"b")
        assert db[b"l"] == b"a|b"


def test_merge_without_operator_is_refused(db):
    with pytest.raises(shale.InvalidArgumentError, match="merge"):
        db.merge(b"k", b"x")


def test_delete_range_hides_the_range_only(db):
    for i in range(50):
        db[b"k%02d" % i] = b"v"
    db.flush()
    db.delete_range(b"k10", b"k20")
    assert [k for k in db.keys()] == [b"k%02d" % i for i in range(50) if not 10 <= i < 20]
    with pytest.raises(shale.InvalidArgumentError):
        db.delete_range(b"z", b"a")


def test_ttl_expires(db):
    import time

    # Expiries are whole seconds of the clock: a value lives at least
    # ttl - 1 s (a ttl of 1 put at x.999 s is gone at the next second), so
    # a ttl of 2 is the shortest this read can rely on.
    db.put(b"short", b"v", ttl=2)
    db.put(b"long", b"v", ttl=3600)
    assert db[b"short"] == b"v"
    time.sleep(3.1)
    assert b"short" not in db
    assert db[b"long"] == b"v"
    with pytest.raises(shale.InvalidArgumentError):
        db.put(b"x", b"v", ttl=0)
    with pytest.raises(shale.InvalidArgumentError):
        db.put(b"x", b"v", ttl=float("nan"))


def test_maintenance_calls(db):
    for i in range(1000):
        db[b"k%04d" % i] = b"v" * 50
    db.flush()
    for i in range(0, 1000, 2):
        del db[b"k%04d" % i]
    db.flush()
    db.compact_range(b"k0000", b"k0500")
    db.compact_range()
    assert db.reclaim() >= 0
    db.wait_for_compaction()
    db.flush_wal(sync=True)
    assert len(list(db.keys())) == 500
    s = db.stats()
    assert s["num_files_at_level"][-1] >= 1 or sum(s["num_files_at_level"]) >= 1
    assert isinstance(s["compaction"], (dict, list))
    assert db.property("shale.num-files-at-level0") is not None
    assert db.property("shale.no-such-property") is None


def test_path_and_repr(db, path):
    assert str(db.path) == path
    assert "default" in repr(db)
    assert db.name == "default"
