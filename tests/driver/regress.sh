#!/usr/bin/env bash
# Regression tests of the command line and the main job, one per defect of
# the first-user report (each failed on the code before its fix):
#   regress.sh MMAFUZZ WORKDIR NAME [SOURCE_DIR]
#   main_gpu_detect    scripts/main.sh fuzzes the GPU when `mmafuzz devices`
#                      reports one (a stand-in mmafuzz prints the real
#                      program's output of a GPU machine, indented as it is)
#   main_demo_scratch  the no-GPU main job writes under build/, not into the
#                      checkout's mismatches/, and prints little
#   run_quiet          `run` prints a status line and a summary; per-file and
#                      per-skipped-instruction lines only under -v
#   shrink_model       shrink compares with the model a file's '# model:' names
#   input              bad numbers, seeds, state files and check inputs: exit 2
#                      with a clear message
#   ctrl_c_minimize    Ctrl-C ends a run in under 0.5 s even with -minimize 5000
#   main_progress      scripts/main.sh shows the build's progress ([NN%] of
#                      the log) while setup runs, and names the log
#   devices_summary    `mmafuzz devices` prints one line per architecture, not
#                      one per instruction (-v and --json have those); its
#                      counts agree with `mmafuzz list`, a separate listing
# Expected values: the contracts in each command's --help and in
# scripts/main.sh's header, and the issue's wording for each defect.
set -u
EXE=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
WORK=$2
NAME=$3
SRC=${4:-$(cd "$(dirname "$0")/../.." && pwd)}
INSTR=hopper/mma.m16n8k16.f32.f16.f16.f32
fail=0
bad() { echo "FAIL: $*"; fail=1; }
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK" || exit 1

# expect RC STDERR-REGEX CMD...
expect() {
    local rc=$1 re=$2
    shift 2
    "$@" >out.txt 2>err.txt
    local got=$?
    [ $got -eq "$rc" ] || bad "$*: exit $got, expected $rc"
    grep -Eq -- "$re" err.txt out.txt || bad "$*: no message matching '$re': $(head -c 300 err.txt)"
}

# A copy of the repository's scripts with a setup step that does nothing,
# and build/mmafuzz as given.
fake_tree() {
    mkdir -p tree/scripts tree/build tree/mismatches
    cp "$SRC/scripts/main.sh" tree/scripts/main.sh
    printf '#!/usr/bin/env bash\nexit 0\n' >tree/scripts/setup.sh
    chmod +x tree/scripts/setup.sh tree/scripts/main.sh
}

case "$NAME" in
main_gpu_detect)
    fake_tree
    # a stand-in for mmafuzz on a machine with one H100: `devices` prints what
    # the real program prints there (indented device lines), `devices --any
    # cuda` exits 0 and --json reports the device (mmafuzz devices --help);
    # `run` records its arguments
    cat >tree/build/mmafuzz <<'STUB'
#!/usr/bin/env bash
case "$1" in
devices)
    case "${2:-}" in
    --any) [ "$3" = cuda ] && exit 0; exit 1 ;;
    --json) echo '{"devices": [{"spec": "cuda:0", "backend": "cuda", "name": "NVIDIA H100 80GB HBM3"}], "cuda": 1, "hip": 0}'; exit 0 ;;
    esac
    echo "CUDA devices: 1"
    echo "  cuda:0: NVIDIA H100 80GB HBM3  sm_90a  table architecture hopper  driver 580.65  runtime 13.0"
    echo "HIP devices: 0"
    exit 0 ;;
--help) printf 'commands:\n  run [--instr PATTERN] ...\n'; exit 0 ;;
run) shift; echo "RUN $*" >>"$(dirname "$0")/run.log"; exit 0 ;;
*) exit 0 ;;
esac
STUB
    chmod +x tree/build/mmafuzz
    MMAFUZZ_TIME=1 tree/scripts/main.sh >main.out 2>&1
    grep -q "RUN .*--device cuda" tree/build/run.log 2>/dev/null ||
        bad "main.sh did not fuzz the GPU: $(cat tree/build/run.log 2>/dev/null) $(tail -3 main.out)"
    grep -q "model:ampere" tree/build/run.log 2>/dev/null && bad "main.sh ran the model demo on a GPU machine"
    # and the real program without a CUDA device says so by its exit status
    "$EXE" devices --any cuda >any.out 2>&1
    rc=$?
    if [ "$("$EXE" devices --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["cuda"])')" = 0 ]; then
        [ $rc -eq 1 ] || bad "devices --any cuda: exit $rc on a machine without CUDA devices, expected 1"
    else
        [ $rc -eq 0 ] || bad "devices --any cuda: exit $rc with a CUDA device, expected 0"
    fi
    [ -s any.out ] && bad "devices --any printed something"
    "$EXE" devices --any model || bad "devices --any model: model devices are always there"
    ;;
