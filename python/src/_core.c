/*
 * _core.c - the CPython binding of mmafuzz's C API (api/mmafuzz_api.h): the
 * instruction table, batches of cases and tiles (the GIL released), `.vec`
 * lines.  Arrays come in through the buffer protocol, already laid out by
 * python/mmafuzz/__init__.py in the canonical element widths; this file
 * checks their sizes and passes them on.  No arithmetic here.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "mmafuzz_api.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ helpers */

static const mf_instr *row_arg(long row)
{
    if (row < 0 || (size_t)row >= mf_instr_count) {
        PyErr_Format(PyExc_IndexError, "no instruction row %ld", row);
        return NULL;
    }
    return &mf_instr_table[row];
}

/* A buffer of at least `need` bytes (read-only, or writable if `w`); an
 * optional argument (None) gives a zero-length view when need is 0. */
static int get_buf(PyObject *o, Py_buffer *v, size_t need, int w, const char *what)
{
    memset(v, 0, sizeof *v);
    if (o == Py_None) {
        if (need) {
            PyErr_Format(PyExc_ValueError, "%s: an array is required", what);
            return -1;
        }
        return 0;
    }
    if (PyObject_GetBuffer(o, v, (w ? PyBUF_WRITABLE : 0) | PyBUF_C_CONTIGUOUS) < 0)
        return -1;
    if ((size_t)v->len < need) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes, expected %zu", what, v->len, need);
        PyBuffer_Release(v);
        v->obj = NULL;
        return -1;
    }
    return 0;
}

static void rel(Py_buffer *v)
{
    if (v->obj)
        PyBuffer_Release(v);
}

/* --------------------------------------------------------------- table */

static PyObject *py_rows(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    PyObject *list = PyList_New((Py_ssize_t)mf_instr_count);
    if (!list)
        return NULL;
    for (size_t i = 0; i < mf_instr_count; i++) {
        const mf_instr *in = &mf_instr_table[i];
        PyObject *t = Py_BuildValue(
            "{s:s,s:s,s:s,s:i,s:i,s:i,s:s,s:s,s:s,s:s,s:z,s:i,s:i,s:s,s:i,s:i,s:i,s:i,s:s,s:i,s:i,s:i}", "name",
            in->name, "arch", mf_arch_name(in->arch), "qualifier", in->qualifier, "m", in->m, "n", in->n, "k", in->k,
            "a", mf_format_get(in->fa)->name, "b", mf_format_get(in->fb)->name, "c", mf_format_get(in->fc)->name, "d",
            mf_format_get(in->fd)->name, "scale", in->fs ? mf_format_get(in->fs)->name : NULL, "block", in->block,
            "n_scales", in->n_scales, "family", mf_family_name(in->family), "F", in->F, "L", in->L, "e_zero",
            in->e_zero, "x", in->x, "rho", mf_rho_name(in->rho), "status", (int)in->status, "nan_any", in->nan_any,
            "zero_plus", in->zero_plus);
        if (!t) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, t);
    }
    return list;
}

static PyObject *py_formats(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    PyObject *list = PyList_New(0);
    if (!list)
        return NULL;
    for (int f = 1; f < MF_FMT_COUNT; f++) {
        const mf_format_info *fi = mf_format_get((mf_format)f);
        PyObject *t = Py_BuildValue("{s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:i}", "name", fi->name, "bits", fi->bits,
                                    "bytes", (int)mf_tile_elem_bytes((mf_format)f), "exp_bits", fi->exp_bits,
                                    "frac_bits", fi->frac_bits, "bias", fi->bias, "has_sign", fi->has_sign, "has_inf",
                                    fi->has_inf);
        if (!t || PyList_Append(list, t) < 0) {
            Py_XDECREF(t);
            Py_DECREF(list);
            return NULL;
        }
        Py_DECREF(t);
    }
    return list;
}

static PyObject *py_closest(PyObject *self, PyObject *args)
{
    (void)self;
    const char *name;
    int max = 5;
    if (!PyArg_ParseTuple(args, "s|i", &name, &max))
        return NULL;
    const mf_instr *out[16];
    size_t n = mf_instr_closest(name, out, max < 1 ? 1 : max > 16 ? 16 : (size_t)max);
    PyObject *list = PyList_New((Py_ssize_t)n);
    if (!list)
        return NULL;
    for (size_t i = 0; i < n; i++)
        PyList_SET_ITEM(list, (Py_ssize_t)i, PyUnicode_FromString(out[i]->name));
    return list;
}

