#!/usr/bin/env python3
"""Triton GEMM kernels recorded on the GPU (docs/kernels.md):

- the matmul tutorial's kernel (``acc = tl.dot(a, b, acc)`` over K in steps
  of BLOCK_K, zero-masked loads past K, one conversion to the output format),
  run under each of its CUDA autotune configurations;
- a split-K kernel: SPLIT_K programs along K, each summing a contiguous run of
  K blocks into a binary32 workspace, then a second kernel that adds the
  slices in order and converts once.

    python3 scripts/kernels/triton_gemm.py OUTDIR

writes one recording (docs/recordings.md) per (kernel, configuration, shape)
and prints a line each.
"""
import importlib.util
import os
import sys

import torch
import triton
import triton.language as tl

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("recording", os.path.join(here, "..", "..", "python", "mmafuzz", "recording.py"))
rec = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rec)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def splitk_kernel(a_ptr, b_ptr, w_ptr, M, N, K, ITERS_PER_SLICE, stride_am, stride_ak, stride_bk, stride_bn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    s = tl.program_id(2)
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    it0 = s * ITERS_PER_SLICE
    it1 = tl.minimum(it0 + ITERS_PER_SLICE, tl.cdiv(K, BLOCK_K))
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for it in range(it0, it1):
        kk = it * BLOCK_K + offs_k
        a = tl.load(a_ptr + offs_am[:, None] * stride_am + kk[None, :] * stride_ak, mask=kk[None, :] < K, other=0.0)
        b = tl.load(b_ptr + kk[:, None] * stride_bk + offs_bn[None, :] * stride_bn, mask=kk[:, None] < K, other=0.0)
        acc = tl.dot(a, b, acc)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    w = w_ptr + s * M * N + offs_cm[:, None] * N + offs_cn[None, :]
    tl.store(w, acc, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@triton.jit
def reduce_kernel(w_ptr, c_ptr, MN, SPLIT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < MN
    acc = tl.load(w_ptr + offs, mask=m, other=0.0)
    for s in range(1, SPLIT):
        acc = acc + tl.load(w_ptr + s * MN + offs, mask=m, other=0.0)
    tl.store(c_ptr + offs, acc.to(c_ptr.dtype.element_ty), mask=m)


# The tutorial's CUDA autotune configurations: (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_stages, num_warps)
CONFIGS_F16 = [(128, 256, 64, 8, 3, 8), (64, 256, 32, 8, 4, 4), (128, 128, 32, 8, 4, 4), (128, 64, 32, 8, 4, 4),
               (64, 128, 32, 8, 4, 4), (128, 32, 32, 8, 4, 4), (64, 32, 32, 8, 5, 2), (32, 64, 32, 8, 5, 2)]
CONFIGS_FP8 = [(128, 256, 128, 8, 3, 8), (256, 128, 128, 8, 3, 8), (256, 64, 128, 8, 4, 4), (64, 256, 128, 8, 4, 4),
               (128, 128, 128, 8, 4, 4), (128, 64, 64, 8, 4, 4), (64, 128, 64, 8, 4, 4), (128, 32, 64, 8, 4, 4)]
TDT = {"f16": torch.float16, "bf16": torch.bfloat16, "e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}
SDT = {"f16": torch.int16, "bf16": torch.int16, "e4m3": torch.uint8, "e5m2": torch.uint8}


def operands(fmt, M, N, K, seed=1):
    import numpy as np
    A = rec.generate(fmt, 2 * seed, M, K, K)
    Bt = rec.generate(fmt, 2 * seed + 1, K, N, K, transpose=True)
    v = {1: np.uint8, 2: np.int16}[A.dtype.itemsize]
    tA = torch.from_numpy(A.view(v)).cuda().view(TDT[fmt])
    tB = torch.from_numpy(np.ascontiguousarray(Bt).view(v)).cuda().view(TDT[fmt])
    return A, Bt, tA, tB


def save(out, name, op, fmt, ofmt, M, N, K, flags, D, kernels, seed=1):
    import numpy as np
    w = {torch.float16: torch.int16, torch.bfloat16: torch.int16, torch.float32: torch.int32}[D.dtype]
    Dn = D.view(w).cpu().numpy()
    Dn = Dn.view({2: np.uint16, 4: np.uint32}[Dn.dtype.itemsize])
    h = {"op": op, "m": M, "n": N, "k": K, "a_format": fmt, "b_format": fmt, "d_format": ofmt, "flags": flags,
         "kernels": kernels, "deterministic": True, "env": rec._env(),
         "inputs": {"generator": "mmafuzz.splitmix64", "seed_a": 2 * seed, "seed_b": 2 * seed + 1, "exp_lo": -4, "exp_hi": 2}}
    rec.save(os.path.join(out, name + ".npz"), h, {"d": Dn})


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    shapes = [(128, 128, 1000), (256, 256, 4096), (96, 64, 16384)]
    for fmt, configs in (("f16", CONFIGS_F16), ("bf16", CONFIGS_F16), ("e4m3", CONFIGS_FP8), ("e5m2", CONFIGS_FP8)):
        ofmt = "f16" if fmt == "f16" else ("bf16" if fmt == "bf16" else "f16")
        for (M, N, K) in shapes:
            A, Bt, tA, tB = operands(fmt, M, N, K)
            for cfg in configs:
                bm, bn, bk, gm, ns, nw = cfg
                C = torch.empty((M, N), device="cuda", dtype=TDT[ofmt])
                grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
                try:
                    matmul_kernel[grid](tA, tB, C, M, N, K, tA.stride(0), tA.stride(1), tB.stride(0), tB.stride(1),
                                        C.stride(0), C.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm,
                                        num_stages=ns, num_warps=nw)
                    torch.cuda.synchronize()
                except Exception as e:
                    print(f"triton-tutorial {fmt} {cfg} {M}x{N}x{K}: error {type(e).__name__} {str(e)[:150]}")
                    continue
                flags = {"block_m": bm, "block_n": bn, "block_k": bk, "group_m": gm, "num_stages": ns, "num_warps": nw}
                name = f"triton-tutorial-{fmt}-{bm}x{bn}x{bk}-{ns}-{nw}-{M}x{N}x{K}"
                save(out, name, "triton.matmul_tutorial", fmt, ofmt, M, N, K, flags, C, [f"matmul_kernel {cfg}"])
                print(name, "ok")
            for split, bk in ((2, 64), (3, 64), (4, 128), (7, 64)):
                if fmt in ("e4m3", "e5m2"):
                    bk = 128
                bm, bn = 64, 64
                iters = triton.cdiv(K, bk)
                per = triton.cdiv(iters, split)
                W = torch.empty((split, M, N), device="cuda", dtype=torch.float32)
                C = torch.empty((M, N), device="cuda", dtype=TDT[ofmt])
                splitk_kernel[(triton.cdiv(M, bm), triton.cdiv(N, bn), split)](
                    tA, tB, W, M, N, K, per, tA.stride(0), tA.stride(1), tB.stride(0), tB.stride(1),
                    BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)
                reduce_kernel[(triton.cdiv(M * N, 1024),)](W, C, M * N, SPLIT=split, BLOCK=1024)
                torch.cuda.synchronize()
                flags = {"block_m": bm, "block_n": bn, "block_k": bk, "split_k": split}
                name = f"triton-splitk-{fmt}-s{split}-bk{bk}-{M}x{N}x{K}"
                save(out, name, "triton.matmul_splitk", fmt, ofmt, M, N, K, flags, C, [f"splitk_kernel s{split} bk{bk}"])
                print(name, "ok")


if __name__ == "__main__":
    main()
