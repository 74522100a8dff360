#!/bin/sh
# fit with no row that fits, on a device: the data hold hopper's outputs
# (recorded from model:hopper) and, from --device model:ampere, ampere's
# (probes and random cases); no one row gives both, since the rows differ
# (DOMAIN section 4: F 25 vs 24, L 16 vs 8).  The closest row (by agreement
# count) misses some of ampere's device cases, which fit minimizes on the
# device: each shown case still separates the two (d differs from the
# closest row's output) and a minimized one keeps at most 3 products (F needs
# Big, -Big, Small; L needs c, -Big, Small).
# usage: fit_nofit_device.sh MMAFUZZ WORKDIR
set -e
exe=$1; work=$2
rm -rf "$work"; mkdir -p "$work"
q=mma.m16n8k16.f16.f16.f16.f16
"$exe" record --device model:hopper --instr "hopper/$q" -runs 400 -seed 3 --out "$work/hopper.vec" 2>/dev/null
"$exe" fit "hopper/$q" --start ampere --device model:ampere -runs 50 "$work/hopper.vec" >"$work/fit.txt" || [ $? -eq 1 ]
grep -q "^result: no row of the space fits" "$work/fit.txt" || { echo "FAIL: not a no-fit"; cat "$work/fit.txt"; exit 1; }
grep -q "^closest: MF_INSTR(hopper, \"$q\"" "$work/fit.txt" || { echo "FAIL: no closest row"; cat "$work/fit.txt"; exit 1; }
grep -q "^cases it misses (first 5, minimized on the device):" "$work/fit.txt" || { echo "FAIL: heading"; exit 1; }
n=$(grep -c "(minimized: [0-3] of [0-9]* products" "$work/fit.txt" || true)
[ "$n" -ge 1 ] || { echo "FAIL: no minimized case with at most 3 products"; cat "$work/fit.txt"; exit 1; }
# every shown case: the device's d differs from the closest row's output
awk '/^  c=/{ d=""; m=""; for (i = 1; i <= NF; i++) { if ($i ~ /^d=/) d = substr($i, 3); if ($i ~ /^model=/) m = substr($i, 7) }
      if (d == m) { print "FAIL: a shown case is not missed: " $0; bad = 1 } } END { exit bad }' "$work/fit.txt"
echo ok
