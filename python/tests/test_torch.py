"""PyTorch tensors through the native API (skips without torch): their bits
are viewed, D comes back as a tensor of D's dtype, and the results are the
bits the NumPy path gives for the same bits (the vector tests hold the NumPy
path against recorded outputs)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (the NumPy tests cover the arithmetic)")
pytest.importorskip("ml_dtypes", reason="bf16/fp8 tensors need ml_dtypes for their NumPy view")

import mmafuzz  # noqa: E402


@pytest.mark.parametrize("name,dtype", [
    ("hopper/wgmma.m64n8k16.f32.bf16.bf16", torch.bfloat16),
    ("hopper/mma.m16n8k32.f32.e4m3.e5m2.f32", None),
    ("hopper/mma.m16n8k16.f16.f16.f16.f16", torch.float16),
])
def test_tensors_match_numpy_bits(name, dtype):
    op = mmafuzz.Instruction(name)
    g = torch.Generator().manual_seed(1)
    n, K = 500, op.k
    if dtype is None:   # fp8: a in e4m3, b in e5m2
        a = torch.randn(n, K, generator=g).to(torch.float8_e4m3fn)
        b = torch.randn(n, K, generator=g).to(torch.float8_e5m2)
    else:
        a = torch.randn(n, K, generator=g).to(dtype)
        b = torch.randn(n, K, generator=g).to(dtype)
    cdt = torch.float32 if op.c_format == "f32" else torch.float16
    c = torch.randn(n, generator=g).to(cdt)
    d = op.dpa(a, b, c)
    assert isinstance(d, torch.Tensor) and d.dtype == (torch.float32 if op.d_format == "f32" else torch.float16)
    iv = {1: torch.uint8, 2: torch.int16, 4: torch.int32}
    uv = {1: np.uint8, 2: np.uint16, 4: np.uint32}
    bits = lambda t: t.view(iv[t.element_size()]).numpy().view(uv[t.element_size()])
    want = op.dpa(bits(a), bits(b), bits(c))
    assert np.array_equal(bits(d), want)
    # int tensors are bits, and D then bits too
    db = op.dpa(a.view(iv[a.element_size()]), b.view(iv[b.element_size()]), c.view(iv[c.element_size()]))
    assert isinstance(db, torch.Tensor) and np.array_equal(db.numpy().view(want.dtype), want)


def test_packed_fp4_is_refused():
    if not hasattr(torch, "float4_e2m1fn_x2"):
        pytest.skip("this torch has no float4_e2m1fn_x2")
    op = mmafuzz.Instruction("blackwell/tcgen05.mma.m64n8k32.f32.e2m1.e2m1")
    x = torch.zeros(1, 16, dtype=torch.uint8).view(torch.float4_e2m1fn_x2)
    with pytest.raises(TypeError, match="packed torch.float4_e2m1fn_x2 is not accepted"):
        op.dpa(x, x, torch.zeros(1))


def test_cuda_round_trip():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device: CUDA tensors are copied to the host and back")
    op = mmafuzz.Instruction("hopper/mma.m16n8k16.f32.f16.f16.f32")
    a = torch.ones(4, 16, dtype=torch.float16, device="cuda")
    d = op.dpa(a, a, torch.zeros(4, device="cuda"))
    assert d.device.type == "cuda" and torch.equal(d.cpu(), torch.full((4,), 16.0))
