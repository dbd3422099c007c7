#!/bin/sh
# Runs each libFuzzer harness given for SECONDS seconds, one after the other:
#   sh tests/fuzz/run.sh SECONDS build/fuzz/fuzz_scenario ...
# Corpus: build/fuzz/corpus/<name> (new inputs go there), the seeds built from the
# project's files (tests/fuzz/seeds.sh) and tests/fuzz/corpus/<name> (hand-made seeds
# and every past finding, kept as regressions: replayed first, each run).
# A crash, leak, sanitizer report or timeout stops with status 1 and leaves the input
# in build/fuzz/findings/.
set -eu
seconds=$1
shift
sh tests/fuzz/seeds.sh
mkdir -p build/fuzz/findings
status=0
for fuzzer in "$@"; do
  name=$(basename "$fuzzer")
  mkdir -p "build/fuzz/corpus/$name" "tests/fuzz/corpus/$name"
  echo "== $name: $seconds s"
  start=$(date +%s)
  if ! "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=3072 \
       -max_len=16384 -print_final_stats=1 \
       -artifact_prefix="build/fuzz/findings/$name-" \
       "build/fuzz/corpus/$name" "build/fuzz/seeds/$name" "tests/fuzz/corpus/$name" \
       > "build/fuzz/$name.log" 2>&1; then
    tail -n 60 "build/fuzz/$name.log"
    echo "$name: a finding (build/fuzz/findings/$name-*; log build/fuzz/$name.log)" >&2
    status=1
  fi
  grep -E '^stat::number_of_executed_units|^Done' "build/fuzz/$name.log" || true
  echo "   $(( $(date +%s) - start )) s"
done
rm -rf build/fuzz/work
exit $status
