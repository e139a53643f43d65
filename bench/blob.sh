#!/usr/bin/env bash
# Key-value separation (blob files) with large values: Shale with blob
# files (shale-blob), Shale without (shale-plain) and, when the binary is
# built with the rocksdb feature, RocksDB with blob files (rocksdb-blob).
# For each value size (VALUE_SIZES) and round (ROUNDS) every engine runs
# once, alternating engines A B C A B C with the same seed per round, on a
# fresh DB, in two processes (as RocksDB's benchmark scripts run steps):
#   1. fillrandom NUM puts, then OVERWRITE_X overwrite passes of NUM puts
#      each (random keys of [0, NUM)), flush, waitforcompaction, stats
#      (flushed so that no engine's reopen flushes and compacts while
#      process 2 measures);
#   2. on that DB, reopened (cold block cache): readrandom and seekrandom
#      (SEEK_NEXTS nexts), DURATION_READ seconds each with READ_THREADS
#      threads, stats.
# NUM = DATA_MB MiB / (16 + value size): every value size puts the same
# bytes. The block cache (CACHE_MB, shared with blobs) is at most a quarter
# of DATA_MB, so the DB is at least 4x the cache.
# Garbage collection: blob files of BLOB_FILE_MB, age cutoff 0.25 (RocksDB's
# default). The overwrite passes put OVERWRITE_X (2) times the data, so the
# blob files the fill wrote fall into the oldest quarter, their live blobs
# are relocated by compactions and they are deleted, and then those of the
# first overwrite pass: at least two generations collected. The reloc
# column shows the relocation Shale did during the overwrites (blob bytes
# written minus the values put; n/a for RocksDB, whose blob counters are
# not read).
#
# Prints every run and, per value size and engine, the medians of: the
# four steps' ops/s; the write-amp of process 1 (bytes it wrote to
# storage, /proc/<pid>/io write_bytes - cancelled_write_bytes counted for
# the child by this shell: tables, blob files, WAL and the compaction debt
# paid by waitforcompaction; over the user bytes of fill and overwrites);
# the DB size after it (every file, blob files included; from process 2's
# readrandom record) and the space-amp (that size over the live keys x
# (key + value size) left by process 1); the blob files, their garbage and
# blob space-amp (shale-bench's Summary figures of process 2's readrandom).
#
# Also the engine write-amp: the W-Amp of the "Sum" row of the last
# compaction stats table process 1 printed (Shale's `shale.stats`, RocksDB's
# `rocksdb.stats`: table and blob bytes written by flushes and compactions
# over the bytes flushed; the WAL is not counted).
#
# Engine shale-blob-ratio: shale-blob with Shale's own
# --blob_garbage_collection_min_garbage_ratio=MIN_GARBAGE_RATIO (files below
# the cutoff are relocated only once that share of them is garbage; not in
# the default ENGINES).
#
# Usage: bench/blob.sh [extra shale-bench flags]
# Environment (defaults in brackets): BIN
#   [$CARGO_TARGET_DIR/release/shale-bench; RocksDB runs only when it was
#   built with --features rocksdb], ROCKS_BIN [BIN: the binary RocksDB runs
#   use, e.g. a RocksDB-enabled build of another commit while BIN is a
#   Shale-only build of this one], VALUE_SIZES [1024 4096 16384],
#   ROUNDS [2], DATA_MB [128], CACHE_MB [DATA_MB / 8], WRITE_BUFFER_MB
#   [DATA_MB / 16: memtables and tables; the base level is 4x], BLOB_FILE_MB [4],
#   MIN_BLOB_SIZE [512], OVERWRITE_X [2], DURATION_READ [15],
#   READ_THREADS [2], SEEK_NEXTS [10], MIN_GARBAGE_RATIO [0.2], ENGINES [shale-blob shale-plain,
#   and rocksdb-blob when available], SEED [1], DB_DIR [/tmp/shale-blob-db],
#   OUT [/tmp/shale-blob-<time>].
# With the defaults a run takes one to three minutes on 2 cores (six runs,
# about 15 minutes, per engine).
set -euo pipefail

TARGET=${CARGO_TARGET_DIR:-target}
BIN=${BIN:-$TARGET/release/shale-bench}
VALUE_SIZES=${VALUE_SIZES:-"1024 4096 16384"}
ROUNDS=${ROUNDS:-2}
DATA_MB=${DATA_MB:-128}
CACHE_MB=${CACHE_MB:-$((DATA_MB / 8))}
WRITE_BUFFER_MB=${WRITE_BUFFER_MB:-$((DATA_MB / 16 > 0 ? DATA_MB / 16 : 1))}
BLOB_FILE_MB=${BLOB_FILE_MB:-4}
MIN_BLOB_SIZE=${MIN_BLOB_SIZE:-512}
OVERWRITE_X=${OVERWRITE_X:-2}
DURATION_READ=${DURATION_READ:-15}
READ_THREADS=${READ_THREADS:-2}
SEEK_NEXTS=${SEEK_NEXTS:-10}
SEED=${SEED:-1}
MIN_GARBAGE_RATIO=${MIN_GARBAGE_RATIO:-0.2}
DB_DIR=${DB_DIR:-/tmp/shale-blob-db}
OUT=${OUT:-/tmp/shale-blob-$(date +%s)}
EXTRA=("$@")

