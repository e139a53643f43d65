#!/usr/bin/env bash
# Shale beside RocksDB in each compaction style (issue 15's table): the same
# workload and options for both engines, per style:
#   leveled    --compaction_style=0 --level_compaction_dynamic_level_bytes=1
#   universal  --compaction_style=1 --universal_size_ratio=1
#              --universal_max_size_amplification_percent=200
#   fifo       --compaction_style=2 --fifo_compaction_max_table_files_size_mb=FIFO_MB
#              (FIFO_MB large enough to hold every put: nothing is dropped,
#              the DB keeps all 3 x NUM versions, so its space-amp is ~3
#              by design; only the small newest L0 tables are merged,
#              --fifo_compaction_allow_compaction's default true)
# Workload (one process, fresh DB): fillrandom of NUM puts, two overwrite
# passes of NUM puts each (2 x NUM overwrites: --writes would also lengthen
# fillrandom), waitforcompaction, stats; 16-byte keys, 100-byte values,
# --compression_type=none (the RocksDB build links no snappy), other
# options the defaults of shale-bench (64 MiB memtables, 2 background
# jobs). Engines alternate A B A B (style by style within a round, the
# same --seed for both engines in a round).
#
# Per run it prints and keeps (OUT/results.txt):
#   fill/s, ovw/s   fillrandom ops/s; the two overwrite passes' ops over
#                   their seconds;
#   sumW            the stats table's Sum W-Amp (column found by its
#                   header: RocksDB prints one column more): bytes written
#                   by flushes and compactions over bytes flushed;
#   cW              "Cumulative compaction: X GB write" (flushes included)
#                   over "Cumulative writes ... ingest: Y GB" (user bytes);
#   ioW             bytes the process wrote to storage (/proc io
#                   write_bytes - cancelled_write_bytes, counted for the
#                   reaped child: WAL, tables, MANIFEST, the debt paid by
#                   waitforcompaction) over the user bytes 3 x NUM x 116;
#   peakS, finS     the DB directory's size (every file: WAL included)
#                   at its peak during the run, sampled by shale-bench
#                   every SPACE_SAMPLE_MS [10] ms (--space_sample_ms, the
#                   same for both engines; du -sb once a second if the
#                   binary predates it), and after the process exits
#                   (du -sb), over NUM x (16+100);
#   sumS            the Summary's space_amp of the second overwrite (db
#                   size over the expected distinct keys x 116, before
#                   waitforcompaction);
#   p999            Summary p99.9_us, the worse of the two overwrite passes
#                   (fillrandom's is also kept);
#   stall%          the stall time of fill and overwrites (Summary
#                   stall_micros) over their seconds; stalls = the stats'
#                   stall count (Shale: Stalls(count) total; RocksDB:
#                   Write Stall total-delays + total-stops) and the
#                   "Cumulative stall" seconds.
# Then, per style and engine, the medians, and the Shale/RocksDB ratios.
#
# Usage: bench/styles.sh [extra shale-bench flags]
# Environment (defaults in brackets): BIN [$CARGO_TARGET_DIR/release/shale-bench],
#   ROCKS_BIN [BIN: a shale-bench built with --features rocksdb; runs with
#   --engine=rocksdb], NUM [10000000], ROUNDS [2], STYLES [leveled universal
#   fifo], ENGINES [shale rocksdb], FIFO_MB [4096], SEED [round number],
#   DB_DIR [/tmp/shale-styles-db: put it on a disk, not a small tmpfs],
#   OUT [/tmp/shale-styles-<time>]; TABLE_ONLY=1 with OUT of an earlier (or
#   interrupted) run only prints the medians of its results.txt.
# At NUM=5000000 on 2 shared cores a round of the 3 styles x 2 engines takes
# 12-20 minutes (RocksDB's runs 1.5-2x as long as Shale's); results in
# docs/perf/compaction-styles.md, "Compaction styles beside RocksDB".
set -euo pipefail

