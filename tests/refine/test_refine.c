/*
 * test_refine.c - buckets and variants of the refinement library (refine.h)
 * on hand-derived cases.
 *
 * The rows (model/instr_table.def, DOMAIN section 4 and 4a): ampere's
 * mma.m16n8k16.f16.f16.f16.f16 keeps F = 24 alignment bits in chunks of
 * L = 8, hopper's F = 25 in chunks of L = 16; both round the sum with RNE
 * into binary16 and give +0 for a sum that rounds to zero.
 */
#include "probe.h"
#include "refine.h"
#include "test_check.h"

#include <string.h>

/* f16 bits of 2^e for a normal e (bias 15, DOMAIN section 1). */
static uint64_t f16_pow2(int e) { return (uint64_t)(e + 15) << 10; }

/* A case of the f16 row: a[k] * b[k] = 2^ea * 2^eb, c = +0. */
static void put(mf_case *cs, int k, int sign, int ea, int eb)
{
    cs->a[k] = f16_pow2(ea) | (sign ? 0x8000u : 0);
    cs->b[k] = f16_pow2(eb);
}

static void test_bucket_is_the_row(void)
{
    const mf_instr *amp = mf_instr_find("ampere/mma.m16n8k16.f16.f16.f16.f16");
    const mf_instr *hop = mf_instr_find("hopper/mma.m16n8k16.f16.f16.f16.f16");
    CHECK(amp && hop, "rows missing");
    if (!amp || !hop)
        return;
    static rf_catalogue cat;
    rf_catalogue_build(amp, &cat);

    /* F case: 2^14 - 2^14 + 2^-11 (e_max = 14): the last term is 2^-25 of
     * e_max, kept with F = 25 (hopper: 2^-11 = 0x1000), lost with F = 24
     * (ampere: the sum is 0, +0).  The chunk length plays no part (K < 8
     * used). */
    mf_case fcase;
    memset(&fcase, 0, sizeof fcase);
    put(&fcase, 0, 0, 7, 7);
    put(&fcase, 1, 1, 7, 7);
    put(&fcase, 2, 0, -6, -5);
    /* L case: c = 2^14, -2^14 at k = 0, 2^-13 at k = 8 (e_max - F - 3 for
     * F = 24): with L = 8 it is alone in the second chunk and survives
     * (ampere: 0x0800), with L = 16 it is aligned to 2^14 and truncated
     * (hopper: +0).  F = 25 keeps it neither. */
    mf_case lcase;
    memset(&lcase, 0, sizeof lcase);
    lcase.c = f16_pow2(14);
    put(&lcase, 0, 1, 7, 7);
    put(&lcase, 8, 0, -7, -6);
    const uint64_t f_dev = 0x1000, f_amp = 0x0000, l_dev = 0x0000, l_amp = 0x0800;
    /* the hand derivation agrees with the model rows */
    CHECK(mf_eval(hop, &fcase) == f_dev && mf_eval(amp, &fcase) == f_amp, "F case: hopper %llx ampere %llx",
          (unsigned long long)mf_eval(hop, &fcase), (unsigned long long)mf_eval(amp, &fcase));
    CHECK(mf_eval(hop, &lcase) == l_dev && mf_eval(amp, &lcase) == l_amp, "L case: hopper %llx ampere %llx",
          (unsigned long long)mf_eval(hop, &lcase), (unsigned long long)mf_eval(amp, &lcase));

    rf_bucket bf, bl;
    rf_bucket_of(hop, &cat, &fcase, f_dev, f_amp, &bf, NULL);
    rf_bucket_of(hop, &cat, &lcase, l_dev, l_amp, &bl, NULL);
    CHECK(bf.explained && bl.explained, "both explained");
    /* one bucket: the canonical explanation is hopper's row, whichever
     * single parameter reproduces each case */
    CHECK(!strcmp(bf.id, bl.id), "F and L cases in different buckets:\n  %s\n  %s", bf.key, bl.key);
    CHECK(strstr(bf.words, "behaves like hopper's") && strstr(bf.words, "F 24 -> 25") &&
              strstr(bf.words, "L 8 -> 16"),
          "words: %s", bf.words);
    CHECK(strstr(bf.key, "|f16*f16+f16->f16|model ampere/mma.m16n8k16.f16.f16.f16.f16|E:") != NULL, "key: %s",
          bf.key);
    /* the single parameters are reported beside it */
    CHECK(strstr(bf.also, "F = 25 instead of 24") && !strstr(bf.also, "chunk length 16"), "F also: %s", bf.also);
    CHECK(strstr(bl.also, "chunk length 16 instead of 8") && !strstr(bl.also, "F = 25"), "L also: %s", bl.also);
    /* the bucket depends on the case alone: the same case again gives the same bucket */
    rf_bucket again;
    rf_bucket_of(hop, &cat, &fcase, f_dev, f_amp, &again, NULL);
    CHECK(!strcmp(again.id, bf.id) && !strcmp(again.key, bf.key), "not deterministic");

    /* run's bucket (variants up to the first that reproduces d) is the same bucket */
    rf_bucket fast;
    long long ev_full = 0, ev_fast = 0;
    rf_bucket_of(hop, &cat, &lcase, l_dev, l_amp, &again, &ev_full);
    rf_bucket_id_of(hop, &cat, &lcase, l_dev, l_amp, &fast, &ev_fast);
    CHECK(!strcmp(fast.id, bl.id) && !strcmp(fast.words, bl.words) && !fast.also[0], "run's bucket differs: %s",
          fast.key);
    CHECK(ev_fast == 1 && ev_full == cat.n, "evaluations: %lld and %lld of %d", ev_fast, ev_full, cat.n);
    /* a device output no variant gives: unexplained, keyed by its fingerprint */
    rf_bucket bu;
    rf_bucket_of(hop, &cat, &fcase, 0x3c00 /* 1.0 */, f_amp, &bu, NULL);
    CHECK(!bu.explained && strstr(bu.key, "|U:") && strstr(bu.words, "unexplained"), "unexplained: %s", bu.key);
}

