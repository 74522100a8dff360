"""mmafuzz: the bit-exact model of GPU matrix-multiply-accumulate instructions
(NVIDIA mma/wgmma/tcgen05, AMD mfma), from NumPy and PyTorch.

Every result comes from the C model (model/ in the source tree) through a thin
binding (mmafuzz._core); nothing here does arithmetic on values.  Python only
checks shapes and dtypes, lays arrays out, and reads files.

    >>> import numpy as np, mmafuzz
    >>> op = mmafuzz.Instruction("hopper/mma.m16n8k16.f32.f16.f16.f32")
    >>> a = np.ones((4, 16), np.float16); b = np.ones((4, 16), np.float16)
    >>> op.dpa(a, b, np.zeros(4, np.float32))
    array([16., 16., 16., 16.], dtype=float32)

Values are either bit patterns (unsigned or signed integer arrays of the
format's container width: 8 bits or fewer in uint8, then uint16, uint32,
uint64; tf32 in 32 bits with its low 13 bits ignored) or real dtypes: NumPy's
float16/float32/float64 and ml_dtypes' bfloat16, float8_*, float6_*,
float4_e2m1fn and float8_e8m0fnu.  D comes back as bits when C was given as
bits, else in the dtype of D's format.  PyTorch tensors are accepted (their
bits are viewed) and D comes back as a tensor on C's device.
"""
from __future__ import annotations

import dataclasses
import fnmatch
import gzip
import os
import zlib
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core

__all__ = [
    "Instruction",
    "InstructionError",
    "instructions",
    "eval",
    "check",
    "read_vec",
    "outputs_equal",
    "CheckResult",
    "VecCases",
    "VecFile",
    "MODEL_VERSION",
]

MODEL_VERSION = _core.MODEL_VERSION

_ROWS: List[Dict[str, Any]] = _core.rows()
_ROW_INDEX: Dict[str, int] = {r["name"]: i for i, r in enumerate(_ROWS)}
_FORMATS: Dict[str, Dict[str, Any]] = {f["name"]: f for f in _core.formats()}
_STATUS = ("hypothesis", "peer", "hw", "peer+hw")
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}

try:  # optional: real dtypes for bf16, fp8, fp6, fp4, ue8m0
    import ml_dtypes as _mld
except ImportError:  # pragma: no cover - exercised only without ml_dtypes
    _mld = None


def _real_dtypes() -> Dict[str, Tuple[np.dtype, ...]]:
    """The real dtypes that carry each format (tf32 travels as float32)."""
    t: Dict[str, Tuple[np.dtype, ...]] = {
        "f64": (np.dtype(np.float64),),
        "f32": (np.dtype(np.float32),),
        "tf32": (np.dtype(np.float32),),
        "f16": (np.dtype(np.float16),),
    }
    if _mld is not None:
        for fmt, name in (
            ("bf16", "bfloat16"),
            ("e4m3", "float8_e4m3fn"),
            ("e5m2", "float8_e5m2"),
            ("e4m3fnuz", "float8_e4m3fnuz"),
            ("e5m2fnuz", "float8_e5m2fnuz"),
            ("e3m2", "float6_e3m2fn"),
            ("e2m3", "float6_e2m3fn"),
            ("e2m1", "float4_e2m1fn"),
            ("ue8m0", "float8_e8m0fnu"),
        ):
            if hasattr(_mld, name):
                t[fmt] = (np.dtype(getattr(_mld, name)),)
    return t


_REAL = _real_dtypes()
# The ml_dtypes name of each format, for messages when ml_dtypes is missing.
_REAL_NAME = {
    "f64": "numpy.float64", "f32": "numpy.float32", "tf32": "numpy.float32", "f16": "numpy.float16",
    "bf16": "ml_dtypes.bfloat16", "e4m3": "ml_dtypes.float8_e4m3fn", "e5m2": "ml_dtypes.float8_e5m2",
    "e4m3fnuz": "ml_dtypes.float8_e4m3fnuz", "e5m2fnuz": "ml_dtypes.float8_e5m2fnuz",
    "e3m2": "ml_dtypes.float6_e3m2fn", "e2m3": "ml_dtypes.float6_e2m3fn", "e2m1": "ml_dtypes.float4_e2m1fn",
    "ue8m0": "ml_dtypes.float8_e8m0fnu",
}


