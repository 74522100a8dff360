/*
 * cuda_form.c - what the CUDA wrappers make of a table row, asked without a
 * device (the backend registry of device.c: mf_device_form_of and the
 * model backend's operand forms).  Plain C, built without a toolkit too.
 */
#include "backend.h"
#include "layout.h"   /* devices/cuda/, through mmafuzz_cuda_layout */

#include <string.h>

int mf_cuda_form_of(const mf_instr *in, mf_device_form *out)
{
    if (mf_arch_is_amd(in->arch))
        return 0;
    out->backend = "cuda";
    switch (mf_ptx_kind_of(in, &out->why)) {
    case MF_PTX_MMA_SYNC:
        out->form = "mma.sync";
        break;
    case MF_PTX_WGMMA:
        out->form = "wgmma";
        out->variants = mf_wgmma_variants;
        break;
    case MF_PTX_WGMMA_SP:
        /* N, the A source, and selector 1 where legal (layout.h) */
        out->form = "wgmma.sp";
        out->variants = mf_wgmma_sp_variants(in);
        break;
    case MF_PTX_MMA_SP: {
        /* the sparsity selector, one wrapper per legal value (layout.h) */
        static const char *const sel4[] = {"", "sel1", "sel2", "sel3", NULL}, *const sel2[] = {"", "sel1", NULL};
        out->form = "mma.sp.sync";
        out->variants = mf_sp_sel_ok(in, 2) ? sel4 : sel2;
        break;
    }
    case MF_PTX_TCGEN05:
        out->form = "tcgen05.mma";   /* cta_group::1, the table's shape; built, not yet run on hardware */
        break;
    default:
        if (!out->why || !*out->why)
            out->why = "no CUDA wrapper";
        break;
    }
    return 1;
}

int mf_cuda_form_row(const mf_instr *in, const char *variant, mf_instr *out)
{
    for (int i = 0; mf_wgmma_form_variants[i]; i++)
        if (!strcmp(variant, mf_wgmma_form_variants[i]))
            return mf_variant_model_row(in, variant, out);
    return -1;
}