/* The directed output roundings (MF_RZ, MF_RD, MF_RU: T-FDPA step 6 with
 * IEEE 754's directions) on sums that fall between two outputs, and the
 * catalogue's rounding variants. */
static void test_directed_roundings(void)
{
    const mf_instr *a32 = mf_instr_find("ampere/mma.m16n8k16.f32.f16.f16.f32");
    const mf_instr *h16 = mf_instr_find("hopper/mma.m16n8k16.f16.f16.f16.f16");
    CHECK(a32 && h16, "rows missing");
    if (!a32 || !h16)
        return;
    /* binary32 D, F = 24: c = +-1, product +-2^-24 (2^-12 * 2^-12) kept
     * (e_max = 0): the sum +-(1 + 2^-24) lies halfway between 1 (0x3f800000)
     * and 1 + 2^-23 (0x3f800001). */
    static const struct {
        mf_rho rho;
        uint32_t pos, neg;
    } f32[] = {
        {MF_RZ_FP32, 0x3f800000, 0xbf800000}, {MF_RZ, 0x3f800000, 0xbf800000},
        {MF_RNE, 0x3f800000, 0xbf800000},     /* the tie goes to the even 1 */
        {MF_RD, 0x3f800000, 0xbf800001},      {MF_RU, 0x3f800001, 0xbf800000},
    };
    for (size_t i = 0; i < sizeof f32 / sizeof f32[0]; i++)
        for (int sg = 0; sg < 2; sg++) {
            mf_instr in = *a32;
            in.rho = f32[i].rho;
            mf_case cs;
            memset(&cs, 0, sizeof cs);
            cs.c = sg ? 0xbf800000u : 0x3f800000u;
            cs.a[0] = f16_pow2(-12) | (sg ? 0x8000u : 0);
            cs.b[0] = f16_pow2(-12);
            uint64_t want = sg ? f32[i].neg : f32[i].pos, d = mf_eval(&in, &cs);
            CHECK(d == want, "f32 %s sign %d: %llx, want %llx", mf_rho_name(f32[i].rho), sg, (unsigned long long)d,
                  (unsigned long long)want);
        }
    /* binary16 D: c = 1 (0x3c00), product 1.5 * 2^-11 (0x2600 * 0x2800), three
     * quarters of the ulp 2^-10: RNE and RU give 0x3c01, RZ and RD 0x3c00. */
    static const struct {
        mf_rho rho;
        uint16_t d;
    } f16[] = {{MF_RNE_FP16, 0x3c01}, {MF_RZ, 0x3c00}, {MF_RD, 0x3c00}, {MF_RU, 0x3c01}};
    for (size_t i = 0; i < sizeof f16 / sizeof f16[0]; i++) {
        mf_instr in = *h16;
        in.rho = f16[i].rho;
        mf_case cs;
        memset(&cs, 0, sizeof cs);
        cs.c = 0x3c00;
        cs.a[0] = 0x2600;
        cs.b[0] = 0x2800;
        uint64_t d = mf_eval(&in, &cs);
        CHECK(d == f16[i].d, "f16 %s: %llx, want %x", mf_rho_name(f16[i].rho), (unsigned long long)d, f16[i].d);
    }
    /* the catalogue names every other rounding of D's format (the list) */
    static rf_catalogue cat;
    rf_catalogue_build(a32, &cat);
    const char *want32[] = {"rounding RZ-E8M13 instead of RZ-FP32", "rounding RNE instead of RZ-FP32",
                            "rounding RD instead of RZ-FP32", "rounding RU instead of RZ-FP32"};
    for (size_t w = 0; w < 4; w++) {
        int found = 0;
        for (int i = 0; i < cat.n; i++)
            found |= cat.v[i].kind == RF_RHO && !strcmp(cat.v[i].what, want32[w]);
        CHECK(found, "f32 catalogue lacks \"%s\"", want32[w]);
    }
    rf_catalogue_build(h16, &cat);
    const char *want16[] = {"rounding RZ instead of RNE-FP16", "rounding RD instead of RNE-FP16",
                            "rounding RU instead of RNE-FP16"};
    for (size_t w = 0; w < 3; w++) {
        int found = 0;
        for (int i = 0; i < cat.n; i++)
            found |= cat.v[i].kind == RF_RHO && !strcmp(cat.v[i].what, want16[w]);
        CHECK(found, "f16 catalogue lacks \"%s\"", want16[w]);
    }
}

