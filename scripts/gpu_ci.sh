#!/usr/bin/env bash
# The GPU gate, for a machine with an NVIDIA GPU (CI runners labelled `gpu`):
#   1. build;
#   2. ctest -L gpu with MMAFUZZ_REQUIRE_GPU=1 (a missing GPU fails);
#   3. a short fuzz run over every instruction the GPU runs;
#   4. replay of corpus/golden/ and of the saved mismatches/.
# Fails (exit 1) on a disagreement in a bucket (mmafuzz triage) that the
# saved mismatches/ do not already hold, or on a golden case that no longer
# agrees.  A new file of a known bucket is not news.
#   scripts/gpu_ci.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build-gpu}
SECONDS_FUZZ=${2:-120}
export MMAFUZZ_REQUIRE_GPU=1

cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD" -j"$(nproc)"
ctest --test-dir "$BUILD" -L gpu --output-on-failure

EXE=$BUILD/mmafuzz
"$EXE" devices --any cuda || { echo "gpu_ci: no CUDA device (mmafuzz devices --any cuda)"; "$EXE" devices | head -5; exit 1; }
OUT=$BUILD/gpu-ci-mismatches
rm -rf "$OUT"
mkdir -p "$OUT"
# known mismatches are not news: seed the store with the saved ones
if [ -d "$ROOT/mismatches" ]; then
    cp -r "$ROOT/mismatches/." "$OUT/"
fi
# the buckets of the saved files (bucket identity depends on the case only),
# and those the saved buckets.tsv counts
"$EXE" triage --json "$OUT" | sed -n 's/.*"id": "\([0-9a-f]*\)".*/\1/p' >"$BUILD/known-buckets.txt"
if [ -f "$OUT/buckets.tsv" ]; then
    awk -F'\t' '!/^#/ && NF >= 2 { print $1 }' "$OUT/buckets.tsv" >>"$BUILD/known-buckets.txt"
fi
sort -u -o "$BUILD/known-buckets.txt" "$BUILD/known-buckets.txt"
set +e
"$EXE" run --device cuda -max_total_time "$SECONDS_FUZZ" -seed "${MMAFUZZ_SEED:-$(date +%s)}" --out "$OUT" -report 30
rc=$?
set -e
[ $rc -le 1 ] || { echo "gpu_ci: fuzz run failed (exit $rc)"; exit 1; }
status=0
# the run's buckets: OUT/buckets.tsv (id, sightings, instruction, signature, explanation)
awk -F'\t' '!/^#/ && NF >= 2 { print $1 }' "$OUT/buckets.tsv" 2>/dev/null | sort -u >"$BUILD/run-buckets.txt"
if [ -n "$(comm -13 "$BUILD/known-buckets.txt" "$BUILD/run-buckets.txt")" ]; then
    echo "gpu_ci: new bucket(s):"
    for id in $(comm -13 "$BUILD/known-buckets.txt" "$BUILD/run-buckets.txt"); do
        grep "^$id	" "$OUT/buckets.tsv"
    done
    status=1
fi
if [ -d "$ROOT/corpus/golden" ]; then
    if ! "$EXE" replay --device cuda "$ROOT/corpus/golden"; then
        echo "gpu_ci: a golden case no longer agrees"
        status=1
    fi
fi
if [ -n "$(find "$ROOT/mismatches" -name '*.vec' 2>/dev/null)" ]; then
    # saved mismatches: report what changed (fixed / device-changed); still-mismatching ones are known
    set +e
    "$EXE" replay --device cuda "$ROOT/mismatches" | tee "$BUILD/replay-mismatches.txt"
    set -e
    if grep -q ' device-changed: ' "$BUILD/replay-mismatches.txt"; then
        echo "gpu_ci: a saved mismatch changed on the device"
        status=1
    fi
fi
exit $status
