#!/usr/bin/env python3
"""Fit a kernel model to every recording given (docs/kernels.md): one line
per recording, tab-separated: file, op, formats, M, N, K, the cuBLAS kernel
(tile and split-K evidence from its name), the outputs the fitted model
reproduces of those recorded, and the model (its fields on one line), or the
best candidate when none reproduces every output.

    python3 scripts/kernels/fit_recordings.py REC.npz... > fits.tsv
"""
import os
import sys
import time

THREADS = int(os.environ.get("MMAFUZZ_THREADS", "0"))  # 0: every CPU

from mmafuzz import kernels as K, recording as R


def main():
    print("file\top\tformats\tm\tn\tk\tkernel\treproduced\toutputs\tmodel\tseconds")
    for path in sys.argv[1:]:
        t0 = time.time()
        h, arr = R.load(path)
        ev = K.nvjet_tile(h.get("kernels", []))
        kern = ev["kernel"] if ev else ";".join(x[:60] for x in h.get("kernels", []))
        fmts = f"{h['a_format']}->{h['d_format']}"
        try:
            r = K.fit((h, dict(arr)), threads=THREADS)
            if r["models"]:
                model, eq, n = r["models"][0], r["best"][0], r["best"][1]
                if len(r["models"]) > 1:
                    model += f" (and {len(r['models']) - 1} more that this recording cannot tell apart)"
            else:
                eq, n, model = r["best"]
                model = "none; best: " + (model or "-")
        except ValueError as e:
            eq, n, model = 0, 0, f"not modelled: {e}"
        model = model.replace("\n", "; ").strip("; ")
        print(f"{os.path.basename(path)}\t{h['op']}\t{fmts}\t{h['m']}\t{h['n']}\t{h['k']}\t{kern}\t{eq}\t{n}\t{model}\t{time.time() - t0:.1f}",
              flush=True)


if __name__ == "__main__":
    main()
