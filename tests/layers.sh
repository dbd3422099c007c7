#!/bin/sh
# Fails when a source file includes a header from a higher layer, or when the files of
# models/ include each other in a cycle.  The layers, bottom to top: sim, models,
# kernels, output, lua (README.md, "Layout").  A module is a .c file with its .h (and
# the private NAME_internal.h of a module made of several files counts as NAME); an
# edge A -> B means a file of A includes B's header.
#   sh tests/layers.sh [ROOT]      (ROOT: the tree to check, default .)
root=${1:-.}
cd "$root" || exit 2
rank() {
  case $1 in sim) echo 0;; models) echo 1;; kernels) echo 2;; output) echo 3;; lua) echo 4;;
  *) echo -1;; esac
}
status=0
files=$(ls sim/*.[ch] models/*.[ch] kernels/*.[ch] kernels/*.cu output/*.[ch] lua/*.[ch] 2>/dev/null)
[ -n "$files" ] || { echo "layers: no source files under $root"; exit 2; }
for f in $files; do
  own=$(rank "${f%%/*}")
  # '#include "dir/name.h"' lines, with their line numbers
  grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]*/' "$f" | while IFS= read -r hit; do
    dir=$(printf '%s\n' "$hit" | sed 's/^[0-9]*:[^"]*"\([a-z_]*\)\/.*/\1/')
    line=${hit%%:*}
    if [ "$(rank "$dir")" -gt "$own" ]; then
      echo "$f:$line: includes from $dir/, a higher layer than ${f%%/*}/: ${hit#*:}"
      echo x >> "${TMPDIR:-/tmp}/layers.$$"
    fi
  done
done
if [ -s "${TMPDIR:-/tmp}/layers.$$" ]; then status=1; fi
rm -f "${TMPDIR:-/tmp}/layers.$$"
# models/: the module graph must have no cycle (tsort names one if it does)
module() { basename "$1" | sed 's/\.[ch]$//; s/_internal\.h$//; s/_internal$//'; }
edges=$(for f in models/*.[ch]; do
  m=$(module "$f")
  grep -o '^[[:space:]]*#[[:space:]]*include[[:space:]]*"models/[a-z_]*\.h"' "$f" \
    | sed 's/.*"models\/\([a-z_]*\)\.h"/\1/' | while read -r h; do
      t=$(module "$h.h")
      [ "$t" != "$m" ] && echo "$m $t"
    done
done)
if ! printf '%s\n' "$edges" | tsort > /dev/null 2> "${TMPDIR:-/tmp}/tsort.$$"; then
  echo "layers: models/ files include each other in a cycle:"
  sed 's/^tsort: /  /' "${TMPDIR:-/tmp}/tsort.$$"
  status=1
fi
rm -f "${TMPDIR:-/tmp}/tsort.$$"
[ $status = 0 ] && echo "layers: $(echo "$files" | wc -l) files, every include points down or sideways; models/ has no cycle"
exit $status
