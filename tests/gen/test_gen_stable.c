/*
 * test_gen_stable.c - the case-generation library (gen/): its tables, the
 * promise that (seed, index) gives the same case, and what the generators
 * must produce.
 *
 * Where expected values come from:
 *   - table checks: the rules of generators.def / mutators.def (unique names,
 *     a help line, --mix parses what it formats);
 *   - the zero generator: arithmetic (x + (-x) = 0 exactly, so paired
 *     products cancel and the model's d is a zero whenever c is);
 *   - PINNED HASHES: these were recorded from the implementation of
 *     generator-table version MF_GEN_VERSION = 2.  They are NOT a check of
 *     correctness, only of stability: "(seed, index) gives the same case"
 *     holds within one version.  Changing a generator, a mutator, a weight,
 *     the PRNG or the order of draws changes them: then bump MF_GEN_VERSION
 *     in gen/mmafuzz_gen.h and record the new values in tests/gen/pinned.inc
 *     (test_gen_stable --print writes them).
 */
#include "mmafuzz_gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_check.h"


static const char *const instrs[] = {
    "hopper/mma.m16n8k16.f32.f16.f16.f32",
    "blackwell/tcgen05.mma.block_scale.m128n8k32.block32.f32.e5m2.e4m3.ue8m0",
    "cdna3/mfma.f32_16x16x32_bf8_fp8",
    /* ue4m3 scales: two draws per scale, whose order once depended on the
     * compiler (GCC's order is the pinned one; clang and nvcc differed) */
    "rtx_blackwell/mma.block_scale.m16n8k64.block16.f32.e2m1.e2m1.f32.ue4m3",
};
#define NINSTR (sizeof instrs / sizeof instrs[0])
static const uint64_t seeds[] = {1, UINT64_C(0x9e3779b97f4a7c15)};
#define NSEED 2
static const uint64_t indices[] = {0, 77, 1000003};
#define NINDEX 3

/* FNV-1a over the case's values (c, a, b, sa, sb), 8 little-endian bytes each. */
static uint64_t case_hash(const mf_instr *in, const mf_case *cs)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    uint64_t v[1 + 2 * MF_KMAX + 2 * MF_SMAX];
    int n = 0;
    v[n++] = cs->c;
    for (int k = 0; k < in->k; k++)
        v[n++] = cs->a[k];
    for (int k = 0; k < in->k; k++)
        v[n++] = cs->b[k];
    for (int s = 0; s < in->n_scales; s++) {
        v[n++] = cs->sa[s];
        v[n++] = cs->sb[s];
    }
    for (int i = 0; i < n; i++)
        for (int b = 0; b < 8; b++)
            h = (h ^ ((v[i] >> (8 * b)) & 0xFF)) * UINT64_C(0x100000001b3);
    return h;
}

/* Buffers for one tile of the largest instruction used here. */
typedef struct tilebuf {
    void *A, *B, *C, *SA, *SB;
} tilebuf;

static void tile_alloc(tilebuf *t)
{
    t->A = calloc(1, 128 * 64 * 8);
    t->B = calloc(1, 128 * 64 * 8);
    t->C = calloc(1, 128 * 128 * 8);
    t->SA = calloc(1, 128 * MF_SMAX * 8);
    t->SB = calloc(1, 128 * MF_SMAX * 8);
}

/* Case (i, j) of tile slot 0 (the tile layout of mmafuzz_model.h). */
static void tile_case(const mf_instr *in, const tilebuf *t, int i, int j, mf_case *cs)
{
    int m = in->m, n = in->n, k = in->k, S = in->n_scales;
    size_t ea = mf_tile_elem_bytes(in->fa), eb = mf_tile_elem_bytes(in->fb), ec = mf_tile_elem_bytes(in->fc),
           es = mf_tile_elem_bytes(in->fs);
    memset(cs, 0, sizeof *cs);
    cs->c = mf_elem_get(ec, t->C, (size_t)i * n + j);
    for (int kk = 0; kk < k; kk++) {
        cs->a[kk] = mf_elem_get(ea, t->A, (size_t)i * k + kk);
        cs->b[kk] = mf_elem_get(eb, t->B, (size_t)j * k + kk);
    }
    for (int s = 0; s < S; s++) {
        cs->sa[s] = mf_elem_get(es, t->SA, (size_t)i * S + s);
        cs->sb[s] = mf_elem_get(es, t->SB, (size_t)j * S + s);
    }
    (void)m;
}

