/*
 * kcheck.c - the parts of devices/mf_kcheck.h that need no GPU: the names of
 * the operand kinds, and the whole interface where the CUDA layer is not
 * built (devices/cuda/kernel_check.cuh is the implementation).
 */
#include "mf_kcheck.h"

#include <stdio.h>
#include <string.h>

const char *mf_kgen_name(int kind)
{
    static const char *const names[MF_KGEN_COUNT] = {"normal", "wide", "special", "cancel", "spikes"};
    return kind >= 0 && kind < MF_KGEN_COUNT ? names[kind] : "?";
}

#ifndef MMAFUZZ_HAVE_CUDA
static int no_cuda(char *err, size_t errlen)
{
    snprintf(err, errlen, "the CUDA layer is not built (configure with a GPU present, or -DMMAFUZZ_CUDA_TARGETS)");
    return -1;
}

int mf_kgen_run(mf_format f, void *dptr, size_t count, size_t per, uint64_t seed, int kind, int role, int64_t kdim,
                int64_t kstride, int64_t rstride, void *stream, char *err, size_t errlen)
{
    (void)f, (void)dptr, (void)count, (void)per, (void)seed, (void)kind, (void)role, (void)kdim, (void)kstride;
    (void)rstride, (void)stream;
    return no_cuda(err, errlen);
}

int mf_kcheck_run(const mf_kcheck_job *job, mf_kcheck_result *res, void *stream, char *err, size_t errlen)
{
    (void)job, (void)stream;
    memset(res, 0, sizeof *res);
    return no_cuda(err, errlen);
}
#endif
