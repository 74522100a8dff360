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

def main_loop_row(fmt: str, arch: str = "hopper") -> str:
    """The row a GEMM's main loop issues for input format ``fmt`` on ``arch``:
    the table's dense wgmma row of the narrowest N (N does not change a bit)
    with A = B = fmt and an f32 accumulator, read from the instruction table."""
    for r in _core.rows():
        if (r["arch"] == arch and r["qualifier"].startswith("wgmma.m64n8k") and ".sp." not in r["qualifier"]
                and r["a"] == fmt and r["b"] == fmt and r["c"] == "f32" and r["d"] == "f32" and not r["n_scales"]):
            return r["name"]
    raise ValueError(f"no {arch} wgmma row with {fmt} inputs and an f32 accumulator")


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


def candidates(h: Dict[str, Any], splits: Optional[Sequence[int]] = None,
               promotes: Sequence[int] = (0,)) -> List[str]:
    """Kernel models to try for a recording, the most likely first: the
    main-loop row of the input format, the K step of the kernel's name (else
    64, 128, 32), split counts from 1 up to the number of K steps (at most
    128; 1 alone when the kernel's name says it does not split K), both slice
    rules and both reduction orders, and the promotion intervals given."""
    row = main_loop_row(h["a_format"])
    ev = nvjet_tile(h.get("kernels", []))
    bks = [ev["bk"]] if ev else [64, 128, 32]
    if splits is None:
        splits = range(1, min(128, max(1, -(-h["k"] // min(bks)))) + 1)
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


# ---------------------------------------------------------- reproduction

_TABLE_COLUMNS = ("gpu", "software", "op", "a_format", "d_format", "flags", "m", "n", "k", "reproduced", "outputs",
                  "model", "kernel")
_SHIPPED = __import__("os").path.join(__import__("os").path.dirname(__file__), "data", "kernels.tsv")
_OPS = {"matmul": "torch.matmul", "linear": "torch.nn.functional.linear", "_scaled_mm": "torch._scaled_mm"}
_TORCH_FMT = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2"}


def _user_table() -> str:
    import os
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "mmafuzz", "kernels.tsv")


def table(paths: Optional[Sequence[str]] = None) -> List[Dict[str, str]]:
    """The kernel table: rows of (GPU, software, op, formats, flags, shape)
    with the kernel model that reproduced every output recorded for them.
    Default: the table shipped with the package, then the user's cache of
    discoveries (``~/.cache/mmafuzz/kernels.tsv``)."""
    import csv
    import os
    out: List[Dict[str, str]] = []
    for p in (paths if paths is not None else (_SHIPPED, _user_table())):
        if not os.path.exists(p):
            continue
        with open(p, newline="") as f:
            for i, r in enumerate(csv.reader(f, delimiter="\t"), 1):
                if i == 1 and r and r[0] == "gpu":
                    continue
                if len(r) != len(_TABLE_COLUMNS):
                    raise ValueError(f"{p}:{i}: expected {len(_TABLE_COLUMNS)} tab-separated fields, got {len(r)}")
                out.append(dict(zip(_TABLE_COLUMNS, r)))
    return out


def _model_text(row: Dict[str, str]) -> str:
    return canonical("".join(part.strip() + "\n" for part in row["model"].split(";") if part.strip()))


def _op_name(op: Any) -> str:
    if isinstance(op, str):
        return _OPS.get(op, op)
    name = getattr(op, "__name__", "")
    mod = getattr(op, "__module__", "") or ""
    if name == "linear":
        return "torch.nn.functional.linear"
    return _OPS.get(name, f"{mod}.{name}")


def _torch_flags(op: str, fmt: str, use_fast_accum: bool = False) -> Dict[str, Any]:
    import torch
    bk = torch.backends.cuda.matmul
    if op == "torch._scaled_mm":
        return {"use_fast_accum": bool(use_fast_accum)}
    return {"allow_bf16_reduced_precision_reduction": bool(bk.allow_bf16_reduced_precision_reduction),
            "allow_fp16_reduced_precision_reduction": bool(bk.allow_fp16_reduced_precision_reduction),
            "allow_tf32": bool(bk.allow_tf32)}


def _flags_text(flags: Dict[str, Any]) -> str:
    return ",".join(f"{k}={int(v) if isinstance(v, bool) else v}" for k, v in sorted(flags.items())) or "-"


def lookup(op: Any, a_format: str, d_format: str, m: int, n: int, k: int, flags: Optional[Dict[str, Any]] = None,
           gpu: Optional[str] = None, rows: Optional[List[Dict[str, str]]] = None) -> Dict[str, str]:
    """The kernel table's row for a call, or LookupError saying what is known."""
    opn = _op_name(op)
    rows = table() if rows is None else rows
    want = _flags_text(flags) if flags is not None else None
    wanted = set(want.split(",")) if want and want != "-" else set()

    def flags_ok(text: str) -> bool:   # every flag the caller names has the row's value
        return wanted <= set(text.split(","))

    hits = [r for r in rows if r["op"] == opn and r["a_format"] == a_format and r["d_format"] == d_format
            and (int(r["m"]), int(r["n"]), int(r["k"])) == (m, n, k) and flags_ok(r["flags"])
            and (gpu is None or r["gpu"] == gpu)]
    if not hits:
        gpus = sorted({r["gpu"] for r in rows})
        raise LookupError(f"no kernel model for {opn} {a_format}->{d_format} {m}x{n}x{k} flags {want or 'any'} on "
                          f"{gpu or 'any GPU'} (the table knows {len(rows)} calls on {', '.join(gpus) or 'no GPU'}); "
                          f"on that GPU, mmafuzz.kernels.discover(...) records and fits one")
    return hits[-1]


def reproduce(op: Any, A: Any, B: Any, *, gpu: Optional[str] = None, out_dtype: Any = None,
              use_fast_accum: bool = False, threads: int = 0) -> Any:
    """The GPU's bits of a GEMM call, computed on the CPU from the kernel
    model the table holds for it: ``mmafuzz.reproduce(torch.matmul, A, B)``.
    ``op``: torch.matmul, torch.nn.functional.linear (B is the weight,
    N x K) or torch._scaled_mm (scales of 1; ``out_dtype``); A, B: PyTorch
    tensors, on any device.  ``gpu``: the GPU whose arithmetic to reproduce
    (default: this machine's first CUDA GPU, else any the table knows).
    Returns a tensor on A's device, in the output dtype."""
    import torch
    opn = _op_name(op)
    fmt = _TORCH_FMT.get(str(A.dtype).replace("torch.", ""))
    if fmt is None:
        raise ValueError(f"no recorded format for {A.dtype}")
    flags = _torch_flags(opn, fmt, use_fast_accum)
    if fmt == "f32":
        if not flags["allow_tf32"]:
            raise NotImplementedError("f32 GEMMs without TF32 run on the CUDA cores (FFMA), which no kernel model "
                                      "covers yet")
        fmt = "tf32"
    if opn == "torch.nn.functional.linear":
        W = B
        Bt = W
    else:
        Bt = B.t() if B.dim() == 2 else B
    M, K = A.shape[-2:]
    N = Bt.shape[0]
    if opn == "torch._scaled_mm":
        d_fmt = _TORCH_FMT[str(out_dtype or torch.float32).replace("torch.", "")]
    else:
        d_fmt = "f32" if fmt == "tf32" else fmt
    if gpu is None and torch.cuda.is_available():
        gpu = torch.cuda.get_device_name(0)
    row = lookup(opn, fmt, d_fmt, M, N, K, flags, gpu)
    model = _model_text(row)

    def bits(t: Any) -> np.ndarray:
        t = t.detach().contiguous().cpu()
        w = t.element_size()
        v = t.view({1: torch.uint8, 2: torch.int16, 4: torch.int32}[w]).numpy()
        return np.ascontiguousarray(v.view(_UINT[w]))

    D = evaluate(model, bits(A), bits(Bt), threads=threads)
    odt = getattr(torch, {"f16": "float16", "bf16": "bfloat16", "f32": "float32"}[d_fmt])
    sdt = {2: np.int16, 4: np.int32}[D.dtype.itemsize]
    return torch.from_numpy(D.view(sdt)).view(odt).to(A.device)


def discover(op: Any, m: int, n: int, k: int, fmt: str, out_fmt: Optional[str] = None,
             flags: Optional[Dict[str, Any]] = None, seed: int = 1, save_to: Optional[str] = None) -> Dict[str, Any]:
    """On a GPU: record one call of ``op`` at this shape on generated operands
    (PyTorch's profiler names the kernels), fit a kernel model to it and,
    when one reproduces every output, add it to the user's kernel table
    (``save_to``, default ``~/.cache/mmafuzz/kernels.tsv``).  Returns the
    fit's result with the recording's header."""
    import csv
    import os
    h, arr = _rec.record(_op_name(op), m, n, k, fmt, out_fmt, seed=seed, flags=flags, store_operands=False,
                         sample=64 if m * n > 128 * 128 else None)
    r = fit((h, dict(arr)))
    r["header"] = h
    if r["models"]:
        path = save_to or _user_table()
        os.makedirs(os.path.dirname(path), exist_ok=True)
        new = not os.path.exists(path)
        ev = nvjet_tile(h["kernels"])
        with open(path, "a", newline="") as f:
            w = csv.writer(f, delimiter="\t", lineterminator="\n")
            if new:
                w.writerow(_TABLE_COLUMNS)
            env = h["env"]
            w.writerow([env.get("gpu", "?"), f"torch {env.get('torch')} cuda {env.get('cuda')}", h["op"],
                        h["a_format"], h["d_format"], _flags_text(h["flags"]), m, n, k, r["best"][0], r["best"][1],
                        r["models"][0].strip().replace("\n", "; "),
                        (ev["kernel"] if ev else ";".join(h["kernels"]))[:120]])
    return r
