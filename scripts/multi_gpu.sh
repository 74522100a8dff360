#!/usr/bin/env bash
# One campaign over all GPUs of a host: scaling, equality, report.
#
#   scripts/multi_gpu.sh MMAFUZZ WORKDIR STEP...
#
# STEP is one or more of:
#   scale     `run --device cuda:LIST --instr 'hopper/*'` for LIST = 0, 0,1,
#             0,1,2,3 and 0,...,7 (those the host has), SECONDS each, one
#             process, default settings, each into a fresh folder with the same
#             --corpus.  Writes WORKDIR/scale.tsv: GPUs, dot products/s (the
#             run's summary), the rate after the first 20 s (stats records),
#             the ratio to one GPU, and the cases of each GPU.
#   equal     the positive control (--model ampere --instr 'hopper/mma.*', seed
#             2027, RUNS cases) as three campaigns of one definition:
#               a  one GPU, one process (shard 0/1 on cuda:0)
#               b  all GPUs, one process (shard 0/1 on cuda:0,...,N-1)
#               c  one shard per GPU, N processes at once, each with its own
#                  CUDA_VISIBLE_DEVICES and its own copy of the campaign
#                  folder (as on N hosts), then `merge`d into c
#             b and c must equal a (tests/campaign/lib.sh campaign_equal: cases
#             per instruction, disagreements per class, buckets with their
#             counts), and in each the buckets must add up to the
#             disagreements and every finding replay on GPU 0 as still
#             mismatching.
#   report    `mmafuzz report` (text, --json, -o report.html) of c.
# Environment:
#   MMAFUZZ_MULTI_SECONDS  length of each scaling run (default 120)
#   MMAFUZZ_MULTI_RUNS     the positive control's budget; default: calibrated by
#                          a campaign of 1e9 cases on cuda:0, so that one GPU
#                          needs about MMAFUZZ_MULTI_TARGET_S seconds (default 120)
#   MMAFUZZ_MULTI_CORPUS   the starting pool of every run (default corpus/golden
#                          and corpus/findings of this checkout)
#   MMAFUZZ_MULTI_MIN_DISAGREEMENTS  the least a must find (default 100000: the
#                          positive control finds far more in two minutes)
#   MMAFUZZ_MULTI_MODEL    ARCH: run every step on model:ARCH instead, as if the
#                          host had MMAFUZZ_MULTI_GPUS (default 2) GPUs: checks
#                          the script itself where there is no GPU (ctest)
# Exit status: 0 every step passed, 1 a check failed, 2 bad usage or no GPUs.
set -u
EXE=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
WORK=$2
shift 2
[ $# -ge 1 ] || { echo "usage: multi_gpu.sh MMAFUZZ WORKDIR scale|equal|report..."; exit 2; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/tests/campaign/lib.sh"
SECS=${MMAFUZZ_MULTI_SECONDS:-120}
TARGET=${MMAFUZZ_MULTI_TARGET_S:-120}
CORPUS=()
for c in ${MMAFUZZ_MULTI_CORPUS:-$ROOT/corpus/golden $ROOT/corpus/findings}; do CORPUS+=(--corpus "$c"); done
mkdir -p "$WORK"
cd "$WORK" || exit 2

MODEL=${MMAFUZZ_MULTI_MODEL:-}
if [ -n "$MODEL" ]; then
    NG=${MMAFUZZ_MULTI_GPUS:-2}
    KIND=model:$MODEL
else
    NG=$("$EXE" devices --json | sed -n 's/.*"cuda": \([0-9]*\).*/\1/p')
    [ -n "$NG" ] && [ "$NG" -ge 1 ] || { echo "multi_gpu: no CUDA GPU (mmafuzz devices --json)"; exit 2; }
    KIND=cuda
fi
list() { seq -s, 0 $(($1 - 1)); }  # list N: 0,1,...,N-1
# dev N: the device spec of the GPUs 0..N-1 (model:ARCH in the script's own check)
dev() { if [ -n "$MODEL" ]; then echo "$KIND"; else echo "cuda:$(list "$1")"; fi; }
echo "multi_gpu: $NG GPUs ($KIND)"
rate_of() { sed -n 's/^done .* = \([0-9.e+]*\) dot products\/s.*/\1/p' "$1"; }

# steady DIR: dot products/s between the first stats record at >= 20 s and the last
steady() {
    awk '/^{/ {
            match($0, /"elapsed_s":[0-9.]+/); e = substr($0, RSTART + 12, RLENGTH - 12) + 0
            match($0, /"cases":[0-9]+/); c = substr($0, RSTART + 8, RLENGTH - 8) + 0
            if (e >= 20 && !have) { e0 = e; c0 = c; have = 1 }
            e1 = e; c1 = c }
         END { if (have && e1 > e0) printf "%.4g", (c1 - c0) / (e1 - e0); else printf "-" }' "$1/stats.jsonl"
}

