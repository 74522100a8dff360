#!/usr/bin/env python3
"""wmma_check.py - the integer and sub-byte wmma.mma forms are lowered to
the matrix instructions of mma.sync rows that mmafuzz already fuzzes.

usage: wmma_check.py NVCC SOURCE WORKDIR

Compiles SOURCE (wmma_lowering.cu) for sm_90a with NVCC, disassembles it with
cuobjdump (no GPU needed; found as sass_check.py finds it) and checks that
each kernel issues exactly the matrix instructions listed in EXPECTED.  The
expectations were read from ptxas 13.0's output and are what docs/coverage.md
states; a different lowering by another ptxas fails this test, which is the
point: then the wmma forms need their own look.
Exit 0: as expected; 1: not; 77: no CUDA compiler or no cuobjdump.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sass_check import find_tool  # noqa: E402

# kernel (demangled prefix) -> matrix opcodes in program order, and the
# mma.sync row whose SASS they are (docs/coverage.md, "Integer and single-bit MMA")
EXPECTED = [
    ("k_int<16, 16, 16, signed char>", ["IMMA.16816.S8.S8"] * 2, "2 x mma.m16n8k16.s32.s8.s8.s32"),
    ("k_int<32, 8, 16, signed char>", ["IMMA.16816.S8.S8"] * 2, "2 x mma.m16n8k16.s32.s8.s8.s32"),
    ("k_int<8, 32, 16, unsigned char>", ["IMMA.16816.U8.U8"] * 2, "2 x mma.m16n8k16.s32.u8.u8.s32"),
    ("k_sub<nvcuda::wmma::experimental::precision::s4>", ["IMMA.8816.S8.S8"] * 2,
     "mma.m8n8k32.s32.s4.s4.s32 (IMMA on unpacked int8, twice)"),
    ("k_sub<nvcuda::wmma::experimental::precision::u4>", ["IMMA.8816.U8.U8"] * 2,
     "mma.m8n8k32.s32.u4.u4.s32 (IMMA on unpacked int8, twice)"),
    ("k_b1<1>", ["BMMA.88128.AND.POPC"], "mma.m8n8k128.s32.b1.b1.s32.and.popc"),
    ("k_b1<0>", ["BMMA.88128.AND.POPC"] * 2, "mma.m8n8k128.s32.b1.b1.s32.xor.popc (two BMMA.AND.POPC)"),
]
MATRIX = re.compile(r"\b((?:H|D|I|B|Q)MMA\.[A-Z0-9.]+|(?:H|I|B|Q)GMMA\.[A-Z0-9.]+)")


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    nvcc, src, work = sys.argv[1:]
    cuobjdump = os.environ.get("CUOBJDUMP") or find_tool("cuobjdump")
    if not nvcc or not os.path.exists(nvcc) or not cuobjdump:
        print("SKIP: needs nvcc and cuobjdump (nvcc=%r, cuobjdump=%r)" % (nvcc, cuobjdump))
        return 77
    os.makedirs(work, exist_ok=True)
    cubin = os.path.join(work, "wmma_lowering.cubin")
    cc = subprocess.run([nvcc, "-gencode=arch=compute_90a,code=sm_90a", "-cubin", "-o", cubin, src],
                        capture_output=True, text=True)
    if cc.returncode != 0:
        print("FAIL: nvcc: " + cc.stderr.strip())
        return 1
    env = dict(os.environ)
    nvdisasm = find_tool("nvdisasm")
    if nvdisasm:
        env["PATH"] = os.path.dirname(nvdisasm) + os.pathsep + env.get("PATH", "")
    out = subprocess.run([cuobjdump, "--dump-sass", cubin],
                         capture_output=True, text=True, env=env)
    if out.returncode != 0:
        print("FAIL: cuobjdump: " + out.stderr.strip())
        return 1
    ops, func = {}, None
    for line in out.stdout.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            func = m.group(1)
            ops[func] = []
        elif func:
            ops[func] += [x.rstrip(".") for x in MATRIX.findall(line)]
    names = subprocess.run(["c++filt"], input="\n".join(ops), capture_output=True, text=True).stdout.split("\n")
    demangled = dict(zip(names, ops))
    bad = 0
    for kernel, want, row in EXPECTED:
        sym = next((s for d, s in demangled.items() if d.startswith("void " + kernel + "(")), None)
        got = ops.get(sym)
        ok = got == want
        bad += not ok
        print("%-4s %-52s %-40s = %s" % ("ok" if ok else "FAIL", kernel, " ".join(got or ["(kernel not found)"]), row))
    print("%d of %d wmma forms lowered as expected" % (len(EXPECTED) - bad, len(EXPECTED)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