/* The result of probe `feature` in a run. */
static const rf_probe_result *probe_result(const rf_probe_run *pr, const char *feature)
{
    for (int p = 0; p < rf_probe_count; p++)
        if (!strcmp(rf_probes[p].feature, feature))
            return &pr->r[p];
    return NULL;
}

static void probe_row(const char *name, rf_probe_run *pr, rf_row *r)
{
    const mf_instr *in = mf_instr_find(name);
    CHECK(in != NULL, "%s missing", name);
    if (!in)
        return;
    *r = rf_row_of(in);
    rf_probe_all(in, rf_run_row, r, pr);
}

/* The probes of Fasi et al. (monotonicity) and Hickmann & Bradford
 * (accumulator integration, order of Big, -Big, Small), DOMAIN section 6. */
static void test_papers_probes(void)
{
    /* Fasi et al. on V100 (DOMAIN section 6): c = 1-2^-24 with four products
     * 2^-24 gives 1+2^-23, c = 1 gives 1.  Volta's row reproduces it ... */
    const mf_instr *volta = mf_instr_find("volta/mma.m8n8k4.f32.f16.f16.f32");
    CHECK(volta != NULL, "volta row missing");
    if (!volta)
        return;
    mf_case cs;
    memset(&cs, 0, sizeof cs);
    for (int k = 0; k < 4; k++) {
        cs.a[k] = f16_pow2(-12);
        cs.b[k] = f16_pow2(-12);
    }
    cs.c = 0x3f7fffff; /* 1 - 2^-24 */
    CHECK(mf_eval(volta, &cs) == 0x3f800001, "Fasi c = 1-2^-24: %llx", (unsigned long long)mf_eval(volta, &cs));
    cs.c = 0x3f800000;
    CHECK(mf_eval(volta, &cs) == 0x3f800000, "Fasi c = 1: %llx", (unsigned long long)mf_eval(volta, &cs));
    /* ... and the probe sees it from n = 3 products (F = 23: 1 unit short of 1, and 2
     * units make the next binary32 above 1) */
    static rf_probe_run pr;
    rf_row r;
    probe_row(volta->name, &pr, &r);
    const rf_probe_result *m = probe_result(&pr, "monotonicity");
    CHECK(m && m->status == RF_PROBE_OK && m->value == 1 && strstr(m->text, "n = 3"), "volta monotonicity: %s",
          m ? m->text : "?");
    /* hopper f32 (F = 25, L = 16, DOMAIN sections 4 and 7): c is a term of the fused sum, kept to
     * F = 25 bits below e_max (H100: "c is summed inside the fused sum"); the fused sum loses
     * Small beside Big in every order (Hickmann & Bradford: 2^30 + -2^30 + 2^-14 -> 0) */
    probe_row("hopper/mma.m16n8k16.f32.f16.f16.f32", &pr, &r);
    const rf_probe_result *c = probe_result(&pr, "accumulator integration"), *o = probe_result(&pr, "order of Big, -Big, Small");
    CHECK(c && c->status == RF_PROBE_OK && c->value == 25, "hopper c bits: %s", c ? c->text : "?");
    CHECK(o && o->status == RF_PROBE_OK && o->value == 1 && !strcmp(o->text, "one output in 6 orders"),
          "hopper order: %s", o ? o->text : "?");
    m = probe_result(&pr, "monotonicity");
    CHECK(m && m->value == 1 && strstr(m->text, "n = 12"), "hopper monotonicity: %s", m ? m->text : "?");
    /* the same row with chunks of 8 needs 12 products in one chunk: monotonic, and the check
     * against the table row (L = 16) says so */
    const mf_instr *h = mf_instr_find("hopper/mma.m16n8k16.f32.f16.f16.f32");
    rf_row r8 = rf_row_of(h);
    r8.in.L = 8;
    rf_probe_all(h, rf_run_row, &r8, &pr);
    m = probe_result(&pr, "monotonicity");
    CHECK(m && m->value == 0, "L = 8 monotonicity: %s", m ? m->text : "?");
    char buf[2048];
    rf_probe_check_row(h, &pr, buf, sizeof buf);
    CHECK(strstr(buf, "monotonicity") != NULL, "check misses monotonicity: %s", buf);
    /* the FP64 FMA chain rounds after each product: Big + Small loses Small, Big + -Big keeps
     * it, so the order shows (2 outputs) */
    probe_row("hopper/mma.m16n8k16.f64.f64.f64.f64", &pr, &r);
    o = probe_result(&pr, "order of Big, -Big, Small");
    CHECK(o && o->value == 2, "FP64 order: %s", o ? o->text : "?");
    /* fp8 mma.sync on hopper adds c after the products with an IEEE add (DOMAIN section 5) */
    probe_row("hopper/mma.m16n8k32.f32.e4m3.e4m3.f32", &pr, &r);
    c = probe_result(&pr, "accumulator integration");
    CHECK(c && c->status == RF_PROBE_BOUND && strstr(c->text, "c added after the products"), "fp8 c: %s",
          c ? c->text : "?");
}

