/*
 * device.c - opening devices by spec and the ABI array helpers shared by
 * every backend (mf_device.h).
 */
#include "backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t mf_abi_elem_bytes(mf_format f)
{
    return mf_tile_elem_bytes(f);   /* the model's tile layout is the device ABI */
}

/* Copy n elements of an ABI array (element size es) into 64-bit values. */
static inline void abi_copy(uint64_t *dst, const void *src, size_t first, int n, size_t es)
{
    switch (es) {
    case 8: for (int i = 0; i < n; i++) dst[i] = ((const uint64_t *)src)[first + (size_t)i]; break;
    case 4: for (int i = 0; i < n; i++) dst[i] = ((const uint32_t *)src)[first + (size_t)i]; break;
    case 2: for (int i = 0; i < n; i++) dst[i] = ((const uint16_t *)src)[first + (size_t)i]; break;
    default: for (int i = 0; i < n; i++) dst[i] = ((const uint8_t *)src)[first + (size_t)i]; break;
    }
}

void mf_tile_get_case(const mf_instr *in, int m, int n, int k, const void *A, const void *B, const void *C,
                      const void *SA, const void *SB, size_t t, int i, int j, mf_case *out)
{
    /* only the first k values and n_scales scales are ever read: no memset */
    size_t S = in->n_scales;
    out->c = mf_abi_get(in->fc, C, (t * (size_t)m + (size_t)i) * (size_t)n + (size_t)j);
    abi_copy(out->a, A, (t * (size_t)m + (size_t)i) * (size_t)k, k, mf_abi_elem_bytes(in->fa));
    abi_copy(out->b, B, (t * (size_t)n + (size_t)j) * (size_t)k, k, mf_abi_elem_bytes(in->fb));
    if (in->sparse && SA)   /* a sparse row's SA array is its metadata, n_meta bytes per row */
        for (int g = 0; g < in->n_meta; g++)
            out->meta[g] = ((const uint8_t *)SA)[(t * (size_t)m + (size_t)i) * in->n_meta + (size_t)g];
    if (S) {
        abi_copy(out->sa, SA, (t * (size_t)m + (size_t)i) * S, (int)S, mf_abi_elem_bytes(in->fs));
        abi_copy(out->sb, SB, (t * (size_t)n + (size_t)j) * S, (int)S, mf_abi_elem_bytes(in->fs));
    }
}

#ifndef MMAFUZZ_HAVE_CUDA
int mf_cuda_backend_count(void) { return 0; }
int mf_cuda_backend_open(int index, mf_device *dev, char *err, size_t errlen)
{
    (void)index;
    (void)dev;
    snprintf(err, errlen, "this mmafuzz was built without the CUDA device layer (no CUDA toolkit at build time)");
    return MF_DEV_ERR_NO_DEVICE;
}
int mf_cuda_backend_open_list(const int *idx, int n, mf_device *dev, char *err, size_t errlen)
{
    (void)idx;
    (void)n;
    return mf_cuda_backend_open(0, dev, err, errlen);
}
#endif
#ifndef MMAFUZZ_HAVE_HIP
int mf_hip_backend_count(void) { return 0; }
int mf_hip_backend_open(int index, mf_device *dev, char *err, size_t errlen)
{
    (void)index;
    (void)dev;
    snprintf(err, errlen, "this mmafuzz was built without the HIP device layer (no HIP toolchain at build time)");
    return MF_DEV_ERR_NO_DEVICE;
}
#endif

/* The backends with device wrappers (backend.h), indexed by mf_backend. */
static const mf_backend_entry backends[] = {
    {MF_BACKEND_CUDA, "cuda", mf_cuda_backend_count, mf_cuda_form_of, mf_cuda_form_row},
    {MF_BACKEND_HIP, "hip", mf_hip_backend_count, mf_hip_form_of, NULL},
};
enum { NBACKENDS = sizeof backends / sizeof backends[0] };
_Static_assert((int)NBACKENDS == (int)MF_BACKEND_MODEL, "one entry per backend with wrappers, in mf_backend order");

const char *mf_backend_name(int b) { return b >= 0 && b < NBACKENDS ? backends[b].name : NULL; }

int mf_backend_by_name(const char *name)
{
    for (int b = 0; b < NBACKENDS; b++)
        if (!strcmp(name, backends[b].name))
            return b;
    return !strcmp(name, "model") ? MF_BACKEND_MODEL : -1;
}

