#!/bin/sh
# Builds the seed corpus of each harness from the project's own files, into
# build/fuzz/seeds/<harness>/: scenarios (with some --set lines), the first rows of the
# traces, calibration profiles, unit strings.  Hand-made seeds and past findings live in
# tests/fuzz/corpus/<harness>/ and are used beside these.
set -eu
out=build/fuzz/seeds
rm -rf "$out"
mkdir -p "$out/fuzz_scenario" "$out/fuzz_trace" "$out/fuzz_units" "$out/fuzz_profile" \
  "$out/fuzz_validate"

n=0
for f in scenarios/*.lua tests/data/fleet/*.lua tests/bench/*.lua; do
  [ -f "$f" ] || continue
  n=$((n + 1))
  cp "$f" "$out/fuzz_scenario/file$n.lua"
  { echo "--set duration=2h"; echo "--set replications=2"; cat "$f"; } \
    > "$out/fuzz_scenario/set$n.lua"
done

n=0
for f in scenarios/traces/azure_*.csv tests/data/fleet/*.csv; do
  [ -f "$f" ] || continue
  n=$((n + 1))
  { printf '\000'; head -n 30 "$f"; } > "$out/fuzz_trace/requests$n"
  { printf '\002'; head -n 30 "$f"; } > "$out/fuzz_trace/requests_skip$n"
done
# sessions with hashed block ids: flag bit 3 reads session_id and hash_ids
{ printf '\010'; head -n 30 scenarios/traces/session_hash_ids.csv; } \
  > "$out/fuzz_trace/session_hash_ids"
{ printf '\032'; head -n 30 scenarios/traces/session_hash_ids.csv; } \
  > "$out/fuzz_trace/session_hash_ids_small_blocks"
n=0
for nodes in scenarios/traces/openb_node_list_gpu_node.csv tests/data/gpu_tasks_*nodes.csv; do
  for tasks in scenarios/traces/openb_pod_list_default.csv tests/data/gpu_tasks_*tasks.csv; do
    n=$((n + 1))
    { printf '\001'; head -n 20 "$nodes"; printf '\f'; head -n 20 "$tasks"; } \
      > "$out/fuzz_trace/cluster$n"
  done
done

n=0
for u in 250ms 90s 5m 2h 7d 2w 3y 1.5e3us 80GB 80GiB 1TiB 300/min 18000/h 40/d 5/s \
         " 12 h " 1e308y -3s 0x10s nan inf; do
  n=$((n + 1))
  printf '%s' "$u" > "$out/fuzz_units/unit$n"
done

n=0
for f in kernels/profiles/*.lua tests/data/profiles/*.lua tests/data/calibration/*.lua; do
  [ -f "$f" ] || continue
  n=$((n + 1))
  cp "$f" "$out/fuzz_profile/profile$n.lua"
done

# validation tables: each row of the shipped and the test tables alone (the harness adds
# the header), and the test tables whole
n=0
for f in tests/validation/published.csv tests/data/validation/*.csv; do
  [ -f "$f" ] || continue
  n=$((n + 1))
  tail -n +2 "$f" > "$out/fuzz_validate/table$n.csv"
  tail -n +2 "$f" | split -l 1 - "$out/fuzz_validate/row$n-"
done
