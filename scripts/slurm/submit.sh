#!/usr/bin/env bash
# A whole campaign on Slurm: define it, submit N shards as an array, then the
# merge-and-report job after the array.
#   scripts/slurm/submit.sh CAMPAIGN_DIR N [more `mmafuzz campaign init` flags]
# CAMPAIGN_DIR must be on a file system every node sees.  Environment as
# init.sh (MMAFUZZ, MMAFUZZ_DEVICE, MMAFUZZ_RUNS, MMAFUZZ_SEED).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: submit.sh CAMPAIGN_DIR N [flags]}
n=${2:?usage: submit.sh CAMPAIGN_DIR N [flags]}
shift 2
"$here/init.sh" "$dir" "$@"
array=$(sbatch --parsable --array=0-$((n - 1)) --export=ALL,CAMPAIGN="$dir",MMAFUZZ_SHARDS="$n" "$here/shard.sbatch")
array=${array%%;*}
merge=$(sbatch --parsable --dependency=afterany:"$array" --export=ALL,CAMPAIGN="$dir" "$here/merge.sbatch")
echo "campaign $dir: shards job $array (array 0-$((n - 1))), merge and report job ${merge%%;*}"
