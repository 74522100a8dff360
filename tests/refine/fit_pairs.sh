#!/bin/sh
# For every pair of architectures (X, Y) that share a qualifier: does
# `mmafuzz fit X/QUAL --start Y --device model:X` recover X's row from Y's?
# Prints one markdown table line per pair:
#   exact       the fitted row is X's row
#   equivalent  X's row agrees with every case and no case separates it from
#               the fitted row (parameters the outputs cannot show, e.g. e_zero
#               below what an RZ f32 output can reach)
#   underdetermined / failed
# usage: fit_pairs.sh MMAFUZZ [QUALIFIER-GLOB] [RUNS] [TRIES]
mmafuzz=$1
glob=${2:-*}
runs=${3:-2000}
tries=${4:-20000}
"$mmafuzz" list | awk '{print $1}' | awk -F/ 'NF==2{print $2" "$1}' | sort >/tmp/fit_pairs.$$
echo "| instruction | device X | start Y | result | fitted row's differences from X's row |"
echo "|---|---|---|---|---|"
n_exact=0; n_eq=0; n_under=0; n_fail=0
for q in $(awk '{print $1}' /tmp/fit_pairs.$$ | uniq -d); do
  case "$q" in $glob) ;; *) continue ;; esac
  archs=$(awk -v q="$q" '$1==q{print $2}' /tmp/fit_pairs.$$)
  for x in $archs; do
    for y in $archs; do
      [ "$x" = "$y" ] && continue
      out=$("$mmafuzz" fit "$x/$q" --start "$y" --device "model:$x" -runs "$runs" -tries "$tries" 2>&1)
      res=$(printf '%s\n' "$out" | sed -n 's/^result: \([a-z ]*\).*/\1/p' | sed 's/ *$//')
      tab=$(printf '%s\n' "$out" | sed -n 's/^table row [^ ]*: //p')
      d=$(printf '%s\n' "$out" | sed -n "s/^diff against the table's [^ ]*: //p")
      if [ "$tab" = "recovered exactly" ]; then r=exact; n_exact=$((n_exact+1))
      elif [ "$res" = "fitted" ] && [ "${tab%% (*}" = "among the agreeing rows" ]; then r=equivalent; n_eq=$((n_eq+1))
      elif [ "$res" = "underdetermined" ] && [ "${tab%% (*}" = "among the agreeing rows" ]; then r=underdetermined; n_under=$((n_under+1))
      else r=failed; n_fail=$((n_fail+1)); fi
      echo "| $q | $x | $y | $r | ${d:-} |"
    done
  done
done
rm -f /tmp/fit_pairs.$$
echo
echo "exact $n_exact, equivalent $n_eq, underdetermined $n_under, failed $n_fail"
[ "$n_fail" -eq 0 ] && [ "$n_under" -eq 0 ]
