#!/usr/bin/env bash
# `mmafuzz gemm -runs N` (harness/gemm_fuzz.c) end to end without a GPU, over
# test_gemm_mock's stand-in device, whose fourth algorithm (MOCK_GEMM_LIE)
# reports split-K 1 but computes 3 slices (the stand-in's own kernel model:
# the expected structure comes from it, not from the fuzzer).  The fuzzer must
# bucket that algorithm's disagreements as "split 1 -> 2" or "split 1 -> 3",
# and file a finding that `mmafuzz check` reproduces with the explaining
# model and not with the guess.  usage: gemm_fuzz_mock.sh MOCK MMAFUZZ WORKDIR
set -euo pipefail
mock=$1 mmafuzz=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
MOCK_GEMM_LIE=1 "$mock" gemm 8,24 8,20 300,1000 f16 -runs 200 --out "$work/store" -seed 3 --json >"$work/out.json"
grep -q '"bucket": "f16:f16 split 1 -> [23]"' "$work/out.json" || { echo "no split bucket:"; cat "$work/out.json"; exit 1; }
if grep -q unexplained "$work/out.json"; then echo "unexplained disagreements:"; cat "$work/out.json"; exit 1; fi
shopt -s nullglob
files=("$work"/store/findings/*.npz)
[ ${#files[@]} -ge 1 ] || { echo "no finding filed"; exit 1; }
for f in "${files[@]}"; do
  # the header names the model it disagrees with and the one that explains it
  python3 - "$f" "$work" <<'PY'
import json, sys, zipfile
z = zipfile.ZipFile(sys.argv[1]); raw = z.read("header.npy"); h = json.loads(bytes(raw[raw.index(b"\n") + 1:]).decode())
open(sys.argv[2] + "/explained.txt", "w").write(h["finding"]["explained_by"])
open(sys.argv[2] + "/guess.txt", "w").write(h["finding"]["disagrees_with"])
PY
  "$mmafuzz" check --kernel "$work/explained.txt" "$f" >/dev/null || { echo "$f: not reproduced by its explaining model"; exit 1; }
  if "$mmafuzz" check --kernel "$work/guess.txt" "$f" >/dev/null; then echo "$f: the guess reproduces it"; exit 1; fi
done
echo "gemm fuzz over the stand-in: ${#files[@]} findings, each explained"
