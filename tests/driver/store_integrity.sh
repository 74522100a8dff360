#!/usr/bin/env bash
# A plain run's store under crashes, a second writer, links, loops and
# damaged files: nothing counted twice, nothing written outside the store,
# no hang, every damaged file a FILE:LINE error with exit 2.
#
#   store_integrity.sh MMAFUZZ WORKDIR TEST
#
# Expected values: an uninterrupted run of the same seed and -runs (buckets
# count every disagreement of every tile, buckets.h, and a tile is a pure
# function of (seed, tile) for this mix, which draws nothing from the
# mutation pool); otherwise the contracts of run_ckpt.h, run_store.h
# (st_lock, st_reconcile), run_fs.h (fs_walk, fs_lock, stop requests),
# buckets.h (rf_buckets_read), run_state.h (run_state_read) and run_stats.h.
set -u
EXE=$1
WORK=$2
TEST=$3
INSTR=hopper/mma.m16n8k16.f32.f16.f16.f32
MIX=uniform:2,window:3,cancel:2,special:2,boundary:3,table:2,zero:1
fail=0
bad() { echo "FAIL: $*"; fail=1; }
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK" || exit 1

# hopper against the ampere model (shared/DOMAIN.md section 4: about one case in
# nine disagrees), 512,000 cases (4,000 tiles of 128) in 20 batches
R=512000
fuzz() { "$EXE" run --instr "$INSTR" --device model:ampere --mix "$MIX" -seed 5 -jobs 2 -batch 25600 "$@"; }
buckets() { grep -v '^#' "$1/buckets.tsv" | sort; }
tiles() { awk '$1 == "tile" { print $3 }' "$1/campaign.state"; }
# every finding file is in the index once, every index line names a file
index_whole() {
    local d=$1 what=$2
    local files listed
    files=$(cd "$d" && find . -name '*.vec' | sed 's|^\./||; s|\.vec$||' | awk -F/ '{ print $NF }' | sort)
    listed=$(grep -v '^#' "$d/index.tsv" 2>/dev/null | cut -f1 | sort)
    [ "$files" = "$listed" ] || bad "$what: finding files and index.tsv differ: $(diff <(echo "$files") <(echo "$listed") | grep '^[<>]' | head -3 | tr '\n' ' ')"
    [ -z "$(echo "$listed" | uniq -d)" ] || bad "$what: a hash listed twice in index.tsv"
}

