#!/usr/bin/env python3
"""Check recordings of the Triton kernels (scripts/kernels/triton_gemm.py)
against the kernel model their source code implies: the instruction Triton
issues on Hopper for the input format chained over BLOCK_K, no split for the
tutorial's kernel, SPLIT_K contiguous slices (ceil share) added in slice order
for the split-K kernel.  One line per recording: file, outputs reproduced of
recorded, the model.

    python3 scripts/kernels/check_triton.py REC.npz...
"""
import os
import sys

from mmafuzz import kernels as K, recording as R

def model_of(h):
    f = h["flags"]
    return K.format_model({"instr": K.main_loop_row(h["a_format"]), "bk": f["block_k"], "split": f.get("split_k", 1),
                           "split_rule": "ceil", "reduce": "serial", "promote": 0, "out": h["d_format"]})


def main():
    bad = 0
    for p in sys.argv[1:]:
        h, arr = R.load(p)
        m = model_of(h)
        r = K.check_recording((h, dict(arr)), m)
        bad += r["equal"] != r["outputs"]
        print(f"{os.path.basename(p)}\t{r['equal']}\t{r['outputs']}\t{m.strip().replace(chr(10), '; ')}\t{r['first_diff']}",
              flush=True)
    print(f"{len(sys.argv) - 1 - bad} reproduced, {bad} not", flush=True)


if __name__ == "__main__":
    main()