/* run's classifier (an explained case's bucket id looked up per variant,
 * computed once) gives the id rf_bucket_id_of computes from the case's
 * whole key, on random cases whose device output is another architecture's
 * row (explained), the model's output with its last bit flipped, and random
 * bits (mostly unexplained); and rf_classify_bucket the same bucket. */
static void test_classifier_is_the_key(void)
{
    static const char *const pairs[][2] = {
        {"hopper/mma.m16n8k16.f16.f16.f16.f16", "ampere/mma.m16n8k16.f16.f16.f16.f16"},
        {"hopper/mma.m16n8k16.f32.bf16.bf16.f32", "ampere/mma.m16n8k16.f32.bf16.bf16.f32"},
        {"ampere/mma.m16n8k8.f32.tf32.tf32.f32", "ampere/mma.m16n8k8.f32.tf32.tf32.f32"},
    };
    static rf_catalogue cat;
    int explained = 0, unexplained = 0;
    for (size_t p = 0; p < sizeof pairs / sizeof *pairs; p++) {
        const mf_instr *in = mf_instr_find(pairs[p][0]), *model = mf_instr_find(pairs[p][1]);
        const mf_instr *other = in ? mf_instr_on_arch(in, mf_arch_by_name("volta")) : NULL;
        CHECK(in && model, "rows %s %s missing", pairs[p][0], pairs[p][1]);
        if (!in || !model)
            continue;
        rf_classifier *c = rf_classifier_new(in, model);
        CHECK(c != NULL, "out of memory");
        if (!c)
            continue;
        rf_catalogue_build(model, &cat);
        uint64_t st = 0x5eed + p;
        for (int q = 0; q < 3000; q++) {
            mf_case cs;
            rf_random_case(model, &st, &cs);
            uint64_t dm = mf_eval(model, &cs), dd;
            if (q % 3 == 0)
                dd = mf_eval(in != model ? in : other ? other : model, &cs);
            else if (q % 3 == 1)
                dd = dm ^ 1;
            else
                dd = (st * 0x9e3779b97f4a7c15ULL) & ((UINT64_C(1) << mf_format_get(model->fd)->bits) - 1);
            if (dd == dm || mf_output_equal(in, dd, dm))
                continue;
            rf_bucket want, got;
            rf_bucket_id_of(in, &cat, &cs, dd, dm, &want, NULL);
            rf_classify_bucket(c, &cs, dd, dm, &got);
            uint64_t id = rf_classify(c, &cs, dd, dm);
            explained += want.explained;
            unexplained += !want.explained;
            char hex[RF_BUCKET_ID];
            snprintf(hex, sizeof hex, "%016llx", (unsigned long long)id);
            CHECK(!strcmp(hex, want.id) && !strcmp(got.id, want.id) && !strcmp(got.key, want.key),
                  "%s case %d: classifier %s / %s, key %s (%s)", pairs[p][0], q, hex, got.id, want.id, want.key);
        }
        rf_classifier_free(c);
    }
    CHECK(explained > 100 && unexplained > 100, "cases: %d explained, %d unexplained (both kinds wanted)", explained,
          unexplained);
}

