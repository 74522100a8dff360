/*
 * cuda_backend.cu - the CUDA backend behind mf_device.h (devices/backend.h).
 *
 * A batch of tiles is cut into chunks of up to 131072 tiles (fewer for
 * tiles over 8 KiB, so that a chunk stays under 1 GiB); each chunk is one
 * grid-stride launch over the whole GPU.  Two streams alternate: while one
 * chunk computes, the next one's inputs travel and the previous one's D comes
 * back.  Host arrays that are page-locked (cudaMallocHost, cudaHostRegister)
 * are copied directly; others go through page-locked staging buffers.
 *
 * Every CUDA call is checked.  On any error the message names the
 * instruction, variant and tile range, the device is reset (which frees every
 * buffer of this device) and the device stays usable for the next call.
 */
#include "backend.h"
#include "kernel_registry.h"
#include "layout.h"
#include "verify.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <thread>
#include <vector>

namespace {

const int kSlots = 2;

struct Slot {
    cudaStream_t stream;
    unsigned char *dev[6];  /* A, B, C, D, SA (a sparse row's metadata, or A's block scales),
                               SB (B's block scales) on the device */
    size_t dev_cap;         /* bytes of each, per the largest chunk so far (max over the five) */
    unsigned char *host[6]; /* page-locked staging for A, B, C, D, SA, SB */
    size_t host_cap;
    int busy;               /* a chunk is in flight */
    unsigned char *d_user;  /* where its D goes when staged (NULL: copied directly) */
    size_t d_bytes;
};

struct Impl {
    int ordinal;
    int sms;
    mf_arch arch;
    const char *target;
    mf_cuda_kernel *kernels; /* the target's wrappers, its parts' lists end to end */
    int nkernels;
    signed char *runnable; /* per kernel: -1 unknown, 0 no image for this GPU, 1 runnable */
    int *blocks_per_sm;    /* per kernel, 0 until asked */
    Slot slot[kSlots];
    int streams_ready;
    Vgpu *vg;              /* verification on this GPU (verify.cu) */
    char uuid[48];
    /* cuda:LIST: the GPUs of the device, gpu[0] this one (run_tiles uses it);
     * ngpu is 1 for a single GPU */
    int ngpu;
    struct Impl *gpu[MF_DEV_MAX_GPUS];
};

/* The table architecture and wrapper target of a compute capability
 * (the CC and TARGET columns of model/arch_table.def). */
const char *target_of(int major, int minor, mf_arch *arch)
{
    *arch = mf_arch_by_cuda_cc(major, minor);
    const mf_arch_info *ai = mf_arch_get(*arch);
    if (!ai || !ai->target)
        *arch = MF_ARCH_COUNT;
    return *arch == MF_ARCH_COUNT ? NULL : ai->target;
}

int find_kernel(const Impl *im, const mf_instr *in, const char *variant)
{
    if (!variant)
        variant = "";
    for (int i = 0; i < im->nkernels; i++)
        if (!strcmp(im->kernels[i].instr, in->name) && !strcmp(im->kernels[i].variant, variant))
            return i;
    return -1;
}

/* Forget every buffer and stream: after cudaDeviceReset they are gone. */
void forget_resources(Impl *im)
{
    for (int s = 0; s < kSlots; s++) {
        memset(&im->slot[s], 0, sizeof im->slot[s]);
    }
    im->streams_ready = 0;
    memset(im->blocks_per_sm, 0, sizeof(int) * (size_t)im->nkernels);
    if (im->vg)
        vgpu_forget(im->vg);
}

void free_resources(Impl *im)
{
    cudaSetDevice(im->ordinal);
    for (int s = 0; s < kSlots; s++) {
        Slot *sl = &im->slot[s];
        if (sl->stream)
            cudaStreamSynchronize(sl->stream);
        for (int i = 0; i < 6; i++) {
            if (sl->dev[i])
                cudaFree(sl->dev[i]);
            if (sl->host[i])
                cudaFreeHost(sl->host[i]);
        }
        if (sl->stream)
            cudaStreamDestroy(sl->stream);
    }
    forget_resources(im);
}

/* Report a failed CUDA call, reset the device, and return MF_DEV_ERR_FAULT. */
int fail(Impl *im, cudaError_t e, const char *what, const mf_instr *in, const char *variant, size_t lo, size_t hi,
         size_t ntiles, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s%s%s: tiles [%zu, %zu) of %zu on cuda:%d: %s failed: %s (%s); the device was reset",
             in->name, variant && *variant ? " variant " : "", variant ? variant : "", lo, hi, ntiles, im->ordinal,
             what, cudaGetErrorName(e), cudaGetErrorString(e));
    cudaDeviceReset();
    forget_resources(im);
    cudaGetLastError();
    return MF_DEV_ERR_FAULT;
}

