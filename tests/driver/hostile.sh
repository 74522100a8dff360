#!/usr/bin/env bash
# Regression tests of a probe by a hostile user, one per defect (each failed
# on the code before its fix):
#   hostile.sh MMAFUZZ WORKDIR NAME
#   probe_closed     probe with nothing selected names the architecture after
#                    closing the device (it read the closed device's info:
#                    a use after free that the sanitizer build reports)
#   triage_empty     triage of a folder with no bucket exits 0 (qsort of no
#                    element was given NULL: undefined, the sanitizer build
#                    exits 1)
#   empty_names      --instr '' and --out '' are errors that say what is
#                    empty (they selected every instruction, and said "File
#                    name too long")
#   campaign_default run --campaign DIR without a shard runs shard 0/1, the
#                    whole campaign, and says so
#   resume_budget    run --resume without -runs finishes the interrupted
#                    run's -runs (it ran without end); -runs given wins;
#                    a state without the budget line resumes as before
#   merge_paths      merge into a folder it cannot create names the folder
#                    and the reason; merging a shard of C into C/shards/...
#                    or C into a folder inside it is refused and leaves C as
#                    it was; merging a folder into itself changes nothing
#   triage_mixed     triage over shards of one campaign cut 1 and 2 ways is
#                    refused as report refuses it (it summed both)
#   nul_bytes        a NUL byte in a .vec file is FILE:LINE, exit 2 (a line
#                    starting with NUL was skipped, text after one ignored)
#   json_escape      every JSON output (stats.jsonl, stats/RUNID.jsonl, the
#                    report's --json, triage --json, devices --json) parses
#                    with a host name holding " \ and a control character
# Expected values: the contracts in each command's --help and the README,
# and for counts, the same campaign read another way.
set -u
EXE=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
WORK=$2
NAME=$3
INSTR=hopper/mma.m16n8k16.f32.f16.f16.f32
fail=0
bad() { echo "FAIL: $*"; fail=1; }
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK" || exit 1

# expect RC REGEX CMD...: exit status RC and REGEX in its stdout or stderr
expect() {
    local rc=$1 re=$2
    shift 2
    "$@" >out.txt 2>err.txt
    local got=$?
    [ $got -eq "$rc" ] || bad "$*: exit $got, expected $rc: $(head -c 300 err.txt)"
    [ -z "$re" ] || grep -Eq -- "$re" err.txt out.txt || bad "$*: no message matching '$re': $(head -c 300 err.txt)"
}

# a small campaign: one instruction on model:ampere, 4 tiles of 128 cases
init() {
    "$EXE" campaign init "$1" --instr "$INSTR" --device model:ampere -runs 512 -seed 3 --corpus "$WORK/nocorpus" \
        >/dev/null || bad "campaign init $1 failed"
}
mkdir -p nocorpus

# a file listing: every path and size under a folder
# a folder's files and sizes; the empty lock file a merge takes on its DST (the store's one-writer lock) is
# not content and is left out
snap() { (cd "$1" && find . -type f ! -name .store-lock -printf '%p %s\n' | sort); }

case "$NAME" in
state_values)
    # a --corpus or --instr value that campaign.state could not give back as it
    # was (a newline would add a line of its own, such as a second seed; a space
    # at the end or more than 200 characters were cut): refused at the start,
    # exit 2, rather than a state --resume cannot read (run_state.h)
    mkdir -p $'cor\nseed 9' 'cor2 ' "$(printf 'c%.0s' $(seq 1 230))"
    expect 2 "cannot record --corpus 'cor" "$EXE" run --instr "$INSTR" --device model:ampere -runs 1280 -jobs 1 \
        --corpus $'cor\nseed 9' --out N1
    grep -q '^seed 9' N1/campaign.state 2>/dev/null && bad "a corpus name's newline made a line of campaign.state"
    expect 2 "cannot record --corpus 'cor2 '" "$EXE" run --instr "$INSTR" --device model:ampere -runs 1280 -jobs 1 \
        --corpus 'cor2 ' --out N2
    expect 2 "cannot record --corpus 'ccc" "$EXE" run --instr "$INSTR" --device model:ampere -runs 1280 -jobs 1 \
        --corpus "$(printf 'c%.0s' $(seq 1 230))" --out N3
    # the control: a plain name is recorded and resumed
    mkdir -p cor3
    expect 1 "" "$EXE" run --instr "$INSTR" --device model:ampere -runs 12800 -jobs 1 --corpus cor3 --out N4
    expect 1 "" "$EXE" run --resume N4 -runs 1280 -jobs 1
    ;;
