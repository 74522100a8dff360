#!/bin/sh
# Per-bucket counts are exact: a pure function of the cases run.  The same
# cases (seed, budget) run as one process with -jobs 1 and small batches, as
# one process with -jobs 2 and large batches, and as two processes (the
# second resuming the first) must give OUT/buckets.tsv the same buckets with
# the same counts; and in each, the counts must add up to the run summary's
# total disagreements (counted by the comparison loop itself, independently
# of the buckets).  The device is hopper's model and ampere's model is
# compared (the positive control: about 7% of the cases disagree).  The mix
# leaves out the mutation generator, whose pool grows with what a run files
# (after each batch): then the cases run depend on the seed alone.
# usage: bucket_counts.sh MMAFUZZ WORKDIR
exe=$1; work=$2
fail=0
bad() { echo "FAIL: $*"; fail=1; }
rm -rf "$work"; mkdir -p "$work/nocorpus"; cd "$work" || exit 1
# 3 instructions x 800 tiles of 128 cases per process of the split run
HALF=307200
run() {  # run OUT RUNS [flags]
    out=$1; runs=$2; shift 2
    "$exe" run --device model:hopper --model ampere --instr 'hopper/mma.m16n8k16.f*' -seed 5 -runs "$runs" \
        --mix uniform:2,window:3,cancel:2,special:2,boundary:3,table:2,zero:1 --corpus nocorpus --out "$out" "$@" >>"$out.txt" 2>&1
    [ $? -le 1 ] || bad "$out: run failed: $(tail -2 "$out.txt")"
}
run a $((2 * HALF)) -jobs 1 -batch 12800
run b $((2 * HALF)) -jobs 2 -batch 262144
run c $HALF -jobs 1 -batch 65536
run c $HALF -jobs 2 -batch 12800 --resume c
for d in a b c; do
    grep -v '^#' "$d/buckets.tsv" | cut -f1-3 | sort >"$d.counts"
    cases=$(sed -n 's/^done ([^)]*): \([0-9]*\) cases.*/\1/p' "$d.txt" | awk '{ s += $1 } END { print s + 0 }')
    total=$(sed -n 's/.*mismatches: \([0-9]*\) total.*/\1/p' "$d.txt" | awk '{ s += $1 } END { print s + 0 }')
    sum=$(awk '{ s += $2 } END { print s + 0 }' "$d.counts")
    echo "$d: $cases cases, $total disagreements, $sum in $(wc -l <"$d.counts") buckets"
    [ "$cases" -eq $((2 * HALF)) ] || bad "$d: $cases cases run, expected $((2 * HALF))"
    [ "$total" -ge 10000 ] || bad "$d: only $total disagreements: not the positive control"
    [ "$sum" -eq "$total" ] || bad "$d: the bucket counts add up to $sum, the run counted $total disagreements"
done
cmp -s a.counts b.counts || bad "-jobs 2 and other batches changed the bucket counts: $(diff a.counts b.counts | head -4 | tr '\n' ' ')"
cmp -s a.counts c.counts || bad "a run in two processes changed the bucket counts: $(diff a.counts c.counts | head -4 | tr '\n' ' ')"
[ $fail -eq 0 ] && echo "PASS: bucket counts"
exit $fail