#define CK(call)                                                                                                  \
    do {                                                                                                          \
        cudaError_t e_ = (call);                                                                                  \
        if (e_ != cudaSuccess)                                                                                    \
            return fail(im, e_, #call, in, variant, lo, lo + n, ntiles, err, errlen);                             \
    } while (0)

int is_pinned(const void *p)
{
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return a.type == cudaMemoryTypeHost;
}

void impl_free(Impl *im)
{
    vgpu_free(im->vg);  /* first: free_resources forgets its buffers (and its stage timings) */
    im->vg = NULL;
    free_resources(im);
    free(im->runnable);
    free(im->blocks_per_sm);
    free(im->kernels);
    free(im);
}

void cuda_close(mf_device *dev)
{
    Impl *im = (Impl *)dev->impl;
    if (!im)
        return;
    for (int g = 1; g < im->ngpu; g++)
        impl_free(im->gpu[g]);
    impl_free(im);
    dev->impl = NULL;
}

int cuda_supports(const mf_device *dev, const mf_instr *in, const char *variant)
{
    Impl *im = (Impl *)dev->impl;
    if (in->arch != im->arch)
        return 0;
    int k = find_kernel(im, in, variant);
    if (k < 0)
        return 0;
    if (im->runnable[k] < 0) {
        /* fails with cudaErrorInvalidDeviceFunction when no image fits this GPU */
        cudaFuncAttributes fa;
        cudaSetDevice(im->ordinal);
        im->runnable[k] = cudaFuncGetAttributes(&fa, im->kernels[k].fn) == cudaSuccess;
        cudaGetLastError();
    }
    return im->runnable[k];
}

int cuda_tile_shape(const mf_device *dev, const mf_instr *in, const char *variant, int *m, int *n, int *k)
{
    (void)dev;
    mf_variant v;
    mf_wrap_shape s;
    if (mf_variant_parse(in, variant, &v) || mf_wrap_shape_of(in, &v, &s))
        return MF_DEV_ERR_UNSUPPORTED;
    *m = s.m;
    *n = s.n;
    *k = s.k;
    return MF_DEV_OK;
}

int cuda_run_tiles(mf_device *dev, const mf_instr *in, const char *variant, size_t ntiles, const void *A,
                   const void *B, const void *C, const void *SA, const void *SB, void *D, char *err, size_t errlen)
{
    Impl *im = (Impl *)dev->impl;
    size_t lo = 0, n = 0;
    int ki = find_kernel(im, in, variant);
    int m, nn, k;
    if (ki < 0 || cuda_tile_shape(dev, in, variant, &m, &nn, &k)) {
        snprintf(err, errlen, "%s: no CUDA wrapper for variant '%s'", in->name, variant ? variant : "");
        return MF_DEV_ERR_UNSUPPORTED;
    }
    if (ntiles == 0)
        return MF_DEV_OK;
    const mf_cuda_kernel *K = &im->kernels[ki];
    const size_t bytes[6] = {(size_t)m * k * mf_abi_elem_bytes(in->fa), (size_t)nn * k * mf_abi_elem_bytes(in->fb),
                             (size_t)m * nn * mf_abi_elem_bytes(in->fc), (size_t)m * nn * mf_abi_elem_bytes(in->fd),
                             /* a sparse row's metadata (SA): n_meta bytes per row of A;
                                a block-scaled row's scales: n_scales bytes a row of A (SA),
                                a column of B (SB) */
                             in->sparse ? (size_t)m * in->n_meta : (size_t)m * in->n_scales,
                             (size_t)nn * in->n_scales};
    if (in->sparse && !SA) {
        snprintf(err, errlen, "%s: a sparse row needs its metadata (SA)", in->name);
        return MF_DEV_ERR_ARG;
    }
    if (in->n_scales && (!SA || !SB)) {
        snprintf(err, errlen, "%s: a block-scaled row needs its scales (SA and SB)", in->name);
        return MF_DEV_ERR_ARG;
    }
    const size_t tile_bytes = bytes[0] + bytes[1] + bytes[2] + bytes[3] + bytes[4] + bytes[5];
    size_t chunk = (size_t)1 << 17;
    if (chunk * tile_bytes > ((size_t)1 << 30))
        chunk = ((size_t)1 << 30) / tile_bytes;
    if (chunk < 1)
        chunk = 1;
    if (chunk > ntiles)
        chunk = ntiles;

    CK(cudaSetDevice(im->ordinal));
    if (!im->streams_ready) {
        for (int s = 0; s < kSlots; s++)
            CK(cudaStreamCreateWithFlags(&im->slot[s].stream, cudaStreamNonBlocking));
        im->streams_ready = 1;
    }
    if (!im->blocks_per_sm[ki]) {
        if (K->smem > 48 * 1024)
            CK(cudaFuncSetAttribute(K->fn, cudaFuncAttributeMaxDynamicSharedMemorySize, K->smem));
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&im->blocks_per_sm[ki], K->fn, K->threads, (size_t)K->smem));
        if (im->blocks_per_sm[ki] < 1)
            im->blocks_per_sm[ki] = 1;
    }
    const void *user_in[6] = {A, B, C, NULL, SA, SB};
    int pinned[6];
    for (int i = 0; i < 3; i++)
        pinned[i] = is_pinned(user_in[i]);
    pinned[3] = is_pinned(D);
    pinned[4] = !bytes[4] || is_pinned(SA);
    pinned[5] = !bytes[5] || is_pinned(SB);

    size_t need = chunk * (bytes[0] > bytes[2] ? (bytes[0] > bytes[3] ? bytes[0] : bytes[3])
                                               : (bytes[2] > bytes[3] ? bytes[2] : bytes[3]));
    if (bytes[1] * chunk > need)
        need = bytes[1] * chunk;
    if (bytes[4] * chunk > need)
        need = bytes[4] * chunk;
    if (bytes[5] * chunk > need)
        need = bytes[5] * chunk;
    for (size_t c = 0; lo < ntiles; lo += n, c++) {
        n = ntiles - lo < chunk ? ntiles - lo : chunk;
        Slot *sl = &im->slot[c % kSlots];
        if (sl->busy) {
            CK(cudaStreamSynchronize(sl->stream));
            if (sl->d_user)
                memcpy(sl->d_user, sl->host[3], sl->d_bytes);
            sl->busy = 0;
        }
        if (sl->dev_cap < need) {
            for (int i = 0; i < 6; i++) {
                if (sl->dev[i])
                    CK(cudaFree(sl->dev[i]));
                sl->dev[i] = NULL;
            }
            for (int i = 0; i < 6; i++)
                CK(cudaMalloc((void **)&sl->dev[i], need));
            sl->dev_cap = need;
        }
        int staged = !pinned[0] || !pinned[1] || !pinned[2] || !pinned[3] || !pinned[4] || !pinned[5];
        if (staged && sl->host_cap < need) {
            for (int i = 0; i < 6; i++) {
                if (sl->host[i])
                    CK(cudaFreeHost(sl->host[i]));
                sl->host[i] = NULL;
            }
            for (int i = 0; i < 6; i++)
                CK(cudaMallocHost((void **)&sl->host[i], need));
            sl->host_cap = need;
        }
        for (int i = 0; i < 6; i++) {
            if (i == 3 || !bytes[i])
                continue;   /* D is the output; SA only for sparse and block-scaled rows, SB for block-scaled */
            const unsigned char *src = (const unsigned char *)user_in[i] + lo * bytes[i];
            if (!pinned[i]) {
                memcpy(sl->host[i], src, n * bytes[i]);
                src = sl->host[i];
            }
            CK(cudaMemcpyAsync(sl->dev[i], src, n * bytes[i], cudaMemcpyHostToDevice, sl->stream));
        }
        mf_kargs g = {sl->dev[0], sl->dev[1], sl->dev[2], sl->dev[3], (unsigned long long)n, sl->dev[4], sl->dev[5]};
        void *args[1] = {&g};
        size_t blocks = (n + (size_t)K->tiles_per_block - 1) / (size_t)K->tiles_per_block;
        size_t full = (size_t)im->sms * (size_t)im->blocks_per_sm[ki];
        unsigned grid = (unsigned)(blocks < full ? blocks : full);
        CK(cudaLaunchKernel(K->fn, dim3(grid), dim3((unsigned)K->threads), args, (size_t)K->smem, sl->stream));
        unsigned char *d_user = (unsigned char *)D + lo * bytes[3];
        sl->d_user = pinned[3] ? NULL : d_user;
        sl->d_bytes = n * bytes[3];
        CK(cudaMemcpyAsync(pinned[3] ? d_user : sl->host[3], sl->dev[3], n * bytes[3], cudaMemcpyDeviceToHost,
                           sl->stream));
        sl->busy = 1;
    }
    /* drain; a kernel fault shows up here at the latest */
    for (int s = 0; s < kSlots; s++) {
        Slot *sl = &im->slot[s];
        if (!sl->busy)
            continue;
        lo = 0;
        n = ntiles;
        CK(cudaStreamSynchronize(sl->stream));
        if (sl->d_user)
            memcpy(sl->d_user, sl->host[3], sl->d_bytes);
        sl->busy = 0;
    }
    lo = 0;
    n = ntiles;
    CK(cudaGetLastError());
    return MF_DEV_OK;
}