long_names)
    # a folder name longer than the store's paths take (run_store.h
    # ST_ROOT_MAX, campaign.h CP_DIR_MAX): refused before anything is made,
    # never cut short (a 1,093-character --out made a file '.stor')
    long=LONG
    for i in $(seq 1 9); do long=$long/$(printf 'd%.0s' $(seq 1 120)); done
    expect 2 "a folder name of ${#long} characters; a store's is at most" "$EXE" run --instr "$INSTR" \
        --device model:ampere -runs 1280 -jobs 1 --out "$long"
    [ -z "$(find LONG -type f 2>/dev/null)" ] || bad "--out of ${#long} characters: made $(find LONG -type f | wc -l) file(s)"
    expect 2 "a folder name of ${#long} characters; a campaign's is at most" "$EXE" campaign init "$long" \
        --instr "$INSTR" --device model:ampere -runs 1280
    [ -z "$(find LONG -type f 2>/dev/null)" ] || bad "campaign init of ${#long} characters: made a file"
    # the control: 700 characters work
    ok=OK
    for i in $(seq 1 5); do ok=$ok/$(printf 'e%.0s' $(seq 1 138)); done
    expect 1 "" "$EXE" run --instr "$INSTR" --device model:ampere -runs 12800 -jobs 1 --out "$ok"
    ;;
probe_closed)
    # hopper's row on the ampere model device: nothing the device runs is selected
    expect 2 "no instruction of ampere that the device runs is selected" \
        "$EXE" probe --device model:ampere --instr "$INSTR"
    grep -q "AddressSanitizer\|runtime error" err.txt && bad "probe: $(grep -m1 'Sanitizer\|runtime error' err.txt)"
    ;;
triage_empty)
    mkdir -p empty
    expect 0 "" "$EXE" triage empty
    grep -q "runtime error\|Sanitizer" err.txt && bad "triage: $(grep -m1 'runtime error\|Sanitizer' err.txt)"
    expect 0 "" "$EXE" triage --json empty
    ;;
empty_names)
    expect 2 "--instr '': empty pattern" "$EXE" run --instr '' --device model:ampere -runs 1 --out o1
    [ -e o1 ] && bad "run --instr '': wrote o1"
    expect 1 "'': empty pattern" "$EXE" list ''  # list: 1 when a pattern selects nothing (list --help)
    expect 2 "--out: the folder name is empty" "$EXE" run --out '' --device model:ampere -runs 1
    expect 2 "--resume: the folder name is empty" "$EXE" run --resume ''
    expect 2 "--campaign: the folder name is empty" "$EXE" run --campaign ''
    ;;
campaign_default)
    init c
    env -u SLURM_ARRAY_TASK_ID -u JOB_COMPLETION_INDEX -u MMAFUZZ_SHARDS \
        "$EXE" run --campaign c -jobs 1 >out.txt 2>err.txt
    rc=$?
    [ $rc -eq 0 ] || bad "run --campaign c: exit $rc, expected 0 (the whole campaign done): $(head -c 300 err.txt)"
    grep -q "shard 0/1 (from the default 0/1" err.txt || bad "run --campaign c: no status line saying 0/1: $(cat err.txt)"
    [ -s c/shards/0-of-1/shard.state ] || bad "run --campaign c: no shards/0-of-1/shard.state"
    # only one of I and N: still an error (a scheduler's index without a count)
    SLURM_ARRAY_TASK_ID=1 expect 2 "expected -shard I/N" env -u MMAFUZZ_SHARDS "$EXE" run --campaign c -jobs 1
    ;;
