#!/bin/sh
# On a GPU: the probe table of every instruction of the device's
# architecture, and `fit --device` for every row from ampere's row of the same
# qualifier (or its closest row's parameters where ampere has none), with the
# device time each takes.  usage: gpu_fit.sh MMAFUZZ DEVICE ARCH [PATTERN] [RUNS]
exe=$1; dev=$2; arch=$3; pat=${4:-*}; runs=${5:-2000}
t0=$(date +%s.%N)
"$exe" probe --device "$dev" --instr "$arch/$pat"
echo "probe: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
echo "| instruction | start | result | fitted row's differences from the table row | seconds |"
echo "|---|---|---|---|---|"
for q in $("$exe" list "$arch/$pat" | awk '{print $1}' | sed "s|^$arch/||"); do
  # ampere's row of the qualifier, or where ampere has none (wgmma, fp8) the
  # parameters of its closest row; the row's own architecture only where
  # ampere has no row of the kind at all (integer rows)
  start=ampere
  "$exe" fit "$arch/$q" --start ampere 2>&1 | grep -q "has no row like" && start=$arch
  t1=$(date +%s.%N)
  out=$("$exe" fit "$arch/$q" --start "$start" --device "$dev" -runs "$runs" 2>&1)
  t2=$(date +%s.%N)
  res=$(printf '%s\n' "$out" | sed -n 's/^result: \([a-z ]*\).*/\1/p' | sed 's/ *$//')
  tab=$(printf '%s\n' "$out" | sed -n 's/^table row [^ ]*: //p')
  d=$(printf '%s\n' "$out" | sed -n "s/^diff against the table's [^ ]*: //p")
  [ -n "$res" ] || res="error: $(printf '%s' "$out" | tail -1)"
  echo "| $q | $start | $res; $tab | $d | $(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.1f", b - a }') |"
done
