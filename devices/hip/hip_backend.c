/*
 * hip_backend.c - "hip[:N]": AMD GPUs through the HIP runtime (backend.h).
 *
 * The wrappers are loaded from the code object embedded for the GPU's target
 * (code_objects.h) with hipModuleLoadData, so this file is plain C and needs
 * only the HIP runtime library, whatever compiler built the code objects.
 * A batch is cut into chunks; chunks alternate between two streams and two
 * sets of device buffers, so the copies of one chunk overlap the kernel of
 * the other.  Each wavefront computes `blocks` consecutive tiles
 * (mfma_layout.h).
 */
#include "backend.h"
#include "code_objects.h"
#include "mfma_layout.h"

#include <hip/hip_runtime_api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MF_HIP_CHUNK_TILES 65536 /* tiles per chunk; a multiple of every block count (1..16) */
#define MF_HIP_WAVES_PER_GROUP 4 /* as MF_WAVES_PER_GROUP in mfma_kernel.h */

typedef struct hip_bufs {
    void *a, *b, *c, *d;
    size_t cap_a, cap_b, cap_c, cap_d; /* bytes */
} hip_bufs;

typedef struct hip_dev {
    int ordinal;
    const mf_hip_code_object *co;
    hipModule_t module;
    hipStream_t stream[2];
    hip_bufs buf[2];
    hipFunction_t *fns; /* per table row, looked up on first use */
} hip_dev;

/* The GPU target of AMD architecture a (mf_device_target of one of its rows). */
static const char *arch_target(mf_arch a)
{
    for (size_t r = 0; r < mf_instr_count; r++)
        if (mf_instr_table[r].arch == a)
            return mf_device_target(&mf_instr_table[r], NULL);
    return NULL;
}

static const mf_hip_code_object *find_code_object(const char *gfx)
{
    for (size_t i = 0; i < mf_hip_code_object_count; i++)
        if (!strcmp(mf_hip_code_objects[i]->target, gfx))
            return mf_hip_code_objects[i];
    return NULL;
}

static void built_targets(char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    for (size_t i = 0; i < mf_hip_code_object_count && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? " " : "", mf_hip_code_objects[i]->target);
    if (!mf_hip_code_object_count)
        snprintf(buf, len, "none");
}

int mf_hip_backend_count(void)
{
    int n = 0;
    if (hipGetDeviceCount(&n) != hipSuccess)
        return 0;
    return n;
}

static void free_bufs(hip_dev *h)
{
    for (int s = 0; s < 2; s++) {
        hip_bufs *b = &h->buf[s];
        void *p[4] = {b->a, b->b, b->c, b->d};
        for (int i = 0; i < 4; i++)
            if (p[i])
                (void)hipFree(p[i]);
        memset(b, 0, sizeof *b);
    }
}

/* Load the module and create the streams; on failure a message in err. */
static hipError_t hip_setup(hip_dev *h, char *err, size_t errlen)
{
    hipError_t e = hipSetDevice(h->ordinal);
    if (e == hipSuccess)
        e = hipModuleLoadData(&h->module, h->co->data);
    if (e != hipSuccess) {
        snprintf(err, errlen, "hip:%d: loading the %s wrappers: %s", h->ordinal, h->co->target, hipGetErrorString(e));
        return e;
    }
    for (int s = 0; s < 2 && e == hipSuccess; s++)
        e = hipStreamCreateWithFlags(&h->stream[s], hipStreamNonBlocking);
    if (e != hipSuccess)
        snprintf(err, errlen, "hip:%d: creating streams: %s", h->ordinal, hipGetErrorString(e));
    memset(h->fns, 0, mf_instr_count * sizeof *h->fns);
    return e;
}

static void hip_close(mf_device *dev)
{
    hip_dev *h = dev->impl;
    if (!h)
        return;
    (void)hipSetDevice(h->ordinal);
    free_bufs(h);
    for (int s = 0; s < 2; s++)
        if (h->stream[s])
            (void)hipStreamDestroy(h->stream[s]);
    if (h->module)
        (void)hipModuleUnload(h->module);
    free(h->fns);
    free(h);
    dev->impl = NULL;
}

