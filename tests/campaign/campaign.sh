#!/usr/bin/env bash
# Campaigns: definition, shards, exact resume after kills, merge, report.
#
#   campaign.sh MMAFUZZ WORKDIR TEST
#
# The positive control: hopper/mma.m16n8k16.f32.f16.f16.f32 run on
# model:ampere (F = 24 vs 25 and chunks of 8 vs 16 products disagree, see
# shared/DOMAIN.md section 4): 2,000,000 cases, about 2.5e5 disagreements.
#
# Equality of two campaign folders of one definition (the issue's), checked
# from the shard states by awk here, independently of `mmafuzz report`:
#  - the same cases per instruction, the same disagreements per
#    (instruction, signature class), the same buckets with the same
#    disagreements per (instruction, bucket), and every disagreement in a
#    bucket (the bucket counts of an instruction add up to its disagreements);
#  - every (instruction, class) with a non-zero count names a finding, whose
#    file exists, is whole and replays as still mismatching (`mmafuzz replay`);
#  - no finding file in the folder fails to read (replay skips none).
set -u
EXE=$1
WORK=$2
TEST=$3
INSTR=hopper/mma.m16n8k16.f32.f16.f16.f32
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK" || exit 1

RUNS=2000000
init() {  # init DIR [extra flags]
    local d=$1
    shift
    "$EXE" campaign init "$d" --instr "$INSTR" --device model:ampere -runs $RUNS -seed 3 --minimize-every 256 \
        --corpus "$WORK/nocorpus" "$@" >/dev/null
}
mkdir -p nocorpus
shard() { "$EXE" run --campaign "$1" -shard "$2" -jobs 1 -batch 12800 "${@:3}"; }
# shard_bg: the same in the background, as the process itself ($! is its pid: kill reaches it)
shard_bg() { (exec "$EXE" run --campaign "$1" -shard "$2" -jobs 1 -batch 12800 "${@:3}") & }

# equal REF DIR: the issue's equality (lib.sh), the findings replayed on model:ampere
equal() { campaign_equal "$1" "$2" 100000 --device model:ampere; }

reference() {
    init ref
    shard ref 0/1 >ref.out 2>ref.err
    rc=$?
    [ $rc -eq 0 ] || bad "reference run: exit $rc, expected 0 (the shard complete)"
    grep -q "^instr $INSTR $((RUNS / 128)) $RUNS " ref/shards/0-of-1/shard.state || bad "reference: not all tiles done"
}

