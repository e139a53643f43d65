"""Randomized test against a Python dict: every write call (puts with and
without sync, deletes, range deletes, merges, batches), reads (get,
get_many, in, iterators with random bounds, prefixes and both directions)
at the latest state and at snapshots, across flushes, bounded and
unbounded compactions and reopens, on two column families."""

import random

import pytest

import shale

KEYSPACE = 300


def key(rng):
    return b"k%03d" % rng.randrange(KEYSPACE)


def expect_range(model, start, stop, prefix, reverse):
    keys = sorted(
        k
        for k in model
        if (start is None or k >= start) and (stop is None or k < stop) and (prefix is None or k.startswith(prefix))
    )
    if reverse:
        keys.reverse()
    return [(k, model[k]) for k in keys]


def check(reader, model, rng):
    for _ in range(20):
        k = key(rng)
        assert reader.get(k) == model.get(k), k
        assert (k in reader) == (k in model)
    ks = [key(rng) for _ in range(10)]
    assert reader.get_many(ks) == [model.get(k) for k in ks]
    for _ in range(4):
        start = key(rng) if rng.random() < 0.6 else None
        stop = key(rng) if rng.random() < 0.6 else None
        prefix = (b"k%d" % rng.randrange(3)) if rng.random() < 0.3 else None
        reverse = rng.random() < 0.5
        got = list(reader.iter(start=start, stop=stop, prefix=prefix, reverse=reverse))
        assert got == expect_range(model, start, stop, prefix, reverse), (start, stop, prefix, reverse)


def merge(model, k, operand):
    model[k] = model[k] + b"," + operand if k in model else operand


@pytest.mark.parametrize("seed", range(6))
def test_random_operations_match_a_dict(tmp_path, seed):
    rng = random.Random(seed)
    path = str(tmp_path / "db")
    opts = dict(write_buffer_size=64 << 10, merge_operator="stringappend", compression=rng.choice(["none", "lz4", "zstd"]))
    db = shale.DB(path, **opts)
    fams = {"default": db, "f": db.create_column_family("f", write_buffer_size=32 << 10, merge_operator="stringappend")}
    models = {"default": {}, "f": {}}
    snaps = []  # (name, snapshot, frozen model)
    for step in range(1500):
        name = rng.choice(["default", "f"])
        d, m = fams[name], models[name]
        r = rng.random()
        if r < 0.35:
            k, v = key(rng), b"v%d" % step
            if rng.random() < 0.2:
                d.put(k, v, sync=rng.random() < 0.5)
            else:
                d[k] = v
            m[k] = v
        elif r < 0.45:
            k = key(rng)
            del d[k]
            m.pop(k, None)
        elif r < 0.52:
            k = key(rng)
            d.merge(k, b"m%d" % step)
            merge(m, k, b"m%d" % step)
        elif r < 0.55:
            a, b = sorted([key(rng), key(rng)])
            d.delete_range(a, b)
            for k in [k for k in m if a <= k < b]:
                del m[k]
        elif r < 0.65:
            with db.write_batch() as batch:
                for _ in range(rng.randrange(1, 6)):
                    bn = rng.choice(["default", "f"])
                    bm, k = models[bn], key(rng)
                    op = rng.random()
                    if op < 0.6:
                        batch.put(k, b"b%d" % step, cf=fams[bn])
                        bm[k] = b"b%d" % step
                    elif op < 0.8:
                        batch.delete(k, cf=fams[bn])
                        bm.pop(k, None)
                    else:
                        batch.merge(k, b"bm%d" % step, cf=fams[bn])
                        merge(bm, k, b"bm%d" % step)
        elif r < 0.70:
            snaps.append((name, d.snapshot(), dict(m)))
            if len(snaps) > 3:
                snaps.pop(0)[1].release()
        elif r < 0.74:
            d.flush()
        elif r < 0.77:
            if rng.random() < 0.5:
                d.compact_range()
            else:
                a, b = sorted([key(rng), key(rng)])
                d.compact_range(a if rng.random() < 0.8 else None, b if rng.random() < 0.8 else None)
        elif r < 0.78:
            for _, s, _ in snaps:
                s.release()
            snaps = []
            db.close()
            db = shale.DB(path, **opts)
            fams = {"default": db, "f": db.column_family("f")}
        else:
            check(d, m, rng)
        if step % 100 == 0:
            for sname, s, sm in snaps:
                check(s, sm, rng)
    for name in fams:
        assert list(fams[name].items()) == expect_range(models[name], None, None, None, False)
    db.close()