static PyObject *py_cpu_count(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    return PyLong_FromLong(mfa_cpu_count());
}

/* ------------------------------------------------------------ batches */

/* eval_cases(row, n, A, B, C, SA, SB, D, threads) and
 * eval_tiles(row, ntiles, A, B, C, SA, SB, D, threads). */
static PyObject *eval_batch(PyObject *args, int tiles)
{
    long row;
    Py_ssize_t count;
    PyObject *oa, *ob, *oc, *osa, *osb, *od;
    int threads;
    if (!PyArg_ParseTuple(args, "lnOOOOOOi", &row, &count, &oa, &ob, &oc, &osa, &osb, &od, &threads))
        return NULL;
    const mf_instr *in = row_arg(row);
    if (!in)
        return NULL;
    if (count < 0)
        return PyErr_Format(PyExc_ValueError, "negative count");
    if (in->sparse)   /* its metadata has no argument here yet */
        return PyErr_Format(PyExc_NotImplementedError,
                            "%s: sparse (mma.sp) rows need their metadata, which the batch API does not take yet",
                            in->name);
    const size_t n = (size_t)count, S = in->n_scales;
    const size_t m = tiles ? in->m : 1, nn = tiles ? in->n : 1, k = in->k;
    const size_t es = S ? mf_tile_elem_bytes(in->fs) : 0;
    Py_buffer a, b, c, sa, sb, d;
    memset(&b, 0, sizeof b);
    memset(&c, 0, sizeof c);
    memset(&sa, 0, sizeof sa);
    memset(&sb, 0, sizeof sb);
    memset(&d, 0, sizeof d);
    PyObject *res = NULL;
    if (get_buf(oa, &a, n * m * k * mf_tile_elem_bytes(in->fa), 0, "A") ||
        get_buf(ob, &b, n * nn * k * mf_tile_elem_bytes(in->fb), 0, "B") ||
        get_buf(oc, &c, n * m * nn * mf_tile_elem_bytes(in->fc), 0, "C") ||
        get_buf(osa, &sa, n * m * S * es, 0, "scale_a") || get_buf(osb, &sb, n * nn * S * es, 0, "scale_b") ||
        get_buf(od, &d, n * m * nn * mf_tile_elem_bytes(in->fd), 1, "D"))
        goto out;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = tiles ? mfa_eval_tiles(in, n, a.buf, b.buf, c.buf, S ? sa.buf : NULL, S ? sb.buf : NULL, d.buf, threads)
               : mfa_eval_cases(in, n, a.buf, b.buf, c.buf, S ? sa.buf : NULL, S ? sb.buf : NULL, d.buf, threads);
    Py_END_ALLOW_THREADS
    if (rc) {
        PyErr_SetString(PyExc_RuntimeError, "could not start the evaluation threads");
        goto out;
    }
    res = Py_None;
    Py_INCREF(res);
out:
    rel(&a);
    rel(&b);
    rel(&c);
    rel(&sa);
    rel(&sb);
    rel(&d);
    return res;
}

static PyObject *py_eval_cases(PyObject *self, PyObject *args)
{
    (void)self;
    return eval_batch(args, 0);
}

static PyObject *py_eval_tiles(PyObject *self, PyObject *args)
{
    (void)self;
    return eval_batch(args, 1);
}

/* output_equal(row, got, expected, out): out[i] = mf_output_equal(got[i],
 * expected[i]) for uint64 arrays got, expected and a uint8 array out. */
static PyObject *py_output_equal(PyObject *self, PyObject *args)
{
    (void)self;
    long row;
    PyObject *og, *oe, *oo;
    if (!PyArg_ParseTuple(args, "lOOO", &row, &og, &oe, &oo))
        return NULL;
    const mf_instr *in = row_arg(row);
    if (!in)
        return NULL;
    Py_buffer g, e, o;
    if (get_buf(og, &g, 0, 0, "got"))
        return NULL;
    size_t n = (size_t)g.len / 8;
    if (get_buf(oe, &e, n * 8, 0, "expected")) {
        rel(&g);
        return NULL;
    }
    if (get_buf(oo, &o, n, 1, "out")) {
        rel(&g);
        rel(&e);
        return NULL;
    }
    const uint64_t *pg = g.buf, *pe = e.buf;
    uint8_t *po = o.buf;
    for (size_t i = 0; i < n; i++)
        po[i] = (uint8_t)mf_output_equal(in, pg[i], pe[i]);
    rel(&g);
    rel(&e);
    rel(&o);
    Py_RETURN_NONE;
}