/* fit --start ARCH where ARCH lacks the qualifier (wgmma before Hopper, fp8
 * before Ada): the start takes the parameters of ARCH's closest row and keeps
 * everything else of the target.  Expected donors from the table's rows:
 * ampere's mma.m16n8k16.f32.f16.f16.f32 has wgmma.m64n8k16.f32.f16.f16's
 * four formats and K; ampere has no integer rows (INT-dot is Hopper's). */
static void test_nearest_start(void)
{
    const mf_instr *wg = mf_instr_find("hopper/wgmma.m64n8k16.f32.f16.f16");
    const mf_instr *amp = mf_instr_find("ampere/mma.m16n8k16.f32.f16.f16.f32");
    CHECK(wg && amp, "rows missing");
    if (!wg || !amp)
        return;
    mf_instr s;
    memset(&s, 0, sizeof s);
    const mf_instr *donor = rf_nearest_start(wg, MF_ARCH_AMPERE, &s);
    CHECK(donor == amp, "donor %s, expected %s", donor ? donor->name : "none", amp->name);
    CHECK(s.F == amp->F && s.L == amp->L && s.e_zero == amp->e_zero && s.rho == amp->rho &&
              s.family == amp->family && s.zero_plus == amp->zero_plus,
          "parameters not the donor's (F %d L %d e_zero %d)", s.F, s.L, s.e_zero);
    CHECK(s.name == wg->name && s.arch == wg->arch && s.m == wg->m && s.n == wg->n && s.k == wg->k &&
              s.fa == wg->fa && s.fd == wg->fd,
          "name, architecture, shape or formats not the target's");
    /* the chunk length is cut to the target's K: ampere's f16 rows chunk by 8, a k8 target keeps 8 */
    const mf_instr *fp8 = mf_instr_find("hopper/mma.m16n8k32.f32.e4m3.e4m3.f32");
    CHECK(fp8 != NULL, "fp8 row missing");
    if (fp8) {
        donor = rf_nearest_start(fp8, MF_ARCH_AMPERE, &s);
        CHECK(donor && donor->fd == fp8->fd && donor->fc == fp8->fc && s.k == 32 && s.L <= 32 && 32 % s.L == 0,
              "fp8 start: donor %s, L %d", donor ? donor->name : "none", s.L);
    }
    const mf_instr *s8 = mf_instr_find("hopper/mma.m16n8k32.s32.s8.s8.s32");
    CHECK(s8 != NULL, "s8 row missing");
    if (s8)
        CHECK(rf_nearest_start(s8, MF_ARCH_TURING, &s) == NULL, "an integer start from turing, which has none");
}