class InstructionError(ValueError):
    """An unknown instruction name; the message lists the closest names."""


def _row_index(name: str) -> int:
    if not isinstance(name, str):
        raise TypeError(f"an instruction name is a str such as 'hopper/mma.m16n8k16.f32.f16.f16.f32', "
                        f"not {type(name).__name__}")
    i = _ROW_INDEX.get(name)
    if i is None:
        close = _core.closest(name, 5)
        raise InstructionError(f"unknown instruction '{name}'; closest: {', '.join(close)}")
    return i


def _container(fmt: str) -> type:
    return _UINT[_FORMATS[fmt]["bytes"]]


# ------------------------------------------------------------ torch bridge

def _is_torch(x: Any) -> bool:
    return type(x).__module__.split(".")[0] == "torch"


def _torch_to_numpy(x: Any, what: str) -> np.ndarray:
    """A tensor's values as a NumPy array of the same bits (and real dtype
    where NumPy or ml_dtypes has one)."""
    import torch

    dt = x.dtype
    if str(dt) == "torch.float4_e2m1fn_x2":
        raise TypeError(f"{what}: packed torch.float4_e2m1fn_x2 is not accepted; pass one fp4 per byte "
                        f"(uint8 bits in the low 4 bits, or ml_dtypes.float4_e2m1fn)")
    x = x.detach()
    if x.device.type != "cpu":
        x = x.cpu()
    x = x.contiguous()
    if dt.is_floating_point:
        size = dt.itemsize
        ints = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[size]
        bits = x.view(ints).numpy().view(_UINT[size])
        np_name = {
            torch.float16: np.dtype(np.float16), torch.float32: np.dtype(np.float32),
            torch.float64: np.dtype(np.float64),
        }.get(dt)
        if np_name is None and _mld is not None:
            mld_name = str(dt).replace("torch.", "")
            if hasattr(_mld, mld_name):
                np_name = np.dtype(getattr(_mld, mld_name))
        if np_name is None:
            raise TypeError(f"{what}: {dt} needs ml_dtypes for its NumPy dtype (pip install ml_dtypes)")
        return bits.view(np_name)
    if dt.is_complex or dt == torch.bool:
        raise TypeError(f"{what}: {dt} is neither bits nor a real format")
    return x.numpy()


def _numpy_to_torch(x: np.ndarray, like: Any) -> Any:
    """NumPy array x (bits or a real dtype) as a tensor on like's device."""
    import torch

    if x.dtype.kind in "ui":
        size = x.dtype.itemsize
        ints = {1: np.uint8, 2: np.int16, 4: np.int32, 8: np.int64}[size]
        t = torch.from_numpy(np.ascontiguousarray(x).view(ints))
    else:
        size = x.dtype.itemsize
        ints = {1: np.uint8, 2: np.int16, 4: np.int32, 8: np.int64}[size]
        tdt = {np.dtype(np.float16): torch.float16, np.dtype(np.float32): torch.float32,
               np.dtype(np.float64): torch.float64}.get(x.dtype)
        if tdt is None:
            tdt = getattr(torch, x.dtype.name)
        t = torch.from_numpy(np.ascontiguousarray(x).view(ints)).view(tdt)
    return t.to(like.device) if like.device.type != "cpu" else t


# --------------------------------------------------------------- values

