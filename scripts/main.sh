#!/usr/bin/env bash
# The main job.  Sets up and builds, then:
#  - with a GPU: fuzzes every instruction the GPU can run against the model
#    (mmafuzz run; stop with Ctrl-C, resume with --resume);
#  - without one: checks the model against every recorded vector (the
#    hardware recordings and the peer model's outputs in ../shared/vectors and
#    the golden set in corpus/golden), then runs a differential fuzz campaign
#    between two architectures' models (hopper against ampere).
# Extra arguments go to `mmafuzz run`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
mf=build/mmafuzz
vec_files=$(find ../shared/vectors ../shared/peer corpus/golden -name '*.vec.gz' -o -name '*.vec' 2>/dev/null | sort || true)
if [ -n "$vec_files" ]; then
  echo "== model against recorded vectors"
  $mf check -errors 20 --skip-unknown --override corpus/findings/h100/peer-superseded.vec \
    --override corpus/peer/mmasim-2.1.1-superseded.vec $vec_files 2>/dev/null | tail -n 3
fi
if "$mf" devices 2>/dev/null | grep -q '^cuda:[0-9]'; then
  echo "== fuzzing on the GPU"
  exec "$mf" run --device cuda:0 -max_total_time "${MMAFUZZ_TIME:-3600}" "$@"
elif "$mf" --help | grep -q '^  run '; then
  echo "== no GPU: differential run, hopper model against the ampere model"
  exec "$mf" run --instr 'hopper/mma.m16n8k16.*' --device model:ampere -max_total_time "${MMAFUZZ_TIME:-60}" "$@"
fi
