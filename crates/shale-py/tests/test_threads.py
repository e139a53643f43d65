"""Threads: concurrent writers and readers keep every invariant, and the
GIL is released while the engine works."""

import threading

import shale


def test_concurrent_writers_and_readers(db):
    threads, per = 4, 3000
    errors = []

    def writer(t):
        try:
            for i in range(per):
                if i % 10 == 0:
                    with db.write_batch() as b:
                        # Both keys of a pair are written together.
                        b.put(b"pair-a-%d-%d" % (t, i), b"%d" % i)
                        b.put(b"pair-b-%d-%d" % (t, i), b"%d" % i)
                else:
                    db[b"w%d-%05d" % (t, i)] = b"%d" % i
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    def reader():
        try:
            for _ in range(20):
                with db.snapshot() as s:
                    a = {k[7:]: v for k, v in s.items(prefix=b"pair-a-")}
                    b = {k[7:]: v for k, v in s.items(prefix=b"pair-b-")}
                    assert a == b, "a batch was seen half-applied"
        except Exception as e:  # pragma: no cover
            errors.append(e)

    ts = [threading.Thread(target=writer, args=(t,)) for t in range(threads)]
    ts += [threading.Thread(target=reader) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    for t in range(threads):
        for i in range(per):
            key = (b"pair-a-%d-%d" % (t, i)) if i % 10 == 0 else (b"w%d-%05d" % (t, i))
            assert db[key] == b"%d" % i
    assert len(list(db.keys())) == threads * per + threads * (per // 10)


def test_the_gil_is_released_during_engine_work(path):
    """A pure-Python loop keeps running while another thread is inside
    compact_range: with the GIL held for the whole call it could not."""
    with shale.DB(path, write_buffer_size=1 << 20, compression="zstd") as db:
        for round_ in range(6):
            for i in range(0, 20000):
                db[b"k%06d" % (i * 7 % 20000)] = b"%d-%d" % (round_, i) * 8
            db.flush()
        inside = threading.Event()
        done = threading.Event()

        def compact():
            inside.set()
            db.compact_range()
            done.set()

        t = threading.Thread(target=compact)
        t.start()
        inside.wait()
        spins = 0
        while not done.is_set():
            spins += 1
        t.join()
        assert spins > 1000, f"main thread made {spins} steps while compact_range ran"


def test_one_iterator_used_from_two_threads_never_deadlocks(db):
    for i in range(20000):
        db[b"k%05d" % i] = b"v"
    it = db.keys()
    seen = []
    errs = []

    def drain():
        try:
            for k in it:
                seen.append(k)
        except RuntimeError as e:
            errs.append(e)

    ts = [threading.Thread(target=drain) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    # Every key was returned at most once, in order per thread; a thread
    # that met the other mid-chunk got RuntimeError instead of a wait.
    assert len(seen) == len(set(seen))
    assert all(isinstance(e, RuntimeError) for e in errs)
    if not errs:
        assert len(seen) == 20000