/* A few saved cases for the mutation generator, written out here. */
static gen_saved_case saved[3];
static const gen_saved_case *view[3];

static void make_saved(const mf_instr *in)
{
    for (int s = 0; s < 3; s++) {
        saved[s].in = in;
        memset(&saved[s].cs, 0, sizeof saved[s].cs);
        saved[s].cs.c = (uint64_t)(s + 1) & rv_get(in->fc)->mask;
        for (int k = 0; k < in->k; k++) {
            saved[s].cs.a[k] = (uint64_t)(0x31 + 7 * k + s) & rv_get(in->fa)->mask;
            saved[s].cs.b[k] = (uint64_t)(0x29 + 3 * k + s) & rv_get(in->fb)->mask;
        }
        for (int q = 0; q < in->n_scales; q++)
            saved[s].cs.sa[q] = saved[s].cs.sb[q] = 127;
        view[s] = &saved[s];
    }
}

/* The context of generator g alone on instruction `in`, the saved cases of
 * view[] as its pool, tile slot 0 in t. */
static gen_ctx one_generator(const mf_instr *in, gen_kind g, uint64_t seed, tilebuf *t)
{
    gen_ctx c;
    memset(&c, 0, sizeof c);
    c.in = in;
    c.m = in->m;
    c.n = in->n;
    c.k = in->k;
    c.seed = seed;
    c.mix.w[g] = 1;
    c.view = view;
    c.nview = gen_table[g].needs_pool ? 3 : 0;
    c.A = t->A;
    c.B = t->B;
    c.C = t->C;
    c.SA = t->SA;
    c.SB = t->SB;
    return c;
}

/* The case at (seed, index) of instruction `in` when the mix is generator g
 * alone: its hash. */
static uint64_t case_at(const mf_instr *in, gen_kind g, uint64_t seed, uint64_t index, tilebuf *t)
{
    make_saved(in);
    gen_ctx c = one_generator(in, g, seed, t);
    uint64_t per = (uint64_t)in->m * in->n, tile = index / per;
    gen_kind used = gen_tile(&c, tile, 0);
    CHECK(used == g, "%s: generator %s asked, %s used", in->name, gen_table[g].name, gen_name(used));
    mf_case cs;
    tile_case(in, t, (int)(index % per / in->n), (int)(index % in->n), &cs);
    return case_hash(in, &cs);
}

/* Sparse rows: every tile of every generator is a legal sparse case (each
 * metadata nibble legal for the row, every pruned position of A +0: the rules
 * of the PTX ISA's sparse storage, mf_sparse_check), also when the mutation
 * pool holds a dense row's cases (no metadata, no zeros), which is what a
 * run's shared pool gives a sparse row. */
