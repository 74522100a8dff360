/*
 * backend.h - what a device backend implements behind mf_device.h.
 * One backend per folder: cuda/ (MMAFUZZ_HAVE_CUDA), hip/ (MMAFUZZ_HAVE_HIP);
 * the model backend is model_backend.c.
 */
#ifndef MMAFUZZ_DEVICE_BACKEND_H
#define MMAFUZZ_DEVICE_BACKEND_H

#include "mf_device.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MF_DEV_MAX_GPUS 16  /* GPUs behind one device (mf_verify_res.gpu_cases) */

typedef struct mf_device_ops {
    void (*close)(mf_device *dev);
    int (*supports)(const mf_device *dev, const mf_instr *in, const char *variant);
    int (*tile_shape)(const mf_device *dev, const mf_instr *in, const char *variant, int *m, int *n, int *k);
    int (*run_tiles)(mf_device *dev, const mf_instr *in, const char *variant, size_t ntiles, const void *A,
                     const void *B, const void *C, const void *SA, const void *SB, void *D, char *err,
                     size_t errlen);
    /* Optional (NULL: calloc/free): zeroed host memory the device reads and
     * writes fastest (page-locked for CUDA). */
    void *(*host_alloc)(mf_device *dev, size_t bytes);
    void (*host_free)(mf_device *dev, void *p);
    /* Optional (NULL: not supported): verification on the device itself
     * (can_verify says why a row is not verified there: every backend
     * sets it), and the GPUs behind one device. */
    int (*can_verify)(const mf_device *dev, const mf_instr *in, const char *variant, const mf_instr *model,
                      const char **why);
    int (*verify_tiles)(mf_device *dev, const mf_verify_req *rq, mf_verify_res *res, char *err, size_t errlen);
    int (*gpu_count)(const mf_device *dev);
    const char *(*gpu_uuid)(const mf_device *dev, int g);
    /* Optional (NULL: name, architecture, index and the visible-devices
     * setting): mf_device_describe. */
    void (*describe)(const mf_device *dev, char *buf, size_t len);
} mf_device_ops;

struct mf_device {
    const mf_device_ops *ops;
    mf_device_info info;
    void *impl;  /* the backend's own state */
};

/* Each backend: how many devices, and open device `index` into *dev
 * (ops, info and impl filled).  Return MF_DEV_* codes. */
int mf_cuda_backend_count(void);
int mf_cuda_backend_open(int index, mf_device *dev, char *err, size_t errlen);
/* One device over the CUDA GPUs idx[0..n-1] (n <= MF_DEV_MAX_GPUS). */
int mf_cuda_backend_open_list(const int *idx, int n, mf_device *dev, char *err, size_t errlen);
int mf_hip_backend_count(void);
int mf_hip_backend_open(int index, mf_device *dev, char *err, size_t errlen);
int mf_model_backend_open(const char *arch, mf_device *dev, char *err, size_t errlen);

/* The backend registry (device.c): each backend with device wrappers, its
 * spec prefix, how many devices it has, and what its wrappers make of a
 * table row, asked without a device (`list`, `devices`, the model backend's
 * operand forms).  The form entries are plain C, built with or without the
 * backend's toolchain: cuda/cuda_form.c, hip/hip_form.c. */
typedef struct mf_backend_entry {
    mf_backend id;
    const char *name;  /* "cuda", "hip" */
    int (*count)(void);
    /* 1 if row `in` is this backend's (its architecture), *out filled
     * (form NULL with why when it stays model-only); 0 otherwise. */
    int (*form_of)(const mf_instr *in, mf_device_form *out);
    /* The model row of operand-form variant `variant` of row `in` (its
     * arithmetic, the default tile shape).  @return 0, or -1 when `variant`
     * is no operand form of the row.  NULL: the backend has no such forms. */
    int (*form_row)(const mf_instr *in, const char *variant, mf_instr *out);
} mf_backend_entry;
int mf_cuda_form_of(const mf_instr *in, mf_device_form *out);
int mf_cuda_form_row(const mf_instr *in, const char *variant, mf_instr *out);
int mf_hip_form_of(const mf_instr *in, mf_device_form *out);

/* The model row of an operand-form variant of row `in`, as the backend that
 * wraps the row defines the form (mf_backend_entry.form_row).  @return 0, or
 * -1 when no backend has such a variant of the row. */
int mf_backend_form_row(const mf_instr *in, const char *variant, mf_instr *out);

/* A GPU's 16 UUID bytes as nvidia-smi -L prints them:
 * "GPU-" 8-4-4-4-12 lower-case hex digits (out: at least 41 bytes). */
void mf_device_format_uuid(const unsigned char bytes[16], char *out, size_t outlen);

#ifdef __cplusplus
}
#endif
#endif
