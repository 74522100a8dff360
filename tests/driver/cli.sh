#!/usr/bin/env bash
# `mmafuzz run / replay / shrink` from the outside: bad input gives a clear
# message and exit 2 (harness/cli.h); Ctrl-C finishes the batch, writes the
# state and the summary; --resume continues from the state file; shrink
# minimizes a saved case again; what a run files does not depend on -jobs;
# --model compares with another architecture's model.  Expected values: the
# contracts written in `mmafuzz run --help` / `replay --help` /
# `shrink --help`, and runs of the same cases set up another way.
#   cli.sh MMAFUZZ WORKDIR
set -u
EXE=$1
WORK=$2
INSTR=hopper/mma.m16n8k16.f32.f16.f16.f32
fail=0
bad() { echo "FAIL: $*"; fail=1; }
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK" || exit 1

# expect RC STDERR-REGEX CMD...
expect() {
    local rc=$1 re=$2
    shift 2
    "$@" >out.txt 2>err.txt
    local got=$?
    [ $got -eq "$rc" ] || bad "$*: exit $got, expected $rc"
    grep -Eq -- "$re" err.txt out.txt || bad "$*: no message matching '$re': $(head -c 300 err.txt)"
}

expect 2 "unknown generator 'bogus'" "$EXE" run --mix bogus --device model:ampere -runs 1
expect 2 "matches no instruction" "$EXE" run --instr 'hopper/mma.nosuch' --device model:ampere -runs 1
expect 2 "unknown device" "$EXE" run --device gpu0 -runs 1
expect 2 "model:nosucharch: unknown architecture" "$EXE" run --device model:nosucharch -runs 1
expect 2 "-jobs: expected" "$EXE" run --device model:ampere -jobs 0
expect 2 "--model: unknown architecture 'nosuch'" "$EXE" run --device model:ampere --model nosuch -runs 1
expect 2 "--model: unknown architecture 'nosuch'" "$EXE" replay --device model:ampere --model nosuch x.vec
expect 2 "is not a number" "$EXE" run --device model:ampere -runs many
expect 2 "campaign.state: cannot open" "$EXE" run --resume nosuchdir
expect 2 "nosuchfile: cannot open" "$EXE" replay --device model:ampere nosuchfile
expect 0 "usage: mmafuzz run" "$EXE" run --help

# a corrupt state file: FILE:LINE
mkdir -p badstate
printf 'version 1\nseed 1\nbogus line here\n' >badstate/campaign.state
expect 2 "campaign.state:3: expected" "$EXE" run --resume badstate

# Ctrl-C: the run stops after its batch, prints the summary, writes the state
"$EXE" run --instr "$INSTR" --device model:ampere -seed 3 --out int -batch 4096 -jobs 2 >int.out 2>int.err &
pid=$!
sleep 2
kill -INT $pid
wait $pid
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 1 ] || bad "interrupted run: exit $rc"
grep -q 'done (interrupted)' int.out || bad "interrupted run: no summary"
grep -q "^tile $INSTR [1-9]" int/campaign.state || bad "interrupted run: no state"
[ -s int/stats.jsonl ] || bad "interrupted run: no stats.jsonl"
grep -q '"dot_products_per_s"' int/stats.jsonl || bad "stats.jsonl lacks dot_products_per_s"

# --resume continues the tile count: 2 x 25600 cases = 2 x 200 tiles of 128
"$EXE" run --instr "$INSTR" --device model:ampere -seed 5 --out res -runs 25600 -batch 12800 >/dev/null 2>&1
grep -q "^tile $INSTR 200$" res/campaign.state || bad "resume: first part did not stop at tile 200"
"$EXE" run --resume res -runs 25600 -batch 12800 >res.out 2>res.err
grep -q "^tile $INSTR 400$" res/campaign.state || bad "resume: second part did not reach tile 400"
grep -q "seed 5," res.err || bad "resume: seed not taken from the state"

# shrink: a saved original minimizes to a file of the store
f=$(find res -name '*.vec' | head -1)
if [ -n "$f" ]; then
    "$EXE" shrink "$f" --out shrunk >shrink.out 2>shrink.err
    rc=$?
    [ $rc -eq 1 ] || bad "shrink: exit $rc, expected 1 (still mismatching)"
    [ "$(find shrunk -name '*.vec' | wc -l)" -eq 1 ] || bad "shrink: expected one file in shrunk/"
else
    bad "resume run filed no mismatch"
fi

# the files a run writes depend on the seed and the cases, not on -jobs
# (-per_bucket without a limit here and below: buckets depend on which side is
# the model, so the cross-model comparison files every recorded mismatch)
"$EXE" run --instr "$INSTR" --device model:ampere -seed 9 -per_bucket 1000000 --out j1 -runs 40960 -batch 20480 -jobs 1 >/dev/null 2>&1
"$EXE" run --instr "$INSTR" --device model:ampere -seed 9 -per_bucket 1000000 --out j3 -runs 40960 -batch 20480 -jobs 3 >/dev/null 2>&1
(cd j1 && find . -name '*.vec' | sort) >j1.list
(cd j3 && find . -name '*.vec' | sort) >j3.list
[ -s j1.list ] || bad "-jobs 1 run filed nothing"
cmp -s j1.list j3.list || bad "-jobs 1 and -jobs 3 filed different mismatches"

# --model: the hopper model as the device against the ampere model finds
# what the ampere model as the device against the hopper model finds (a
# disagreement is symmetric, so the minimized cases and their hashes agree);
# replay needs the same --model to reproduce them
"$EXE" run --instr "$INSTR" --device model:hopper --model ampere -seed 9 -per_bucket 1000000 --out xm -runs 40960 -batch 20480 \
    >/dev/null 2>&1
(cd xm && find . -name '*.vec' | sort) >xm.list
cmp -s j1.list xm.list || bad "--model ampere on model:hopper filed other mismatches than model:ampere"
f=$(find xm -name '*.vec' | head -1)
grep -q "^# model: ampere/${INSTR#*/} " "$f" || bad "--model: no '# model:' line in $f"
grep -q -- "--model ampere" "$f" || bad "--model: the replay line lacks --model"
"$EXE" replay xm --device model:hopper --model ampere >xm.replay 2>&1
[ $? -eq 1 ] || bad "replay --model ampere: expected exit 1"
grep -q " 0 agree" xm.replay || bad "replay --model ampere: some cases agree: $(tail -1 xm.replay)"
"$EXE" replay xm --device model:hopper >xm.replay0 2>&1
[ $? -eq 0 ] || bad "replay without --model: expected exit 0 (hopper model on both sides)"

[ $fail -eq 0 ] && echo ok
exit $fail