TARGET=${CARGO_TARGET_DIR:-target}
BIN=${BIN:-$TARGET/release/shale-bench}
ROCKS_BIN=${ROCKS_BIN:-$BIN}
NUM=${NUM:-10000000}
ROUNDS=${ROUNDS:-2}
STYLES=${STYLES:-"leveled universal fifo"}
ENGINES=${ENGINES:-"shale rocksdb"}
FIFO_MB=${FIFO_MB:-4096}
DB_DIR=${DB_DIR:-/tmp/shale-styles-db}
OUT=${OUT:-/tmp/shale-styles-$(date +%s)}
EXTRA=("$@")
mkdir -p "$OUT"
echo "results in $OUT"

style_flags() {
    case $1 in
        leveled) echo "--compaction_style=0 --level_compaction_dynamic_level_bytes=1" ;;
        universal) echo "--compaction_style=1 --universal_size_ratio=1 --universal_max_size_amplification_percent=200" ;;
        fifo) echo "--compaction_style=2 --fifo_compaction_max_table_files_size_mb=$FIFO_MB" ;;
        *) echo "styles.sh: unknown style $1 (leveled universal fifo)" >&2; return 1 ;;
    esac
}

SHELL_PID=$BASHPID
storage_writes() {
    awk '/^write_bytes:/ { w = $2 } /^cancelled_write_bytes:/ { c = $2 } END { printf "%.0f\n", w - c }' \
        "/proc/$SHELL_PID/io"
}

# One run's line (and its row of results.txt) from its files.
parse() { # name style engine
    python3 - "$OUT/$1" "$2" "$3" "$NUM" <<'PY'
import json, re, sys
base, style, engine, num = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
live = num * (16 + 100)
recs = [json.loads(l) for l in open(base + ".json") if l.strip()]
fill = next(r for r in recs if r["benchmark"] == "fillrandom")
ows = [r for r in recs if r["benchmark"] == "overwrite"]
log = open(base + ".log", errors="replace").read().replace("\r", "\n")
col = sum_w = None
for line in log.splitlines():
    f = line.split()
    if f and f[0] == "Level":
        col = f.index("W-Amp") + 1  # a row's Files and Size take one more field
    elif f and f[0] == "Sum" and col is not None:
        sum_w = float(f[col]); col = None  # the first (per-level) table only
m = re.search(r"Cumulative compaction: ([0-9.]+) GB write", log)
comp_gb = float(m.group(1)) if m else float("nan")
m = re.search(r"Cumulative writes: .* ingest: ([0-9.]+) GB", log)
ingest_gb = float(m.group(1)) if m else float("nan")
m = re.search(r"Stalls\(count\):.* interval (\d+) total count", log)
if m:
    stalls = int(m.group(1))
else:
    m = re.search(r"total-delays: (\d+), total-stops: (\d+)", log)
    stalls = int(m.group(1)) + int(m.group(2)) if m else -1
m = re.search(r"Cumulative stall: (\d+):(\d+):([0-9.]+) H:M:S, ([0-9.]+) percent", log)
stall_s = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3)) if m else float("nan")
samples = [int(l.split()[0]) for l in open(base + ".du") if l.strip()]
m = re.search(r"Peak db_size over the run: (\d+) bytes", log)
if m:
    samples = [int(m.group(1))]
final = int(open(base + ".final").read())
wbytes = int(open(base + ".wbytes").read())
runs = [fill] + ows
secs = sum(r["elapsed_secs"] for r in runs)
row = dict(
    fill=fill["ops_per_sec"],
    ovw=sum(r["ops"] for r in ows) / sum(r["elapsed_secs"] for r in ows),
    sumW=sum_w if sum_w is not None else float("nan"),
    cW=comp_gb / ingest_gb,
    ioW=wbytes / (3 * live),
    peakS=max(samples + [final]) / live,
    finS=final / live,
    sumS=ows[-1]["space_amp"],
    p999f=fill["latency_us"]["p99_9"],
    p999=max(r["latency_us"]["p99_9"] for r in ows),
    stallpct=100.0 * sum(r["stall_micros"] for r in runs) / 1e6 / secs,
    stalls=stalls,
    stall_s=stall_s,
    secs=secs,
)
keys = list(row)
with open(base.rsplit("/", 1)[0] + "/results.txt", "a") as f:
    f.write(" ".join([style, engine] + ["%g" % row[k] for k in keys]) + "\n")
