"""Tiles: Instruction.mma against Instruction.dpa element by element (the
tile path must give every output what the one-case path gives it), and
matmul against chained mma calls written out here: tiles of the
instruction's M x N, K in steps of the instruction's K, each step's D the
next step's C."""
import numpy as np
import pytest

import mmafuzz

ROWS = [
    "hopper/mma.m16n8k16.f32.f16.f16.f32",
    "hopper/wgmma.m64n8k16.f32.bf16.bf16",
    "ampere/mma.m16n8k8.f16.f16.f16.f16",
    "cdna2/mfma.f32_16x16x16f16",
    "hopper/mma.m16n8k32.f32.e4m3.e5m2.f32",
]


def random_bits(rng, fmt, shape, finite_share=0.9):
    """Random bit patterns of a format; most of them small finite values so
    that sums neither all overflow nor all vanish."""
    info = mmafuzz._FORMATS[fmt]
    cont = mmafuzz._container(fmt)
    x = rng.integers(0, 1 << info["bits"], shape, dtype=np.uint64)
    if info["exp_bits"] > 1:
        # exponent near the bias for most values
        e = rng.integers(info["bias"] - 4, info["bias"] + 4, shape, dtype=np.uint64)
        frac = rng.integers(0, 1 << info["frac_bits"], shape, dtype=np.uint64)
        shift = info["bits"] - 1 - info["exp_bits"]
        sign = rng.integers(0, 2, shape, dtype=np.uint64) << np.uint64(info["bits"] - 1)
        tame = sign | (e << np.uint64(shift)) | (frac << np.uint64(shift - info["frac_bits"]))
        x = np.where(rng.random(shape) < finite_share, tame, x)
    return x.astype(cont)


@pytest.mark.parametrize("name", ROWS)
def test_mma_equals_dpa_per_element(name):
    op = mmafuzz.Instruction(name)
    rng = np.random.default_rng(11)
    T, m, n, k = 3, op.m, op.n, op.k
    A = random_bits(rng, op.a_format, (T, m, k))
    B = random_bits(rng, op.b_format, (T, k, n))
    C = random_bits(rng, op.c_format, (T, m, n))
    D = op.mma(A, B, C)
    assert D.shape == (T, m, n)
    a = np.broadcast_to(A[:, :, None, :], (T, m, n, k))
    b = np.broadcast_to(np.swapaxes(B, 1, 2)[:, None, :, :], (T, m, n, k))
    assert np.array_equal(D, op.dpa(a, b, C))


@pytest.mark.parametrize("name", ROWS)
def test_matmul_equals_chained_mma(name):
    op = mmafuzz.Instruction(name)
    if op.c_format != op.d_format:
        pytest.skip(f"{name}: C and D formats differ, so matmul refuses it (tested in test_errors)")
    rng = np.random.default_rng(5)
    m, n, k = op.m, op.n, op.k
    M, N, K = 2 * m + 3, 3 * n - 1, 3 * k     # not multiples of M and N: padded tiles
    A = random_bits(rng, op.a_format, (M, K))
    B = random_bits(rng, op.b_format, (K, N))
    C = random_bits(rng, op.c_format, (M, N))
    D = op.matmul(A, B, C)
    # by hand: pad with zero bits, walk the tiles and K
    Mp, Np = -(-M // m) * m, -(-N // n) * n
    Ap = np.zeros((Mp, K), A.dtype); Ap[:M] = A
    Bp = np.zeros((K, Np), B.dtype); Bp[:, :N] = B
    acc = np.zeros((Mp, Np), C.dtype); acc[:M, :N] = C
    for s in range(K // k):
        for i in range(0, Mp, m):
            for j in range(0, Np, n):
                acc[i:i + m, j:j + n] = op.mma(Ap[i:i + m, s * k:(s + 1) * k], Bp[s * k:(s + 1) * k, j:j + n],
                                               acc[i:i + m, j:j + n])
    assert np.array_equal(D, acc[:M, :N])
    # a batch of two matmuls is two matmuls
    D2 = op.matmul(np.stack([A, A]), B, np.stack([C, C]), threads=2)
    assert np.array_equal(D2[0], D) and np.array_equal(D2[1], D)
