#!/bin/sh
# Fails (exit 1) when a test log holds a sanitizer report about fleetsim's own code.
# LeakSanitizer reports at process exit, after Criterion has counted the test as
# passed, so the log is the only place a leak shows.  A leak report whose every frame
# lies outside the project (Criterion keeps some per-test bookkeeping it never frees)
# is not fleetsim's and is ignored.
log=$1
status=0
if grep -qE 'ERROR: AddressSanitizer|runtime error:' "$log"; then
  echo "sanitizer: memory error or undefined behaviour in $log"
  status=1
fi
# every leak report block: from "ERROR: LeakSanitizer" to "SUMMARY:"
if awk '/ERROR: LeakSanitizer/ {inside = 1; ours = 0}
        inside && /[ (](sim|models|lua|output|kernels|tests)\/[A-Za-z0-9_\/]+\.(c|cu):[0-9]+/ {ours = 1}
        inside && /SUMMARY:/ {inside = 0; if (ours) found = 1}
        END {exit found ? 0 : 1}' "$log"; then
  echo "sanitizer: a leak in fleetsim's code in $log"
  status=1
fi
exit $status