int mf_device_count(mf_backend b)
{
    return (int)b >= 0 && (int)b < NBACKENDS ? backends[b].count() : MF_ARCH_COUNT;
}

int mf_device_open(const char *spec, mf_device **out, char *err, size_t errlen)
{
    *out = NULL;
    mf_device *dev = calloc(1, sizeof *dev);
    if (!dev) {
        snprintf(err, errlen, "out of memory");
        return MF_DEV_ERR_ARG;
    }
    int rc;
    const char *colon = strchr(spec, ':');
    size_t plen = colon ? (size_t)(colon - spec) : strlen(spec);
    if (plen == 5 && !strncmp(spec, "model", 5)) {
        rc = colon ? mf_model_backend_open(colon + 1, dev, err, errlen) : MF_DEV_ERR_ARG;
        if (!colon)
            snprintf(err, errlen, "device 'model' needs an architecture: model:ARCH (e.g. model:ampere)");
    } else if ((plen == 4 && !strncmp(spec, "cuda", 4)) || (plen == 3 && !strncmp(spec, "hip", 3))) {
        int idx[MF_DEV_MAX_GPUS], n = 1;
        idx[0] = 0;
        if (colon && !strcmp(colon + 1, "all") && plen == 4) {
            n = mf_cuda_backend_count();
            if (n > MF_DEV_MAX_GPUS)
                n = MF_DEV_MAX_GPUS;
            for (int i = 0; i < n; i++)
                idx[i] = i;
            if (!n) {
                snprintf(err, errlen, "%s: no CUDA device present", spec);
                free(dev);
                return MF_DEV_ERR_NO_DEVICE;
            }
        } else if (colon) {
            const char *p = colon + 1;
            n = 0;
            for (;;) {
                char *end;
                long v = strtol(p, &end, 10);
                if (end == p || (*end && *end != ',') || v < 0 || v > 1024 || n == MF_DEV_MAX_GPUS) {
                    snprintf(err, errlen, "bad device index in '%s' (expected %s:N%s)", spec, plen == 4 ? "cuda" : "hip",
                             plen == 4 ? ", cuda:N,M,... or cuda:all, at most 16 GPUs" : "");
                    free(dev);
                    return MF_DEV_ERR_ARG;
                }
                /* MMAFUZZ_SAME_GPU_TWICE=1: tests run two pipelines on one GPU (cuda:0,0) */
                const char *twice = getenv("MMAFUZZ_SAME_GPU_TWICE");
                for (int i = 0; i < n && !(twice && !strcmp(twice, "1")); i++)
                    if (idx[i] == (int)v) {
                        snprintf(err, errlen, "'%s' names GPU %ld twice", spec, v);
                        free(dev);
                        return MF_DEV_ERR_ARG;
                    }
                idx[n++] = (int)v;
                if (!*end)
                    break;
                p = end + 1;
            }
        }
        if (n > 1 && plen == 3) {
            snprintf(err, errlen, "'%s': a HIP device is one GPU (hip:N)", spec);
            rc = MF_DEV_ERR_ARG;
        } else if (plen == 4) {
            rc = n > 1 ? mf_cuda_backend_open_list(idx, n, dev, err, errlen)
                       : mf_cuda_backend_open(idx[0], dev, err, errlen);
        } else {
            rc = mf_hip_backend_open(idx[0], dev, err, errlen);
        }
    } else {
        snprintf(err, errlen, "unknown device '%s' (expected cuda[:N], hip[:N] or model:ARCH)", spec);
        rc = MF_DEV_ERR_ARG;
    }
    if (rc) {
        free(dev);
        return rc;
    }
    *out = dev;
    return MF_DEV_OK;
}

void mf_device_close(mf_device *dev)
{
    if (!dev)
        return;
    if (dev->ops && dev->ops->close)
        dev->ops->close(dev);
    free(dev);
}

const mf_device_info *mf_device_get_info(const mf_device *dev) { return &dev->info; }

