#!/usr/bin/env bash
# Regenerate the generated blocks of README.md and docs/*.md from the current
# binary, or (--check) say which committed page differs and print the diff.
#
#   scripts/gen_docs.sh [--check] BUILD_DIR
#
# A generated block is everything between a marker pair in a page:
#
#   <!-- BEGIN GENERATED: mmafuzz ARGS... -->
#   ...what the command printed...
#   <!-- END GENERATED -->
#
# The marker names the command; it runs from the repository root with
# BUILD_DIR first on PATH (so `mmafuzz` is the binary under test), under bash
# with pipefail, so a block may trim its output (`| tail -n 3`).  $DOCS_TMP is a scratch
# folder, removed afterwards, for commands that write (a short `run` whose
# buckets `triage` then reads); the blocks run in page order and share it, so
# a later block may read what an earlier one wrote.  A block's output must not
# depend on time or machine (filter timings out, as the README's `fit` block does).  Output of a command with `--format markdown`
# is pasted as it is; any other output goes into a ```text fence.  A command
# that fails (its pipeline's status) stops the script with exit 2.
# Without --check the pages are rewritten in place; with it nothing is
# written, and the exit status is 1 if any page differs.
set -euo pipefail
check=0
if [ "${1:-}" = --check ]; then check=1; shift; fi
if [ $# -ne 1 ]; then echo "usage: scripts/gen_docs.sh [--check] BUILD_DIR" >&2; exit 2; fi
build=$(cd "$1" && pwd)
if [ ! -x "$build/mmafuzz" ]; then echo "gen_docs: no $build/mmafuzz" >&2; exit 2; fi
cd "$(dirname "$0")/.."
root=$(pwd)
DOCS_TMP=$(mktemp -d)
export DOCS_TMP
trap 'rm -rf "$DOCS_TMP"' EXIT
export PATH="$build:$PATH" LC_ALL=C

# Write FILE with its generated blocks regenerated to stdout.
regen() {
  local file=$1 line cmd in_block=0 n=0
  while IFS= read -r line || [ -n "$line" ]; do
    if [ $in_block = 1 ]; then
      if [ "$line" = '<!-- END GENERATED -->' ]; then in_block=0; printf '%s\n' "$line"; fi
      continue
    fi
    printf '%s\n' "$line"
    case $line in
      '<!-- BEGIN GENERATED: '*' -->')
        cmd=${line#'<!-- BEGIN GENERATED: '}; cmd=${cmd%' -->'}
        n=$((n + 1)); in_block=1
        case $cmd in mmafuzz\ *) ;; *) echo "gen_docs: $file: block $n: '$cmd' is not an mmafuzz command" >&2; return 2;; esac
        local out
        if ! out=$(cd "$root" && bash -c "set -eo pipefail; $cmd" 2>"$DOCS_TMP/stderr"); then
          echo "gen_docs: $file: block $n: '$cmd' failed:" >&2; cat "$DOCS_TMP/stderr" >&2; return 2
        fi
        # shellcheck disable=SC2076,SC2016
        if [[ " $cmd " =~ " --format markdown " ]]; then printf '%s\n' "$out"
        else printf '```text\n%s\n```\n' "$out"; fi
        ;;
    esac
  done <"$file"
  if [ $in_block = 1 ]; then echo "gen_docs: $file: block $n has no '<!-- END GENERATED -->'" >&2; return 2; fi
}

status=0
for page in README.md docs/*.md; do
  grep -q '^<!-- BEGIN GENERATED: ' "$page" || continue
  regen "$page" >"$DOCS_TMP/page" || exit 2
  if [ $check = 1 ]; then
    if ! diff -u --label "$page (committed)" --label "$page (from $build/mmafuzz)" "$page" "$DOCS_TMP/page"; then
      echo "gen_docs: $page differs from what the current binary generates; run scripts/gen_docs.sh BUILD_DIR" >&2
      status=1
    fi
  elif ! cmp -s "$page" "$DOCS_TMP/page"; then
    cp "$DOCS_TMP/page" "$page"
    echo "gen_docs: rewrote $page"
  fi
done
exit $status
