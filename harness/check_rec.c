/*
 * check_rec.c - `mmafuzz check REC.npz`: a recorded GEMM call against a
 * kernel model (check_rec.h).
 */
#include "check_rec.h"

#include "json.h"
#include "kernel_table.h"
#include "recording.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int check_is_recording(const char *path)
{
    size_t n = strlen(path);
    return n >= 4 && !strcmp(path + n - 4, ".npz");
}

/* The model's outputs for every recorded output, rows shared out over threads. */
typedef struct job {
    const mf_rec *r;
    const mf_kernel *kr;
    const void *const *bcols;   /* d_ncols columns of B, K elements each */
    unsigned char *got;         /* d_nrows x d_ncols outputs of the model */
    size_t ed;
    atomic_ullong next;
    int failed;                 /* out of memory in a thread */
} job;

static void *worker(void *arg)
{
    job *j = arg;
    const mf_rec *r = j->r;
    size_t K = (size_t)r->k, nc = (size_t)r->d_ncols, wa = (size_t)mf_rec_width(r->fa);
    unsigned char *arow = malloc(K * wa);
    const void **ap = malloc(nc * sizeof *ap);
    if (!arow || !ap) {
        j->failed = 1;
        free(arow);
        free(ap);
        return NULL;
    }
    for (size_t c = 0; c < nc; c++)
        ap[c] = arow;
    for (;;) {
        unsigned long long i = atomic_fetch_add(&j->next, 1);
        if (i >= r->d_nrows)
            break;
        mf_rec_a_row(r, r->d_rows ? r->d_rows[i] : (int64_t)i, arow);
        mf_kernel_eval_rows(j->kr, K, nc, ap, j->bcols, j->got + (size_t)i * nc * j->ed);
    }
    free(arow);
    free(ap);
    return NULL;
}

static uint64_t elem(const void *p, size_t w, size_t i)
{
    return w == 1 ? ((const uint8_t *)p)[i] : w == 2 ? ((const uint16_t *)p)[i] : ((const uint32_t *)p)[i];
}

