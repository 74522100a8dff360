/*
 * mf_device.h - the one C ABI through which the harness runs MMA
 * instructions on a device: a CUDA GPU, an AMD GPU (HIP), or the model of
 * another architecture ("model:ARCH", for differential runs and for testing
 * the whole driver on a machine without a GPU).
 *
 * Data travel as tiles in the canonical layout, every element a bit pattern
 * stored in mf_abi_elem_bytes(format) bytes, little-endian, low bits used:
 *
 *   A   ntiles x M x K       row-major       (row i of tile t: a of output row i)
 *   B   ntiles x N x K       column-major    (column j: K contiguous values)
 *   C   ntiles x M x N       row-major
 *   D   ntiles x M x N       row-major       (written by the device)
 *   SA  ntiles x M x S       one scale per row and K-block (S = n_scales)
 *   SB  ntiles x N x S       one scale per column and K-block
 *
 * Every output element of a tile is one dot-product case of the model:
 * d[i][j] = f(c[i][j], A[i][0..K-1], B[0..K-1][j], SA[i][..], SB[j][..]).
 * mf_tile_get_case() extracts it.
 *
 * The tile shape is the variant's: M, N, K of the table row by default;
 * wgmma variants may use a larger N (e.g. "n256") or take A from registers
 * ("a_reg").  mf_device_tile_shape() tells the shape of a variant.
 *
 * Errors are values: functions return 0 on success, or a nonzero MF_DEV_*
 * code with a message in the caller's buffer naming the instruction and batch.
 */
#ifndef MMAFUZZ_DEVICE_H
#define MMAFUZZ_DEVICE_H

#include "mmafuzz_model.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    MF_DEV_OK = 0,
    MF_DEV_ERR_NO_DEVICE = 1,   /* backend not built, or no such device */
    MF_DEV_ERR_UNSUPPORTED = 2, /* instruction/variant not runnable here */
    MF_DEV_ERR_FAULT = 3,       /* a kernel fault or runtime error (context was reset) */
    MF_DEV_ERR_ARG = 4          /* bad argument */
};

typedef enum mf_backend { MF_BACKEND_CUDA, MF_BACKEND_HIP, MF_BACKEND_MODEL } mf_backend;

typedef struct mf_device mf_device;

typedef struct mf_device_info {
    mf_backend backend;
    int index;
    char name[128];      /* "NVIDIA H100 80GB HBM3", "model:ampere" */
    char arch[32];       /* "sm_90a", "gfx942", "ampere" */
    char driver[64];     /* driver version */
    char runtime[64];    /* CUDA / HIP runtime version */
    /* which physical GPU, independent of ordinals and CUDA_VISIBLE_DEVICES:
     * "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" as nvidia-smi -L prints it
     * (HIP: the same form of hipDeviceProp_t.uuid) and the PCI bus id
     * "0000:41:00.0"; "" when the runtime does not tell, "model" for
     * model:ARCH devices */
    char uuid[48];
    char pci_bus_id[24];
    mf_arch model_arch;  /* the table architecture this device executes */
} mf_device_info;

/* Bytes each element of format f occupies in ABI arrays (8, 4, 2 or 1). */
size_t mf_abi_elem_bytes(mf_format f);

/* Open a device by spec: "cuda", "cuda:N", "hip", "hip:N", "model:ARCH".
 * @return MF_DEV_OK and *out, or an error code with a message. */
int mf_device_open(const char *spec, mf_device **out, char *err, size_t errlen);
void mf_device_close(mf_device *dev);
const mf_device_info *mf_device_get_info(const mf_device *dev);

/* @return 1 if the device can run instruction `in` (variant NULL = default).
 * For model:ARCH devices: `in`'s qualifier exists in ARCH's table too. */
int mf_device_supports(const mf_device *dev, const mf_instr *in, const char *variant);

/* @return 1 if `variant` changes what the instruction computes (wgmma's
 * operand forms "neg_a", "neg_b", "neg_ab", "no_c"): its outputs are not the
 * table row's, so they cannot be recorded under the row's name. */
int mf_device_variant_is_form(const char *variant);

/* Shape of a tile for instruction `in` and variant (NULL = default). */
int mf_device_tile_shape(const mf_device *dev, const mf_instr *in, const char *variant, int *m, int *n, int *k);

/* Run ntiles tiles of instruction `in` (layout above).  SA/SB may be NULL for
 * instructions without scales.  The call returns when D is complete; inside,
 * transfers and kernels overlap.  On a fault the message names the
 * instruction and the tile range, the device is reset and stays usable. */
int mf_device_run_tiles(mf_device *dev, const mf_instr *in, const char *variant, size_t ntiles, const void *A,
                        const void *B, const void *C, const void *SA, const void *SB, void *D, char *err,
                        size_t errlen);

/* Zeroed host memory for the arrays of mf_device_run_tiles, of the kind the
 * device transfers fastest (CUDA: page-locked, copied without staging);
 * plain calloc memory for devices without such a kind, or when none is left.
 * Free with mf_device_host_free on the same device.  NULL: out of memory. */
void *mf_device_host_alloc(mf_device *dev, size_t bytes);
void mf_device_host_free(mf_device *dev, void *p);

/* Extract the case of output (i, j) of tile t from ABI arrays. */
void mf_tile_get_case(const mf_instr *in, int m, int n, int k, const void *A, const void *B, const void *C,
                      const void *SA, const void *SB, size_t t, int i, int j, mf_case *out);

/* Read element idx of an ABI array of format f. */
static inline uint64_t mf_abi_get(mf_format f, const void *base, size_t idx)
{
    return mf_elem_get(mf_tile_elem_bytes(f), base, idx);
}

/* Write element idx of an ABI array of format f. */
static inline void mf_abi_set(mf_format f, void *base, size_t idx, uint64_t v)
{
    mf_elem_set(mf_tile_elem_bytes(f), base, idx, v);
}

/* The compilation target that runs instruction `in` natively ("sm_90a",
 * "gfx942"), or NULL when no toolchain this project supports can build it
 * (volta: nvcc 13.0 dropped sm_70).  `why` (may be NULL) receives a reason. */
const char *mf_device_target(const mf_instr *in, const char **why);

/* How the project's device wrappers run instruction `in` (whether or not a
 * device is present): the instruction form, or NULL with the reason it
 * stays model-only, and the variants the wrapper has.  The harness asks
 * this here instead of reading a backend's own headers. */
typedef struct mf_device_form {
    const char *form;             /* "mma.sync", "wgmma", "mfma"; NULL: no wrapper */
    const char *why;              /* form NULL: why the row stays model-only */
    const char *const *variants;  /* NULL-terminated; "" (the default) first */
} mf_device_form;
void mf_device_form_of(const mf_instr *in, mf_device_form *out);

/* Number of devices of a backend present (0 when not built or none). */
int mf_device_count(mf_backend b);

#ifdef __cplusplus
}
#endif
#endif /* MMAFUZZ_DEVICE_H */