ROCKS_BIN=${ROCKS_BIN:-$BIN}
if [[ ! -x "$BIN" ]]; then
  echo "blob.sh: $BIN not found; build it with: cargo build --release -p shale-bench [--features rocksdb]" >&2
  exit 1
fi
if ((CACHE_MB < 1 || CACHE_MB * 4 > DATA_MB)); then
  echo "blob.sh: CACHE_MB=$CACHE_MB must be in 1..DATA_MB/4 (the DB at least 4x the cache)" >&2
  exit 1
fi
if ((OVERWRITE_X < 1)); then
  echo "blob.sh: OVERWRITE_X=$OVERWRITE_X must be >= 1" >&2
  exit 1
fi
if [[ -z "${ENGINES:-}" ]]; then
  ENGINES="shale-blob shale-plain"
  # Nothing is opened: the flags pass and the benchmark name fails, or the
  # engine is missing from this build.
  # (Captured first: `grep -q` exiting early would fail the pipeline
  # under pipefail.)
  probe=$("$ROCKS_BIN" --engine=rocksdb --compression_type=none --benchmarks=blob_sh_probe 2>&1 || true)
  if grep -q "unknown benchmark" <<<"$probe"; then
    ENGINES="$ENGINES rocksdb-blob"
  else
    echo "blob.sh: $ROCKS_BIN has no rocksdb engine (build with --features rocksdb): RocksDB skipped" >&2
  fi
fi
mkdir -p "$OUT"

MIB=$((1 << 20))
COMMON=(--seed="$SEED" --key_size=16 --compression_type=none --cache_size=$((CACHE_MB * MIB))
  --write_buffer_size=$((WRITE_BUFFER_MB * MIB)) --target_file_size_base=$((WRITE_BUFFER_MB * MIB))
  --max_bytes_for_level_base=$((4 * WRITE_BUFFER_MB * MIB)) --max_bytes_for_level_multiplier=10
  --level_compaction_dynamic_level_bytes=true --bloom_bits=10 --max_background_jobs=2
  --seek_nexts="$SEEK_NEXTS" --progress_reports=false)
BLOB=(--enable_blob_files=1 --min_blob_size="$MIN_BLOB_SIZE" --blob_file_size=$((BLOB_FILE_MB * MIB))
  --blob_compression_type=none --enable_blob_garbage_collection=1
  --blob_garbage_collection_age_cutoff=0.25 --use_blob_cache=1 --use_shared_block_and_blob_cache=1)

engine_flags() {
  case "$1" in
    shale-blob) echo "--engine=shale ${BLOB[*]}" ;;
    shale-blob-ratio)
      echo "--engine=shale ${BLOB[*]} --blob_garbage_collection_min_garbage_ratio=$MIN_GARBAGE_RATIO" ;;
    shale-plain) echo "--engine=shale" ;;
    rocksdb-blob) echo "--engine=rocksdb ${BLOB[*]}" ;;
    *) echo "blob.sh: unknown engine $1 (shale-blob, shale-blob-ratio, shale-plain, rocksdb-blob)" >&2; return 1 ;;
  esac
}

# Bytes this shell's reaped children wrote to storage so far (the counters
# of /proc/<pid>/io include them once waited for).
SHELL_PID=$BASHPID
storage_writes() {
  awk '/^write_bytes:/ { w = $2 } /^cancelled_write_bytes:/ { c = $2 } END { printf "%.0f\n", w - c }' \
    "/proc/$SHELL_PID/io"
}

# The overwrite passes, one benchmark entry each.
overwrites=$(printf ',overwrite%.0s' $(seq 1 "$OVERWRITE_X"))

