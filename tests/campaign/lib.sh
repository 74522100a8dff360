# Shared by the campaign tests (campaign.sh, ../cuda/verify_gpu.sh): sourced.
#   bad MESSAGE       record a failure (the script exits with $fail)
#   summary DIR       "instr NAME CASES DISAGREEMENTS" and "class NAME CLASS COUNT",
#                     summed over the shard states (the campaigns' equality, read
#                     independently of `mmafuzz report`)
fail=0
bad() { echo "FAIL: $*"; fail=1; }

summary() {
    cat "$1"/shards/*/shard.state 2>/dev/null | awk '
        $1 == "instr" { c[$2] += $4; m[$2] += $5 }
        $1 == "class" { k[$2 " " $3] += $4 }
        END { for (i in c) print "instr", i, c[i], m[i]; for (x in k) if (k[x]) print "class", x, k[x] }' | sort
}
