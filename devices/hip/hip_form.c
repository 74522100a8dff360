/*
 * hip_form.c - what the HIP wrappers make of a table row, asked without a
 * device (the backend registry of device.c).  Plain C, built without a HIP
 * toolchain too.
 */
#include "backend.h"

int mf_hip_form_of(const mf_instr *in, mf_device_form *out)
{
    if (!mf_arch_is_amd(in->arch))
        return 0;
    out->backend = "hip";
    out->form = "mfma";
    return 1;
}