/* The wrapper's launch on GPU im: blocks per SM asked once. */
int wrapper_of(Impl *im, int ki, VgpuKernel *out, cudaError_t *e, const char **what)
{
    const mf_cuda_kernel *K = &im->kernels[ki];
    if (!im->blocks_per_sm[ki]) {
        if (K->smem > 48 * 1024 &&
            (*e = cudaFuncSetAttribute(K->fn, cudaFuncAttributeMaxDynamicSharedMemorySize, K->smem)) != cudaSuccess) {
            *what = "cudaFuncSetAttribute";
            return -1;
        }
        if ((*e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&im->blocks_per_sm[ki], K->fn, K->threads,
                                                                (size_t)K->smem)) != cudaSuccess) {
            *what = "cudaOccupancyMaxActiveBlocksPerMultiprocessor";
            return -1;
        }
        if (im->blocks_per_sm[ki] < 1)
            im->blocks_per_sm[ki] = 1;
    }
    out->k = K;
    out->grid = im->sms * im->blocks_per_sm[ki];
    return 0;
}

int cuda_can_verify(const mf_device *dev, const mf_instr *in, const char *variant, const mf_instr *model,
                    const char **why)
{
    const char *w = NULL;
    if (!cuda_supports(dev, in, variant))
        w = "the GPU does not run this instruction";
    else if (in->n_scales || model->n_scales)
        w = "block-scaled rows are checked on the host";
    else if (in->sparse != model->sparse)
        w = "the model row is not sparse as the instruction is";
    else if (model->fa != in->fa || model->fb != in->fb || model->fc != in->fc || model->fd != in->fd ||
             model->k != in->k)
        w = "the model row has other formats or K";
    if (why)
        *why = w;
    return w == NULL;
}

