#!/bin/sh
# gpu_sparse_checks.sh - the GPU checks of the integer mma.sp rows (s8/u8
# m16n8k32/k64, s4/u4 m16n8k64/k128, .sp and ::ordered_metadata), of the
# fp8 mma.sp m16n8k64 rows and of the wgmma.mma_async.sp rows of hopper, in
# one go; everything is logged to
# OUTDIR/gpu_sparse_checks.log (OUTDIR: $OUT, else ./gpu-out), the
# device-vs-model mismatches go to OUTDIR/sparse_*_mismatches.vec, and 300
# recorded cases of each row to OUTDIR/sparse_*_golden.vec (to become
# corpus/golden/h100 once they agree with the model).  Run from the
# repository root after building with CUDA (cmake -S . -B build-gpu
# -DCMAKE_CUDA_ARCHITECTURES=90a; cmake --build build-gpu --target mmafuzz test_gpu).
#
# usage: tests/cuda/gpu_sparse_checks.sh [BUILD] [TILES_PER_ROW]
set -u
B=${1:-build-gpu}
TILES=${2:-4096}
O=${OUT:-gpu-out}
mkdir -p "$O"
L="$O/gpu_sparse_checks.log"
T="$B/tests/cuda/test_gpu"
P='hopper/mma.sp*.s32.[su][48].*'      # the 64 integer rows
F='hopper/mma.sp*.m16n8k64.f32.e*'      # the 8 fp8 rows
W='hopper/wgmma.sp.*'                   # the 20 wgmma.sp rows
step() {
  echo "== $*" >> "$L"
  "$@" >> "$L" 2>&1
  echo "rc=$?" >> "$L"
}
echo "== $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1)" >> "$L"
# one-hot probes through the metadata: the packed A, the metadata register
# (a thread per row, as measured on an H200), the B of K = 64 (s8) and 128
# (s4), every selector
step "$T" layout --instr "$P"
# the rows against the model, every selector (boundary-rich integer generators)
step "$T" vs-model --instr "$P" -runs "$TILES" -seed 12 --mismatches "$O/sparse_int_mismatches.vec"
# the selectors bitwise alike, the model's alternatives, the "extremes" set
# (wrap and .satfinite clamp through sm_90a's two IMMA.SP of s4/u4)
step "$T" sparse --instr "$P" -runs 4096 -seed 13 --mismatches "$O/sparse_int_sparse.vec"
# the fuzz driver on the GPU (the GPU check, --verify gpu, is the default)
step "$B/mmafuzz" run --device cuda --instr "$P" -max_total_time 120 -seed 14 --out "$O/sparse_int_run"
# recordings for corpus/golden/h100 (300 cases a row), then the model on them
step "$B/mmafuzz" record --device cuda --instr "$P" -runs 300 -seed 2026 --out "$O/sparse_int_golden.vec"
step "$B/mmafuzz" check "$O/sparse_int_golden.vec"
# fp8: the layouts (B probes first: devices/cuda/NOTES.md, "the B operand"),
# the model (F16-emu on the kept products), the directed sets, recordings
step "$T" layout --instr "$F"
step "$T" vs-model --instr "$F" -runs "$TILES" -seed 15 --mismatches "$O/sparse_fp8_mismatches.vec"
step "$T" sparse --instr "$F" -runs 4096 -seed 16 --mismatches "$O/sparse_fp8_sparse.vec"
step "$B/mmafuzz" record --device cuda --instr "$F" -runs 300 -seed 2026 --out "$O/sparse_fp8_golden.vec"
step "$B/mmafuzz" check "$O/sparse_fp8_golden.vec"
# wgmma.sp: one-hot probes of every variant (packed A in shared memory and in
# registers, each warp's metadata, sel1, N = 256, the transposed layouts),
# the model, the selector and A source bitwise alike with the alternatives,
# N = 8 vs 256, the operand forms, recordings
step "$T" layout --instr "$W"
step "$T" vs-model --instr "$W" -runs "$TILES" -seed 17 --mismatches "$O/sparse_wgmma_mismatches.vec"
step "$T" sparse --instr "$W" -runs 1024 -seed 18 --mismatches "$O/sparse_wgmma_sparse.vec"
step "$T" variants --instr "$W" -runs 16 -seed 19
step "$T" forms --instr "$W" -runs 256 -seed 20
step "$B/mmafuzz" record --device cuda --instr "$W" -runs 300 -seed 2026 --out "$O/sparse_wgmma_golden.vec"
step "$B/mmafuzz" check "$O/sparse_wgmma_golden.vec"
# each wrapper's SASS (IMMA.SP / HMMA.SP / HGMMA.SP / QGMMA.SP / IGMMA.SP, selectors)
step ctest --test-dir "$B" -R cuda_sass --output-on-failure
echo "== $(date -u) done" >> "$L"
