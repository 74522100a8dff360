"""Whole GEMM calls: the kernel model (docs/kernels.md), its evaluation on
the CPU, the check of a recording against it, and the fit of its parameters.

A kernel model is text, one ``key value`` line a field::

    instr hopper/wgmma.m64n8k16.f32.f16.f16.f32
    bk 64
    split 4
    split_rule ceil
    reduce serial
    promote 0
    out f16

and the C model evaluates it (mmafuzz_kernel.h); Python only selects rows
and columns and lays arrays out.
"""
from __future__ import annotations

import itertools
import re
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from . import _core
from . import recording as _rec

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_WIDTH = {"f32": 4, "tf32": 4, "f16": 2, "bf16": 2, "e4m3": 1, "e5m2": 1}


def canonical(text: str) -> str:
    """The canonical text of a kernel model (every key, in order); raises
    ValueError naming the line for a malformed one."""
    return _core.kernel_parse(text)


def parse(text: str) -> Dict[str, str]:
    """The fields of a kernel model as a dict of strings."""
    return dict(line.split(None, 1) for line in canonical(text).splitlines())


def format_model(fields: Dict[str, Any]) -> str:
    """Kernel model text from a dict of fields (validated)."""
    return canonical("".join(f"{k} {v}\n" for k, v in fields.items()))


def evaluate(model: str, A: np.ndarray, Bt: np.ndarray, rows: Optional[Sequence[int]] = None,
             cols: Optional[Sequence[int]] = None, threads: int = 0) -> np.ndarray:
    """Outputs of a GEMM call D = A @ B under ``model``, as bit patterns.
    ``A``: M x K bits, ``Bt``: N x K bits (B transposed: B's columns as rows);
    ``rows``, ``cols``: the outputs wanted (default all)."""
    f = parse(model)
    A = np.asarray(A)
    Bt = np.asarray(Bt)
    if rows is not None:
        A = A[np.asarray(rows)]
    if cols is not None:
        Bt = Bt[np.asarray(cols)]
    if A.ndim != 2 or Bt.ndim != 2 or A.shape[1] != Bt.shape[1]:
        raise ValueError(f"A {A.shape} and Bt {Bt.shape} must be M x K and N x K")
    A = np.ascontiguousarray(A)
    Bt = np.ascontiguousarray(Bt)
    D = np.empty((A.shape[0], Bt.shape[0]), _UINT[_WIDTH[f["out"]]])
    _core.kernel_eval(model, A.shape[1], A.shape[0], Bt.shape[0], A, Bt, D, threads)
    return D


def recording_operands(header: Dict[str, Any], arrays: Dict[str, np.ndarray], rows: Any = None,
                       cols: Any = None) -> Tuple[np.ndarray, np.ndarray]:
    """A (rows of M x K) and Bt (columns of B as rows: N x K) of a recording."""
    A, B = _rec.operands(header, arrays, rows, cols)
    return A, np.ascontiguousarray(B.T)


