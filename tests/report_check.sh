#!/bin/sh
# The report in a real browser (issue 18, 6): report.html of the default scenario, a
# sweep, searches, a claim and a comparison of five ways to pay (issue 39: the ranked
# answer first), loaded by Debian's headless chromium; the rendered DOM must hold the
# title, the headline, every chart as an SVG that drew (a <path> inside), no broken image,
# and for the sweep a results table of one row per point.  Screenshots go to OUT for a
# person to look at.  Without chromium it says so and passes (make deps-browser).
# Usage: sh tests/report_check.sh ./build/fleetsim OUT
set -eu
bin=$1; out=$2
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "report-check: skipped: chromium is not installed (make deps-browser installs it)"
  exit 0
fi
rm -rf "$out"; mkdir -p "$out"
fail=0
check() {  # NAME DIR EXPECTED-RESULT-ROWS(or -)
  name=$1; dir=$2; rows=$3
  url="file://$(cd "$dir" && pwd)/report.html"
  flags="--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run"
  # shellcheck disable=SC2086
  timeout 120 "$browser" $flags --dump-dom "$url" > "$out/$name.dom.html" 2> "$out/$name.log"
  # shellcheck disable=SC2086
  timeout 120 "$browser" $flags --window-size=1100,3000 --screenshot="$out/$name.png" "$url" \
    >> "$out/$name.log" 2>&1
  dom="$out/$name.dom.html"
  charts=$(ls "$dir"/plots/*.svg 2> /dev/null | wc -l)
  svgs=$(grep -o '<svg' "$dom" | wc -l)
  drawn=$(tr '\n' ' ' < "$dom" | grep -o '<svg[^>]*>[^<]*<[^/]' | wc -l)
  bad=""
  grep -q '<h1>' "$dom" || bad="$bad no-title"
  [ "$rows" != - ] || [ "$name" = search ] || [ "$name" = grid ] || grep -q "<h2>Headline</h2>" "$dom" || bad="$bad no-headline"
  [ "$svgs" -ge "$charts" ] || bad="$bad charts:$svgs<$charts"
  [ "$charts" -gt 0 ] || bad="$bad no-chart"
  [ "$drawn" -ge "$charts" ] || bad="$bad empty-svg"
  grep -q '<path' "$dom" || bad="$bad nothing-drawn"
  ! grep -q '<img' "$dom" || bad="$bad img-in-page"
  grep -q 'holds no SVG' "$dom" && bad="$bad missing-svg"
  [ -s "$out/$name.png" ] || bad="$bad no-screenshot"
  if [ "$name" = five ]; then
    # the answer first: five ways to pay ranked, the best marked, before the scenario
    grep -q '<h2>Answer</h2>' "$dom" || bad="$bad no-answer"
    got=$(sed -n '/<table class="answer">/,/<\/table>/p' "$dom" | grep -c '<tr' || true)
    [ "$got" -eq 6 ] || bad="$bad answer-rows:$got!=6"
    grep -q '<tr class="best">' "$dom" || bad="$bad no-best"
    # its bought and monthly sites state no transit: said under the table
    grep -q '<p>Egress not priced: the sites of on_bought, on_monthly state no' "$dom" \
      || bad="$bad egress-unsaid"
    grep -q '<p>Break-even: buying bought against renting monthly after' "$dom" \
      || bad="$bad no-break-even"
    [ "$(grep -n '<h2>Answer</h2>' "$dom" | cut -d: -f1)" -lt \
      "$(grep -n '<h2>Scenario</h2>' "$dom" | cut -d: -f1)" ] || bad="$bad answer-not-first"
  elif [ "$name" = search ]; then
    grep -q '<strong>Answer: pools.servers.count = 10</strong>' "$dom" || bad="$bad no-answer"
    got=$(sed -n '/<table class="probes">/,/<\/table>/p' "$dom" | grep -c '<tr><td' || true)
    [ "$got" -eq 5 ] || bad="$bad probe-rows:$got!=5"
    # the answer before the scenario it varied (issue 39)
    [ "$(grep -n '<h2>Search</h2>' "$dom" | cut -d: -f1)" -lt \
      "$(grep -n '<h2>Scenario</h2>' "$dom" | cut -d: -f1)" ] || bad="$bad answer-not-first"
  elif [ "$name" = grid ]; then
    grep -q '<strong>Answer: pools.servers.count = 10</strong>: of the points meeting the target' "$dom" || bad="$bad no-answer"
    got=$(sed -n '/<table class="probes">/,/<\/table>/p' "$dom" | grep -c '<tr><td' || true)
    [ "$got" -eq 4 ] || bad="$bad probe-rows:$got!=4"
  elif [ "$rows" != - ]; then
    got=$(sed -n '/<table class="results">/,/<\/table>/p' "$dom" | grep -c '<tr><td' || true)
    [ "$got" -eq "$rows" ] || bad="$bad results-rows:$got!=$rows"
  fi
  if [ -n "$bad" ]; then
    echo "report-check: $name: FAILED:$bad ($dom)"; fail=1
  else
    echo "report-check: $name: ok ($charts charts, screenshot $out/$name.png)"
  fi
}
"$bin" run scenarios/default.lua -q -o "$out/default" > /dev/null
check default "$out/default" -
"$bin" run scenarios/mmc_queue.lua -q --sweep workloads.requests.arrivals.rate=6,6.4,6.8,7.2 \
  -o "$out/sweep" > /dev/null
check sweep "$out/sweep" 4
# M/M/c, mean service 1 s, 7.2/s, mean wait <= 0.1 s: Erlang C says 10 servers (0.0916 s;
# 9 wait 0.242 s), found in 5 probes (8, 16, 12, 10, 9)
sed -e 's/duration = "2d"/duration = "6h"/' \
    -e 's/^}$/  search = fs.search { key = "pools.servers.count", target = "queue_wait_mean_s <= 0.1", low = 8, high = 16 },\n}/' \
    scenarios/mmc_queue.lua > "$out/search.lua"
"$bin" run "$out/search.lua" -q -o "$out/search" > /dev/null
check search "$out/search" -
# the same as a grid search: every count of 9 to 12 runs, the fewest servers meeting it win
sed -e 's/duration = "2d"/duration = "6h"/' \
    -e 's/^}$/  search = fs.search { grid = { ["pools.servers.count"] = { 9, 10, 11, 12 } }, target = "queue_wait_mean_s <= 0.1", minimise = "servers" },\n}/' \
    scenarios/mmc_queue.lua > "$out/grid.lua"
"$bin" run "$out/grid.lua" -q -o "$out/grid" > /dev/null
check grid "$out/grid" -
"$bin" run scenarios/claims/12_*.lua -q -o "$out/claim" > /dev/null || true
check claim "$out/claim" -
# a comparison of five ways to pay (issue 39): the ranked answer opens the page
"$bin" run scenarios/five_ways_to_pay.lua -q -o "$out/five" > /dev/null
check five "$out/five" -
exit $fail
