#!/usr/bin/env bash
# What a campaign's crash safety (fsyncs, checkpoints) costs: three runs of
# S seconds of one shard with it and three with `run --no-sync`, alternated,
# each in a fresh campaign of the same definition (the H100 positive
# control: the device compared with ampere's model, many findings).  Prints
# each run's rate, the two medians and the cost in percent of the no-sync
# median (the issue's bound: at most 5).
#   scripts/campaign_cost.sh MMAFUZZ WORKDIR [SECONDS] [DEVICE]
#   e.g. scripts/campaign_cost.sh build/mmafuzz /tmp/cost 60 cuda
set -euo pipefail
EXE=$1
WORK=$2
SECS=${3:-60}
DEVICE=${4:-cuda}
rm -rf "$WORK"
mkdir -p "$WORK"
declare -A rates
for k in 1 2 3; do
    for mode in sync nosync; do
        d=$WORK/$mode-$k
        "$EXE" campaign init "$d" --device "$DEVICE" --model ampere --instr 'hopper/mma.*' -runs 1000000000000000 \
            -seed 1 >/dev/null
        flag=()
        [ $mode = nosync ] && flag=(--no-sync)
        "$EXE" run --campaign "$d" -shard 0/1 -max_total_time "$SECS" "${flag[@]}" >"$d.out" 2>"$d.err" || true
        r=$(sed -n 's/^done .* = \([0-9.e+]*\) dot products\/s.*/\1/p' "$d.out")
        [ -n "$r" ] || { echo "run $mode $k: no summary: $(tail -2 "$d.err")"; exit 1; }
        echo "run $k $mode: $(grep '^done' "$d.out")"
        rates[$mode]+="$r "
    done
done
med() { printf '%s\n' $1 | sort -g | sed -n 2p; }
ms=$(med "${rates[sync]}")
mn=$(med "${rates[nosync]}")
awk -v s="$ms" -v n="$mn" 'BEGIN { printf "median dot products/s: %.4g with fsyncs and checkpoints, %.4g with --no-sync: cost %.2f%%\n", s, n, 100 * (n - s) / n }'