case $TEST in
kill_points)
    # killed (SIGKILL) at each named fault point of run_fs.h, then resumed with
    # the cases left (or, without a state, run again from the start): the
    # bucket counts and tiles are the uninterrupted run's
    MMAFUZZ_CHECKPOINT_S=0 fuzz -runs $R --out ref >/dev/null 2>ref.err
    [ $? -eq 1 ] || bad "reference run: exit $?, expected 1 (disagreements found)"
    want=$(buckets ref)
    [ -n "$want" ] || bad "reference: no bucket counted"
    [ "$(tiles ref)" = $((R / 128)) ] || bad "reference: tiles $(tiles ref), expected $((R / 128))"
    killed=0
    for spec in fs.rename:1 fs.rename:2 fs.rename:3 fs.rename:4 fs.rename:5 fs.rename:6 fs.rename:7 fs.rename:8 \
                fs.rename:9 fs.rename:10 fs.rename:12 fs.rename:16 fs.create:2 fs.create:5 fs.create:9 \
                fs.fsync:1 fs.fsync:4 fs.fsync:8 fs.write:0 fs.write:3000 fs.write:7000 finding.write:0 \
                finding.write:2 state.write:0 state.write:1 state.write:3 stats.write:0; do
        d=k_${spec//[:.]/_}
        : >"$d.err2"
        MMAFUZZ_CHECKPOINT_S=0 MMAFUZZ_FAULT=$spec:kill fuzz -runs $R --out "$d" >/dev/null 2>"$d.err1"
        rc=$?
        [ $rc -eq 137 ] && killed=$((killed + 1))
        [ $rc -eq 137 ] || [ $rc -eq 1 ] || bad "$spec: exit $rc, expected 137 (killed) or 1 (point not reached)"
        if [ -f "$d/campaign.state" ]; then
            t=$(tiles "$d")
            [ "${t:-0}" -lt $((R / 128)) ] && MMAFUZZ_CHECKPOINT_S=0 "$EXE" run --resume "$d" -jobs 2 -batch 25600 -runs $((R - ${t:-0} * 128)) \
                >/dev/null 2>"$d.err2"
        else
            t=none
            fuzz -runs $R --out "$d" >/dev/null 2>"$d.err2"
        fi
        rc2=$?
        [ $rc2 -le 1 ] || bad "$spec: the resume failed (exit $rc2): $(tail -2 "$d.err2")"
        [ "$(tiles "$d")" = $((R / 128)) ] || bad "$spec: tiles $(tiles "$d") after the resume, expected $((R / 128))"
        got=$(buckets "$d")
        [ "$got" = "$want" ] || bad "$spec (killed at tile $t): buckets $(echo "$got" | cut -f1,2 | tr '\n' ' '), uninterrupted $(echo "$want" | cut -f1,2 | tr '\n' ' ')"
        index_whole "$d" "$spec"
        echo "$spec: exit $rc at tile $t, resumed: $(grep -hc 'rolled back' "$d.err2") files rolled back"
    done
    [ $killed -ge 20 ] || bad "only $killed of the fault points were reached (the test no longer kills where it should)"
    ;;
lock)
    # one writer per store: a second run, resume or merge into it exits 2 naming the holder
    fuzz -runs 256000 --out D >/dev/null 2>d0.err
    (exec "$EXE" run --resume D -runs 100000000000 -jobs 1 >bg.out 2>bg.err) &
    pid=$!
    for k in $(seq 100); do grep -q "seed 5, device" bg.err 2>/dev/null && break; sleep 0.1; done
    "$EXE" run --resume D -runs 12800 -jobs 1 >r2.out 2>r2.err
    rc=$?
    [ $rc -eq 2 ] || bad "a second --resume on a running store: exit $rc, expected 2"
    grep -q "D: another process writes this store (pid $pid on host $(hostname))" r2.err || bad "second --resume: no holder named: $(head -2 r2.err)"
    fuzz -runs 12800 --out D >r3.out 2>r3.err
    rc=$?
    [ $rc -eq 2 ] || bad "a fresh run into a running store: exit $rc, expected 2"
    grep -q "another process writes this store (pid $pid" r3.err || bad "fresh run: no holder named: $(head -2 r3.err)"
    "$EXE" campaign init C --instr "$INSTR" --device model:ampere -runs 25600 -seed 3 --corpus "$WORK/none" >/dev/null 2>&1
    "$EXE" run --campaign C -shard 0/1 -jobs 1 >/dev/null 2>&1
    "$EXE" merge D C >m.out 2>m.err
    rc=$?
    [ $rc -eq 2 ] || bad "a merge into a running store: exit $rc, expected 2"
    grep -q "another process writes this store (pid $pid" m.err || bad "merge: no holder named: $(head -2 m.err)"
    "$EXE" shrink --device model:ampere --out D "$(find D/hopper -name '*.vec' | head -1)" >sh.out 2>sh.err
    rc=$?
    [ $rc -eq 2 ] || bad "shrink --out into a running store: exit $rc, expected 2"
    grep -q "another process writes this store (pid $pid" sh.err || bad "shrink: no holder named: $(head -2 sh.err)"
    kill -TERM $pid
    wait $pid
    # a lock left by a dead process of this host is taken over, with a message
    sleep 100 &
    dead=$!
    kill $dead
    wait $dead 2>/dev/null
    printf 'pid %s on host %s\n' $dead "$(hostname)" >D/.store-lock
    "$EXE" run --resume D -runs 12800 -jobs 1 >r4.out 2>r4.err
    rc=$?
    [ $rc -le 1 ] || bad "a stale lock: exit $rc, expected 0 or 1: $(head -2 r4.err)"
    grep -q "the lock of pid $dead on host $(hostname), which is no longer running, taken over" r4.err || bad "stale lock: no message: $(head -2 r4.err)"
    # a covered file changed between runs, not by a run (shrink --out, or by hand): taken as it is, said
    "$EXE" shrink --device model:ampere --out D "$(find D/hopper -name '*.vec' | head -1)" >/dev/null 2>&1
    rc=$?
    [ $rc -eq 1 ] || bad "shrink --out into the store, no run on it: exit $rc, expected 1 (still mismatching, filed)"
    "$EXE" run --resume D -runs 12800 -jobs 1 >r5.out 2>r5.err
    rc=$?
    [ $rc -le 1 ] || bad "a resume after shrink --out: exit $rc: $(head -2 r5.err)"
    grep -q "D/index.tsv: changed since campaign.state was written, not by a run; taken as it is" r5.err ||
        bad "a resume after shrink --out: no note: $(head -3 r5.err)"
    ;;
