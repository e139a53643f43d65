"""Write batches (bound and unbound) and snapshots."""

import pytest

import shale


def test_bound_batch_commits_on_exit(db):
    with db.write_batch(sync=True) as b:
        b.put(b"a", b"1")
        b.put(b"b", b"2")
        b.delete(b"a")
        assert len(b) == 3
        assert b"b" not in db  # nothing visible before the block ends
    assert db.get(b"a") is None and db[b"b"] == b"2"


def test_bound_batch_is_dropped_when_the_block_raises(db):
    with pytest.raises(ValueError):
        with db.write_batch() as b:
            b.put(b"a", b"1")
            raise ValueError("abort")
    assert b"a" not in db


def test_unbound_batch_is_written_by_write_and_kept(db):
    b = shale.WriteBatch()
    b.put(b"a", b"1")
    b.delete_range(b"x", b"y")
    db.write(b, sync=True)
    assert db[b"a"] == b"1"
    assert len(b) == 2
    del db[b"a"]
    db.write(b)
    assert db[b"a"] == b"1"
    b.clear()
    assert len(b) == 0
    with pytest.raises(shale.InvalidArgumentError):
        with b:
            pass


def test_batch_ops_of_every_kind(path):
    with shale.DB(path, merge_operator="stringappend") as db:
        db[b"r1"] = b"x"
        db[b"r2"] = b"x"
        db[b"s"] = b"once"
        with db.write_batch() as b:
            b.merge(b"m", b"a")
            b.merge(b"m", b"b")
            b.delete_range(b"r", b"s")
            b.single_delete(b"s")
            b.put(b"t", b"v", ttl=3600)
        assert db[b"m"] == b"a,b"
        assert list(db.keys()) == [b"m", b"t"]


def test_unbound_batch_ttl_needs_a_family(db):
    b = shale.WriteBatch()
    with pytest.raises(shale.InvalidArgumentError, match="ttl"):
        b.put(b"k", b"v", ttl=10)
    b.put(b"k", b"v", cf=db, ttl=10)
    db.write(b)
    assert db[b"k"] == b"v"


def test_batch_write_disable_wal(db):
    b = shale.WriteBatch()
    b.put(b"k", b"v")
    db.write(b, disable_wal=True)
    assert db[b"k"] == b"v"


def test_snapshot_reads_the_past(db):
    db[b"a"] = b"1"
    db[b"b"] = b"1"
    snap = db.snapshot()
    db[b"a"] = b"2"
    del db[b"b"]
    db[b"c"] = b"2"
    db.flush()
    db.compact_range()
    assert snap[b"a"] == b"1" and snap.get(b"b") == b"1" and b"c" not in snap
    assert list(snap.items()) == [(b"a", b"1"), (b"b", b"1")]
    assert list(snap.keys(reverse=True)) == [b"b", b"a"]
    assert snap.get_many([b"a", b"c"]) == [b"1", None]
    assert isinstance(snap.sequence, int)
    snap.release()
    assert snap.sequence is None
    with pytest.raises(shale.ClosedError):
        snap[b"a"]


def test_snapshot_context_manager_and_iterator_outliving_it(db):
    for i in range(500):
        db[b"k%03d" % i] = b"old"
    with db.snapshot() as snap:
        it = snap.values()
        for i in range(500):
            db[b"k%03d" % i] = b"new"
    with pytest.raises(shale.ClosedError):
        snap.get(b"k000")
    db.flush()
    db.compact_range()
    assert set(it) == {b"old"}
