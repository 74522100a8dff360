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
kill_twice)
    # killed with findings filed after the last checkpoint, resumed (the files
    # indexed, each counted once: st_reconcile), killed again after a checkpoint
    # that indexed them and before their tiles ran again, resumed to the end:
    # every finding's count is the uninterrupted run's.  Every disagreement is
    # filed (-minimize and -per_bucket past their number, a batch of at most
    # 1024 tiles: one chunk per tile), so the findings and their counts are a
    # function of the tiles alone
    all="-per_bucket 1000000 -minimize 1000000"
    R=6400
    counts() { grep -v '^#' "$1/index.tsv" | cut -f1,2 | sort; }
    MMAFUZZ_CHECKPOINT_S=0 fuzz -runs $R $all -batch 640 --out ref >/dev/null 2>ref.err
    [ $? -eq 1 ] || bad "reference run: exit $?, expected 1"
    want=$(counts ref)
    [ "$(echo "$want" | awk '$2 > 1' | wc -l)" -gt 0 ] || bad "control: no finding seen twice in the reference"
    # 1: killed inside the 121st finding's write, in the first batch (tiles 0-4)
    MMAFUZZ_CHECKPOINT_S=0 MMAFUZZ_FAULT=finding.write:120:kill fuzz -runs $R $all -batch 640 --out K >/dev/null 2>k1.err
    [ $? -eq 137 ] || bad "first run: exit $?, expected 137 (killed)"
    t=$(tiles K)
    [ "$t" = 0 ] || bad "first run: tile $t at the kill, expected 0"
    # 2: a batch of one tile, killed writing the second checkpoint's state: the
    # first checkpoint indexed the files of tiles 1-4, which have not run again
    MMAFUZZ_CHECKPOINT_S=0 MMAFUZZ_FAULT=state.write:2:kill "$EXE" run --resume K $all -jobs 2 -batch 128 -runs $((R - t * 128)) >/dev/null 2>k2.err
    [ $? -eq 137 ] || bad "second run: exit $?, expected 137 (killed)"
    grep -q "finding files not in index.tsv" k2.err || bad "second run: no finding file outside the index: $(head -2 k2.err)"
    t=$(tiles K)
    [ "$t" = 1 ] || bad "second run: tile $t at the kill, expected 1"
    # 3: to the end
    MMAFUZZ_CHECKPOINT_S=0 "$EXE" run --resume K $all -jobs 2 -batch 640 -runs $((R - t * 128)) >/dev/null 2>k3.err
    [ $? -le 1 ] || bad "third run: exit $?: $(tail -2 k3.err)"
    [ "$(tiles K)" = $((R / 128)) ] || bad "third run: tiles $(tiles K), expected $((R / 128))"
    got=$(counts K)
    [ "$got" = "$want" ] || bad "counts differ from the uninterrupted run's ($(echo "$want" | awk '{ s += $2 } END { print s }') sightings of $(echo "$want" | wc -l) findings there, $(echo "$got" | awk '{ s += $2 } END { print s }') of $(echo "$got" | wc -l) here): $(diff <(echo "$want") <(echo "$got") | grep '^[<>]' | head -4 | tr '\n' ' ')"
    index_whole K "after two kills"
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
bad_index)
    # a damaged index.tsv (run_store.h st_index_read, docs/findings.md): run and
    # merge give FILE:LINE and exit 2, the file left as it is, nothing of it taken
    fuzz -runs 25600 --out G >/dev/null 2>&1
    first=$(grep -vn '^#' G/index.tsv | head -1 | cut -d: -f1)
    n=$(wc -l <G/index.tsv)
    [ "$n" -ge 3 ] || bad "control: index.tsv of $n lines, expected at least 3"
    for how in count overflow wrap short_hash fields twice nul no_newline; do
        d=I_$how
        cp -r G "$d"
        f=$d/index.tsv
        l=$first
        case $how in
        count) awk -F'\t' -v OFS='\t' '!/^#/ && !done { $2 = "21x88"; done = 1 } { print }' G/index.tsv >"$f" ;;
        overflow) awk -F'\t' -v OFS='\t' '!/^#/ && !done { $2 = "100000000000000000000000"; done = 1 } { print }' G/index.tsv >"$f" ;;
        wrap) awk -F'\t' -v OFS='\t' '!/^#/ && !done { $2 = "18446744073709551616"; done = 1 } { print }' G/index.tsv >"$f" ;;
        short_hash) awk -F'\t' -v OFS='\t' '!/^#/ && !done { $1 = "0123"; done = 1 } { print }' G/index.tsv >"$f" ;;
        fields) awk -F'\t' -v OFS='\t' '!/^#/ && !done { $0 = $1 "\t" $2 "\t" $3; done = 1 } { print }' G/index.tsv >"$f" ;;
        twice) { cat G/index.tsv; grep -v '^#' G/index.tsv | head -1; } >"$f"; l=$((n + 1)) ;;
        nul) { cat G/index.tsv; printf 'abc\0def\n'; } >"$f"; l=$((n + 1)) ;;
        no_newline) printf '%s' "$(cat G/index.tsv)" >"$f"; l=$n ;;
        esac
        cp "$f" before
        "$EXE" run --resume "$d" -runs 12800 -jobs 1 >"$d.out" 2>"$d.err"
        rc=$?
        [ $rc -eq 2 ] || bad "index.tsv $how: run exit $rc, expected 2"
        grep -q "$d/index.tsv:$l: " "$d.err" || bad "index.tsv $how: run gave no FILE:LINE ($l): $(grep -v '^mmafuzz run: seed' "$d.err" | head -2)"
        cmp -s before "$f" || bad "index.tsv $how: the run changed the damaged file"
    done
    # a campaign shard's index.tsv: run --campaign and merge
    "$EXE" campaign init C --instr "$INSTR" --device model:ampere --mix "$MIX" -runs 51200 -seed 5 >/dev/null 2>&1
    "$EXE" run --campaign C -jobs 2 >/dev/null 2>&1
    sh=shards/0-of-1
    n=$(wc -l <C/$sh/index.tsv)
    [ "$n" -ge 2 ] || bad "control: the shard's index.tsv has $n lines"
    for how in count twice; do
        d=CI_$how
        cp -r C "$d"
        f=$d/$sh/index.tsv
        case $how in
        count) awk -F'\t' -v OFS='\t' '!/^#/ && !done { $2 = "21x88"; done = 1 } { print }' C/$sh/index.tsv >"$f"; l=$(grep -vn '^#' C/$sh/index.tsv | head -1 | cut -d: -f1) ;;
        twice) { cat C/$sh/index.tsv; grep -v '^#' C/$sh/index.tsv | head -1; } >"$f"; l=$((n + 1)) ;;
        esac
        cp "$f" before
        "$EXE" run --campaign "$d" -jobs 1 >/dev/null 2>"$d.err"
        rc=$?
        [ $rc -eq 2 ] || bad "a shard's index.tsv $how: run --campaign exit $rc, expected 2"
        grep -q "$f:$l: " "$d.err" || bad "a shard's index.tsv $how: run --campaign gave no FILE:LINE ($l): $(head -2 "$d.err")"
        cmp -s before "$f" || bad "a shard's index.tsv $how: run --campaign changed it"
        "$EXE" merge "M_$how" "$d" >/dev/null 2>"$d.merr"
        rc=$?
        [ $rc -eq 2 ] || bad "a shard's index.tsv $how: merge exit $rc, expected 2"
        grep -q "$f:$l: " "$d.merr" || bad "a shard's index.tsv $how: merge gave no FILE:LINE ($l): $(head -2 "$d.merr")"
        [ -z "$(find "M_$how" -path "*/shards/*" -name '*.vec' 2>/dev/null)" ] || bad "a shard's index.tsv $how: merge copied findings before it found the damage"
    done
    ;;
bad_stats)
    # a damaged stats file (run_stats.h rs_read_file, docs/campaigns.md): a bad
    # record in the middle is FILE:LINE and exit 2 for run (plain stats.jsonl)
    # and report (a shard's stats/RUNID.jsonl); a torn last record is cut by
    # run and left out by report, each with a message
    fuzz -runs 25600 --out G >/dev/null 2>&1
    fuzz -runs 25600 --out G -seed 9 >/dev/null 2>&1  # a second record at least
    n=$(wc -l <G/stats.jsonl)
    [ "$n" -ge 2 ] || bad "control: stats.jsonl of $n records, expected at least 2"
    "$EXE" campaign init C --instr "$INSTR" --device model:ampere --mix "$MIX" -runs 51200 -seed 5 >/dev/null 2>&1
    "$EXE" run --campaign C -jobs 2 >/dev/null 2>&1
    "$EXE" run --campaign C -jobs 2 >/dev/null 2>&1  # a second process run: a second stats file
    js=$(ls C/shards/0-of-1/stats/*.jsonl | head -1)
    [ -n "$js" ] || bad "control: no stats/RUNID.jsonl"
    "$EXE" report C >/dev/null 2>rep0.err || bad "control: report of the whole campaign: exit $?: $(head -2 rep0.err)"
    for how in field_part wrap not_json no_cases empty nul; do
        d=T_$how
        rm -rf "$d" "C_$how"
        cp -r G "$d"
        cp -r C "C_$how"
        for f in "$d/stats.jsonl" "C_$how/shards/0-of-1/stats/$(basename "$js")"; do
            python3 - "$f" "$how" <<'PY'
import re, sys
path, how = sys.argv[1], sys.argv[2]
lines = open(path, 'rb').read().split(b'\n')[:-1]
first = lines[0]
bad = {
    'field_part': re.sub(rb'"cases":([0-9]+)', rb'"cases":\1.5', first, count=1),
    'wrap': re.sub(rb'"cases":([0-9]+)', rb'"cases":18446744073709551616', first, count=1),
    'not_json': first[:-1] + b',}',
    'no_cases': first.replace(b'"cases":', b'"kases":', 1),
    'empty': b'',
    'nul': first[:20] + b'\0' + first[20:],
}[how]
assert bad != first
open(path, 'wb').write(b'\n'.join([bad] + lines + [b'']))
PY
        done
        cp "$d/stats.jsonl" before
        "$EXE" run --resume "$d" -runs 12800 -jobs 1 >"$d.out" 2>"$d.err"
        rc=$?
        [ $rc -eq 2 ] || bad "stats.jsonl $how: run exit $rc, expected 2"
        grep -q "$d/stats.jsonl:1: " "$d.err" || bad "stats.jsonl $how: run gave no FILE:LINE (1): $(head -2 "$d.err")"
        cmp -s before "$d/stats.jsonl" || bad "stats.jsonl $how: the run changed the damaged file"
        "$EXE" report "C_$how" >/dev/null 2>"$d.rerr"
        rc=$?
        [ $rc -eq 2 ] || bad "stats/RUNID.jsonl $how: report exit $rc, expected 2"
        grep -q "stats/$(basename "$js"):1: " "$d.rerr" || bad "stats/RUNID.jsonl $how: report gave no FILE:LINE (1): $(head -2 "$d.rerr")"
    done
    # a torn last record: report leaves it out with a note; run cuts it off with a note
    printf '{"unix_time":17' >>"$js"
    printf '{"unix_time":17' >>G/stats.jsonl
    "$EXE" report C >rep1.out 2>rep1.err || bad "a torn last record: report exit $?: $(head -2 rep1.err)"
    grep -q "a last record cut short (15 bytes" rep1.err || bad "a torn last record: no note from report: $(head -2 rep1.err)"
    fuzz -runs 12800 -seed 11 --out G >/dev/null 2>g.err
    [ $? -le 1 ] || bad "a torn last record: run exit $?: $(tail -2 g.err)"
    grep -q "a torn last record (15 bytes" g.err || bad "a torn last record: no note from run: $(head -2 g.err)"
    ;;
bad_def)
    # a damaged campaign.def whose id was made to match (campaign.h cp_def_read,
    # docs/campaigns.md): FILE:LINE and exit 2 for run --campaign, report and merge
    "$EXE" campaign init C --instr "$INSTR" --device model:ampere --mix "$MIX" -runs 51200 -seed 5 >/dev/null 2>&1 ||
        bad "control: campaign init: exit $?"
    "$EXE" run --campaign C -jobs 2 >/dev/null 2>&1
    seedl=$(grep -n '^seed ' C/campaign.def | cut -d: -f1)
    instrl=$(grep -n '^instr ' C/campaign.def | cut -d: -f1)
    n=$(wc -l <C/campaign.def)
    for how in seed_part seed_wrap runs_big tiles_part instr_fields twice nul no_newline; do
        d=D_$how
        rm -rf "$d"
        cp -r C "$d"
        f=$d/campaign.def
        case $how in
        seed_part) sed -i 's/^seed \(.*\)/seed \1x/' "$f"; l=$seedl ;;
        seed_wrap) sed -i 's/^seed .*/seed 18446744073709551621/' "$f"; l=$seedl ;;
        runs_big) sed -i 's/^runs .*/runs 100000000000000000000000/' "$f"; l=$(grep -n '^runs ' "$f" | cut -d: -f1) ;;
        tiles_part) sed -i 's/^\(instr .*\)$/\1.5/' "$f"; l=$instrl ;;
        instr_fields) sed -i 's/^\(instr [^ ]*\) .*$/\1 16 8 16/' "$f"; l=$instrl ;;
        twice) grep '^seed ' C/campaign.def >>"$f"; l=$((n + 1)) ;;
        nul) printf 'mix a\0b\n' >>"$f"; l=$((n + 1)) ;;
        no_newline) printf '%s' "$(cat C/campaign.def)" >"$f"; l=$n ;;
        esac
        # the id made to match the edited lines (XXH3-64 of the text after the id line), so only the reader can tell
        id=$(sed '1,3d' "$f" | xxhsum -H3 | awk '{ print $NF }')
        sed -i "s/^id .*/id $id/" "$f"
        cp "$f" before
        "$EXE" run --campaign "$d" -jobs 1 >"$d.out" 2>"$d.err"
        rc=$?
        [ $rc -eq 2 ] || bad "campaign.def $how: run exit $rc, expected 2"
        grep -q "$d/campaign.def:$l: " "$d.err" || bad "campaign.def $how: run gave no FILE:LINE ($l): $(head -2 "$d.err")"
        cmp -s before "$f" || bad "campaign.def $how: the run changed it"
        "$EXE" report "$d" >/dev/null 2>"$d.rerr"
        rc=$?
        [ $rc -eq 2 ] || bad "campaign.def $how: report exit $rc, expected 2"
        grep -q "$d/campaign.def:$l: " "$d.rerr" || bad "campaign.def $how: report gave no FILE:LINE ($l): $(head -2 "$d.rerr")"
        "$EXE" merge "M_$how" "$d" >/dev/null 2>"$d.merr"
        rc=$?
        [ $rc -eq 2 ] || bad "campaign.def $how: merge exit $rc, expected 2"
        grep -q "$d/campaign.def:$l: " "$d.merr" || bad "campaign.def $how: merge gave no FILE:LINE ($l): $(head -2 "$d.merr")"
    done
    ;;
