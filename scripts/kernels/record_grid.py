#!/usr/bin/env python3
"""Record whole GEMM calls on the GPU over a grid of shapes (docs/kernels.md).

    python3 scripts/kernels/record_grid.py OUTDIR [--ops OP,...] [--sizes M,...] [--ks K,...]

Writes one recording (.npz, docs/recordings.md) per call into OUTDIR, with
operands stored when they are small and described by the generator
otherwise, D whole up to 128 x 128 outputs and sampled (64 rows x 64 columns)
above, and prints a line per call: op, formats, shape, whether two calls gave
the same bits, and the GPU kernels the call ran (from the PyTorch profiler).
"""
import argparse
import importlib.util
import os
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("recording", os.path.join(here, "..", "..", "python", "mmafuzz", "recording.py"))
rec = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rec)

# (name, op, input format, output format, flags)
OPS = {
    "matmul-f16": ("torch.matmul", "f16", "f16", {}),
    "matmul-bf16": ("torch.matmul", "bf16", "bf16", {}),
    "matmul-tf32": ("torch.matmul", "tf32", "f32", {"allow_tf32": True}),
    "matmul-f16-norrr": ("torch.matmul", "f16", "f16", {"allow_fp16_reduced_precision_reduction": False}),
    "linear-bf16": ("torch.nn.functional.linear", "bf16", "bf16", {}),
    "scaled_mm-e4m3-f32": ("torch._scaled_mm", "e4m3", "f32", {"use_fast_accum": False}),
    "scaled_mm-e4m3-bf16": ("torch._scaled_mm", "e4m3", "bf16", {"use_fast_accum": False}),
    "scaled_mm-e4m3-f32-fast": ("torch._scaled_mm", "e4m3", "f32", {"use_fast_accum": True}),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--sizes", default="1,8,64,96,128,512,4096")
    ap.add_argument("--ks", default="16,64,1000,4096,16384,65536")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--store-max", type=int, default=1 << 18, help="store operands up to this many elements")
    ap.add_argument("--full-max", type=int, default=128 * 128, help="whole D up to this many outputs")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    sizes = [int(x) for x in args.sizes.split(",")]
    ks = [int(x) for x in args.ks.split(",")]
    big = max(sizes)
    for name in args.ops.split(","):
        op, fmt, ofmt, flags = OPS[name]
        for K in ks:
            t0 = time.time()
            A = rec.generate(fmt, 2 * args.seed, big, K, K)
            Bt = rec.generate(fmt, 2 * args.seed + 1, K, big, K, transpose=True)
            for M in sizes:
                for N in sizes:
                    if op == "torch._scaled_mm" and (M % 16 or N % 16 or K % 16):
                        print(f"{name} {M}x{N}x{K}: skipped (_scaled_mm needs multiples of 16)")
                        continue
                    store = M * K + K * N <= args.store_max
                    try:
                        h, arr = rec.record(op, M, N, K, fmt, ofmt, seed=args.seed, flags=flags,
                                            store_operands=store,
                                            sample=None if M * N <= args.full_max else 64, A=A, Bt=Bt)
                    except Exception as e:  # report and go on: one refused shape must not lose the rest
                        print(f"{name} {M}x{N}x{K}: error {type(e).__name__}: {str(e)[:200]}")
                        continue
                    rec.save(os.path.join(args.out, f"{name}-{M}x{N}x{K}.npz"), h, arr)
                    print(f"{name} {M}x{N}x{K}: det={int(h['deterministic'])} kernels={';'.join(h['kernels'])}")
            sys.stdout.flush()
            print(f"# {name} K={K}: {time.time() - t0:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