static void test_sparse_tiles_legal(tilebuf *t)
{
    static const char *const rows[] = {"hopper/mma.sp.m16n8k16.f32.f16.f16.f32",
                                       "hopper/mma.sp::ordered_metadata.m16n8k32.f16.f16.f16.f16",
                                       "hopper/mma.sp.m16n8k8.f32.tf32.tf32.f32",
                                       "hopper/mma.sp.m16n8k32.satfinite.s32.u8.s8.s32",
                                       "hopper/mma.sp::ordered_metadata.m16n8k64.s32.s8.s8.s32",
                                       "hopper/mma.sp.m16n8k64.s32.s4.u4.s32",
                                       "hopper/mma.sp::ordered_metadata.m16n8k128.satfinite.s32.u4.u4.s32",
                                       "hopper/mma.sp.m16n8k64.f32.e5m2.e4m3.f32"};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        const mf_instr *in = mf_instr_find(rows[r]);
        /* the pool: a dense row of the same kind of values (integer rows: an integer row's) */
        const mf_instr *dense = mf_instr_find(in && mf_format_is_int(in->fa) ? "hopper/mma.m16n8k32.s32.s8.s8.s32"
                                              : in && in->fa == MF_FMT_E5M2 ? "hopper/mma.m16n8k32.f32.e5m2.e4m3.f32"
                                                                             : "hopper/mma.m16n8k16.f32.f16.f16.f32");
        CHECK(dense != NULL, "dense row missing");
        if (!dense)
            continue;
        CHECK(in && in->sparse, "%s: no sparse row", rows[r]);
        if (!in || !in->sparse)
            continue;
        make_saved(dense);   /* a dense row's cases: metadata 0 (illegal), a non-zero everywhere */
        long bad = 0;
        for (int g = 0; g < GEN_COUNT; g++) {
            gen_ctx c = one_generator(in, (gen_kind)g, 7, t);
            for (uint64_t tile = 0; tile < 64; tile++) {
                gen_tile(&c, tile, 0);
                for (int i = 0; i < in->m; i++) {
                    mf_case cs;
                    memset(&cs, 0, sizeof cs);
                    for (int kk = 0; kk < in->k; kk++)
                        cs.a[kk] = mf_elem_get(mf_tile_elem_bytes(in->fa), t->A, (size_t)i * in->k + kk);
                    for (int q = 0; q < in->n_meta; q++)
                        cs.meta[q] = ((const uint8_t *)t->SA)[(size_t)i * in->n_meta + q];
                    const char *why = "";
                    if (mf_sparse_check(in, &cs, &why) && bad++ < 3)
                        CHECK(0, "%s, generator %s, tile %llu, row %d: %s", in->name, gen_table[g].name,
                              (unsigned long long)tile, i, why);
                }
            }
        }
        CHECK(bad == 0, "%s: %ld rows of A not legal sparse rows", in->name, bad);
    }
}

/* Pinned: hash of case (seeds[s], indices[x]) of instrs[i] under generator g
 * alone, at [g][i][s][x].  Version-stability values (see the top comment). */
#include "pinned.inc"   /* pinned_default_mix, pinned[GEN_COUNT][NINSTR][NSEED][NINDEX] */

/* The generators the default mix picks for tiles 0..199 (seed 1, a pool of
 * three cases), as a hash: the weights and the draw that picks. */
static uint64_t default_mix_hash(tilebuf *t)
{
    const mf_instr *in = mf_instr_find(instrs[0]);
    gen_ctx c;
    memset(&c, 0, sizeof c);
    c.in = in;
    c.m = in->m;
    c.n = in->n;
    c.k = in->k;
    c.seed = 1;
    gen_mix_default(&c.mix);
    make_saved(in);
    c.view = view;
    c.nview = 3;
    c.A = t->A;
    c.B = t->B;
    c.C = t->C;
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (uint64_t tile = 0; tile < 200; tile++)
        h = (h ^ (uint64_t)gen_tile(&c, tile, 0)) * UINT64_C(0x100000001b3);
    return h;
}

