/*
 * mfma_info.h - what the HIP wrapper of an AMD table row needs to know, all
 * derived from the row itself (model/instr_table.def): the compiler builtin,
 * how many elements of A and B each lane holds, how many independent blocks
 * one instruction computes, and the kernel symbol.  Plain C, host only.
 */
#ifndef MMAFUZZ_HIP_MFMA_INFO_H
#define MMAFUZZ_HIP_MFMA_INFO_H

#include "mmafuzz_model.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mf_mfma_info {
    const mf_instr *in;
    char builtin[80];  /* "__builtin_amdgcn_mfma_f32_16x16x16f16" */
    char symbol[96];   /* kernel symbol "mf_k_cdna3__mfma_f32_16x16x16_f16" */
    int ab_elems;      /* elements of A (and of B) held by one lane */
    int blocks;        /* independent M x N x K products per instruction */
    int cd_elems;      /* elements of C (and of D) held by one lane */
} mf_mfma_info;

/* Describe the wrapper of AMD row `in`.
 * @return 0, or -1 (message in err) when `in` is not an AMD row or its
 * qualifier or formats do not follow the naming rules this file knows. */
int mf_mfma_info_get(const mf_instr *in, mf_mfma_info *out, char *err, size_t errlen);

/* The ISA mnemonic of AMD row `in`, read off its qualifier exactly as the
 * table spells it ("mfma.f32_16x16x16_f16" -> "v_mfma_f32_16x16x16_f16"). */
void mf_mfma_mnemonic(const mf_instr *in, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