/* mf_device_verify_tiles: the call's chunks spread over the device's GPUs,
 * one host thread per GPU; hits merged and sorted by (tile, i, j). */
int cuda_verify_tiles(mf_device *dev, const mf_verify_req *rq, mf_verify_res *res, char *err, size_t errlen)
{
    Impl *im = (Impl *)dev->impl;
    const mf_instr *in = rq->in;
    int m, n, k;
    if (cuda_tile_shape(dev, in, rq->variant, &m, &n, &k)) {
        snprintf(err, errlen, "%s: no CUDA wrapper for variant '%s'", in->name, rq->variant ? rq->variant : "");
        return MF_DEV_ERR_UNSUPPORTED;
    }
    memset(res, 0, sizeof *res);
    res->ngpu = im->ngpu;
    if (rq->ntiles == 0)
        return MF_DEV_OK;
    VgpuShared sh;
    sh.rq = rq;
    sh.m = m;
    sh.n = n;
    sh.k = k;
    sh.chunk_tiles = vgpu_chunk_tiles(in, m, n, k);
    sh.nchunks = (rq->ntiles + sh.chunk_tiles - 1) / sh.chunk_tiles;
    sh.next = 0;
    int ng = im->ngpu;
    cudaError_t errs[MF_DEV_MAX_GPUS];
    const char *whats[MF_DEV_MAX_GPUS];
    auto work = [&](int g) {
        Impl *gi = im->gpu[g];
        whats[g] = "";
        errs[g] = cudaSetDevice(gi->ordinal);
        if (errs[g] != cudaSuccess) {
            whats[g] = "cudaSetDevice";
            return;
        }
        if (!gi->vg && !(gi->vg = vgpu_new(gi->ordinal, gi->sms))) {
            errs[g] = cudaErrorMemoryAllocation;
            whats[g] = "the verification state (host memory)";
            return;
        }
        int ki = find_kernel(gi, in, rq->variant);
        VgpuKernel kern;
        if (ki < 0) {
            errs[g] = cudaErrorInvalidDeviceFunction;
            whats[g] = "finding the wrapper";
            return;
        }
        if (wrapper_of(gi, ki, &kern, &errs[g], &whats[g]))
            return;
        errs[g] = vgpu_run(gi->vg, &sh, &kern, &whats[g]);
    };
    if (ng == 1) {
        work(0);
    } else {
        std::vector<std::thread> th;
        for (int g = 0; g < ng; g++)
            th.emplace_back(work, g);
        for (auto &t : th)
            t.join();
    }
    std::vector<mf_verify_hit> all;
    for (int g = 0; g < ng; g++) {
        Impl *gi = im->gpu[g];
        if (errs[g] == cudaSuccess) {
            unsigned long long found = 0, cases = 0;
            double secs = 0;
            /* only the hits found: a vector of hits_cap entries (40 MB by default) made and zeroed every call
             * took as long as a few chunks of the GPU (H100) */
            errs[g] = vgpu_collect(gi->vg, &all, rq->hits_cap, &found, &cases, &secs);
            whats[g] = "copying the disagreements back";
            res->mismatches += found;
            res->gpu_cases[g] = cases;
            res->gpu_s += secs;
        }
        if (errs[g] != cudaSuccess) {
            snprintf(err, errlen,
                     "%s: verifying tiles [%llu, %llu) on cuda:%d: %s failed: %s (%s); the device was reset", in->name,
                     (unsigned long long)rq->first, (unsigned long long)(rq->first + rq->ntiles), gi->ordinal,
                     whats[g], cudaGetErrorName(errs[g]), cudaGetErrorString(errs[g]));
            for (int q = 0; q < ng; q++) {
                cudaSetDevice(im->gpu[q]->ordinal);
                cudaDeviceReset();
                forget_resources(im->gpu[q]);
                cudaGetLastError();
            }
            return MF_DEV_ERR_FAULT;
        }
    }
    std::sort(all.begin(), all.end(), [](const mf_verify_hit &a, const mf_verify_hit &b) {
        return a.tile != b.tile ? a.tile < b.tile : a.i != b.i ? a.i < b.i : a.j < b.j;
    });
    res->overflow = res->mismatches > rq->hits_cap;
    res->nhits = all.size() < rq->hits_cap ? all.size() : rq->hits_cap;
    if (res->nhits)
        memcpy(rq->hits, all.data(), res->nhits * sizeof *rq->hits);
    return MF_DEV_OK;
}

