#!/usr/bin/env python3
"""The shipped scheduler files, parsed and run against a local campaign.

    manifests.py MMAFUZZ SOURCE_DIR WORKDIR

- deploy/k8s/campaign-job.yaml: an Indexed Job (completionMode Indexed,
  completions = parallelism = MMAFUZZ_SHARDS, nvidia.com/gpu: 1, the campaign
  on a volume); its shard command is run for every index with
  JOB_COMPLETION_INDEX set as Kubernetes sets it.
- deploy/github/campaign.yml: a matrix over shards 0..SHARDS-1; the shard
  step's command is run per matrix value, each in its own copy of the
  campaign (as artifacts are), then the collect job's merge.
- scripts/slurm: shard.sbatch asks --ntasks=1 and --gpus-per-task=1,
  submit.sh submits --array=0-(N-1) and the merge job on
  --dependency=afterany:; shard.sbatch is run per SLURM_ARRAY_TASK_ID and
  merge.sbatch after.

Each way must give every shard exactly its share of the tiles and add up to
the campaign's whole budget (from the definition: TILES per instruction,
shard I owns #{t < TILES : t = I mod N}), and all three the same counts.
Exit 77 (a CTest skip) when PyYAML is missing.
"""
import os
import re
import shutil
import subprocess
import sys

try:
    import yaml
except ImportError:
    print("SKIP: PyYAML (Debian package python3-yaml) is not installed")
    sys.exit(77)

EXE, SRC, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
INSTR = "hopper/mma.m16n8k16.f32.f16.f16.f32"
failures = []


def bad(msg):
    print("FAIL:", msg)
    failures.append(msg)


def run(cmd, env=None, cwd=None, ok=(0,)):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run(cmd, env=e, cwd=cwd, capture_output=True, text=True,
                       shell=isinstance(cmd, str))
    if p.returncode not in ok:
        bad(f"{cmd}: exit {p.returncode}: {p.stderr.strip()[-300:]}")
    return p


def init(d):
    run([EXE, "campaign", "init", d, "--instr", INSTR, "--device", "model:ampere", "-runs", "512000",
         "-seed", "2", "--corpus", os.path.join(WORK, "nocorpus")])


def states(d):
    """{(shard, N): (tiles done, cases, disagreements)} from the shard states."""
    out = {}
    root = os.path.join(d, "shards")
    for name in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        path = os.path.join(root, name, "shard.state")
        if not os.path.exists(path):
            continue
        sh = done = cases = dis = 0
        for line in open(path):
            f = line.split()
            if f and f[0] == "shard":
                sh = (int(f[1]), int(f[2]))
            if f and f[0] == "instr":
                done, cases, dis = done + int(f[2]), cases + int(f[3]), dis + int(f[4])
        out[sh] = (done, cases, dis)
    return out


def check_shares(label, d, n):
    tiles = 0
    for line in open(os.path.join(d, "campaign.def")):
        f = line.split()
        if f and f[0] == "instr":
            tiles = int(f[5])
            m, nn = int(f[2]), int(f[3])
    st = states(d)
    if sorted(st) != [(i, n) for i in range(n)]:
        bad(f"{label}: shards {sorted(st)}, expected 0..{n - 1} of {n}")
        return None
    total = 0
    for i in range(n):
        share = len(range(i, tiles, n))
        if st[(i, n)][0] != share or st[(i, n)][1] != share * m * nn:
            bad(f"{label}: shard {i}/{n} did {st[(i, n)][:2]}, its share is {share} tiles")
        total += st[(i, n)][1]
    if total != tiles * m * nn:
        bad(f"{label}: {total} cases over the shards, the budget is {tiles * m * nn}")
    return sum(v[1] for v in st.values()), sum(v[2] for v in st.values())


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(os.path.join(WORK, "nocorpus"))
results = {}

# ---------------------------------------------------------------- Kubernetes
job = yaml.safe_load(open(os.path.join(SRC, "deploy/k8s/campaign-job.yaml")))
spec = job["spec"]
pod = spec["template"]["spec"]
shard_c = pod["containers"][0]
env = {e["name"]: str(e["value"]) for e in shard_c.get("env", [])}
n = int(env.get("MMAFUZZ_SHARDS", 0))
if job["kind"] != "Job" or spec.get("completionMode") != "Indexed":
    bad("k8s: not an Indexed Job")
if not (spec.get("completions") == spec.get("parallelism") == n and n > 0):
    bad(f"k8s: completions {spec.get('completions')}, parallelism {spec.get('parallelism')}, MMAFUZZ_SHARDS {n}")
for c in pod["containers"] + pod.get("initContainers", []):
    if str(c["resources"]["limits"].get("nvidia.com/gpu")) != "1":
        bad(f"k8s: container {c['name']} does not ask nvidia.com/gpu: 1")
