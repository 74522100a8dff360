#!/usr/bin/env bash
# One campaign over all the host's GPUs (label gpu): scripts/multi_gpu.sh's
# equality step, the positive control as one GPU, all GPUs in one process,
# and one shard per GPU merged, which must be equal campaigns.
#
#   multi_gpu_test.sh MMAFUZZ WORKDIR
#
# Skips (77) without a CUDA GPU (fails then with MMAFUZZ_REQUIRE_GPU=1), and
# with one GPU: there is nothing to spread.  MMAFUZZ_MULTI_RUNS sets the budget
# (default 2e9 cases: about 13 s on one H200, from 1.2e10 in 76 s).
set -u
EXE=$1
WORK=$2
HERE=$(cd "$(dirname "$0")" && pwd)
if ! "$EXE" devices --any cuda; then
    if [ "${MMAFUZZ_REQUIRE_GPU:-0}" = 1 ]; then
        echo "FAIL: MMAFUZZ_REQUIRE_GPU=1 and no CUDA GPU"
        exit 1
    fi
    echo "SKIP: no CUDA GPU"
    exit 77
fi
n=$("$EXE" devices --json | sed -n 's/.*"cuda": \([0-9]*\).*/\1/p')
if [ "${n:-0}" -lt 2 ]; then
    echo "SKIP: $n CUDA GPU; one campaign over several GPUs needs two or more"
    exit 77
fi
rm -rf "$WORK"
MMAFUZZ_MULTI_RUNS=${MMAFUZZ_MULTI_RUNS:-2000000000} exec bash "$HERE/../../scripts/multi_gpu.sh" "$EXE" "$WORK" equal report
