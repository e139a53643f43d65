#!/usr/bin/env python3
"""Shale's Python binding beside rocksdict (RocksDB through PyO3), same data.

Steps, each library through its natural dict API, 1 thread:
  fillrandom  N puts   db[key] = value            (keys in random order)
  readrandom  N gets   db[key]                    (random order, all present)
  scan        one full forward scan   for k, v in db.items()

Each (library, round) runs in a fresh process on a fresh DB; libraries
alternate A B A B; medians and the Shale / rocksdict ratio are printed.
Both use no compression, a 64 MiB write buffer and a 64 MiB LRU block cache.
rocksdict runs twice: its default mode (values carry a type tag, so any
Python object can be stored) and raw_mode (bytes as is); the ratio is
against the faster of the two per step.

    python bench_vs_rocksdict.py --num 1000000 --rounds 3 --dir /tmp/pybench
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time

LIBS = ["shale", "rocksdict", "rocksdict-raw"]


def keys_values(num, value_size, seed):
    rng = random.Random(seed)
    order = list(range(num))
    rng.shuffle(order)
    keys = [b"%016d" % i for i in order]
    value = bytes(rng.getrandbits(8) for _ in range(value_size))
    return keys, value


def open_db(lib, path):
    if lib == "shale":
        import shale

        return shale.DB(path, compression="none", write_buffer_size=64 << 20, cache_size=64 << 20)
    import rocksdict

    opt = rocksdict.Options(raw_mode=(lib == "rocksdict-raw"))
    opt.create_if_missing(True)
    opt.set_compression_type(rocksdict.DBCompressionType.none())
    opt.set_write_buffer_size(64 << 20)
    table = rocksdict.BlockBasedOptions()
    table.set_block_cache(rocksdict.Cache(64 << 20))
    opt.set_block_based_table_factory(table)
    return rocksdict.Rdict(path, opt)


def run_one(lib, path, num, value_size, seed):
    keys, value = keys_values(num, value_size, seed)
    shutil.rmtree(path, ignore_errors=True)
    db = open_db(lib, path)
    out = {}
    t = time.perf_counter()
    for k in keys:
        db[k] = value
    out["fillrandom"] = num / (time.perf_counter() - t)
    rng = random.Random(seed + 1)
    rng.shuffle(keys)
    t = time.perf_counter()
    for k in keys:
        db[k]
    out["readrandom"] = num / (time.perf_counter() - t)
    t = time.perf_counter()
    n = 0
    for _k, _v in db.items():
        n += 1
    out["scan"] = n / (time.perf_counter() - t)
    assert n == num, (lib, n, num)
    db.close()
    shutil.rmtree(path, ignore_errors=True)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--num", type=int, default=1_000_000)
    p.add_argument("--value_size", type=int, default=100)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--dir", default="/tmp/shale-pybench")
    p.add_argument("--libs", default=",".join(LIBS))
    p.add_argument("--one", help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int, default=301)
    a = p.parse_args()
    if a.one:
        print(json.dumps(run_one(a.one, os.path.join(a.dir, a.one), a.num, a.value_size, a.seed)))
        return
    libs = a.libs.split(",")
    results = {lib: [] for lib in libs}
    for r in range(a.rounds):
        for lib in libs:
            cmd = [sys.executable, __file__, "--one", lib, "--num", str(a.num), "--value_size",
                   str(a.value_size), "--dir", a.dir, "--seed", str(a.seed + r)]
            res = json.loads(subprocess.check_output(cmd))
            results[lib].append(res)
            print(f"round {r + 1} {lib:14}" + "".join(f" {k} {v:12,.0f}" for k, v in res.items()), flush=True)
    steps = ["fillrandom", "readrandom", "scan"]
    med = {lib: {s: statistics.median(x[s] for x in results[lib]) for s in steps} for lib in libs}
    print(f"\nmedians of {a.rounds} rounds, ops/s (num={a.num}, value_size={a.value_size})")
    print(f"{'step':12}" + "".join(f"{lib:>16}" for lib in libs) + "   shale / best rocksdict")
    for s in steps:
        peers = [med[lib][s] for lib in libs if lib != "shale"]
        ratio = med["shale"][s] / max(peers) if "shale" in med and peers else float("nan")
        print(f"{s:12}" + "".join(f"{med[lib][s]:16,.0f}" for lib in libs) + f"   {ratio:.2f}x")


if __name__ == "__main__":
    main()
