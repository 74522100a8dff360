"""Recordings of whole GEMM calls (docs/recordings.md).

A recording is a NumPy ``.npz`` file: the operands and the output as bit
patterns, and a JSON header (``header``, UTF-8 bytes in a uint8 array) that
names the op, its flags, the shapes and formats, and the software and GPU it
ran on.  This module needs NumPy only (PyTorch for :func:`record`), so that it
can run where the compiled model is not installed: ``record`` on a GPU
machine, ``load`` anywhere.

Operands are either stored (``a``: M x K, ``b``: K x N, both row-major bit
patterns) or described by a generator (header ``inputs``), so that a call of
4096 x 4096 x 65536 is recorded in kilobytes; ``d`` is the whole output, or
the rows ``d_rows`` x columns ``d_cols`` of it.
"""
from __future__ import annotations

import json
import os
import platform
from typing import Any, Dict, Optional, Tuple

import numpy as np

RECORDING_FORMAT = "mmafuzz-recording"
RECORDING_VERSION = 1

# Formats a recording may name: container width in bytes, and the fields the
# generator needs (exponent bias, exponent bits, fraction bits).
_FMT = {
    "f32": (4, 127, 8, 23),
    "tf32": (4, 127, 8, 23),   # stored as f32 bits; the instruction reads the high 19
    "f16": (2, 15, 5, 10),
    "bf16": (2, 127, 8, 7),
    "e4m3": (1, 7, 4, 3),
    "e5m2": (1, 15, 5, 2),
}
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32}
_TORCH_DTYPE = {"f32": "float32", "tf32": "float32", "f16": "float16", "bf16": "bfloat16",
                "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's output function over uint64 counters (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def generate(fmt: str, seed: int, rows: Any, cols: Any, stride: int, transpose: bool = False,
             exp_lo: int = -4, exp_hi: int = 2) -> np.ndarray:
    """The generator ``mmafuzz.splitmix64`` of the recording format: element
    (r, c) of a rows x cols matrix is drawn from counter ``seed*2^32 + r*stride + c``
    (with ``transpose``, counter ``seed*2^32 + c*stride + r``: a matrix generated
    by columns, so that its first N columns do not depend on how many there
    are).  Each draw gives a random sign, an unbiased exponent uniform in
    [exp_lo, exp_hi] and a random fraction: finite normal values whose
    magnitudes spread over 2^(exp_hi-exp_lo+1), so that a change of summation
    order shows in the bits.  ``rows`` and ``cols`` are counts (0..n-1) or
    arrays of indices (those rows or columns alone).  Returns row-major bit
    patterns."""
    width, bias, ebits, fbits = _FMT[fmt]
    r = (np.arange(rows) if np.isscalar(rows) else np.asarray(rows)).astype(np.uint64)[:, None]
    c = (np.arange(cols) if np.isscalar(cols) else np.asarray(cols)).astype(np.uint64)[None, :]
    idx = (c * np.uint64(stride) + r) if transpose else (r * np.uint64(stride) + c)
    z = _splitmix64(idx + np.uint64(seed) * np.uint64(1 << 32))
    span = exp_hi - exp_lo + 1
    e = (((z >> np.uint64(32)) % np.uint64(span)).astype(np.int64) + exp_lo + bias).astype(np.uint64)
    frac = z & np.uint64((1 << fbits) - 1)
    sign = z >> np.uint64(63)
    bits = (sign << np.uint64(ebits + fbits)) | (e << np.uint64(fbits)) | frac
    if fmt == "tf32":
        bits &= np.uint64(0xFFFFE000)
    return bits.astype(_UINT[width])


def _env() -> Dict[str, Any]:
    env: Dict[str, Any] = {"host": platform.node(), "python": platform.python_version(), "numpy": np.__version__}
    try:
        import torch
        env["torch"] = torch.__version__
        env["cuda"] = torch.version.cuda
        if torch.cuda.is_available():
            p = torch.cuda.get_device_properties(0)
            env["gpu"] = p.name
            env["sm"] = f"{p.major}{p.minor}"
            try:
                env["cublas"] = torch._C._cuda_getCompiledVersion() if hasattr(torch._C, "_cuda_getCompiledVersion") else None
            except Exception:
                pass
    except ImportError:
        pass
    try:
        import triton
        env["triton"] = triton.__version__
    except ImportError:
        pass
    try:
        out = os.popen("nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null").read().strip()
        if out:
            env["driver"] = out.splitlines()[0]
    except Exception:
        pass
    return env