def _to_bits(x: Any, fmt: str, what: str) -> Tuple[np.ndarray, bool]:
    """Operand x of format fmt as unsigned bits of the container width.
    @return (bits, given_as_bits)."""
    if _is_torch(x):
        x = _torch_to_numpy(x, what)
    x = np.asarray(x)
    info = _FORMATS[fmt]
    cont = _container(fmt)
    if x.dtype.kind in "ui":
        if x.dtype.itemsize != info["bytes"]:
            raise TypeError(f"{what}: bits of {fmt} go in {np.dtype(cont).name} (or its signed view), "
                            f"not {x.dtype.name}")
        bits = x.view(cont) if x.dtype != cont else x
        width = info["bits"]
        if width < 8 * info["bytes"]:
            bad = (bits >> np.asarray(width, cont)) != 0
            if bad.any():
                idx = np.unravel_index(int(np.argmax(bad)), bad.shape) if bad.ndim else ()
                raise ValueError(f"{what}: bits set above the {width} bits of {fmt} "
                                 f"(first at index {tuple(int(i) for i in idx)}: {hex(int(bits[idx]))})")
        return bits, True
    allowed = _REAL.get(fmt, ())
    if x.dtype in allowed:
        return x.view(cont), False
    if fmt == "ue4m3":
        hint = "ue4m3 has no dtype: pass its bits as uint8"
    elif fmt in _REAL_NAME and not allowed:
        hint = f"pass {_REAL_NAME[fmt]} (install ml_dtypes) or bits as {np.dtype(cont).name}"
    else:
        hint = f"pass {_REAL_NAME.get(fmt, 'its dtype')} or bits as {np.dtype(cont).name}"
    raise TypeError(f"{what}: dtype {x.dtype.name} is not the format {fmt} of this operand; {hint} "
                    f"(values are never converted)")


def _from_bits(bits: np.ndarray, fmt: str, as_bits: bool) -> np.ndarray:
    if as_bits:
        return bits
    allowed = _REAL.get(fmt)
    if not allowed:
        raise TypeError(f"D's format {fmt} has no dtype here ({_REAL_NAME.get(fmt, 'none')}); "
                        f"pass C as bits to get D as bits")
    return bits.view(allowed[0])


def _threads(threads: Optional[int]) -> int:
    if threads is None:
        return 0
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise ValueError(f"threads must be a positive int or None (all cores), not {threads!r}")
    return int(threads)


# --------------------------------------------------------------- table

def instructions(pattern: str = "*") -> List[Dict[str, Any]]:
    """The instruction table's rows whose name matches the shell-style glob
    `pattern`, each a dict: name, arch, qualifier, m, n, k, the formats a, b,
    c, d and scale, block, n_scales, family and its parameters (F, L, e_zero,
    x, rho), nan_any, zero_plus, and status ("hypothesis", "peer", "hw",
    "peer+hw": what backs the row)."""
    out = []
    for r in _ROWS:
        if fnmatch.fnmatchcase(r["name"], pattern):
            d = dict(r)
            d["status"] = _STATUS[r["status"]]
            out.append(d)
    return out