links)
    # nothing written through a link, into a file outside the store
    echo keep >outside
    echo keep2 >outside2
    "$EXE" campaign init C --instr "$INSTR" --device model:ampere -runs 25600 -seed 3 --corpus "$WORK/none" >/dev/null 2>&1
    mkdir -p C/shards/0-of-1
    ln -s "$WORK/outside" C/shards/0-of-1/.shard-lock
    "$EXE" run --campaign C -shard 0/1 -jobs 1 >c.out 2>c.err
    rc=$?
    [ $rc -eq 2 ] || bad "a shard lock that is a link: exit $rc, expected 2"
    grep -q "a symbolic link" c.err || bad "shard lock link: no reason given: $(head -2 c.err)"
    [ "$(cat outside)" = keep ] || bad "a shard lock link: the outside file now reads '$(head -c 80 outside)'"
    # an instruction's folder that links out of the store
    mkdir -p elsewhere A
    ln -s "$WORK/elsewhere" A/hopper
    fuzz -runs 25600 --out A >a.out 2>a.err
    rc=$?
    [ $rc -eq 2 ] || bad "an instruction folder that is a link: exit $rc, expected 2"
    grep -q "A/hopper: cannot file [0-9a-f]* there (a symbolic link" a.err || bad "folder link: no reason: $(grep -v '^#' a.err | head -3)"
    [ -z "$(find elsewhere -type f)" ] || bad "a folder link: files written outside the store: $(find elsewhere -type f | head -2)"
    mkdir S
    ln -s "$WORK/outside2" S/stats.jsonl
    fuzz -runs 25600 --out S >s.out 2>s.err
    rc=$?
    [ $rc -eq 2 ] || bad "stats.jsonl a link: exit $rc, expected 2"
    grep -q "stats.jsonl: cannot open for appending (a symbolic link" s.err || bad "stats.jsonl link: no reason: $(head -3 s.err)"
    [ "$(cat outside2)" = keep2 ] || bad "stats.jsonl link: the outside file was written"
    for lock in .lock .buckets.lock .store-lock; do
        d=L${lock//./_}
        mkdir "$d"
        ln -s "$WORK/made$lock" "$d/$lock"
        fuzz -runs 25600 --out "$d" >"$d.out" 2>"$d.err"
        rc=$?
        [ $rc -eq 2 ] || bad "a dangling $lock link: exit $rc, expected 2"
        [ -e "made$lock" ] && bad "a dangling $lock link: created $WORK/made$lock outside the store"
        grep -q "$lock: cannot lock (a symbolic link" "$d.err" || bad "$lock link: no reason: $(head -3 "$d.err")"
    done
    ;;
loops)
    # a folder with two links to itself: every command's walk ends, reads each
    # file once, and says it did not follow the links
    fuzz -runs 25600 --out S >/dev/null 2>&1
    mkdir L
    cp "$(find S -name '*.vec' | head -1)" L/
    ln -s . L/a
    ln -s . L/b
    for cmd in "replay --device model:ampere L" "triage L" "fit hopper/mma.m16n8k16.f32.f16.f16.f32 L" \
               "campaign init CI --instr $INSTR --device model:ampere -runs 25600 -seed 3 --corpus L" \
               "run --instr $INSTR --device model:ampere -runs 12800 -jobs 1 --corpus L --out R"; do
        name=${cmd%% *}
        # shellcheck disable=SC2086
        timeout 20 "$EXE" $cmd >"$name.out" 2>"$name.err"
        rc=$?
        [ $rc -eq 124 ] && bad "$name on a folder that links to itself: still running after 20 s"
            [ "$(grep -c 'symbolic links to folders not followed' "$name.err")" -eq 1 ] ||
            bad "$name: not one line about the links passed over: $(grep -c 'not followed' "$name.err") lines"
    done
    # one SIGTERM ends a run at once, whatever it does (here: at the start, the pool)
    (exec "$EXE" run --instr "$INSTR" --device model:ampere -runs 100000000000 -jobs 1 --corpus L --out T \
        >t.out 2>t.err) &
    pid=$!
    sleep 1
    kill -TERM $pid
    for k in $(seq 20); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
    if kill -0 $pid 2>/dev/null; then
        bad "one SIGTERM: the run was still going 2 s later"
        kill -KILL $pid
    fi
    wait $pid
    rc=$?
    [ $rc -le 1 ] || bad "SIGTERM: exit $rc, expected 0 or 1 (the run stopped and wrote its state)"
    ;;