/* --------------------------------------------------------- .vec lines */

static PyObject *u64_list(const uint64_t *v, size_t n)
{
    PyObject *l = PyList_New((Py_ssize_t)n);
    if (!l)
        return NULL;
    for (size_t i = 0; i < n; i++)
        PyList_SET_ITEM(l, (Py_ssize_t)i, PyLong_FromUnsignedLongLong(v[i]));
    return l;
}

/* parse_line(row, line) -> (c, [a], [b], [sa], [sb], d or None) */
static PyObject *py_parse_line(PyObject *self, PyObject *args)
{
    (void)self;
    long row;
    const char *line;
    if (!PyArg_ParseTuple(args, "ls", &row, &line))
        return NULL;
    const mf_instr *in = row_arg(row);
    if (!in)
        return NULL;
    mf_vec_case vc;
    char err[400];
    const mf_instr *cur = in;
    int kind = mfa_vec_line(line, &cur, &vc, err, sizeof err);
    if (kind != MFA_LINE_CASE || cur != in)
        return PyErr_Format(PyExc_ValueError, "%s: %s", in->name,
                            kind == MFA_LINE_ERROR ? err : "expected a case line (c=... a=... b=...)");
    PyObject *d = vc.has_d ? PyLong_FromUnsignedLongLong(vc.d) : (Py_INCREF(Py_None), Py_None);
    return Py_BuildValue("(KNNNNN)", (unsigned long long)vc.cs.c, u64_list(vc.cs.a, in->k),
                         u64_list(vc.cs.b, in->k), u64_list(vc.cs.sa, in->n_scales),
                         u64_list(vc.cs.sb, in->n_scales), d);
}

static void trace_line(void *ctx, const char *text)
{
    PyObject *list = ctx, *s = PyUnicode_FromString(text);
    if (s) {
        PyList_Append(list, s);
        Py_DECREF(s);
    }
}

/* eval_line(row, line, trace) -> d, or (d, [trace lines]) */
static PyObject *py_eval_line(PyObject *self, PyObject *args)
{
    (void)self;
    long row;
    const char *line;
    int trace = 0;
    if (!PyArg_ParseTuple(args, "ls|p", &row, &line, &trace))
        return NULL;
    const mf_instr *in = row_arg(row);
    if (!in)
        return NULL;
    mf_vec_case vc;
    char err[400];
    const mf_instr *cur = in;
    int kind = mfa_vec_line(line, &cur, &vc, err, sizeof err);
    if (kind != MFA_LINE_CASE || cur != in)
        return PyErr_Format(PyExc_ValueError, "%s: %s", in->name,
                            kind == MFA_LINE_ERROR ? err : "expected a case line (c=... a=... b=...)");
    if (!trace)
        return PyLong_FromUnsignedLongLong(mf_eval(in, &vc.cs));
    PyObject *lines = PyList_New(0);
    if (!lines)
        return NULL;
    mf_trace tr = {trace_line, lines};
    uint64_t d = mf_eval_trace(in, &vc.cs, &tr);
    if (PyErr_Occurred()) {
        Py_DECREF(lines);
        return NULL;
    }
    return Py_BuildValue("(KN)", (unsigned long long)d, lines);
}

/* A growable byte buffer. */
typedef struct gbuf {
    char *p;
    size_t len, cap;
} gbuf;

static int gput(gbuf *g, const void *v, size_t n)
{
    if (g->len + n > g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 4096;
        while (cap < g->len + n)
            cap *= 2;
        char *q = realloc(g->p, cap);
        if (!q)
            return -1;
        g->p = q;
        g->cap = cap;
    }
    memcpy(g->p + g->len, v, n);
    g->len += n;
    return 0;
}

/* The cases of one instruction in a text: line numbers and operands, every
 * value a uint64. */
enum { G_LINE, G_C, G_A, G_B, G_SA, G_SB, G_D, G_HASD, G_COUNT };
typedef struct group {
    const mf_instr *in;
    gbuf f[G_COUNT];
} group;