main_demo_scratch)
    fake_tree
    ln -s "$EXE" tree/build/mmafuzz
    (cd tree && MMAFUZZ_TIME=3 scripts/main.sh -jobs 2 -batch 65536 </dev/null >../main.out 2>&1)
    [ -z "$(ls -A tree/mismatches)" ] || bad "the no-GPU main job wrote into mismatches/: $(ls tree/mismatches | head)"
    f=$(find tree/build -name campaign.state | head -1)
    [ -n "$f" ] || bad "the no-GPU main job wrote no campaign.state under build/"
    d=${f%/campaign.state}
    grep -q "${d#tree/}" main.out || bad "the main job does not print where it writes (${d#tree/})"
    n=$(wc -l <main.out)
    [ "$n" -lt 40 ] || bad "the no-GPU main job printed $n lines (expected fewer than 40)"
    ;;
run_quiet)
    "$EXE" run --instr "$INSTR" --device model:ampere -seed 3 --out q -runs 131072 -batch 65536 -jobs 2 \
        >q.out 2>q.err
    [ -n "$(find q -name '*.vec')" ] || bad "the run filed nothing (the test needs mismatches)"
    grep -q '^NEW ' q.out q.err && bad "run printed a NEW line per file without -v"
    grep -q 'done (runs done)' q.out || bad "run printed no summary"
    "$EXE" run --instr "$INSTR" --device model:ampere -seed 3 --out qv -runs 131072 -batch 65536 -jobs 2 -v \
        >qv.out 2>qv.err
    grep -q '^NEW ' qv.err || bad "run -v printed no NEW lines"
    "$EXE" run --instr '*' --device model:ampere -seed 3 --out qs -runs 4096 -batch 4096 -jobs 2 >qs.out 2>qs.err
    grep -q 'not runnable' qs.err && [ "$(grep -c 'not runnable' qs.err)" -gt 1 ] &&
        bad "run --instr '*' printed $(grep -c 'not runnable' qs.err) 'not runnable' lines without -v"
    n=$(cat q.out q.err | wc -l)
    [ "$n" -lt 20 ] || bad "a short run printed $n lines"
    ;;
shrink_model)
    # a file filed by `run --model ampere` on model:hopper: its '# model:' line
    # says the comparison was with the ampere model, where it mismatches;
    # against hopper's own model the hopper device agrees
    "$EXE" run --instr "$INSTR" --device model:hopper --model ampere -seed 9 --out xm -runs 40960 -batch 20480 \
        >/dev/null 2>&1
    f=$(find xm -name '*.vec' | head -1)
    if [ -z "$f" ]; then
        bad "run --model filed nothing"
    else
        grep -q "^# model: ampere/" "$f" || bad "no '# model:' line in $f"
        "$EXE" shrink "$f" --out shrunk >shrink.out 2>shrink.err
        rc=$?
        [ $rc -eq 1 ] || bad "shrink of a --model file: exit $rc, expected 1 (still mismatching against ampere): $(cat shrink.out shrink.err | head -3)"
        "$EXE" shrink "$f" --out shrunk --model hopper >shrink2.out 2>&1
        [ $? -eq 0 ] || bad "shrink --model hopper: expected 0 (the hopper device agrees with the hopper model)"
    fi
    ;;
