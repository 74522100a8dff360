/*
 * verify.h - verification on the GPU itself (mf_device_verify_tiles): the
 * tiles are generated, run, evaluated with the model and compared on the
 * device, and only the disagreements come back.  verify.cu holds the
 * kernels (the model and the case-generation library compiled as device
 * code from their C sources, model_device.cuh); cuda_backend.cu calls them
 * through this header with one Vgpu per GPU.
 */
#ifndef MMAFUZZ_CUDA_VERIFY_H
#define MMAFUZZ_CUDA_VERIFY_H

#include "kernel_registry.h"
#include "mf_device.h"

#include <cuda_runtime.h>

#include <vector>

/* Per-GPU verification state (buffers, streams, the pool's device copy). */
struct Vgpu;

/* What one GPU needs to run an instruction's wrapper. */
struct VgpuKernel {
    const mf_cuda_kernel *k;
    int grid;  /* blocks of a launch over the whole GPU (SMs x blocks per SM) */
};

Vgpu *vgpu_new(int ordinal, int sms);
void vgpu_free(Vgpu *v);
/* Forget every buffer without freeing it (after cudaDeviceReset). */
void vgpu_forget(Vgpu *v);

/* Shared by the GPUs of one call: chunks of the call's tile range are
 * taken in turn, so that every GPU stays busy. */
struct VgpuShared {
    const mf_verify_req *rq;
    int m, n, k;
    unsigned long long chunk_tiles;   /* tiles per chunk */
    unsigned long long nchunks;
    unsigned long long next;          /* next chunk (atomic) */
};

/* Run the chunks this GPU takes of the call; its disagreements go to its own
 * buffer (rq->hits_cap entries).  @return cudaSuccess, or the error with
 * what[] naming the failed call. */
cudaError_t vgpu_run(Vgpu *v, VgpuShared *sh, const VgpuKernel *kern, const char **what);

/* After vgpu_run: disagreements found, the first min(found, cap) hits
 * appended to *out, cases run, device seconds. */
cudaError_t vgpu_collect(Vgpu *v, std::vector<mf_verify_hit> *out, size_t cap, unsigned long long *found,
                         unsigned long long *cases, double *seconds);

/* Tiles per chunk for a tile shape: about 2^25 cases (fewer than 2^32: the
 * kernels index a chunk's cases in 32 bits), under 1 GiB of tile arrays. */
unsigned long long vgpu_chunk_tiles(const mf_instr *in, int m, int n, int k);

#endif
