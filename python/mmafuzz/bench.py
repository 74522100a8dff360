"""python -m mmafuzz.bench: mmafuzz against MMA-Sim 2.1.1 on the CPU.

Both sides get the same random-bit cases in one call each: mmafuzz through
the native Instruction.dpa on NumPy bits (and, reported separately, through
the drop-in mmafuzz.mmasim on tensors), MMA-Sim through its op's .dpa on CPU
tensors, at each thread count asked for (torch.set_num_threads for MMA-Sim,
threads= for mmafuzz).  It reports dot products per second and the ratio,
then compares the outputs (the NaN rule of VECTORS.md) and sorts every
difference under a rule of docs/python.md's list of rules where mmafuzz and
MMA-Sim differ; a difference under no rule is printed as a .vec line, to be
explained.

    python -m mmafuzz.bench                    # the headline row, 10^6 cases, 1 and 2 threads
    python -m mmafuzz.bench --shared           # and every canonical row both models have
    python -m mmafuzz.bench --json out.json

Needs torch and mmasim==2.1.1 (pip install torch mmasim==2.1.1).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Dict, List, Tuple

import numpy as np

HEADLINE = ("MMA", "Hopper", "m16n8k16.f32.f16.f16.f32")


def _load():
    try:
        import torch
        import mmasim  # noqa: F401
        from mmasim import amd, nv_ptx
        from mmasim.amd import isa_mfma
        from mmasim.nv_ptx import isa_mma, isa_tcgen05mma, isa_wgmma
    except ImportError as e:
        sys.exit(f"mmafuzz.bench: needs torch and mmasim==2.1.1 ({e}); pip install torch mmasim==2.1.1")
    return torch, nv_ptx, amd, isa_mma, isa_wgmma, isa_tcgen05mma, isa_mfma


def shared_rows(isa_mma, isa_wgmma, isa_tcgen05mma, isa_mfma) -> List[Tuple[str, str, str]]:
    """Every canonical shape MMA-Sim lists (wgmma N=8, tcgen05 N=8)."""
    out = []
    for arch, lst in isa_mma.mma_shape_and_type.items():
        out += [("MMA", arch, s) for s in lst]
    for arch, lst in isa_mma.mma_block_scale_shape_and_type.items():
        out += [("MMABlockScale", arch, s) for s in lst]
    out += [("WGMMA", "Hopper", s) for s in isa_wgmma.wgmma_shape_and_type["Hopper"] if s.startswith("m64n8k")]
    out += [("TCGen05MMA", "Blackwell", s) for s in isa_tcgen05mma.tcgen05mma_shape_and_type["Blackwell"]
            if s.startswith("m64n8k")]
    out += [("TCGen05MMABlockScale", "Blackwell", s)
            for s in isa_tcgen05mma.tcgen05mma_block_scale_shape_and_type["Blackwell"] if s.startswith("m128n8k")]
    for arch, lst in isa_mfma.arch_mfma_suffix.items():
        out += [("MFMA", arch, s) for s in lst]
    return out


def random_inputs(torch, ref, n: int, seed: int) -> Tuple[Any, ...]:
    """n random-bit cases in MMA-Sim's conventions (uniform bits of each
    operand's width; fp6/fp4 in their byte positions; scales too)."""
    rng = np.random.default_rng(seed)
    K = ref.k

    def operand(dtype, ptx, shape):
        if dtype == torch.uint8:
            if getattr(ref, "packing", 1) == 2:
                return torch.from_numpy(rng.integers(0, 256, shape[:-1] + (shape[-1] // 2,), dtype=np.uint8))
            width = 4 if ptx == "e2m1" else 6
            x = rng.integers(0, 1 << width, shape, dtype=np.uint8)
            return torch.from_numpy(x << 2 if ptx == "e2m1" else x)
        size = torch.tensor([], dtype=dtype).element_size()
        ints = {1: np.uint8, 2: np.int16, 4: np.int32, 8: np.int64}[size]
        bits = rng.integers(0, 1 << (8 * size), shape, dtype=np.uint64).astype(
            {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[size]).view(ints)
        return torch.from_numpy(bits).view(dtype)

    a = operand(ref.a_type, getattr(ref, "a_type_ptx", None), (n, K))
    b = operand(ref.b_type, getattr(ref, "b_type_ptx", None), (n, K))
    c = operand(ref.c_type, None, (n,))
    if not hasattr(ref, "s_type"):
        return a, b, c
    S = K // ref.block_size if ref.k == 64 else 1
    return a, b, c, operand(ref.s_type, None, (n, S)), operand(ref.s_type, None, (n, S))


def bits(torch, t) -> np.ndarray:
    size = t.element_size()
    v = t.view({1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[size]) \
        if t.dtype.is_floating_point else t
    return v.numpy().view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[size])


def classify(ours_op, args_bits, got: np.ndarray, want: np.ndarray) -> Dict[str, List[int]]:
    """Sort the differing cases under docs/python.md's rules where mmafuzz and
    MMA-Sim differ.  That list is empty since the model adopted MMA-Sim
    2.1.1's rules, so every difference is "unexplained"; a rule found later
    goes in RULES and here, with its evidence."""
    eq = ours_op._row_op.outputs_equal(got, want)
    idx = [int(i) for i in np.nonzero(~eq)[0]]
    return {"unexplained": idx} if idx else {}


RULES = {
    "unexplained": "matches no listed rule: a bug until explained",
}


def run_row(torch, ns, cls, arch, st, n, threads, seed, mm, with_dropin) -> Dict[str, Any]:
    ref = getattr(ns[cls], cls)(arch, st)
    ours = getattr(mm.amd if cls == "MFMA" else mm.nv_ptx, cls)(arch, st)
    args = random_inputs(torch, ref, n, seed)
    # the native path's inputs: the drop-in's conversion of the same tensors, done before timing
    from . import mmasim as _dm
    row = ours._row_op
    pk = getattr(ours, "packing", 1)
    nat = [_dm._operand(args[0], row.a_format, pk, "a"), _dm._operand(args[1], row.b_format, pk, "b"),
           _dm._bits(args[2], "c")]
    if len(args) > 3:
        nat += [_dm._scale(args[3], row.scale_format, "alpha"), _dm._scale(args[4], row.scale_format, "beta")]
    res: Dict[str, Any] = {"row": row.name, "mmasim": f"{cls}({arch!r}, {st!r})", "cases": n, "threads": {}}
    want = None
    for t in threads:
        torch.set_num_threads(t)
        t0 = time.perf_counter()
        w = ref.dpa(*args)
        t_ref = time.perf_counter() - t0
        t0 = time.perf_counter()
        if row.k == nat[0].shape[-1]:
            g = row.dpa(nat[0], nat[1], nat[2], *(nat[3:] if len(nat) > 3 else ()), threads=t)
        else:
            g = None
        t_nat = time.perf_counter() - t0
        r = {"mmasim_per_s": n / t_ref}
        if g is not None:
            r["native_per_s"] = n / t_nat
            r["ratio_native"] = t_ref / t_nat
        if with_dropin:
            t0 = time.perf_counter()
            gd = ours.dpa(*args)
            t_drop = time.perf_counter() - t0
            r["dropin_per_s"] = n / t_drop
            r["ratio_dropin"] = t_ref / t_drop
            g = bits(torch, gd) if g is None else g
        res["threads"][t] = r
        want = bits(torch, w)
        got = g if g is not None else bits(torch, ours.dpa(*args))
    diff = classify(ours, nat, got, want)
    res["differ"] = {k: len(v) for k, v in diff.items()}
    res["examples"] = {}
    for rule, idx in diff.items():
        i = idx[0]
        case = " ".join(f"{k}={','.join(format(int(v), 'x') for v in np.atleast_1d(x[i]))}"
                        for k, x in zip(("c", "a", "b", "sa", "sb"), [nat[2], nat[0], nat[1]] + nat[3:]))
        res["examples"][rule] = f"instr {row.name}: {case} => mmafuzz {int(got[i]):x}, MMA-Sim {int(want[i]):x}"
    return res


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m mmafuzz.bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", type=int, default=10**6, help="random-bit cases of the headline row (10^6)")
    p.add_argument("--threads", default="1,2", help="thread counts, comma-separated (1,2)")
    p.add_argument("--shared", action="store_true", help="every canonical row both models have, too")
    p.add_argument("--shared-cases", type=int, default=20000, help="cases per shared row (20,000)")
    p.add_argument("-seed", "--seed", type=int, default=1)
    p.add_argument("--json", help="write the results to this file")
    a = p.parse_args(argv)
    torch, nv_ptx, amd, isa_mma, isa_wgmma, isa_tcgen05mma, isa_mfma = _load()
    from . import mmasim as mm
    ns = {c: nv_ptx for c in ("MMA", "MMABlockScale", "WGMMA", "TCGen05MMA", "TCGen05MMABlockScale")}
    ns["MFMA"] = amd
    threads = [int(x) for x in a.threads.split(",")]
    out = {"headline": run_row(torch, ns, *HEADLINE, a.cases, threads, a.seed, mm, True), "shared": []}
    h = out["headline"]
    print(f"{h['row']} ({h['mmasim']}), {h['cases']:,} random-bit cases in one call:")
    for t, r in h["threads"].items():
        print(f"  {t} thread{'s' if t > 1 else ' '}: MMA-Sim {r['mmasim_per_s'] / 1e6:7.3f} M/s   "
              f"mmafuzz native {r['native_per_s'] / 1e6:7.2f} M/s ({r['ratio_native']:6.1f}x)   "
              f"drop-in {r['dropin_per_s'] / 1e6:7.2f} M/s ({r['ratio_dropin']:6.1f}x)")
    print(f"  outputs: {sum(h['differ'].values())} of {h['cases']:,} differ", h["differ"] or "")
    for rule, ex in h["examples"].items():
        print(f"    {rule}: {RULES[rule]}\n      e.g. {ex}")
    unexplained = h["differ"].get("unexplained", 0)
    if a.shared:
        rows = shared_rows(isa_mma, isa_wgmma, isa_tcgen05mma, isa_mfma)
        print(f"\n{len(rows)} canonical rows both models have, {a.shared_cases:,} random-bit cases each "
              f"(1 thread):")
        tot = {}
        for cls, arch, st in rows:
            r = run_row(torch, ns, cls, arch, st, a.shared_cases, [1], a.seed, mm, False)
            out["shared"].append(r)
            t1 = r["threads"][1]
            for k, v in r["differ"].items():
                tot[k] = tot.get(k, 0) + v
            flag = " ".join(f"{k}={v}" for k, v in r["differ"].items())
            print(f"  {r['row']:<72} MMA-Sim {t1['mmasim_per_s'] / 1e6:6.3f} M/s  "
                  f"mmafuzz {t1.get('native_per_s', 0) / 1e6:6.2f} M/s ({t1.get('ratio_native', 0):6.1f}x)  {flag}")
            for rule, ex in r["examples"].items():
                if rule == "unexplained":
                    print(f"      {ex}")
        unexplained += tot.get("unexplained", 0)
        print(f"  differences by rule: {tot or 'none'}")
        for rule in tot:
            print(f"    {rule}: {RULES[rule]}")
    if a.json:
        with open(a.json + ".tmp", "w") as f:
            json.dump(out, f, indent=1, default=str)
        import os
        os.replace(a.json + ".tmp", a.json)
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