/* The cases skipped under one unknown instruction (skip_unknown). */
typedef struct skipped {
    char name[160];
    long n;
} skipped;

/* Whether a line is an `instr` line (as harness/vec/vecfile.c tells them). */
static int is_instr_line(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return strncmp(p, "instr", 5) == 0 && (p[5] == ' ' || p[5] == '\t' || p[5] == 0 || p[5] == '\r');
}

/* The longest line the CLI's reader takes (harness/vec/vecfile.c: its 1 MiB
 * buffer holds the line and a NUL), and its messages: the reader of
 * read_vec gives the same errors on the same lines. */
#define VEC_MAX_LINE ((1 << 20) - 1)

/* parse_vec(text, name, skip_unknown=False, first_line=1, instr=None) ->
 * ([(row, lines, c, a, b, sa, sb, d, has_d)], [(instr, cases skipped)],
 * instr): each array as bytes (int64 lines, uint64 values, uint8 has_d),
 * one entry per instruction in order of first appearance.  A file is read
 * in pieces of whole lines: first_line is the number of the first line of
 * text, and instr the last `instr` line of the pieces before (None: none),
 * which the call returns for the next.  Raises ValueError on malformed
 * input ("NAME:LINE: ..."), and LookupError on an unknown instruction (its
 * message "NAME:LINE: INSTR") unless skip_unknown: then the case lines
 * under it are skipped unparsed and counted, as `mmafuzz check
 * --skip-unknown` does. */