int cuda_gpu_count(const mf_device *dev) { return ((const Impl *)dev->impl)->ngpu; }

const char *cuda_gpu_uuid(const mf_device *dev, int g)
{
    const Impl *im = (const Impl *)dev->impl;
    return g >= 0 && g < im->ngpu ? im->gpu[g]->uuid : "";
}

/* Page-locked host memory: run_tiles copies it without staging.  Ordinary
 * memory, page-aligned, registered with the driver (cudaHostRegister), not
 * cudaHostAlloc: a device error resets the device (cudaDeviceReset), which
 * frees every allocation of its context, and the harness's batch arrays
 * must outlive that (they hold the tiles it then checks on the host; with
 * cudaHostAlloc the run crashed after an illegal-address error, H200).
 * After a reset the memory is still there, only no longer page-locked.
 * When the driver refuses (locked-memory limit), plain memory, which still
 * works. */
void *cuda_host_alloc(mf_device *dev, size_t bytes)
{
    Impl *im = (Impl *)dev->impl;
    const size_t page = 4096, size = bytes ? (bytes + page - 1) / page * page : page;
    void *p = NULL;
    if (posix_memalign(&p, page, size) != 0)
        return NULL;
    memset(p, 0, size);
    if (cudaSetDevice(im->ordinal) != cudaSuccess || cudaHostRegister(p, size, cudaHostRegisterPortable) != cudaSuccess)
        cudaGetLastError();
    return p;
}