for vsize in $VALUE_SIZES; do
  num=$((DATA_MB * MIB / (16 + vsize)))
  for round in $(seq 1 "$ROUNDS"); do
    for engine in $ENGINES; do
      read -r -a eflags <<<"$(engine_flags "$engine")"
      name="$engine.v$vsize.r$round"
      bin=$BIN
      [[ $engine == rocksdb-* ]] && bin=$ROCKS_BIN
      run=("$bin" --db="$DB_DIR" "${COMMON[@]}" "${eflags[@]}" --value_size="$vsize" --num="$num")
      rm -rf "$DB_DIR"
      sync
      before=$(storage_writes)
      "${run[@]}" --benchmarks="fillrandom$overwrites,flush,waitforcompaction,stats" "${EXTRA[@]}" \
        --json="$OUT/$name.write.json" >"$OUT/$name.write.log" 2>&1 || {
        echo "blob.sh: $name (writes) failed, see $OUT/$name.write.log" >&2
        exit 1
      }
      echo $(($(storage_writes) - before)) >"$OUT/$name.wbytes"
      "${run[@]}" --use_existing_db=1 --benchmarks=readrandom,seekrandom,stats \
        --duration="$DURATION_READ" --threads="$READ_THREADS" "${EXTRA[@]}" \
        --json="$OUT/$name.read.json" >"$OUT/$name.read.log" 2>&1 || {
        echo "blob.sh: $name (reads) failed, see $OUT/$name.read.log" >&2
        exit 1
      }
      echo "$name done" >&2
    done
  done
done
rm -rf "$DB_DIR"

python3 - "$OUT" "$ROUNDS" "$VALUE_SIZES" "$ENGINES" <<'PY'
import json, os, statistics, sys
out, rounds, sizes, engines = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split()
MIB = 1 << 20
HEAD = "%-16s %6s %3s %9s %9s %9s %9s %6s %6s %9s %6s %6s %9s %6s %8s"
ROW = "%-16s %6s %3s %9.0f %9.0f %9.0f %9.0f %6.2f %6.2f %9.1f %6.2f %6s %9s %6s %8s"
print(HEAD % ("engine", "vsize", "rnd", "fill/s", "ovw/s", "read/s", "seek/s", "w-amp",
              "e-wamp", "DB MiB", "s-amp", "blobs", "garb MiB", "b-samp", "reloc"))

def engine_wamp(log):
    # W-Amp of the "Sum" row of the last compaction stats table. Data rows
    # spell Size in two tokens ("220.73 KB") where the header has one.
    col, wamp = None, float("nan")
    for line in open(log, errors="replace"):
        t = line.split()
        if t and t[0] == "Level" and "W-Amp" in t:
            col = t.index("W-Amp") + 1
        elif t and t[0] == "Sum" and col is not None and len(t) > col:
            try:
                wamp = float(t[col])
            except ValueError:
                pass
    return wamp

def fmt(v, f):
    return "n/a" if v is None else f % v

med = {}
def records(path):
    return [json.loads(l) for l in open(path) if l.strip()]

for vsize in sizes:
    for engine in engines:
        rows = []
        for r in range(1, rounds + 1):
            name = os.path.join(out, "%s.v%s.r%d" % (engine, vsize, r))
            w, rd = records(name + ".write.json"), records(name + ".read.json")
            fill = next(x for x in w if x["benchmark"] == "fillrandom")
            ows = [x for x in w if x["benchmark"] == "overwrite"]
            rr = next(x for x in rd if x["benchmark"] == "readrandom")
            sk = next(x for x in rd if x["benchmark"] == "seekrandom")
            wbytes = int(open(name + ".wbytes").read())
            ow_user = sum(x["user_bytes_written"] for x in ows)
            ow_ops = sum(x["ops"] for x in ows) / sum(x["elapsed_secs"] for x in ows)
            live = ows[-1]["live_bytes_estimate"]
            blob = rr.get("blob") or {}
            written = [(x.get("blob") or {}).get("bytes_written") for x in ows]
            reloc = None
            if all(b is not None for b in written):
                values = ow_user * int(vsize) / (16 + int(vsize))
                reloc = max(0.0, sum(written) - values) / MIB
            row = (fill["ops_per_sec"], ow_ops, rr["ops_per_sec"], sk["ops_per_sec"],
                   wbytes / (fill["user_bytes_written"] + ow_user),
                   engine_wamp(name + ".write.log"),
                   rr["db_size_bytes"] / MIB, rr["db_size_bytes"] / live)
            rows.append(row)
            garbage = blob.get("garbage_bytes")
            print(ROW % ((engine, vsize, r) + row + (
                fmt(blob.get("files"), "%d"),
                fmt(None if garbage is None else garbage / MIB, "%.1f"),
                fmt(blob.get("space_amp"), "%.2f"),
                fmt(reloc, "%.1f"))))
        med[(vsize, engine)] = [statistics.median(c) for c in zip(*rows)]
print()
print("medians (fill/s ovw/s read/s seek/s w-amp engine-w-amp DB-MiB space-amp):")
for (vsize, engine), m in med.items():
    print("%-16s %6s     %9.0f %9.0f %9.0f %9.0f %6.2f %6.2f %9.1f %6.2f" % ((engine, vsize) + tuple(m)))
PY
echo "logs and JSON in $OUT" >&2
