#!/usr/bin/env bash
# Progress and ETA of long `check` and `replay` jobs (run's status line,
# shared through rs_progress): on a terminal (here a pseudo-terminal made by
# util-linux `script`) a line rewritten in place with "of TOTAL (P%, ETA ...)"
# ending at 100%; off a terminal plain lines.  MMAFUZZ_PROGRESS_S=0 makes
# every chance of a line print one (normally 0.5 s on a terminal, 10 s off
# it), so the test does not depend on the machine's speed.  The input: 5
# copies of a golden file, 10,000 cases.
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
for i in 1 2 3 4 5; do cat "$f"; done >big.vec
export MMAFUZZ_PROGRESS_S=0

# check: on a terminal
script -qfec "$EXE check big.vec" /dev/null >tty.out 2>&1
tr '\r' '\n' <tty.out | grep '^mmafuzz check: #' >lines.txt
[ "$(wc -l <lines.txt)" -ge 2 ] || bad "check on a terminal: fewer than 2 status lines: $(head -c 300 tty.out)"
grep -q $'\rmmafuzz check: #' tty.out || bad "check on a terminal: the line is not rewritten in place"
grep -q " of [0-9.]*M (100%, ETA 0h00m00s)  failed 0" lines.txt || bad "check: no final line at 100%: $(tail -1 lines.txt)"
grep -q "cases 8192 .* of [0-9.]*M ([0-9]*%, ETA [0-9]*h[0-9][0-9]m[0-9][0-9]s)" lines.txt || bad "check: no line at 8192 cases with an ETA"
grep -q "^10000 passed, 0 failed" <(tr -d '\r' <tty.out) || bad "check on a terminal: summary differs"
# off a terminal: plain lines, the output as before
"$EXE" check big.vec >plain.out 2>plain.err || bad "check failed"
grep -q $'\r' plain.err && bad "check off a terminal rewrote a line in place"
grep -q '^mmafuzz check: #.*(100%' plain.err || bad "check off a terminal: no plain status line: $(head -c 200 plain.err)"
grep -v '^mmafuzz check: #' plain.err | grep -q . && bad "check off a terminal: $(head -c 200 plain.err)"
[ "$(tail -1 plain.out)" = "10000 passed, 0 failed" ] || bad "check: summary $(tail -1 plain.out)"
# without the test setting, a short job off a terminal prints no status line
MMAFUZZ_PROGRESS_S= "$EXE" check "$f" >/dev/null 2>short.err
[ -s short.err ] && bad "a short check printed a status line: $(head -c 200 short.err)"

# replay (the same file as a store): on a terminal, ending with all its bytes done
script -qfec "$EXE replay --device model:hopper big.vec" /dev/null >rtty.out 2>&1
tr '\r' '\n' <rtty.out | grep '^mmafuzz replay: #' >rlines.txt
[ -s rlines.txt ] || bad "replay on a terminal: no status line: $(head -c 300 rtty.out)"
grep -q "cases 10.0k .* of [0-9.]*M (100%, ETA 0h00m00s)" rlines.txt || bad "replay: no final line at 100%: $(tail -1 rlines.txt)"
"$EXE" replay --device model:hopper big.vec >rplain.out 2>rplain.err
grep -q $'\r' rplain.err && bad "replay off a terminal rewrote a line in place"
grep -q '^mmafuzz replay: #' rplain.err || bad "replay off a terminal: no plain status line"
grep -v '^mmafuzz replay: #' rplain.err | grep -q . && bad "replay off a terminal: $(head -c 200 rplain.err)"
grep -q "10000 agree" rplain.out || bad "replay: $(tail -1 rplain.out)"
[ $fail -eq 0 ] && echo "PASS: progress"
exit $fail
