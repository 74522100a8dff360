"""mmafuzz.mmasim: a drop-in for MMA-Sim 2.1.1's API, computed by mmafuzz's model.

Change ``import mmasim`` (or ``from mmasim import nv_ptx, amd``) into
``from mmafuzz.mmasim import nv_ptx, amd`` and keep the code:

    op = nv_ptx.MMA("Hopper", "m16n8k16.f32.f16.f16.f32")
    d = op.dpa(a, b, c)          # a, b (..., K) tensors; c (...)
    D = op(A, B, C)              # A (m, K), B (K, n), C (m, n)

The classes (nv_ptx.MMA, MMABlockScale, WGMMA, TCGen05MMA,
TCGen05MMABlockScale; amd.MFMA) take MMA-Sim's constructor arguments, set its
attributes (m, n, k, a_type, b_type, c_type, d_type, kind, block_size,
packing, s_type, arch, shape_and_type) and take torch tensors (CPU or CUDA) as
MMA-Sim takes them: tf32 as float32 (low 13 bits ignored), fp6/fp4 one per
uint8 for the K=32 kinds (fp6 in bits 5:0, fp4 in bits 5:2), two fp4 per uint8
(high nibble first) for the K=64 mxf4/mxf4nvf4 kinds, ue4m3 scales as
float8_e4m3fn with bit 7 ignored.  Every shape MMA-Sim lists maps to the
table's canonical row (wgmma N=8, tcgen05 M=64/N=8 and M=128/N=8 for the
block-scaled forms), which computes alike for every N and M.

A K other than the instruction's is chained as MMA-Sim chains it: chunks of
L = min(K, L_max), each one instruction-sized step whose D is the next C; a
shorter last chunk is padded with zero products.  Results are mmafuzz's; where
they differ from MMA-Sim's, docs/python.md lists the rule and the evidence.
"""
from __future__ import annotations

import types
from typing import Any, Dict, Optional, Tuple

import numpy as np

try:
    import torch
except ImportError as e:  # pragma: no cover - the drop-in is for torch users
    raise ImportError("mmafuzz.mmasim takes torch tensors as MMA-Sim does: pip install torch") from e

from . import Instruction, InstructionError, _container, _FORMATS, _ROWS

__all__ = ["nv_ptx", "amd", "UnsupportedError"]


class UnsupportedError(InstructionError, AssertionError):
    """An architecture or shape_and_type that MMA-Sim 2.1.1 would refuse (it
    asserts) or that has no mmafuzz row; the message names the closest rows."""


_NV_ARCH = {"Volta": "volta", "Turing": "turing", "Ampere": "ampere", "Ada Lovelace": "ada", "Hopper": "hopper",
            "Blackwell": "blackwell", "RTX Blackwell": "rtx_blackwell"}
_AMD_ARCH = {"CDNA1": "cdna1", "CDNA2": "cdna2", "CDNA3": "cdna3"}
# MMA-Sim's torch dtype of each PTX type (fp6/fp4 are held in uint8)
_NV_DTYPE = {"f64": torch.float64, "f32": torch.float32, "tf32": torch.float32, "f16": torch.float16,
             "bf16": torch.bfloat16, "e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2,
             "ue8m0": torch.float8_e8m0fnu, "ue4m3": torch.float8_e4m3fn, "e3m2": torch.uint8,
             "e2m3": torch.uint8, "e2m1": torch.uint8}
_AMD_DTYPE = {"f64": torch.float64, "f32": torch.float32, "xf32": torch.float32, "f16": torch.float16,
              "bf16": torch.bfloat16, "fp8": torch.float8_e4m3fnuz, "bf8": torch.float8_e5m2fnuz}
# MMA-Sim's chunk length, in bytes of A per chunk, of mma.sync per architecture
_MMA_L_MAX_BYTES = {"Volta": 8, "Turing": 16, "Ampere": 16, "Ada Lovelace": 16, "Hopper": 32, "Blackwell": 32,
                    "RTX Blackwell": 32}
_INT_VIEW = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _shape(s: str) -> Tuple[int, int, int]:
    m, nk = s[1:].split("n")
    n, k = nk.split("k")
    return int(m), int(n), int(k)