step_scale() {
    local counts="1 2"
    [ "$NG" -ge 4 ] && counts="$counts 4"
    [ "$NG" -ge 8 ] && counts="$counts 8"
    local r1=""
    printf 'gpus\tdot_products_per_s\tafter_20s\tratio_to_1\tper_gpu_cases\n' >scale.tsv
    for n in $counts; do
        [ "$n" -le "$NG" ] || continue
        local d=scale$n
        rm -rf "$d"
        "$EXE" run --device "$(dev "$n")" --instr 'hopper/*' -seed 18 -max_total_time "$SECS" "${CORPUS[@]}" \
            --out "$d" >"$d.out" 2>"$d.err"
        local rc=$?
        [ $rc -le 1 ] || { bad "scale $n: exit $rc: $(tail -2 "$d.err")"; continue; }
        local r s per
        r=$(rate_of "$d.out")
        [ -n "$r" ] || { bad "scale $n: no summary: $(tail -2 "$d.err")"; continue; }
        s=$(steady "$d")
        per=$(tail -1 "$d/stats.jsonl" | grep -o '"gpus":\[[^]]*\]' | grep -o '"cases":[0-9]*' | cut -d: -f2 | paste -sd/)
        [ -n "$r1" ] || r1=$r
        printf '%s\t%s\t%s\t%s\t%s\n' "$n" "$r" "$s" "$(awk -v a="$r" -v b="$r1" 'BEGIN { printf "%.3f", a / b }')" \
            "$per" >>scale.tsv
        grep "^done" "$d.out"
    done
    column -t scale.tsv 2>/dev/null || cat scale.tsv
}

init() {  # init DIR: the positive control's definition
    "$EXE" campaign init "$1" --instr 'hopper/mma.*' --device "$KIND" --model ampere -runs "$RUNS" -seed 2027 \
        "${CORPUS[@]}" >/dev/null 2>"$1.init.err" || bad "init $1: $(cat "$1.init.err")"
}

# shard_run NAME DIR I/N [run flags]: one shard, timed; exit 0 means complete
shard_run() {
    local name=$1 d=$2 sh=$3
    shift 3
    local t0 rc
    t0=$(date +%s.%N)
    "$EXE" run --campaign "$d" -shard "$sh" "$@" >"$name.out" 2>"$name.err"
    rc=$?
    echo "$name: shard $sh of $d $* exit $rc in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s;" \
        "$(grep '^done' "$name.out")"
    [ $rc -eq 0 ] || bad "$name: exit $rc, expected 0 (shard complete): $(tail -2 "$name.err")"
}

