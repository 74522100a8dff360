/*
 * vecfile.c - `.vec` reader and writer (shared/VECTORS.md): files (plain or
 * gzip) and memory, line by line; each line is parsed by vecline.c.
 */
#include "vecfile.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

struct mf_vec_reader {
    char name[256];
    gzFile gz;             /* file source, or NULL */
    const char *mem;       /* memory source */
    size_t mem_len, mem_pos;
    char *buf;             /* current line */
    size_t cap;
    long line;
    const mf_instr *instr; /* current instruction, NULL if none/unknown */
    int in_unknown;        /* under an unknown `instr` line */
    int skip_unknown;
    long skipped;
    char unknown[160];
    char msg[512];
};

/* The rows of `instr NAME form=F` lines (mf_instr_with_form), each made once per process and never freed, so that
 * the instr pointer of a case read stays valid after its reader is closed (the mutation pool keeps the cases it
 * loads, and their rows, for the whole run).  A bounded set: at most one per (wgmma row, form). */
static pthread_mutex_t form_lock = PTHREAD_MUTEX_INITIALIZER;
static mf_instr **form_rows;
static size_t n_form_rows;

/* The row of `base` in form `form`.  @return NULL when the row has no such form, or out of memory (then *oom is
 * set). */
static const mf_instr *form_row(const mf_instr *base, const char *form, int *oom)
{
    mf_instr row;
    *oom = 0;
    if (mf_instr_with_form(base, form, &row))
        return NULL;
    const mf_instr *found = NULL;
    pthread_mutex_lock(&form_lock);
    for (size_t i = 0; i < n_form_rows && !found; i++)
        if (form_rows[i]->name == base->name && !strcmp(mf_instr_form_name(form_rows[i]), form))
            found = form_rows[i];
    if (!found) {
        mf_instr **grown = realloc(form_rows, (n_form_rows + 1) * sizeof *grown), *keep = malloc(sizeof *keep);
        if (grown)
            form_rows = grown;
        if (grown && keep) {
            *keep = row;
            form_rows[n_form_rows++] = keep;
            found = keep;
        } else {
            free(keep);
            *oom = 1;
        }
    }
    pthread_mutex_unlock(&form_lock);
    return found;
}

long long mf_vec_offset(const mf_vec_reader *r)
{
    return r->gz ? (long long)gzoffset(r->gz) : (long long)r->mem_pos;
}