static void test_pinned(int print)
{
    tilebuf t;
    tile_alloc(&t);
    uint64_t mh = default_mix_hash(&t);
    if (print)
        printf("/* Written by `test_gen_stable --print` for generator-table version %d: a\n"
               " * stability check, not a correctness check (see test_gen_stable.c). */\n"
               "static const uint64_t pinned_default_mix = UINT64_C(0x%016llx);\n", MF_GEN_VERSION,
               (unsigned long long)mh);
    else
        CHECK(mh == pinned_default_mix, "the default mix picks other generators (hash %016llx, pinned %016llx for "
              "generator version %d): bump MF_GEN_VERSION and re-pin", (unsigned long long)mh,
              (unsigned long long)pinned_default_mix, MF_GEN_VERSION);
    if (print)
        printf("/* [generator][instruction][seed][index] */\n"
               "static const uint64_t pinned[GEN_COUNT][NINSTR][NSEED][NINDEX] = {\n");
    for (int g = 0; g < GEN_COUNT; g++) {
        if (print)
            printf("{ /* %s */\n", gen_table[g].name);
        for (size_t i = 0; i < NINSTR; i++) {
            const mf_instr *in = mf_instr_find(instrs[i]);
            CHECK(in != NULL, "no row %s", instrs[i]);
            if (!in)
                continue;
            if (print)
                printf("  {");
            for (int s = 0; s < NSEED; s++) {
                if (print)
                    printf("{");
                for (int x = 0; x < NINDEX; x++) {
                    uint64_t h = case_at(in, (gen_kind)g, seeds[s], indices[x], &t);
                    /* the same (seed, index) twice: the same case */
                    CHECK(case_at(in, (gen_kind)g, seeds[s], indices[x], &t) == h, "not reproducible");
                    if (print)
                        printf("UINT64_C(0x%016llx)%s", (unsigned long long)h, x + 1 < NINDEX ? ", " : "");
                    else
                        CHECK(h == pinned[g][i][s][x],
                              "generator %s, %s, seed %llu, index %llu: case hash %016llx, pinned %016llx for "
                              "generator version %d (changed a generator? bump MF_GEN_VERSION and re-pin)",
                              gen_table[g].name, in->name, (unsigned long long)seeds[s],
                              (unsigned long long)indices[x], (unsigned long long)h,
                              (unsigned long long)pinned[g][i][s][x], MF_GEN_VERSION);
                }
                if (print)
                    printf("}%s", s + 1 < NSEED ? ", " : "");
            }
            if (print)
                printf("},\n");
        }
        if (print)
            printf("},\n");
    }
    if (print)
        printf("};\n");
    free(t.A);
    free(t.B);
    free(t.C);
    free(t.SA);
    free(t.SB);
}

/* The tables: unique names, help lines, --mix round trip, the error names them all. */
static void test_tables(void)
{
    for (int g = 0; g < GEN_COUNT; g++) {
        CHECK(gen_table[g].name && gen_table[g].name[0], "generator %d has no name", g);
        CHECK(gen_table[g].help && gen_table[g].help[0], "generator %s has no help", gen_table[g].name);
        for (int h = 0; h < g; h++)
            CHECK(strcmp(gen_table[g].name, gen_table[h].name), "two generators named %s", gen_table[g].name);
    }
    for (int m = 0; m < MUT_COUNT; m++) {
        CHECK(mut_table[m].weight > 0, "mutator %s never runs", mut_table[m].name);
        for (int h = 0; h < m; h++)
            CHECK(strcmp(mut_table[m].name, mut_table[h].name), "two mutators named %s", mut_table[m].name);
    }
    gen_mix d, p;
    char buf[256], err[400];
    gen_mix_default(&d);
    gen_mix_format(&d, buf, sizeof buf);
    CHECK(gen_mix_parse(buf, &p, err, sizeof err) == 0 && !memcmp(&d, &p, sizeof d), "--mix '%s' does not round-trip",
          buf);
    CHECK(gen_mix_parse("nosuch", &p, err, sizeof err) == -1, "unknown generator accepted");
    for (int g = 0; g < GEN_COUNT; g++)
        CHECK(strstr(err, gen_table[g].name), "--mix error does not name %s: %s", gen_table[g].name, err);
}

/* The zero generator: paired products cancel exactly, so d is a zero
 * wherever c is a zero; at least half the outputs are zeros. */