case $TEST in
init)
    # a definition, its id; the same init again succeeds; another fails; 8 concurrent inits agree
    init c || bad "init failed"
    id=$(sed -n 's/^id //p' c/campaign.def)
    [ ${#id} -eq 16 ] || bad "no 16-digit id in campaign.def"
    init c || bad "an identical second init failed"
    init c -seed 4 2>err.txt && bad "an init with another seed into the same folder succeeded"
    grep -q "different campaign is defined there" err.txt || bad "no clear message for a different definition: $(cat err.txt)"
    for k in 1 2 3 4 5 6 7 8; do init par & done
    wait
    for k in 1 2 3 4 5 6 7 8; do init par || bad "an init after the concurrent ones failed"; done
    [ "$(sed -n 's/^id //p' par/campaign.def)" = "$id" ] || bad "concurrent inits: id differs from the same definition's"
    ls par | grep -q tmp && bad "concurrent inits left temporary files"
    # the definition fixes the run's options; an edited definition is refused
    "$EXE" run --campaign c -shard 0/2 --instr "$INSTR" 2>err.txt && bad "run --campaign accepted --instr"
    grep -q "definition fixes" err.txt || bad "no message for a fixed option"
    sed -i 's/^seed 3/seed 5/' par/campaign.def
    "$EXE" run --campaign par -shard 0/2 2>err.txt && bad "an edited definition was run"
    grep -q "not the hash" err.txt || bad "no message for an edited definition: $(cat err.txt)"
    # where I and N come from
    SLURM_ARRAY_TASK_ID=1 MMAFUZZ_SHARDS=3 "$EXE" run --campaign c -jobs 1 -batch 12800 >/dev/null 2>err.txt
    grep -q "shard 1/3 (I from SLURM_ARRAY_TASK_ID, N from MMAFUZZ_SHARDS)" err.txt || bad "shard from Slurm: $(head -1 err.txt)"
    JOB_COMPLETION_INDEX=2 "$EXE" run --campaign c -shards 3 -jobs 1 -batch 12800 >/dev/null 2>err.txt
    grep -q "shard 2/3 (I from JOB_COMPLETION_INDEX, N from -shards)" err.txt || bad "shard from Kubernetes: $(head -1 err.txt)"
    # I without N is refused (without both, the run is 0/1, the whole campaign: tests/driver/hostile.sh)
    env -u MMAFUZZ_SHARDS SLURM_ARRAY_TASK_ID=1 "$EXE" run --campaign c >/dev/null 2>err.txt &&
        bad "a run with I and no N succeeded"
    # a shard chooses its GPUs of the definition's kind; a model device is the definition's own
    shard c 0/2 --device cuda:0 2>err.txt && bad "a model campaign's shard ran on cuda:0"
    grep -q "cannot change" err.txt || bad "no clear message for another device: $(cat err.txt)"
    shard c 0/2 --device model:hopper 2>err.txt && bad "a model:ampere campaign's shard ran on model:hopper"
    grep -q "cannot change" err.txt || bad "no clear message for another model device: $(cat err.txt)"
    shard c 0/2 --device model:ampere -max_total_time 1 >/dev/null 2>err.txt
    rc=$?
    [ $rc -eq 0 ] || [ $rc -eq 3 ] || bad "--device naming the definition's own model device: exit $rc: $(tail -1 err.txt)"
    ;;
shards)
    reference
    # 4 shards at once; each runs exactly its share
    init four
    for i in 0 1 2 3; do shard four $i/4 >s$i.out 2>s$i.err & done
    wait
    for i in 0 1 2 3; do
        want=$(( (15625 - i + 3) / 4 ))
        grep -q "^instr $INSTR $want $((want * 128)) " four/shards/$i-of-4/shard.state ||
            bad "shard $i/4: expected $want tiles, $((want * 128)) cases"
    done
    # the status line counts the shard's buckets (the positive control's one bucket of this row)
    grep "^#" s0.err | tail -1 | grep -q "buckets 1 (new 1)" || bad "status line: $(grep '^#' s0.err | tail -1)"
    # merged = one process
    "$EXE" merge merged four >merge1.out 2>&1 || bad "merge failed: $(cat merge1.out)"
    equal ref merged
    # triage reads the campaign's bucket counts: the merged folder's, and a shard
    # present in two folders (merged and not) once
    want=$(awk '$1 == "bucket" { print $2, $3, $4 }' ref.sum | sort)
    [ -n "$want" ] || bad "the reference lists no bucket"
    for dirs in "merged" "merged four"; do
        # shellcheck disable=SC2086
        "$EXE" triage --json $dirs >triage.json 2>triage.err || bad "triage $dirs: exit $?: $(head -2 triage.err)"
        got=$(jq -r '.buckets[] | "\(.key | split("|") | .[0]) \(.id) \(.disagreements)"' triage.json | sort)
        [ "$got" = "$want" ] || bad "triage $dirs: buckets $got, the states say $want"
    done
    # the equality sees the buckets: one shard's bucket count off by one, or a
    # bucket under another id, and the campaigns differ (the rest unchanged)
    summary ref >ref.sum
    for breakage in count id; do
        rm -rf broken
        cp -r merged broken
        f=broken/shards/1-of-4/shard.state
        if [ $breakage = count ]; then
            awk '$1 == "bucket" && !done { $4 = $4 + 1; done = 1 } { print }' "$f" >"$f.tmp"
        else
            awk '$1 == "bucket" && !done { $3 = "0123456789abcdef"; done = 1 } { print }' "$f" >"$f.tmp"
        fi
        mv "$f.tmp" "$f"
        cmp -s "$f" merged/shards/1-of-4/shard.state && bad "control: the $breakage breakage changed nothing"
        summary broken >broken.sum
        cmp -s ref.sum broken.sum && bad "a bucket $breakage broken in one shard was not seen by the equality"
        diff ref.sum broken.sum | grep -v '^[<>] bucket' | grep -q '^[<>]' && bad "the $breakage breakage changed more than the buckets"
    done
    # merging twice, or into itself, changes nothing
    snap() { (cd "$1" && find . -type f ! -name '.*' -print0 | sort -z | xargs -0 sha256sum); }
    snap merged >snap1
    "$EXE" merge merged four >/dev/null 2>&1 || bad "second merge failed"
    "$EXE" merge merged merged >/dev/null 2>&1 || bad "merge into itself failed"
    "$EXE" merge merged merged/shards/2-of-4 >/dev/null 2>&1 || bad "merge of its own shard failed"
    snap merged >snap2
    cmp -s snap1 snap2 || bad "merging again changed the merged folder: $(diff snap1 snap2 | head -4 | tr '\n' ' ')"
    # another campaign is refused
    init other -seed 9
    "$EXE" merge merged other 2>err.txt && bad "merging another campaign succeeded"
    # a duplicate shard process is refused, the first one goes on
    init dup -runs 400000000
    shard_bg dup 0/2 >dup1.out 2>dup1.err
    pid=$!
    for k in $(seq 100); do grep -q "seed 3, device" dup1.err 2>/dev/null && break; sleep 0.1; done
    shard dup 0/2 >dup2.out 2>dup2.err
    rc=$?
    [ $rc -eq 2 ] || bad "a second process on a running shard: exit $rc, expected 2"
    grep -q "another process runs this shard (pid $pid on host" dup2.err || bad "no clear message: $(cat dup2.err)"
    kill -TERM $pid
    wait $pid
    [ -f dup/shards/0-of-2/shard.state ] || bad "SIGTERM: no state written"
    ;;
kill_points)
    reference
    # a kill inside a finding's write, inside the state write, and between a finding and its state
    for point in finding.write:3 state.write:20 finding.filed:5 finding.write:0 state.write:0; do
        d=k_${point//[:.]/_}
        init "$d"
        MMAFUZZ_CHECKPOINT_S=0 MMAFUZZ_FAULT=$point:kill shard "$d" 0/1 >/dev/null 2>&1
        rc=$?
        [ $rc -eq 137 ] || bad "$point: exit $rc, expected 137 (killed at the point)"
        shard "$d" 0/1 >/dev/null 2>"$d.err"
        [ $? -eq 0 ] || bad "$point: the resume failed: $(tail -2 "$d.err")"
        equal ref "$d"
        echo "$point: killed, resumed, equal"
    done
    # a kill before the first checkpoint: no state yet, the resume starts over
    init early
    shard_bg early 0/1 >/dev/null 2>&1
    pid=$!
    sleep 0.2
    kill -9 $pid
    wait $pid 2>/dev/null
    [ -f early/shards/0-of-1/shard.state ] && echo "note: the first checkpoint came before the kill"
    shard early 0/1 >/dev/null 2>&1
    equal ref early
    ;;
signals)
    # ten times the usual campaign, so that a signal sent 0.3 s in finds the run
    # still going however fast the machine is
    RUNS=20000000
    reference
    # SIGHUP (and SIGINT, SIGTERM): the state is written, the resume completes it exactly
    for sig in HUP INT TERM; do
        d=sig_$sig
        init "$d"
        MMAFUZZ_CHECKPOINT_S=10 shard_bg "$d" 0/1 >/dev/null 2>"$d.err1"
        pid=$!
        sleep 0.3
        kill -$sig $pid
        wait $pid
        rc=$?
        [ $rc -eq 3 ] || bad "SIG$sig: exit $rc, expected 3 (stopped before the end)"
        [ -f "$d/shards/0-of-1/shard.state" ] || bad "SIG$sig: no state written"
        done1=$(awk '$1 == "instr" { print $3 }' "$d/shards/0-of-1/shard.state")
        [ "${done1:-0}" -lt $((RUNS / 128)) ] || echo "note: SIG$sig came after the end"
        shard "$d" 0/1 >/dev/null 2>&1
        equal ref "$d"
        echo "SIG$sig at ${done1:-0} of $((RUNS / 128)) tiles: resumed, equal"
    done
    ;;