def check_recording(path_or_rec: Any, model: str, threads: int = 0, limit: Optional[int] = None) -> Dict[str, Any]:
    """Compare a recording's outputs with ``model``'s: a dict with ``outputs``,
    ``equal`` and the first differing (row, col, got, expected).  ``limit``:
    check only about that many outputs (evenly spaced rows, every column)."""
    h, arr = _rec.load(path_or_rec) if isinstance(path_or_rec, str) else path_or_rec
    rows = np.asarray(arr.get("d_rows", np.arange(h["m"])))
    cols = np.asarray(arr.get("d_cols", np.arange(h["n"])))
    d = arr["d"]
    if limit is not None and len(rows) * len(cols) > limit:
        take = max(1, limit // len(cols))
        pick = np.arange(0, len(rows), max(1, len(rows) // take))[:take]
        rows, d = rows[pick], d[pick]
    key = ("_ops", rows.tobytes(), cols.tobytes())
    if key not in arr:   # the operands, generated once per recording and selection
        arr[key] = recording_operands(h, arr, rows, cols)
    A, Bt = arr[key]
    got = evaluate(model, A, Bt, None, None, threads)
    eq = got == d.astype(got.dtype)
    bad = np.argwhere(~eq)
    first = None
    if len(bad):
        i, j = bad[0]
        first = (int(rows[i]), int(cols[j]), int(got[i, j]), int(d[i, j]))
    return {"outputs": int(eq.size), "equal": int(eq.sum()), "first_diff": first}


# ------------------------------------------------------------------ fit

_INSTR = {  # the main loop's row for an input format on Hopper (wgmma: N does not change a bit)
    "f16": "hopper/wgmma.m64n8k16.f32.f16.f16",
    "bf16": "hopper/wgmma.m64n8k16.f32.bf16.bf16",
    "tf32": "hopper/wgmma.m64n8k8.f32.tf32.tf32",
    "e4m3": "hopper/wgmma.m64n8k32.f32.e4m3.e4m3",
    "e5m2": "hopper/wgmma.m64n8k32.f32.e5m2.e5m2",
}


def nvjet_tile(kernels: Iterable[str]) -> Optional[Dict[str, Any]]:
    """Tile and split-K evidence from a cuBLAS nvjet kernel name
    (``nvjet_sm90_hsh_64x32_64x16_1x2_h_bz_splitK_NNT``: tile M x N, then
    K a stage x stages)."""
    for k in kernels:
        m = re.match(r"nvjet_sm90_[a-z]+_(\d+)x(\d+)_(\d+)x(\d+)_", k)
        if m:
            return {"tile_m": int(m[1]), "tile_n": int(m[2]), "bk": int(m[3]), "stages": int(m[4]),
                    "split_k": "splitK" in k, "kernel": k}
    return None


def candidates(h: Dict[str, Any], splits: Sequence[int] = tuple(range(1, 33)),
               promotes: Sequence[int] = (0,)) -> List[str]:
    """Kernel models to try for a recording, the most likely first."""
    fmt = h["a_format"]
    row = next((r["name"] for r in _core.rows() if r["name"].startswith(_INSTR.get(fmt, "?"))), None)
    if row is None:
        raise ValueError(f"no main-loop instruction known for {fmt}")
    ev = nvjet_tile(h.get("kernels", []))
    bks = [ev["bk"]] if ev else [64, 128, 32]
    split_list = list(splits) if (ev is None or ev["split_k"]) else [1]
    out = []
    for bk, s, rule, red, pr in itertools.product(bks, split_list, ("ceil", "balanced"), ("serial", "tree"), promotes):
        if s == 1 and (rule, red) != ("ceil", "serial"):
            continue
        out.append(format_model({"instr": row, "bk": bk, "split": s, "split_rule": rule, "reduce": red,
                                 "promote": pr, "out": h["d_format"]}))
    return out


def fit(path_or_rec: Any, cands: Optional[List[str]] = None, screen: int = 64, threads: int = 0,
        first_split: bool = True) -> Dict[str, Any]:
    """Find the kernel models that reproduce a recording: each candidate is
    screened on ``screen`` outputs, the survivors checked on all.  With
    ``first_split``, the search stops after the first split count that has a
    model reproducing every output (its other rules and reductions are still
    tried, so that models the recording cannot tell apart are all named).
    Returns ``{"models": [texts reproducing every output], "tried": n,
    "best": (equal, outputs, text)}``."""
    rec = _rec.load(path_or_rec) if isinstance(path_or_rec, str) else path_or_rec
    h, arr = rec
    arr = dict(arr)
    rec = (h, arr)
    cands = cands if cands is not None else candidates(h, promotes=(0, 1, 2, 4, 8, 16) if h["a_format"] in ("e4m3", "e5m2") else (0,))
    best = (-1, 0, None)
    found: List[str] = []
    tried = 0
    for c in cands:
        if first_split and found and parse(c)["split"] != parse(found[0])["split"]:
            break
        tried += 1
        r = check_recording(rec, c, threads, limit=screen)
        if r["equal"] != r["outputs"]:
            if r["equal"] > best[0]:
                best = (r["equal"], r["outputs"], c)
            continue
        r = check_recording(rec, c, threads)
        if r["equal"] == r["outputs"]:
            found.append(c)
        if r["equal"] > best[0]:
            best = (r["equal"], r["outputs"], c)
    return {"models": found, "tried": tried, "best": best}