def save(path: str, header: Dict[str, Any], arrays: Dict[str, np.ndarray]) -> None:
    """Write a recording: ``header`` (a dict, stored as JSON) and the arrays."""
    h = dict(header)
    h.setdefault("format", RECORDING_FORMAT)
    h.setdefault("version", RECORDING_VERSION)
    payload = {k: np.ascontiguousarray(v) for k, v in arrays.items()}
    payload["header"] = np.frombuffer(json.dumps(h, sort_keys=True).encode(), np.uint8)
    np.savez_compressed(path, **payload)


def load(path: str) -> Tuple[Dict[str, Any], Dict[str, np.ndarray]]:
    """Read a recording: (header, arrays).  Raises ValueError naming the file
    when it is not a recording of a version this module reads."""
    with np.load(path, allow_pickle=False) as z:
        if "header" not in z.files:
            raise ValueError(f"{path}: not an mmafuzz recording (no 'header' array)")
        try:
            h = json.loads(bytes(z["header"]).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ValueError(f"{path}: header is not UTF-8 JSON: {e}") from None
        if h.get("format") != RECORDING_FORMAT or h.get("version") != RECORDING_VERSION:
            raise ValueError(f"{path}: header says format {h.get('format')!r} version {h.get('version')!r}; "
                             f"expected {RECORDING_FORMAT!r} version {RECORDING_VERSION}")
        arrays = {k: z[k] for k in z.files if k != "header"}
    return h, arrays


def operands(header: Dict[str, Any], arrays: Dict[str, np.ndarray], rows: Any = None,
             cols: Any = None) -> Tuple[np.ndarray, np.ndarray]:
    """A (M x K) and B (K x N) bit patterns of a recording, stored or
    generated; with ``rows`` / ``cols`` (index arrays), those rows of A and
    columns of B alone."""
    M, N, K = header["m"], header["n"], header["k"]
    rows = M if rows is None else rows
    cols = N if cols is None else cols
    if "a" in arrays and "b" in arrays:
        A, B = arrays["a"], arrays["b"]
        return (A if np.isscalar(rows) else A[np.asarray(rows)]), (B if np.isscalar(cols) else B[:, np.asarray(cols)])
    g = header.get("inputs")
    if not g or g.get("generator") != "mmafuzz.splitmix64":
        raise ValueError("recording has neither stored operands (a, b) nor a known generator")
    lo, hi = g.get("exp_lo", -4), g.get("exp_hi", 2)
    A = generate(header["a_format"], g["seed_a"], rows, K, K, False, lo, hi)
    Bt = generate(header["b_format"], g["seed_b"], K, cols, K, True, lo, hi)
    return A, Bt


def record(op: str, M: int, N: int, K: int, fmt: str, out_fmt: Optional[str] = None, seed: int = 1,
           flags: Optional[Dict[str, Any]] = None, store_operands: bool = True, sample: Optional[int] = None,
           device: str = "cuda", A: Optional[np.ndarray] = None,
           Bt: Optional[np.ndarray] = None) -> Tuple[Dict[str, Any], Dict[str, np.ndarray]]:
    """Run one GEMM call on the GPU through PyTorch on generated operands and
    return (header, arrays) for :func:`save`.  ``op``: ``torch.matmul``,
    ``torch.nn.functional.linear`` or ``torch._scaled_mm``; ``fmt``: the input
    format (f16, bf16, tf32 = f32 tensors with TF32 allowed, f32, e4m3, e5m2);
    ``out_fmt``: the output format (defaults to the input's; f32 for tf32).
    ``sample``: keep only that many rows and columns of D (the first and last
    half each).  ``A``, ``Bt``: the generated operands, when the caller has
    them already (rows 0..M-1 and columns 0..N-1 of larger ones are the same)."""
    import torch
    flags = dict(flags or {})
    in_fmt = fmt
    if out_fmt is None:
        out_fmt = "f32" if fmt in ("tf32", "f32") else fmt
    seed_a, seed_b = 2 * seed, 2 * seed + 1
    A = generate(in_fmt, seed_a, M, K, K) if A is None else A[:M]
    Bt = generate(in_fmt, seed_b, K, N, K, transpose=True) if Bt is None else Bt[:, :N]  # K x N, by columns
    tdt = getattr(torch, _TORCH_DTYPE[in_fmt])
    sdt = {1: torch.uint8, 2: torch.int16, 4: torch.int32}[_FMT[in_fmt][0]]

    def to_t(x: np.ndarray) -> "torch.Tensor":
        v = x.view({1: np.uint8, 2: np.int16, 4: np.int32}[x.dtype.itemsize])
        return torch.from_numpy(np.ascontiguousarray(v)).to(device).view(tdt)

    tA, tB = to_t(A), to_t(Bt)
    bk = torch.backends.cuda.matmul
    saved = (bk.allow_tf32, bk.allow_fp16_reduced_precision_reduction, bk.allow_bf16_reduced_precision_reduction)
    try:
        bk.allow_tf32 = bool(flags.setdefault("allow_tf32", in_fmt == "tf32"))
        bk.allow_fp16_reduced_precision_reduction = bool(flags.setdefault("allow_fp16_reduced_precision_reduction", saved[1]))
        bk.allow_bf16_reduced_precision_reduction = bool(flags.setdefault("allow_bf16_reduced_precision_reduction", saved[2]))
        if op == "torch.matmul":
            fn = lambda: torch.matmul(tA, tB)
        elif op == "torch.nn.functional.linear":
            tW = tB.t().contiguous()
            fn = lambda: torch.nn.functional.linear(tA, tW)
        elif op == "torch._scaled_mm":
            odt = getattr(torch, _TORCH_DTYPE[out_fmt])
            one = torch.ones((), device=device, dtype=torch.float32)
            tBc = tB.t().contiguous().t()   # column-major, as _scaled_mm requires
            fast = bool(flags.setdefault("use_fast_accum", False))
            fn = lambda: torch._scaled_mm(tA, tBc, scale_a=one, scale_b=one, out_dtype=odt, use_fast_accum=fast)
        else:
            raise ValueError(f"unknown op {op!r}")
        from torch.profiler import profile, ProfilerActivity
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            D = fn()
            torch.cuda.synchronize()
        kernels = sorted({e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})
        D2 = fn()
        deterministic = bool(torch.equal(D.view(torch.uint8), D2.view(torch.uint8)))
    finally:
        bk.allow_tf32, bk.allow_fp16_reduced_precision_reduction, bk.allow_bf16_reduced_precision_reduction = saved
    width = _FMT[out_fmt][0]
    Dn = D.view({1: torch.uint8, 2: torch.int16, 4: torch.int32}[width]).cpu().numpy().view(_UINT[width])
    header: Dict[str, Any] = {
        "op": op, "m": M, "n": N, "k": K, "a_format": in_fmt, "b_format": in_fmt, "d_format": out_fmt,
        "flags": flags, "kernels": kernels, "deterministic": deterministic, "env": _env(),
        "inputs": {"generator": "mmafuzz.splitmix64", "seed_a": seed_a, "seed_b": seed_b, "exp_lo": -4, "exp_hi": 2},
    }
    arrays: Dict[str, np.ndarray] = {}
    if store_operands:
        arrays["a"], arrays["b"] = A, Bt
    if sample is not None and (M > sample or N > sample):
        rows = np.unique(np.r_[np.arange(min(M, sample // 2)), np.arange(max(0, M - sample // 2), M)])
        cols = np.unique(np.r_[np.arange(min(N, sample // 2)), np.arange(max(0, N - sample // 2), N)])
        arrays["d_rows"], arrays["d_cols"] = rows.astype(np.int64), cols.astype(np.int64)
        arrays["d"] = Dn[np.ix_(rows, cols)]
    else:
        arrays["d"] = Dn
    return header, arrays
