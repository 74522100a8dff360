/*
 * mmafuzz_api.c - batches of cases and tiles over threads, and `.vec` lines,
 * for the Python package (see mmafuzz_api.h).
 */
#define _GNU_SOURCE   /* sched_getaffinity */
#include "mmafuzz_api.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int mfa_cpu_count(void)
{
#ifdef CPU_COUNT
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
#endif
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* ------------------------------------------------------------ batches */

/* One thread's share: items [lo, hi) of a batch. */
typedef struct batch_job {
    const mf_instr *in;
    int tiles;             /* 0: cases, 1: tiles */
    size_t lo, hi;
    const void *A, *B, *C, *SA, *SB;
    void *D;
} batch_job;

/* Cases [lo, hi): mf_eval_cases on the share's slice of each array. */
static void run_cases(const batch_job *j)
{
    const mf_instr *in = j->in;
    const size_t K = in->k, S = in->n_scales, i = j->lo;
    const size_t ea = mf_tile_elem_bytes(in->fa), eb = mf_tile_elem_bytes(in->fb), ec = mf_tile_elem_bytes(in->fc),
                 ed = mf_tile_elem_bytes(in->fd), es = S ? mf_tile_elem_bytes(in->fs) : 1;
    mf_eval_cases(in, j->hi - j->lo, (const char *)j->A + i * K * ea, (const char *)j->B + i * K * eb,
                  (const char *)j->C + i * ec, S ? (const char *)j->SA + i * S * es : NULL,
                  S ? (const char *)j->SB + i * S * es : NULL, (char *)j->D + i * ed);
}

/* Tiles [lo, hi): mf_eval_tiles on the share's slice of each array. */
static void run_tiles(const batch_job *j)
{
    const mf_instr *in = j->in;
    const size_t m = in->m, n = in->n, k = in->k, S = in->n_scales;
    const size_t ea = mf_tile_elem_bytes(in->fa), eb = mf_tile_elem_bytes(in->fb), ec = mf_tile_elem_bytes(in->fc),
                 ed = mf_tile_elem_bytes(in->fd), es = S ? mf_tile_elem_bytes(in->fs) : 1;
    const size_t t = j->lo;
    mf_eval_tiles(in, (int)m, (int)n, (int)k, j->hi - j->lo, (const char *)j->A + t * m * k * ea,
                  (const char *)j->B + t * n * k * eb, (const char *)j->C + t * m * n * ec,
                  S ? (const char *)j->SA + t * m * S * es : NULL, S ? (const char *)j->SB + t * n * S * es : NULL,
                  (char *)j->D + t * m * n * ed);
}

static void *batch_thread(void *arg)
{
    const batch_job *j = arg;
    if (j->tiles)
        run_tiles(j);
    else
        run_cases(j);
    return NULL;
}

#define MFA_MAX_THREADS 256
#define MFA_MIN_SHARE 2048   /* outputs below which one more thread does not pay */

static int run_batch(const mf_instr *in, int tiles, size_t count, size_t outputs_each, const void *A, const void *B,
                     const void *C, const void *SA, const void *SB, void *D, int threads)
{
    if (threads <= 0)
        threads = mfa_cpu_count();
    if (threads > MFA_MAX_THREADS)
        threads = MFA_MAX_THREADS;
    size_t most = count * outputs_each / MFA_MIN_SHARE;
    if ((size_t)threads > most)
        threads = most ? (int)most : 1;
    if ((size_t)threads > count)
        threads = count ? (int)count : 1;
    batch_job jobs[MFA_MAX_THREADS];
    pthread_t tid[MFA_MAX_THREADS];
    int started = 0, rc = 0;
    for (int t = 0; t < threads; t++) {
        /* shares of cases start at multiples of 8, the lane groups of mf_eval_cases */
        size_t lo = count * (size_t)t / (size_t)threads, hi = count * (size_t)(t + 1) / (size_t)threads;
        if (!tiles) {
            lo &= ~(size_t)7;
            hi = t + 1 == threads ? count : hi & ~(size_t)7;
        }
        jobs[t] = (batch_job){in, tiles, lo, hi, A, B, C, SA, SB, D};
    }
    /* threads 1.. run beside this one, which takes share 0 */
    for (int t = 1; t < threads; t++) {
        if (pthread_create(&tid[t], NULL, batch_thread, &jobs[t]) != 0) {
            rc = -1;
            break;
        }
        started = t;
    }
    batch_thread(&jobs[0]);
    for (int t = 1; t <= started; t++)
        pthread_join(tid[t], NULL);
    if (rc) {   /* shares whose thread did not start: here, in turn */
        for (int t = started + 1; t < threads; t++)
            batch_thread(&jobs[t]);
        rc = 0;
    }
    return rc;
}

int mfa_eval_cases(const mf_instr *in, size_t n, const void *A, const void *B, const void *C, const void *SA,
                   const void *SB, void *D, int threads)
{
    return run_batch(in, 0, n, 1, A, B, C, SA, SB, D, threads);
}

int mfa_eval_tiles(const mf_instr *in, size_t ntiles, const void *A, const void *B, const void *C, const void *SA,
                   const void *SB, void *D, int threads)
{
    return run_batch(in, 1, ntiles, (size_t)in->m * in->n, A, B, C, SA, SB, D, threads);
}

/* ------------------------------------------------------- kernel calls */

typedef struct kernel_job {
    const mf_kernel *kr;
    size_t K, nc, lo, hi;  /* outputs [lo, hi) of nr x nc, row-major */
    const void *A, *Bt;
    void *D;
} kernel_job;

static void *kernel_thread(void *arg)
{
    const kernel_job *j = arg;
    const mf_instr *in = j->kr->in;
    const size_t ea = mf_tile_elem_bytes(in->fa), eb = mf_tile_elem_bytes(in->fb),
                 ed = mf_tile_elem_bytes(j->kr->out);
    enum { BATCH = 256 };
    const void *ra[BATCH], *rb[BATCH];
    for (size_t o0 = j->lo; o0 < j->hi; o0 += BATCH) {
        const size_t nb = j->hi - o0 < BATCH ? j->hi - o0 : BATCH;
        for (size_t o = 0; o < nb; o++) {
            const size_t i = (o0 + o) / j->nc, c = (o0 + o) % j->nc;
            ra[o] = (const char *)j->A + i * j->K * ea;
            rb[o] = (const char *)j->Bt + c * j->K * eb;
        }
        mf_kernel_eval_rows(j->kr, j->K, nb, ra, rb, (char *)j->D + o0 * ed);
    }
    return NULL;
}

int mfa_kernel_eval(const mf_kernel *kr, size_t K, size_t nr, size_t nc, const void *A, const void *Bt, void *D,
                    int threads)
{
    const size_t count = nr * nc;
    if (threads <= 0)
        threads = mfa_cpu_count();
    if (threads > MFA_MAX_THREADS)
        threads = MFA_MAX_THREADS;
    if ((size_t)threads > count)
        threads = count ? (int)count : 1;
    kernel_job jobs[MFA_MAX_THREADS];
    pthread_t tid[MFA_MAX_THREADS];
    int started = 0;
    for (int t = 0; t < threads; t++)
        jobs[t] = (kernel_job){kr, K, nc, count * (size_t)t / (size_t)threads,
                               count * (size_t)(t + 1) / (size_t)threads, A, Bt, D};
    for (int t = 1; t < threads; t++) {
        if (pthread_create(&tid[t], NULL, kernel_thread, &jobs[t]) != 0)
            break;
        started = t;
    }
    kernel_thread(&jobs[0]);
    for (int t = 1; t <= started; t++)
        pthread_join(tid[t], NULL);
    for (int t = started + 1; t < threads; t++)   /* shares whose thread did not start */
        kernel_thread(&jobs[t]);
    return 0;
}

/* --------------------------------------------------------- .vec lines */

int mfa_vec_line(const char *line, const mf_instr **cur, mf_vec_case *out, char *err, size_t errlen)
{
    const char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    size_t len = strlen(p);
    while (len && (p[len - 1] == '\r' || p[len - 1] == '\n'))
        len--;
    if (len == 0 || *p == '#')
        return MFA_LINE_BLANK;
    if (strncmp(p, "instr", 5) == 0 && (p[5] == ' ' || p[5] == '\t' || p[5] == 0 || p[5] == '\r' || p[5] == '\n')) {
        p += 5;
        while (*p == ' ' || *p == '\t')
            p++;
        size_t n = strcspn(p, " \t\r\n");
        if (n == 0) {
            snprintf(err, errlen, "expected an instruction name after 'instr'");
            return MFA_LINE_ERROR;
        }
        if (p[n + strspn(p + n, " \t\r\n")] != 0) {
            snprintf(err, errlen, "expected one instruction name after 'instr'");
            return MFA_LINE_ERROR;
        }
        char name[160];
        snprintf(name, sizeof name, "%.*s", (int)(n < 159 ? n : 159), p);
        *cur = mf_instr_find(name);
        if (!*cur) {
            snprintf(err, errlen, "%s", name);
            return MFA_LINE_UNKNOWN;
        }
        return MFA_LINE_INSTR;
    }
    if (!*cur) {
        snprintf(err, errlen, "expected an 'instr ARCH/QUALIFIER' line before the first case");
        return MFA_LINE_ERROR;
    }
    char buf[8192];
    if (len >= sizeof buf) {
        snprintf(err, errlen, "line longer than %zu characters", sizeof buf - 1);
        return MFA_LINE_ERROR;
    }
    memcpy(buf, p, len);
    buf[len] = 0;
    if (mf_vec_parse_case(*cur, buf, out, err, errlen))
        return MFA_LINE_ERROR;
    return MFA_LINE_CASE;
}
