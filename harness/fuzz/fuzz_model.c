/*
 * fuzz_model.c - libFuzzer entry point: coverage-guided search for cases on
 * which the model is wrong.
 *
 * Each input decodes (fuzz_input.h) to one instruction row and one case.
 * Oracles:
 *   - the device, when MMAFUZZ_DEVICE names one ("cuda", "hip", "model:ARCH")
 *     that runs the row: device and model must agree (mf_output_equal);
 *   - otherwise the slow, independent model of slowmodel/: slow and
 *     fast model must agree (VECTORS.md comparison rule);
 *   - always, family invariants of the model (DOMAIN section 3):
 *       * the exactly summed families (T/ST/GST-FDPA, E-FDPA, TR/GTR-FDPA)
 *         do not depend on the order of the products inside one chunk (one
 *         group for GST; GTR-FDPA keeps each product's parity);
 *       * negating every a and c negates d for the round-toward-zero and
 *         round-to-nearest families (not for TR/GTR-FDPA, which round down):
 *         checked where d is a non-zero number or NaN.
 * A disagreement is minimized, filed in the mismatch store (run_store.h;
 * folder MMAFUZZ_FUZZ_STORE, default "mismatches") and then aborts, so that
 * libFuzzer also keeps the input as a crash artifact.
 *
 * Environment: MMAFUZZ_FUZZ_GROUP=nvidia|amd|fma|all (default all),
 * MMAFUZZ_FUZZ_INSTR=GLOB (rows to fuzz), MMAFUZZ_DEVICE=SPEC.
 */
#include "fuzz_input.h"
#include "mf_device.h"
#include "mmafuzz_gen.h"
#include "run_mismatch.h"
#include "run_store.h"
#include "slowmodel.h"
#include "vecfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

static mf_device *device;          /* NULL: the slow model is the oracle */
static const char *device_spec;
static mz_dev zdev;                /* the device bound to the last row run */
static const char *store_root = "mismatches";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *group = getenv("MMAFUZZ_FUZZ_GROUP"), *pattern = getenv("MMAFUZZ_FUZZ_INSTR");
    if (!fz_select(group, pattern)) {
        fprintf(stderr, "fuzz_model: no instruction matches MMAFUZZ_FUZZ_GROUP=%s MMAFUZZ_FUZZ_INSTR=%s\n",
                group ? group : "", pattern ? pattern : "");
        exit(2);
    }
    if (getenv("MMAFUZZ_FUZZ_STORE"))
        store_root = getenv("MMAFUZZ_FUZZ_STORE");
    device_spec = getenv("MMAFUZZ_DEVICE");
    if (device_spec && *device_spec) {
        char err[512];
        if (mf_device_open(device_spec, &device, err, sizeof err)) {
            fprintf(stderr, "fuzz_model: MMAFUZZ_DEVICE=%s: %s\n", device_spec, err);
            exit(2);
        }
        fprintf(stderr, "fuzz_model: oracle: device %s\n", mf_device_get_info(device)->name);
    } else {
        fprintf(stderr, "fuzz_model: oracle: the slow model (slowmodel/)\n");
    }
    fprintf(stderr, "fuzz_model: %zu instructions, group %s\n", fz_count(), group ? group : "all");
    return 0;
}

/* ------------------------------------------------------------ invariants */

/* The case with the products of each chunk in another order: reversed, or
 * (GTR-FDPA, whose even and odd products are summed apart) rotated by two.
 * @return 0 if the family promises nothing about order. */
static int permuted(const mf_instr *in, const mf_case *cs, mf_case *out)
{
    int unit;
    switch (in->family) {
    case MF_T_FDPA:
    case MF_ST_FDPA:
    case MF_E_FDPA:
    case MF_TR_FDPA:
    case MF_GTR_FDPA: unit = in->L; break;
    case MF_GST_FDPA: unit = in->x; break;
    case MF_INT_DOT: unit = in->k; break; /* an exact integer sum: any order */
    default: return 0;
    }
    /* sparse rows: a position's being kept is its group's metadata, and L counts kept products, not
     * positions; moving values between positions would move them between kept and pruned */
    if (in->sparse || unit < 2 || unit > in->k)
        return 0;
    *out = *cs;
    for (int k0 = 0; k0 + unit <= in->k; k0 += unit) {
        for (int i = 0; i < unit; i++) {
            int j = in->family == MF_GTR_FDPA ? (i + 2) % unit : unit - 1 - i;
            out->a[k0 + j] = cs->a[k0 + i];
            out->b[k0 + j] = cs->b[k0 + i];
        }
    }
    return 1;
}

/* @return 1 if negating every a and c must negate d (DOMAIN section 3). */
static int sign_symmetric(const mf_instr *in)
{
    return in->family != MF_TR_FDPA && in->family != MF_GTR_FDPA && in->family != MF_INT_DOT; /* integers: two's complement */
}