bad_shard_state)
    # a damaged shard.state (campaign.h cp_state_read_file): FILE:LINE and exit
    # 2 for run --campaign and report, the file left as it is
    "$EXE" campaign init C --instr "$INSTR" --device model:ampere --mix "$MIX" -runs 51200 -seed 5 >/dev/null 2>&1
    "$EXE" run --campaign C -jobs 2 >/dev/null 2>&1
    sf=shards/0-of-1/shard.state
    il=$(grep -n '^instr ' C/$sf | head -1 | cut -d: -f1)
    cl=$(grep -n '^class ' C/$sf | head -1 | cut -d: -f1)
    n=$(wc -l <C/$sf)
    [ -n "$cl" ] || bad "control: no class line in shard.state"
    for how in done_neg done_big cases_part class_twice bucket_twice nul no_newline; do
        d=SS_$how
        rm -rf "$d"
        cp -r C "$d"
        f=$d/$sf
        l=$il
        case $how in
        done_neg) sed -i 's/^\(instr [^ ]*\) [0-9]* /\1 -1 /' "$f" ;;
        done_big) sed -i 's/^\(instr [^ ]*\) [0-9]* /\1 99999999999999999999999 /' "$f" ;;
        cases_part) sed -i 's/^\(instr .*\)$/\1junk/' "$f" ;;
        class_twice) sed -i "${cl}p" "$f"; l=$((cl + 1)) ;;
        bucket_twice) grep '^bucket ' C/$sf | head -1 >>"$f"; l=$((n + 1)) ;;
        nul) printf 'shard 0\0 1\n' >>"$f"; l=$((n + 1)) ;;
        no_newline) printf '%s' "$(cat C/$sf)" >"$f"; l=$n ;;
        esac
        cp "$f" before
        "$EXE" run --campaign "$d" -jobs 1 >/dev/null 2>"$d.err"
        rc=$?
        [ $rc -eq 2 ] || bad "shard.state $how: run exit $rc, expected 2"
        grep -q "$f:$l: " "$d.err" || bad "shard.state $how: run gave no FILE:LINE ($l): $(head -2 "$d.err")"
        cmp -s before "$f" || bad "shard.state $how: the run changed it"
        "$EXE" report "$d" >/dev/null 2>"$d.rerr"
        rc=$?
        [ $rc -eq 2 ] || bad "shard.state $how: report exit $rc, expected 2"
        grep -q "$f:$l: " "$d.rerr" || bad "shard.state $how: report gave no FILE:LINE ($l): $(head -2 "$d.rerr")"
    done
    ;;
