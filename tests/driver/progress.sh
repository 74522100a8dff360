#!/usr/bin/env bash
# Progress and ETA of long `check` and `replay` jobs (run's status line,
# shared through rs_progress): on a terminal (here a pseudo-terminal made by
# util-linux `script`) a line rewritten in place with "of TOTAL (P%, ETA ...)"
# ending at 100%; off a terminal nothing for a job shorter than the 10 s
# period.  The input: 40 copies of a golden file (80,000 cases, about 47 MB),
# long enough (> 0.5 s) for a line on a terminal.
#   progress.sh MMAFUZZ WORKDIR SOURCE_DIR
set -u
EXE=$1
WORK=$2
SRC=$3
command -v script >/dev/null || { echo "skipped: no script(1) (util-linux) to make a terminal"; exit 77; }
fail=0
bad() { echo "FAIL: $*"; fail=1; }
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK" || exit 1
f=$SRC/corpus/golden/h100/mma.m16n8k16.f64.f64.f64.f64.vec
for i in $(seq 40); do cat "$f"; done >big.vec
size=$(stat -c %s big.vec)

# check: on a terminal
script -qfec "$EXE check big.vec" /dev/null >tty.out 2>&1
tr '\r' '\n' <tty.out | grep '^mmafuzz check: #' >lines.txt
[ -s lines.txt ] || bad "check on a terminal: no status line: $(head -c 300 tty.out)"
grep -q " of [0-9.]*M (100%, ETA 0h00m00s)  failed 0" lines.txt || bad "check: no final line at 100%: $(tail -1 lines.txt)"
grep -q "ETA [0-9]*h[0-9][0-9]m[0-9][0-9]s" lines.txt || bad "check: no ETA"
grep -q "^80000 passed, 0 failed" <(tr -d '\r' <tty.out) || bad "check on a terminal: summary differs"
# off a terminal: the output as before, no status line for a short job
"$EXE" check big.vec >plain.out 2>plain.err || bad "check failed"
[ -s plain.err ] && bad "check off a terminal printed a status line for a short job: $(head -c 200 plain.err)"
[ "$(tail -1 plain.out)" = "80000 passed, 0 failed" ] || bad "check: summary $(tail -1 plain.out)"

# replay (the same file as a store): on a terminal, ending with all its bytes done
script -qfec "$EXE replay --device model:hopper big.vec" /dev/null >rtty.out 2>&1
tr '\r' '\n' <rtty.out | grep '^mmafuzz replay: #' >rlines.txt
[ -s rlines.txt ] || bad "replay on a terminal: no status line: $(head -c 300 rtty.out)"
grep -q "cases 80.0k .* of [0-9.]*M (100%, ETA 0h00m00s)" rlines.txt || bad "replay: no final line at 100%: $(tail -1 rlines.txt)"
"$EXE" replay --device model:hopper big.vec >rplain.out 2>rplain.err
[ -s rplain.err ] && bad "replay off a terminal printed a status line for a short job"
grep -q "80000 agree" rplain.out || bad "replay: $(tail -1 rplain.out)"
rm -f big.vec
echo "input $size bytes"
[ $fail -eq 0 ] && echo "PASS: progress"
exit $fail
