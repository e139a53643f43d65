#!/usr/bin/env bash
# Runs every long reliability test that CI leaves out (`#[ignore]`), in
# release mode, with fresh seeds printed first, and prints one line per
# test: name, pass or FAIL, wall seconds. A failing test's output stays in
# the log directory; rerun it with the printed seeds to reproduce.
#
#   scripts/long_tests.sh                 # every test below, fresh seeds
#   SHALE_SEED_BASE=123 scripts/long_tests.sh model_many_seeds   # one, replayed
#
# Seeds: many-seed loops (model_many_seeds, concurrent_model_many_seeds,
# kill9_many, linearizable_50_seeds) start at SHALE_SEED_BASE; single-seed
# tests read SHALE_SEED. Both are set to one fresh value per run unless
# given. The other tests draw and print their own seeds (their output is in
# the log). The figures of the last full run are in docs/RELIABILITY.md
# ("Long runs").
#
# Measurements, children of other tests and fixture writers are not here
# (catch_up_cost, close_and_flush_request_latency, the open-loop runs,
# crash_child, lock_child, primary_child, write_*_fixture).
set -euo pipefail
cd "$(dirname "$0")/.."

seed=${SHALE_SEED_BASE:-$(( $(od -An -N4 -tu4 /dev/urandom) ))}
export SHALE_SEED_BASE=$seed
export SHALE_SEED=${SHALE_SEED:-$seed}
echo "SHALE_SEED_BASE=$SHALE_SEED_BASE SHALE_SEED=$SHALE_SEED"

# package test-target test-name
tests=(
  "shale model model_many_seeds"
  "shale concurrent_model concurrent_model_many_seeds"
  "shale crash kill9_many"
  "shale power_loss power_loss_cycles_long"
  "shale power_loss exhaustive_crash_points_long"
  "shale power_loss exhaustive_crash_points_with_blob_files_long"
  "shale power_loss cross_family_power_loss_cycles_long"
  "shale power_loss cross_family_exhaustive_crash_points_long"
  "shale corruption single_damage_never_serves_wrong_values_long"
  "shale cf_smoke ten_thousand_families"
  "shale-stress linearizability linearizable_50_seeds"
  "shale-stress crash_history kill9_histories_long"
  "shale-stress crash_history kill9_histories_over_three_column_families_long"
  "shale-stress kill9_expected_state kill9_over_three_column_families_long"
  "shale-stress power_loss_history histories_across_power_losses_long"
)

logs=${SHALE_LONG_LOGS:-target/long-tests}
mkdir -p "$logs"
fail=0
for t in "${tests[@]}"; do
  read -r pkg target name <<<"$t"
  if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then
    continue
  fi
  log="$logs/$name.log"
  start=$(date +%s)
  if cargo test --release -q -p "$pkg" --test "$target" -- --ignored --exact "$name" --nocapture >"$log" 2>&1; then
    result=pass
  else
    result=FAIL
    fail=1
  fi
  printf '%-62s %-4s %6ss  %s\n' "$pkg/$target::$name" "$result" "$(( $(date +%s) - start ))" "$log"
done
exit $fail
