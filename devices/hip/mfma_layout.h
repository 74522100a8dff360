/*
 * mfma_layout.h - fragment layouts of the AMD MFMA wrappers, as data.
 *
 * A layout maps (lane, v) - lane 0..63 of the wavefront, v the index of a
 * value among those the lane holds, low to high in its registers - to the
 * offset of that value in `blocks` consecutive ABI tiles (devices/mf_device.h):
 *   A   block*M*K + i*K + k     (row-major M x K)
 *   B   block*N*K + j*K + k     (column-major: column j holds K values)
 *   C,D block*M*N + i*N + j     (row-major M x N)
 * so one wavefront computes ABI tiles tile0 .. tile0+blocks-1 at once.
 *
 * A layout is written as a CuTe layout: a list of (shape : stride) modes
 * for the lane index and another for v; offset = sum over modes of
 * (index / product of the earlier shapes % shape) * stride.  One generic
 * loop (mf_tv_offset) serves every instruction, on the host and on the GPU.
 *
 * This header is plain C and compiles as HIP device code too (no library
 * calls), so the kernels evaluate exactly what the host tests check.
 */
#ifndef MMAFUZZ_HIP_MFMA_LAYOUT_H
#define MMAFUZZ_HIP_MFMA_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#if defined(__HIP__)
#define MF_TV_FN static inline __attribute__((host, device))
#else
#define MF_TV_FN static inline
#endif

#define MF_TV_MAXMODES 4

typedef struct mf_tv_mode {
    uint32_t shape, stride;
} mf_tv_mode;

typedef struct mf_tv_layout {
    uint32_t nlane, nval;             /* modes used in lane[] and val[] */
    mf_tv_mode lane[MF_TV_MAXMODES];  /* over lane 0..63 */
    mf_tv_mode val[MF_TV_MAXMODES];   /* over v 0..(values per lane - 1) */
} mf_tv_layout;

/* Everything a wrapper kernel needs besides the data: passed by value. */
typedef struct mf_mfma_layouts {
    mf_tv_layout a, b, cd;
    uint32_t blocks;                  /* ABI tiles per wavefront */
    uint32_t a_tile, b_tile, cd_tile; /* elements per ABI tile: M*K, N*K, M*N */
} mf_mfma_layouts;

/* @return the offset of value v of `lane` (see the header comment). */
MF_TV_FN uint32_t mf_tv_offset(const mf_tv_layout *L, uint32_t lane, uint32_t v)
{
    uint32_t off = 0;
    for (uint32_t m = 0; m < L->nlane; m++) {
        off += lane % L->lane[m].shape * L->lane[m].stride;
        lane /= L->lane[m].shape;
    }
    for (uint32_t m = 0; m < L->nval; m++) {
        off += v % L->val[m].shape * L->val[m].stride;
        v /= L->val[m].shape;
    }
    return off;
}

/* @return the number of (lane, v) pairs the layout covers: the product of
 * all shapes (64 x values per lane for a complete layout). */
MF_TV_FN uint32_t mf_tv_size(const mf_tv_layout *L)
{
    uint32_t n = 1;
    for (uint32_t m = 0; m < L->nlane; m++)
        n *= L->lane[m].shape;
    for (uint32_t m = 0; m < L->nval; m++)
        n *= L->val[m].shape;
    return n;
}

#if !defined(__HIP_DEVICE_COMPILE__)
#include "mfma_info.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fill the layouts of the wrapper described by `x`.
 * @return 0, or -1 with a message when no layout is known for its shape. */
int mf_mfma_layouts_get(const mf_mfma_info *x, mf_mfma_layouts *out, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif

#endif