/* @return NULL if the invariants hold for (in, cs) with model output d, or
 * the name of the one that failed (and its d in *d2). */
static const char *check_invariants(const mf_instr *in, const mf_case *cs, uint64_t d, uint64_t *d2)
{
    mf_case t;
    if (permuted(in, cs, &t)) {
        *d2 = mf_eval(in, &t);
        if (!mf_output_equal(in, *d2, d) && !(mf_is_nan(in->fd, d) && mf_is_nan(in->fd, *d2)))
            return "invariant-order";
    }
    if (sign_symmetric(in)) {
        mf_value v = mf_decode(in->fd, d);
        if (v.cls == MF_CLS_FINITE || v.cls == MF_CLS_INF || v.cls == MF_CLS_NAN) {
            t = *cs;
            t.c = rv_negate(in->fc, cs->c);
            for (int k = 0; k < in->k; k++)
                t.a[k] = rv_negate(in->fa, cs->a[k]);
            *d2 = mf_eval(in, &t);
            uint64_t want = v.cls == MF_CLS_NAN ? d : rv_negate(in->fd, d);
            if (!mf_output_equal(in, *d2, want) && !(mf_is_nan(in->fd, d) && mf_is_nan(in->fd, *d2)))
                return "invariant-negation";
        }
    }
    return NULL;
}

/* ------------------------------------------------------- slow-model oracle */

/* @return 1 if the case still shows the disagreement of kind `sig`. */
static int disagrees(const mf_instr *in, const mf_case *cs, const char *sig)
{
    uint64_t d = mf_eval(in, cs), d2;
    if (!strcmp(sig, "slow-model"))
        return !slow_output_equal(in, d, slow_eval(in, cs));
    const char *s = check_invariants(in, cs, d, &d2);
    return s && !strcmp(s, sig);
}

/* Greedy minimization: zero each product and c, then clear fraction bits of
 * each value left, while the disagreement persists. */
static void minimize(const mf_instr *in, mf_case *cs, const char *sig)
{
    for (int changed = 1; changed;) {
        changed = 0;
        for (int k = 0; k < in->k; k++) {
            if (!cs->a[k] && !cs->b[k])
                continue;
            mf_case t = *cs;
            t.a[k] = t.b[k] = 0;
            if (disagrees(in, &t, sig)) {
                *cs = t;
                changed = 1;
            }
        }
        uint64_t *vals[1 + 2 * MF_KMAX];
        mf_format fmts[1 + 2 * MF_KMAX];
        int n = 0;
        vals[n] = &cs->c, fmts[n++] = in->fc;
        for (int k = 0; k < in->k; k++) {
            vals[n] = &cs->a[k], fmts[n++] = in->fa;
            vals[n] = &cs->b[k], fmts[n++] = in->fb;
        }
        for (int i = 0; i < n; i++) {
            const rv_layout *L = rv_get(fmts[i]);
            int sh = L->low;
            for (int drop = L->fbits; drop >= 1; drop--) {
                uint64_t mask = (((uint64_t)1 << drop) - 1) << sh;
                if (!(*vals[i] & mask))
                    continue;
                uint64_t keep = *vals[i];
                *vals[i] &= ~mask;
                if (disagrees(in, cs, sig)) {
                    changed = 1;
                    break;
                }
                *vals[i] = keep;
            }
        }
        if (cs->c) {
            mf_case t = *cs;
            t.c = 0;
            if (disagrees(in, &t, sig)) {
                *cs = t;
                changed = 1;
            }
        }
    }
}