void cuda_host_free(mf_device *dev, void *p)
{
    (void)dev;
    if (!p)
        return;
    if (is_pinned(p))
        cudaHostUnregister(p);
    cudaGetLastError();
    free(p);
}

const mf_device_ops cuda_ops = {cuda_close,       cuda_supports,     cuda_tile_shape, cuda_run_tiles,
                                cuda_host_alloc,  cuda_host_free,    cuda_can_verify, cuda_verify_tiles,
                                cuda_gpu_count,   cuda_gpu_uuid,     NULL /* describe: the default */};

} /* namespace */

extern "C" int mf_cuda_backend_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
}

/* Open GPU `index`: its state and its description. */
static int open_gpu(int index, Impl **out, mf_device_info *info, char *err, size_t errlen)
{
    int count = mf_cuda_backend_count();
    if (index < 0 || index >= count) {
        snprintf(err, errlen, "cuda:%d: no such CUDA device (%d present)", index, count);
        return MF_DEV_ERR_NO_DEVICE;
    }
    cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, index);
    if (e != cudaSuccess) {
        snprintf(err, errlen, "cuda:%d: cudaGetDeviceProperties failed: %s", index, cudaGetErrorString(e));
        return MF_DEV_ERR_NO_DEVICE;
    }
    Impl *im = (Impl *)calloc(1, sizeof *im);
    if (!im) {
        snprintf(err, errlen, "out of memory");
        return MF_DEV_ERR_ARG;
    }
    im->ordinal = index;
    im->sms = p.multiProcessorCount;
    im->target = target_of(p.major, p.minor, &im->arch);
    const mf_cuda_kernel *const *parts = NULL;
    for (int t = 0; t < mf_cuda_target_count && im->target; t++)
        if (!strcmp(mf_cuda_targets[t].name, im->target))
            parts = mf_cuda_targets[t].parts;
    for (int p = 0; parts && parts[p]; p++)
        for (int k = 0; parts[p][k].instr; k++)
            im->nkernels++;
    im->kernels = (mf_cuda_kernel *)malloc(((size_t)im->nkernels + 1) * sizeof *im->kernels);
    if (im->kernels) {
        int n = 0;
        for (int p = 0; parts && parts[p]; p++)
            for (int k = 0; parts[p][k].instr; k++)
                im->kernels[n++] = parts[p][k];
        memset(&im->kernels[n], 0, sizeof im->kernels[n]);
    }
    im->runnable = (signed char *)malloc((size_t)im->nkernels + 1);
    im->blocks_per_sm = (int *)calloc((size_t)im->nkernels + 1, sizeof(int));
    if (!im->kernels || !im->runnable || !im->blocks_per_sm) {
        free(im->kernels);
        free(im->runnable);
        free(im->blocks_per_sm);
        free(im);
        snprintf(err, errlen, "out of memory");
        return MF_DEV_ERR_ARG;
    }
    memset(im->runnable, -1, (size_t)im->nkernels + 1);
    im->ngpu = 1;
    im->gpu[0] = im;
    int drv = 0, rt = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    memset(info, 0, sizeof *info);
    info->backend = MF_BACKEND_CUDA;
    info->index = index;
    info->model_arch = im->arch;
    snprintf(info->name, sizeof info->name, "%.127s", p.name);
    if (im->target)
        snprintf(info->arch, sizeof info->arch, "%s", im->target);
    else
        snprintf(info->arch, sizeof info->arch, "sm_%d%d", p.major, p.minor);
    snprintf(info->driver, sizeof info->driver, "CUDA driver API %d.%d", drv / 1000, (drv % 1000) / 10);
    snprintf(info->runtime, sizeof info->runtime, "CUDA runtime %d.%d", rt / 1000, (rt % 1000) / 10);
    mf_device_format_uuid((const unsigned char *)p.uuid.bytes, info->uuid, sizeof info->uuid);
    snprintf(im->uuid, sizeof im->uuid, "%s", info->uuid);
    if (cudaDeviceGetPCIBusId(info->pci_bus_id, (int)sizeof info->pci_bus_id, index) != cudaSuccess) {
        cudaGetLastError();  /* not sticky: clear it, the id stays unknown */
        info->pci_bus_id[0] = 0;
    }
    *out = im;
    return MF_DEV_OK;
}