input)
    for cmd in "run --device model:ampere -max_total_time 2 --out r1" "record --device model:ampere --instr $INSTR --out x.vec" \
        "bench --instr $INSTR"; do
        # shellcheck disable=SC2086
        expect 2 "-runs: expected" "$EXE" $cmd -runs -1
        # shellcheck disable=SC2086
        expect 2 "-runs: expected" "$EXE" $cmd -runs=-1
    done
    # seeds are decimal (or 0x hex): 010 is ten, 08 is eight
    "$EXE" run --instr "$INSTR" --device model:ampere -seed 010 -runs 0 --out s1 >/dev/null 2>s1.err
    grep -q "seed 10," s1.err || bad "-seed 010: not read as ten: $(head -1 s1.err)"
    "$EXE" run --instr "$INSTR" --device model:ampere -seed 08 -runs 0 --out s2 >/dev/null 2>s2.err
    grep -q "seed 8," s2.err || bad "-seed 08: not read as eight: $(head -1 s2.err)"
    "$EXE" run --instr "$INSTR" --device model:ampere -seed 0x10 -runs 0 --out s3 >/dev/null 2>s3.err
    grep -q "seed 16," s3.err || bad "-seed 0x10: not read as sixteen: $(head -1 s3.err)"
    expect 2 "-seed: '-1' is not a seed" "$EXE" run --device model:ampere -seed -1 -runs 0
    expect 2 "-seed: '1x' is not a seed" "$EXE" record --device model:ampere --instr "$INSTR" --out x.vec -seed 1x
    # a wgmma operand form changes the arithmetic: record names it on the instr line (form=), check
    # evaluates the form's row; the same cases read as the plain row (c added) disagree
    "$EXE" record --device model:hopper --instr hopper/wgmma.m64n8k16.f32.f16.f16 --variant no_c -runs 200 \
        --out noc.vec >/dev/null 2>&1 || bad "record --variant no_c failed"
    grep -q "^instr hopper/wgmma.m64n8k16.f32.f16.f16 form=no_c$" noc.vec || bad "record --variant no_c: no form= line"
    "$EXE" check noc.vec >/dev/null 2>&1 || bad "check of record --variant no_c's file failed"
    sed 's/ form=no_c$//' noc.vec >noc_plain.vec
    "$EXE" check noc_plain.vec >/dev/null 2>&1 && bad "the no_c cases read as the plain row still pass"
    printf 'instr hopper/wgmma.m64n8k32.s32.s8.s8 form=neg_a\n' >corpus_bad_form.vec   # integer wgmma: scale-d only
    expect 2 "corpus_bad_form.vec:1: instruction 'hopper/wgmma.m64n8k32.s32.s8.s8' has no form 'neg_a'" \
        "$EXE" check corpus_bad_form.vec
    # the printed seed is one -seed takes back (the largest one)
    "$EXE" run --instr "$INSTR" --device model:ampere -seed 18446744073709551615 -runs 0 --out s4 >/dev/null 2>s4.err
    s=$(sed -n 's/.*seed \([0-9]*\),.*/\1/p' s4.err | head -1)
    "$EXE" run --instr "$INSTR" --device model:ampere -seed "$s" -runs 0 --out s5 >/dev/null 2>&1 ||
        bad "-seed $s (as printed) is not taken back"
    expect 2 "-seed: '18446744073709551616' is not a seed" "$EXE" run --device model:ampere -seed 18446744073709551616
    # -runs at the top of its range: no overflow (the sanitizer build reports one)
    "$EXE" run --instr "$INSTR" --instr hopper/mma.m16n8k16.f16.f16.f16.f16 --device model:ampere -seed 1 \
        -runs 9223372036854775807 -max_total_time 1 -batch 4096 --out big >big.out 2>big.err
    rc=$?
    { [ $rc -eq 0 ] || [ $rc -eq 1 ]; } || bad "-runs 9223372036854775807: exit $rc: $(tail -2 big.err)"
    grep -q "runtime error" big.err && bad "-runs 9223372036854775807: $(grep 'runtime error' big.err | head -1)"
    grep -q "done (time limit)" big.out || bad "-runs 9223372036854775807: the run did not end by its time limit"
    expect 2 "-runs: '9223372036854775808' is not a number" "$EXE" run --device model:ampere -runs 9223372036854775808
    # a campaign.state whose seed is not a number
    mkdir -p st
    printf 'version 1\nseed abc\ndevice model:ampere\n' >st/campaign.state
    expect 2 "campaign.state:2: expected 'seed N'" "$EXE" run --resume st -runs 0
    # check: a file without a case; a file that cannot be opened (with the reason)
    printf '# nothing here\n' >empty.vec
    expect 2 "empty.vec: no cases" "$EXE" check empty.vec
    printf 'instr %s\n' "$INSTR" >nocase.vec
    expect 2 "nocase.vec: no cases" "$EXE" check nocase.vec
    expect 2 "nosuchfile.vec: cannot open \(No such file or directory\)" "$EXE" check nosuchfile.vec
    ;;
ctrl_c_minimize)
    "$EXE" run --instr "$INSTR" --device model:ampere -seed 3 --out c -batch 65536 -minimize 5000 -jobs 2 \
        >c.out 2>c.err &
    pid=$!
    # wait until mismatches are being filed (the re-run/minimize loop is busy)
    for _ in $(seq 100); do
        [ -n "$(find c -name '*.vec' 2>/dev/null | head -1)" ] && break
        sleep 0.1
    done
    sleep 0.5
    t0=$(date +%s%N)
    kill -INT $pid
    wait $pid
    rc=$?
    t1=$(date +%s%N)
    ms=$(((t1 - t0) / 1000000))
    echo "Ctrl-C to exit: $ms ms"
    [ $ms -lt 500 ] || bad "Ctrl-C took $ms ms with -minimize 5000 (expected under 500)"
    { [ $rc -eq 0 ] || [ $rc -eq 1 ]; } || bad "interrupted run: exit $rc"
    grep -q 'done (interrupted)' c.out || bad "interrupted run: no summary"
    [ -s c/campaign.state ] || bad "interrupted run: no campaign.state"
    ;;