/* The sparse rows' catalogue: each alternative of model/sparse.c is a
 * variant (kind sparse), and on the hand-derived cases of
 * tests/model/vectors/sparse_hopper.vec each is told apart as that file's
 * comments derive: +Inf in b at a pruned position is NaN only for (c), the
 * dense model on the logical row; 1 + 2^-24 + 2^-24 (the second 2^-24 in the
 * second half of K = 32) is 1 + 2^-23 in one fused sum and 1 in chunks of 16
 * logical positions ((b) and (c)); metadata order (a) changes neither. */
static void test_sparse_catalogue(void)
{
    const mf_instr *k16 = mf_instr_find("hopper/mma.sp.m16n8k16.f32.f16.f16.f32"),
                   *k32 = mf_instr_find("hopper/mma.sp.m16n8k32.f32.f16.f16.f32");
    CHECK(k16 && k32, "sparse rows missing");
    if (!k16 || !k32)
        return;
    rf_catalogue cat;
    rf_catalogue_build(k32, &cat);
    int idx[MF_SPM_COUNT] = {0, -1, -1, -1};
    for (int i = 0; i < cat.n; i++)
        if (cat.v[i].kind == RF_SPARSE)
            idx[cat.v[i].row.in.sp_model] = i;
    CHECK(idx[1] >= 0 && idx[2] >= 0 && idx[3] >= 0, "catalogue lacks a sparse alternative: %d %d %d", idx[1], idx[2],
          idx[3]);
    if (idx[1] < 0 || idx[2] < 0 || idx[3] < 0)
        return;
    /* the chunk case: a[0] = 1, a[1] = a[16] = 2^-24, b = 1, c = 0, meta 1 = (1, 0) in every group */
    mf_case cs;
    memset(&cs, 0, sizeof cs);
    for (int k = 0; k < 32; k++)
        cs.b[k] = 0x3c00;
    cs.a[0] = 0x3c00;
    cs.a[1] = cs.a[16] = 0x0001;
    for (int g = 0; g < 8; g++)
        cs.meta[g] = 0x1;
    CHECK(mf_eval(k32, &cs) == 0x3f800001, "k32 hypothesis %llx", (unsigned long long)mf_eval(k32, &cs));
    CHECK(rf_row_eval(&cat.v[idx[1]].row, &cs) == 0x3f800001, "k32 (a)");
    CHECK(rf_row_eval(&cat.v[idx[2]].row, &cs) == 0x3f800000, "k32 (b)");
    CHECK(rf_row_eval(&cat.v[idx[3]].row, &cs) == 0x3f800000, "k32 (c)");
    rf_set e = rf_explain(&cat, &cs, 0x3f800000, NULL);
    CHECK(rf_set_has(&e, idx[2]) && rf_set_has(&e, idx[3]) && !rf_set_has(&e, idx[1]), "chunked d explained by (b), (c)");
    /* the Inf case on k16: kept 2,3 (e), 4,6 (8), 9,11 (d), 12,13 (4), all a = b = 1, b[0] = +Inf, c = 1 */
    rf_catalogue_build(k16, &cat);
    for (int i = 0; i < cat.n; i++)
        if (cat.v[i].kind == RF_SPARSE)
            idx[cat.v[i].row.in.sp_model] = i;
    memset(&cs, 0, sizeof cs);
    static const uint8_t meta[4] = {0xe, 0x8, 0xd, 0x4};
    static const int kept[8] = {2, 3, 4, 6, 9, 11, 12, 13};
    memcpy(cs.meta, meta, 4);
    for (int k = 0; k < 16; k++)
        cs.b[k] = 0x3c00;
    cs.b[0] = 0x7c00;
    for (int i = 0; i < 8; i++)
        cs.a[kept[i]] = 0x3c00;
    cs.c = 0x3f800000;
    CHECK(mf_eval(k16, &cs) == 0x41100000, "k16 hypothesis %llx", (unsigned long long)mf_eval(k16, &cs));
    CHECK(rf_row_eval(&cat.v[idx[3]].row, &cs) == 0x7fffffff, "k16 (c): %llx",
          (unsigned long long)rf_row_eval(&cat.v[idx[3]].row, &cs));
    CHECK(rf_row_eval(&cat.v[idx[2]].row, &cs) == 0x41100000, "k16 (b)");
}