bad_buckets)
    # a damaged buckets.tsv: FILE:LINE and exit 2, from `run` and from `triage` (one reader)
    fuzz -runs 25600 --out G >/dev/null 2>&1
    line=$(grep -vn '^#' G/buckets.tsv | head -1 | cut -d: -f1)
    for how in count short_id binary overflow no_newline twice nul; do
        d=B_$how
        cp -r G "$d"
        f=$d/buckets.tsv
        case $how in
        count) awk -F'\t' -v OFS='\t' '!/^#/ && !done { $2 = "21x88"; done = 1 } { print }' G/buckets.tsv >"$f" ;;
        short_id) awk -F'\t' -v OFS='\t' '!/^#/ && !done { $1 = "0123"; done = 1 } { print }' G/buckets.tsv >"$f" ;;
        binary) head -c 300 "$EXE" >"$f" ;;
        overflow) awk -F'\t' -v OFS='\t' '!/^#/ && !done { $2 = "100000000000000000000000"; done = 1 } { print }' G/buckets.tsv >"$f" ;;
        no_newline) printf '%s' "$(cat G/buckets.tsv)" >"$f" ;;
        twice) { cat G/buckets.tsv; grep -v '^#' G/buckets.tsv; } >"$f" ;;
        nul) { head -1 G/buckets.tsv; printf 'abc\0def\n'; } >"$f" ;;
        esac
        case $how in
        binary) l='[0-9]+' ;;
        no_newline) l=$(wc -l <G/buckets.tsv) ;;
        twice) l=$(($(wc -l <G/buckets.tsv) + 1)) ;;
        nul) l=2 ;;
        *) l=$line ;;
        esac
        cp "$f" before
        "$EXE" run --resume "$d" -runs 12800 -jobs 1 >"$d.out" 2>"$d.err"
        rc=$?
        [ $rc -eq 2 ] || bad "buckets.tsv $how: run exit $rc, expected 2"
        grep -Eq "$d/buckets.tsv:$l: " "$d.err" || bad "buckets.tsv $how: run gave no FILE:LINE ($l): $(head -2 "$d.err")"
        cmp -s before "$f" || bad "buckets.tsv $how: the run changed the damaged file"
        "$EXE" triage "$d" >"$d.tout" 2>"$d.terr"
        rc=$?
        [ $rc -eq 2 ] || bad "buckets.tsv $how: triage exit $rc, expected 2"
        grep -Eq "$d/buckets.tsv:$l: " "$d.terr" || bad "buckets.tsv $how: triage gave no FILE:LINE: $(head -2 "$d.terr")"
    done
    ;;