no_sync)
    reference
    # --no-sync (for measuring what crash safety costs): the same counts and findings on a clean run
    init ns
    shard ns 0/1 --no-sync >ns.out 2>ns.err || bad "--no-sync: exit $?, expected 0: $(tail -2 ns.err)"
    equal ref ns
    # it reaches every atomic write: an fsync that would fail at once (fs.fsync:0) is never called ...
    init nsf
    MMAFUZZ_FAULT=fs.fsync:0 shard nsf 0/1 --no-sync >/dev/null 2>nsf.err || bad "--no-sync still fsyncs: $(tail -2 nsf.err)"
    # ... while without it the same fault stops the run (the control: the fault point is live)
    init sf
    MMAFUZZ_FAULT=fs.fsync:0 shard sf 0/1 >/dev/null 2>sf.err && bad "control: fs.fsync:0 did not stop a run that syncs"
    # and no checkpoints: with a checkpoint after every batch, the second state write is never reached
    init nsc
    MMAFUZZ_CHECKPOINT_S=0 MMAFUZZ_FAULT=state.write:1:kill shard nsc 0/1 --no-sync >/dev/null 2>&1
    rc=$?
    [ $rc -eq 0 ] || bad "--no-sync: exit $rc with state.write:1:kill (a checkpoint was written before the end)"
    init sc
    MMAFUZZ_CHECKPOINT_S=0 MMAFUZZ_FAULT=state.write:1:kill shard sc 0/1 >/dev/null 2>&1
    rc=$?
    [ $rc -eq 137 ] || bad "control: exit $rc with state.write:1:kill and a checkpoint per batch, expected 137"
    ;;
