# Shared by the campaign tests and scripts (campaign.sh, ../cuda/verify_gpu.sh,
# ../../scripts/multi_gpu.sh): sourced; the functions that replay run "$EXE".
#   bad MESSAGE       record a failure (the script exits with $fail)
#   summary DIR       "instr NAME CASES DISAGREEMENTS", "class NAME CLASS COUNT" and
#                     "bucket NAME ID COUNT", summed over the shard states (the
#                     campaigns' equality, read independently of `mmafuzz report`:
#                     the same bucket set with the same count per bucket)
#   findings_ok DIR REPLAY_FLAGS...
#                     every non-zero class of DIR names a finding that exists and
#                     replays (`mmafuzz replay REPLAY_FLAGS`) as still mismatching,
#                     and every finding file of DIR reads whole and still mismatches
#   campaign_ok DIR LEAST REPLAY_FLAGS...
#                     DIR has at least LEAST disagreements, its bucket counts add up
#                     to its disagreements in every row, and findings_ok
#   campaign_equal REF DIR LEAST REPLAY_FLAGS...
#                     the equality of two campaigns of one definition: the same
#                     summary, and campaign_ok DIR
fail=0
bad() { echo "FAIL: $*"; fail=1; }

summary() {
    cat "$1"/shards/*/shard.state 2>/dev/null | awk '
        $1 == "instr" { c[$2] += $4; m[$2] += $5 }
        $1 == "class" { k[$2 " " $3] += $4 }
        $1 == "bucket" { b[$2 " " $3] += $4 }
        END { for (i in c) print "instr", i, c[i], m[i]; for (x in k) if (k[x]) print "class", x, k[x]
              for (x in b) print "bucket", x, b[x] }' | sort
}

findings_ok() {
    local d=$1 tag=${1//\//_}
    shift
    local hexes files=() h f
    hexes=$(cat "$d"/shards/*/shard.state | awk '$1 == "class" && $4 > 0 { n[$2 " " $3]++ }
        $1 == "class" && $5 != "-" { h[$2 " " $3] = $5 }
        END { for (x in n) { if (!(x in h)) print "MISSING " x; else print h[x] } }')
    if echo "$hexes" | grep -q MISSING; then
        bad "$d: a class without a finding: $(echo "$hexes" | grep MISSING | head -1)"
        return
    fi
    for h in $hexes; do
        f=$(find "$d/shards" -name "$h.vec" | head -1)
        [ -n "$f" ] || { bad "$d: finding $h named by a state is not there"; continue; }
        files+=("$f")
    done
    "$EXE" replay "$@" "${files[@]}" >"$tag.replay.out" 2>"$tag.replay.err"
    [ $? -eq 1 ] || bad "$d: replay of the class findings did not exit 1: $(tail -2 "$tag.replay.err")"
    grep -q " 0 device-changed, 0 fixed, 0 agree" "$tag.replay.out" ||
        bad "$d: a class finding no longer mismatches: $(tail -1 "$tag.replay.out")"
    # every file of the folder is whole: replay reads all, skips none
    "$EXE" replay "$@" "$d/shards" >"$tag.replay_all.out" 2>"$tag.replay_all.err"
    grep -q "; 0 files skipped" "$tag.replay_all.out" ||
        bad "$d: finding files skipped (not whole?): $(head -3 "$tag.replay_all.err")"
    grep -q " 0 fixed, 0 agree" "$tag.replay_all.out" || bad "$d: a finding no longer mismatches"
}

campaign_ok() {
    local d=$1 least=$2
    shift 2
    local sum dis unbucketed
    sum=$(summary "$d")
    dis=$(echo "$sum" | awk '$1 == "instr" { s += $4 } END { print s + 0 }')
    [ "$dis" -ge "$least" ] || bad "$d: only $dis disagreements, the positive control needs >= $least"
    unbucketed=$(echo "$sum" | awk '$1 == "instr" { m[$2] += $4 } $1 == "bucket" { m[$2] -= $4 }
        END { for (i in m) if (m[i] != 0) print i, m[i] }')
    [ -z "$unbucketed" ] || bad "$d: bucket counts do not add up to the disagreements: $unbucketed"
    findings_ok "$d" "$@"
}

campaign_equal() {
    local ref=$1 d=$2
    shift 2
    summary "$ref" >ref.sum
    summary "$d" >got.sum
    if cmp -s ref.sum got.sum; then
        echo "equal: $d = $ref ($(wc -l <ref.sum) summary lines)"
    else
        bad "$d differs from $ref: $(diff ref.sum got.sum | head -6 | tr '\n' ' ')"
    fi
    campaign_ok "$d" "$@"
}
