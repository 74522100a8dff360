#!/usr/bin/env bash
# run --verify gpu against --verify host on the GPU (label gpu; TEST refuse
# needs none).
#
#   verify_gpu.sh MMAFUZZ WORKDIR TEST
#
# The positive control: hopper's mma.sync rows run on the GPU, compared with
# ampere's rows (--model ampere: F, chunk length and e_zero differ,
# shared/DOMAIN.md section 4), about 12% of the cases disagree.  Both paths
# must find the same disagreements, as sets of (tile, element, device d,
# model d) (--dump-disagreements, compared with cmp), and count the same.
#   equal     plain runs, host and gpu
#   pool      the same with a starting pool (corpus/golden/h100): mutate's tiles too
#   overflow  gpu with a hit buffer of 1000: the calls overflow, their tiles are
#             checked again on the host path, and nothing is lost
#   multi     two pipelines on one GPU (cuda:0,0) find what one does; the stats
#             record the cases of each
#   campaign  one shard on the host path, one on the GPU, two shards on the GPU
#             merged: the campaigns are equal (tests/campaign/lib.sh)
#   gen       every hopper row the GPU check takes (the default model), with the
#             golden recordings as starting pool: each call's first tiles as the
#             GPU generated them equal the host's gen_tile
#             (MMAFUZZ_VERIFY_CHECK_GEN=1), element by element and part by part
#             (MMAFUZZ_VERIFY_ELEM=0)
#   refuse    --verify gpu on a model:ARCH device is refused with a clear message
set -u
EXE=$1
WORK=$2
TEST=$3
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../campaign/lib.sh"
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK" || exit 1

if [ "$TEST" != refuse ] && ! "$EXE" devices --any cuda; then
    if [ "${MMAFUZZ_REQUIRE_GPU:-0}" = 1 ]; then
        echo "FAIL: MMAFUZZ_REQUIRE_GPU=1 and no CUDA GPU"
        exit 1
    fi
    echo "SKIP: no CUDA GPU"
    exit 77
fi