static PyObject *py_parse_vec(PyObject *self, PyObject *args)
{
    (void)self;
    const char *text, *name, *prelude = NULL;
    Py_ssize_t tlen;
    int skip_unknown = 0;
    long first_line = 1;
    if (!PyArg_ParseTuple(args, "y#s|plz", &text, &tlen, &name, &skip_unknown, &first_line, &prelude))
        return NULL;
    if (prelude && strlen(prelude) > VEC_MAX_LINE) {
        PyErr_SetString(PyExc_ValueError, "parse_vec: instr longer than a line");
        return NULL;
    }
    group *gs = calloc(mf_instr_count, sizeof *gs);
    int *order = calloc(mf_instr_count, sizeof *order);
    char *line = malloc(VEC_MAX_LINE + 1), *last_instr = malloc(VEC_MAX_LINE + 1);
    int ngroups = 0, failed = 0;
    skipped *sk = NULL, *in_unknown = NULL;
    size_t nsk = 0;
    if (!gs || !order || !line || !last_instr) {
        free(gs);
        free(order);
        free(line);
        free(last_instr);
        return PyErr_NoMemory();
    }
    last_instr[0] = 0;
    if (prelude)
        snprintf(last_instr, VEC_MAX_LINE + 1, "%s", prelude);
    const mf_instr *cur = NULL;
    const char *p = text, *end = text + tlen;
    long lineno = first_line - 1;
    int pre = prelude != NULL;  /* the previous piece's instr line first, as line first_line - 1 */
    char err[400];
    Py_BEGIN_ALLOW_THREADS
    while (p < end || pre) {
        if (pre) {
            pre = 0;
            snprintf(line, VEC_MAX_LINE + 1, "%s", last_instr);
        } else {
            while (p < end && *p == '\n') {  /* empty lines, many at a time */
                p++;
                lineno++;
            }
            if (p == end)
                break;
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
            lineno++;
            /* in the order the CLI's reader meets them, byte by byte: a NUL, else the 1 MiB limit */
            const char *nul = memchr(p, 0, n < VEC_MAX_LINE + 1 ? n : VEC_MAX_LINE + 1);
            if (nul) {  /* C strings would end there, dropping the rest unread */
                snprintf(err, sizeof err, "a NUL byte at column %zu (a .vec file is text)", (size_t)(nul - p) + 1);
                failed = MFA_LINE_ERROR;
                break;
            }
            if (n > VEC_MAX_LINE) {
                snprintf(err, sizeof err, "line longer than 1 MiB");
                failed = MFA_LINE_ERROR;
                break;
            }
            memcpy(line, p, n);
            line[n] = 0;
            p = nl ? nl + 1 : end;
            if (is_instr_line(line))
                memcpy(last_instr, line, n + 1);
        }
        mf_vec_case vc;
        if (in_unknown && !is_instr_line(line)) {
            const char *q = line + strspn(line, " \t\r");
            if (*q && *q != '#')
                in_unknown->n++;
            continue;
        }
        int kind = mfa_vec_line(line, &cur, &vc, err, sizeof err);
        if (kind == MFA_LINE_UNKNOWN && skip_unknown) {
            size_t i = 0;
            while (i < nsk && strcmp(sk[i].name, err) != 0)
                i++;
            if (i == nsk) {
                skipped *q = realloc(sk, (nsk + 1) * sizeof *sk);
                if (!q) {
                    snprintf(err, sizeof err, "out of memory");
                    failed = MFA_LINE_ERROR;
                    break;
                }
                sk = q;
                snprintf(sk[nsk].name, sizeof sk[nsk].name, "%s", err);
                sk[nsk++].n = 0;
            }
            in_unknown = &sk[i];
            continue;
        }
        in_unknown = NULL;
        if (kind < 0) {
            failed = kind;
            break;
        }
        if (kind != MFA_LINE_CASE)
            continue;
        size_t idx = (size_t)(cur - mf_instr_table);
        group *g = &gs[idx];
        if (!g->in) {
            g->in = cur;
            order[ngroups++] = (int)idx;
        }
        int64_t ln = lineno;
        uint8_t hd = (uint8_t)vc.has_d;
        if (gput(&g->f[G_LINE], &ln, 8) || gput(&g->f[G_C], &vc.cs.c, 8) ||
            gput(&g->f[G_A], vc.cs.a, 8 * (size_t)cur->k) || gput(&g->f[G_B], vc.cs.b, 8 * (size_t)cur->k) ||
            gput(&g->f[G_SA], vc.cs.sa, 8 * (size_t)cur->n_scales) ||
            gput(&g->f[G_SB], vc.cs.sb, 8 * (size_t)cur->n_scales) || gput(&g->f[G_D], &vc.d, 8) ||
            gput(&g->f[G_HASD], &hd, 1)) {
            snprintf(err, sizeof err, "out of memory");
            failed = MFA_LINE_ERROR;
            break;
        }
    }
    Py_END_ALLOW_THREADS
    PyObject *res = NULL;
    if (failed == MFA_LINE_UNKNOWN)
        PyErr_Format(PyExc_LookupError, "%s:%ld: %s", name, lineno, err);
    else if (failed)
        PyErr_Format(PyExc_ValueError, "%s:%ld: %s", name, lineno, err);
    else {
        PyObject *groups = PyList_New(ngroups), *skips = PyList_New(0);
        for (int i = 0; groups && i < ngroups; i++) {
            group *g = &gs[order[i]];
            PyObject *t = PyTuple_New(1 + G_COUNT);
            if (!t) {
                Py_CLEAR(groups);
                break;
            }
            PyTuple_SET_ITEM(t, 0, PyLong_FromLong(order[i]));
            for (int f = 0; f < G_COUNT; f++)
                PyTuple_SET_ITEM(t, 1 + f, PyBytes_FromStringAndSize(g->f[f].p ? g->f[f].p : "", (Py_ssize_t)g->f[f].len));
            PyList_SET_ITEM(groups, i, t);
        }
        for (size_t i = 0; skips && i < nsk; i++) {
            PyObject *t = Py_BuildValue("(sl)", sk[i].name, sk[i].n);
            if (!t || PyList_Append(skips, t) < 0)
                Py_CLEAR(skips);
            Py_XDECREF(t);
        }
        if (groups && skips)
            res = Py_BuildValue("(OOz)", groups, skips, last_instr[0] ? last_instr : NULL);
        Py_XDECREF(groups);
        Py_XDECREF(skips);
    }
    for (size_t i = 0; i < mf_instr_count; i++)
        for (int f = 0; f < G_COUNT; f++)
            free(gs[i].f[f].p);
    free(gs);
    free(order);
    free(line);
    free(last_instr);
    free(sk);
    return res;
}

/* ------------------------------------------------------- kernel calls */

/* The kernel model of `text`, or NULL with ValueError set. */
static int kernel_arg(const char *text, mf_kernel *kr)
{
    char err[256];
    if (mf_kernel_parse(text, kr, err, sizeof err)) {
        PyErr_Format(PyExc_ValueError, "kernel model: %s", err);
        return -1;
    }
    return 0;
}

