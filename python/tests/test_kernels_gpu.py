"""On a GPU (marker ``gpu``; skipped without one, failed without one when
MMAFUZZ_REQUIRE_GPU=1): whole calls recorded anew and checked against the
package's kernel table, and ``mmafuzz.reproduce`` against the GPU's own bits
on fresh random tensors."""
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch") if os.environ.get("MMAFUZZ_REQUIRE_GPU") != "1" else __import__("torch")

import mmafuzz
from mmafuzz import kernels as K
from mmafuzz import recording as R

pytestmark = pytest.mark.gpu

if not torch.cuda.is_available():
    if os.environ.get("MMAFUZZ_REQUIRE_GPU") == "1":
        raise RuntimeError("MMAFUZZ_REQUIRE_GPU=1 but PyTorch sees no CUDA GPU")
    pytest.skip("no CUDA GPU: the kernel table is checked against shipped recordings in test_kernels.py",
                allow_module_level=True)

GPU = torch.cuda.get_device_name(0)
CALLS = [("torch.matmul", "f16", "f16", 128, 128, 4096), ("torch.matmul", "bf16", "bf16", 128, 64, 4096),
         ("torch.matmul", "f16", "f16", 64, 64, 16384), ("torch.matmul", "tf32", "f32", 64, 128, 4096),
         ("torch._scaled_mm", "e4m3", "f32", 128, 64, 4096), ("torch.nn.functional.linear", "bf16", "bf16", 128, 128, 16384)]


def _known(op, a, d, m, n, k):
    try:
        return K.lookup(op, a, d, m, n, k, None, GPU)
    except LookupError:
        pytest.skip(f"the kernel table has no {op} {a} {m}x{n}x{k} on {GPU}")


@pytest.mark.parametrize("op,a,d,m,n,k", CALLS)
def test_rerecord_and_check(op, a, d, m, n, k):
    row = _known(op, a, d, m, n, k)
    h, arr = R.record(op, m, n, k, a, d, seed=7, store_operands=False)   # a new seed: new operands
    r = K.check_recording((h, dict(arr)), K._model_text(row))
    assert r["equal"] == r["outputs"], (h["kernels"], r)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_reproduce_matches_torch_matmul(dtype):
    _known("torch.matmul", {"float16": "f16", "bfloat16": "bf16"}[dtype], {"float16": "f16", "bfloat16": "bf16"}[dtype],
           128, 128, 4096)
    g = torch.Generator(device="cuda").manual_seed(3)
    A = torch.randn(128, 4096, device="cuda", generator=g).to(getattr(torch, dtype))
    B = torch.randn(4096, 128, device="cuda", generator=g).to(getattr(torch, dtype))
    D = torch.matmul(A, B)
    E = mmafuzz.reproduce(torch.matmul, A, B)
    assert E.dtype == D.dtype and E.device == D.device
    assert torch.equal(D.view(torch.int16), E.view(torch.int16))


@pytest.mark.parametrize("op,a,d,m,n,k", [("torch.matmul", "f16", "f16", 128, 128, 4096),
                                          ("torch.matmul", "bf16", "bf16", 128, 64, 4096),
                                          ("torch._scaled_mm", "e4m3", "f32", 128, 64, 4096)])
def test_discovery_with_probes_finds_the_table_model(op, a, d, m, n, k):
    """Discovery from constructed inputs on the GPU names the model the table
    holds for the call (fitted to a recording with random operands), checks
    it on fresh calls, and spends at most 10 s in GPU calls."""
    from mmafuzz import discover as D
    row = _known(op, a, d, m, n, k)
    r = D.discover(D.torch_device(op, a, d), m, n, k, a, d)
    assert r["from_probes"], D.describe(r)
    assert r["reproduced"] == r["outputs"] > 0, D.describe(r)
    assert K._model_text(row) in r["models"], (K._model_text(row), r["models"])
    assert r["device_s"] < 10, r["device_s"]