campaign_links)
    # a campaign's own folders (DIR/shards, a shard, its stats folder) that are
    # links out of it: run --campaign and merge exit 2 and write nothing
    # outside (run_fs.h fs_mkdir_below, campaign.h cp_lock_shard)
    "$EXE" campaign init C --instr "$INSTR" --device model:ampere -runs 12800 -seed 3 >/dev/null 2>&1
    "$EXE" run --campaign C -jobs 1 >/dev/null 2>&1 || bad "control: run --campaign: exit $?"
    for where in shards shard stats; do
        d=R_$where
        rm -rf "$d" "out_$where"
        cp -r C "$d"
        rm -rf "$d/shards"
        mkdir -p "out_$where"
        case $where in
        shards) ln -s "$WORK/out_$where" "$d/shards" ;;
        shard) mkdir -p "$d/shards"; ln -s "$WORK/out_$where" "$d/shards/0-of-1" ;;
        stats) mkdir -p "$d/shards/0-of-1"; ln -s "$WORK/out_$where" "$d/shards/0-of-1/stats" ;;
        esac
        "$EXE" run --campaign "$d" -jobs 1 >/dev/null 2>"$d.err"
        rc=$?
        [ $rc -eq 2 ] || bad "run --campaign, $where a link: exit $rc, expected 2"
        grep -q "a symbolic link" "$d.err" || bad "run --campaign, $where a link: no reason: $(tail -2 "$d.err")"
        [ -z "$(ls -A "out_$where")" ] || bad "run --campaign, $where a link: written outside: $(ls -A "out_$where" | head -3 | tr '\n' ' ')"
        # merge into a DST whose folders are links out of it
        m=MD_$where
        rm -rf "$m"
        mkdir -p "$m"
        cp C/campaign.def C/pool.vec "$m/"
        case $where in
        shards) ln -s "$WORK/out_$where" "$m/shards" ;;
        shard) mkdir -p "$m/shards"; ln -s "$WORK/out_$where" "$m/shards/0-of-1" ;;
        stats) mkdir -p "$m/shards/0-of-1"; ln -s "$WORK/out_$where" "$m/shards/0-of-1/stats" ;;
        esac
        "$EXE" merge "$m" C >/dev/null 2>"$m.err"
        rc=$?
        [ $rc -eq 2 ] || bad "merge, $where a link: exit $rc, expected 2"
        grep -q "a symbolic link" "$m.err" || bad "merge, $where a link: no reason: $(tail -2 "$m.err")"
        [ -z "$(ls -A "out_$where")" ] || bad "merge, $where a link: written outside: $(ls -A "out_$where" | head -3 | tr '\n' ' ')"
    done
    ;;