extern "C" int mf_cuda_backend_open(int index, mf_device *dev, char *err, size_t errlen)
{
    return mf_cuda_backend_open_list(&index, 1, dev, err, errlen);
}

/* cuda:LIST: every GPU must be of the same architecture (one table row runs
 * on all of them); the device's description is the first GPU's, its name
 * counting the GPUs. */
extern "C" int mf_cuda_backend_open_list(const int *idx, int n, mf_device *dev, char *err, size_t errlen)
{
    if (n < 1 || n > MF_DEV_MAX_GPUS) {
        snprintf(err, errlen, "a CUDA device is 1 to %d GPUs", MF_DEV_MAX_GPUS);
        return MF_DEV_ERR_ARG;
    }
    Impl *im = NULL;
    int rc = open_gpu(idx[0], &im, &dev->info, err, errlen);
    if (rc)
        return rc;
    for (int g = 1; g < n; g++) {
        mf_device_info gi;
        Impl *other = NULL;
        rc = open_gpu(idx[g], &other, &gi, err, errlen);
        if (!rc && other->arch != im->arch) {
            snprintf(err, errlen, "cuda:%d (%s, %s) and cuda:%d (%s, %s) are different architectures; one process "
                     "runs GPUs of one architecture", idx[0], dev->info.name, dev->info.arch, idx[g], gi.name, gi.arch);
            impl_free(other);
            rc = MF_DEV_ERR_ARG;
        }
        if (rc) {
            for (int q = 1; q < im->ngpu; q++)
                impl_free(im->gpu[q]);
            impl_free(im);
            return rc;
        }
        im->gpu[im->ngpu++] = other;
    }
    if (n > 1) {
        char name[sizeof dev->info.name];
        snprintf(name, sizeof name, "%dx %.120s", n, dev->info.name);
        snprintf(dev->info.name, sizeof dev->info.name, "%s", name);
    }
    dev->ops = &cuda_ops;
    dev->impl = im;
    return MF_DEV_OK;
}
