"""kill -9 of a Python process writing through the binding: every write it
was told had succeeded is there after reopening (a non-sync write survives
a process crash, RocksDB's contract), batches are all or nothing, a merge
counter counts exactly the batches that survived, range deletions are
applied in order, and what survived is a prefix of the writes (no holes)."""

import os
import signal
import subprocess
import sys
import time

import shale

# Writes key i of cycle c; every 7th in a batch with a pair key and a merge
# on the cycle's counter; after key 100h + 99 (and before acknowledging
# it), range-deletes keys 100h .. 100h + 9. Prints each acknowledged i.
CHILD = r"""
import sys, shale
c = sys.argv[2].encode()
db = shale.DB(sys.argv[1], write_buffer_size=256 << 10, merge_operator="uint64add")
i = 0
while True:
    k = b"c%s-k%08d" % (c, i)
    if i % 7 == 0:
        with db.write_batch() as b:
            b.put(k, b"v%d" % i)
            b.put(b"c%s-pair%08d" % (c, i), b"v%d" % i)
            b.merge(b"c%s-count" % c, (1).to_bytes(8, "little"))
    else:
        db.put(k, b"v%d" % i, sync=(i % 50 == 0))
    if i % 100 == 99:
        db.delete_range(b"c%s-k%08d" % (c, i - 99), b"c%s-k%08d" % (c, i - 89))
    sys.stdout.write("%d\n" % i)
    sys.stdout.flush()
    i += 1
"""


def range_deleted(i):
    return i % 100 < 10


def test_kill9_keeps_every_acknowledged_write(tmp_path):
    path = str(tmp_path / "db")
    for cycle in range(3):
        child = subprocess.Popen([sys.executable, "-c", CHILD, path, str(cycle)], stdout=subprocess.PIPE, text=True)
        time.sleep(0.7 + 0.3 * cycle)
        os.kill(child.pid, signal.SIGKILL)
        out, _ = child.communicate()
        lines = out.split()
        acked = int(lines[-1]) if lines else -1
        pre = b"c%d-" % cycle
        with shale.DB(path, merge_operator="uint64add") as db:
            present = {int(k[len(pre) + 1 :]) for k in db.keys(prefix=pre + b"k")}
            last = max(present, default=-1)
            assert last >= acked, f"cycle {cycle}: write {acked} acknowledged, last present {last}"
            for i in range(last + 1):
                h = i // 100
                if not range_deleted(i):
                    assert i in present, f"cycle {cycle}: hole at {i} (last {last})"
                elif last >= 100 * h + 100:
                    assert i not in present, f"cycle {cycle}: {i} came back after its range deletion"
            pairs = {int(k[len(pre) + 4 :]) for k in db.keys(prefix=pre + b"pair")}
            assert pairs == {i for i in range(0, last + 1, 7)}, f"cycle {cycle}: a batch was cut"
            count = int.from_bytes(db.get(pre + b"count", b"\0" * 8), "little")
            assert count == len(pairs), f"cycle {cycle}: {count} merges for {len(pairs)} batches"
            assert acked > 0, "the child wrote nothing before the kill"
