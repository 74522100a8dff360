/*
 * test_forms.c - wgmma's operand forms in the model (mmafuzz_model.h: neg_a,
 * neg_b, no_c, no_c_neg_zero on a modified copy of a row) and the integer
 * family's no-C form.  The forms are hypotheses until the H100 has run them
 * (docs/coverage.md); what is tested here is that the model computes what the
 * hypothesis says, on cases derived by hand (each says how), and that every
 * evaluation path (mf_eval, mf_eval_trace, mf_eval_tiles, mf_eval_cases)
 * gives a copy with forms the same result.
 */
#include "mmafuzz_model.h"
#include "test_check.h"

#include <stdlib.h>
#include <string.h>

static mf_instr row_copy(const char *name)
{
    const mf_instr *r = mf_instr_find(name);
    mf_instr c;
    memset(&c, 0, sizeof c);
    CHECK(r != NULL, "%s: no such row", name);
    if (r)
        c = *r;
    return c;
}

static void expect(const mf_instr *in, const mf_case *cs, uint64_t want, const char *what)
{
    uint64_t d = mf_eval(in, cs), dt = mf_eval_trace(in, cs, NULL);
    CHECK(d == want && dt == want, "%s %s: mf_eval %llx, mf_eval_trace %llx, expected %llx", in->name, what,
          (unsigned long long)d, (unsigned long long)dt, (unsigned long long)want);
}

static void by_hand(void)
{
    mf_case cs;
    /* f32 <- f16: 1 * 2 + 1 = 3 (0x40400000); imm-scale-a = -1: -2 + 1 = -1
     * (0xbf800000), the same for b; both: 3 again; no c: 1 * 2 = 2 (0x40000000) */
    mf_instr r = row_copy("hopper/wgmma.m64n8k16.f32.f16.f16");
    memset(&cs, 0, sizeof cs);
    cs.a[0] = 0x3c00;
    cs.b[0] = 0x4000;
    cs.c = 0x3f800000;
    expect(&r, &cs, 0x40400000, "plain");
    r.neg_a = 1;
    expect(&r, &cs, 0xbf800000, "neg_a");
    r.neg_a = 0;
    r.neg_b = 1;
    expect(&r, &cs, 0xbf800000, "neg_b");
    r.neg_a = 1;
    expect(&r, &cs, 0x40400000, "neg_ab");
    r.neg_a = r.neg_b = 0;
    r.no_c = 1;
    expect(&r, &cs, 0x40000000, "no_c");

    /* fp8: e4m3 1.0 = 0x38; 1 * 1 + 0 negated in a: -1 = 0xbf800000 */
    r = row_copy("hopper/wgmma.m64n8k32.f32.e4m3.e4m3");
    memset(&cs, 0, sizeof cs);
    cs.a[0] = cs.b[0] = 0x38;
    r.neg_a = 1;
    expect(&r, &cs, 0xbf800000, "neg_a");

    /* no c is c = +0 read (measured on an H100: every dense floating-point
     * wgmma row agreed with it, tf32 and bf16 disagreed with "no term for c"),
     * not the products alone (no_c_neg_zero selects that alternative): f16 <- f16,
     * product 0 is 2^-12 * 2^-13 = 2^-25, products 1..15 are 2^-24 * 2^-24 =
     * 2^-48 each (nonzero: a zero product would take e_zero itself).  With
     * c = +0 read, the zero c takes e_zero = -21 (hopper, f16 output), e_max =
     * -21, F = 25: the quantum 2^-46 cuts each 2^-48, and 2^-25 is half the
     * smallest f16 subnormal: ties to even, +0.  Without c, e_max = -25, the
     * quantum 2^-50: all kept, 2^-25 + 15 * 2^-48 is above the tie: 2^-24 =
     * 0x0001. */
    r = row_copy("hopper/wgmma.m64n8k16.f16.f16.f16");
    memset(&cs, 0, sizeof cs);
    for (int k = 1; k < r.k; k++)
        cs.a[k] = cs.b[k] = 0x0001;
    cs.a[0] = 0x0c00;
    cs.b[0] = 0x0800;
    expect(&r, &cs, 0x0000, "c = +0 read");
    r.no_c = 1;
    expect(&r, &cs, 0x0000, "no_c");
    r.no_c_neg_zero = 1;
    expect(&r, &cs, 0x0001, "no_c, the alternative: no term for c");
    r.no_c_neg_zero = 0;

    /* every product -0 (a = -0, b = 1) and no c: +0 under the default
     * hypothesis (as if +0 were added), -0 under no_c_neg_zero (the IEEE sum
     * of the products alone); with c = -0 read, hopper's zero rule gives +0 */
    memset(&cs, 0, sizeof cs);
    for (int k = 0; k < r.k; k++) {
        cs.a[k] = 0x8000;
        cs.b[k] = 0x3c00;
    }
    cs.c = 0x8000;
    expect(&r, &cs, 0x0000, "no_c, all products -0");
    r.no_c_neg_zero = 1;
    expect(&r, &cs, 0x8000, "no_c_neg_zero, all products -0");
    cs.a[3] = 0x0000; /* one product +0 (+0 * 1): the IEEE sum is +0 */
    expect(&r, &cs, 0x0000, "no_c_neg_zero, one product +0");
    r.no_c = 0;
    cs.a[3] = 0x8000;
    expect(&r, &cs, 0x0000, "c = -0 read, all products -0");

    /* integer: 3 * 4 + 100 = 112; no c: 12.  b1: popc(ffffffff AND 0000000f) = 4,
     * + c 7 = 11; no c: 4 */
    r = row_copy("hopper/wgmma.m64n8k32.s32.s8.u8");
    memset(&cs, 0, sizeof cs);
    cs.a[0] = 3;
    cs.b[0] = 4;
    cs.c = 100;
    expect(&r, &cs, 112, "plain");
    r.no_c = 1;
    expect(&r, &cs, 12, "no_c");
    r = row_copy("hopper/wgmma.m64n8k256.s32.b1.b1.and.popc");
    memset(&cs, 0, sizeof cs);
    cs.a[0] = 0xffffffff;
    cs.b[0] = 0x0000000f;
    cs.c = 7;
    expect(&r, &cs, 11, "plain");
    r.no_c = 1;
    expect(&r, &cs, 4, "no_c");
}

