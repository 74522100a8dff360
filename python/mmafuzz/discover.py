"""Discovery of a GEMM call's summation structure with constructed inputs, in
the manner of FPRev (docs/kernels.md, "Discovery with constructed inputs").

A *probe* puts a large product +2^e at one instruction of K (``plus``), its
negation at another (``minus``) and small products, the *witnesses*, at up
to eight others, each a distinct power of two times a unit ``t0``; every
other product is zero.  Whatever adds a witness into an accumulator that
holds the large value loses it (absorbed by binary32 rounding, or truncated
away by the instruction's fused sum, which truncates every term to F bits
below the largest); whatever adds it after the pair cancelled keeps it
exactly.  So the output, divided by ``t0``, is the bit mask of the witnesses
that survived, and that says where the kernel restarts an accumulator from
zero (a split-K slice, a promotion) and how it combines the partial sums.

One call carries many probes: output (i, j) is one probe, its terms placed
at elements of K that only row i of A and column j of B hold, so that no
other output sees them (``pack``).  A device is any callable
``device(A, Bt) -> D`` on bit patterns (A: M x K, Bt: N x K, D: M x N):
a GPU op (``torch_device``), or the C kernel model with parameters the
discovery does not know (``model_device``), which is how it is tested.

The steps (``discover``):

1. *Restarts*: for every instruction b > 0, the pair in instruction b and a
   witness in instruction b - 1: the witness survives exactly when the
   accumulator that holds instruction b started from zero there (b begins a
   split-K slice or a promotion group).
2. *Candidates*: every kernel model (K step, split count, slice rule,
   promotion interval, reduction) whose restarts are those observed.
3. *Structure*: candidates that restart alike can still differ (a slice
   start or a promotion, a serial or a tree reduction); probes on which
   their predicted outcomes differ (``predict``, a symbolic evaluation of
   the structure) are run, and the candidates that predicted otherwise go.
4. *Fit*: ``kernels.fit`` confirms the survivors on a call with random
   operands, and the model found is checked on fresh calls with random and
   boundary operands (signed zeros, subnormals, infinities, the largest
   values, cancellation): "reproduced N of N outputs on M calls".
"""
from __future__ import annotations

import bisect
import dataclasses
import functools
import os
import time
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple

import numpy as np

from . import kernels as _k
from . import recording as _rec

BITS = 8   # witnesses a probe: a bf16 output holds an 8-bit mask exactly
# Per input format: the exponent of the large operand and of the unit
# witness operand (a product of two of them is 2^(2e)).  Large: the largest
# power of two the format holds; unit: small enough that 2^BITS units are
# absorbed by the large product in binary32 (below half its ulp) and
# truncated away by any fused sum that holds it (F <= 25 bits), and large
# enough that the output format holds the mask exactly.
_PROBE_EXP = {"f16": (15, -5), "bf16": (60, 0), "tf32": (60, 0), "f32": (60, 0), "e4m3": (8, -9), "e5m2": (15, -16)}


def pow2_bits(fmt: str, e: int, negative: bool = False) -> int:
    """Bit pattern of +-2^e in format ``fmt`` (normal or subnormal)."""
    width, bias, ebits, fbits = _rec._FMT[fmt]
    if e + bias >= 1:
        if e + bias >= (1 << ebits) - 1 and fmt not in ("e4m3",):
            raise ValueError(f"2^{e} overflows {fmt}")
        v = (e + bias) << fbits
    else:
        sh = e - 1 + bias + fbits
        if sh < 0:
            raise ValueError(f"2^{e} underflows {fmt}")
        v = 1 << sh
    return v | ((1 << (ebits + fbits)) if negative else 0)


def bits_to_float(bits: np.ndarray, fmt: str) -> np.ndarray:
    """Output bit patterns as float64 values (exact: f16, bf16, f32)."""
    bits = np.asarray(bits)
    if fmt == "f16":
        return bits.astype(np.uint16).view(np.float16).astype(np.float64)
    if fmt == "bf16":
        return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    if fmt == "f32":
        return bits.astype(np.uint32).view(np.float32).astype(np.float64)
    raise ValueError(f"no output format {fmt}")


# ---------------------------------------------------------------- probes

@dataclasses.dataclass(frozen=True)
class Probe:
    """+2^e in instruction ``plus``, -2^e in ``minus`` (may be the same
    instruction), witness w (weight 2^w t0) in instruction ``witnesses[w]``."""
    plus: int
    minus: int
    witnesses: Tuple[int, ...]


