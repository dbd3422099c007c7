#!/bin/sh
# Rewrites every figure block of the docs (make docs) with what its command prints now,
# so a figure in prose never outlives the code that produced it.
#
# A figure block, in README.md or docs/*.md:
#
#   <!-- figure: COMMAND -->
#   ```console
#   $ COMMAND
#   ...what COMMAND printed on stdout...
#   ```
#   <!-- /figure -->
#
# COMMAND runs with /bin/sh from the repository root, `build/fleetsim` standing for the
# binary given here; it must exit 0.  Files it writes go under out/docs/.  A block marked
# `<!-- figure slow: COMMAND -->` is rewritten here too, but tests/test_docs.c, which
# reruns every other block and compares, skips it (the whole check stays within seconds).
# Timing figures (make bench) are never in blocks: they change from run to run; their
# prose names the command, the machine and the date instead.
#
# Usage: docs/figures.sh [FLEETSIM] [FILE.md...]   (default: build/fleetsim, README.md docs/*.md)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin=${1:-build/fleetsim}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- README.md docs/*.md
[ -x "$bin" ] || { echo "figures.sh: no binary $bin (run make first)" >&2; exit 1; }
mkdir -p out/docs
tmp=$(mktemp)
err=$(mktemp)
trap 'rm -f "$tmp" "$err"' EXIT
changed=0
for file in "$@"; do
  n=0 inside=0 blocks=0
  : > "$tmp"
  while IFS= read -r line || [ -n "$line" ]; do
    n=$((n + 1))
    if [ "$inside" = 1 ]; then
      case $line in
        '<!-- /figure -->') inside=0; printf '%s\n' "$line" >> "$tmp" ;;
      esac
      continue
    fi
    printf '%s\n' "$line" >> "$tmp"
    case $line in
      '<!-- figure: '*' -->' | '<!-- figure slow: '*' -->') ;;
      *) continue ;;
    esac
    command=${line#*: }
    command=${command% -->}
    run=$(printf '%s\n' "$command" | sed "s#build/fleetsim#$bin#g")
    if ! output=$(sh -c "$run" 2> "$err"); then
      echo "$file:$n: figure command failed: $command" >&2
      cat "$err" >&2
      exit 1
    fi
    { echo '```console'; printf '$ %s\n' "$command"
      [ -n "$output" ] && printf '%s\n' "$output"
      echo '```'; } >> "$tmp"
    inside=1 blocks=$((blocks + 1))
  done < "$file"
  if [ "$inside" = 1 ]; then
    echo "$file: a figure block has no <!-- /figure --> line" >&2
    exit 1
  fi
  if ! cmp -s "$tmp" "$file"; then
    cat "$tmp" > "$file"
    echo "$file: figures changed: reread the prose around them (git diff $file)"
    changed=$((changed + 1))
  elif [ "$blocks" -gt 0 ]; then
    echo "$file: figure blocks unchanged ($blocks)"
  fi
done
[ "$changed" = 0 ] || echo "figures.sh: $changed files rewritten"
