#!/usr/bin/env bash
# Integer sparse (mma.sp s8/u8, s4/u4) rows through the .vec format, without a
# GPU: `record --device model:ampere` writes hopper's integer sparse rows
# (integer arithmetic is exact: every architecture's model gives the same d),
# and the reader takes them back.
#
#   sparse_int_flow.sh MMAFUZZ WORKDIR
#
# Checks, each against a source independent of the writer:
#  1. every case line of a sparse row carries meta= with one hex digit per
#     group (s8/u8: a group of 4 of K, s4/u4: a group of 8), and a= has K values;
#  2. every nibble is legal (PTX ISA: two different indices, increasing for
#     ::ordered_metadata) and every a at a position the metadata prunes is 0,
#     checked here in awk from the PTX rule (s4/u4: index i keeps elements 2i
#     and 2i+1 of its group of 8);
#  3. `mmafuzz check` reads the file back: every case passes (hopper's model);
#  4. the same line with an illegal nibble, with a nonzero a in a pruned pair,
#     or with one meta= digit missing is refused as FILE:LINE, exit 2.
set -u
EXE=$1
WORK=$2
fail=0
bad() { echo "FAIL: $*"; fail=1; }
rm -rf "$WORK"
mkdir -p "$WORK"
F=$WORK/int_sparse.vec
"$EXE" record --device model:ampere --instr 'hopper/mma.sp*.s32.[su][48].*' -runs 40 -seed 3 --out "$F" \
    >"$WORK/record.out" 2>&1 || bad "record: exit $?"
rows=$(grep -c '^instr ' "$F")
[ "$rows" -eq 64 ] || bad "record wrote $rows instructions, expected the 64 integer sparse rows of hopper"

# 1, 2: the format and the PTX rules, from the instruction name alone
awk -v out="$WORK/awk.err" '
function hexv(c) { return index("0123456789abcdef", c) - 1 }
/^instr / {
    name = $2; k = name; sub(/.*\.m16n8k/, "", k); sub(/\..*/, "", k); k += 0
    four = (name ~ /\.[su]4\.[su]4\.s32$/); G = four ? 8 : 4
    ordered = (name ~ /ordered_metadata/); next
}
/^c=/ {
    meta = ""; na = 0
    for (f = 1; f <= NF; f++) {
        if ($f ~ /^meta=/) meta = substr($f, 6)
        if ($f ~ /^a=/) na = split(substr($f, 3), A, ",")
    }
    n++
    if (length(meta) != k / G) { printf "%s: meta=%s has %d digits, expected %d\n", name, meta, length(meta), k / G > out; bad++ }
    if (na != k) { printf "%s: a= has %d values, expected %d\n", name, na, k > out; bad++ }
    for (g = 0; g < k / G; g++) {
        v = hexv(substr(meta, g + 1, 1)); i0 = v % 4; i1 = int(v / 4)
        if (i0 == i1 || (ordered && i0 > i1)) { printf "%s: illegal nibble %x\n", name, v > out; bad++ }
        for (e = 0; e < G; e++) {
            slot = four ? int(e / 2) : e
            if (slot != i0 && slot != i1 && A[g * G + e + 1] !~ /^0+$/) {
                printf "%s: a[%d] = %s is pruned by nibble %x\n", name, g * G + e, A[g * G + e + 1], v > out; bad++
            }
        }
    }
}
END { if (n != 64 * 40) { printf "%d case lines, expected %d\n", n, 64 * 40 > out; bad++ } exit bad ? 1 : 0 }
' "$F" || { bad "the recorded file breaks the PTX sparse rules:"; head -5 "$WORK/awk.err"; }

# 3: read back
"$EXE" check "$F" >"$WORK/check.out" 2>&1 || bad "check: exit $?"
tail -1 "$WORK/check.out" | grep -q '^2560 passed, 0 failed' || bad "check: $(tail -1 "$WORK/check.out")"

# 4: broken copies of one s4 line (hopper/mma.sp.m16n8k64.s32.s4.s4.s32): each refused with its line number
L=$(grep -n -m1 -A1 '^instr hopper/mma.sp.m16n8k64.s32.s4.s4.s32$' "$F" | tail -1 | cut -d- -f2-)
meta=$(echo "$L" | tr ' ' '\n' | sed -n 's/^meta=//p')
first=${meta:0:1}
v=$((16#$first)); i0=$((v % 4)); i1=$((v / 4))
p=0; while [ $p -eq $i0 ] || [ $p -eq $i1 ]; do p=$((p + 1)); done   # a pair group 0 prunes
try() {   # try NAME LINE: the file with LINE as its case must be refused at line 3
    printf '# broken\ninstr hopper/mma.sp.m16n8k64.s32.s4.s4.s32\n%s\n' "$2" >"$WORK/$1.vec"
    "$EXE" check "$WORK/$1.vec" >"$WORK/$1.out" 2>&1
    rc=$?
    [ $rc -eq 2 ] || bad "$1: check exit $rc, expected 2"
    grep -q "$1.vec:3:" "$WORK/$1.out" || bad "$1: no FILE:LINE message: $(head -2 "$WORK/$1.out")"
}
try illegal_nibble "$(echo "$L" | sed 's/meta=./meta=5/')"
avals=$(echo "$L" | tr ' ' '\n' | sed -n 's/^a=//p')
newa=$(echo "$avals" | awk -F, -v q=$((2 * p + 1)) '{ $(q + 1) = "3"; OFS = ","; print }' OFS=,)
try pruned_pair "$(echo "$L" | sed "s/a=[^ ]*/a=$newa/")"
try short_meta "$(echo "$L" | sed 's/meta=./meta=/')"

[ $fail -eq 0 ] || exit 1
echo "ok: 64 integer sparse rows, 2560 cases written with meta= and read back; broken lines refused"
