/*
 * test_gemm_mock.c - `mmafuzz gemm --record --check` end to end without a
 * GPU: the command (harness/cmd_gemm.c) over a stand-in for the cuBLASLt
 * device (the functions of devices/mf_gemm.h on host memory) whose
 * "algorithms" 0, 1, 2 compute D with the kernel model of the Hopper f16/bf16
 * row, K step 64, split in 1, 2 and 5 slices (the split-K number they
 * report), reading A, B and D in the layouts mf_gemm.h documents.
 *
 * What this holds: the operands the command makes and uploads are the
 * recording generator's, B row-major (K x N) or column-major as the
 * descriptor says, the sampled rows and columns of D are the ones the
 * recording names, and its header gives back the split-K number: then every
 * recorded output is reproduced by the model derived from the header
 * (exit 0).  Expected values: the stand-in's model, independent of how the
 * command lays out and samples the data.  Arguments: those of `mmafuzz gemm`.
 */
#include "cli.h"
#include "mf_gemm.h"
#include "mf_kcheck.h"
#include "mmafuzz_kernel.h"
#include "recording.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mf_gemm {
    int unused;
};
/* The slices each algorithm computes with, and the split-K number it reports:
 * with MOCK_GEMM_LIE set, a fourth algorithm reports 1 and computes 3, as a
 * kernel that splits K without saying so (what `gemm -runs` must explain). */
static const int split_of[4] = {1, 2, 5, 3}, reported_split[4] = {1, 2, 5, 1};
static int nalgos(void) { return getenv("MOCK_GEMM_LIE") ? 4 : 3; }

const char *mf_gemm_check(const mf_gemm_desc *d)
{
    if (d->m < 1 || d->n < 1 || d->k < 1)
        return "M, N and K must be at least 1";
    if (d->a != d->b || (d->a != MF_FMT_F16 && d->a != MF_FMT_BF16) || d->d != d->a)
        return "the stand-in runs f16 and bf16 only";
    return NULL;
}

mf_gemm *mf_gemm_open(int device, char *err, size_t errlen)
{
    (void)device, (void)err, (void)errlen;
    return calloc(1, sizeof(mf_gemm));
}
void mf_gemm_close(mf_gemm *h) { free(h); }
void mf_gemm_gpu(const mf_gemm *h, char *name, size_t nlen, char *sm, size_t slen, char *driver, size_t dlen,
                 char *runtime, size_t rlen)
{
    (void)h;
    snprintf(name, nlen, "stand-in");
    snprintf(sm, slen, "90");
    snprintf(driver, dlen, "0.0");
    snprintf(runtime, rlen, "0.0");
}

int mf_gemm_algos(mf_gemm *h, const mf_gemm_desc *desc, mf_gemm_algo *out, int max, mf_gemm_config *cfg, char *err,
                  size_t errlen)
{
    (void)h;
    const char *why = mf_gemm_check(desc);
    if (why) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    int n = max < nalgos() ? max : nalgos();
    for (int i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        out[i].index = i;
        out[i].algo_id = 100 + i;
        out[i].splitk_num = reported_split[i];
        snprintf(out[i].tile, sizeof out[i].tile, "64x64");
        snprintf(out[i].stages, sizeof out[i].stages, "64x3");
    }
    if (cfg) {
        memset(cfg, 0, sizeof *cfg);
        snprintf(cfg->compute, sizeof cfg->compute, "32F");
        snprintf(cfg->library, sizeof cfg->library, "0.0.0");
    }
    return n;
}

int mf_gemm_run(mf_gemm *h, const mf_gemm_desc *d, int algo, const void *dA, const void *dB, void *dD, void *stream,
                char *err, size_t errlen)
{
    (void)h, (void)stream;
    if (algo < 0 || algo >= nalgos()) {
        snprintf(err, errlen, "no algorithm %d", algo);
        return -1;
    }
    char name[80];
    snprintf(name, sizeof name, "hopper/wgmma.m64n8k16.f32.%s.%s", d->a == MF_FMT_F16 ? "f16" : "bf16",
             d->a == MF_FMT_F16 ? "f16" : "bf16");
    mf_kernel kr = {.in = mf_instr_find(name), .bk = 64, .split = (uint32_t)split_of[algo], .out = d->d};
    size_t K = (size_t)d->k, N = (size_t)d->n;
    uint16_t *col = malloc(K * 2);
    const void **ap = malloc(N * sizeof *ap), **bp = malloc(N * sizeof *bp);
    uint16_t *bt = malloc(N * K * 2);
    const uint16_t *B = dB;
    for (size_t j = 0; j < N; j++) {   /* B's columns, from the layout the descriptor names */
        for (size_t k = 0; k < K; k++)
            bt[j * K + k] = d->b_colmajor ? B[j * K + k] : B[k * N + j];
        bp[j] = bt + j * K;
    }
    for (int64_t i = 0; i < d->m; i++) {
        for (size_t j = 0; j < N; j++)
            ap[j] = (const uint16_t *)dA + (size_t)i * K;
        mf_kernel_eval_rows(&kr, K, N, ap, bp, (uint16_t *)dD + (size_t)i * N);
    }
    free(col), free(ap), free(bp), free(bt);
    return 0;
}