void mf_device_format_uuid(const unsigned char b[16], char *out, size_t outlen)
{
    snprintf(out, outlen, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
             b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

int mf_device_supports(const mf_device *dev, const mf_instr *in, const char *variant)
{
    return dev->ops->supports(dev, in, variant);
}

int mf_device_tile_shape(const mf_device *dev, const mf_instr *in, const char *variant, int *m, int *n, int *k)
{
    return dev->ops->tile_shape(dev, in, variant, m, n, k);
}

int mf_device_run_tiles(mf_device *dev, const mf_instr *in, const char *variant, size_t ntiles, const void *A,
                        const void *B, const void *C, const void *SA, const void *SB, void *D, char *err,
                        size_t errlen)
{
    if (!dev->ops->supports(dev, in, variant)) {
        snprintf(err, errlen, "%s%s%s: not supported on %s", in->name, variant ? " variant " : "",
                 variant ? variant : "", dev->info.name);
        return MF_DEV_ERR_UNSUPPORTED;
    }
    if (in->sparse && !SA) {   /* a sparse row's SA is its metadata */
        snprintf(err, errlen, "%s: a sparse row needs its metadata (SA)", in->name);
        return MF_DEV_ERR_ARG;
    }
    return dev->ops->run_tiles(dev, in, variant, ntiles, A, B, C, SA, SB, D, err, errlen);
}

void *mf_device_host_alloc(mf_device *dev, size_t bytes)
{
    if (bytes == 0)
        bytes = 1;
    if (dev->ops->host_alloc)
        return dev->ops->host_alloc(dev, bytes);
    return calloc(1, bytes);
}

void mf_device_host_free(mf_device *dev, void *p)
{
    if (!p)
        return;
    if (dev->ops->host_free)
        dev->ops->host_free(dev, p);
    else
        free(p);
}

int mf_device_can_verify(const mf_device *dev, const mf_instr *in, const char *variant, const mf_instr *model,
                         const char **why)
{
    if (dev->ops->can_verify)
        return dev->ops->can_verify(dev, in, variant, model, why);
    if (why)
        *why = "the device does not verify on itself: --verify host";
    return 0;
}

int mf_device_verifies(const mf_device *dev) { return dev->ops->verify_tiles != NULL; }

int mf_device_verify_tiles(mf_device *dev, const mf_verify_req *rq, mf_verify_res *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    const char *why = NULL;
    if (!mf_device_can_verify(dev, rq->in, rq->variant, rq->model, &why)) {
        snprintf(err, errlen, "%s: cannot verify on %s: %s", rq->in->name, dev->info.name, why ? why : "?");
        return MF_DEV_ERR_UNSUPPORTED;
    }
    return dev->ops->verify_tiles(dev, rq, res, err, errlen);
}

void mf_device_describe(const mf_device *dev, char *buf, size_t len)
{
    if (dev->ops->describe) {
        dev->ops->describe(dev, buf, len);
        return;
    }
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    if (!vis || !*vis)
        vis = getenv("HIP_VISIBLE_DEVICES");
    snprintf(buf, len, "%s %s index %d%s%s", dev->info.name, dev->info.arch, dev->info.index,
             vis && *vis ? " visible-devices " : "", vis && *vis ? vis : "");
}

int mf_device_gpu_count(const mf_device *dev) { return dev->ops->gpu_count ? dev->ops->gpu_count(dev) : 1; }

const char *mf_device_gpu_uuid(const mf_device *dev, int g)
{
    return dev->ops->gpu_uuid ? dev->ops->gpu_uuid(dev, g) : dev->info.uuid;
}

const char *mf_device_target(const mf_instr *in, const char **why)
{
    /* the target column of model/arch_table.def */
    const mf_arch_info *ai = mf_arch_get(in->arch);
    const char *t = ai ? ai->target : NULL;
    if (why) {
        static _Thread_local char buf[160];
        snprintf(buf, sizeof buf, "model-only: %s", ai && *ai->no_target_why ? ai->no_target_why : "no device target");
        *why = t ? "" : buf;
    }
    return t;
}

int mf_device_variant_is_form(const char *variant)
{
    for (int i = 1; variant && i <= MF_INSTR_FORMS; i++)   /* the model's table of forms (mf_instr_with_form) */
        if (!strcmp(variant, mf_instr_form_name_at(i)))
            return 1;
    return 0;
}

void mf_device_form_of(const mf_instr *in, mf_device_form *out)
{
    static const char *const default_only[] = {"", NULL};
    out->backend = NULL;
    out->form = NULL;
    out->why = NULL;
    out->variants = default_only;
    for (int b = 0; b < NBACKENDS; b++)
        if (backends[b].form_of(in, out))
            return;
    out->why = "no device backend";
}

int mf_backend_form_row(const mf_instr *in, const char *variant, mf_instr *out)
{
    mf_device_form f;
    for (int b = 0; b < NBACKENDS; b++) {
        f.variants = NULL;
        if (backends[b].form_of(in, &f))
            return backends[b].form_row && variant ? backends[b].form_row(in, variant, out) : -1;
    }
    return -1;
}
