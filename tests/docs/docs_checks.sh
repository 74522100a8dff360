#!/usr/bin/env bash
# The documentation checks (label docs).  MODE:
#   formats MMAFUZZ  the formats of `mmafuzz list` count the same rows: the
#                    text lines, the JSON array, the Markdown table and the
#                    total of --summary (each format's own count; the text
#                    form is the one `list` printed before the others were
#                    added), and the summary's architectures add up to its
#                    total; a format that is not text|markdown|json is exit 2.
#   links SRC        every page of docs/ is linked from README.md, and every
#                    relative link of README.md and docs/*.md names a file
#                    of the checkout.
set -euo pipefail
mode=$1
fail() { echo "docs_checks $mode: $*" >&2; exit 1; }
case $mode in
formats)
  mf=$2
  text=$("$mf" list | wc -l)
  json=$("$mf" list --format json | grep -c '^[[,]\?{"name":')
  md=$("$mf" list --format markdown | grep -c '^| `')
  total=$("$mf" list --summary --format json | sed 's/.*"total":{"rows":\([0-9]*\).*/\1/')
  sum=$("$mf" list --summary --format markdown | awk -F'|' '$2 !~ /all|architecture|---/ {s += $5} END {print s}')
  mdtotal=$("$mf" list --summary --format markdown | awk -F'|' '$2 ~ /all/ {gsub(/[* ]/, "", $5); print $5}')
  echo "rows: text $text, json $json, markdown $md, summary total $total (json) $mdtotal (markdown), sum over architectures $sum"
  [ "$text" -gt 0 ] || fail "list printed nothing"
  for n in "$json" "$md" "$total" "$sum" "$mdtotal"; do [ "$n" = "$text" ] || fail "a format counts $n rows, text $text"; done
  # one pattern: every format selects the same rows
  p='hopper/mma.m16n8k16*'
  [ "$("$mf" list "$p" | wc -l)" = "$("$mf" list --format markdown "$p" | grep -c '^| `')" ] || fail "pattern $p: text and markdown differ"
  rc=0; "$mf" list --format html >/dev/null 2>"${TMPDIR:-/tmp}/docs_checks.$$" || rc=$?
  grep -q 'expected text, markdown or json' "${TMPDIR:-/tmp}/docs_checks.$$" || fail "--format html: no clear error"
  rm -f "${TMPDIR:-/tmp}/docs_checks.$$"
  [ $rc = 2 ] || fail "--format html: exit $rc, expected 2"
  ;;
links)
  cd "$2"
  for page in docs/*.md; do
    grep -q "](${page})" README.md || fail "README.md does not link $page"
  done
  for page in README.md docs/*.md; do
    dir=$(dirname "$page")
    # [text](target) with a relative target (no scheme, not an anchor)
    { grep -o '\](\([^)#:]*\)\(#[^)]*\)\?)' "$page" || true; } | sed 's/^](//; s/#.*//; s/)$//' | sort -u |
    while IFS= read -r t; do
      [ -n "$t" ] || continue
      [ -e "$dir/$t" ] || fail "$page links $t, which does not exist"
    done
  done
  echo "links: every docs page linked from README.md, every relative link resolves"
  ;;
*) echo "usage: docs_checks.sh formats MMAFUZZ | links SRC" >&2; exit 2 ;;
esac
