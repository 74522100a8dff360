#!/usr/bin/env bash
# The main job.  Sets up and builds, then:
#  - with a GPU: fuzzes every instruction the GPU can run against the model
#    (mmafuzz run --device cuda; stop with Ctrl-C, resume with --resume);
#  - without one: checks the model against every recorded vector (the
#    hardware recordings and the peer model's outputs in ../shared/vectors and
#    the golden set in corpus/golden), then runs a differential fuzz campaign
#    between two architectures' models (hopper against ampere) into a scratch
#    folder under build/ (never the committed mismatches/).
# The GPU is detected by the program itself (`mmafuzz devices --any cuda`,
# exit status 0 when a CUDA device is present), not by reading its text.
# Extra arguments go to `mmafuzz run`.
#   MMAFUZZ_TIME=S         seconds to fuzz (default 3600 on a GPU, 60 without)
#   MMAFUZZ_SKIP_APT=1     passed to scripts/setup.sh: no apt-get
#   MMAFUZZ_SKIP_SETUP=1   do not run scripts/setup.sh (already built)
#   MMAFUZZ_BIN=PATH       the mmafuzz to run (default build/mmafuzz)
#   MMAFUZZ_DEMO_OUT=DIR   the no-GPU run's scratch folder (default build/main-demo)
set -euo pipefail
cd "$(dirname "$0")/.."
# Progress of the build while it runs: the last "[ NN%] ..." step of the log
# (else its last line) with the time so far; on a terminal one line updated
# in place every 2 s (cut to the terminal's width), else a whole line
# whenever the percentage moves (at most every 20 s).
progress() {
  local pid=$1 log=$2 start=$SECONDS tty=0 last="" shown="" next=0 line width
  [ -t 1 ] && tty=1
  width=$(( ${COLUMNS:-$(tput cols 2>/dev/null || echo 100)} - 1 ))
  while kill -0 "$pid" 2>/dev/null; do
    sleep 2
    line=$(grep -a '^\[ *[0-9]*%\]' "$log" 2>/dev/null | tail -n 1 || true)
    [ -n "$line" ] || line=$(tail -n 1 "$log" 2>/dev/null || true)
    line="$(( (SECONDS - start) / 60 ))m$(( (SECONDS - start) % 60 ))s ${line}"
    if [ $tty = 1 ]; then
      printf '\r\033[K%s' "${line:0:$width}"
      shown=1
    else
      last=$(printf '%s' "$line" | grep -o '\[ *[0-9]*%\]' || true)
      if [ "$last" != "$shown" ] && [ $SECONDS -ge $next ]; then
        echo "   $line"
        shown=$last
        next=$((SECONDS + 20))
      fi
    fi
  done
  [ $tty = 1 ] && [ -n "$shown" ] && printf '\r\033[K'
  return 0
}
if [ "${MMAFUZZ_SKIP_SETUP:-0}" != 1 ]; then
  mkdir -p build
  echo "== setup and build (log: build/setup.log)"
  scripts/setup.sh >build/setup.log 2>&1 &
  setup_pid=$!
  trap 'kill "$setup_pid" 2>/dev/null' INT TERM
  progress "$setup_pid" build/setup.log
  if ! wait "$setup_pid"; then
    tail -n 30 build/setup.log
    echo "main: setup failed; the whole log is build/setup.log"
    exit 1
  fi
  trap - INT TERM
  echo "   built (log: build/setup.log)"
fi
mf=${MMAFUZZ_BIN:-build/mmafuzz}
vec_files=$(find ../shared/vectors ../shared/peer corpus/golden -name '*.vec.gz' -o -name '*.vec' 2>/dev/null | sort || true)
if [ -n "$vec_files" ]; then
  echo "== model against recorded vectors"
  # shellcheck disable=SC2086
  # --skip-unknown: the 2.0.2 file has cases of a row PTX forbids (docs/findings.md)
  "$mf" check -errors 20 --skip-unknown --override corpus/findings/h100/peer-superseded.vec \
    --override corpus/peer/mmasim-2.1.1-superseded.vec $vec_files 2>/dev/null | tail -n 3 ||
    echo "main: the model disagrees with recorded vectors (above)"
fi
if "$mf" devices --any cuda; then
  echo "== fuzzing on the GPU"
  exec "$mf" run --device cuda -max_total_time "${MMAFUZZ_TIME:-3600}" "$@"
else
  out=${MMAFUZZ_DEMO_OUT:-build/main-demo}
  rm -rf "$out"
  echo "== no GPU: differential run, hopper model against the ampere model; mismatches go to $out/"
  exec "$mf" run --instr 'hopper/mma.m16n8k16.*' --device model:ampere --out "$out" \
    -max_total_time "${MMAFUZZ_TIME:-60}" "$@"
fi