int mf_gemm_run_host(mf_gemm *h, const mf_gemm_desc *d, int algo, const void *A, const void *B, void *D, char *err,
                     size_t errlen)
{
    return mf_gemm_run(h, d, algo, A, B, D, NULL, err, errlen);
}
void *mf_gemm_alloc(mf_gemm *h, size_t bytes, char *err, size_t errlen)
{
    (void)h, (void)err, (void)errlen;
    return malloc(bytes ? bytes : 1);
}
void mf_gemm_free(mf_gemm *h, void *p) { (void)h, free(p); }
int mf_gemm_upload(mf_gemm *h, void *dptr, const void *src, size_t bytes, char *err, size_t errlen)
{
    (void)h, (void)err, (void)errlen;
    memcpy(dptr, src, bytes);
    return 0;
}
int mf_gemm_download(mf_gemm *h, void *dst, const void *dptr, size_t bytes, char *err, size_t errlen)
{
    (void)h, (void)err, (void)errlen;
    memcpy(dst, dptr, bytes);
    return 0;
}
int mf_gemm_sync(mf_gemm *h, void *stream, char *err, size_t errlen)
{
    (void)h, (void)stream, (void)err, (void)errlen;
    return 0;
}

/* mf_kcheck.h on host memory: operands from the recording generator (the
 * kind only moves the seed), every output against mf_kernel_dot. */
int mf_kgen_run(mf_format f, void *dptr, size_t count, size_t per, uint64_t seed, int kind, int role, int64_t kdim,
                int64_t kstride, int64_t rstride, void *stream, char *err, size_t errlen)
{
    (void)per, (void)kdim, (void)kstride, (void)rstride, (void)stream;
    if (mf_rec_generate(f, seed * 2 + (uint64_t)role + (uint64_t)kind * 1000, 0, count, -4, 2, dptr)) {
        snprintf(err, errlen, "mf_rec_generate failed");
        return -1;
    }
    return 0;
}

int mf_kcheck_run(const mf_kcheck_job *j, mf_kcheck_result *res, void *stream, char *err, size_t errlen)
{
    (void)stream, (void)err, (void)errlen;
    memset(res, 0, sizeof *res);
    const size_t M = (size_t)j->m, N = (size_t)j->n, K = (size_t)j->k, ed = (size_t)mf_rec_width(j->kr->out);
    uint16_t *col = malloc(K * 2);
    for (size_t c = 0; c < (size_t)j->calls; c++)
        for (size_t i = 0; i < M; i++)
            for (size_t jj = 0; jj < N; jj++) {
                const uint16_t *B = (const uint16_t *)j->dB + c * K * N;
                for (size_t k = 0; k < K; k++)
                    col[k] = j->b_colmajor ? B[jj * K + k] : B[k * N + jj];
                const uint64_t want = mf_kernel_dot(j->kr, K, (const uint16_t *)j->dA + (c * M + i) * K, col);
                uint64_t got = 0;
                memcpy(&got, (const char *)j->dD + ((c * M + i) * N + jj) * ed, ed);
                res->outputs++;
                res->steps += (K + 15) / 16;
                if (got != want && !(mf_is_nan(j->kr->out, got) && mf_is_nan(j->kr->out, want))) {
                    if (res->nmiss < MF_KCHECK_MISSES)
                        res->miss[res->nmiss++] = (mf_kcheck_miss){(uint32_t)c, (uint32_t)i, (uint32_t)jj, got, want};
                    res->differ++;
                }
            }
    free(col);
    return 0;
}

int main(int argc, char **argv) { return cmd_gemm(argc - 1, argv + 1); }
