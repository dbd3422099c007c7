#!/bin/sh
# Fails (exit 1) when the man page has drifted from the binary's help (make test):
# every command `fleetsim help` lists needs a section (.SS "fleetsim COMMAND ...") and
# every option `fleetsim help COMMAND` prints (--long or -x) must appear in it; the
# options of `fleetsim help` itself anywhere in the page.  The help text of the built
# binary is the reference, not the sources, wherever the command line is written.
#   sh tests/man_page.sh build/fleetsim docs/fleetsim.1
set -eu
bin=${1:-build/fleetsim}
page=${2:-docs/fleetsim.1}
[ -r "$page" ] || { echo "man page: cannot read $page" >&2; exit 1; }

# The page as plain text: roff's escapes for dashes, fonts and spacing removed.
text=$(sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\f([A-Z][A-Z]//g' \
           -e 's/\\f\[[^]]*\]//g' -e 's/\\[&%]//g' -e 's/\\(dq/"/g' "$page")

# The options a help text names, one a line: --long-name and -x.
options() {
  grep -oE '(^|[^A-Za-z0-9_-])--?[A-Za-z][A-Za-z0-9-]*' | sed -E 's/^[^-]+//' | sort -u
}

# Whether $2 holds option $1 as a whole word.
holds() {
  printf '%s\n' "$2" | grep -qE -e "(^|[^A-Za-z0-9_-])$1([^A-Za-z0-9_-]|\$)"
}

general=$("$bin" help) || { echo "man page: $bin help failed" >&2; exit 1; }
commands=$(printf '%s\n' "$general" |
           awk '/^commands:/ {inside = 1; next} inside && /^$/ {exit}
                inside && /^  [a-z]/ {print $1}')
if [ -z "$commands" ]; then
  echo "man page: found no commands in \`$bin help\` (no \"commands:\" list); update $0" >&2
  exit 1
fi

status=0
checked=0
for option in $(printf '%s\n' "$general" | options); do
  checked=$((checked + 1))
  if ! holds "$option" "$text"; then
    echo "$page: \`fleetsim help\` prints $option, which the page never mentions"
    status=1
  fi
done
for command in $commands; do
  section=$(printf '%s\n' "$text" |
            awk -v c="$command" '
              /^\.(SS|SH)/ { gsub(/"/, ""); inside = $1 == ".SS" && ($2 == c || ($2 == "fleetsim" && $3 == c)) }
              inside')
  if [ -z "$section" ]; then
    echo "$page: no section (.SS \"fleetsim $command ...\") for the command $command"
    status=1
    continue
  fi
  help=$("$bin" help "$command") || { echo "man page: $bin help $command failed" >&2; exit 1; }
  [ "$help" != "$general" ] || continue # no help of its own
  for option in $(printf '%s\n' "$help" | options); do
    checked=$((checked + 1))
    if ! holds "$option" "$section"; then
      echo "$page: \`fleetsim help $command\` prints $option, missing from the section \"fleetsim $command\""
      status=1
    fi
  done
done
if [ "$checked" = 0 ]; then
  echo "man page: found no option in any help text of $bin; update $0" >&2
  exit 1
fi

# The page is well-formed roff (no unknown macro or escape), where groff is installed.
if command -v groff > /dev/null 2>&1; then
  warnings=$(groff -man -ww -z "$page" 2>&1)
  if [ -n "$warnings" ]; then
    printf '%s\n' "$warnings"
    echo "$page: groff warns (above)"
    status=1
  fi
fi

if [ "$status" = 0 ]; then
  echo "man page: $page names the $(echo $commands | wc -w) commands and $checked options of \`fleetsim help\`"
else
  echo "man page: $page is out of date or malformed (it is written by hand: fix it there)"
fi
exit $status
