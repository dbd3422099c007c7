#!/bin/sh
# Writes the golden outputs of tests/reference/cases.txt with the given fleetsim
# (make golden).  Run it only when a change of results is intended, and say why in the
# commit: tests/test_golden.c compares fresh runs with these bytes.
set -eu
bin=${1:-build/fleetsim}
grep -v '^#' tests/reference/cases.txt | while read -r name scenario args; do
  [ -n "$name" ] || continue
  rm -rf "tests/reference/$name"
  # shellcheck disable=SC2086 # args are words
  "$bin" run "$scenario" $args -q --no-plots -o "tests/reference/$name" > /dev/null
  echo "tests/reference/$name: $(wc -c < "tests/reference/$name/summary.csv") + $(wc -c < "tests/reference/$name/timeseries.csv") bytes"
done
