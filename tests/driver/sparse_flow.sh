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

command -v xxhsum >/dev/null || { echo "FAIL: xxhsum (Debian package xxhash) is needed to check the hashes"; exit 1; }
rm -rf "$WORK"
mkdir -p "$WORK"
OUT=$WORK/out
"$EXE" run --instr "$INSTR" --device model:ampere -runs "$RUNS" -seed 1 -jobs 2 -per_bucket 1000000 --out "$OUT" \
    >"$WORK/run1.out" 2>"$WORK/run1.err"
rc=$?
[ $rc -eq 1 ] || bad "run: exit $rc, expected 1 (mismatches found)"
mapfile -t files < <(find "$OUT" -name '*.vec' | sort)
[ ${#files[@]} -gt 0 ] || bad "the run filed no mismatch"
echo "run: ${#files[@]} files"

model_d() { "$EXE" eval "$1" $2 | sed -n 's/^d=\([0-9a-f]*\).*/\1/p'; }

for f in "${files[@]}"; do
    name=$(basename "$f" .vec)
    line=$(grep -m1 '^c=' "$f")
    fields=$(echo "$line" | tr ' ' '\n' | grep -E '^(c|a|b|meta)=' | tr '\n' ' ' | sed 's/ $//')
    meta=$(echo "$line" | tr ' ' '\n' | sed -n 's/^meta=//p')
    [ ${#meta} -eq 8 ] || bad "$f: meta='$meta', expected 8 hex digits"
    h=$(printf 'mmafuzz-case 1\n%s\n%s\n' "$INSTR" "$fields" | xxhsum -H2 | cut -d' ' -f1)
    [ "$h" = "$name" ] || bad "$f: xxhsum -H2 gives $h"
    d=$(echo "$line" | tr ' ' '\n' | sed -n 's/^d=//p')
    m=$(echo "$line" | tr ' ' '\n' | sed -n 's/^model=//p')
    ed=$(model_d "$OTHER" "$fields")
    em=$(model_d "$INSTR" "$fields")
    [ "$ed" = "$d" ] || bad "$f: d=$d but the ampere row gives $ed"
    [ "$em" = "$m" ] || bad "$f: model=$m but the hopper row gives $em"
    [ "$ed" != "$em" ] || bad "$f: the rows agree on the minimized case"
    # an illegal nibble: 5 = indices (1, 1)
    badf=$(echo "$fields" | sed 's/meta=\([0-9a-f]\)/meta=5/')
    "$EXE" eval "$INSTR" $badf >/dev/null 2>&1
    [ $? -eq 2 ] || bad "$f: eval accepted the illegal metadata of: $badf"
done

"$EXE" replay "$OUT" --device model:ampere >"$WORK/replay.out" 2>"$WORK/replay.err"
rc=$?
[ $rc -eq 1 ] || bad "replay: exit $rc, expected 1"
want=$((2 * ${#files[@]}))
got=$(grep -c ' still-mismatching: ' "$WORK/replay.out")
[ "$got" -eq "$want" ] || bad "replay: $got cases still mismatching, expected $want"
grep -q 'hashes to' "$WORK/replay.err" && bad "replay: a file's name is not the hash of its first case"

if [ $fail -ne 0 ]; then
    echo "--- run stderr"; tail -5 "$WORK/run1.err"; echo "--- replay"; tail -5 "$WORK/replay.out"; tail -5 "$WORK/replay.err"
    exit 1
fi
echo "ok: ${#files[@]} minimized sparse mismatches, named by hash with their metadata, replayed"