/* File a disagreement found without a device in the mismatch store. */
static void file_finding(const mf_instr *in, const mf_case *orig, const char *sig)
{
    mf_case cs = *orig;
    minimize(in, &cs, sig);
    uint64_t d_model = mf_eval(in, &cs), d_ref = slow_eval(in, &cs), d2 = d_model;
    const char *what = "the slow model (slowmodel/)";
    if (strcmp(sig, "slow-model")) {
        check_invariants(in, &cs, d_model, &d2);
        d_ref = d2;
        what = !strcmp(sig, "invariant-order") ? "the model on the same products in another order"
                                                : "the model on the negated case, negated back";
    }
    char hex[ST_HASH_HEX], line[8192], dh[24], mh[24], tbuf[40];
    st_hash(in, &cs, hex);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(tbuf, sizeof tbuf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    static char text[32768];
    size_t pos = 0;
    pos += (size_t)snprintf(text + pos, sizeof text - pos,
                            "# mmafuzz mismatch: the model and %s disagree on the first case below.\n"
                            "# instr: %s\n# signature: %s\n# mmafuzz: %s\n# generator: fuzz_model (libFuzzer)\n"
                            "# time: %s\n# minimized: zeroed products and cleared fraction bits while the "
                            "disagreement stayed\n"
                            "# d= is the output of %s; model= the model's\n"
                            "instr %s\n",
                            what, in->name, sig, MF_VERSION, tbuf, what, in->name);
    uint64_t dref = sig[0] == 's' ? d_ref : d2;
    if (mf_vec_format_case(in, &cs, &dref, line, sizeof line) >= 0) {
        mf_vec_format_value(in->fd, d_model, mh, sizeof mh);
        pos += (size_t)snprintf(text + pos, sizeof text - pos, "%s model=%s\n", line, mh);
    }
    uint64_t d0 = sig[0] == 's' ? slow_eval(in, orig) : d2;
    if (mf_vec_format_case(in, orig, &d0, line, sizeof line) >= 0) {
        mf_vec_format_value(in->fd, mf_eval(in, orig), dh, sizeof dh);
        pos += (size_t)snprintf(text + pos, sizeof text - pos, "%s model=%s role=original\n", line, dh);
    }
    store st;
    char err[512];
    if (st_open(&st, store_root, err, sizeof err) == 0) {
        if (st_file(&st, in, hex, sig, text, pos < sizeof text ? pos : sizeof text - 1, err, sizeof err) < 0 ||
            st_flush(&st, err, sizeof err) < 0)
            fprintf(stderr, "fuzz_model: store: %s\n", err);
        st_close(&st);
    } else {
        fprintf(stderr, "fuzz_model: store %s: %s\n", store_root, err);
    }
    char path[1400];
    st_path(store_root, in, hex, path, sizeof path);
    fprintf(stderr, "fuzz_model: %s disagreement, minimized and filed as %s:\n%s", sig, path, text);
}

/* ------------------------------------------------------------ the device */

static void device_check(const mf_instr *in, const mf_case *cs)
{
    if (!mf_device_supports(device, in, NULL))
        return;
    if (zdev.in != in) {
        mz_dev_free(&zdev);
        memset(&zdev, 0, sizeof zdev);
        if (mz_dev_init(&zdev, device, in, NULL)) {
            fprintf(stderr, "fuzz_model: %s: %s\n", in->name, zdev.err);
            abort();
        }
    }
    uint64_t d;
    if (mz_dev_run(&zdev, cs, 1, &d) != MF_DEV_OK) {
        fprintf(stderr, "fuzz_model: %s: device error: %s\n", in->name, zdev.err);
        abort();
    }
    if (mf_output_equal(in, d, mf_eval(in, cs)))
        return;
    store st;
    char err[512];
    mm_origin o = {device_spec, 0, -1, -1, 0, 0, 0, 0, "fuzz_model (libFuzzer)"};
    mm_outcome out;
    if (st_open(&st, store_root, err, sizeof err) == 0) {
        if (mm_handle(&st, &zdev, cs, d, &o, &out, err, sizeof err) == 0)
            fprintf(stderr, "fuzz_model: device and model disagree; filed as %s\n", out.path);
        else
            fprintf(stderr, "fuzz_model: %s\n", err);
        st_flush(&st, err, sizeof err);
        st_close(&st);
    }
    abort();
}

/* ------------------------------------------------------------ entry points */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mf_case cs;
    const mf_instr *in = fz_decode(data, size, &cs);
    if (!in)
        return 0;
    uint64_t d = mf_eval(in, &cs), d2;
    const char *sig = check_invariants(in, &cs, d, &d2);
    if (!sig && device) {
        device_check(in, &cs);
        return 0;
    }
    if (!sig && !slow_output_equal(in, d, slow_eval(in, &cs)))
        sig = "slow-model";
    if (sig) {
        file_finding(in, &cs, sig);
        abort();
    }
    return 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    uint64_t rnd = seed;
    if (seed % 8 == 0)  /* now and then, libFuzzer's own byte-level mutations */
        return LLVMFuzzerMutate(data, size, max_size);
    mf_case cs;
    const mf_instr *in = fz_decode(data, size, &cs);
    if (!in)
        return LLVMFuzzerMutate(data, size, max_size);
    int n = 1 + (int)(seed >> 8) % 3;
    for (int i = 0; i < n; i++)
        fz_mutate(&in, &cs, &rnd);
    return fz_encode(in, &cs, data, max_size);
}

size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1, const uint8_t *d2, size_t s2, uint8_t *out,
                                 size_t max_out, unsigned int seed)
{
    mf_case c1, c2;
    const mf_instr *in = fz_decode(d1, s1, &c1), *in2 = fz_decode(d2, s2, &c2);
    if (!in || !in2)
        return 0;
    uint64_t rnd = seed;
    /* each product (a_k, b_k together), c and the scales from either parent;
       the second parent's values are masked to the first's formats */
    for (int k = 0; k < in->k; k++) {
        rnd = rnd * 6364136223846793005u + 1442695040888963407u;
        if ((rnd >> 33) & 1) {
            c1.a[k] = fz_mask(in->fa, c2.a[k]);
            c1.b[k] = fz_mask(in->fb, c2.b[k]);
        }
    }
    if (seed & 1)
        c1.c = fz_mask(in->fc, c2.c);
    return fz_encode(in, &c1, out, max_out);
}
