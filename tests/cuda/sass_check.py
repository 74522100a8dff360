#!/usr/bin/env python3
"""sass_check.py - each CUDA wrapper issues the instruction it claims.

usage: sass_check.py MANIFEST OBJECT...

MANIFEST is wrappers.tsv, written by gen_wrappers from the instruction table:
one line per wrapper kernel with the SASS opcode its table row must compile to
(layout.c, mf_sass_expect).  OBJECT... are the wrappers' object files (or a
library holding them).  cuobjdump (no GPU needed; on PATH, in NVDISASM/CUOBJDUMP env vars,
or from the PyPI package nvidia-cuda-cuobjdump with nvidia-cuda-nvdisasm)
disassembles it; every wrapper must contain its expected opcode and no other
matrix opcode family (HMMA/HGMMA/QGMMA/QMMA/DMMA/IMMA/IGMMA/BMMA/BGMMA, and
tcgen05's UTCHMMA/UTCQMMA/UTCIMMA/UTCOMMA, whose opcode must match whole).

Exit 0: all match; 1: a mismatch; 77: the wrappers were not built (no CUDA
toolkit at build time), so there is nothing to check.
"""
import os
import re
import shutil
import subprocess
import sys


def find_tool(name):
    path = shutil.which(name)
    if path:
        return path
    try:
        import nvidia  # the PyPI nvidia-cuda-* packages install under nvidia/cu13/bin
        for root in nvidia.__path__:
            for sub in ("cu13", "cu12", "cuda_cuobjdump", "cuda_nvdisasm"):
                cand = os.path.join(root, sub, "bin", name)
                if os.path.exists(cand):
                    return cand
    except ImportError:
        pass
    return None


# What each wgmma operand-form variant shows on its GMMA instruction (ptxas 13.0,
# sm_90a): imm-scale-a/b = -1 as .negA/.negB, imm-trans-a/b = 1 as .tnspA/.tnspB
# on the descriptor operand, scale-d = 0 as the accumulator RZ under !UPT.
FORM_MARKS = {"neg_a": [".negA"], "neg_b": [".negB"], "neg_ab": [".negA", ".negB"], "no_c": ["RZ, !UPT"],
              "trans_a": [".tnspA"], "trans_b": [".tnspB"], "trans_ab": [".tnspA", ".tnspB"]}


def form_ok(variant, text):
    marks = FORM_MARKS.get(variant)
    if not marks:  # default and the N / A-source variants: no negation, transposition or RZ accumulator
        return not any(".neg" in t or ".tnsp" in t or "!UPT" in t for t in text)
    return bool(text) and all(all(mark in t for mark in marks) for t in text)


def selector_ok(want, text, kernel):
    """mma.sp (HMMA.SP): the sparsity selector is the instruction's last
    immediate (ptxas 13.0: "HMMA.SP.16816.F32 R4, R12, R16, R24, R0, 0x1 ;");
    wgmma.sp (HGMMA.SP) the immediate before gsb0 ("HGMMA.SP.64x8x32.F32 R24,
    gdesc[UR8], R24, R28, 0x1, gsb0 ;"); the manifest's last column says which
    ("sel=0xN"), and ",SHFL" where
    ptxas moves the metadata between threads itself (devices/cuda/layout.h,
    mf_sass_sp_selector): then the kernel must contain SHFL.IDX."""
    if not want or want == "-":
        return True
    sel, _, shfl = want.partition(",")
    sel = int(sel.split("=")[1], 16)
    ok = bool(text) and all(re.search(r",\s*0x%x\s*(,\s*gsb0\s*)?;" % sel, t) for t in text)
    return ok and (not shfl or any("SHFL.IDX" in t for t in kernel))


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    manifest, libs = sys.argv[1], sys.argv[2:]
    if not os.path.exists(manifest) or not all(os.path.exists(lib) for lib in libs):
        print("SKIP: CUDA wrappers not built (no CUDA compiler at build time)")
        return 77
    cuobjdump = os.environ.get("CUOBJDUMP") or find_tool("cuobjdump")
    nvdisasm = find_tool("nvdisasm")
    if not cuobjdump:
        print("FAIL: wrappers were built but cuobjdump is missing (pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)")
        return 1
    env = dict(os.environ)
    if nvdisasm:
        env["PATH"] = os.path.dirname(nvdisasm) + os.pathsep + env.get("PATH", "")
    out = subprocess.run([cuobjdump, "--dump-sass"] + libs, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        print("FAIL: cuobjdump --dump-sass %s: %s" % (" ".join(libs), out.stderr.strip()))
        return 1
    ops = {}  # kernel symbol -> set of matrix opcodes
    lines = {}  # kernel symbol -> the matrix instructions' text (operands included)
    kernel = {}  # kernel symbol -> every instruction's text
    func = None
    for line in out.stdout.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            func = m.group(1)
            ops.setdefault(func, set())
            lines.setdefault(func, [])
            kernel.setdefault(func, [])
            continue
        if func:
            kernel[func].append(line)
        m = re.search(r"\b((?:HMMA|HGMMA|QGMMA|QMMA|DMMA|IMMA|IGMMA|BMMA|BGMMA)\.[0-9A-Za-z.x]+"
                      r"|UTC[HQIO]MMA(?:\.[0-9A-Za-z.x]+)?)", line)
        if m and func:
            ops[func].add(m.group(1))
            lines[func].append(line[m.start():])
    fails = checked = 0
    for row in open(manifest):
        if row.startswith("#") or not row.strip():
            continue
        fields = row.rstrip("\n").split("\t")
        sym, instr, variant, target, expect = fields[:5]
        want_sel = fields[5] if len(fields) > 5 else "-"
        checked += 1
        found = ops.get(sym)
        family = expect.split(".")[0]
        if found is None:
            print("FAIL %s (%s %s): kernel %s not in the SASS" % (instr, variant, target, sym))
            fails += 1
        elif not any(op == expect or (op.startswith(expect + ".") and not expect.startswith("UTC")) for op in found):
            # tcgen05 (UTC*MMA): the whole opcode, so that UTCOMMA does not pass for UTCOMMA.4X
            print("FAIL %s (%s %s): expected %s, SASS has %s" % (instr, variant, target, expect, sorted(found) or "none"))
            fails += 1
        elif any(op.split(".")[0] != family for op in found):
            print("FAIL %s (%s %s): other matrix opcodes beside %s: %s" % (instr, variant, target, expect, sorted(found)))
            fails += 1
        elif not selector_ok(want_sel, lines.get(sym, []), kernel.get(sym, [])):
            print("FAIL %s (%s %s): the sparsity selector is not as expected (%s) in the SASS: %s" %
                  (instr, variant, target, want_sel, lines.get(sym)))
            fails += 1
        elif not form_ok(variant, lines.get(sym, [])):
            print("FAIL %s (%s %s): the operand form is not in the SASS: %s" % (instr, variant, target, lines.get(sym)))
            fails += 1
    print("%d wrappers checked against their expected SASS opcode, %d failed" % (checked, fails))
    return 1 if fails or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
