#!/usr/bin/env bash
# The fuzz driver's flow on a sparse (mma.sp) row without a GPU: the model of
# ampere stands in as the "device" for hopper's
# mma.sp.m16n8k32.f32.f16.f16.f32 (the same hypothesis on other parameters:
# F = 24 vs 25, chunks of 8 vs 16 kept products; model/instr_table.def).
#
#   sparse_flow.sh MMAFUZZ WORKDIR [RUNS]
#
# Checks, each against a source independent of the driver's own code:
#  1. the run files mismatches and exits 1;
#  2. every file's first case carries meta= (one hex digit per group of 4 of
#     K = 32: 8 digits), and the file is named by XXH3-128 of its
#     canonical serialization "mmafuzz-case 1\nINSTR\nc= a= b= meta=\n"
#     (recomputed with xxhsum): the metadata is part of the case's identity;
#  3. d= / model= are what `mmafuzz eval` gives for ampere's / hopper's row,
#     which differ;
#  4. the same case with its metadata changed to an illegal nibble is refused
#     by `mmafuzz eval` (exit 2), not evaluated;
#  5. `mmafuzz replay DIR --device model:ampere` reads every file back (the
#     reader checks each name against the hash of its first case) and reports
#     every case still mismatching, exit 1.
set -u
EXE=$1
WORK=$2
RUNS=${3:-20000}
INSTR=hopper/mma.sp.m16n8k32.f32.f16.f16.f32
OTHER=ampere/mma.sp.m16n8k32.f32.f16.f16.f32
fail=0
bad() { echo "FAIL: $*"; fail=1; }

. "$(dirname "$0")/flow_lib.sh"
flow_run run

for f in "${files[@]}"; do
    flow_case "$f" 'c|a|b|meta'   # the name (the hash, meta= included), d= and model= (flow_lib.sh)
    meta=$(echo "$line" | tr ' ' '\n' | sed -n 's/^meta=//p')
    [ ${#meta} -eq 8 ] || bad "$f: meta='$meta', expected 8 hex digits"
    # an illegal nibble: 5 = indices (1, 1)
    badf=$(echo "$fields" | sed 's/meta=\([0-9a-f]\)/meta=5/')
    "$EXE" eval "$INSTR" $badf >/dev/null 2>&1
    [ $? -eq 2 ] || bad "$f: eval accepted the illegal metadata of: $badf"
done

flow_replay
grep -q 'hashes to' "$WORK/replay.err" && bad "replay: a file's name is not the hash of its first case"

if [ $fail -ne 0 ]; then
    echo "--- run stderr"; tail -5 "$WORK/run1.err"; echo "--- replay"; tail -5 "$WORK/replay.out"; tail -5 "$WORK/replay.err"
    exit 1
fi
echo "ok: ${#files[@]} minimized sparse mismatches, named by hash with their metadata, replayed"