/* fit's random cases of a sparse row are legal sparse cases (PTX ISA's
 * storage rules as mf_sparse_check states them): fit runs them on hardware,
 * where illegal metadata is undefined (on an H200, fit of the tf32 sparse rows
 * found no row before: their cases had metadata 0). */
static void test_sparse_random_cases_legal(void)
{
    const char *rows[] = {"hopper/mma.sp.m16n8k8.f32.tf32.tf32.f32", "hopper/mma.sp::ordered_metadata.m16n8k32.f16.f16.f16.f16"};
    for (int r = 0; r < 2; r++) {
        const mf_instr *in = mf_instr_find(rows[r]);
        CHECK(in && in->sparse, "%s missing", rows[r]);
        if (!in)
            continue;
        uint64_t rng = 5;
        int bad = 0;
        for (int i = 0; i < 2000; i++) {
            mf_case cs;
            rf_random_case(in, &rng, &cs);
            const char *why = "";
            bad += mf_sparse_check(in, &cs, &why) != 0;
        }
        CHECK(bad == 0, "%s: %d of 2000 random cases not legal sparse cases", in->name, bad);
    }
}

/* The probes of a sparse row run on hardware too (mmafuzz probe, fit): every
 * case they hand to the device is a legal sparse case (mf_sparse_check: legal
 * metadata, +0 at the pruned positions of a), and the chunk probe, run over
 * the dense view of K/2 kept products, finds the row's L (the table's: 8 for
 * m16n8k16 f16, 4 for m16n8k8 tf32, as measured on an H100, docs/coverage.md). */
static const mf_instr *g_probe_row;
static int g_probe_bad, g_probe_cases;
static int probe_collect(void *ctx, const mf_case *cs, size_t n, uint64_t *out)
{
    for (size_t q = 0; q < n; q++) {
        const char *why = "";
        g_probe_bad += mf_sparse_check(g_probe_row, &cs[q], &why) != 0;
        g_probe_cases++;
    }
    return rf_run_row(ctx, cs, n, out);
}

static void test_sparse_probes_legal(void)
{
    const char *rows[] = {"hopper/mma.sp.m16n8k16.f32.f16.f16.f32", "hopper/mma.sp::ordered_metadata.m16n8k8.f32.tf32.tf32.f32"};
    for (int i = 0; i < 2; i++) {
        const mf_instr *in = mf_instr_find(rows[i]);
        CHECK(in && in->sparse, "%s missing", rows[i]);
        if (!in)
            continue;
        g_probe_row = in;
        g_probe_bad = g_probe_cases = 0;
        static rf_probe_run pr;
        rf_row r = rf_row_of(in);
        CHECK(rf_probe_all(in, probe_collect, &r, &pr) == 0, "%s: probes failed", in->name);
        CHECK(g_probe_cases > 100 && g_probe_bad == 0, "%s: %d of %d probe cases not legal sparse cases", in->name,
              g_probe_bad, g_probe_cases);
        /* the chunk probe over the view: L is the table's chunk length over kept products */
        const rf_probe_result *l = probe_result(&pr, "chunk length L");
        CHECK(l && l->status == RF_PROBE_OK && l->value == in->L, "%s: chunk length %s, the row's L is %d", in->name,
              l ? l->text : "?", in->L);
    }
}

int main(void)
{
    test_sparse_probes_legal();
    test_sparse_random_cases_legal();
    test_nearest_start();
    test_sparse_catalogue();
    test_classifier_is_the_key();
    test_papers_probes();
    test_bucket_is_the_row();
    test_directed_roundings();
    if (failures)
        fprintf(stderr, "%d failures\n", failures);
    else
        printf("ok\n");
    return failures ? 1 : 0;
}