static int hip_supports(const mf_device *dev, const mf_instr *in, const char *variant)
{
    mf_mfma_info x;
    char err[256];
    return variant == NULL && in->arch == dev->info.model_arch && mf_mfma_info_get(in, &x, err, sizeof err) == 0;
}

static int hip_tile_shape(const mf_device *dev, const mf_instr *in, const char *variant, int *m, int *n, int *k)
{
    (void)dev;
    (void)variant;
    *m = in->m;
    *n = in->n;
    *k = in->k;
    return MF_DEV_OK;
}

/* Grow buffer *p to at least `need` bytes. */
static hipError_t ensure(void **p, size_t *cap, size_t need)
{
    if (*cap >= need)
        return hipSuccess;
    if (*p)
        (void)hipFree(*p);
    *p = NULL;
    *cap = 0;
    hipError_t e = hipMalloc(p, need);
    if (e == hipSuccess)
        *cap = need;
    return e;
}

/* After a fault: reset the GPU and load the wrappers again. */
static void recover(hip_dev *h)
{
    char err[256];
    (void)hipDeviceReset(); /* frees every allocation, module and stream of this process on it */
    memset(h->buf, 0, sizeof h->buf);
    h->module = NULL;
    h->stream[0] = h->stream[1] = NULL;
    (void)hip_setup(h, err, sizeof err);
}

static int hip_run_tiles(mf_device *dev, const mf_instr *in, const char *variant, size_t ntiles, const void *A,
                         const void *B, const void *C, const void *SA, const void *SB, void *D, char *err,
                         size_t errlen)
{
    (void)variant;
    (void)SA;
    (void)SB;
    hip_dev *h = dev->impl;
    mf_mfma_info x;
    mf_mfma_layouts L;
    if (mf_mfma_info_get(in, &x, err, errlen) || mf_mfma_layouts_get(&x, &L, err, errlen))
        return MF_DEV_ERR_UNSUPPORTED;
    if (!h->module) {
        snprintf(err, errlen, "%s: hip:%d is unusable after an earlier fault", in->name, h->ordinal);
        return MF_DEV_ERR_FAULT;
    }
    hipError_t e = hipSetDevice(h->ordinal);
    const char *what = "hipSetDevice";
    size_t row = (size_t)(in - mf_instr_table);
    if (e == hipSuccess && !h->fns[row] && hipModuleGetFunction(&h->fns[row], h->module, x.symbol) != hipSuccess) {
        h->fns[row] = NULL;
        snprintf(err, errlen, "%s: hip:%d: the %s code object has no kernel %s", in->name, h->ordinal, h->co->target,
                 x.symbol);
        return MF_DEV_ERR_UNSUPPORTED;
    }
    size_t ea = mf_abi_elem_bytes(in->fa), ed = mf_abi_elem_bytes(in->fd);
    size_t t0 = 0, t1 = ntiles; /* the failing range: the whole batch until a chunk starts */
    int pending[2] = {0, 0};
    struct { size_t t0, t1; } span[2] = {{0, 0}, {0, 0}};
    for (int s = 0; e == hipSuccess && t0 < ntiles; s ^= 1, t0 = t1) {
        t1 = ntiles - t0 < MF_HIP_CHUNK_TILES ? ntiles : t0 + MF_HIP_CHUNK_TILES;
        unsigned long long nt = t1 - t0;
        hip_bufs *b = &h->buf[s];
        what = "hipStreamSynchronize";
        if (pending[s] && (e = hipStreamSynchronize(h->stream[s])) != hipSuccess) {
            t0 = span[s].t0, t1 = span[s].t1;
            break;
        }
        pending[s] = 0;
        size_t na = nt * L.a_tile * ea, nb = nt * L.b_tile * ea, nc = nt * L.cd_tile * ed;
        what = "hipMalloc";
        if ((e = ensure(&b->a, &b->cap_a, na)) || (e = ensure(&b->b, &b->cap_b, nb)) ||
            (e = ensure(&b->c, &b->cap_c, nc)) || (e = ensure(&b->d, &b->cap_d, nc)))
            break;
        what = "copying A, B, C to the GPU";
        if ((e = hipMemcpyHtoDAsync(b->a, (void *)((const char *)A + t0 * L.a_tile * ea), na, h->stream[s])) ||
            (e = hipMemcpyHtoDAsync(b->b, (void *)((const char *)B + t0 * L.b_tile * ea), nb, h->stream[s])) ||
            (e = hipMemcpyHtoDAsync(b->c, (void *)((const char *)C + t0 * L.cd_tile * ed), nc, h->stream[s])))
            break;
        unsigned long long waves = (nt + L.blocks - 1) / L.blocks;
        unsigned groups = (unsigned)((waves + MF_HIP_WAVES_PER_GROUP - 1) / MF_HIP_WAVES_PER_GROUP);
        void *args[] = {&b->a, &b->b, &b->c, &b->d, &nt, &L};
        what = "launching the wrapper";
        if ((e = hipModuleLaunchKernel(h->fns[row], groups, 1, 1, 64 * MF_HIP_WAVES_PER_GROUP, 1, 1, 0, h->stream[s],
                                       args, NULL)))
            break;
        what = "copying D from the GPU";
        if ((e = hipMemcpyDtoHAsync((char *)D + t0 * L.cd_tile * ed, b->d, nc, h->stream[s])))
            break;
        pending[s] = 1;
        span[s].t0 = t0;
        span[s].t1 = t1;
    }
    for (int s = 0; s < 2 && e == hipSuccess; s++)
        if (pending[s] && (e = hipStreamSynchronize(h->stream[s])) != hipSuccess) {
            what = "running the wrapper";
            t0 = span[s].t0, t1 = span[s].t1;
        }
    if (e != hipSuccess) {
        snprintf(err, errlen, "%s: hip:%d: tiles %zu..%zu: %s: %s (the GPU was reset)", in->name, h->ordinal, t0,
                 t1 ? t1 - 1 : 0, what, hipGetErrorString(e));
        recover(h);
        return MF_DEV_ERR_FAULT;
    }
    return MF_DEV_OK;
}