print("%-9s %-7s " % (style, engine) + " ".join("%s=%.4g" % (k, row[k]) for k in keys))
PY
}

for round in $(seq 1 "$ROUNDS"); do
    [ -n "${TABLE_ONLY:-}" ] && break
    for style in $STYLES; do
        read -r -a sflags <<<"$(style_flags "$style")"
        for engine in $ENGINES; do
            case $engine in
                shale) bin=$BIN ;;
                rocksdb) bin=$ROCKS_BIN ;;
                *) echo "styles.sh: unknown engine $engine (shale rocksdb)" >&2; exit 2 ;;
            esac
            name="$style.$engine.r$round"
            rm -rf "$DB_DIR"
            sync
            before=$(storage_writes)
            : >"$OUT/$name.du"
            "$bin" --engine="$engine" --db="$DB_DIR" --num="$NUM" --seed="${SEED:-$round}" \
                --benchmarks=fillrandom,overwrite,overwrite,waitforcompaction,stats \
                --key_size=16 --value_size=100 --compression_type=none --progress_reports=false \
                --space_sample_ms="${SPACE_SAMPLE_MS:-10}" \
                "${sflags[@]}" --json="$OUT/$name.json" "${EXTRA[@]}" >"$OUT/$name.log" 2>&1 &
            pid=$!
            while kill -0 "$pid" 2>/dev/null; do
                du -sb "$DB_DIR" 2>/dev/null | cut -f1 >>"$OUT/$name.du" || true
                sleep 1
            done
            wait "$pid" || { echo "styles.sh: $name failed, see $OUT/$name.log" >&2; exit 1; }
            echo $(($(storage_writes) - before)) >"$OUT/$name.wbytes"
            du -sb "$DB_DIR" | cut -f1 >"$OUT/$name.final"
            ls -l "$DB_DIR" >"$OUT/$name.ls"
            rm -rf "$DB_DIR"
            parse "$name" "$style" "$engine"
        done
    done
done

python3 - "$OUT/results.txt" "$STYLES" "$ENGINES" <<'PY'
import statistics, sys
path, styles, engines = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
keys = ["fill", "ovw", "sumW", "cW", "ioW", "peakS", "finS", "sumS", "p999f", "p999",
        "stallpct", "stalls", "stall_s", "secs"]
rows = {}
for line in open(path):
    f = line.split()
    rows.setdefault((f[0], f[1]), []).append([float(x) for x in f[2:]])
med = {k: [statistics.median(c) for c in zip(*v)] for k, v in rows.items()}
print()
print("medians of %s rounds" % ",".join(str(len(v)) for v in rows.values()))
print("| style | engine | fillrandom ops/s | overwrite ops/s | Sum W-Amp | comp GB / ingest | io W-amp "
      "| peak space-amp | final space-amp | Summary space_amp | p99.9 us fill / ovw | stall % | stalls (count, s) |")
print("|" + "---|" * 13)
for s in styles:
    for e in engines:
        if (s, e) not in med:
            continue
        m = dict(zip(keys, med[(s, e)]))
        print("| %s | %s | %.0f | %.0f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.0f / %.0f | %.1f | %.0f, %.1f |" % (
            s, e, m["fill"], m["ovw"], m["sumW"], m["cW"], m["ioW"], m["peakS"], m["finS"],
            m["sumS"], m["p999f"], m["p999"], m["stallpct"], m["stalls"], m["stall_s"]))
if "shale" in engines and "rocksdb" in engines:
    print()
    print("| style | fillrandom Shale/RocksDB | overwrite Shale/RocksDB | Sum W-Amp S / R | peak space-amp S / R | final space-amp S / R |")
    print("|---|---|---|---|---|---|")
    for s in styles:
        if (s, "shale") not in med or (s, "rocksdb") not in med:
            continue
        a = dict(zip(keys, med[(s, "shale")]))
        b = dict(zip(keys, med[(s, "rocksdb")]))
        print("| %s | %.2fx | %.2fx | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f |" % (
            s, a["fill"] / b["fill"], a["ovw"] / b["ovw"], a["sumW"], b["sumW"],
            a["peakS"], b["peakS"], a["finS"], b["finS"]))
PY
