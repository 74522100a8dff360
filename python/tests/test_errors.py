"""Error cases: every bad input is a Python exception with a clear message,
never a crash or a silent conversion; check() counts failures without
raising, and raises on unreadable input."""
import gzip

import numpy as np
import pytest

import mmafuzz

F16 = "hopper/mma.m16n8k16.f32.f16.f16.f32"


def test_unknown_instruction_names_the_closest():
    with pytest.raises(mmafuzz.InstructionError, match=r"unknown instruction 'hopper/mma.m16n8k16.f32.f16.f16.f3'"
                                                         r".*closest: hopper/mma.m16n8k16.f32.f16.f16.f32"):
        mmafuzz.Instruction("hopper/mma.m16n8k16.f32.f16.f16.f3")
    with pytest.raises(ValueError):   # InstructionError is a ValueError
        mmafuzz.eval("nope", "c=0")


def test_instructions_lists_rows():
    rows = mmafuzz.instructions("hopper/mma.m16n8k16.*")
    assert rows and all(r["name"].startswith("hopper/mma.m16n8k16.") for r in rows)
    r = [r for r in rows if r["name"] == F16][0]
    assert (r["m"], r["n"], r["k"], r["a"], r["d"], r["family"]) == (16, 8, 16, "f16", "f32", "T-FDPA")
    assert r["status"] in ("hypothesis", "peer", "hw", "peer+hw")
    assert mmafuzz.instructions("no-such-*") == []


def test_wrong_dtype_is_never_converted():
    op = mmafuzz.Instruction(F16)
    a = np.zeros((2, 16), np.float32)
    with pytest.raises(TypeError, match="dtype float32 is not the format f16"):
        op.dpa(a, np.zeros((2, 16), np.float16), np.zeros(2, np.float32))
    with pytest.raises(TypeError, match="bits of f16 go in uint16"):
        op.dpa(np.zeros((2, 16), np.uint8), np.zeros((2, 16), np.float16), np.zeros(2, np.float32))
    with pytest.raises(TypeError, match="float64 is not the format f32"):
        op.dpa(np.zeros((2, 16), np.float16), np.zeros((2, 16), np.float16), [0.0, 0.0])


def test_bits_above_a_narrow_format():
    op = mmafuzz.Instruction("blackwell/tcgen05.mma.m64n8k32.f32.e3m2.e3m2")
    a = np.zeros((1, 32), np.uint8)
    a[0, 5] = 0x40
    with pytest.raises(ValueError, match=r"bits set above the 6 bits of e3m2 \(first at index \(0, 5\): 0x40\)"):
        op.dpa(a, np.zeros((1, 32), np.uint8), np.zeros(1, np.uint32))


def test_wrong_shapes():
    op = mmafuzz.Instruction(F16)
    h = np.float16
    with pytest.raises(ValueError, match=r"a: shape \(2, 8\), expected \(..., 16\)"):
        op.dpa(np.zeros((2, 8), h), np.zeros((2, 16), h), np.zeros(2, np.float32))
    with pytest.raises(ValueError, match="do not broadcast"):
        op.dpa(np.zeros((2, 16), h), np.zeros((3, 16), h), np.zeros(2, np.float32))
    with pytest.raises(ValueError, match=r"B: shape \(8, 16\), expected \(..., 16, 8\)"):
        op.mma(np.zeros((16, 16), h), np.zeros((8, 16), h), np.zeros((16, 8), np.float32))
    with pytest.raises(ValueError, match="do not chain"):
        op.matmul(np.zeros((4, 32), h), np.zeros((16, 4), h), np.zeros((4, 4), np.float32))


def test_scales():
    op = mmafuzz.Instruction(F16)
    z = np.zeros((1, 16), np.float16)
    with pytest.raises(ValueError, match="not block-scaled"):
        op.dpa(z, z, np.zeros(1, np.float32), scale_a=np.zeros((1, 1), np.uint8))
    bs = mmafuzz.Instruction("blackwell/tcgen05.mma.block_scale.m128n8k32.block32.f32.e4m3.e4m3.ue8m0")
    z8 = np.zeros((1, 32), np.uint8)
    with pytest.raises(ValueError, match="scale_a and scale_b are required"):
        bs.dpa(z8, z8, np.zeros(1, np.uint32))
    with pytest.raises(ValueError, match="block-scaled; matmul"):
        bs.matmul(z8, z8.T, np.zeros((1, 1), np.uint32))


def test_matmul_refusals():
    op = mmafuzz.Instruction(F16)
    h = np.float16
    with pytest.raises(ValueError, match="K=24 is not a positive multiple of .*K=16"):
        op.matmul(np.zeros((16, 24), h), np.zeros((24, 8), h), np.zeros((16, 8), np.float32))
    mixed = mmafuzz.Instruction("volta/mma.m8n8k4.f32.f16.f16.f16")   # D f32, C f16
    with pytest.raises(ValueError, match="C is f16 but D is f32, so D cannot feed C"):
        mixed.matmul(np.zeros((8, 4), h), np.zeros((4, 8), h), np.zeros((8, 8), h))


