#!/usr/bin/env bash
# A real single-node Slurm (Debian's slurmctld, slurmd, munge; no systemd)
# running the shipped scripts/slurm files on a campaign of the positive
# control (hopper's row on model:ampere: the scripts' MMAFUZZ_DEVICE override).
#
#   slurm.sh MMAFUZZ SOURCE_DIR WORKDIR
#
# ProctrackType=proctrack/linuxproc, TaskPlugin=task/none,
# SelectType=select/cons_tres, gres gpu on four character-device files.
# Checks:
#  1. the 4 array tasks ran at once and recorded 4 different
#     CUDA_VISIBLE_DEVICES, those of the gres Slurm allocated (scontrol -d);
#  2. each shard ran its own share of the tiles, the shares add up to the
#     budget, and the merged campaign equals one unsharded process (cases per
#     instruction, disagreements per class: summed from the states by awk);
#  3. task 2 killed mid-run (scancel --signal=KILL) and resubmitted alone
#     (--array=2) resumes its shard, and the result is still equal.
# Exit 77 (a CTest skip) only when the packages are not installed and cannot be.
# All daemons are stopped by PID at the end.
set -u
EXE=$1
SRC=$2
W=$3
INSTR=hopper/mma.m16n8k16.f32.f16.f16.f32
fail=0
bad() { echo "FAIL: $*"; fail=1; }

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge \
            >/dev/null 2>&1
    fi
    if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
        echo "SKIP: slurmctld, slurmd and munge (Debian packages) are not installed and cannot be installed here"
        exit 77
    fi
fi
[ "$(id -u)" = 0 ] || { echo "SKIP: the test cluster's daemons and device files need root"; exit 77; }

rm -rf "$W"
mkdir -p "$W"/{state,spool,dev,run}
cd "$W" || exit 1
host=$(hostname -s)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
}
trap cleanup EXIT

# munge with its own key and socket
dd if=/dev/urandom of=munge.key bs=1024 count=1 2>/dev/null
chmod 400 munge.key
munged -F --force --key-file="$W/munge.key" --socket="$W/munge.sock" --pid-file="$W/munged.pid" \
    --log-file="$W/munged.log" --seed-file="$W/munge.seed" >munged.out 2>&1 &
pids+=($!)

# four character devices standing in for GPUs (the null device's numbers)
for i in 0 1 2 3; do mknod "dev/gpu$i" c 1 3; done
port=$((20000 + RANDOM % 20000))
cat >slurm.conf <<EOF
ClusterName=mmafuzztest
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$W/munge.sock
CredType=cred/munge
SlurmctldPort=$port
SlurmdPort=$((port + 1))
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool
SlurmctldPidFile=$W/slurmctld.pid
SlurmdPidFile=$W/slurmd.pid
SlurmctldLogFile=$W/slurmctld.log
SlurmdLogFile=$W/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
GresTypes=gpu
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MinJobAge=600
NodeName=$host CPUs=4 Gres=gpu:4 RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
echo "Name=gpu File=$W/dev/gpu[0-3]" >gres.conf
export SLURM_CONF=$W/slurm.conf
for k in $(seq 50); do [ -S munge.sock ] && break; sleep 0.1; done
slurmctld -D -f "$SLURM_CONF" >slurmctld.out 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >slurmd.out 2>&1 &
pids+=($!)
for k in $(seq 100); do sinfo -h -o %t 2>/dev/null | grep -q idle && break; sleep 0.2; done
sinfo -h -o %t | grep -q idle || { bad "the node did not come up: $(tail -3 slurmctld.log slurmd.log)"; exit 1; }

