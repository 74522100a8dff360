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
 * Sparse rows (mma.sp, mf_instr.sparse): A holds the logical dense rows (K
 * values, +0 at the pruned positions) and SA is the metadata array,
 * ntiles x M x n_meta bytes, one PTX metadata nibble per group of K
 * (mf_case.meta); SB is unused (NULL).  The sparsity selector is a variant
 * ("sel1".."sel3"; the default is selector 0), not part of the data.
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

#include "mmafuzz_gen.h"
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

/* Open a device by spec: "cuda", "cuda:N", "cuda:all", "cuda:N,M,...",
 * "hip", "hip:N", "model:ARCH".  A CUDA spec naming several GPUs opens one
 * device over all of them: run_tiles uses the first, verify_tiles spreads
 * each call's tiles over all of them.
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
 * instructions without scales (a sparse row needs SA: its metadata).  The
 * call returns when D is complete; inside,
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

/* ------------------------------------------------- verification on the device */

/* One disagreement found on the device: output (i, j) of campaign tile `tile`. */
typedef struct mf_verify_hit {
    uint64_t tile;
    uint32_t i, j;
    uint64_t dev, model;   /* the device's d and the model's d, bit patterns of the output format */
} mf_verify_hit;

/* "Generate, run and verify tiles [first, first + ntiles) of this instruction
 * against this model row", all on the device: tile t of the call is campaign
 * tile tile_base + tile_stride * (first + t), generated exactly as gen_tile()
 * generates it on the host from (seed, mix, the pool view), run with the
 * instruction, evaluated with the model on the device and compared under
 * in's NaN rule (mf_output_equal).  Only disagreements come back. */
typedef struct mf_verify_req {
    const mf_instr *in;                /* the instruction run (a table row) */
    const mf_instr *model;             /* the row the model evaluates (same formats and shape) */
    const char *variant;               /* NULL: the default form */
    uint64_t tile_base, tile_stride, first, ntiles;
    uint64_t seed;
    gen_mix mix;
    const gen_saved_case *const *view; /* the mutation pool's cases compatible with in (gen_ctx.view) */
    size_t nview;
    uint64_t view_version;             /* changes whenever view's contents may have changed (the
                                          device keeps its copy of the pool until then) */
    mf_verify_hit *hits;               /* host buffer for the disagreements */
    size_t hits_cap;
} mf_verify_req;

typedef struct mf_verify_res {
    uint64_t mismatches;   /* disagreements found (all counted, whatever hits_cap) */
    size_t nhits;          /* hits written, sorted by (tile, i, j); min(mismatches, hits_cap) */
    int overflow;          /* 1: mismatches > hits_cap: the caller checks the whole range again
                              another way (the host path) so that nothing is lost */
    double gpu_s;          /* device time of the call (all of its GPUs: their sum) */
    int ngpu;              /* GPUs the call used (cuda:LIST), and the cases each ran */
    uint64_t gpu_cases[16];
} mf_verify_res;

/* @return 1 if dev can verify instruction `in` (variant, model row) on the
 * device itself: a CUDA device of a build with the device-code model, a row
 * without block scales.  *why (may be NULL) receives the reason when not. */
int mf_device_can_verify(const mf_device *dev, const mf_instr *in, const char *variant, const mf_instr *model,
                         const char **why);

/* @return 1 if dev verifies on the device itself at all (mf_device_verify_tiles:
 * some rows, as mf_device_can_verify tells); 0 for a device that only runs
 * tiles (HIP, model:ARCH). */
int mf_device_verifies(const mf_device *dev);

/* Run one verification request (above).  @return MF_DEV_OK with *res, or an
 * error code with a message (the device is reset and stays usable). */
int mf_device_verify_tiles(mf_device *dev, const mf_verify_req *rq, mf_verify_res *res, char *err, size_t errlen);

/* One line naming the device for statistics and summaries: "NVIDIA H100
 * 80GB HBM3 sm_90a index 0" (with " visible-devices LIST" when
 * CUDA_VISIBLE_DEVICES or HIP_VISIBLE_DEVICES is set), or
 * "model:hopper (a model, no hardware)". */
void mf_device_describe(const mf_device *dev, char *buf, size_t len);

/* Number of GPUs behind dev (cuda:all or cuda:LIST open several), and the
 * identity of GPU g ("GPU-uuid"), for per-GPU statistics. */
int mf_device_gpu_count(const mf_device *dev);
const char *mf_device_gpu_uuid(const mf_device *dev, int g);

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
    const char *backend;          /* the backend whose wrappers run it: "cuda", "hip"; NULL: none */
    const char *form;             /* "mma.sync", "wgmma", "mfma"; NULL: no wrapper */
    const char *why;              /* form NULL: why the row stays model-only */
    const char *const *variants;  /* NULL-terminated; "" (the default) first */
} mf_device_form;
void mf_device_form_of(const mf_instr *in, mf_device_form *out);

/* Number of devices of a backend present (0 when not built or none). */
int mf_device_count(mf_backend b);

/* The backends with device wrappers, in order (cuda, hip): backend b's spec
 * prefix ("cuda"), NULL past the last; and the backend of a prefix,
 * MF_BACKEND_MODEL for "model", -1 for none. */
const char *mf_backend_name(int b);
int mf_backend_by_name(const char *name);

#ifdef __cplusplus
}
#endif
#endif /* MMAFUZZ_DEVICE_H */