resume_budget)
    # -runs 128000000 on one instruction = 1000000 tiles of 128 cases (tile = M x N = 16 x 8): minutes of
    # work, stopped by Ctrl-C after half a second
    T=1000000
    "$EXE" run --instr "$INSTR" --device model:ampere -seed 5 --out r -runs $((T * 128)) -batch 12800 -jobs 1 \
        >r.out 2>&1 &
    pid=$!
    sleep 0.5
    kill -INT $pid
    wait $pid
    t1=$(sed -n "s|^tile $INSTR ||p" r/campaign.state)
    [ -n "$t1" ] && [ "$t1" -lt $T ] || bad "first part: expected an interrupted run below tile $T, got '$t1'"
    left=$(sed -n 's/^budget \([0-9]*\) -$/\1/p' r/campaign.state)
    [ "$left" = $(((T - t1) * 128)) ] || bad "state: budget '$left' cases left, expected ($T - $t1) x 128"
    # resumed without -runs: the same budget goes on (the state after a second Ctrl-C has what is left of it)
    "$EXE" run --resume r -batch 12800 -jobs 1 >r2.out 2>r2.err &
    pid=$!
    sleep 0.5
    kill -INT $pid
    wait $pid
    grep -q "finishing the interrupted run's budget: $left cases, no limit of time left" r2.err ||
        bad "resume: no note of the budget: $(head -3 r2.err)"
    t2=$(sed -n "s|^tile $INSTR ||p" r/campaign.state)
    left2=$(sed -n 's/^budget \([0-9]*\) -$/\1/p' r/campaign.state)
    [ "$left2" = $(((T - t2) * 128)) ] || bad "state after the resume: budget '$left2', expected ($T - $t2) x 128"
    # a run with 12800 cases (100 tiles) left finishes them and stops by itself
    sed -i 's/^budget .*/budget 12800 -/' r/campaign.state
    timeout 120 "$EXE" run --resume r -batch 12800 -jobs 1 >r3.out 2>r3.err
    rc=$?
    [ $rc -eq 0 ] || [ $rc -eq 1 ] || bad "resume of 12800 cases: exit $rc (124: it did not stop)"
    grep -q "^tile $INSTR $((t2 + 100))$" r/campaign.state || bad "resume: expected tile $((t2 + 100)): $(grep ^tile r/campaign.state)"
    grep -q "^budget 0 -$" r/campaign.state || bad "resume: the state does not say the budget is spent"
    # spent: a resume runs nothing and says how to run more
    expect 0 "budget of the run in r is spent" timeout 60 "$EXE" run --resume r -jobs 1
    grep -q "^tile $INSTR $((t2 + 100))$" r/campaign.state || bad "resume of a spent run ran tiles"
    # -runs given wins
    timeout 60 "$EXE" run --resume r -runs 1280 -jobs 1 >/dev/null 2>&1
    grep -q "^tile $INSTR $((t2 + 110))$" r/campaign.state || bad "resume -runs 1280: expected tile $((t2 + 110))"
    # an older state without the line: no limit, as before (stopped by -max_total_time here)
    sed -i '/^budget /d' r/campaign.state
    timeout 60 "$EXE" run --resume r -jobs 1 -max_total_time 1 >/dev/null 2>err.txt
    rc=$?
    [ $rc -eq 0 ] || [ $rc -eq 1 ] || bad "resume of a state without a budget line: exit $rc"
    grep -q "finishing the interrupted" err.txt && bad "a state without a budget line gave a budget"
    # a broken budget line: FILE:LINE
    sed -i 's/^seed /budget x y\nseed /' r/campaign.state
    expect 2 "campaign.state:[0-9]+: expected 'budget CASES SECONDS'" "$EXE" run --resume r -jobs 1
    ;;
merge_paths)
    init c
    "$EXE" run --campaign c -shard 0/1 -jobs 1 >/dev/null 2>&1 || bad "run of shard 0/1 failed"
    touch plainfile
    expect 2 "plainfile/m: cannot create the folder \(Not a directory\)" "$EXE" merge plainfile/m c
    mkdir ro && chmod 555 ro
    if [ -w ro ]; then
        echo "(running as a user that writes anywhere: the unwritable-folder check is left out)"
    else
        expect 2 "ro/m: cannot create the folder \(Permission denied\)" "$EXE" merge ro/m c
    fi
    snap c >before
    expect 2 "lies inside" "$EXE" merge c/shards/0-of-1 c
    expect 2 "lies inside" "$EXE" merge c/sub c
    expect 2 "lies inside" "$EXE" merge . c
    snap c >after
    cmp -s before after || bad "a refused merge changed c: $(diff before after | head -5 | tr '\n' ' ')"
    expect 0 "nothing to merge" "$EXE" merge c c
    expect 0 "" "$EXE" merge c c/shards/0-of-1
    snap c >after2
    cmp -s before after2 || bad "merging c into itself changed c: $(diff before after2 | head -5 | tr '\n' ' ')"
    # the report of c counts each finding once: as many as the store files under its shard
    n=$(find c/shards -name '*.vec' | wc -l)
    "$EXE" report c --json >rep.json 2>/dev/null || bad "report c failed"
    got=$(python3 -c 'import json,sys; print(json.load(open("rep.json"))["findings"])')
    [ "$got" = "$n" ] || bad "report c: $got findings, $n store files"
    ;;
