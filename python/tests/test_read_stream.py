"""read_vec and check read a file as `mmafuzz check` does (harness/vec/vecfile.c):
streaming, a piece of whole lines at a time, with the CLI's limits and
messages: a NUL byte is "FILE:LINE: a NUL byte at column C", a line of 1 MiB
or more (without its newline) is "FILE:LINE: line longer than 1 MiB".  The
memory a read takes does not grow with the file (only with the cases it
holds): the bounded tests run in a subprocess under RLIMIT_AS."""
import gzip
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mmafuzz

F16 = "hopper/mma.m16n8k16.f32.f16.f16.f32"
ONES = ",".join(["3c00"] * 16)
# d = 1 + 16 x 1 x 1 = 17 = 0x41880000 (exact), as tests/cli/bad/good_free_fields.vec
GOOD = f"c=3f800000 a={ONES} b={ONES} d=41880000"
WRONG = f"c=3f800000 a={ONES} b={ONES} d=41800000"


def test_nul_byte_is_an_error(tmp_path):
    control = tmp_path / "control.vec"
    control.write_text(f"instr {F16}\n{GOOD}\n{WRONG}\n")
    res = mmafuzz.check(control)
    assert (res.passed, res.failed) == (1, 1)  # the wrong d is seen without the NUL
    start = tmp_path / "start.vec"
    start.write_bytes(f"instr {F16}\n{GOOD}\n\0{WRONG}\n".encode())
    with pytest.raises(ValueError, match=r"start.vec:3: a NUL byte at column 1 \(a .vec file is text\)"):
        mmafuzz.check(start)
    with pytest.raises(ValueError, match=r"start.vec:3: a NUL byte at column 1"):
        mmafuzz.read_vec(start)
    mid = tmp_path / "mid.vec"
    mid.write_bytes(f"instr {F16}\n{GOOD}\n{GOOD[:20]}\0{GOOD[20:]}\n".encode())
    with pytest.raises(ValueError, match=r"mid.vec:3: a NUL byte at column 21"):
        mmafuzz.read_vec(mid)
    gz = tmp_path / "start.vec.gz"
    gz.write_bytes(gzip.compress(start.read_bytes()))
    with pytest.raises(ValueError, match=r"start.vec.gz:3: a NUL byte at column 1"):
        mmafuzz.check(gz)
    # an error on an earlier line comes first, as the CLI meets it
    early = tmp_path / "early.vec"
    early.write_bytes(f"instr {F16}\n{GOOD[:-1]}\n\0\n".encode())
    with pytest.raises(ValueError, match=r"early.vec:2: field d"):
        mmafuzz.read_vec(early)


def test_line_limit_is_the_cli_one(tmp_path):
    # the CLI's buffer of 1 MiB holds the line and its NUL: 2^20 - 1 characters pass, 2^20 do not
    ok = tmp_path / "ok.vec"
    ok.write_bytes(f"instr {F16}\n".encode() + b"#" * ((1 << 20) - 1) + f"\n{GOOD}\n".encode())
    (g,) = mmafuzz.read_vec(ok)
    assert g.line.tolist() == [3]
    long = tmp_path / "long.vec"
    long.write_bytes(f"instr {F16}\n".encode() + b"#" * (1 << 20) + f"\n{GOOD}\n".encode())
    with pytest.raises(ValueError, match=r"long.vec:2: line longer than 1 MiB"):
        mmafuzz.read_vec(long)
    # the same without a newline at all (the line never ends)
    endless = tmp_path / "endless.vec"
    endless.write_bytes(b"#" * (3 << 20))
    with pytest.raises(ValueError, match=r"endless.vec:1: line longer than 1 MiB"):
        mmafuzz.read_vec(endless)


def test_pieces_join_exactly(tmp_path, monkeypatch):
    """Read in pieces of 7 bytes (every line cut somewhere), a file gives what
    it gives read in one piece: cases, line numbers, skipped counts."""
    gone = "hopper/mma.m16n8k16.f32.f16.f16.f33"
    p = tmp_path / "p.vec"
    p.write_text(f"# x\ninstr {F16}\n{GOOD}\n\n\ninstr {gone}\n{GOOD}\n{GOOD}\ninstr {F16}\n{WRONG}\n{GOOD}\n")
    whole = mmafuzz.read_vec(p, skip_unknown=True)
    monkeypatch.setattr(mmafuzz, "_BLOCK", 7)
    cut = mmafuzz.read_vec(p, skip_unknown=True)
    assert [g.line.tolist() for g in cut] == [g.line.tolist() for g in whole] == [[3, 10, 11]]
    assert cut.skipped == whole.skipped == {gone: 2}
    for a, b in zip(cut, whole):
        assert np.array_equal(a.d, b.d) and np.array_equal(a.a, b.a) and np.array_equal(a.c, b.c)
    res = mmafuzz.check(p, skip_unknown=True)
    assert (res.passed, res.failed, res.skipped) == (2, 1, 2)
    assert res.failures[0]["line"] == 10


def _bounded(code, limit_mb, timeout):
    """Run code in a fresh interpreter whose address space is limited to
    what importing mmafuzz takes plus limit_mb; @return (rc, output)."""
    script = textwrap.dedent(f"""
        import resource, sys, time
        import mmafuzz
        def vm_kb():
            for l in open("/proc/self/status"):
                if l.startswith("VmSize:"):
                    return int(l.split()[1])
        lim = (vm_kb() + {limit_mb} * 1024) * 1024
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
        t0 = time.monotonic()
    """) + textwrap.dedent(code)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout, env=env)
    return p.returncode, p.stdout + p.stderr


def test_dev_zero_stops_at_once():
    # the old reader read the whole file first: MemoryError after 24 s (here at the limit)
    rc, out = _bounded("""
        try:
            mmafuzz.read_vec("/dev/zero")
        except ValueError as e:
            print("raised:", e)
        try:
            mmafuzz.check("/dev/zero", threads=1)
        except ValueError as e:
            print("raised:", e)
        print("seconds:", time.monotonic() - t0)
    """, limit_mb=256, timeout=60)
    assert rc == 0, out
    assert out.count("raised: /dev/zero:1: a NUL byte at column 1") == 2, out


def test_gzip_of_newlines_streams(tmp_path):
    """512 MiB of newlines in 0.5 MiB of gzip (members of 16 MiB each, as
    `cat a.gz b.gz` makes), then one case: read with 128 MiB of address
    space above the import (the old reader held the decompressed text)."""
    member = gzip.compress(b"\n" * (16 << 20), compresslevel=9)
    p = tmp_path / "nl.vec.gz"
    with open(p, "wb") as f:
        f.write(gzip.compress(f"instr {F16}\n".encode()))
        for _ in range(32):
            f.write(member)
        f.write(gzip.compress(f"{GOOD}\n".encode()))
    assert p.stat().st_size < 1 << 20
    rc, out = _bounded(f"""
        (g,) = mmafuzz.read_vec({str(p)!r})
        print("lines:", g.line.tolist())
        r = mmafuzz.check({str(p)!r}, threads=1)
        print("passed:", r.passed, r.failed)
        print("seconds:", time.monotonic() - t0)
    """, limit_mb=128, timeout=120)
    assert rc == 0, out
    assert f"lines: [{(512 << 20) + 2}]" in out, out
    assert "passed: 1 0" in out, out
