#!/usr/bin/env bash
# A short fuzz run on the GPU over every runnable hopper instruction
# (label gpu).  Skips (77) without a CUDA device, unless MMAFUZZ_REQUIRE_GPU=1,
# when that is a failure.  Passes when the run completes (exit 0 or 1) and
# every filed mismatch replays as still mismatching.
#   gpu_run.sh MMAFUZZ WORKDIR
set -u
EXE=$1
WORK=$2
rm -rf "$WORK"
mkdir -p "$WORK"
if ! "$EXE" run --device cuda --instr 'hopper/mma.m16n8k16.f32.f16.f16.f32' -runs 1 --out "$WORK/probe" >/dev/null 2>"$WORK/probe.err"; then
    if grep -q 'device cuda' "$WORK/probe.err" || grep -q 'no instruction to run' "$WORK/probe.err"; then
        if [ "${MMAFUZZ_REQUIRE_GPU:-0}" = 1 ]; then
            echo "FAIL: MMAFUZZ_REQUIRE_GPU=1 but: $(cat "$WORK/probe.err")"
            exit 1
        fi
        echo "skipped: $(head -1 "$WORK/probe.err")"
        exit 77
    fi
fi
"$EXE" run --device cuda --instr 'hopper/*' -max_total_time 20 -seed 1 --out "$WORK/out" -report 5
rc=$?
[ $rc -le 1 ] || { echo "FAIL: run exit $rc"; exit 1; }
if [ -n "$(find "$WORK/out" -name '*.vec')" ]; then
    "$EXE" replay --device cuda "$WORK/out" >"$WORK/replay.out"
    rc=$?
    grep -q ' 0 fixed' "$WORK/replay.out" || { echo "FAIL: filed mismatches did not replay"; tail -3 "$WORK/replay.out"; exit 1; }
    [ $rc -eq 1 ] || { echo "FAIL: replay exit $rc"; exit 1; }
fi
# the stats records name the physical GPU as nvidia-smi does (UUID and PCI bus id), not by ordinal
if command -v nvidia-smi >/dev/null; then
    rec=$(tail -1 "$WORK/out/stats.jsonl")
    uuid=$(echo "$rec" | sed -n 's/.*"gpu_uuid":"\([^"]*\)".*/\1/p')
    pci=$(echo "$rec" | sed -n 's/.*"gpu_pci_bus_id":"\([^"]*\)".*/\1/p')
    nvidia-smi --query-gpu=uuid --format=csv,noheader | grep -qix "$uuid" ||
        { echo "FAIL: stats gpu_uuid '$uuid' is not a UUID nvidia-smi lists"; exit 1; }
    # nvidia-smi prints the bus id with 8 digits of domain (00000000:41:00.0), CUDA with 4
    nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | sed 's/^0000//' | grep -qix "$pci" ||
        { echo "FAIL: stats gpu_pci_bus_id '$pci' is not a bus id nvidia-smi lists"; exit 1; }
fi
echo ok