class Instruction:
    """One instruction of the table, e.g.
    Instruction("hopper/mma.m16n8k16.f32.f16.f16.f32").  Attributes: name, m,
    n, k, formats (a, b, c, d, scale), block, row (the table row as a dict).
    wgmma and tcgen05 rows have the table's canonical shapes (N=8; M=64 for
    plain tcgen05), which compute alike for every N and M."""

    def __init__(self, name: str):
        self._i = _row_index(name)
        r = _ROWS[self._i]
        self.row = instructions(name)[0]
        self.name: str = r["name"]
        self.m, self.n, self.k = r["m"], r["n"], r["k"]
        self.a_format, self.b_format = r["a"], r["b"]
        self.c_format, self.d_format = r["c"], r["d"]
        self.scale_format: Optional[str] = r["scale"]
        self.block: int = r["block"]
        self.n_scales: int = r["n_scales"]

    def __repr__(self) -> str:
        return f"mmafuzz.Instruction({self.name!r})"

    # -- operands

    def _scales(self, sa: Any, sb: Any) -> Tuple[Optional[np.ndarray], Optional[np.ndarray]]:
        if not self.n_scales:
            if sa is not None or sb is not None:
                raise ValueError(f"{self.name} is not block-scaled: scale_a and scale_b must be None")
            return None, None
        if sa is None or sb is None:
            raise ValueError(f"{self.name} is block-scaled ({self.scale_format}, one scale per {self.block} "
                             f"elements of K): scale_a and scale_b are required")
        return (_to_bits(sa, self.scale_format, "scale_a")[0], _to_bits(sb, self.scale_format, "scale_b")[0])

    def dpa(self, a: Any, b: Any, c: Any, scale_a: Any = None, scale_b: Any = None,
            threads: Optional[int] = None) -> Any:
        """A batch of dot products d = c + sum_k a[..., k] * b[..., k], as the
        instruction computes each output element.  a and b have shape (..., K)
        with K the instruction's K, c shape (...); the batch shapes broadcast.
        Block-scaled rows take scale_a and scale_b of shape (..., K/block).
        D is returned with the batch shape, as bits if c was bits, else in
        D's dtype; a tensor if c was a tensor.  threads=None: all cores."""
        like = c if _is_torch(c) else None
        A, _ = _to_bits(a, self.a_format, "a")
        B, _ = _to_bits(b, self.b_format, "b")
        C, c_bits = _to_bits(c, self.c_format, "c")
        SA, SB = self._scales(scale_a, scale_b)
        K, S = self.k, self.n_scales
        for what, x, last in (("a", A, K), ("b", B, K)) + ((("scale_a", SA, S), ("scale_b", SB, S)) if S else ()):
            if x.ndim < 1 or x.shape[-1] != last:
                raise ValueError(f"{what}: shape {x.shape}, expected (..., {last}) for {self.name}")
        shapes = [A.shape[:-1], B.shape[:-1], C.shape] + ([SA.shape[:-1], SB.shape[:-1]] if S else [])
        try:
            batch = np.broadcast_shapes(*shapes)
        except ValueError:
            raise ValueError(f"batch shapes do not broadcast: a {A.shape}, b {B.shape}, c {C.shape}") from None
        n = int(np.prod(batch, dtype=np.int64))
        A = np.ascontiguousarray(np.broadcast_to(A, batch + (K,)))
        B = np.ascontiguousarray(np.broadcast_to(B, batch + (K,)))
        C = np.ascontiguousarray(np.broadcast_to(C, batch))
        if S:
            SA = np.ascontiguousarray(np.broadcast_to(SA, batch + (S,)))
            SB = np.ascontiguousarray(np.broadcast_to(SB, batch + (S,)))
        D = np.empty(batch, _container(self.d_format))
        _core.eval_cases(self._i, n, A, B, C, SA, SB, D, _threads(threads))
        D = _from_bits(D, self.d_format, c_bits)
        return _numpy_to_torch(D, like) if like is not None else D

    def mma(self, A: Any, B: Any, C: Any, scale_a: Any = None, scale_b: Any = None,
            threads: Optional[int] = None) -> Any:
        """Whole tiles: D = A @ B + C for A (..., M, K), B (..., K, N) and C
        (..., M, N) as in NumPy, with the instruction's M, N, K; the batch
        shapes broadcast.  Block-scaled rows take scale_a (..., M, K/block) and
        scale_b (..., K/block, N), as MMA-Sim takes alpha and beta.  D as in
        dpa.  threads=None: all cores."""
        like = C if _is_torch(C) else None
        Ab, _ = _to_bits(A, self.a_format, "A")
        Bb, _ = _to_bits(B, self.b_format, "B")
        Cb, c_bits = _to_bits(C, self.c_format, "C")
        SA, SB = self._scales(scale_a, scale_b)
        m, n, k, S = self.m, self.n, self.k, self.n_scales
        want = [("A", Ab, (m, k)), ("B", Bb, (k, n)), ("C", Cb, (m, n))]
        if S:
            want += [("scale_a", SA, (m, S)), ("scale_b", SB, (S, n))]
        for what, x, shp in want:
            if x.ndim < 2 or x.shape[-2:] != shp:
                raise ValueError(f"{what}: shape {x.shape}, expected (..., {shp[0]}, {shp[1]}) for {self.name}")
        try:
            batch = np.broadcast_shapes(*[x.shape[:-2] for _, x, _ in want])
        except ValueError:
            raise ValueError(f"batch shapes do not broadcast: A {Ab.shape}, B {Bb.shape}, C {Cb.shape}") from None
        nt = int(np.prod(batch, dtype=np.int64))
        At = np.ascontiguousarray(np.broadcast_to(Ab, batch + (m, k)))
        Bt = np.ascontiguousarray(np.swapaxes(np.broadcast_to(Bb, batch + (k, n)), -1, -2))
        Ct = np.ascontiguousarray(np.broadcast_to(Cb, batch + (m, n)))
        if S:
            SA = np.ascontiguousarray(np.broadcast_to(SA, batch + (m, S)))
            SB = np.ascontiguousarray(np.swapaxes(np.broadcast_to(SB, batch + (S, n)), -1, -2))
        D = np.empty(batch + (m, n), _container(self.d_format))
        _core.eval_tiles(self._i, nt, At, Bt, Ct, SA, SB, D, _threads(threads))
        D = _from_bits(D, self.d_format, c_bits)
        return _numpy_to_torch(D, like) if like is not None else D

    def matmul(self, A: Any, B: Any, C: Any, threads: Optional[int] = None) -> Any:
        """D = A @ B + C for any A (..., M, K), B (..., K, N), C (..., M, N),
        computed as a plain kernel's main loop does: the output cut into the
        instruction's M x N tiles, K walked in steps of the instruction's K,
        each step's D the next step's C.  K must be a multiple of the
        instruction's K, and the row's C and D formats must be the same (so
        that D can feed C); block-scaled rows are refused.  D as in dpa."""
        if self.n_scales:
            raise ValueError(f"{self.name} is block-scaled; matmul takes rows without scales (use mma)")
        if self.c_format != self.d_format:
            raise ValueError(f"{self.name}: C is {self.c_format} but D is {self.d_format}, so D cannot feed C "
                             f"from one K step to the next")
        like = C if _is_torch(C) else None
        Ab, _ = _to_bits(A, self.a_format, "A")
        Bb, _ = _to_bits(B, self.b_format, "B")
        Cb, c_bits = _to_bits(C, self.c_format, "C")
        if Ab.ndim < 2 or Bb.ndim < 2 or Cb.ndim < 2:
            raise ValueError(f"A, B and C must be at least 2-D (got {Ab.shape}, {Bb.shape}, {Cb.shape})")
        M, K = Ab.shape[-2:]
        K2, N = Bb.shape[-2:]
        if K2 != K or Cb.shape[-2:] != (M, N):
            raise ValueError(f"shapes do not chain: A {Ab.shape}, B {Bb.shape}, C {Cb.shape} "
                             f"(expected (..., M, K), (..., K, N), (..., M, N))")
        if K % self.k or K == 0:
            raise ValueError(f"K={K} is not a positive multiple of {self.name}'s K={self.k}")
        m, n, k = self.m, self.n, self.k
        try:
            batch = np.broadcast_shapes(Ab.shape[:-2], Bb.shape[:-2], Cb.shape[:-2])
        except ValueError:
            raise ValueError(f"batch shapes do not broadcast: A {Ab.shape}, B {Bb.shape}, C {Cb.shape}") from None
        nb = int(np.prod(batch, dtype=np.int64))
        Mp, Np = -(-M // m) * m, -(-N // n) * n   # padded with zero bits (their outputs are dropped)
        Mt, Nt = Mp // m, Np // n
        Ap = np.zeros((nb, Mp, K), Ab.dtype)
        Ap[:, :M] = np.broadcast_to(Ab, batch + (M, K)).reshape(nb, M, K)
        Bp = np.zeros((nb, Np, K), Bb.dtype)   # B transposed: its columns contiguous
        Bp[:, :N] = np.swapaxes(np.broadcast_to(Bb, batch + (K, N)).reshape(nb, K, N), -1, -2)
        Cp = np.zeros((nb, Mp, Np), Cb.dtype)
        Cp[:, :M, :N] = np.broadcast_to(Cb, batch + (M, N)).reshape(nb, M, N)
        acc = np.ascontiguousarray(Cp.reshape(nb, Mt, m, Nt, n).transpose(0, 1, 3, 2, 4))   # (nb, Mt, Nt, m, n)
        th = _threads(threads)
        for s in range(K // k):
            At = np.ascontiguousarray(np.broadcast_to(
                Ap[:, :, s * k:(s + 1) * k].reshape(nb, Mt, 1, m, k), (nb, Mt, Nt, m, k)))
            Bt = np.ascontiguousarray(np.broadcast_to(
                Bp[:, :, s * k:(s + 1) * k].reshape(nb, 1, Nt, n, k), (nb, Mt, Nt, n, k)))
            out = np.empty_like(acc)
            _core.eval_tiles(self._i, nb * Mt * Nt, At, Bt, acc, None, None, out, th)
            acc = out
        D = acc.transpose(0, 1, 3, 2, 4).reshape(nb, Mp, Np)[:, :M, :N].reshape(batch + (M, N))
        D = _from_bits(np.ascontiguousarray(D), self.d_format, c_bits)
        return _numpy_to_torch(D, like) if like is not None else D

    def outputs_equal(self, got: Any, expected: Any) -> np.ndarray:
        """Elementwise comparison of two D arrays (bits or D's dtype) under the
        row's NaN rule (shared/VECTORS.md "Comparing"): a bool array."""
        g, _ = _to_bits(got, self.d_format, "got")
        e, _ = _to_bits(expected, self.d_format, "expected")
        g, e = np.broadcast_arrays(g, e)
        g64 = np.ascontiguousarray(g, np.uint64)
        e64 = np.ascontiguousarray(e, np.uint64)
        out = np.empty(g64.shape, np.uint8)
        _core.output_equal(self._i, g64, e64, out)
        return out.astype(bool)


def outputs_equal(name: str, got: Any, expected: Any) -> np.ndarray:
    """Instruction(name).outputs_equal(got, expected)."""
    return Instruction(name).outputs_equal(got, expected)


def eval(name: str, line: str, trace: bool = False) -> Union[int, Tuple[int, List[str]]]:
    """Evaluate one `.vec` case line ("c=... a=... b=... [sa=... sb=...]";
    a d= field and free fields are allowed and ignored) of instruction `name`.
    @return d as an int (bits), or (d, the trace lines) when trace is true."""
    i = _row_index(name)
    if not isinstance(line, str):
        raise TypeError("line is a str (one .vec case line)")
    return _core.eval_line(i, line, bool(trace))


# ------------------------------------------------------------- .vec files

@dataclasses.dataclass
class VecCases:
    """The cases of one instruction in a `.vec` file, as bits in the
    containers of the row's formats: c (n,), a and b (n, K), scale_a and
    scale_b (n, K/block) or None, d (n,) with has_d (n,) bool, and the
    1-based line number of each case."""
    name: str
    path: str
    line: np.ndarray
    c: np.ndarray
    a: np.ndarray
    b: np.ndarray
    scale_a: Optional[np.ndarray]
    scale_b: Optional[np.ndarray]
    d: np.ndarray
    has_d: np.ndarray

    def __len__(self) -> int:
        return len(self.line)


# The reader streams as `mmafuzz check` does (harness/vec/vecfile.c): a
# piece of whole lines at a time, never the whole file, with the CLI's limits
# and messages: a line is at most 1 MiB less one byte (without its newline), a
# NUL byte is an error (C strings would end there), both as FILE:LINE.
_MAX_LINE = (1 << 20) - 1
_BLOCK = 1 << 22


def _vec_pieces(path: Union[str, os.PathLike]) -> Iterable[Tuple[int, bytes]]:
    """(number of the first line, whole lines) of a .vec or .vec.gz file, in
    order; raises where the CLI's reader stops (after the pieces before)."""
    name = os.fspath(path)
    try:
        raw = open(path, "rb")
    except OSError as e:
        raise OSError(f"{name}: cannot read ({e.strerror})") from e
    with raw:
        try:
            src = gzip.GzipFile(fileobj=raw, mode="rb") if raw.peek(2)[:2] == b"\x1f\x8b" else raw
        except OSError as e:
            raise OSError(f"{name}: cannot read ({e.strerror})") from e
        line, pend = 1, b""
        while True:
            try:
                block = src.read(_BLOCK)
            except (OSError, EOFError, zlib.error) as e:
                raise ValueError(f"{name}:{line}: read error or truncated compressed data ({e})") from e
            if not block:
                if pend:
                    yield line, pend
                return
            data = pend + block
            k = data.rfind(b"\n") + 1
            if k:
                yield line, data[:k]
                line += data.count(b"\n", 0, k)
            pend = data[k:]
            # the line being read: what the CLI's reader sees first, byte by byte
            nul = pend.find(b"\0", 0, _MAX_LINE + 1)
            if nul >= 0:
                raise ValueError(f"{name}:{line}: a NUL byte at column {nul + 1} (a .vec file is text)")
            if len(pend) > _MAX_LINE:
                raise ValueError(f"{name}:{line}: line longer than 1 MiB")


class VecFile(list):
    """What read_vec returns: a list of VecCases, one per instruction, and
    `skipped`, {instruction name: cases skipped} for the instructions the
    table does not have (only with skip_unknown=True; else empty)."""

    def __init__(self, groups: Iterable[VecCases] = (), skipped: Optional[Dict[str, int]] = None):
        super().__init__(groups)
        self.skipped: Dict[str, int] = dict(skipped or {})


def read_vec(path: Union[str, os.PathLike], skip_unknown: bool = False) -> VecFile:
    """Read a `.vec` or `.vec.gz` file (shared/VECTORS.md): one VecCases per
    instruction, in order of first appearance.  Lines are parsed by the C
    parser; the file is streamed (memory grows with the cases, not the file)
    with the limits and messages of `mmafuzz check`: a NUL byte or a line of
    1 MiB or more is an error.  Raises OSError when unreadable, ValueError on
    a malformed line ("FILE:LINE: what was expected") and InstructionError
    on an unknown instruction (with the closest names).  skip_unknown=True (as `mmafuzz
    check --skip-unknown`): the cases of an instruction the table does not
    have are skipped unparsed and counted in the result's `skipped`."""
    name = os.fspath(path)
    parts: Dict[int, List[List[bytes]]] = {}  # row: the bytes of each field, a piece at a time
    skipped: Dict[str, int] = {}
    instr = None
    try:
        for first, text in _vec_pieces(path):
            groups, skips, instr = _core.parse_vec(text, name, bool(skip_unknown), first, instr)
            for g in groups:
                fields = parts.setdefault(g[0], [[] for _ in g[1:]])
                for f, b in zip(fields, g[1:]):
                    f.append(b)
            for instr_name, n in skips:
                skipped[instr_name] = skipped.get(instr_name, 0) + n
    except LookupError as e:
        msg = str(e.args[0])
        where, _, unknown = msg.rpartition(": ")
        raise InstructionError(f"{where}: unknown instruction '{unknown}'; closest: "
                               f"{', '.join(_core.closest(unknown, 5))}") from None
    out = VecFile(skipped=skipped)
    for row, fields in parts.items():
        lines, c, a, b, sa, sb, d, hasd = (b"".join(f) for f in fields)
        r = _ROWS[row]
        n = len(lines) // 8
        K, S = r["k"], r["n_scales"]
        u64 = lambda x: np.frombuffer(x, np.uint64)
        out.append(VecCases(
            name=r["name"], path=name, line=np.frombuffer(lines, np.int64),
            c=u64(c).astype(_container(r["c"])),
            a=u64(a).reshape(n, K).astype(_container(r["a"])),
            b=u64(b).reshape(n, K).astype(_container(r["b"])),
            scale_a=u64(sa).reshape(n, S).astype(_container(r["scale"])) if S else None,
            scale_b=u64(sb).reshape(n, S).astype(_container(r["scale"])) if S else None,
            d=u64(d).astype(_container(r["d"])),
            has_d=np.frombuffer(hasd, np.uint8).astype(bool)))
    return out


@dataclasses.dataclass
class CheckResult:
    """What check() found: passed and failed counts in all, per instruction
    ({name: (passed, failed)}), the failures (dicts with path, line, name,
    got, expected as ints), the superseded cases (path, line, name), and
    with skip_unknown the cases skipped (in all, and {name: skipped} for the
    instructions the table does not have)."""
    passed: int = 0
    failed: int = 0
    per_instruction: Dict[str, Tuple[int, int]] = dataclasses.field(default_factory=dict)
    failures: List[Dict[str, Any]] = dataclasses.field(default_factory=list)
    superseded: List[Dict[str, Any]] = dataclasses.field(default_factory=list)
    skipped: int = 0
    skipped_per_instruction: Dict[str, int] = dataclasses.field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.failed == 0


def _override_table(paths: Iterable[Union[str, os.PathLike]]) -> Dict[str, List[Tuple[np.ndarray, ...]]]:
    table: Dict[str, List[Tuple[np.ndarray, ...]]] = {}
    for p in paths:
        for g in read_vec(p):
            if not g.has_d.all():
                ln = int(g.line[np.argmin(g.has_d)])
                raise ValueError(f"{os.fspath(p)}:{ln}: expected a d= field (the hardware's output)")
            for i in range(len(g)):
                table.setdefault(g.name, []).append(
                    (g.c[i], g.a[i], g.b[i],
                     None if g.scale_a is None else g.scale_a[i], None if g.scale_b is None else g.scale_b[i],
                     g.d[i]))
    return table


def apply_overrides(g: VecCases, table: Dict[str, List[Tuple[np.ndarray, ...]]]) -> np.ndarray:
    """Replace, in place, the expected d of the cases of g that appear (same
    instruction and inputs) in an override table; @return their indices."""
    hit = []
    for c, a, b, sa, sb, d in table.get(g.name, ()):
        same = (g.c == c) & (g.a == a).all(axis=1) & (g.b == b).all(axis=1)
        if sa is not None:
            same &= (g.scale_a == sa).all(axis=1) & (g.scale_b == sb).all(axis=1)
        idx = np.nonzero(same)[0]
        g.d[idx] = d
        hit.extend(idx.tolist())
    return np.array(sorted(set(hit)), np.int64)


def check(paths: Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]],
          override: Union[None, str, os.PathLike, Sequence[Union[str, os.PathLike]]] = None,
          threads: Optional[int] = None, max_failures: int = 100, skip_unknown: bool = False) -> CheckResult:
    """Evaluate every case of the `.vec`/`.vec.gz` files and compare with its
    d under the NaN rule of shared/VECTORS.md, as `mmafuzz check` does.
    override: file(s) of cases whose d supersedes the d of the same case
    (`mmafuzz check --override`, repeatable).  skip_unknown: skip and count
    the cases of instructions the table does not have (`--skip-unknown`).
    Failures are counted and returned (the first max_failures in full), never
    raised; unreadable or malformed input, a case without d, or an unknown
    instruction (without skip_unknown) raises."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    if isinstance(override, (str, os.PathLike)):
        override = [override]
    table = _override_table(override or [])
    res = CheckResult()
    for p in paths:
        groups = read_vec(p, skip_unknown=skip_unknown)
        for name, n in groups.skipped.items():
            res.skipped += n
            res.skipped_per_instruction[name] = res.skipped_per_instruction.get(name, 0) + n
        for g in groups:
            if not g.has_d.all():
                ln = int(g.line[np.argmin(g.has_d)])
                raise ValueError(f"{os.fspath(p)}:{ln}: expected a d= field to compare with")
            for i in apply_overrides(g, table):
                res.superseded.append({"path": g.path, "line": int(g.line[i]), "name": g.name})
            op = Instruction(g.name)
            got = op.dpa(g.a, g.b, g.c, g.scale_a, g.scale_b, threads=threads)
            eq = op.outputs_equal(got, g.d)
            npass, nfail = int(eq.sum()), int((~eq).sum())
            p0, f0 = res.per_instruction.get(g.name, (0, 0))
            res.per_instruction[g.name] = (p0 + npass, f0 + nfail)
            res.passed += npass
            res.failed += nfail
            for i in np.nonzero(~eq)[0][:max(0, max_failures - len(res.failures))]:
                res.failures.append({"path": g.path, "line": int(g.line[i]), "name": g.name,
                                     "got": int(got[i]), "expected": int(g.d[i])})
    return res


# Whole GEMM calls (docs/kernels.md): mmafuzz.reproduce(torch.matmul, A, B).
from . import kernels, recording  # noqa: E402
from .kernels import reproduce  # noqa: E402

__all__ += ["kernels", "recording", "reproduce"]