random_kills)
    RUNS=6000000  # long enough (about 3 s on one thread) for kills to land in the middle
    reference
    # N kill -9 at random moments, then a resume to the end
    N=${N_KILLS:-20}
    init rk
    RANDOM=7
    t0=$(date +%s.%N)
    for k in $(seq "$N"); do
        MMAFUZZ_CHECKPOINT_S=0.05 shard_bg rk 0/1 >/dev/null 2>&1
        pid=$!
        sleep "0.$(printf %02d $((RANDOM % 25 + 3)))"
        kill -9 $pid 2>/dev/null
        wait $pid 2>/dev/null
        echo "kill $k: $(awk '$1 == "instr" { print $3 }' rk/shards/0-of-1/shard.state 2>/dev/null) tiles done"
    done
    shard rk 0/1 >/dev/null 2>&1
    t1=$(date +%s.%N)
    equal ref rk
    echo "$N kills and a resume: $(echo "$t1 - $t0" | bc) s"
    ;;
report)
    init rep
    for i in 0 1 2; do shard rep $i/3 -runs 1 >/dev/null 2>&1; done  # -runs is fixed by the definition: refused
    for i in 0 1; do shard rep $i/3 >/dev/null 2>&1; done            # shard 2 not run: a partial campaign
    MMAFUZZ_CHECKPOINT_S=0 MMAFUZZ_FAULT=state.write:30:kill shard rep 2/3 >/dev/null 2>&1  # killed mid-way
    "$EXE" report rep -o rep.html >rep.txt 2>rep.err || bad "report failed: $(cat rep.err)"
    "$EXE" report rep --json >rep.json 2>>rep.err || bad "report --json failed"
    # nothing outside the page: no URL, no src=/href= to anything, no @import or url()
    grep -Eqi '(https?:|//[a-z]|src=|href=|@import|url\()' rep.html &&
        bad "the HTML references something outside itself: $(grep -Eoi '(https?:|//[a-z]|src=|href=|@import|url\().{0,30}' rep.html | head -2)"
    grep -q '<svg' rep.html || bad "no inline SVG"
    # its numbers equal the shard states' (summed here by awk)
    cases=$(cat rep/shards/*/shard.state | awk '$1 == "instr" { s += $4 } END { print s }')
    dis=$(cat rep/shards/*/shard.state | awk '$1 == "instr" { s += $5 } END { print s }')
    grep -q "<b id=\"cases\">$cases</b>" rep.html || bad "HTML cases differ from the states' $cases"
    grep -q "<b id=\"disagreements\">$dis</b>" rep.html || bad "HTML disagreements differ from the states' $dis"
    [ "$(jq .cases rep.json)" = "$cases" ] || bad "JSON cases $(jq .cases rep.json), states $cases"
    [ "$(jq .disagreements rep.json)" = "$dis" ] || bad "JSON disagreements differ"
    for c in last-bit-rounding ulp\>1 sign; do
        want=$(cat rep/shards/*/shard.state | awk -v c="$c" '$1 == "class" && $3 == c { s += $4 } END { print s + 0 }')
        got=$(jq -r --arg c "$c" '.instr["'$INSTR'"].classes[$c] // 0' rep.json)
        [ "$got" = "$want" ] || bad "class $c: JSON $got, states $want"
    done
    grep -q "^cases $cases of 2000000" rep.txt || bad "text summary: $(sed -n 2p rep.txt)"
    # the buckets: the report's per-bucket counts are the shard states' bucket lines summed (by awk here)
    cat rep/shards/*/shard.state | awk '$1 == "bucket" { b[$2 " " $3] += $4 } END { for (x in b) print x, b[x] }' |
        sort >rep.bk.want
    jq -r '.buckets[] | "\(.instr) \(.id) \(.count)"' rep.json | sort >rep.bk.got
    [ -s rep.bk.want ] || bad "the shard states list no bucket"
    cmp -s rep.bk.want rep.bk.got || bad "JSON buckets differ from the states': $(diff rep.bk.want rep.bk.got | head -3 | tr '\n' ' ')"
    top=$(head -1 rep.bk.want | cut -d' ' -f2)
    grep -q "<td>$top</td><td>$INSTR</td><td>$(head -1 rep.bk.want | cut -d' ' -f3)</td>" rep.html ||
        bad "the HTML's bucket table lacks bucket $top with its count"
    grep -q "^ *[0-9]*  $top  $INSTR: behaves like" rep.txt || bad "the text report lacks bucket $top: $(grep -A2 '^buckets' rep.txt)"
    # a shard resumed after a kill is counted once: merged twice into the report's view, still the same
    "$EXE" merge rep2 rep >/dev/null 2>&1
    "$EXE" report rep rep2 --json >rep2.json
    [ "$(jq .cases rep2.json)" = "$cases" ] || bad "a shard present twice was counted twice"
    # stats: one file per process run, each record with run id, shard, host and GPU
    nfiles=$(ls rep/shards/*/stats/*.jsonl | wc -l)
    [ "$nfiles" -ge 3 ] || bad "expected a stats file per process run, got $nfiles"
    for f in rep/shards/*/stats/*.jsonl; do
        [ -s "$f" ] || continue  # the killed run wrote no record
        id=$(basename "$f" .jsonl)
        jq -e --arg id "$id" 'select(.run_id != $id or .shard == "" or .host == "" or (.gpu | test("model")) | not)' \
            "$f" >/dev/null && bad "$f: a record without its run id, shard, host or GPU"
        # the physical GPU: a model device says "model" (the GPU test checks a real UUID against nvidia-smi)
        jq -e 'select(.gpu_uuid != "model" or .gpu_pci_bus_id != "model")' "$f" >/dev/null &&
            bad "$f: a record without gpu_uuid and gpu_pci_bus_id"
    done
    grep -q '<th>GPU UUID</th><th>PCI bus id</th>' rep.html || bad "no GPU UUID and PCI bus id in the per-GPU table"
    grep -q '<td>model</td><td>model</td>' rep.html || bad "the per-GPU table does not show the runs' GPU identity"
    ;;
*)
    echo "unknown test $TEST"
    exit 2
    ;;
esac
[ $fail -eq 0 ] && echo "PASS: campaign $TEST"
exit $fail
