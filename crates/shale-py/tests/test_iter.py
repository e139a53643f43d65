"""Iterators: bounds, prefix, reverse, modes, chunking, lifetime."""

import pytest

import shale

KEYS = [b"a", b"ab", b"abc", b"b", b"ba", b"c", b"\xff", b"\xff\xff"]


@pytest.fixture
def filled(db):
    for k in KEYS:
        db[k] = b"v:" + k
    return db


def test_full_forward_and_reverse(filled):
    assert list(filled.keys()) == KEYS
    assert list(filled.keys(reverse=True)) == KEYS[::-1]
    assert list(filled.items()) == [(k, b"v:" + k) for k in KEYS]
    assert list(filled.values()) == [b"v:" + k for k in KEYS]
    assert list(filled) == KEYS
    assert list(filled.iter()) == list(filled.items())


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize(
    "start, stop",
    [(None, None), (b"ab", None), (None, b"b"), (b"ab", b"ba"), (b"b", b"b"), (b"c", b"a"), (b"zz", None)],
)
def test_bounds(filled, start, stop, reverse):
    want = [k for k in KEYS if (start is None or k >= start) and (stop is None or k < stop)]
    if reverse:
        want.reverse()
    assert list(filled.keys(start=start, stop=stop, reverse=reverse)) == want


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("prefix", [b"a", b"ab", b"b", b"\xff", b"", b"q"])
def test_prefix(filled, prefix, reverse):
    want = [k for k in KEYS if k.startswith(prefix)]
    if reverse:
        want.reverse()
    assert list(filled.keys(prefix=prefix, reverse=reverse)) == want


def test_prefix_with_bounds_intersects(filled):
    assert list(filled.keys(prefix=b"a", start=b"ab")) == [b"ab", b"abc"]
    assert list(filled.keys(prefix=b"a", stop=b"abc")) == [b"a", b"ab"]


def test_many_entries_and_large_values_cross_chunks(db):
    n = 3000
    for i in range(n):
        db[b"k%05d" % i] = (b"%d" % i) * (1 + (i % 7) * 300)
    db.flush()
    for i in range(0, n, 3):
        db[b"k%05d" % i] = b"new"
    items = list(db.items())
    assert [k for k, _ in items] == [b"k%05d" % i for i in range(n)]
    for i, (_, v) in enumerate(items):
        assert v == (b"new" if i % 3 == 0 else (b"%d" % i) * (1 + (i % 7) * 300))
    assert [k for k, _ in db.items(reverse=True)] == [b"k%05d" % i for i in reversed(range(n))]


def test_partial_consumption(db):
    for i in range(1000):
        db[b"k%04d" % i] = b"v"
    it = db.keys()
    assert next(it) == b"k0000"
    assert next(it) == b"k0001"
    rest = list(it)
    assert len(rest) == 998
    with pytest.raises(StopIteration):
        next(it)


def test_iterator_keeps_its_view_after_writes(db):
    for i in range(10):
        db[b"k%d" % i] = b"old"
    it = db.items()
    first = next(it)
    db[b"k5"] = b"new"
    db[b"k55"] = b"new"
    rest = list(it)
    assert first == (b"k0", b"old")
    assert (b"k5", b"old") in rest and all(k != b"k55" for k, _ in rest)


def test_iterator_after_close_raises_closed(path):
    db = shale.DB(path)
    for i in range(1000):
        db[b"k%04d" % i] = b"v"
    it = db.keys()
    next(it)
    db.close()
    with pytest.raises(shale.ClosedError):
        list(it)
    with pytest.raises(shale.ClosedError):
        db[b"k0001"]
    db.close()  # twice is fine
