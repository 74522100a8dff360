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

#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace {

const int kSlots = 2;

struct Slot {
    cudaStream_t stream;
    unsigned char *dev[4];  /* A, B, C, D on the device */
    size_t dev_cap;         /* bytes of each, per the largest chunk so far (max over the four) */
    unsigned char *host[4]; /* page-locked staging for A, B, C, D */
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
    const mf_cuda_kernel *kernels;
    int nkernels;
    signed char *runnable; /* per kernel: -1 unknown, 0 no image for this GPU, 1 runnable */
    int *blocks_per_sm;    /* per kernel, 0 until asked */
    Slot slot[kSlots];
    int streams_ready;
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
}

void free_resources(Impl *im)
{
    cudaSetDevice(im->ordinal);
    for (int s = 0; s < kSlots; s++) {
        Slot *sl = &im->slot[s];
        if (sl->stream)
            cudaStreamSynchronize(sl->stream);
        for (int i = 0; i < 4; i++) {
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

void cuda_close(mf_device *dev)
{
    Impl *im = (Impl *)dev->impl;
    if (!im)
        return;
    free_resources(im);
    free(im->runnable);
    free(im->blocks_per_sm);
    free(im);
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
    (void)SA;
    (void)SB;
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
    const size_t bytes[4] = {(size_t)m * k * mf_abi_elem_bytes(in->fa), (size_t)nn * k * mf_abi_elem_bytes(in->fb),
                             (size_t)m * nn * mf_abi_elem_bytes(in->fc), (size_t)m * nn * mf_abi_elem_bytes(in->fd)};
    const size_t tile_bytes = bytes[0] + bytes[1] + bytes[2] + bytes[3];
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
    const void *user_in[3] = {A, B, C};
    int pinned[4];
    for (int i = 0; i < 3; i++)
        pinned[i] = is_pinned(user_in[i]);
    pinned[3] = is_pinned(D);

    size_t need = chunk * (bytes[0] > bytes[2] ? (bytes[0] > bytes[3] ? bytes[0] : bytes[3])
                                               : (bytes[2] > bytes[3] ? bytes[2] : bytes[3]));
    if (bytes[1] * chunk > need)
        need = bytes[1] * chunk;
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
            for (int i = 0; i < 4; i++) {
                if (sl->dev[i])
                    CK(cudaFree(sl->dev[i]));
                sl->dev[i] = NULL;
            }
            for (int i = 0; i < 4; i++)
                CK(cudaMalloc((void **)&sl->dev[i], need));
            sl->dev_cap = need;
        }
        int staged = !pinned[0] || !pinned[1] || !pinned[2] || !pinned[3];
        if (staged && sl->host_cap < need) {
            for (int i = 0; i < 4; i++) {
                if (sl->host[i])
                    CK(cudaFreeHost(sl->host[i]));
                sl->host[i] = NULL;
            }
            for (int i = 0; i < 4; i++)
                CK(cudaMallocHost((void **)&sl->host[i], need));
            sl->host_cap = need;
        }
        for (int i = 0; i < 3; i++) {
            const unsigned char *src = (const unsigned char *)user_in[i] + lo * bytes[i];
            if (!pinned[i]) {
                memcpy(sl->host[i], src, n * bytes[i]);
                src = sl->host[i];
            }
            CK(cudaMemcpyAsync(sl->dev[i], src, n * bytes[i], cudaMemcpyHostToDevice, sl->stream));
        }
        mf_kargs g = {sl->dev[0], sl->dev[1], sl->dev[2], sl->dev[3], (unsigned long long)n};
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

/* Page-locked host memory: run_tiles copies it without staging.  When the
 * driver refuses (locked-memory limit), plain memory, which still works. */
void *cuda_host_alloc(mf_device *dev, size_t bytes)
{
    Impl *im = (Impl *)dev->impl;
    void *p = NULL;
    if (cudaSetDevice(im->ordinal) == cudaSuccess && cudaHostAlloc(&p, bytes, cudaHostAllocPortable) == cudaSuccess) {
        memset(p, 0, bytes);
        return p;
    }
    cudaGetLastError();
    return calloc(1, bytes);
}

void cuda_host_free(mf_device *dev, void *p)
{
    (void)dev;
    if (is_pinned(p))
        cudaFreeHost(p);
    else
        free(p);
}

const mf_device_ops cuda_ops = {cuda_close,     cuda_supports,  cuda_tile_shape, cuda_run_tiles,
                                cuda_host_alloc, cuda_host_free};

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

extern "C" int mf_cuda_backend_open(int index, mf_device *dev, char *err, size_t errlen)
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
    static const mf_cuda_kernel none[1] = {{0, 0, 0, 0, 0, 0, 0}};
    im->kernels = none;
    for (int t = 0; t < mf_cuda_target_count && im->target; t++)
        if (!strcmp(mf_cuda_targets[t].name, im->target))
            im->kernels = mf_cuda_targets[t].kernels;
    while (im->kernels[im->nkernels].instr)
        im->nkernels++;
    im->runnable = (signed char *)malloc((size_t)im->nkernels + 1);
    im->blocks_per_sm = (int *)calloc((size_t)im->nkernels + 1, sizeof(int));
    if (!im->runnable || !im->blocks_per_sm) {
        free(im->runnable);
        free(im->blocks_per_sm);
        free(im);
        snprintf(err, errlen, "out of memory");
        return MF_DEV_ERR_ARG;
    }
    memset(im->runnable, -1, (size_t)im->nkernels + 1);
    int drv = 0, rt = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    dev->ops = &cuda_ops;
    dev->impl = im;
    dev->info.backend = MF_BACKEND_CUDA;
    dev->info.index = index;
    dev->info.model_arch = im->arch;
    snprintf(dev->info.name, sizeof dev->info.name, "%s", p.name);
    if (im->target)
        snprintf(dev->info.arch, sizeof dev->info.arch, "%s", im->target);
    else
        snprintf(dev->info.arch, sizeof dev->info.arch, "sm_%d%d", p.major, p.minor);
    snprintf(dev->info.driver, sizeof dev->info.driver, "CUDA driver API %d.%d", drv / 1000, (drv % 1000) / 10);
    snprintf(dev->info.runtime, sizeof dev->info.runtime, "CUDA runtime %d.%d", rt / 1000, (rt % 1000) / 10);
    mf_device_format_uuid((const unsigned char *)p.uuid.bytes, dev->info.uuid, sizeof dev->info.uuid);
    if (cudaDeviceGetPCIBusId(dev->info.pci_bus_id, (int)sizeof dev->info.pci_bus_id, index) != cudaSuccess) {
        cudaGetLastError();  /* not sticky: clear it, the id stays unknown */
        dev->info.pci_bus_id[0] = 0;
    }
    return MF_DEV_OK;
}