bad_state)
    # a damaged campaign.state: FILE:LINE and exit 2, the state left as it is
    fuzz -runs 25600 --out G >/dev/null 2>&1
    tl=$(grep -n '^tile ' G/campaign.state | head -1 | cut -d: -f1)
    n=$(wc -l <G/campaign.state)
    for how in empty wrap cut twice nul nokey; do
        d=S_$how
        cp -r G "$d"
        f=$d/campaign.state
        case $how in
        empty) : >"$f"; l=1 ;;
        wrap) sed -i 's/^\(tile [^ ]*\) .*/\1 18446744073709551615/' "$f"; l=$tl ;;
        cut) printf '%s' "$(cat G/campaign.state)" >"$f"; sed -i '$ s/[0-9]$//' "$f"; l=$n ;;
        twice) grep '^tile ' G/campaign.state >>"$f"; l=$((n + 1)) ;;
        nul) printf 'seed 5\0\n' >>"$f"; l=$((n + 1)) ;;
        nokey) grep -v '^seed ' G/campaign.state >"$f"; l=$n ;;
        esac
        cp "$f" before
        "$EXE" run --resume "$d" --device model:ampere -runs 12800 -jobs 1 >"$d.out" 2>"$d.err"
        rc=$?
        [ $rc -eq 2 ] || bad "campaign.state $how: exit $rc, expected 2"
        grep -q "$d/campaign.state:$l: " "$d.err" || bad "campaign.state $how: no FILE:LINE ($l): $(head -2 "$d.err")"
        cmp -s before "$f" || bad "campaign.state $how: the state was changed"
    done
    ;;
full_disk)
    # the disk fills: stats.jsonl keeps no torn record, and the finding files
    # the index lacks are indexed on resume, said once
    MMAFUZZ_CHECKPOINT_S=0 fuzz -runs $R -per_bucket 1000000 --out F >/dev/null 2>f0.err
    # the disk fills after 20,000 bytes (fault point fs.write): findings written
    # after the index's last checkpoint, the index not
    MMAFUZZ_FAULT=fs.write:20000 fuzz -runs 51200 -seed 6 -per_bucket 1000000 --out F >/dev/null 2>f1.err
    rc=$?
    [ $rc -eq 2 ] || bad "the disk full: exit $rc, expected 2"
    printf '{"unix_time":17' >>F/stats.jsonl  # a record cut short by the full disk
    nfiles=$(find F -name '*.vec' | wc -l)
    nindex=$(grep -vc '^#' F/index.tsv)
    [ "$nfiles" -gt "$nindex" ] || bad "control: no finding file outside the index ($nfiles files, $nindex lines)"
    fuzz -runs 12800 -seed 7 --out F >/dev/null 2>f2.err
    [ $? -le 1 ] || bad "the run after: exit $?: $(tail -2 f2.err)"
    grep -q "stats.jsonl: a torn last record (15 bytes without a newline" f2.err || bad "no message about the torn record: $(head -3 f2.err)"
    grep -q "F: $((nfiles - nindex)) finding files not in index.tsv" f2.err || bad "no message about the $((nfiles - nindex)) files outside the index: $(grep -v '^#' f2.err | head -3)"
    python3 -c '
import json, sys
for i, l in enumerate(open(sys.argv[1]), 1):
    json.loads(l)
' F/stats.jsonl || bad "stats.jsonl has a line that is not JSON"
    index_whole F "after the full disk"
    ;;
*)
    echo "unknown test $TEST"
    exit 2
    ;;
esac
[ $fail -eq 0 ] && echo "store integrity $TEST: ok"
exit $fail