mount = shard_c["volumeMounts"][0]["mountPath"]
if not any(v["name"] == shard_c["volumeMounts"][0]["name"] and "persistentVolumeClaim" in v for v in pod["volumes"]):
    bad("k8s: the campaign is not on a persistent volume")
init_cmd = " ".join(pod["initContainers"][0]["command"])
if "campaign init" not in init_cmd:
    bad("k8s: the init container does not define the campaign")
cmd = shard_c["command"]
campaign_dir = cmd[cmd.index("--campaign") + 1]
local = os.path.join(WORK, "k8s" + campaign_dir)
init(local)
for i in range(n):
    c = [EXE if a == "mmafuzz" else a.replace(mount, os.path.join(WORK, "k8s" + mount)) for a in cmd]
    run(c + ["-jobs", "1"], env=dict(env, JOB_COMPLETION_INDEX=str(i)))
results["k8s"] = check_shares("k8s", local, n)

# ------------------------------------------------------------ GitHub Actions
wf = yaml.safe_load(open(os.path.join(SRC, "deploy/github/campaign.yml")))
n = int(wf["env"]["SHARDS"])
shards = wf["jobs"]["shard"]["strategy"]["matrix"]["shard"]
if shards != list(range(n)):
    bad(f"github: matrix {shards}, expected 0..{n - 1}")
step = next(s["run"] for s in wf["jobs"]["shard"]["steps"] if "run" in s and "--campaign" in s["run"])
gh = os.path.join(WORK, "github")
init(os.path.join(gh, "definition", "campaign"))
for i in shards:  # each matrix job: its own copy of the definition (the artifact), its shard
    jd = os.path.join(gh, f"job{i}")
    shutil.copytree(os.path.join(gh, "definition"), jd)
    c = step.replace("${{ matrix.shard }}", str(i)).replace("${{ env.SHARDS }}", str(n))
    c = c.replace("build/mmafuzz", EXE) + " -jobs 1"
    run(c, cwd=jd)
    os.makedirs(os.path.join(gh, "shards"), exist_ok=True)
    shutil.copytree(os.path.join(jd, "campaign"), os.path.join(gh, "shards", f"shard-{i}"))
merge = next(s["run"] for s in wf["jobs"]["collect"]["steps"] if "run" in s and " merge " in s["run"])
run(merge.replace("build/mmafuzz", EXE), cwd=gh)
results["github"] = check_shares("github", os.path.join(gh, "merged"), n)

# --------------------------------------------------------------------- Slurm
sl = os.path.join(SRC, "scripts/slurm")
shard_script = open(os.path.join(sl, "shard.sbatch")).read()
for want in ("--ntasks=1", "--gpus-per-task=1"):
    if not re.search(r"^#SBATCH " + re.escape(want) + r"$", shard_script, re.M):
        bad(f"slurm: shard.sbatch lacks #SBATCH {want}")
submit = open(os.path.join(sl, "submit.sh")).read()
if "--array=0-$((n - 1))" not in submit or "--dependency=afterany:" not in submit:
    bad("slurm: submit.sh does not submit --array=0-(N-1) and the merge on afterany")
n = 4
sd = os.path.join(WORK, "slurm", "c")
run(["bash", os.path.join(sl, "init.sh"), sd, "--instr", INSTR, "--corpus", os.path.join(WORK, "nocorpus")],
    env={"MMAFUZZ": EXE, "MMAFUZZ_DEVICE": "model:ampere", "MMAFUZZ_RUNS": "512000", "MMAFUZZ_SEED": "2"})
for i in range(n):
    p = run(["bash", os.path.join(sl, "shard.sbatch")],
            env={"MMAFUZZ": EXE, "CAMPAIGN": sd, "MMAFUZZ_SHARDS": str(n), "SLURM_ARRAY_TASK_ID": str(i),
                 "MMAFUZZ_RUN_ARGS": "-jobs 1"})
    if f"shard {i}/{n} (I from SLURM_ARRAY_TASK_ID, N from MMAFUZZ_SHARDS)" not in p.stderr:
        bad(f"slurm: task {i} did not say where its shard came from")
run(["bash", os.path.join(sl, "merge.sbatch")], env={"MMAFUZZ": EXE, "CAMPAIGN": sd})
if not os.path.exists(sd + ".merged/report.html"):
    bad("slurm: merge.sbatch wrote no report")
results["slurm"] = check_shares("slurm", sd + ".merged", n)

print(results)
if len(set(results.values())) != 1:
    bad(f"the three ways differ: {results}")
if failures:
    sys.exit(1)
print("PASS: manifests")
