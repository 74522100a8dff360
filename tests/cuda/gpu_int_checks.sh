#!/bin/sh
# gpu_int_checks.sh - the GPU checks of the integer and single-bit rows and of
# wgmma's operand forms (neg_a, neg_b, neg_ab, no_c, trans_*), in one go; everything is
# logged to OUTDIR/gpu_int_checks.log (OUTDIR: $OUT, else ./gpu-out), the
# device-vs-model mismatches of the integer rows go to OUTDIR/int_mismatches.vec
# and those of the forms are counted in the log.  Run from the repository root
# after building with CUDA (cmake -S . -B build-gpu -DCMAKE_CUDA_ARCHITECTURES=90a).
#
# usage: tests/cuda/gpu_int_checks.sh [BUILD] [TILES_PER_ROW] [FORM_TILES]
set -u
B=${1:-build-gpu}
TILES=${2:-4096}
FORMS=${3:-256}
O=${OUT:-gpu-out}
mkdir -p "$O"
L="$O/gpu_int_checks.log"
T="$B/tests/cuda/test_gpu"
step() {
  echo "== $*" >> "$L"
  "$@" >> "$L" 2>&1
  echo "rc=$?" >> "$L"
}
echo "== $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1)" >> "$L"
# one-hot probes of every integer/b1 fragment layout (all wgmma variants too),
# and of the transposed (MN-major) shared-memory layouts of the f16/bf16 rows
step "$T" layout --instr 'hopper/*s32*'
step "$T" layout --instr 'hopper/wgmma.m64n8k16.*'
# the integer rows against the model (boundary-rich generators of gen/gen_int.c)
step "$T" vs-model --instr 'hopper/*s32*' -runs "$TILES" -seed 11 --mismatches "$O/int_mismatches.vec"
# integer wgmma: N=8/256, A from shared memory/registers, bit for bit
step "$T" variants --instr 'hopper/wgmma*s32*' -runs 16
# the operand forms against the model's hypotheses and against negated inputs
step "$T" forms -runs "$FORMS"
# each wrapper's SASS opcode (IMMA, BMMA, IGMMA, BGMMA for the new rows)
step ctest --test-dir "$B" -R cuda_sass --output-on-failure
echo "== $(date -u) done" >> "$L"
