/*
 * test_refine.c - buckets and variants of the refinement library (refine.h)
 * on hand-derived cases.
 *
 * The rows (model/instr_table.def, DOMAIN section 4 and 4a): ampere's
 * mma.m16n8k16.f16.f16.f16.f16 keeps F = 24 alignment bits in chunks of
 * L = 8, hopper's F = 25 in chunks of L = 16; both round the sum with RNE
 * into binary16 and give +0 for a sum that rounds to zero.
 */
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

    /* a device output no variant gives: unexplained, keyed by its fingerprint */
    rf_bucket bu;
    rf_bucket_of(hop, &cat, &fcase, 0x3c00 /* 1.0 */, f_amp, &bu, NULL);
    CHECK(!bu.explained && strstr(bu.key, "|U:") && strstr(bu.words, "unexplained"), "unexplained: %s", bu.key);
}

int main(void)
{
    test_bucket_is_the_row();
    if (failures)
        fprintf(stderr, "%d failures\n", failures);
    else
        printf("ok\n");
    return failures ? 1 : 0;
}
