# flow_lib.sh - what flow.sh and sparse_flow.sh share (sourced, not run):
# the filing run of INSTR against OTHER's model (model:ampere as the
# "device"), each file's name against xxhsum and its d= / model= against
# `mmafuzz eval`, and the replay.  The caller sets EXE, WORK, RUNS, INSTR,
# OTHER, defines bad(), and then calls these in order.

# flow_run NAME: the run into $WORK/out; exit 1 and files filed, else bad.
# Sets OUT and files[].
flow_run() {
    command -v xxhsum >/dev/null || { echo "FAIL: xxhsum (Debian package xxhash) is needed to check the hashes"; exit 1; }
    rm -rf "$WORK"
    mkdir -p "$WORK"
    OUT=$WORK/out
    # -per_bucket without a limit: the checks are about minimized files, not buckets
    "$EXE" run --instr "$INSTR" --device model:ampere -runs "$RUNS" -seed 1 -jobs 2 -per_bucket 1000000 --out "$OUT" \
        >"$WORK/run1.out" 2>"$WORK/run1.err"
    local rc=$?
    [ $rc -eq 1 ] || bad "$1: exit $rc, expected 1 (mismatches found)"
    mapfile -t files < <(find "$OUT" -name '*.vec' | sort)
    [ ${#files[@]} -gt 0 ] || bad "$1 filed no mismatch"
    echo "$1: ${#files[@]} files"
}

# model_d INSTR CASE-FIELDS -> the d hex `mmafuzz eval` gives
model_d() { "$EXE" eval "$1" $2 | sed -n 's/^d=\([0-9a-f]*\).*/\1/p'; }

# flow_case FILE FIELD-REGEX: the file's first case; sets line, fields (the
# case's fields matching FIELD-REGEX, in the file's order), d, m, ed, em.
# Checks: the name is XXH3-128 of "mmafuzz-case 1\n" INSTR "\n" FIELDS "\n";
# d= and model= are what OTHER's and INSTR's rows give, and they differ.
flow_case() {
    local f=$1 name h
    name=$(basename "$f" .vec)
    line=$(grep -m1 '^c=' "$f")
    fields=$(echo "$line" | tr ' ' '\n' | grep -E "^($2)=" | tr '\n' ' ' | sed 's/ $//')
    d=$(echo "$line" | tr ' ' '\n' | sed -n 's/^d=//p')
    m=$(echo "$line" | tr ' ' '\n' | sed -n 's/^model=//p')
    h=$(printf 'mmafuzz-case 1\n%s\n%s\n' "$INSTR" "$fields" | xxhsum -H2 | cut -d' ' -f1)
    [ "$h" = "$name" ] || bad "$f: xxhsum -H2 gives $h"
    ed=$(model_d "$OTHER" "$fields")
    em=$(model_d "$INSTR" "$fields")
    [ "$ed" = "$d" ] || bad "$f: d=$d but the ampere row gives $ed"
    [ "$em" = "$m" ] || bad "$f: model=$m but the hopper row gives $em"
    [ "$ed" != "$em" ] || bad "$f: the rows agree on the minimized case"
}

# flow_replay: `replay OUT --device model:ampere` exits 1 and reports every
# case (the minimized one and the original of each file) still mismatching.
flow_replay() {
    "$EXE" replay "$OUT" --device model:ampere >"$WORK/replay.out" 2>"$WORK/replay.err"
    local rc=$? want got
    [ $rc -eq 1 ] || bad "replay: exit $rc, expected 1"
    want=$((2 * ${#files[@]}))
    got=$(grep -c ' still-mismatching: ' "$WORK/replay.out")
    [ "$got" -eq "$want" ] || bad "replay: $got cases still mismatching, expected $want"
}