static int hip_can_verify(const mf_device *dev, const mf_instr *in, const char *variant, const mf_instr *model,
                          const char **why)
{
    (void)dev, (void)in, (void)variant, (void)model;
    if (why)
        *why = "the HIP layer has no device-code model: --verify host";
    return 0;
}

static const mf_device_ops hip_ops = {hip_close, hip_supports,   hip_tile_shape, hip_run_tiles, NULL,
                                     NULL,      hip_can_verify, NULL,           NULL,          NULL,
                                     NULL};

/* The GPU's UUID (hipDeviceGetUuid), or "" when the runtime does not tell.
 * ROCm fills the 16 bytes with the ASCII hex digits of the GPU's unique id,
 * which rocminfo prints as "GPU-" and those digits: printed the same way
 * here; other bytes in nvidia-smi's form (mf_device_format_uuid). */
static void hip_uuid_of(int index, char *out, size_t outlen)
{
    hipDevice_t hd;
    hipUUID u;
    out[0] = 0;
    if (hipDeviceGet(&hd, index) != hipSuccess || hipDeviceGetUuid(&u, hd) != hipSuccess)
        return;
    int ascii = 1;
    for (int i = 0; i < 16; i++)
        ascii &= (u.bytes[i] >= '0' && u.bytes[i] <= '9') || (u.bytes[i] >= 'a' && u.bytes[i] <= 'f') ||
                 (u.bytes[i] >= 'A' && u.bytes[i] <= 'F');
    if (ascii)
        snprintf(out, outlen, "GPU-%.16s", u.bytes);
    else
        mf_device_format_uuid((const unsigned char *)u.bytes, out, outlen);
}

