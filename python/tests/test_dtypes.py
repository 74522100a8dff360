"""Round trips through every dtype: a value x of each operand format, given as
its real dtype (NumPy, ml_dtypes) and as bits, goes through a row as
d = x * 1 + 0 (the other products zero).  The expected d is x converted to
D's dtype by NumPy/ml_dtypes, not by this package: every finite value of the
narrow formats is representable in D's format, so the instruction gives it
exactly.  D comes back as D's dtype when C is real and as bits when C is
bits, and both hold the same bits."""
import numpy as np
import pytest

import mmafuzz

mld = pytest.importorskip("ml_dtypes", reason="ml_dtypes is needed for the narrow dtypes")

# (format, its dtype, a row whose A and B have that format and whose C and D
#  are f32 or f64)
CASES = [
    ("f16", np.float16, "hopper/mma.m16n8k16.f32.f16.f16.f32"),
    ("bf16", mld.bfloat16, "hopper/mma.m16n8k16.f32.bf16.bf16.f32"),
    ("tf32", np.float32, "hopper/mma.m16n8k8.f32.tf32.tf32.f32"),
    ("e4m3", mld.float8_e4m3fn, "hopper/mma.m16n8k32.f32.e4m3.e4m3.f32"),
    ("e5m2", mld.float8_e5m2, "hopper/mma.m16n8k32.f32.e5m2.e5m2.f32"),
    ("e4m3fnuz", mld.float8_e4m3fnuz, "cdna3/mfma.f32_16x16x32_fp8_fp8"),
    ("e5m2fnuz", mld.float8_e5m2fnuz, "cdna3/mfma.f32_16x16x32_bf8_bf8"),
    ("e3m2", mld.float6_e3m2fn, "blackwell/tcgen05.mma.m64n8k32.f32.e3m2.e3m2"),
    ("e2m3", mld.float6_e2m3fn, "blackwell/tcgen05.mma.m64n8k32.f32.e2m3.e2m3"),
    ("e2m1", mld.float4_e2m1fn, "blackwell/tcgen05.mma.m64n8k32.f32.e2m1.e2m1"),
    ("f64", np.float64, "hopper/mma.m16n8k16.f64.f64.f64.f64"),
    ("f32", np.float32, "cdna1/mfma.f32_16x16x4f32"),
]


def finite_values(dt, fmt):
    """Every finite nonzero value of a format of 16 bits or fewer; a sample
    of normal values (and the extremes) for the wider ones."""
    dt = np.dtype(dt)
    if dt.itemsize <= 2:
        bits = np.arange(1 << (8 * dt.itemsize), dtype={1: np.uint8, 2: np.uint16}[dt.itemsize])
        if fmt in ("e3m2", "e2m3"):
            bits = bits[bits < 64]
        if fmt == "e2m1":
            bits = bits[bits < 16]
        x = bits.view(dt)
    else:
        rng = np.random.default_rng(7)
        x = rng.standard_normal(4096).astype(dt) * dt.type(1 << 20)
        x = np.concatenate([x, [np.finfo(dt).max, -np.finfo(dt).max, np.finfo(dt).tiny]]).astype(dt)
    if fmt == "tf32":   # tf32 keeps 10 fraction bits: the carrier's low 13 bits are ignored
        x = (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    with np.errstate(invalid="ignore"):   # NaN patterns
        x64 = x.astype(np.float64)
    return x[np.isfinite(x64) & (x64 != 0)]


@pytest.mark.parametrize("fmt,dt,name", CASES, ids=[c[0] for c in CASES])
def test_round_trip(fmt, dt, name):
    op = mmafuzz.Instruction(name)
    assert op.a_format == fmt, op.a_format
    x = finite_values(dt, fmt)
    n, K = len(x), op.k
    a = np.zeros((n, K), dt)
    a[:, 0] = x
    assert op.b_format == fmt
    b = np.zeros((n, K), dt)
    b[:, 0] = np.ones(1, dt)[0]
    ddt = {"f32": np.float32, "f64": np.float64}[op.d_format]
    c = np.zeros(n, {"f32": np.float32, "f64": np.float64}[op.c_format])
    want = x.astype(np.float64).astype(ddt)   # exact: every such x is a D value
    d = op.dpa(a, b, c)
    assert d.dtype == ddt
    assert np.array_equal(d.view(want.dtype), want), (x[d != want][:5], d[d != want][:5])
    # the same through bits, and D as bits
    cont = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
    ab = a.view(cont[np.dtype(dt).itemsize])
    bb = b.view(cont[np.dtype(dt).itemsize])
    cb = c.view(cont[c.dtype.itemsize])
    db = op.dpa(ab, bb, cb)
    assert db.dtype == cont[np.dtype(ddt).itemsize]
    assert np.array_equal(db, d.view(db.dtype))
    # signed views of the same width are bits too
    sb = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}
    ds = op.dpa(ab.view(sb[ab.itemsize]), bb.view(sb[bb.itemsize]), cb.view(sb[cb.itemsize]))
    assert np.array_equal(ds, db)


def test_ue8m0_scales_round_trip():
    """A scale s of ue8m0 (2^(e-127)) on a block-scaled row: d = (1 * s) * (1 *
    1) + 0 = s, in f32.  Expected: ml_dtypes' float8_e8m0fnu -> float32."""
    op = mmafuzz.Instruction("blackwell/tcgen05.mma.block_scale.m128n8k32.block32.f32.e4m3.e4m3.ue8m0")
    assert op.scale_format == "ue8m0" and op.n_scales == 1
    e = np.arange(1, 255, dtype=np.uint8)            # 2^-126 .. 2^127: normal binary32 values
    s = e.view(mld.float8_e8m0fnu)
    n = len(s)
    a = np.zeros((n, 32), mld.float8_e4m3fn)
    b = np.zeros((n, 32), mld.float8_e4m3fn)
    a[:, 0] = b[:, 0] = mld.float8_e4m3fn(1.0)
    one = np.ones((n, 1), mld.float8_e8m0fnu)
    d = op.dpa(a, b, np.zeros(n, np.float32), scale_a=s[:, None], scale_b=one)
    assert np.array_equal(d, s.astype(np.float32))
    # bits in, bits out
    db = op.dpa(a.view(np.uint8), b.view(np.uint8), np.zeros(n, np.uint32), e[:, None], one.view(np.uint8))
    assert np.array_equal(db, d.view(np.uint32))


def test_ue4m3_scales_are_bits():
    op = mmafuzz.Instruction("blackwell/tcgen05.mma.block_scale.m128n8k64.block16.f32.e2m1.e2m1.ue4m3")
    a = np.zeros((1, 64), np.uint8)
    a[0, 0] = 0x2               # e2m1 1.0
    b = a.copy()
    sa = np.full((1, 4), 0x38, np.uint8)  # ue4m3 1.0 (e4m3 with bias 7)
    sb = sa.copy()
    d = op.dpa(a, b, np.zeros(1, np.uint32), sa, sb)
    assert d[0] == 0x3F800000, hex(d[0])      # 1.0f, by hand: 1 * 1 * 1 * 1
    with pytest.raises(TypeError, match="ue4m3 has no dtype"):
        op.dpa(a, b, np.zeros(1, np.uint32), sa.view(mld.float8_e4m3fn), sb)
