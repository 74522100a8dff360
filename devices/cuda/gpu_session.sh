#!/bin/sh
# gpu_session.sh - everything the CUDA device layer needs a GPU for, in one go:
# the devices list, layout probes, wgmma variant comparison, the benchmark,
# the golden recording and the device-vs-model fuzz run.  Logs and results go
# to OUTDIR (default $OUT, else ./gpu-out).  Run from the repository root with
# a built BUILD directory (default build-cuda).
#
# usage: devices/cuda/gpu_session.sh [BUILD] [FUZZ_TILES] [FUZZ_SECONDS] [GOLDEN_RUNS]
set -u
B=${1:-build-cuda}
TILES=${2:-1000000}
SECS=${3:-12}
GOLDEN=${4:-2000}
O=${OUT:-gpu-out}
mkdir -p "$O"
[ -d "$B/lib" ] && export LD_LIBRARY_PATH="$PWD/$B/lib:${LD_LIBRARY_PATH:-}"
log() { echo "== $*" | tee -a "$O/summary.txt"; }

log "$(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1)"
log devices
"$B/mmafuzz" devices > "$O/devices.txt" 2>&1; tail -3 "$O/devices.txt" | tee -a "$O/summary.txt"
log "layout probes (one-hot A/B/C per instruction and variant)"
"$B/tests/cuda/test_gpu" layout > "$O/layout.txt" 2>&1; echo "rc=$?" | tee -a "$O/summary.txt"
grep -E "FAIL|failed" "$O/layout.txt" | head -20 | tee -a "$O/summary.txt"
log "wgmma variants: N=8 vs N=256, A from shared memory vs registers"
"$B/tests/cuda/test_gpu" variants -runs 64 > "$O/variants.txt" 2>&1; echo "rc=$?" | tee -a "$O/summary.txt"
grep -E "^(ok|FAIL)" "$O/variants.txt" | cut -c1-200 | tee -a "$O/summary.txt"
log "benchmark (dot products/s, transfers included)"
"$B/mmafuzz_cuda_bench" -bytes 2048 -reps 5 > "$O/bench.txt" 2>&1; echo "rc=$?" | tee -a "$O/summary.txt"
cat "$O/bench.txt" | tee -a "$O/summary.txt"
log "golden recording: $GOLDEN cases per hopper instruction"
"$B/mmafuzz" record --device cuda --instr 'hopper/*' -runs "$GOLDEN" -seed 2026 --out "$O/golden_h100.vec" \
    > "$O/record.txt" 2>&1; echo "rc=$?" | tee -a "$O/summary.txt"
"$B/mmafuzz" check -errors 5 "$O/golden_h100.vec" > "$O/golden_check.txt" 2>&1; echo "check rc=$?" | tee -a "$O/summary.txt"
tail -3 "$O/golden_check.txt" | tee -a "$O/summary.txt"
gzip -9 -f "$O/golden_h100.vec"
log "device vs model: up to $TILES tiles and $SECS s per hopper instruction"
"$B/tests/cuda/test_gpu" vs-model --instr "hopper/*" -runs "$TILES" -seed 7 -max_instr_time "$SECS" \
    --mismatches "$O/mismatches.vec" > "$O/vs_model.txt" 2>&1; echo "rc=$?" | tee -a "$O/summary.txt"
cut -c1-160 "$O/vs_model.txt" | tee -a "$O/summary.txt"
log "$(date -u) done"