INSTR=${MMAFUZZ_VERIFY_INSTR:-'hopper/mma.*'}
RUNS=${MMAFUZZ_VERIFY_RUNS:-20000000}
mkdir -p nocorpus
plain() {  # plain OUT VERIFY [flags]: the positive control on $DEVICE (cuda), every disagreement dumped
    local out=$1 v=$2
    shift 2
    "$EXE" run --device "${DEVICE:-cuda}" --model ampere --instr "$INSTR" -seed 2027 -runs $RUNS --corpus "${CORPUS:-nocorpus}" \
        --verify "$v" --dump-disagreements "$out.dump" --out "$out" -minimize 4 "$@" >"$out.txt" 2>"$out.err"
    local rc=$?
    [ $rc -eq 1 ] || bad "$out: exit $rc, expected 1 (disagreements): $(tail -3 "$out.err")"
}
# per instruction: cases and disagreements from the summary table
counts() { awk '$1 ~ /^hopper\// { print $1, $2, $5 }' "$1.txt" | sort; }
same_dumps() {  # same_dumps A B
    local n=0
    for f in "$1.dump"/*.tsv; do
        n=$((n + 1))
        cmp -s "$f" "$2.dump/$(basename "$f")" || bad "$2: $(basename "$f") differs from $1's"
    done
    [ $n -ge 4 ] || bad "$1: only $n dump files"
    [ "$(ls "$1.dump" | wc -l)" = "$(ls "$2.dump" | wc -l)" ] || bad "$2: not the same dump files as $1"
    local lines
    lines=$(cat "$1.dump"/*.tsv | wc -l)
    [ "$lines" -ge 100000 ] || bad "$1: only $lines disagreements, the positive control gives more"
    counts "$1" >a.cnt
    counts "$2" >b.cnt
    cmp -s a.cnt b.cnt || bad "$2: counts differ from $1's: $(diff a.cnt b.cnt | head -4 | tr '\n' ' ')"
}

case $TEST in
equal)
    plain host host
    plain gpu gpu
    grep -q "verified on 1 GPU" gpu.txt || bad "the gpu run did not say it verified on the GPU: $(tail -2 gpu.txt)"
    same_dumps host gpu
    ;;
pool)
    # the same with a starting pool (the golden recordings), so that mutate's tiles are generated too
    CORPUS="$HERE/../../corpus/golden/h100"
    plain host host
    plain gpu gpu
    same_dumps host gpu
    ;;
overflow)
    plain host host
    plain small gpu -hits 1000
    grep -q "tiles checked again on the host" small.txt || bad "no call overflowed with -hits 1000"
    same_dumps host small
    ;;
multi)
    plain one gpu
    MMAFUZZ_SAME_GPU_TWICE=1 DEVICE=cuda:0,0 plain two gpu
    same_dumps one two
    grep -q "verified on 2 GPUs" two.txt || bad "two pipelines: $(tail -2 two.txt)"
    last=$(tail -1 two/stats.jsonl)
    total=$(echo "$last" | jq '.cases')
    pergpu=$(echo "$last" | jq '[.gpus[].cases] | add')
    n=$(echo "$last" | jq '.gpus | length')
    [ "$n" = 2 ] || bad "stats: $n GPUs, expected 2"
    [ "$total" = "$pergpu" ] || bad "stats: per-GPU cases $pergpu, total $total"
    [ "$(echo "$last" | jq '.gpus[1].cases')" -gt 0 ] || bad "the second pipeline ran nothing"
    ;;
campaign)
    for d in h g s; do
        "$EXE" campaign init $d --instr "$INSTR" --device cuda --model ampere -runs $RUNS -seed 2027 \
            --corpus "$WORK/nocorpus" --minimize-every 4096 >/dev/null || bad "init $d"
    done
    "$EXE" run --campaign h -shard 0/1 --verify host >h.txt 2>h.err || bad "host shard: $(tail -2 h.err)"
    "$EXE" run --campaign g -shard 0/1 --verify gpu >g.txt 2>g.err || bad "gpu shard: $(tail -2 g.err)"
    "$EXE" run --campaign s -shard 0/2 --verify gpu >s0.txt 2>s0.err || bad "gpu shard 0/2: $(tail -2 s0.err)"
    "$EXE" run --campaign s -shard 1/2 --verify gpu >s1.txt 2>s1.err || bad "gpu shard 1/2: $(tail -2 s1.err)"
    "$EXE" merge s s >/dev/null 2>merge.err || bad "merge: $(cat merge.err)"
    # the equality of campaigns (campaign/lib.sh), the findings replayed on the GPU
    campaign_ok h 100000 --device cuda --model ampere
    campaign_equal h g 100000 --device cuda --model ampere   # the GPU path equals the host path
    campaign_equal h s 100000 --device cuda --model ampere   # two GPU shards merged
    ;;
gen)
    for el in 1 0; do
        MMAFUZZ_VERIFY_CHECK_GEN=1 MMAFUZZ_VERIFY_ELEM=$el "$EXE" run --device cuda --instr 'hopper/*' -seed 2028 \
            -runs 400000000 --corpus "$HERE/../../corpus/golden/h100" --out gen$el >gen$el.txt 2>gen$el.err
        rc=$?
        grep -q "MMAFUZZ_VERIFY_CHECK_GEN" gen$el.err && bad "elem=$el: $(grep -m1 MMAFUZZ_VERIFY_CHECK_GEN gen$el.err)"
        [ $rc -eq 0 ] || bad "elem=$el: exit $rc: $(tail -3 gen$el.err)"
        grep -q "verified on 1 GPU" gen$el.txt || bad "elem=$el: not verified on the GPU: $(tail -2 gen$el.txt)"
    done
    ;;
refuse)
    "$EXE" run --device model:hopper --verify gpu -runs 1000 --out r >r.txt 2>r.err && bad "model:ARCH with --verify gpu ran"
    grep -q "verify gpu needs a CUDA device" r.err || bad "no clear message: $(cat r.err)"
    "$EXE" run --device model:hopper --verify sideways -runs 1000 --out r 2>r.err && bad "--verify sideways accepted"
    grep -q "expected gpu or host" r.err || bad "no clear message: $(cat r.err)"
    ;;
*)
    echo "unknown test $TEST"
    exit 2
    ;;
esac
[ $fail -eq 0 ] && echo "ok: $TEST"
exit $fail