main_progress)
    fake_tree
    # a setup step that builds for 6 s, as cmake --build reports it
    cat >tree/scripts/setup.sh <<'SETUP'
#!/usr/bin/env bash
echo "-- Configuring done"
sleep 3
echo "[ 42%] Building C object model/CMakeFiles/mmafuzz_model.dir/eval.c.o"
sleep 3
echo "[100%] Built target mmafuzz"
SETUP
    printf '#!/usr/bin/env bash\n[ "$1" = devices ] && exit 1\nexit 0\n' >tree/build/mmafuzz
    chmod +x tree/scripts/setup.sh tree/build/mmafuzz
    (cd tree && MMAFUZZ_TIME=1 scripts/main.sh </dev/null >../main.out 2>&1)
    grep -q 'log: build/setup.log' main.out || bad "main.sh does not name the build log: $(head -3 main.out)"
    grep -q '\[ 42%\] Building C object' main.out ||
        bad "main.sh showed no build progress while setup ran: $(head -5 main.out)"
    grep -q 'Configuring done\|\[ 42%\]\|\[100%\]' tree/build/setup.log || bad "setup's output is not in the log"
    ;;
devices_summary)
    # no GPU is needed: the summary counts the table's rows
    "$EXE" devices >d.out 2>d.err || bad "devices: exit $?: $(head -3 d.err)"
    "$EXE" list >l.out 2>&1 || bad "list failed"
    rows=$(wc -l <l.out)
    n=$(wc -l <d.out)
    [ "$n" -lt 40 ] || bad "devices printed $n lines (expected one per architecture, fewer than 40)"
    # every architecture of `list` (ARCH/... names) has its line with its count
    for arch in $(cut -d/ -f1 l.out | sort -u); do
        want=$(grep -c "^$arch/" l.out)
        got=$(awk -v a="$arch" '$1 == a {print $2}' d.out)
        [ "$got" = "$want" ] || bad "devices: $arch has '$got' instructions, list has $want"
    done
    got=$(awk '$1 == "model:ARCH" {print $2}' d.out)
    [ "$got" = "$rows" ] || bad "devices: model:ARCH runs '$got' instructions, list has $rows"
    grep -q 'devices -v' d.out || bad "devices does not say how to list every instruction"
    # -v adds one line per NVIDIA instruction
    "$EXE" devices -v >v.out 2>&1 || bad "devices -v failed"
    # NVIDIA rows: those of the architectures whose vendor (list --summary) is NVIDIA
    # (an AMD architecture without a HIP target, as cdna4, shows no "[hip ...]")
    nv=0
    for a in $("$EXE" list --summary | awk '$2 == "NVIDIA" {print $1}'); do
        nv=$((nv + $(grep -c "^$a/" l.out)))
    done
    got=$(grep -Ec '^[a-z0-9_]+/' v.out)
    [ "$got" = "$nv" ] || bad "devices -v lists $got NVIDIA instructions, list has $nv"
    # --json: every instruction, the architectures' counts, the device counts
    "$EXE" devices --json >j.out || bad "devices --json failed"
    python3 - "$rows" j.out <<'PY' || bad "devices --json: not the expected object (above)"
import json, sys
rows, path = int(sys.argv[1]), sys.argv[2]
j = json.load(open(path))
assert len(j["instructions"]) == rows, (len(j["instructions"]), rows)
assert sum(a["instructions"] for a in j["architectures"]) == rows
assert all(a["wrapped"] <= a["instructions"] for a in j["architectures"])
assert isinstance(j["cuda"], int) and isinstance(j["hip"], int)
PY
    # scripts read the CUDA device count this way (scripts/multi_gpu.sh)
    [ "$(sed -n 's/.*"cuda": \([0-9]*\).*/\1/p' j.out)" = "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cuda"])' j.out)" ] ||
        bad "devices --json: the sed of scripts/multi_gpu.sh reads another cuda count"
    # a pattern selects; no match is exit 1
    "$EXE" devices 'hopper/wgmma*' >p.out 2>&1 || bad "devices PATTERN failed"
    want=$(grep -c '^hopper/wgmma' l.out)
    got=$(awk '$1 == "hopper" {print $2}' p.out)
    [ "$got" = "$want" ] || bad "devices 'hopper/wgmma*': $got, list has $want"
    "$EXE" devices 'nosuch/instr' >/dev/null 2>&1 && bad "devices with a pattern matching nothing exited 0"
    ;;
*)
    echo "regress.sh: unknown test '$NAME'"
    exit 2
    ;;
esac
[ $fail -eq 0 ] && echo ok
exit $fail