def test_threads_argument():
    op = mmafuzz.Instruction(F16)
    z = np.zeros((1, 16), np.float16)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="threads must be"):
            op.dpa(z, z, np.zeros(1, np.float32), threads=bad)


def test_eval_lines():
    line = "c=3f800000 " + "a=" + ",".join(["3c00"] * 16) + " b=" + ",".join(["3c00"] * 16) + " d=00000000 src=x"
    # 1 + 16 * (1 * 1) = 17 = 0x41880000 in binary32 (by hand)
    assert mmafuzz.eval(F16, line) == 0x41880000
    d, trace = mmafuzz.eval(F16, line, trace=True)
    assert d == 0x41880000 and trace and all(isinstance(t, str) for t in trace)
    with pytest.raises(ValueError, match="field a: 15 values, expected 16"):
        mmafuzz.eval(F16, "c=3f800000 a=" + ",".join(["3c00"] * 15) + " b=" + ",".join(["3c00"] * 16))
    with pytest.raises(ValueError, match="expected key=value"):
        mmafuzz.eval(F16, "garbage")


def test_check_counts_failures_and_raises_on_bad_input(tmp_path):
    good = "c=3f800000 a=" + ",".join(["3c00"] * 16) + " b=" + ",".join(["3c00"] * 16)
    p = tmp_path / "x.vec.gz"
    p.write_bytes(gzip.compress(f"# test\ninstr {F16}\n{good} d=41880000\n{good} d=41880001\n".encode()))
    res = mmafuzz.check(p)
    assert (res.passed, res.failed) == (1, 1)
    assert res.failures == [{"path": str(p), "line": 4, "name": F16, "got": 0x41880000, "expected": 0x41880001}]
    bad = tmp_path / "bad.vec"
    bad.write_text(f"instr {F16}\n{good} d=4188000\n")
    with pytest.raises(ValueError, match=r"bad.vec:2: field d: value 1 has 7 hex digits, expected 8"):
        mmafuzz.check(bad)
    unk = tmp_path / "unk.vec"
    unk.write_text("instr hopper/mma.m16n8k16.f32.f16.f16.f33\n")
    with pytest.raises(mmafuzz.InstructionError, match=r"unk.vec:1: unknown instruction .*closest: " + F16):
        mmafuzz.check(unk)
    nod = tmp_path / "nod.vec"
    nod.write_text(f"instr {F16}\n{good}\n")
    with pytest.raises(ValueError, match="nod.vec:2: expected a d= field"):
        mmafuzz.check(nod)
    with pytest.raises(OSError, match="cannot read"):
        mmafuzz.check(tmp_path / "absent.vec")
    trunc = tmp_path / "trunc.vec.gz"
    trunc.write_bytes(gzip.compress(b"instr " + F16.encode() + b"\n" * 1000)[:-12])
    with pytest.raises(ValueError, match="truncated"):
        mmafuzz.check(trunc)


def test_skip_unknown_skips_and_counts(tmp_path):
    """skip_unknown (as `mmafuzz check --skip-unknown`): the case lines under
    an unknown instruction are skipped unparsed and counted (3 here, by
    construction of the file), the next known `instr` resumes, and a
    malformed `instr` line is still an error."""
    good = "c=3f800000 a=" + ",".join(["3c00"] * 16) + " b=" + ",".join(["3c00"] * 16) + " d=41880000"
    gone = "hopper/mma.m16n8k16.f32.f16.f16.f33"
    p = tmp_path / "skip.vec"
    p.write_text(f"instr {gone}\n{good}\n# a comment\n\nnot even a case\ninstr {F16}\n{good}\n"
                 f"instr {gone}\n{good}\n")
    with pytest.raises(mmafuzz.InstructionError, match=r"skip.vec:1: unknown instruction"):
        mmafuzz.read_vec(p)
    groups = mmafuzz.read_vec(p, skip_unknown=True)
    assert [(g.name, g.line.tolist()) for g in groups] == [(F16, [7])]
    assert groups.skipped == {gone: 3}
    res = mmafuzz.check(p, skip_unknown=True)
    assert (res.passed, res.failed, res.skipped, res.skipped_per_instruction) == (1, 0, 3, {gone: 3})
    bad = tmp_path / "badinstr.vec"
    bad.write_text(f"instr {gone}\n{good}\ninstr a b\n")
    with pytest.raises(ValueError, match="badinstr.vec:3: expected one instruction name after 'instr'"):
        mmafuzz.read_vec(bad, skip_unknown=True)