static void test_zero(void)
{
    const mf_instr *in = mf_instr_find("hopper/mma.m16n8k16.f32.f16.f16.f32");
    tilebuf t;
    tile_alloc(&t);
    gen_ctx c;
    memset(&c, 0, sizeof c);
    c.in = in;
    c.m = in->m;
    c.n = in->n;
    c.k = in->k;
    c.seed = 5;
    c.mix.w[GEN_ZERO] = 1;
    c.A = t.A;
    c.B = t.B;
    c.C = t.C;
    int zeros = 0, total = 0, negzero_c = 0;
    for (uint64_t tile = 0; tile < 50; tile++) {
        gen_tile(&c, tile, 0);
        for (int i = 0; i < in->m; i++)
            for (int j = 0; j < in->n; j++) {
                mf_case cs;
                tile_case(in, &t, i, j, &cs);
                for (int k = 0; k + 1 < in->k; k += 2)
                    CHECK(cs.a[k + 1] == (cs.a[k] ^ 0x8000) && cs.b[k + 1] == cs.b[k],
                          "tile %llu (%d,%d): products %d and %d do not cancel", (unsigned long long)tile, i, j, k,
                          k + 1);
                mf_value vc = mf_decode(in->fc, cs.c);
                if (vc.cls == MF_CLS_ZERO) {
                    negzero_c += vc.sign;
                    uint64_t d = mf_eval(in, &cs);
                    CHECK(mf_decode(in->fd, d).cls == MF_CLS_ZERO, "c = 0 and cancelling products, d = %llx",
                          (unsigned long long)d);
                    zeros++;
                }
                total++;
            }
    }
    CHECK(2 * zeros >= total, "only %d of %d outputs with c = 0", zeros, total);
    CHECK(negzero_c > 0, "no c = -0");
    free(t.A);
    free(t.B);
    free(t.C);
    free(t.SA);
    free(t.SB);
}

/* Every mutator runs, and a mutated case stays within its formats' bits. */
static void test_mutators(void)
{
    const mf_instr *in = mf_instr_find("blackwell/tcgen05.mma.block_scale.m128n8k32.block32.f32.e5m2.e4m3.ue8m0");
    make_saved(in);
    gen_rng r = rng_derive(3, 4, 5);
    int seen[MUT_COUNT] = {0};
    for (int i = 0; i < 2000; i++) {
        mf_case cs = saved[i % 3].cs;
        seen[gen_mutate_once(in, &r, &cs, &saved[(i + 1) % 3].cs)]++;
        int ok = !(cs.c & ~rv_get(in->fc)->mask);
        for (int k = 0; k < in->k; k++)
            ok &= !(cs.a[k] & ~rv_get(in->fa)->mask) && !(cs.b[k] & ~rv_get(in->fb)->mask);
        for (int q = 0; q < in->n_scales; q++)
            ok &= !(cs.sa[q] & ~rv_get(in->fs)->mask) && !(cs.sb[q] & ~rv_get(in->fs)->mask);
        CHECK(ok, "mutation %d left bits outside the formats", i);
    }
    for (int m = 0; m < MUT_COUNT; m++)
        if (m == MUT_meta)   /* sparse rows only (mutators.def): never on a dense row */
            CHECK(seen[m] == 0, "mutator meta ran %d times on a dense row", seen[m]);
        else
            CHECK(seen[m] > 0, "mutator %s never ran in 2000 draws", mut_table[m].name);
}

/* Sparse rows (mma.sp): every mutator runs, meta included, and a mutated case
 * stays canonical (legal metadata, +0 at every pruned position:
 * mf_sparse_check, the PTX ISA's rules).  Generated tiles: every row's
 * metadata legal, pruned positions +0, and each legal nibble drawn about
 * equally often (12 for mma.sp 2:4, both index orders; 6 ordered; 2 tf32;
 * s4/u4 the same nibbles, naming pairs; fp8 the 6 increasing ones for .sp
 * too), each of the 6 kept sets too. */
