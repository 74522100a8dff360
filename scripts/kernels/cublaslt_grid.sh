#!/usr/bin/env bash
# The cuBLASLt grid on a GPU, in one command (docs/kernels.md, "cuBLASLt from C"):
#   scripts/kernels/cublaslt_grid.sh BUILD_DIR OUT_DIR [TYPES]
# (1) OUT/algos.jsonl: the heuristic's algorithms (up to 8) of every call of
#     the grid M, N in {1,8,64,96,128,512,4096} x K in {16,64,1000,4096,16384,65536},
#     per type (default f16,bf16,tf32,e4m3:f32,e4m3:bf16; fp8 also with
#     --fast-accum: algos-fast.jsonl);
# (2) OUT/check.jsonl: every one of those algorithms' calls recorded
#     (-sample 32: the first and last 16 rows and columns of D above 32) and
#     checked at once against its kernel model (the table's, else the one
#     derived from the algorithm's split-K number); one JSON object per
#     recording, then a summary object;
# (3) OUT/failed.tar.gz: the recordings with an output not reproduced or no
#     model (for `mmafuzz check` and mmafuzz.kernels.fit elsewhere), the first 1200.
# Exit status: that of the record-and-check run (0 all reproduced, 1 not all, 2 error, 77 no GPU).
set -uo pipefail
if [ $# -lt 2 ]; then echo "usage: $0 BUILD_DIR OUT_DIR [TYPES]" >&2; exit 2; fi
exe=$1/mmafuzz
out=$2
types=${3:-f16,bf16,tf32,e4m3:f32,e4m3:bf16}
grid="1,8,64,96,128,512,4096 1,8,64,96,128,512,4096 16,64,1000,4096,16384,65536"
mkdir -p "$out"
rec=$(mktemp -d)
t0=$(date +%s)
"$exe" gemm --json $grid "$types" > "$out/algos.jsonl" || exit $?
fp8=$(echo "$types" | tr ',' '\n' | grep -E '^e[45]m[23]:' | paste -sd, -)
if [ -n "$fp8" ]; then "$exe" gemm --json --fast-accum $grid "$fp8" > "$out/algos-fast.jsonl" || exit $?; fi
t1=$(date +%s)
"$exe" gemm --json --record "$rec" --algo all --check -sample 32 -errors 0 $grid "$types" > "$out/check.jsonl"
rc=$?
t2=$(date +%s)
# the recordings that did not pass: their files named in check.jsonl
grep -v '"failed": 0,' "$out/check.jsonl" | sed -n 's/^{"file": "\([^"]*\)".*/\1/p' > "$out/failed.txt"
ls "$rec" | wc -l | sed 's/^/recordings: /' > "$out/summary.txt"
if [ -s "$out/failed.txt" ]; then
  # at most 1200 files (a recording with -sample 32 is at most ~10 kB): under the 16 MB a file may come back in
  tar -czf "$out/failed.tar.gz" -C / $(head -n 1200 "$out/failed.txt" | sed 's|^/||') 2>/dev/null
fi
{ echo "list: $((t1 - t0)) s; record and check: $((t2 - t1)) s; exit $rc"; tail -n 1 "$out/check.jsonl"; } >> "$out/summary.txt"
cat "$out/summary.txt"
rm -rf "$rec"
exit $rc
