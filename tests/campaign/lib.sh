# Shared by the campaign tests (campaign.sh, ../cuda/verify_gpu.sh): sourced.
#   bad MESSAGE       record a failure (the script exits with $fail)
#   summary DIR       "instr NAME CASES DISAGREEMENTS", "class NAME CLASS COUNT" and
#                     "bucket NAME ID COUNT", summed over the shard states (the
#                     campaigns' equality, read independently of `mmafuzz report`:
#                     the same bucket set with the same count per bucket)
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
