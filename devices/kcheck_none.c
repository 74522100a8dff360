/*
 * kcheck_none.c - devices/mf_kcheck.h where the CUDA layer is not built:
 * every call fails, saying so (a file of its own, so that a test can link its
 * own stand-in instead).
 */
#include "mf_kcheck.h"

#include <stdio.h>
#include <string.h>

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