static int read_kernel_file(const char *path, mf_kernel *kr)
{
    unsigned char *buf;
    size_t len;
    char err[512];
    if (npz_slurp(path, 1 << 20, &buf, &len, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", path, err);
        return -1;
    }
    char *text = realloc(buf, len + 1);
    if (!text) {
        free(buf);
        fprintf(stderr, "%s: out of memory\n", path);
        return -1;
    }
    text[len] = 0;
    if (strlen(text) != len) {
        fprintf(stderr, "%s: a NUL byte: expected the kernel model's text form (docs/kernels.md)\n", path);
        free(text);
        return -1;
    }
    int rc = mf_ktable_parse_model(text, kr, err, sizeof err);
    free(text);
    if (rc) {
        fprintf(stderr, "%s: %s\n", path, err);
        return -1;
    }
    return 0;
}

int check_recording(const char *path, const check_rec_opts *o, check_rec_totals *t)
{
    mf_rec r;
    char err[1024], where[4200] = "", note[512] = "";
    if (mf_rec_load(path, &r, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", path, err);
        mf_rec_free(&r);
        return 2;
    }
    mf_kernel kr;
    if (o->kernel_file) {
        if (read_kernel_file(o->kernel_file, &kr)) {
            mf_rec_free(&r);
            return 2;
        }
        snprintf(where, sizeof where, "%s", o->kernel_file);
    } else {
        int rc = mf_ktable_lookup(o->tables, o->ntables, &r, &kr, where, sizeof where, note, sizeof note, err,
                                  sizeof err);
        if (rc == 0 && mf_ktable_derive(&r, &kr, where, sizeof where))
            rc = 1;
        if (rc <= 0) {
            fprintf(stderr, rc < 0 ? "%s\n" : "%s: %s\n", rc < 0 ? err : path, err);
            mf_rec_free(&r);
            return 2;
        }
    }
    if (kr.in->fa != r.fa || kr.in->fb != r.fb || kr.out != r.fd) {
        fprintf(stderr, "%s: the kernel model (%s) reads %s x %s and writes %s; the recording holds %s x %s -> %s\n",
                path, where, mf_format_get(kr.in->fa)->name, mf_format_get(kr.in->fb)->name, mf_format_get(kr.out)->name, r.a_name,
                r.b_name, r.d_name);
        mf_rec_free(&r);
        return 2;
    }
    size_t K = (size_t)r.k, nr = (size_t)r.d_nrows, nc = (size_t)r.d_ncols, wb = (size_t)mf_rec_width(r.fb);
    size_t ed = mf_tile_elem_bytes(kr.out);
    unsigned char *bbuf = malloc(nc * K * wb);
    const void **bcols = malloc(nc * sizeof *bcols);
    unsigned char *got = malloc(nr * nc * ed);
    if (!bbuf || !bcols || !got) {
        fprintf(stderr, "%s: out of memory (%zu x %zu outputs, K = %zu)\n", path, nr, nc, K);
        free(bbuf);
        free(bcols);
        free(got);
        mf_rec_free(&r);
        return 2;
    }
    for (size_t c = 0; c < nc; c++) {
        mf_rec_b_col(&r, r.d_cols ? r.d_cols[c] : (int64_t)c, bbuf + c * K * wb);
        bcols[c] = bbuf + c * K * wb;
    }
    job j = {.r = &r, .kr = &kr, .bcols = bcols, .got = got, .ed = ed};
    atomic_init(&j.next, 0);
    int nt = o->jobs < 1 ? 1 : o->jobs;
    if ((size_t)nt > nr)
        nt = (int)nr;
    pthread_t th[256];
    int started = 0;
    for (; started < nt - 1 && started < 256; started++)
        if (pthread_create(&th[started], NULL, worker, &j))
            break;
    worker(&j);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    int status = 0;
    if (j.failed) {
        fprintf(stderr, "%s: out of memory in a thread\n", path);
        status = 2;
    }
    long pass = 0, fail = 0;
    char first[4][96];
    int nfirst = 0;
    for (size_t i = 0; i < nr && !status; i++)
        for (size_t c = 0; c < nc; c++) {
            uint64_t g = elem(got, ed, i * nc + c), e = elem(r.d->data, ed, i * nc + c);
            if (g == e || (mf_is_nan(kr.out, g) && mf_is_nan(kr.out, e))) {
                pass++;
                continue;
            }
            fail++;
            long long row = r.d_rows ? r.d_rows[i] : (long long)i, col = r.d_cols ? r.d_cols[c] : (long long)c;
            if (o->json) {
                if (nfirst < 4)
                    snprintf(first[nfirst++], sizeof first[0], "{\"row\": %lld, \"col\": %lld, \"got\": \"0x%0*llx\", "
                             "\"expected\": \"0x%0*llx\"}", row, col, (int)ed * 2, (unsigned long long)g, (int)ed * 2,
                             (unsigned long long)e);
            } else if (t->shown < o->max_errors) {
                printf("%s: d[%lld, %lld] => 0x%0*llx, expected 0x%0*llx\n", path, row, col, (int)ed * 2,
                       (unsigned long long)g, (int)ed * 2, (unsigned long long)e);
                t->shown++;
            }
        }
    if (!status) {
        if (o->json) {
            char model[512];
            mf_kernel_format(&kr, model, sizeof model);
            printf("{\"file\": ");
            json_put_str(stdout, path);
            printf(", \"op\": ");
            json_put_str(stdout, r.op);
            printf(", \"m\": %lld, \"n\": %lld, \"k\": %lld, \"a_format\": \"%s\", \"d_format\": \"%s\", \"flags\": ",
                   (long long)r.m, (long long)r.n, (long long)r.k, r.a_name, r.d_name);
            json_put_str(stdout, r.flags);
            printf(", \"model_from\": ");
            json_put_str(stdout, where);
            printf(", \"model\": ");
            json_put_str(stdout, model);
            printf(", \"note\": ");
            json_put_str(stdout, note);
            printf(", \"passed\": %ld, \"failed\": %ld, \"first_failures\": [", pass, fail);
            for (int i = 0; i < nfirst; i++)
                printf("%s%s", i ? ", " : "", first[i]);
            printf("]}\n");
        } else {
            printf("%s: %s %s->%s %lldx%lldx%lld, model %s%s%s%s: %ld passed %ld failed\n", path, r.op, r.a_name,
                   r.d_name, (long long)r.m, (long long)r.n, (long long)r.k, where, *note ? " (" : "", note,
                   *note ? ")" : "", pass, fail);
        }
        t->pass += pass;
        t->fail += fail;
        status = fail ? 1 : 0;
    }
    free(bbuf);
    free(bcols);
    free(got);
    mf_rec_free(&r);
    return status;
}
