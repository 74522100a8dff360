#!/usr/bin/env python3
"""Discover the kernel model of GEMM calls on the GPU with constructed inputs
(mmafuzz.discover; docs/kernels.md, "Discovery with constructed inputs").

    python3 scripts/kernels/discover_grid.py OUT.json [--ops OP,...] [--sizes M,...] [--ks K,...]
        [--shapes MxNxK,...] [--most 32] [--budget-s 540] [--table PATH] [--force]

For each op and shape: probes, candidates, fit, and the check on fresh calls
with random and boundary operands.  OUT.json is rewritten after every shape
(a list of results: op, shape, the model's text, "reproduced N of N outputs
on M calls", the structure found, the GPU time spent in calls, the kernels
PyTorch's profiler saw); an exception is recorded with its traceback and the
grid goes on.  Models that reproduce every output checked are added to the
kernel table (default: $XDG_CACHE_HOME/mmafuzz/kernels.tsv, which
mmafuzz.reproduce reads); a call already in that table is not discovered
again unless --force.  --budget-s stops before the next shape once that many
seconds have passed, so that a time-limited run still writes its results.
Needs PyTorch with CUDA and the mmafuzz package: the checkout's python/
when its _core is built there (the extension copied into python/mmafuzz),
else the installed one (`pip install .`).
"""
import argparse
import glob
import json
import os
import sys
import time
import traceback

here = os.path.dirname(os.path.abspath(__file__))
# the checkout's package when its _core is built in place, else the installed one (pip install .)
if glob.glob(os.path.join(here, "..", "..", "python", "mmafuzz", "_core*")):
    sys.path.insert(0, os.path.join(here, "..", "..", "python"))

# (name, op, input format, output format, flags)
OPS = {
    "matmul-f16": ("torch.matmul", "f16", "f16", {}),
    "matmul-bf16": ("torch.matmul", "bf16", "bf16", {}),
    "matmul-tf32": ("torch.matmul", "tf32", "f32", {"allow_tf32": True}),
    "linear-bf16": ("torch.nn.functional.linear", "bf16", "bf16", {}),
    "scaled_mm-e4m3-f32": ("torch._scaled_mm", "e4m3", "f32", {"use_fast_accum": False}),
    "scaled_mm-e4m3-bf16": ("torch._scaled_mm", "e4m3", "bf16", {"use_fast_accum": False}),
    "scaled_mm-e4m3-f32-fast": ("torch._scaled_mm", "e4m3", "f32", {"use_fast_accum": True}),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="JSON file to write (rewritten after every shape)")
    ap.add_argument("--ops", default="matmul-f16,matmul-bf16,matmul-tf32,scaled_mm-e4m3-f32,scaled_mm-e4m3-bf16")
    ap.add_argument("--sizes", default="8,64,128,512", help="M and N values (every pair)")
    ap.add_argument("--ks", default="1000,4096,16384,65536")
    ap.add_argument("--shapes", default="", help="MxNxK,... instead of --sizes x --ks")
    ap.add_argument("--most", type=int, default=32, help="rows and columns of each call checked on the CPU")
    ap.add_argument("--budget-s", type=float, default=540.0)
    ap.add_argument("--table", default=None, help="kernel table to read and add to (default: the user's)")
    ap.add_argument("--force", action="store_true", help="discover again what the table holds")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--simulate", metavar="MODEL_FILE", default=None,
                    help="a dry run without a GPU: every op is the C kernel model in MODEL_FILE")
    a = ap.parse_args()

    from mmafuzz import discover as D

    if a.simulate:
        with open(a.simulate) as f:
            sim_model = f.read()
        torch = None
    else:
        import torch
        if not torch.cuda.is_available():
            sys.exit("discover_grid.py: PyTorch sees no CUDA GPU")
    for name in a.ops.split(","):
        if name not in OPS:
            sys.exit(f"discover_grid.py: unknown op {name!r}; known: {', '.join(OPS)}")
    if a.shapes:
        shapes = []
        for s in a.shapes.split(","):
            try:
                m, n, k = (int(x) for x in s.lower().split("x"))
            except ValueError:
                sys.exit(f"discover_grid.py: --shapes: {s!r} is not MxNxK")
            shapes.append((m, n, k))
    else:
        sizes = [int(x) for x in a.sizes.split(",")]
        shapes = [(m, n, k) for k in (int(x) for x in a.ks.split(",")) for m in sizes for n in sizes]
    t_start = time.perf_counter()
    results = []

    def write():
        tmp = a.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)
        os.replace(tmp, a.out)

    for name in a.ops.split(","):
        op, fa, fd, flags = OPS[name]
        for m, n, k in shapes:
            entry = {"op": name, "torch_op": op, "a_format": fa, "d_format": fd, "flags": flags, "m": m, "n": n, "k": k}
            if time.perf_counter() - t_start > a.budget_s:
                entry["skipped"] = f"budget of {a.budget_s} s spent"
                results.append(entry)
                continue
            if op == "torch._scaled_mm" and (m % 16 or n % 16 or k % 16):
                entry["skipped"] = "_scaled_mm needs M, N and K multiples of 16"
                results.append(entry)
                continue
            t0 = time.perf_counter()
            try:
                if a.simulate:
                    dev = D.model_device(sim_model)
                    dev.info = dict(dev.info, flags=flags)
                else:
                    dev = D.torch_device(op, fa, fd, flags)
                r = D.cached(dev, op, m, n, k, fa, fd, table=a.table, force=a.force, most=a.most, threads=a.threads)
                for key in ("model", "models", "summary", "structure", "from_probes", "reproduced", "outputs", "calls",
                            "device_calls", "device_s", "probes", "candidates_after_restarts",
                            "candidates_after_probes", "fit_tried", "odd_probes", "kernels", "cached", "check",
                            "check_probes"):
                    if key in r:
                        entry[key] = r[key]
                entry["restarts"] = len(r.get("restarts", []))
                entry["gpu"] = dev.info.get("gpu")
                entry["software"] = dev.info.get("software")
            except Exception as e:   # recorded, not fatal: the grid goes on
                entry["error"] = f"{type(e).__name__}: {e}"
                entry["traceback"] = traceback.format_exc()
                if torch is not None:
                    torch.cuda.empty_cache()
            entry["wall_s"] = round(time.perf_counter() - t0, 3)
            results.append(entry)
            write()
            print(f"{name} {m}x{n}x{k}: {entry.get('summary') or entry.get('error')} "
                  f"(GPU calls {entry.get('device_calls', 0)}, {entry.get('device_s', 0):.2f} s in calls, "
                  f"{entry['wall_s']:.1f} s wall)", flush=True)
            if entry.get("model"):
                print("    " + entry["model"].strip().replace("\n", "; "), flush=True)
    write()


if __name__ == "__main__":
    main()