/* kernel_parse(text) -> the model's text in the canonical form. */
static PyObject *py_kernel_parse(PyObject *self, PyObject *args)
{
    (void)self;
    const char *text;
    if (!PyArg_ParseTuple(args, "s", &text))
        return NULL;
    mf_kernel kr;
    if (kernel_arg(text, &kr))
        return NULL;
    char buf[1024];
    mf_kernel_format(&kr, buf, sizeof buf);
    return PyUnicode_FromString(buf);
}

/* kernel_eval(text, K, nr, nc, A, Bt, D, threads): D (nr x nc) from rows of
 * A (nr x K) and of Bt (nc x K) under the kernel model `text`. */
static PyObject *py_kernel_eval(PyObject *self, PyObject *args)
{
    (void)self;
    const char *text;
    Py_ssize_t K, nr, nc;
    PyObject *oa, *ob, *od;
    int threads;
    if (!PyArg_ParseTuple(args, "snnnOOOi", &text, &K, &nr, &nc, &oa, &ob, &od, &threads))
        return NULL;
    mf_kernel kr;
    if (kernel_arg(text, &kr))
        return NULL;
    if (K < 0 || nr < 0 || nc < 0)
        return PyErr_Format(PyExc_ValueError, "negative size");
    Py_buffer a, b, d;
    memset(&b, 0, sizeof b);
    memset(&d, 0, sizeof d);
    PyObject *res = NULL;
    if (get_buf(oa, &a, (size_t)nr * K * mf_tile_elem_bytes(kr.in->fa), 0, "A") ||
        get_buf(ob, &b, (size_t)nc * K * mf_tile_elem_bytes(kr.in->fb), 0, "Bt") ||
        get_buf(od, &d, (size_t)nr * nc * mf_tile_elem_bytes(kr.out), 1, "D"))
        goto out;
    Py_BEGIN_ALLOW_THREADS
    mfa_kernel_eval(&kr, (size_t)K, (size_t)nr, (size_t)nc, a.buf, b.buf, d.buf, threads);
    Py_END_ALLOW_THREADS
    res = Py_None;
    Py_INCREF(res);
out:
    rel(&a);
    rel(&b);
    rel(&d);
    return res;
}

/* -------------------------------------------------------------- module */

static PyMethodDef methods[] = {
    {"rows", py_rows, METH_NOARGS, "rows() -> the instruction table, one dict per row."},
    {"formats", py_formats, METH_NOARGS, "formats() -> the number formats, one dict each."},
    {"closest", py_closest, METH_VARARGS, "closest(name, max=5) -> the known names closest to name."},
    {"cpu_count", py_cpu_count, METH_NOARGS, "cpu_count() -> CPUs this process may run on."},
    {"eval_cases", py_eval_cases, METH_VARARGS,
     "eval_cases(row, n, A, B, C, SA, SB, D, threads): n dot products (canonical element widths)."},
    {"eval_tiles", py_eval_tiles, METH_VARARGS,
     "eval_tiles(row, ntiles, A, B, C, SA, SB, D, threads): whole tiles in the canonical layout."},
    {"output_equal", py_output_equal, METH_VARARGS,
     "output_equal(row, got, expected, out): the NaN rule of VECTORS.md over uint64 arrays."},
    {"parse_line", py_parse_line, METH_VARARGS, "parse_line(row, line) -> (c, a, b, sa, sb, d or None)."},
    {"eval_line", py_eval_line, METH_VARARGS, "eval_line(row, line, trace=False) -> d or (d, trace lines)."},
    {"parse_vec", py_parse_vec, METH_VARARGS,
     "parse_vec(text, name, skip_unknown=False, first_line=1, instr=None) -> (per-instruction arrays of the cases, "
     "[(instr, skipped)], the last instr line)."},
    {"kernel_parse", py_kernel_parse, METH_VARARGS, "kernel_parse(text) -> the kernel model's canonical text."},
    {"kernel_eval", py_kernel_eval, METH_VARARGS,
     "kernel_eval(text, K, nr, nc, A, Bt, D, threads): outputs of a GEMM call under a kernel model."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_core", "mmafuzz's C model, bound thinly (see mmafuzz/__init__.py).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__core(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m)
        PyModule_AddStringConstant(m, "MODEL_VERSION", MF_VERSION);
    return m;
}
