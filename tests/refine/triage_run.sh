#!/bin/sh
# A cross-generation run (hopper's model as the device, ampere's model
# compared) files mismatches; `triage` must explain every bucket (none
# "unexplained") and name the chunk length: DOMAIN section 4 gives hopper
# L = 32 bytes / 2 = 16 f16 elements, ampere 16 bytes / 2 = 8.  The device
# is hopper's row itself, so hopper's row (the first variant of ampere's
# catalogue) reproduces every case: one instruction, one bucket.
# usage: triage_run.sh MMAFUZZ WORKDIR
set -e
exe=$1; work=$2
rm -rf "$work"; mkdir -p "$work"
"$exe" run --device model:hopper --model ampere --instr 'hopper/mma.m16n8k16.f16.f16.f16.f16' \
    -seed 7 -runs 100000 -jobs 1 -batch 65536 -v --out "$work/store" >"$work/run.txt" 2>&1 || [ $? -eq 1 ]
"$exe" triage "$work/store" >"$work/triage.txt"
head -1 "$work/triage.txt"
grep -q "^1 buckets (0 unexplained)" "$work/triage.txt" || { echo "FAIL: not one explained bucket"; cat "$work/triage.txt"; exit 1; }
grep -q "explanation: behaves like hopper's.*L 8 -> 16" "$work/triage.txt" || { echo "FAIL: the bucket does not name hopper's row and L = 16"; exit 1; }
grep -q "also reproduced by: .*chunk length 16 instead of 8 ([0-9]* of [0-9]* files)" "$work/triage.txt" || { echo "FAIL: no per-file count of L = 16"; exit 1; }
grep -q "mmafuzz eval ampere/mma.m16n8k16.f16.f16.f16.f16 c=" "$work/triage.txt" || { echo "FAIL: no eval line"; exit 1; }
"$exe" triage --json "$work/store" >"$work/triage.json"
grep -q '"explained": true' "$work/triage.json" || { echo "FAIL: json"; exit 1; }
grep -q '"also": \[.*{"variant": "chunk length 16 instead of 8", "files": [1-9][0-9]*}' "$work/triage.json" \
    || { echo "FAIL: json lacks the per-file count of L = 16"; exit 1; }
# at most 4 files per bucket (the default -per_bucket), the rest counted in buckets.tsv
if grep -qE '"files": ([5-9]|[1-9][0-9]+), "explained"' "$work/triage.json"; then echo "FAIL: a bucket holds more than 4 files"; exit 1; fi
grep -q '^NEW bucket [0-9a-f]* hopper/' "$work/run.txt" || { echo "FAIL: no NEW bucket line (-v)"; exit 1; }
grep -q '^buckets: [0-9]* seen' "$work/run.txt" || { echo "FAIL: no bucket summary"; exit 1; }
[ -s "$work/store/buckets.tsv" ] || { echo "FAIL: no buckets.tsv"; exit 1; }
if grep -q '"explained": false' "$work/triage.json"; then echo "FAIL: json unexplained"; exit 1; fi
# the bucket's disagreements (read from buckets.tsv) are every one the run counted
total=$(sed -n 's/.*mismatches: \([0-9]*\) total.*/\1/p' "$work/run.txt")
grep -q "\"disagreements\": $total, \"buckets\"" "$work/triage.json" || { echo "FAIL: triage does not count the run's $total disagreements"; exit 1; }
grep -q "disagreements: $total (every one" "$work/triage.txt" || { echo "FAIL: the bucket does not show its $total disagreements"; exit 1; }
# the store's cases are hopper's outputs: fit from ampere's row must find hopper's among the rows that agree
"$exe" fit hopper/mma.m16n8k16.f16.f16.f16.f16 --start ampere "$work/store" >"$work/fit.txt" || true
grep -E "^table row hopper/mma.m16n8k16.f16.f16.f16.f16: (recovered exactly|among the agreeing rows)" "$work/fit.txt" \
    || { echo "FAIL: fit"; cat "$work/fit.txt"; exit 1; }
echo ok