step_equal() {
    if [ -n "${MMAFUZZ_MULTI_RUNS:-}" ]; then
        RUNS=$MMAFUZZ_MULTI_RUNS
    else
        # a campaign of 1e9 cases on one GPU, timed: the budget splits evenly over the rows and the rows with
        # the most disagreements (their handling is host work) set a campaign's length, so a plain run's rate
        # overstates it (20 s of `run` gave 6.2e8/s on an H200; 7.44e10 cases then took over 9 minutes)
        RUNS=1000000000
        rm -rf cal cal.*
        init cal
        local t0 t
        t0=$(date +%s.%N)
        shard_run cal cal 0/1 --device "$(dev 1)" >/dev/null
        t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
        RUNS=$(awk -v t="$t" -v want="$TARGET" 'BEGIN { n = int(10 * want / t + 0.5); print (n < 1 ? 1 : n) }')00000000
        echo "calibration: 1e9 cases in $t s on one GPU ($(grep '^done' cal.out)); -runs $RUNS"
    fi
    rm -rf a b c c.* c[0-9]*
    init a
    init b
    local i
    for i in $(seq 0 $((NG - 1))); do init c$i; done
    shard_run a a 0/1 --device "$(dev 1)"
    shard_run b b 0/1 --device "$(dev "$NG")"
    local t0
    t0=$(date +%s.%N)
    for i in $(seq 0 $((NG - 1))); do
        (CUDA_VISIBLE_DEVICES=$i shard_run c$i c$i "$i/$NG" >c$i.log) &
    done
    wait
    cat c[0-9]*.log
    echo "c: $NG shards at once in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
    grep -h "^FAIL" c[0-9]*.log && fail=1
    local srcs=()
    for i in $(seq 0 $((NG - 1))); do srcs+=("c$i"); done
    "$EXE" merge c "${srcs[@]}" >merge.out 2>&1 || bad "merge: $(cat merge.out)"
    local least=${MMAFUZZ_MULTI_MIN_DISAGREEMENTS:-100000} replay=(--device "$(dev 1)" --model ampere)
    summary a | awk '$1 == "instr" { c += $3; m += $4 } $1 == "class" { k++ } $1 == "bucket" { b++ }
         END { printf "a: %d cases, %d disagreements, %d non-zero classes, %d buckets\n", c, m, k, b }'
    campaign_ok a "$least" "${replay[@]}"
    campaign_equal a b "$least" "${replay[@]}"   # one process, all GPUs
    campaign_equal a c "$least" "${replay[@]}"   # one shard per GPU, merged
    # b's stats: every GPU ran cases
    [ -n "$MODEL" ] && return
    local per
    per=$(cat b/shards/*/stats/*.jsonl | tail -1 | grep -o '"gpus":\[[^]]*\]' | grep -o '"cases":[0-9]*' | cut -d: -f2 | paste -sd' ')
    echo "b: cases per GPU $per"
    [ "$(echo "$per" | wc -w)" -eq "$NG" ] || bad "b: its stats give the cases of $(echo "$per" | wc -w) GPUs, not $NG"
    for x in $per; do [ "$x" -gt 0 ] || bad "b: a GPU ran no case ($per)"; done
}

step_report() {
    [ -d c ] || { bad "report: no campaign c (run the equal step first)"; return; }
    "$EXE" report c >report.txt 2>report.err || bad "report: $(cat report.err)"
    "$EXE" report c --json >report.json 2>>report.err || bad "report --json: $(cat report.err)"
    "$EXE" report c -o report.html 2>>report.err || bad "report -o: $(cat report.err)"
    echo "report: $(wc -c <report.html) bytes of HTML"
    # every right-aligned label (row names, up to 66 characters) fits left of its x: about 6.5 px a character
    local clipped
    clipped=$(sed -n 's/.*<text x="\([0-9.]*\)"[^>]*text-anchor="end">\([^<]*\)<.*/\1 \2/p' report.html |
        awk '$1 < 6.5 * length($2) { print $2; exit }')
    [ -z "$clipped" ] || bad "report: the label $clipped does not fit its column"
    head -20 report.txt
}

for s in "$@"; do
    case $s in
    scale) step_scale ;;
    equal) step_equal ;;
    report) step_report ;;
    *) echo "multi_gpu: unknown step $s"; exit 2 ;;
    esac
done
[ $fail -eq 0 ] && echo "multi_gpu: ok ($*)"
exit $fail