static void set_msg(mf_vec_reader *r, const char *fmt, ...)
{
    char tmp[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    snprintf(r->msg, sizeof r->msg, "%s:%ld: %s", r->name, r->line, tmp);
}

static mf_vec_reader *reader_new(const char *name)
{
    mf_vec_reader *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    snprintf(r->name, sizeof r->name, "%s", name);
    r->cap = 4096;
    r->buf = malloc(r->cap);
    if (!r->buf) {
        free(r);
        return NULL;
    }
    return r;
}

mf_vec_reader *mf_vec_open(const char *path, char *err, size_t errlen)
{
    mf_vec_reader *r = reader_new(path);
    if (!r) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    errno = 0;
    r->gz = gzopen(path, "rb");  /* reads plain files as they are */
    if (!r->gz) {
        snprintf(err, errlen, "%s: cannot open (%s)", path, errno ? strerror(errno) : "out of memory");
        free(r->buf);
        free(r);
        return NULL;
    }
    gzbuffer(r->gz, 1 << 17);
    return r;
}

mf_vec_reader *mf_vec_open_mem(const char *name, const char *buf, size_t len)
{
    mf_vec_reader *r = reader_new(name);
    if (!r)
        return NULL;
    r->mem = buf;
    r->mem_len = len;
    return r;
}

void mf_vec_set_skip_unknown(mf_vec_reader *r, int on) { r->skip_unknown = on; }
const char *mf_vec_error(const mf_vec_reader *r) { return r->msg; }
const char *mf_vec_unknown_name(const mf_vec_reader *r) { return r->unknown; }
long mf_vec_skipped(const mf_vec_reader *r) { return r->skipped; }

void mf_vec_close(mf_vec_reader *r)
{
    if (!r)
        return;
    if (r->gz)
        gzclose(r->gz);
    free(r->buf);
    free(r);
}

/* Read one line into r->buf without its newline.
 * @return 1 line read, 0 end of input, -1 error. */
static int read_line(mf_vec_reader *r)
{
    size_t n = 0;
    for (;;) {
        int ch;
        if (r->gz) {
            ch = gzgetc(r->gz);
            if (ch < 0) {
                int zerr;
                const char *zmsg = gzerror(r->gz, &zerr);
                if (zerr != Z_OK && zerr != Z_STREAM_END) {
                    r->line++;
                    set_msg(r, "read error or truncated compressed data (%s)", zmsg);
                    return -1;
                }
            }
        } else {
            ch = r->mem_pos < r->mem_len ? (unsigned char)r->mem[r->mem_pos++] : -1;
        }
        if (ch < 0) {
            if (n == 0)
                return 0;
            break;
        }
        if (ch == '\n')
            break;
        if (ch == 0) {  /* C strings would end there: the rest of the line would be dropped unread */
            r->line++;
            set_msg(r, "a NUL byte at column %zu (a .vec file is text)", n + 1);
            return -1;
        }
        if (n + 2 > r->cap) {
            if (r->cap >= (1u << 20)) {
                r->line++;
                set_msg(r, "line longer than 1 MiB");
                return -1;
            }
            char *nb = realloc(r->buf, r->cap * 2);
            if (!nb) {
                r->line++;
                set_msg(r, "out of memory");
                return -1;
            }
            r->buf = nb;
            r->cap *= 2;
        }
        r->buf[n++] = (char)ch;
    }
    if (n && r->buf[n - 1] == '\r')
        n--;
    r->buf[n] = 0;
    r->line++;
    return 1;
}

int mf_vec_next(mf_vec_reader *r, mf_vec_case *out)
{
    for (;;) {
        int rc = read_line(r);
        if (rc <= 0)
            return rc == 0 ? MF_VEC_EOF : MF_VEC_ERROR;
        const char *p = r->buf;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == 0 || *p == '#')
            continue;
        if (strncmp(p, "instr", 5) == 0 && (p[5] == ' ' || p[5] == '\t' || p[5] == 0)) {
            p += 5;
            while (*p == ' ' || *p == '\t')
                p++;
            size_t n = strcspn(p, " \t");
            if (n == 0) {
                set_msg(r, "expected an instruction name after 'instr'");
                return MF_VEC_ERROR;
            }
            /* then at most one field: form=F (wgmma's arithmetic forms, mf_instr_with_form) */
            const char *rest = p + n + strspn(p + n, " \t");
            char form[32] = "";
            if (*rest) {
                size_t fl = strcspn(rest, " \t");
                if (strncmp(rest, "form=", 5) || fl == 5 || fl - 5 >= sizeof form ||
                    rest[fl + strspn(rest + fl, " \t")] != 0) {
                    set_msg(r, "expected 'instr ARCH/QUALIFIER' or 'instr ARCH/QUALIFIER form=FORM' "
                               "(neg_a, neg_b, neg_ab, no_c)");
                    return MF_VEC_ERROR;
                }
                snprintf(form, sizeof form, "%.*s", (int)(fl - 5), rest + 5);
            }
            snprintf(r->unknown, sizeof r->unknown, "%.*s", (int)(n < 159 ? n : 159), p);
            r->instr = mf_instr_find(r->unknown);
            r->in_unknown = r->instr == NULL;
            if (r->in_unknown) {
                set_msg(r, "unknown instruction '%s'", r->unknown);
                return MF_VEC_UNKNOWN;
            }
            if (*form) {
                int oom;
                const mf_instr *base = r->instr;
                r->instr = form_row(base, form, &oom);
                if (!r->instr) {
                    set_msg(r, oom ? "out of memory" : "instruction '%s' has no form '%s' (wgmma rows: neg_a, neg_b, "
                                                       "neg_ab on floating-point rows, no_c on every row)",
                            base->name, form);
                    return MF_VEC_ERROR;
                }
            }
            continue;
        }
        if (r->in_unknown) {
            if (r->skip_unknown) {
                r->skipped++;
                continue;
            }
            set_msg(r, "case under unknown instruction '%s'", r->unknown);
            return MF_VEC_ERROR;
        }
        if (!r->instr) {
            set_msg(r, "expected an 'instr ARCH/QUALIFIER' line before the first case");
            return MF_VEC_ERROR;
        }
        char err[300];
        if (mf_vec_parse_case(r->instr, p, out, err, sizeof err)) {
            set_msg(r, "%s", err);
            return MF_VEC_ERROR;
        }
        out->line = r->line;
        return MF_VEC_CASE;
    }
}

const char *mf_vec_line(const mf_vec_reader *r) { return r->buf; }