def _row(arch_id: str, qualifier: str, what: str) -> Instruction:
    try:
        return Instruction(f"{arch_id}/{qualifier}")
    except InstructionError as e:
        raise UnsupportedError(f"unsupported {what}: {e}") from None


def _bits(x: Any, what: str) -> np.ndarray:
    """A tensor's bits as an unsigned NumPy array (ints as they are)."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{what}: a torch.Tensor is expected, not {type(x).__name__}")
    if str(x.dtype) == "torch.float4_e2m1fn_x2":
        raise TypeError(f"{what}: packed torch.float4_e2m1fn_x2 is not accepted; pass uint8 as MMA-Sim does")
    t = x.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    t = t.contiguous()
    size = t.element_size()
    if t.dtype.is_floating_point:
        t = t.view(_INT_VIEW[size])
    a = t.numpy()
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[size])


def _operand(x: Any, fmt: str, packing: int, what: str) -> np.ndarray:
    """An A/B operand as MMA-Sim takes it, as bits of the row's format."""
    b = _bits(x, what)
    if fmt in ("e3m2", "e2m3", "e2m1") and b.dtype == np.uint8:
        if packing == 2:   # two fp4 per byte, high nibble first
            return np.stack([b >> 4, b & 0xF], axis=-1).reshape(b.shape[:-1] + (2 * b.shape[-1],))
        b = b & 0x3F        # fp6 in bits 5:0, fp4 in bits 5:2
        return b >> 2 if fmt == "e2m1" else b
    want = _FORMATS[fmt]["bytes"]
    if b.dtype.itemsize != want:
        raise TypeError(f"{what}: {x.dtype} is not a {fmt} operand (MMA-Sim takes {_NV_DTYPE.get(fmt, fmt)})")
    return b


def _scale(x: Any, fmt: str, what: str) -> np.ndarray:
    b = _bits(x, what)
    if b.dtype != np.uint8:
        raise TypeError(f"{what}: {x.dtype} is not a {fmt} scale")
    return b & 0x7F if fmt == "ue4m3" else b   # ue4m3 as e4m3 with bit 7 ignored