def pack(probes: Sequence[Probe], M: int, N: int, K: int, ik: int, fmt: str):
    """Lay probes out over calls of shape M x N x K: yields (A, Bt, where)
    with where[(i, j)] = index of the probe output (i, j) carries.  Each
    probe term takes one element of its instruction that no other probe of
    the call uses, held by row i of A and column j of B alone."""
    e_big, e_unit = _PROBE_EXP[fmt]
    width = _rec._FMT[fmt][0]
    ut = _rec._UINT[width]
    T = -(-K // ik)
    plus_a, minus_a, big_b = pow2_bits(fmt, e_big), pow2_bits(fmt, e_big, True), pow2_bits(fmt, e_big)
    unit_b = pow2_bits(fmt, e_unit)
    wit_a = [pow2_bits(fmt, e_unit + w) for w in range(BITS)]
    todo = list(range(len(probes)))
    while todo:
        A = np.zeros((M, K), ut)
        Bt = np.zeros((N, K), ut)
        used = np.zeros(T, np.int64)
        where: Dict[Tuple[int, int], int] = {}
        left = []
        o = 0
        for pi in todo:
            p = probes[pi]
            terms = [(p.plus, plus_a, big_b), (p.minus, minus_a, big_b)] + \
                    [(t, wit_a[w], unit_b) for w, t in enumerate(p.witnesses)]
            need: Dict[int, int] = {}
            for t, _, _ in terms:
                need[t] = need.get(t, 0) + 1
            if o >= M * N or any(used[t] + c > min(ik, K - t * ik) for t, c in need.items()):
                left.append(pi)
                continue
            i, j = divmod(o, N)
            o += 1
            for t, av, bv in terms:
                x = t * ik + int(used[t])
                used[t] += 1
                A[i, x] = av
                Bt[j, x] = bv
            where[(i, j)] = pi
        if not where:
            raise ValueError(f"a probe does not fit one call of {M} x {N} x {K}")
        yield A, Bt, where
        todo = left


def decode(d: int, fmt: str, out_fmt: str) -> Optional[FrozenSet[int]]:
    """The witnesses an output says survived, or None when it is no mask of
    units (the large pair did not cancel: a structure outside the model)."""
    e_unit = _PROBE_EXP[fmt][1]
    v = float(bits_to_float(np.array([d]), out_fmt)[0]) / 2.0 ** (2 * e_unit)
    if not (0 <= v < 2 ** BITS and v == int(v)):   # NaN and infinities fail the first test
        return None
    m = int(v)
    return frozenset(w for w in range(BITS) if m >> w & 1)


def run_probes(device: Callable, probes: Sequence[Probe], M: int, N: int, K: int, ik: int, fmt: str,
               out_fmt: str, log: Optional[Dict[str, Any]] = None) -> List[Optional[FrozenSet[int]]]:
    """Run probes on the device, as few calls as their slots allow; the
    surviving witnesses of each (indices into its ``witnesses``)."""
    out: List[Optional[FrozenSet[int]]] = [None] * len(probes)
    for A, Bt, where in pack(probes, M, N, K, ik, fmt):
        t0 = time.perf_counter()
        D = np.asarray(device(A, Bt))
        if log is not None:
            log["calls"] = log.get("calls", 0) + 1
            log["device_s"] = log.get("device_s", 0.0) + time.perf_counter() - t0
            if len(log.setdefault("probe_calls", [])) < 4:   # kept for the check (a few: they are large)
                log["probe_calls"].append((A, Bt, D, len(where)))
        for (i, j), pi in where.items():
            out[pi] = decode(int(D[i, j]), fmt, out_fmt)
    return out


# ------------------------------------------------------------- structure

@dataclasses.dataclass(frozen=True)
class Struct:
    """A kernel model's accumulation structure in instruction units: the
    slices' instruction ranges [a, b) in slice order (empty ones kept: they
    take part in a tree reduction), the promotion interval (0: none) and the
    reduction."""
    slices: Tuple[Tuple[int, int], ...]
    promote: int
    reduce: str

    def restarts(self) -> FrozenSet[int]:
        """Instructions where an accumulator starts from zero."""
        out = set()
        for a, b in self.slices:
            if a < b:
                out.update(range(a, b, self.promote) if self.promote else (a,))
        return frozenset(out)


def _restart_count(st: Struct) -> int:
    """len(st.restarts()), without building the set."""
    return sum((-(-(b - a) // st.promote) if st.promote else 1) for a, b in st.slices if a < b)


def slices_of(K: int, ik: int, bk: int, split: int, rule: str) -> Tuple[Tuple[int, int], ...]:
    """Instruction ranges of the slices, as mf_kernel_slice cuts K's
    ceil(K / bk) main-loop iterations (model/kernel.c)."""
    iters = -(-K // bk)
    kpad = -(-K // ik) * ik
    out = []
    for s in range(split):
        if rule == "balanced":
            q, r = divmod(iters, split)
            f = s * q + min(s, r)
            e = f + q + (s < r)
        else:
            per = -(-iters // split)
            f, e = s * per, s * per + per
        f, e = min(f, iters), min(e, iters)
        out.append((f * bk // ik, min(e * bk, kpad) // ik))
    return tuple(out)


def _add(x, y):
    """binary32 addition of symbolic values: a frozenset of witnesses (an
    exact small sum) or +1 / -1 (the large value)."""
    if isinstance(x, int) and isinstance(y, int):
        if x + y:
            raise AssertionError("two large values of one sign")
        return frozenset()
    if isinstance(x, int):
        return x
    if isinstance(y, int):
        return y
    return x | y


@functools.lru_cache(maxsize=65536)
def _starts(slices: Tuple[Tuple[int, int], ...]) -> List[int]:
    return [a for a, _ in slices]


def predict(st: Struct, probe: Probe) -> Optional[FrozenSet[int]]:
    """The witnesses of ``probe`` that survive under structure ``st``,
    evaluated symbolically (None: the pair never cancels).  An instruction
    holding the large value truncates every small term and the accumulator
    away; the pair cancels exactly where it meets; a binary32 addition
    absorbs a small sum into the large value; small sums add exactly."""
    big: Dict[int, int] = {}
    wit: Dict[int, set] = {}
    big[probe.plus] = big.get(probe.plus, 0) + 1
    big[probe.minus] = big.get(probe.minus, 0) - 1
    for w, t in enumerate(probe.witnesses):
        wit.setdefault(t, set()).add(w)
    keys = sorted(set(big) | set(wit))
    parts: Dict[int, Any] = {}   # the slices that hold a term (the others add +0)
    starts = _starts(st.slices)
    by_slice: Dict[int, List[int]] = {}
    for t in keys:
        si = bisect.bisect_right(starts, t) - 1
        while si >= 0 and st.slices[si][0] == st.slices[si][1]:
            si -= 1
        if si >= 0 and t < st.slices[si][1]:
            by_slice.setdefault(si, []).append(t)
    for si, ks in by_slice.items():
        a = st.slices[si][0]
        acc: Any = frozenset()
        main: Any = frozenset()
        group = None
        for t in ks:
            if st.promote:
                g = (t - a) // st.promote
                if group is not None and g != group:
                    main, acc = _add(main, acc), frozenset()
                group = g
            if t in big or isinstance(acc, int):
                sm = big.get(t, 0) + (acc if isinstance(acc, int) else 0)
                acc = frozenset() if sm == 0 else (1 if sm > 0 else -1)
            else:
                acc = acc | frozenset(wit.get(t, ()))
        parts[si] = _add(main, acc) if st.promote else acc
    if st.reduce == "tree":   # levels of neighbours, as model/kernel.c's reduce_parts
        w = 1
        while w < len(st.slices):
            nxt: Dict[int, Any] = {}
            for si in sorted({x - x % (2 * w) for x in parts}):
                nxt[si] = _add(parts.get(si, frozenset()), parts.get(si + w, frozenset()))
            parts = nxt
            w *= 2
        total = parts.get(0, frozenset())
    else:
        total = frozenset()
        for si in sorted(parts):
            total = _add(total, parts[si])
    return None if isinstance(total, int) else total


_K_OFFSETS = (2, 4, 8, 16, 32, 64, 128)


def instr_k_probe(device: Callable, M: int, N: int, K: int, fmt: str, out_fmt: str,
                  log: Optional[Dict[str, Any]] = None) -> Optional[int]:
    """The K of the instruction the kernel issues, measured: output (0, 0)
    of one call holds +2^e and -2^e at elements 0 and 1 of K and witnesses
    at elements 2, 4, 8, ..., 128.  A witness inside the instruction that
    holds the pair is truncated away by its fused sum; one in a later
    instruction is added after the pair cancelled and survives.  So the
    first surviving offset is the instruction's K (None: no witness
    survived, or no witness fits in K)."""
    offs = [o for o in _K_OFFSETS if o < K]
    if not offs:
        return None
    e_big, e_unit = _PROBE_EXP[fmt]
    ut = _rec._UINT[_rec._FMT[fmt][0]]
    A = np.zeros((M, K), ut)
    Bt = np.zeros((N, K), ut)
    A[0, 0], A[0, 1] = pow2_bits(fmt, e_big), pow2_bits(fmt, e_big, True)
    Bt[0, 0] = Bt[0, 1] = pow2_bits(fmt, e_big)
    for w, o in enumerate(offs):
        A[0, o] = pow2_bits(fmt, e_unit + w)
        Bt[0, o] = pow2_bits(fmt, e_unit)
    t0 = time.perf_counter()
    D = np.asarray(device(A, Bt))
    if log is not None:
        log["calls"] = log.get("calls", 0) + 1
        log["device_s"] = log.get("device_s", 0.0) + time.perf_counter() - t0
    got = decode(int(D[0, 0]), fmt, out_fmt)
    if not got:
        return None
    return offs[min(got)]


def row_with_k(row: str, k: int) -> Optional[str]:
    """A row of ``row``'s architecture with its A, B and f32 accumulator and
    K = k (wgmma first, then mma), or None."""
    rows = _k._core.rows()
    me = next(r for r in rows if r["name"] == row)
    fits = [r for r in rows if r["arch"] == me["arch"] and r["a"] == me["a"] and r["b"] == me["b"]
            and r["c"] == "f32" and r["d"] == "f32" and int(r["k"]) == k and not r["n_scales"]
            and ".sp" not in r["qualifier"]]
    fits.sort(key=lambda r: (not r["qualifier"].startswith("wgmma"), r["name"]))
    return fits[0]["name"] if fits else None


# ------------------------------------------------------------ candidates

def _bks(ik: int, K: int) -> List[int]:
    return sorted({bk for bk in (ik, 32, 64, 128, 256) if bk % ik == 0 and (bk == ik or bk < 2 * K)})


def _simplicity(p: Dict[str, Any]) -> Tuple:
    """Order of preference among models: fewer slices, serial, ceil, a K
    step nearer 64 to 128, less promotion."""
    bk = p["bk"]
    return (p["split"], p["reduce"] == "tree", p["split_rule"] == "balanced", 0 if 64 <= bk <= 128 else 1,
            -bk if bk > 128 else bk, p["promote"])


def candidate_params(K: int, ik: int, fmt: str, max_split: int = 256,
                     promotes: Optional[Sequence[int]] = None) -> Dict[Struct, List[Dict[str, Any]]]:
    """Every kernel model of the family, grouped by the structure it
    implies: K steps (the instruction's K, 32, 64, 128, 256), split counts
    1 to min(256, iterations), both slice rules, both reductions, and the
    promotion intervals (0, 1, 2, 4, 8, 16 for fp8 inputs; 0 otherwise)."""
    if promotes is None:
        promotes = (0, 1, 2, 4, 8, 16) if fmt in ("e4m3", "e5m2") else (0,)
    out: Dict[Struct, List[Dict[str, Any]]] = {}
    for bk in _bks(ik, K):
        iters = -(-K // bk)
        for s in range(1, min(max_split, iters) + 1):
            for rule in ("ceil", "balanced"):
                if s == 1 and rule == "balanced":
                    continue
                sl = slices_of(K, ik, bk, s, rule)
                for pr in promotes:
                    for red in ("serial", "tree"):
                        if s <= 3 and red == "tree":   # up to three slices: the same sum
                            continue
                        st = Struct(sl, pr, red)
                        out.setdefault(st, []).append({"bk": bk, "split": s, "split_rule": rule, "reduce": red,
                                                       "promote": pr})
    return out


def restart_probes(K: int, ik: int) -> List[Probe]:
    """For every instruction b > 0 (that holds two elements of K): the pair
    in b, a witness in b - 1."""
    T = -(-K // ik)
    return [Probe(b, b, (b - 1,)) for b in range(1, T) if K - b * ik >= 2]


def _pool(restarts: Sequence[int], T: int, limit: int = 400) -> List[Probe]:
    """Probes that tell apart structures with the same restarts: the pair at
    two restarts (neighbours, second neighbours, the first and each, each and
    the last), witnesses around them and at both ends of K."""
    R = sorted(restarts)
    pairs = set()
    for i, r in enumerate(R):
        for d in (1, 2, 3):
            if i + d < len(R):
                pairs.add((r, R[i + d]))
        if r:
            pairs.add((R[0], r))
            pairs.add((r, T - 1))
        if r + 1 < T:
            pairs.add((r, r + 1))
    pairs_l = sorted(pairs)
    if len(pairs_l) > limit:
        step = len(pairs_l) / limit
        pairs_l = [pairs_l[int(i * step)] for i in range(limit)]
    out = []
    for u, v in pairs_l:
        ws = []
        for t in (u - 1, v + 1, 0, T - 1, (u + v) // 2, v - 1, u + 1, (v + T) // 2, u // 2):
            if 0 <= t < T and t not in (u, v) and t not in ws:
                ws.append(t)
        out.append(Probe(u, v, tuple(ws[:BITS])))
    return out


def _distinguishing(structs: Sequence[Struct], pool: Sequence[Probe]) -> List[Probe]:
    """Probes of the pool, greedily, until no further one splits a class of
    structures that predict alike on those chosen."""
    groups = [list(range(len(structs)))]
    chosen = []
    for p in pool:
        if all(len(g) == 1 for g in groups):
            break
        new = []
        split = False
        for g in groups:
            by: Dict[Any, List[int]] = {}
            for s in g:
                by.setdefault(predict(structs[s], p), []).append(s)
            new.extend(by.values())
            split = split or len(by) > 1
        if split:
            chosen.append(p)
            groups = new
    return chosen


def _model_text(row: str, out_fmt: str, p: Dict[str, Any]) -> str:
    return _k.format_model({"instr": row, "bk": p["bk"], "split": p["split"], "split_rule": p["split_rule"],
                            "reduce": p["reduce"], "promote": p["promote"], "out": out_fmt})


# --------------------------------------------------------------- devices

def model_device(model: str) -> Callable:
    """A simulated device: the C kernel model under ``model`` (whose
    parameters the discovery is not told)."""
    def dev(A: np.ndarray, Bt: np.ndarray) -> np.ndarray:
        return _k.evaluate(model, A, Bt)
    dev.info = {"gpu": "simulated", "software": "mmafuzz kernel model", "kernels": []}   # type: ignore[attr-defined]
    return dev


def torch_device(op: str, a_format: str, d_format: str, flags: Optional[Dict[str, Any]] = None,
                 device: str = "cuda") -> Callable:
    """The GPU call ``op`` (torch.matmul, torch.nn.functional.linear,
    torch._scaled_mm with scales 1) on bit patterns: A (M x K), Bt (N x K)
    to D (M x N).  ``info`` names the GPU, the software and, after the first
    call, the kernels PyTorch's profiler saw."""
    import torch
    op = _k._op_name(op)
    flags = dict(flags or {})
    tdt = getattr(torch, _rec._TORCH_DTYPE[a_format])
    odt = getattr(torch, _rec._TORCH_DTYPE[d_format])
    ow = _rec._FMT[d_format][0]
    bkm = torch.backends.cuda.matmul

    def to_t(x: np.ndarray) -> Any:
        v = np.ascontiguousarray(x).view({1: np.uint8, 2: np.int16, 4: np.int32}[x.dtype.itemsize])
        return torch.from_numpy(v).to(device).view(tdt)

    def call(tA: Any, tBt: Any) -> Any:
        if op == "torch.matmul":
            return torch.matmul(tA, tBt)   # B as users hold it: K x N, row-major
        if op == "torch.nn.functional.linear":
            return torch.nn.functional.linear(tA, tBt)
        if op == "torch._scaled_mm":
            one = torch.ones((), device=device, dtype=torch.float32)
            return torch._scaled_mm(tA, tBt.t(), scale_a=one, scale_b=one, out_dtype=odt,
                                    use_fast_accum=bool(flags.get("use_fast_accum", False)))
        raise ValueError(f"unknown op {op!r}")

    def dev(A: np.ndarray, Bt: np.ndarray) -> np.ndarray:
        saved = (bkm.allow_tf32, bkm.allow_fp16_reduced_precision_reduction, bkm.allow_bf16_reduced_precision_reduction)
        try:
            bkm.allow_tf32 = bool(flags.get("allow_tf32", a_format == "tf32"))
            bkm.allow_fp16_reduced_precision_reduction = bool(flags.get("allow_fp16_reduced_precision_reduction", saved[1]))
            bkm.allow_bf16_reduced_precision_reduction = bool(flags.get("allow_bf16_reduced_precision_reduction", saved[2]))
            tA = to_t(A)
            tBt = to_t(np.ascontiguousarray(Bt.T)) if op == "torch.matmul" else to_t(Bt)
            if not dev.info["kernels"]:
                from torch.profiler import profile, ProfilerActivity
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    D = call(tA, tBt)
                    torch.cuda.synchronize()
                dev.info["kernels"] = sorted({e.name for e in prof.events()
                                              if e.device_type == torch.autograd.DeviceType.CUDA})
            else:
                D = call(tA, tBt)
            torch.cuda.synchronize()
        finally:
            bkm.allow_tf32, bkm.allow_fp16_reduced_precision_reduction, bkm.allow_bf16_reduced_precision_reduction = saved
        return D.contiguous().view({1: torch.uint8, 2: torch.int16, 4: torch.int32}[ow]).cpu().numpy().view(
            _rec._UINT[ow])

    env = _rec._env()
    f = {k: v for k, v in flags.items()}
    if op != "torch._scaled_mm":
        f.setdefault("allow_tf32", a_format == "tf32")
        f.setdefault("allow_fp16_reduced_precision_reduction", bool(bkm.allow_fp16_reduced_precision_reduction))
        f.setdefault("allow_bf16_reduced_precision_reduction", bool(bkm.allow_bf16_reduced_precision_reduction))
    else:
        f.setdefault("use_fast_accum", False)
    dev.info = {"gpu": env.get("gpu", "?"), "kernels": [], "env": env, "flags": f,   # type: ignore[attr-defined]
                "software": f"torch {env.get('torch')} cuda {env.get('cuda')}"   # cuBLAS comes with them
                            + (f" driver {env['driver']}" if env.get("driver") else "")}
    return dev


# ------------------------------------------------------------- operands

def random_operands(fmt: str, M: int, N: int, K: int, seed: int) -> Tuple[np.ndarray, np.ndarray]:
    """A (M x K) and Bt (N x K) from the recording format's generator."""
    A = _rec.generate(fmt, 2 * seed, M, K, K)
    Bt = np.ascontiguousarray(_rec.generate(fmt, 2 * seed + 1, K, N, K, transpose=True).T)
    return A, Bt


def boundary_operands(fmt: str, M: int, N: int, K: int, seed: int) -> Tuple[np.ndarray, np.ndarray]:
    """Random operands with boundary cases: the first half of the rows of A
    negate their first half of K in the second half and the first half of
    the columns of B repeat theirs, so that those outputs cancel exactly in
    exact arithmetic and keep only what the order of rounding left; and in
    a few rows and columns, signed zeros, the smallest subnormal, the
    largest finite value and an infinity."""
    A, Bt = random_operands(fmt, M, N, K, seed)
    A, Bt = A.copy(), Bt.copy()
    width, bias, ebits, fbits = _rec._FMT[fmt]
    sign = 1 << (ebits + fbits)
    h = K // 2
    if h:
        A[: max(1, M // 2), h: 2 * h] = A[: max(1, M // 2), :h] ^ A.dtype.type(sign)
        Bt[: max(1, N // 2), h: 2 * h] = Bt[: max(1, N // 2), :h]
    rng = np.random.default_rng(seed)
    maxfin = {"e4m3": 0x7E, "e5m2": 0x7B}.get(fmt, (((1 << ebits) - 2) << fbits) | ((1 << fbits) - 1))
    inf = {"e4m3": None}.get(fmt, ((1 << ebits) - 1) << fbits)
    tiny = 1
    if fmt == "tf32":   # the instruction reads the high 19 bits of an f32
        maxfin &= 0xFFFFE000
        tiny = 0x2000
    specials = [0, sign, tiny, tiny | sign, maxfin, maxfin | sign] + ([inf] if inf is not None else [])
    for r in range(min(M, 3)):
        i = M - 1 - r
        ks = rng.choice(K, size=min(K, 4), replace=False)
        for k in ks:
            A[i, k] = specials[int(rng.integers(len(specials)))]
    for c in range(min(N, 3)):
        j = N - 1 - c
        ks = rng.choice(K, size=min(K, 4), replace=False)
        for k in ks:
            Bt[j, k] = specials[int(rng.integers(len(specials)))]
    return A, Bt


def _sample(n: int, most: int) -> np.ndarray:
    if n <= most:
        return np.arange(n)
    return np.unique(np.r_[np.arange(most // 2), np.arange(n - most // 2, n)])


def _is_nan(bits: np.ndarray, fmt: str) -> np.ndarray:
    return np.isnan(bits_to_float(bits, fmt))


def check_calls(model: str, calls: Sequence[Tuple[np.ndarray, np.ndarray, np.ndarray]], out_fmt: str,
                most: int = 32) -> Dict[str, Any]:
    """The model against calls (A, Bt, D): every output of up to ``most``
    rows by ``most`` columns of each (the first and last halves).  A NaN
    counts as reproduced when both are NaN (their payloads are counted
    apart, in ``nan``)."""
    outputs = equal = nan = 0
    first = None
    for n, (A, Bt, D) in enumerate(calls):
        rows, cols = _sample(A.shape[0], most), _sample(Bt.shape[0], most)
        got = _k.evaluate(model, A[rows], Bt[cols])
        want = np.asarray(D)[np.ix_(rows, cols)].astype(got.dtype)
        eq = got == want
        both_nan = _is_nan(got, out_fmt) & _is_nan(want, out_fmt)
        nan += int((both_nan & ~eq).sum())
        eq |= both_nan
        outputs += eq.size
        equal += int(eq.sum())
        if first is None and not eq.all():
            i, j = np.argwhere(~eq)[0]
            first = {"call": n, "row": int(rows[i]), "col": int(cols[j]), "got": int(got[i, j]),
                     "expected": int(want[i, j])}
    return {"outputs": outputs, "equal": equal, "calls": len(calls), "nan_payloads": nan, "first_diff": first}


# -------------------------------------------------------------- discover

def _instr_k(row: str) -> int:
    for r in _k._core.rows():
        if r["name"] == row:
            return int(r["k"])
    raise ValueError(f"no row {row}")


def _recording(A: np.ndarray, Bt: np.ndarray, D: np.ndarray, a_format: str, d_format: str, kernels: List[str],
               most: int) -> Tuple[Dict[str, Any], Dict[str, np.ndarray]]:
    M, K = A.shape
    N = Bt.shape[0]
    rows, cols = _sample(M, most), _sample(N, most)
    h = {"op": "probe", "m": M, "n": N, "k": K, "a_format": a_format, "b_format": a_format, "d_format": d_format,
         "kernels": kernels, "flags": {}}
    arr = {"a": A, "b": Bt.T, "d": np.asarray(D)[np.ix_(rows, cols)], "d_rows": rows, "d_cols": cols}
    return h, arr


def discover(device: Callable, M: int, N: int, K: int, a_format: str, d_format: Optional[str] = None, *,
             row: Optional[str] = None, seed: int = 1, most: int = 32, max_split: int = 256,
             promotes: Optional[Sequence[int]] = None, threads: int = 0) -> Dict[str, Any]:
    """Discover the kernel model of ``device`` (``device(A, Bt) -> D`` on bit
    patterns) at M x N x K with constructed inputs, confirm it with ``fit``
    and check it on fresh calls.  Returns a dict: ``model`` (text, or None),
    ``models`` (every candidate the calls cannot tell apart), ``structure``
    (slices in elements of K, promotion, reduction), ``restarts``,
    ``reproduced`` / ``outputs`` / ``calls`` (the check), ``device_calls``
    and ``device_s`` (time inside the device), ``summary`` (one line)."""
    d_format = d_format or ("f32" if a_format in ("tf32", "f32", "e4m3", "e5m2") else a_format)
    row = row or _k.main_loop_row(a_format)
    ik = _instr_k(row)
    log: Dict[str, Any] = {}
    t_start = time.perf_counter()

    # 0. the instruction's K: where the fused sum ends
    k_seen = instr_k_probe(device, M, N, K, a_format, d_format, log)
    row_note = None
    if k_seen is not None and k_seen != ik and not (K <= k_seen and K <= ik):
        other = row_with_k(row, k_seen)
        row_note = f"the probe saw an instruction K of {k_seen}, {row} has {ik}" + \
            (f": {other} used instead" if other else ": no such row, kept")
        if other:
            row, ik = other, k_seen
    T = -(-K // ik)
    kernels = list(getattr(device, "info", {}).get("kernels", []))

    # 1. where accumulators restart from zero
    rp = restart_probes(K, ik)
    out = run_probes(device, rp, M, N, K, ik, a_format, d_format, log)
    odd = [p.plus for p, o in zip(rp, out) if o is None]
    restarts = frozenset([0] + [p.plus for p, o in zip(rp, out) if o == frozenset({0})])
    tested = frozenset([0] + [p.plus for p in rp])

    # 2. the family's models that restart there
    cands = candidate_params(K, ik, a_format, max_split, promotes)
    structs = [st for st in cands if _restart_count(st) - len(restarts) in (0, 1)
               and st.restarts() & tested == restarts]
    n_restart = len(structs)

    # 3. probes that tell the rest apart
    # rounds: probes that split a sample of the candidates, run, and every
    # candidate that predicted otherwise dropped; the last round's sample is
    # all that are left
    chosen: List[Probe] = []
    pool = _pool(sorted(restarts), T) if len(structs) > 1 else []
    for _ in range(8):
        if len(structs) <= 1:
            break
        step = max(1, len(structs) // 48)
        sample = structs[::step]
        new = _distinguishing(sample, pool)
        if not new and len(sample) < len(structs):
            new = _distinguishing(structs, pool)
        if not new:
            break
        got = run_probes(device, new, M, N, K, ik, a_format, d_format, log)
        odd += [p.plus for p, o in zip(new, got) if o is None]
        structs = [st for st in structs if all(predict(st, p) == o for p, o in zip(new, got))]
        chosen += new
    # one model a structure (its models compute alike), the simplest first
    for st in structs:
        cands[st].sort(key=_simplicity)
    structs.sort(key=lambda st: _simplicity(cands[st][0]))
    text_of = {_model_text(row, d_format, cands[st][0]): st for st in structs}
    texts = list(text_of)

    # 4. fit on a call with random operands
    kernels = list(getattr(device, "info", {}).get("kernels", kernels))
    t0 = time.perf_counter()
    A, Bt = random_operands(a_format, M, N, K, seed)
    D = np.asarray(device(A, Bt))
    log["calls"] = log.get("calls", 0) + 1
    log["device_s"] = log.get("device_s", 0.0) + time.perf_counter() - t0
    rec = _recording(A, Bt, D, a_format, d_format, kernels, most)
    fitted = _k.fit(rec, texts, threads=threads) if texts else {"models": [], "tried": 0}
    from_probes = bool(fitted["models"])
    if not from_probes:   # the probes' structure is outside the family, or wrong: search the family
        fitted = _k.fit(rec, threads=threads)
    model = fitted["models"][0] if fitted["models"] else None
    models = []   # every model of the structures fitted (a structure's models compute alike)
    for m in fitted["models"]:
        models += [_model_text(row, d_format, p) for p in cands[text_of[m]]] if m in text_of else [m]
    st = text_of.get(model) if model else None

    # 5. check on fresh calls: random and boundary operands, and the probe calls
    calls = [(A, Bt, D)]
    for mk, sd in ((random_operands, seed + 1), (boundary_operands, seed + 2)):
        t0 = time.perf_counter()
        A2, B2 = mk(a_format, M, N, K, sd)
        D2 = np.asarray(device(A2, B2))
        log["calls"] += 1
        log["device_s"] += time.perf_counter() - t0
        calls.append((A2, B2, D2))
    probe_calls = [(A_, B_, D_) for A_, B_, D_, _ in log.get("probe_calls", [])]
    chk = check_calls(model, calls, d_format, most) if model else {"outputs": 0, "equal": 0, "calls": 0}
    chk_p = check_calls(model, probe_calls, d_format, most) if model and probe_calls else \
        {"outputs": 0, "equal": 0, "calls": 0}
    reproduced = chk["equal"] + chk_p["equal"]
    outputs = chk["outputs"] + chk_p["outputs"]
    ncalls = chk["calls"] + chk_p["calls"]
    res = {
        "m": M, "n": N, "k": K, "a_format": a_format, "d_format": d_format, "instr": row,
        "instr_k_seen": k_seen, "instr_note": row_note,
        "model": model, "models": models, "from_probes": from_probes,
        "restarts": [t * ik for t in sorted(restarts)], "odd_probes": [t * ik for t in odd[:32]], "odd_count": len(odd),
        "candidates_after_restarts": n_restart, "candidates_after_probes": len(structs),
        "fit_tried": fitted.get("tried", 0),
        "structure": ({"slices": [[a * ik, min(b * ik, K)] for a, b in st.slices], "promote": st.promote,
                       "reduce": st.reduce} if st else None),
        "probes": len(rp) + len(chosen), "device_calls": log.get("calls", 0), "device_s": log.get("device_s", 0.0),
        "reproduced": reproduced, "outputs": outputs, "calls": ncalls,
        "check": chk, "check_probes": chk_p, "kernels": kernels, "wall_s": time.perf_counter() - t_start,
    }
    res["summary"] = (f"reproduced {reproduced} of {outputs} outputs on {ncalls} calls" if model
                      else "no kernel model of the family reproduces the call")
    return res


# ----------------------------------------------------------------- cache

def _cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "mmafuzz")


def cached(device: Callable, op: str, M: int, N: int, K: int, a_format: str, d_format: Optional[str] = None,
           table: Optional[str] = None, force: bool = False, **kw: Any) -> Dict[str, Any]:
    """``discover`` once per (GPU, software, op, formats, flags, shape): a
    model found before is read from the user's kernel table
    (``$XDG_CACHE_HOME/mmafuzz/kernels.tsv``, else ``~/.cache/...``; the table
    ``mmafuzz.reproduce`` reads), a new one is added to it when it
    reproduced every output checked."""
    import csv
    d_format = d_format or ("f32" if a_format in ("tf32", "f32", "e4m3", "e5m2") else a_format)
    info = getattr(device, "info", {})
    path = table or os.path.join(_cache_dir(), "kernels.tsv")
    gpu, sw = info.get("gpu", "?"), info.get("software", "?")
    opn = _k._op_name(op)
    flags = _k._flags_text(info.get("flags", {}))
    key = [gpu, sw, opn, a_format, d_format, flags, str(M), str(N), str(K)]
    if not force and os.path.exists(path):
        for r in _k.table([path]):
            if [r[c] for c in _k._TABLE_COLUMNS[:9]] == key:
                return {"cached": True, "model": _k._model_text(r), "summary":
                        f"cached: reproduced {r['reproduced']} of {r['outputs']} outputs", "table": path}
    res = discover(device, M, N, K, a_format, d_format, **kw)
    res["cached"] = False
    if res["model"] and res["reproduced"] == res["outputs"] and res["outputs"]:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        new = not os.path.exists(path)
        with open(path, "a", newline="") as f:
            w = csv.writer(f, delimiter="\t", lineterminator="\n")
            if new:
                w.writerow(_k._TABLE_COLUMNS)
            ev = _k.nvjet_tile(res["kernels"])
            w.writerow(key + [res["reproduced"], res["outputs"], res["model"].strip().replace("\n", "; "),
                              ((ev["kernel"] if ev else ";".join(res["kernels"])) or "discovered")[:120]])
        res["table"] = path
    return res


def discover_call(op: Any, M: int, N: int, K: int, a_format: str, d_format: Optional[str] = None,
                  flags: Optional[Dict[str, Any]] = None, force: bool = False, **kw: Any) -> Dict[str, Any]:
    """On a GPU: discover the kernel model of ``op`` (torch.matmul,
    torch.nn.functional.linear, torch._scaled_mm) at M x N x K, once:
    ``cached(torch_device(...), ...)``."""
    d_format = d_format or ("f32" if a_format in ("tf32", "f32", "e4m3", "e5m2") else a_format)
    return cached(torch_device(op, a_format, d_format, flags), op, M, N, K, a_format, d_format, force=force, **kw)


def describe(r: Dict[str, Any]) -> str:
    """A discovery's result as text: the model, the structure, the summary."""
    lines = []
    if r.get("model"):
        lines.append(r["model"].rstrip("\n"))
    st = r.get("structure")
    if st:
        sl = ", ".join(f"[{a}, {b})" for a, b in st["slices"] if a < b)
        pr = f"promotion every {st['promote']} instructions" if st['promote'] else "no promotion"
        lines.append(f"# K slices {sl}; {pr}; {st['reduce']} reduction")
    if r.get("instr_k_seen"):
        lines.append(f"# instruction K seen: {r['instr_k_seen']} ({r['instr']})" +
                     (f"; {r['instr_note']}" if r.get("instr_note") else ""))
    if "restarts" in r and "probes" in r:
        lines.append(f"# {r['probes']} probes; accumulators restart at K = {r['restarts'][:12]}"
                     f"{' ...' if len(r['restarts']) > 12 else ''}; {r.get('device_calls')} calls,"
                     f" {r.get('device_s', 0):.3f} s in them")
    lines.append(r.get("summary", ""))
    return "\n".join(lines)