/* Random bit patterns through every path, for each wgmma row and form. */
static void paths_agree(int ncases)
{
    uint64_t st = 0x1234;
    long compared = 0;
    for (size_t i = 0; i < mf_instr_count; i++) {
        const mf_instr *t = &mf_instr_table[i];
        if (t->arch != MF_ARCH_HOPPER || strncmp(t->qualifier, "wgmma.", 6))
            continue;
        for (int form = 0; form < 5; form++) {
            mf_instr r = *t;
            r.neg_a = form == 1 || form == 3;
            r.neg_b = form == 2 || form == 3;
            r.no_c = form == 4;
            const int m = r.m, n = r.n, k = r.k;
            const size_t ea = mf_tile_elem_bytes(r.fa), eb = mf_tile_elem_bytes(r.fb), ec = mf_tile_elem_bytes(r.fc),
                         ed = mf_tile_elem_bytes(r.fd);
            unsigned char *A = calloc((size_t)m * k, ea), *B = calloc((size_t)n * k, eb), *C = calloc((size_t)m * n, ec),
                          *D = calloc((size_t)m * n, ed), *D2 = calloc((size_t)m * n, ed);
            const uint64_t ma = (UINT64_C(1) << mf_format_get(r.fa)->bits) - 1,
                           mb = (UINT64_C(1) << mf_format_get(r.fb)->bits) - 1,
                           mc = (UINT64_C(1) << mf_format_get(r.fc)->bits) - 1;
            for (int rep = 0; rep < ncases / (m * n) + 1; rep++) {
                for (int q = 0; q < m * k; q++)
                    mf_elem_set(ea, A, (size_t)q, test_random(&st) & ma);
                for (int q = 0; q < n * k; q++)
                    mf_elem_set(eb, B, (size_t)q, test_random(&st) & mb);
                for (int q = 0; q < m * n; q++)
                    mf_elem_set(ec, C, (size_t)q, test_random(&st) & mc);
                mf_eval_tiles(&r, m, n, k, 1, A, B, C, NULL, NULL, D);
                /* mf_eval_cases with case i = output (i / n, i % n) */
                unsigned char *Ac = calloc((size_t)m * n * k, ea), *Bc = calloc((size_t)m * n * k, eb);
                for (int o = 0; o < m * n; o++)
                    for (int q = 0; q < k; q++) {
                        mf_elem_set(ea, Ac, (size_t)o * k + q, mf_elem_get(ea, A, (size_t)(o / n) * k + q));
                        mf_elem_set(eb, Bc, (size_t)o * k + q, mf_elem_get(eb, B, (size_t)(o % n) * k + q));
                    }
                mf_eval_cases(&r, (size_t)m * n, Ac, Bc, C, NULL, NULL, D2);
                for (int o = 0; o < m * n; o++) {
                    mf_case cs;
                    memset(&cs, 0, sizeof cs);
                    for (int q = 0; q < k; q++) {
                        cs.a[q] = mf_elem_get(ea, A, (size_t)(o / n) * k + q);
                        cs.b[q] = mf_elem_get(eb, B, (size_t)(o % n) * k + q);
                    }
                    cs.c = mf_elem_get(ec, C, (size_t)o);
                    uint64_t d = mf_eval_trace(&r, &cs, NULL), d1 = mf_eval(&r, &cs);
                    uint64_t dt = mf_elem_get(ed, D, (size_t)o), dc = mf_elem_get(ed, D2, (size_t)o);
                    CHECK(d == d1 && d == dt && d == dc, "%s form %d output %d: trace %llx eval %llx tiles %llx cases %llx",
                          r.name, form, o, (unsigned long long)d, (unsigned long long)d1, (unsigned long long)dt,
                          (unsigned long long)dc);
                    compared++;
                }
                free(Ac);
                free(Bc);
            }
            free(A);
            free(B);
            free(C);
            free(D);
            free(D2);
        }
    }
    printf("%ld outputs of wgmma rows with operand forms: every path agrees%s\n", compared, failures ? " NOT" : "");
}

int main(int argc, char **argv)
{
    by_hand();
    paths_agree(argc > 1 ? atoi(argv[1]) : 1000);
    if (failures)
        printf("%d failures\n", failures);
    return failures ? 1 : 0;
}
