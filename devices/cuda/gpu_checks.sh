#!/bin/sh
# gpu_checks.sh - what the CUDA device layer needs a GPU for, in one go:
# the devices list, layout probes, the wgmma variant comparison, the
# benchmark, the golden recording and the device-vs-model fuzz run.
# Everything is logged to OUTDIR/gpu_checks.log (OUTDIR: $OUT, else ./gpu-out);
# the golden recording goes to OUTDIR/golden_h100.vec.gz and mismatching
# cases to OUTDIR/mismatches.vec.  Run from the repository root.
#
# usage: devices/cuda/gpu_checks.sh BUILD STEPS [FUZZ_PATTERN] [FUZZ_TILES] [SECS_PER_INSTR] [GOLDEN_RUNS]
#   STEPS: comma-separated subset of devices,layout,variants,bench,golden,fuzz
set -u
B=${1:-build-cuda}
STEPS=${2:-devices,layout,variants,bench,golden,fuzz}
PAT=${3:-hopper/*}
TILES=${4:-1000000}
SECS=${5:-12}
GOLDEN=${6:-2000}
O=${OUT:-gpu-out}
mkdir -p "$O"
L="$O/gpu_checks.log"
has() { case ",$STEPS," in *",$1,"*) return 0 ;; esac; return 1; }
log() { echo "== $*" >> "$L"; }

log "$(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1) steps=$STEPS"
if has devices; then
  log devices; "$B/mmafuzz" devices >> "$L" 2>&1
fi
if has layout; then
  log "layout probes (one-hot A/B/C per instruction and variant)"
  "$B/tests/cuda/test_gpu" layout >> "$L" 2>&1; log "rc=$?"
fi
if has variants; then
  log "wgmma variants: N=8 vs N=256, A from shared memory vs registers"
  "$B/tests/cuda/test_gpu" variants -runs 64 >> "$L" 2>&1; log "rc=$?"
fi
if has bench; then
  log "benchmark (dot products/s, transfers included)"
  "$B/mmafuzz_cuda_bench" -bytes 2048 -reps 5 >> "$L" 2>&1; log "rc=$?"
  "$B/mmafuzz_cuda_bench" -bytes 2048 -reps 5 hopper/wgmma.m64n8k16.f32.f16.f16 \
      hopper/wgmma.m64n8k32.f32.e4m3.e4m3@n256 hopper/mma.m16n8k32.f32.e4m3.e4m3.f32 >> "$L" 2>&1; log "rc=$?"
fi
if has golden; then
  log "golden recording: $GOLDEN cases per hopper instruction"
  "$B/mmafuzz" record --device cuda --instr 'hopper/*' -runs "$GOLDEN" -seed 2026 --out "$O/golden_h100.vec" >> "$L" 2>&1
  log "rc=$?"
  "$B/mmafuzz" check -errors 10 "$O/golden_h100.vec" >> "$L" 2>&1; log "check rc=$?"
  gzip -9 -f "$O/golden_h100.vec"
fi
if has fuzz; then
  log "device vs model: up to $TILES tiles and $SECS s per instruction of $PAT"
  "$B/tests/cuda/test_gpu" vs-model --instr "$PAT" -runs "$TILES" -seed 7 -max_instr_time "$SECS" \
      --mismatches "$O/mismatches.vec" >> "$L" 2>&1; log "rc=$?"
fi
log "$(date -u) done"