int mf_hip_backend_open(int index, mf_device *dev, char *err, size_t errlen)
{
    int n = 0;
    hipError_t e = hipGetDeviceCount(&n);
    if (e != hipSuccess || n == 0) {
        snprintf(err, errlen, "hip:%d: no AMD GPU found (hipGetDeviceCount: %s)", index,
                 e != hipSuccess ? hipGetErrorString(e) : "0 devices");
        return MF_DEV_ERR_NO_DEVICE;
    }
    if (index >= n) {
        snprintf(err, errlen, "hip:%d: no such device (%d AMD GPU(s): hip:0..hip:%d)", index, n, n - 1);
        return MF_DEV_ERR_NO_DEVICE;
    }
    hipDeviceProp_t prop;
    memset(&prop, 0, sizeof prop);
    if ((e = hipGetDeviceProperties(&prop, index)) != hipSuccess) {
        snprintf(err, errlen, "hip:%d: hipGetDeviceProperties: %s", index, hipGetErrorString(e));
        return MF_DEV_ERR_NO_DEVICE;
    }
    char gfx[32];
    snprintf(gfx, sizeof gfx, "%.*s", (int)strcspn(prop.gcnArchName, ":"), prop.gcnArchName);
    mf_arch arch = MF_ARCH_COUNT;
    for (int a = 0; a < MF_ARCH_COUNT; a++) {   /* the AMD rows of model/arch_table.def */
        const char *t = mf_arch_is_amd((mf_arch)a) ? arch_target((mf_arch)a) : NULL;
        if (t && !strcmp(t, gfx))
            arch = (mf_arch)a;
    }
    char built[128];
    built_targets(built, sizeof built);
    if (arch == MF_ARCH_COUNT) {
        char targets[256] = "";
        for (int a = 0; a < MF_ARCH_COUNT; a++)
            if (mf_arch_is_amd((mf_arch)a))
                snprintf(targets + strlen(targets), sizeof targets - strlen(targets), "%s%s %s", *targets ? ", " : "",
                         mf_arch_get((mf_arch)a)->hip_target, mf_arch_name((mf_arch)a));
        snprintf(err, errlen, "hip:%d: %s (%s) is not a target of the architecture table (%s)", index, prop.name, gfx,
                 targets);
        return MF_DEV_ERR_NO_DEVICE;
    }
    const mf_hip_code_object *co = find_code_object(gfx);
    if (!co) {
        snprintf(err, errlen, "hip:%d: this mmafuzz holds no %s wrappers (built for: %s); rebuild with a compiler "
                              "for %s (devices/hip/README.md)", index, gfx, built, gfx);
        return MF_DEV_ERR_NO_DEVICE;
    }
    hip_dev *h = calloc(1, sizeof *h);
    if (h)
        h->fns = calloc(mf_instr_count, sizeof *h->fns);
    if (!h || !h->fns) {
        free(h);
        snprintf(err, errlen, "out of memory");
        return MF_DEV_ERR_ARG;
    }
    h->ordinal = index;
    h->co = co;
    if (hip_setup(h, err, errlen) != hipSuccess) {
        dev->impl = h;
        hip_close(dev);
        return MF_DEV_ERR_NO_DEVICE;
    }
    dev->ops = &hip_ops;
    dev->impl = h;
    dev->info.backend = MF_BACKEND_HIP;
    dev->info.index = index;
    dev->info.model_arch = arch;
    snprintf(dev->info.name, sizeof dev->info.name, "%.127s", prop.name[0] ? prop.name : gfx);
    snprintf(dev->info.arch, sizeof dev->info.arch, "%s", gfx);
    int drv = 0, rt = 0;
    (void)hipDriverGetVersion(&drv);
    (void)hipRuntimeGetVersion(&rt);
    snprintf(dev->info.driver, sizeof dev->info.driver, "%d", drv);
    snprintf(dev->info.runtime, sizeof dev->info.runtime, "HIP %d.%d.%d", rt / 10000000, rt / 100000 % 100,
             rt % 100000);
    hip_uuid_of(index, dev->info.uuid, sizeof dev->info.uuid);
    if (hipDeviceGetPCIBusId(dev->info.pci_bus_id, (int)sizeof dev->info.pci_bus_id, index) != hipSuccess)
        dev->info.pci_bus_id[0] = 0;
    return MF_DEV_OK;
}