static void test_sparse(void)
{
    static const char *const names[] = {"hopper/mma.sp.m16n8k32.f32.f16.f16.f32",
                                        "hopper/mma.sp::ordered_metadata.m16n8k16.f16.f16.f16.f16",
                                        "hopper/mma.sp.m16n8k16.f32.tf32.tf32.f32",
                                        "hopper/mma.sp.m16n8k64.s32.u8.u8.s32",
                                        "hopper/mma.sp::ordered_metadata.m16n8k32.satfinite.s32.s8.u8.s32",
                                        "hopper/mma.sp.m16n8k128.satfinite.s32.s4.s4.s32",
                                        "hopper/mma.sp::ordered_metadata.m16n8k64.s32.u4.s4.s32",
                                        "hopper/mma.sp.m16n8k64.f32.e4m3.e5m2.f32"};   /* fp8: increasing only */
    static const int nlegal[] = {12, 6, 2, 12, 6, 12, 6, 6};
    for (int x = 0; x < (int)(sizeof names / sizeof names[0]); x++) {
        const mf_instr *in = mf_instr_find(names[x]);
        CHECK(in && in->sparse, "%s: no sparse row", names[x]);
        if (!in)
            continue;
        make_saved(in);
        for (int s = 0; s < 3; s++) {
            for (int q = 0; q < in->n_meta; q++)
                saved[s].cs.meta[q] = (uint8_t)(in->sp_group == 2 ? 0x4 : 0xE);   /* (2, 3) */
            mf_sparse_canon(in, &saved[s].cs);
        }
        gen_rng r = rng_derive(3, 4, 5);
        int seen[MUT_COUNT] = {0};
        for (int i = 0; i < 4000; i++) {
            mf_case cs = saved[i % 3].cs;
            seen[gen_mutate_once(in, &r, &cs, &saved[(i + 1) % 3].cs)]++;
            const char *why = "";
            CHECK(mf_sparse_check(in, &cs, &why) == 0, "%s: mutation %d: %s", in->name, i, why);
        }
        for (int m = 0; m < MUT_COUNT; m++)
            CHECK(seen[m] > 0, "%s: mutator %s never ran in 4000 draws", in->name, mut_table[m].name);
        /* tiles */
        tilebuf t;
        tile_alloc(&t);
        int count[16] = {0}, total = 0;
        for (uint64_t tile = 0; tile < 400; tile++) {
            gen_fill_tiles(in, in->m, in->n, in->k, 11, tile, 1, t.A, t.B, t.C, t.SA, NULL);
            for (int i = 0; i < in->m; i++) {
                mf_case cs;
                memset(&cs, 0, sizeof cs);
                for (int q = 0; q < in->n_meta; q++) {
                    cs.meta[q] = ((const uint8_t *)t.SA)[i * in->n_meta + q];
                    count[cs.meta[q] & 15]++;
                    total++;
                }
                for (int q = 0; q < in->k; q++)
                    cs.a[q] = mf_elem_get(mf_tile_elem_bytes(in->fa), t.A, (size_t)i * in->k + (size_t)q);
                const char *why = "";
                CHECK(mf_sparse_check(in, &cs, &why) == 0, "%s: tile %d row %d: %s", in->name, (int)tile, i, why);
            }
        }
        int legal = 0;
        for (int v = 0; v < 16; v++) {
            if (!count[v])
                continue;
            legal++;
            /* each of n equally likely: total/n expected, within 10% (n <= 12, total >= 51,200) */
            CHECK(count[v] * 10 * nlegal[x] > total * 9 && count[v] * 10 * nlegal[x] < total * 11,
                  "%s: nibble %x drawn %d times of %d", in->name, v, count[v], total);
        }
        CHECK(legal == nlegal[x], "%s: %d different nibbles drawn, expected %d", in->name, legal, nlegal[x]);
        /* each kept set of a group (the 6 patterns of 2 of 4 positions, or pairs
         * for s4/u4) equally often: mma.sp's two index orders add up */
        int pat[16] = {0};
        for (int v = 0; v < 16; v++)
            pat[(1 << (v & 3)) | (1 << (v >> 2))] += count[v];
        for (int p = 0; p < 16 && in->sp_group != 2; p++)
            if (pat[p])
                CHECK(pat[p] * 10 * 6 > total * 9 && pat[p] * 10 * 6 < total * 11, "%s: kept set %x drawn %d times of %d",
                      in->name, p, pat[p], total);
        free(t.A);
        free(t.B);
        free(t.C);
        free(t.SA);
        free(t.SB);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--print")) {
        test_pinned(1);
        return 0;
    }
    test_tables();
    test_zero();
    test_mutators();
    test_sparse();
    {
        tilebuf t;
        tile_alloc(&t);
        test_sparse_tiles_legal(&t);
        free(t.A), free(t.B), free(t.C), free(t.SA), free(t.SB);
    }
    test_pinned(0);
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("gen: tables, zero generator, mutators and %d pinned cases (generator version %d) ok\n",
           (int)(GEN_COUNT * NINSTR * NSEED * NINDEX), MF_GEN_VERSION);
    return 0;
}