export MMAFUZZ=$EXE MMAFUZZ_DEVICE=model:ampere MMAFUZZ_RUNS=16000000 MMAFUZZ_SEED=3
export MMAFUZZ_RUN_ARGS="-jobs 1 -batch 12800" MMAFUZZ_CHECKPOINT_S=0.2
mkdir -p nocorpus
wait_jobs() {  # until no job of the user is pending or running
    for k in $(seq 600); do [ -z "$(squeue -h -o %i)" ] && return 0; sleep 0.5; done
    bad "jobs did not end: $(squeue)"
}
summary() {  # as tests/campaign/lib.sh's: cases, disagreements, classes and buckets
    cat "$1"/shards/*/shard.state | awk '$1 == "instr" { c[$2] += $4; m[$2] += $5 } $1 == "class" { k[$2 " " $3] += $4 }
        $1 == "bucket" { b[$2 " " $3] += $4 }
        END { for (i in c) print "instr", i, c[i], m[i]; for (x in k) if (k[x]) print "class", x, k[x]
              for (x in b) print "bucket", x, b[x] }' | sort
}

# the reference: one unsharded process of the same definition
"$SRC/scripts/slurm/init.sh" ref --instr "$INSTR" --corpus nocorpus >/dev/null
"$EXE" run --campaign ref -shard 0/1 -jobs 1 >/dev/null 2>&1
summary ref >ref.sum

# 1, 2: the shipped submit.sh (init, array, merge on afterany)
out=$("$SRC/scripts/slurm/submit.sh" "$W/c" 4 --instr "$INSTR" --corpus nocorpus)
echo "$out"
array=$(echo "$out" | sed -n 's/.*shards job \([0-9]*\).*/\1/p')
running=0
for k in $(seq 300); do  # Slurm's own view: the 4 tasks running at once
    r=$(squeue -h -t R -o %i | grep -c "^${array}_")
    [ "$r" -gt "$running" ] && running=$r
    [ "$running" -ge 4 ] && break
    sleep 0.05
done
echo "array tasks seen running at once: $running"
[ "$running" -ge 4 ] || bad "the 4 array tasks did not run at once (at most $running)"
for i in 0 1 2 3; do scontrol show job -d "${array}_$i" | grep -o 'IDX:[0-9]*' | head -1 | sed "s/IDX:/$i /"; done >gres.alloc
wait_jobs
for i in 0 1 2 3; do
    f=mmafuzz-shard-${array}_$i.out
    cvd=$(sed -n 's/.*CUDA_VISIBLE_DEVICES=\([0-9]*\).*/\1/p' "$f")
    echo "$i $cvd"
done >cvd.seen
echo "gres allocated:"; cat gres.alloc; echo "CUDA_VISIBLE_DEVICES seen:"; cat cvd.seen
[ "$(cut -d' ' -f2 cvd.seen | sort -u | wc -l)" -eq 4 ] || bad "4 tasks did not see 4 different CUDA_VISIBLE_DEVICES"
cmp -s gres.alloc cvd.seen || bad "CUDA_VISIBLE_DEVICES differ from the gres indices Slurm allocated"
tiles=$(sed -n 's/^instr .* \([0-9]*\)$/\1/p' c/campaign.def)
for i in 0 1 2 3; do
    share=$(( (tiles - i + 3) / 4 ))
    grep -q "^instr $INSTR $share $((share * 128)) " "c/shards/$i-of-4/shard.state" || bad "shard $i: not its share of $share tiles"
done
[ -f c.merged/report.html ] || bad "the merge job wrote no report: $(cat mmafuzz-merge-*.out)"
summary c.merged >got.sum
cmp -s ref.sum got.sum || bad "merged != one process: $(diff ref.sum got.sum | head -4 | tr '\n' ' ')"

# 3: task 2 killed mid-run, resubmitted alone
"$SRC/scripts/slurm/init.sh" k --instr "$INSTR" --corpus nocorpus >/dev/null
arr=$(sbatch --parsable --array=0-3 --export=ALL,CAMPAIGN="$W/k",MMAFUZZ_SHARDS=4 "$SRC/scripts/slurm/shard.sbatch")
for k in $(seq 200); do
    d=$(awk '$1 == "instr" { print $3 }' k/shards/2-of-4/shard.state 2>/dev/null)
    [ "${d:-0}" -gt 0 ] && break
    sleep 0.05
done
scancel --signal=KILL "${arr}_2"
wait_jobs
killed_at=$(awk '$1 == "instr" { print $3 }' k/shards/2-of-4/shard.state)
echo "task 2 killed at ${killed_at} tiles"
[ "${killed_at:-0}" -lt $(( (tiles - 2 + 3) / 4 )) ] || bad "task 2 ended before the kill"
re=$(sbatch --parsable --array=2 --export=ALL,CAMPAIGN="$W/k",MMAFUZZ_SHARDS=4 "$SRC/scripts/slurm/shard.sbatch")
sbatch --parsable --dependency=afterany:"$re" --export=ALL,CAMPAIGN="$W/k" "$SRC/scripts/slurm/merge.sbatch" >/dev/null
wait_jobs
grep -q "resuming from its state" mmafuzz-shard-${re}_2.out || bad "the resubmitted task did not resume: $(cat mmafuzz-shard-${re}_2.out)"
summary k.merged >got2.sum
cmp -s ref.sum got2.sum || bad "killed and resubmitted != one process: $(diff ref.sum got2.sum | head -4 | tr '\n' ' ')"

[ $fail -eq 0 ] && echo "PASS: slurm"
exit $fail
