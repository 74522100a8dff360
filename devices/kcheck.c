/*
 * kcheck.c - the part of devices/mf_kcheck.h that needs no GPU: the names of
 * the operand kinds (devices/cuda/kernel_check.cuh is the rest; kcheck_none.c
 * stands in for it where the CUDA layer is not built).
 */
#include "mf_kcheck.h"


const char *mf_kgen_name(int kind)
{
    static const char *const names[MF_KGEN_COUNT] = {"normal", "wide", "special", "cancel", "spikes"};
    return kind >= 0 && kind < MF_KGEN_COUNT ? names[kind] : "?";
}