fifo)
    # a store or campaign file replaced by a FIFO (run_fs.h fs_read_all): the
    # command says "not a regular file" and exits 2 at once, never waits on it
    fuzz -runs 12800 --out G >/dev/null 2>&1
    "$EXE" campaign init C --instr "$INSTR" --device model:ampere -runs 12800 -seed 3 >/dev/null 2>&1
    "$EXE" run --campaign C -jobs 1 >/dev/null 2>&1
    for f in G/index.tsv G/stats.jsonl G/campaign.state G/buckets.tsv C/campaign.def C/shards/0-of-1/shard.state; do
        d=Q_$(echo "$f" | tr '/.' '__')
        top=${f%%/*}
        rm -rf "$d"
        cp -r "$top" "$d"
        rm -f "$d/${f#*/}"
        mkfifo "$d/${f#*/}"
        if [ "$top" = G ]; then
            timeout 20 "$EXE" run --resume "$d" -runs 1280 -jobs 1 >/dev/null 2>"$d.err"
        else
            timeout 20 "$EXE" report "$d" >/dev/null 2>"$d.err"
        fi
        rc=$?
        [ $rc -eq 2 ] || bad "$f a FIFO: exit $rc, expected 2 (124: it waited on the FIFO)"
        grep -q "${f#*/}: not a regular file (a FIFO)" "$d.err" || bad "$f a FIFO: no reason: $(grep -v 'taken over' "$d.err" | head -2)"
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