triage_mixed)
    init c
    "$EXE" run --campaign c -shard 0/1 -jobs 1 >/dev/null 2>&1 || bad "run of shard 0/1 failed"
    cp -r c c2
    rm -rf c2/shards
    for i in 0 1; do
        "$EXE" run --campaign c2 -shard $i/2 -jobs 1 >/dev/null 2>&1 || bad "run of shard $i/2 failed"
    done
    expect 2 "their tiles overlap" "$EXE" report c c2
    expect 2 "shards of 1 and of 2: their tiles overlap" "$EXE" triage c c2
    # each alone is fine
    expect 0 "" "$EXE" triage c
    expect 0 "" "$EXE" triage c2
    ;;
nul_bytes)
    # two cases of hopper's f16 row, d = 1 + 16 x 1 x 1 = 17 (0x41880000), as tests/cli/bad/good_free_fields.vec;
    # the second with a wrong d, so that reading it fails the check: the NUL must not hide it
    ones=$(printf '3c00,%.0s' $(seq 15))3c00
    good="c=3f800000 a=$ones b=$ones d=41880000"
    wrong="c=3f800000 a=$ones b=$ones d=41800000"
    printf 'instr %s\n%s\n\0%s\n' "$INSTR" "$good" "$wrong" >start.vec
    printf 'instr %s\n%s\n%s\0 junk\n' "$INSTR" "$good" "${good% d=*}" >mid.vec
    printf 'instr %s\n%s\n%s\n' "$INSTR" "$good" "$wrong" >control.vec
    expect 1 "1 passed, 1 failed" "$EXE" check control.vec  # control: the wrong d is seen without the NUL
    expect 2 "start.vec:3: a NUL byte at column 1" "$EXE" check start.vec
    expect 2 "mid.vec:3: a NUL byte at column [0-9]+" "$EXE" check mid.vec
    gzip -c start.vec >start.vec.gz
    expect 2 "start.vec.gz:3: a NUL byte at column 1" "$EXE" check start.vec.gz
    expect 2 "start.vec:3: a NUL byte" "$EXE" replay --device model:ampere start.vec
    ;;
json_escape)
    # a host name with a quote, a backslash, a tab, a control character and a byte that is not UTF-8
    export MMAFUZZ_HOSTNAME=$(printf 'node"7\\rack\t\001x\377end')
    init c
    "$EXE" run --campaign c -shard 0/1 -jobs 1 >/dev/null 2>&1 || bad "run of shard 0/1 failed"
    "$EXE" run --instr "$INSTR" --device model:ampere -seed 5 --out plain -runs 1280 -jobs 1 >/dev/null 2>&1
    "$EXE" report c --json >report.json 2>/dev/null || bad "report --json failed"
    "$EXE" report c -o report.html >/dev/null 2>&1 || bad "report -o failed"
    "$EXE" triage --json c >triage.json 2>/dev/null || bad "triage --json failed"
    "$EXE" devices --json >devices.json 2>/dev/null
    # every file parses as JSON (stats files: one object a line), read as UTF-8 (RFC 8259 section 8.1), and the
    # stats records hold the host name whole: its text as the environment gave it, the bad byte as U+FFFD
    python3 - "$MMAFUZZ_HOSTNAME" c/shards/0-of-1/stats/*.jsonl plain/stats.jsonl report.json triage.json \
        devices.json <<'PY' || bad "JSON outputs: see above"
import json, os, sys
host = os.fsencode(sys.argv[1]).decode("utf-8", "replace")
bad = 0
for path in sys.argv[2:]:
    text = open(path, "rb").read().decode("utf-8")  # raises on bytes that are not UTF-8
    try:
        recs = [json.loads(l) for l in text.splitlines()] if path.endswith(".jsonl") else [json.loads(text)]
    except ValueError as e:
        print(f"{path}: not JSON: {e}")
        bad = 1
        continue
    for r in recs if path.endswith(".jsonl") else []:
        if r["host"] != host:
            print(f"{path}: host {r['host']!r}, expected {host!r}")
            bad = 1
sys.exit(bad)
PY
    # the report reads the host back whole (it cut the string at the quote): the HTML shows what follows it
    grep -q 'node&quot;7\\rack' report.html || bad "report.html: the host is cut: $(grep -o 'node[^<]*' report.html | head -1)"
    ;;
*)
    echo "hostile.sh: unknown test '$NAME'"
    exit 2
    ;;
esac
[ $fail -eq 0 ] && echo ok
exit $fail
