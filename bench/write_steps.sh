#!/usr/bin/env bash
# The write steps side by side for several engines: fillseq, fillrandom and
# overwrite (fillrandom then overwrite in one process, the overwrite pass
# measured), each on a fresh DB, engines alternating A B C A B C for ROUNDS
# rounds with the same seed per round. Prints every run's ops/sec and p99.9,
# then per step each engine's median and the ratio of the last engine to
# every other one.
#
# Usage:
#   ENGINES="rocksdb=$RB fjall=$FB shale=$RB" bench/write_steps.sh [extra shale-bench flags]
# ENGINES: space-separated engine=binary pairs (the binary must have the
#   engine's feature; the last pair is the one compared against the others).
# Environment (defaults in brackets): NUM [1000000], THREADS [1], ROUNDS [3],
#   STEPS ["fillseq fillrandom overwrite"], DB_DIR [/tmp/shale-write-steps],
#   OUT [/tmp/shale-write-steps-<time>], SEED [1000].
# Default flags: 16-byte keys, 100-byte values, no compression, every write
# handed to the OS before it is acknowledged (WAL on, no sync) in all engines.
set -euo pipefail

NUM=${NUM:-1000000}
THREADS=${THREADS:-1}
ROUNDS=${ROUNDS:-3}
STEPS=${STEPS:-"fillseq fillrandom overwrite"}
DB_DIR=${DB_DIR:-/tmp/shale-write-steps}
OUT=${OUT:-/tmp/shale-write-steps-$(date +%s)}
SEED=${SEED:-1000}
: "${ENGINES:?set ENGINES=\"engine=binary ...\"}"
EXTRA=("$@")
mkdir -p "$OUT" "$DB_DIR"

for round in $(seq 1 "$ROUNDS"); do
  for step in $STEPS; do
    for pair in $ENGINES; do
      engine=${pair%%=*}
      bin=${pair#*=}
      db="$DB_DIR/$engine"
      rm -rf "$db"
      benchmarks=$step
      [[ $step == overwrite ]] && benchmarks=fillrandom,overwrite
      log="$OUT/$step-$engine-$round.txt"
      "$bin" --engine="$engine" --db="$db" --benchmarks="$benchmarks" --num="$NUM" \
        --threads="$THREADS" --seed=$((SEED + round)) --key_size=16 --value_size=100 \
        --compression_type=none "${EXTRA[@]}" >"$log" 2>&1 || {
        echo "write_steps.sh: $engine $step failed, see $log" >&2
        exit 1
      }
      line=$(grep "^Summary $step:" "$log" | tail -n 1)
      ops=$(sed -n 's/.*ops\/sec=\([0-9.]*\).*/\1/p' <<<"$line")
      p999=$(sed -n 's/.*p99\.9_us=\([0-9.]*\).*/\1/p' <<<"$line")
      echo "round $round $step $engine ops/sec=$ops p99.9_us=$p999"
      echo "$step $engine $ops $p999" >>"$OUT/results.txt"
    done
  done
  rm -rf "${DB_DIR:?}"/*
done

python3 - "$OUT/results.txt" "$ENGINES" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
engines = [p.split("=")[0] for p in sys.argv[2].split()]
steps = list(dict.fromkeys(r[0] for r in rows))
last = engines[-1]
print("\nmedian ops/sec (p99.9 us), and %s / each other engine" % last)
for s in steps:
    med = {e: statistics.median(float(r[2]) for r in rows if r[0] == s and r[1] == e) for e in engines}
    p = {e: statistics.median(float(r[3]) for r in rows if r[0] == s and r[1] == e) for e in engines}
    cells = ["%s %.0f (%.0f)" % (e, med[e], p[e]) for e in engines]
    ratios = ["%s/%s %.2f" % (last, e, med[last] / med[e]) for e in engines[:-1]]
    print("%-10s %s | %s" % (s, "  ".join(cells), "  ".join(ratios)))
EOF
