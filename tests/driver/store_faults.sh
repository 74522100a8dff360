#!/usr/bin/env bash
# `mmafuzz run` when the file system fails: a full disk (the fault point
# fs.write, and a real file size limit: ulimit -f), a stats file that cannot
# be written, an --out folder that cannot be written, a run killed in the
# middle of a write.  Each must end with exit 2 and the reason (or, for the
# killed run, leave a store the next run continues); nothing filed before
# the failure is lost.  Expected values: the contracts in run_store.h,
# run_fs.h (MMAFUZZ_FAULT) and `mmafuzz run --help` (exit 2 on errors).
#   store_faults.sh MMAFUZZ WORKDIR
set -u
EXE=$1
WORK=$2
INSTR=hopper/mma.m16n8k16.f32.f16.f16.f32
fail=0
bad() { echo "FAIL: $*"; fail=1; }
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK" || exit 1

# hopper against the ampere model: about 20 distinct mismatches in 25,600 cases, all
# filed (-per_bucket without a limit: they fall in one bucket, hopper's row, and the
# faults below need more than its 4 files of writes)
mismatching() { "$EXE" run --instr "$INSTR" --device model:ampere -seed 5 -runs 25600 -batch 12800 -per_bucket 1000000 "$@"; }
# hopper against its own model: none
agreeing() { "$EXE" run --instr "$INSTR" --device model:hopper -seed 5 -runs 25600 -batch 12800 "$@"; }

# every line of index.tsv: a comment or HASH<TAB>COUNT<TAB>INSTR<TAB>SIGNATURE;
# no temporary file left; every .vec file reads back
store_whole() {
    local dir=$1 what=$2
    if [ -f "$dir/index.tsv" ]; then
        grep -vqE $'^(#.*|[0-9a-f]{32}\t[0-9]+\t[^\t]+\t[^\t]+)$' "$dir/index.tsv" && bad "$what: index.tsv has a malformed line"
    fi
    [ -z "$(find "$dir" -name '*.tmp')" ] || bad "$what: temporary files left: $(find "$dir" -name '*.tmp' | head -3)"
    if [ -n "$(find "$dir" -name '*.vec')" ]; then
        # replay: exit 1 when every file reads and its cases still mismatch, 2 if a file failed
        "$EXE" replay --device model:ampere "$dir" >replay.out 2>replay.err
        local rc=$?
        [ $rc -eq 1 ] || bad "$what: the filed cases do not read back (replay exit $rc): $(head -c 300 replay.err)"
    fi
}

# 1. the disk fills after 5,000 bytes (fault point fs.write: ENOSPC)
MMAFUZZ_FAULT=fs.write:5000 mismatching --out full >full.out 2>full.err
rc=$?
[ $rc -eq 2 ] || bad "disk full: exit $rc, expected 2"
grep -q 'No space left on device' full.err || bad "disk full: no 'No space left on device' in: $(head -c 300 full.err)"
grep -q 'done (store error)' full.out || bad "disk full: summary not 'done (store error)': $(tail -1 full.out)"
n=$(find full -name '*.vec' | wc -l)
[ "$n" -ge 1 ] || bad "disk full: no file filed before the disk filled"
store_whole full "disk full"

# 2. a real limit: files of at most 1 KiB (ulimit -f 1 = one 1024-byte block
# in bash; SIGXFSZ ignored so that write() fails with EFBIG); a mismatch
# file is about 1,200 bytes
( trap '' XFSZ; ulimit -f 1; mismatching --out limit ) >limit.out 2>limit.err
rc=$?
[ $rc -eq 2 ] || bad "file size limit: exit $rc, expected 2"
grep -q 'File too large' limit.err || bad "file size limit: no 'File too large' in: $(head -c 300 limit.err)"
grep -q 'done (runs done)' limit.out && bad "file size limit: the run ended as if all was well"
store_whole limit "file size limit"

# 3. stats.jsonl cannot be written (fault point stats.write), no mismatch found
MMAFUZZ_FAULT=stats.write:0 agreeing --out stats >stats.out 2>stats.err
rc=$?
[ $rc -eq 2 ] || bad "stats write: exit $rc, expected 2"
grep -q 'stats.jsonl: write failed' stats.err || bad "stats write: no message in: $(head -c 300 stats.err)"

# 3b. campaign.state cannot be moved into place (fault point fs.rename: the
# first rename, of the start-up write test, passes; with no mismatch the
# index is never written, so the next is the state's at the end)
MMAFUZZ_FAULT=fs.rename:1 agreeing --out state >state.out 2>state.err
rc=$?
[ $rc -eq 2 ] || bad "state write: exit $rc, expected 2"
grep -q 'campaign.state: cannot rename into place' state.err || bad "state write: no message in: $(head -c 300 state.err)"

# 4. --out cannot be written: creating a file there fails (fault point
# fs.create: EACCES, which holds for root too), and, when not root, a
# read-only folder.  Said at start, before any case runs.
MMAFUZZ_FAULT=fs.create:0 agreeing --out ro >ro.out 2>ro.err
rc=$?
[ $rc -eq 2 ] || bad "unwritable --out: exit $rc, expected 2"
grep -q 'ro: the folder is not writable.*Permission denied' ro.err || bad "unwritable --out: no reason in: $(head -c 300 ro.err)"
grep -q 'done (' ro.out && bad "unwritable --out: the run started"
if [ "$(id -u)" -ne 0 ]; then
    mkdir -p ro2 && chmod 555 ro2
    agreeing --out ro2 >ro2.out 2>ro2.err
    rc=$?
    [ $rc -eq 2 ] || bad "read-only --out: exit $rc, expected 2"
    grep -q 'ro2: the folder is not writable' ro2.err || bad "read-only --out: no reason in: $(head -c 300 ro2.err)"
    chmod 755 ro2
fi

# 5. killed (SIGKILL) between writing a file and moving it into place: a
# temporary file is left; the next run in the same folder goes on and ends
# normally, and what was filed before the kill is still there
MMAFUZZ_FAULT=fs.rename:3:kill mismatching --out killed >killed.out 2>killed.err
rc=$?
[ $rc -eq 137 ] || bad "kill fault: exit $rc, expected 137 (SIGKILL)"
[ -n "$(find killed -name '*.tmp')" ] || bad "kill fault: no temporary file left behind"
before=$(find killed -name '*.vec' | sort)
mismatching --out killed >killed2.out 2>killed2.err
rc=$?
[ $rc -eq 1 ] || bad "after a kill: exit $rc, expected 1 (mismatches found): $(head -c 300 killed2.err)"
for f in $before; do [ -f "$f" ] || bad "after a kill: $f lost"; done
find killed -name '*.tmp' -delete  # the killed writer's, left as they are by the run
store_whole killed "after a kill"

[ $fail -eq 0 ] && echo "store faults: ok"
exit $fail