class _Op:
    """What every drop-in class shares: the row, MMA-Sim's chunk length L_max,
    and dpa/__call__ on tensors."""

    _row_op: Instruction
    _L_max: int

    def _chunk_row(self, L: int, c_format: str) -> Instruction:
        """The row that evaluates one chunk of L with an accumulator of
        c_format: this one, or a sibling of the same architecture, family and
        A/B/D formats whose K holds the chunk in one chunk of its own (the
        chunk then padded with zero products), with C in c_format (after the
        first chunk, C is the previous chunk's D)."""
        r = self._row_op
        if L <= r.k and c_format == r.c_format:
            return r
        best = None
        for cand in _ROWS:
            if (cand["arch"], cand["a"], cand["b"], cand["c"], cand["d"], cand["family"], cand["scale"],
                    cand["block"]) != (r.row["arch"], r.a_format, r.b_format, c_format, r.d_format, r.row["family"],
                                       r.scale_format, r.block):
                continue
            if cand["k"] >= L and cand["L"] >= L and \
                    (best is None or cand["k"] < best["k"]):
                best = cand
        if best is None:
            raise NotImplementedError(f"{r.name}: no row evaluates MMA-Sim's chunk of {L} with a {c_format} C")
        return Instruction(best["name"])

    def _dpa(self, a: Any, b: Any, c: Any, alpha: Any = None, beta: Any = None) -> Any:
        r = self._row_op
        A = _operand(a, r.a_format, getattr(self, "packing", 1), "a")
        B = _operand(b, r.b_format, getattr(self, "packing", 1), "b")
        cb = _bits(c, "c")
        if cb.dtype.itemsize != _FORMATS[r.c_format]["bytes"]:
            raise TypeError(f"c: {c.dtype} is not the {r.c_format} accumulator of {r.name}")
        K = A.shape[-1]
        if B.shape[-1] != K:
            raise ValueError(f"a and b disagree on K: {tuple(A.shape)} and {tuple(B.shape)}")
        SA = SB = None
        if r.n_scales:
            SA, SB = _scale(alpha, r.scale_format, "alpha"), _scale(beta, r.scale_format, "beta")
        L = min(K, self._L_max)
        batch = np.broadcast_shapes(A.shape[:-1], B.shape[:-1], cb.shape)
        acc = np.ascontiguousarray(np.broadcast_to(cb, batch))
        for i in range(0, K, L):
            n = min(L, K - i)
            op = self._chunk_row(L, r.c_format if i == 0 else r.d_format)
            if n == op.k:    # the chunk is the row's K: no padding
                a_ch, b_ch = A[..., i:i + n], B[..., i:i + n]
            else:
                a_ch = np.zeros(batch + (op.k,), A.dtype)
                b_ch = np.zeros(batch + (op.k,), B.dtype)
                a_ch[..., :n] = A[..., i:i + n]
                b_ch[..., :n] = B[..., i:i + n]
            sa = sb = None
            if r.n_scales:
                if SA.shape[-1] == 1:       # one scale for every chunk (MMA-Sim's ST-FDPA)
                    sa, sb = SA, SB
                else:                       # the chunk's blocks (MMA-Sim's GST-FDPA)
                    kb = K // SA.shape[-1]
                    sa, sb = SA[..., i // kb:(i + L) // kb], SB[..., i // kb:(i + L) // kb]
                if sa.shape[-1] != op.n_scales:
                    raise ValueError(f"alpha/beta: {SA.shape[-1]} scales for K={K}, expected blocks of {op.block}")
            acc = op.dpa(a_ch, b_ch, acc, sa, sb)
        out = torch.from_numpy(np.ascontiguousarray(acc).view(
            {1: np.uint8, 2: np.int16, 4: np.int32, 8: np.int64}[acc.dtype.itemsize]))
        out = out.view(self.d_type) if self.d_type.is_floating_point else out
        return out.to(c.device) if c.device.type != "cpu" else out

    def _call(self, A: Any, B: Any, C: Any, alpha: Any = None, beta: Any = None) -> Any:
        m, n = C.shape
        a_vec = A[:, None, :].expand(-1, n, -1)
        b_vec = B.T[None, :, :].expand(m, -1, -1)
        if alpha is None:
            return self._dpa(a_vec, b_vec, C)
        return self._dpa(a_vec, b_vec, C, alpha[:, None, :].expand(-1, n, -1), beta.T[None, :, :].expand(m, -1, -1))

    def __repr__(self) -> str:
        return f"{type(self).__module__}.{type(self).__qualname__}({self.arch!r}, " \
               f"{getattr(self, 'shape_and_type', getattr(self, 'suffix', ''))!r}) -> {self._row_op.name}"


class _Plain(_Op):
    def dpa(self, a: Any, b: Any, c: Any) -> Any:
        """d = c + a . b over the last axis of a and b (any K, chained as MMA-Sim chains it)."""
        return self._dpa(a, b, c)

    def __call__(self, A: Any, B: Any, C: Any) -> Any:
        """D = A @ B + C for A (m, K), B (K, n), C (m, n)."""
        return self._call(A, B, C)


class _Scaled(_Op):
    def dpa(self, a: Any, b: Any, c: Any, alpha: Any, beta: Any) -> Any:
        """d = c + sum over blocks of alpha * beta * (a . b in the block)."""
        return self._dpa(a, b, c, alpha, beta)

    def __call__(self, A: Any, B: Any, C: Any, alpha: Any, beta: Any) -> Any:
        """D for A (m, K), B (K, n), C (m, n), alpha (m, K/block), beta (K/block, n)."""
        return self._call(A, B, C, alpha, beta)


def _nv_arch(arch: str, what: str) -> str:
    if arch not in _NV_ARCH:
        raise UnsupportedError(f"Unsupported architecture {arch} for {what}. "
                               f"Supported architectures: {list(_NV_ARCH)}")
    return _NV_ARCH[arch]


class MMA(_Plain):
    """mma.sync: MMA(arch, "m16n8k16.f32.f16.f16.f32") or with kind::f8f6f4."""

    def __init__(self, arch: str, shape_and_type: str):
        aid = _nv_arch(arch, "mma")
        q = shape_and_type.split(".")
        self.kind = None
        if len(q) == 6:
            shape, kind, d, a, b, c = q
            self.kind = kind.removeprefix("kind::")
        elif len(q) == 5:
            shape, d, a, b, c = q
        else:
            raise UnsupportedError(f"Unsupported shape_and_type {shape_and_type} for mma on {arch} architecture.")
        self.arch, self.shape_and_type = arch, shape_and_type
        self.m, self.n, self.k = _shape(shape)
        self.a_type, self.b_type, self.c_type, self.d_type = (_NV_DTYPE[a], _NV_DTYPE[b], _NV_DTYPE[c],
                                                              _NV_DTYPE[d])
        self.a_type_ptx, self.b_type_ptx = a, b
        self._row_op = _row(aid, f"mma.{shape}.{d}.{a}.{b}.{c}", f"mma {shape_and_type} on {arch}")
        L = _MMA_L_MAX_BYTES[arch] // self.a_type.itemsize
        if arch == "Turing" and shape == "m8n8k4":
            L = 4   # MMA-Sim: Volta's settings for Volta's shapes
        self._L_max = L


class MMABlockScale(_Scaled):
    """mma.sync block_scale (RTX Blackwell): MMABlockScale(arch, "m16n8k32.kind::mxf8f6f4.block32.f32.e4m3.e4m3.f32.ue8m0")."""

    def __init__(self, arch: str, shape_and_type: str):
        aid = _nv_arch(arch, "block scaled mma")
        try:
            shape, kind, block, d, a, b, c, s = shape_and_type.split(".")
        except ValueError:
            raise UnsupportedError(f"Unsupported shape_and_type {shape_and_type} for block scaled mma") from None
        self.arch, self.shape_and_type = arch, shape_and_type
        self.m, self.n, self.k = _shape(shape)
        self.kind = kind.removeprefix("kind::")
        self.block_size = int(block.removeprefix("block"))
        self.packing = 2 if self.kind in ("mxf4", "mxf4nvf4") else 1
        self.a_type, self.b_type, self.c_type, self.d_type = (_NV_DTYPE[a], _NV_DTYPE[b], _NV_DTYPE[c],
                                                              _NV_DTYPE[d])
        self.s_type = _NV_DTYPE[s]
        self.a_type_ptx, self.b_type_ptx = a, b
        self._row_op = _row(aid, f"mma.block_scale.{shape}.{block}.{d}.{a}.{b}.{c}.{s}",
                            f"block scaled mma {shape_and_type} on {arch}")
        self._L_max = 64 if self.k == 64 else 32


class WGMMA(_Plain):
    """wgmma (Hopper): WGMMA(arch, "m64n{N}k16.f32.bf16.bf16"), any N -> the N=8 row."""

    def __init__(self, arch: str, shape_and_type: str):
        if arch != "Hopper":
            raise UnsupportedError(f"Unsupported architecture {arch} for wgmma. Supported architectures: ['Hopper']")
        try:
            shape, d, a, b = shape_and_type.split(".")
        except ValueError:
            raise UnsupportedError(f"Unsupported shape_and_type {shape_and_type} for wgmma") from None
        self.arch, self.shape_and_type = arch, shape_and_type
        self.m, self.n, self.k = _shape(shape)
        self.a_type, self.b_type = _NV_DTYPE[a], _NV_DTYPE[b]
        self.c_type = self.d_type = _NV_DTYPE[d]
        self.a_type_ptx, self.b_type_ptx = a, b
        self._row_op = _row("hopper", f"wgmma.m64n8k{self.k}.{d}.{a}.{b}", f"wgmma {shape_and_type}")
        self._L_max = 32 // self.a_type.itemsize


class TCGen05MMA(_Plain):
    """tcgen05.mma (Blackwell): TCGen05MMA(arch, "m128n{N}k16.kind::f16.f32.bf16.bf16") -> the M=64, N=8 row."""

    def __init__(self, arch: str, shape_and_type: str):
        if arch != "Blackwell":
            raise UnsupportedError(f"Unsupported architecture {arch} for tcgen05.mma. "
                                   f"Supported architectures: ['Blackwell']")
        try:
            shape, kind, d, a, b = shape_and_type.split(".")
        except ValueError:
            raise UnsupportedError(f"Unsupported shape_and_type {shape_and_type} for tcgen05.mma") from None
        self.arch, self.shape_and_type = arch, shape_and_type
        self.m, self.n, self.k = _shape(shape)
        self.kind = kind.removeprefix("kind::")
        self.a_type, self.b_type = _NV_DTYPE[a], _NV_DTYPE[b]
        self.c_type = self.d_type = _NV_DTYPE[d]
        self.a_type_ptx, self.b_type_ptx = a, b
        self._row_op = _row("blackwell", f"tcgen05.mma.m64n8k{self.k}.{d}.{a}.{b}", f"tcgen05.mma {shape_and_type}")
        self._L_max = 32 // self.a_type.itemsize


class TCGen05MMABlockScale(_Scaled):
    """tcgen05.mma block_scale (Blackwell): (arch, "m128n{N}k32.kind::mxf8f6f4.block32.f32.e4m3.e4m3.ue8m0")."""

    def __init__(self, arch: str, shape_and_type: str):
        if arch != "Blackwell":
            raise UnsupportedError(f"Unsupported architecture {arch} for block scaled tcgen05.mma. "
                                   f"Supported architectures: ['Blackwell']")
        try:
            shape, kind, block, d, a, b, s = shape_and_type.split(".")
        except ValueError:
            raise UnsupportedError(f"Unsupported shape_and_type {shape_and_type} for block scaled tcgen05.mma") \
                from None
        self.arch, self.shape_and_type = arch, shape_and_type
        self.m, self.n, self.k = _shape(shape)
        self.kind = kind.removeprefix("kind::")
        self.block_size = int(block.removeprefix("block"))
        self.packing = 2 if self.kind in ("mxf4", "mxf4nvf4") else 1
        self.a_type, self.b_type = _NV_DTYPE[a], _NV_DTYPE[b]
        self.c_type = self.d_type = _NV_DTYPE[d]
        self.s_type = _NV_DTYPE[s]
        self.a_type_ptx, self.b_type_ptx = a, b
        self._row_op = _row("blackwell", f"tcgen05.mma.block_scale.m128n8k{self.k}.{block}.{d}.{a}.{b}.{s}",
                            f"block scaled tcgen05.mma {shape_and_type}")
        self._L_max = 64 if self.k == 64 else 32


class MFMA(_Plain):
    """AMD mfma: MFMA(arch, suffix), e.g. MFMA("CDNA3", "f32_16x16x16_f16")."""

    def __init__(self, arch: str, suffix: str):
        if arch not in _AMD_ARCH:
            raise UnsupportedError(f"Unsupported architecture {arch} for mfma. "
                                   f"Supported architectures: {list(_AMD_ARCH)}")
        self.arch, self.suffix = arch, suffix
        self._row_op = _row(_AMD_ARCH[arch], f"mfma.{suffix}", f"mfma {suffix} on {arch}")
        r = self._row_op
        self.m, self.n, self.k = r.m, r.n, r.k
        q = suffix.split("_")
        if len(q) == 4 and q[-1] in ("fp8", "bf8"):
            a, b = q[2], q[3]
        elif len(q) == 2 or (len(q) == 3 and q[-1] == "1k"):
            ab = q[1]
            a = "bf16" if ab.endswith("bf16") else ab[-3:]
            b = a
        elif len(q) == 3:
            a = b = q[2]
        else:
            a = b = q[-1]
        self.a_type, self.b_type = _AMD_DTYPE[a], _AMD_DTYPE[b]
        self.c_type = self.d_type = _AMD_DTYPE[q[0]]
        # MMA-Sim's chunk length: E-FDPA (CDNA1) 4 f16 / 2 bf16; TR-FDPA (CDNA3) 4 xf32 / 8 f16, bf16;
        # GTR-FDPA 16; FMA and FTZ-Mul-Add run sequentially, so the instruction's K serves
        fam = r.row["family"]
        if fam == "E-FDPA":
            self._L_max = 4 if a == "f16" else 2
        elif fam == "TR-FDPA":
            self._L_max = 4 if a == "xf32" else 8
        elif fam == "GTR-FDPA":
            self._L_max = 16
        else:
            self._L_max = r.k


nv_ptx = types.SimpleNamespace(MMA=MMA, MMABlockScale=MMABlockScale, WGMMA=WGMMA, TCGen05MMA=TCGen05MMA,
                               TCGen05MMABlockScale=TCGen05MMABlockScale)
amd = types.SimpleNamespace(MFMA=MFMA)
