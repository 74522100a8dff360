"""The drop-in mmafuzz.mmasim against MMA-Sim 2.1.1 itself (needs torch and
mmasim, so it skips in CI, where neither is installed): for every canonical
shape MMA-Sim lists, the same classes, attributes, and results on random
finite inputs, at the instruction's K, at twice it, and at a K that leaves
a shorter last chunk; __call__ as well.  Expected values: MMA-Sim's outputs.
No difference is expected (docs/python.md, "Where mmafuzz and MMA-Sim differ": none
since the model adopted 2.1.1's rules); a difference fails the test."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the drop-in takes torch tensors; torch is not installed")
mmasim = pytest.importorskip("mmasim", reason="MMA-Sim 2.1.1 (pip install mmasim==2.1.1) is not installed")
from mmasim import amd as ref_amd  # noqa: E402
from mmasim import nv_ptx as ref_nv  # noqa: E402
from mmasim.amd import isa_mfma  # noqa: E402
from mmasim.nv_ptx import isa_mma, isa_tcgen05mma, isa_wgmma  # noqa: E402

from mmafuzz import mmasim as mm  # noqa: E402


def canonical_cases():
    out = []
    for arch, lst in isa_mma.mma_shape_and_type.items():
        out += [("MMA", arch, s) for s in lst]
    for arch, lst in isa_mma.mma_block_scale_shape_and_type.items():
        out += [("MMABlockScale", arch, s) for s in lst]
    out += [("WGMMA", "Hopper", s) for s in isa_wgmma.wgmma_shape_and_type["Hopper"] if s.startswith("m64n8k")]
    out += [("TCGen05MMA", "Blackwell", s) for s in isa_tcgen05mma.tcgen05mma_shape_and_type["Blackwell"]
            if s.startswith(("m64n8k", "m128n8k"))]
    out += [("TCGen05MMABlockScale", "Blackwell", s)
            for s in isa_tcgen05mma.tcgen05mma_block_scale_shape_and_type["Blackwell"] if s.startswith("m128n8k")]
    for arch, lst in isa_mfma.arch_mfma_suffix.items():
        out += [("MFMA", arch, s) for s in lst]
    return out


# Every canonical shape is expected to agree bit for bit: mmafuzz follows
# MMA-Sim 2.1.1's rules (docs/findings.md), and docs/python.md's list of rules
# where the two differ is empty.
CASES = canonical_cases()


def random_operand(g, dtype, shape, ptx=None, packing=1):
    if dtype == torch.uint8:   # fp6/fp4 one per byte (fp4 in bits 5:2) or two fp4 per byte
        if packing == 2:
            return torch.randint(0, 256, shape[:-1] + (shape[-1] // 2,), generator=g, dtype=torch.uint8)
        x = torch.randint(0, 64 if ptx != "e2m1" else 16, shape, generator=g, dtype=torch.uint8)
        return x << 2 if ptx == "e2m1" else x
    x = torch.randn(shape, generator=g, dtype=torch.float32)
    return x.to(dtype)


def attrs(op):
    return {k: getattr(op, k) for k in ("m", "n", "k", "a_type", "b_type", "c_type", "d_type", "kind",
                                         "block_size", "packing", "s_type") if hasattr(op, k)}


@pytest.mark.parametrize("cls,arch,st", CASES, ids=lambda v: str(v))
def test_same_as_mmasim(cls, arch, st):
    ns = ref_amd if cls == "MFMA" else ref_nv
    ref = getattr(ns, cls)(arch, st)
    ours = getattr(mm.amd if cls == "MFMA" else mm.nv_ptx, cls)(arch, st)
    assert attrs(ours) == attrs(ref)
    g = torch.Generator().manual_seed(3)
    scaled = cls.endswith("BlockScale")
    packing = getattr(ref, "packing", 1)
    # a ragged K (a shorter last chunk) where MMA-Sim takes one: not on block-scaled rows, nor on AMD's
    # FTZ-Mul-Add (MMA-Sim indexes K in groups of P)
    ks = [ref.k, 2 * ref.k] + ([ref.k + ref.k // 2] if not scaled and cls != "MFMA" else [])
    for K in ks:
        n = 300
        a = random_operand(g, ref.a_type, (n, K), getattr(ref, "a_type_ptx", None), packing)
        b = random_operand(g, ref.b_type, (n, K), getattr(ref, "b_type_ptx", None), packing)
        c = random_operand(g, ref.c_type, (n,))
        args = (a, b, c)
        if scaled:
            S = K // ref.block_size if ref.k == 64 else 1
            e = torch.randint(120, 134, (n, S), generator=g, dtype=torch.uint8)
            if ref.s_type == torch.float8_e8m0fnu:
                alpha, beta = e.view(torch.float8_e8m0fnu), e.flip(0).view(torch.float8_e8m0fnu)
            else:
                alpha = beta = torch.full((n, S), 0x38, dtype=torch.uint8).view(torch.float8_e4m3fn)
            args += (alpha, beta)
        want = ref.dpa(*args)
        got = ours.dpa(*args)
        assert got.dtype == want.dtype and got.shape == want.shape
        w = want.view({2: torch.int16, 4: torch.int32, 8: torch.int64}[want.element_size()]).numpy()
        o = got.view({2: torch.int16, 4: torch.int32, 8: torch.int64}[got.element_size()]).numpy()
        bad = np.nonzero(w != o)[0]
        assert len(bad) == 0, f"K={K}: {len(bad)} of {n} differ, first case {bad[0]}: {o[bad[0]]:x} vs {w[bad[0]]:x}"
    # __call__ on one tile
    if not scaled:
        A = random_operand(g, ref.a_type, (ref.m if ref.m <= 64 else 64, ref.k), getattr(ref, "a_type_ptx", None))
        B = random_operand(g, ref.b_type, (ref.k, 8), getattr(ref, "b_type_ptx", None)).T.contiguous().T
        C = random_operand(g, ref.c_type, (A.shape[0], 8))
        assert torch.equal(ours(A, B, C).view(torch.uint8), ref(A, B, C).view(torch.uint8))
