#!/bin/sh
# make valgrind: a few small end-to-end runs of fleetsim under valgrind's memcheck,
# each failing on any invalid read or write, use of uninitialised memory or leak
# (definite or possible): a plain queue with replications, LLM serving,
# autoscaled cloud GPUs, training jobs, a task replay, --jobs 2
# (the forked workers are checked too), a sweep, a refused scenario and check.
set -eu
bin=${1:-build/fleetsim}
out=build/valgrind
rm -rf "$out"
mkdir -p "$out"
vg="valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,possible --show-leak-kinds=definite,possible --trace-children=yes --child-silent-after-fork=no"
n=0
run() { # expected-status args...
  expected=$1
  shift
  n=$((n + 1))
  status=0
  $vg "$bin" "$@" > "$out/$n.out" 2> "$out/$n.err" || status=$?
  if [ "$status" != "$expected" ]; then
    cat "$out/$n.err" >&2
    echo "valgrind: fleetsim $* exited $status, expected $expected (99: a memcheck error)" >&2
    exit 1
  fi
  echo "  ok ($status) fleetsim $*"
}
q="-q --no-plots"
run 0 run scenarios/mmc_queue.lua $q --set duration=2h --replications 2 -o "$out/mmc"
run 0 run scenarios/chat_fleet.lua $q --set duration=2m --set warmup=0 --set bucket=30s --replications 1 -o "$out/chat"
run 0 run scenarios/burst_autoscale.lua $q --set duration=20m --set warmup=0 --set bucket=5m --replications 1 -o "$out/burst"
run 0 run scenarios/training_week.lua $q --set duration=2d --set warmup=0 --set bucket=6h --replications 1 -o "$out/train"
run 0 run scenarios/openb_fragmentation.lua $q -o "$out/openb"
run 0 run scenarios/mmc_queue.lua $q --set duration=2h --replications 2 --jobs 2 -o "$out/jobs"
run 0 run scenarios/mmc_queue.lua $q --set duration=2h --sweep pools.servers.count=8,9 -o "$out/sweep"
run 2 run scenarios/mmc_queue.lua $q --set pools.servers.count=0 -o "$out/bad"
run 0 check scenarios/mig_slices.lua
