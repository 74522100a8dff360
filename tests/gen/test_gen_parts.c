/*
 * test_gen_parts.c - tile generation in independent parts (gen_run_part,
 * mmafuzz_gen.h), as the GPU runs it, and the generators' properties.
 *
 * Where expected values come from:
 *   - parts: gen_tile (the whole tile, one thread) is the reference; the
 *     parts, run in a shuffled order (phase 0 shuffled, then phase 1
 *     shuffled), must give exactly its bytes, write every byte of the tile
 *     and nothing outside it, and leave the tile stream unchanged, both
 *     part by part (gen_run_part) and from one plan per tile
 *     (gen_plan_tile, gen_run_part_planned, and gen_run_part_scratch with
 *     mutate's working case in a buffer of interleaved cases, as the GPU's
 *     shared memory holds it).  This is the promise the GPU relies on (same
 *     bits as the host);
 *   - cancel: the generator's definition (partners a' = -a with at most the
 *     two lowest fraction bits changed, b' = b with at most the lowest bit
 *     changed; in mode 1, c has the opposite sign of a0*b0 and its leading
 *     exponent), checked by decoding the values (mf_decode);
 *   - integer cancel / zero: arithmetic on the decoded integers, summed here
 *     (c + A.B in [-2, 2]; c = 0 or c = -(A.B) with A.B written out).
 *
 *   test_gen_parts            the checks
 *   test_gen_parts --bench    host generation speed: ns per element of
 *                             each generator (and the default mix) through
 *                             gen_tile, one core
 */
#include "mmafuzz_gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test_check.h"

/* One row of each format family: f64, tf32, f16, bf16, fp8, fp6/fp4 with
 * ue8m0 and ue4m3 scales, int8, int4, b1 (and and xor), AMD rows (fnuz fp8,
 * f64, xf32, bf16, 4x4 f16). */
static const char *const instrs[] = {
    "hopper/mma.m8n8k4.f64.f64.f64.f64",
    "hopper/mma.sp.m16n8k32.f16.f16.f16.f16",
    "hopper/mma.sp::ordered_metadata.m16n8k16.f32.tf32.tf32.f32",
    "hopper/mma.m16n8k8.f32.tf32.tf32.f32",
    "hopper/mma.m16n8k16.f32.f16.f16.f32",
    "turing/mma.m16n8k8.f16.f16.f16.f16",
    "hopper/wgmma.m64n8k16.f32.bf16.bf16",
    "hopper/wgmma.m64n8k32.f32.e4m3.e4m3",
    "rtx_blackwell/mma.block_scale.m16n8k32.block32.f32.e2m1.e3m2.f32.ue8m0",
    "rtx_blackwell/mma.block_scale.m16n8k64.block16.f32.e2m1.e2m1.f32.ue4m3",
    "blackwell/tcgen05.mma.block_scale.m128n8k32.block32.f32.e5m2.e4m3.ue8m0",
    "hopper/mma.m16n8k16.s32.s8.s8.s32",
    "hopper/mma.m8n8k32.s32.s4.s4.s32",
    "hopper/mma.m16n8k128.s32.b1.b1.s32.xor.popc",
    "hopper/mma.m16n8k128.s32.b1.b1.s32.and.popc",
    "cdna3/mfma.f32_16x16x32_bf8_fp8",
    "cdna3/mfma.f64_16x16x4_f64",
    "cdna3/mfma.f32_16x16x8_xf32",
    "cdna3/mfma.f32_32x32x4_2b_bf16",
    "cdna1/mfma.f32_4x4x4f16",
};
#define NINSTR (sizeof instrs / sizeof instrs[0])

#define NSLOT 3   /* tiles go to slot 1; slots 0 and 2 must stay untouched */

typedef struct bufs {
    unsigned char *p[5];   /* A, B, C, SA, SB */
    size_t len[5];         /* bytes of all NSLOT slots */
    size_t slot_len[5];    /* bytes of one slot */
} bufs;

static void bufs_alloc(bufs *b, const mf_instr *in, int m, int n, int k)
{
    size_t S = (size_t)in->n_scales;
    b->slot_len[0] = (size_t)m * k * mf_tile_elem_bytes(in->fa);
    b->slot_len[1] = (size_t)n * k * mf_tile_elem_bytes(in->fb);
    b->slot_len[2] = (size_t)m * n * mf_tile_elem_bytes(in->fc);
    /* SA: the scales, or a sparse row's metadata (n_meta bytes per row of A) */
    b->slot_len[3] = in->sparse ? (size_t)m * in->n_meta : (size_t)m * S * mf_tile_elem_bytes(in->fs);
    b->slot_len[4] = (size_t)n * S * mf_tile_elem_bytes(in->fs);
    for (int a = 0; a < 5; a++) {
        b->len[a] = NSLOT * b->slot_len[a];
        b->p[a] = malloc(b->len[a] ? b->len[a] : 1);
    }
}

static void bufs_fill(bufs *b, int byte)
{
    for (int a = 0; a < 5; a++)
        memset(b->p[a], byte, b->len[a]);
}

static void bufs_free(bufs *b)
{
    for (int a = 0; a < 5; a++)
        free(b->p[a]);
}

static void ctx_init(gen_ctx *c, const mf_instr *in, int m, int n, int k, uint64_t seed, bufs *b)
{
    memset(c, 0, sizeof *c);
    c->in = in;
    c->m = m;
    c->n = n;
    c->k = k;
    c->seed = seed;
    c->A = b->p[0];
    c->B = b->p[1];
    c->C = b->p[2];
    c->SA = in->n_scales || in->sparse ? b->p[3] : NULL;
    c->SB = in->n_scales ? b->p[4] : NULL;
}

/* A few saved cases for the mutation generator, written out here. */
static gen_saved_case saved[4];
static const gen_saved_case *view[4];

static void make_saved(const mf_instr *in)
{
    for (int s = 0; s < 4; s++) {
        saved[s].in = in;
        memset(&saved[s].cs, 0, sizeof saved[s].cs);
        saved[s].cs.c = (uint64_t)(s + 1) * 0x3c01 & rv_get(in->fc)->mask;
        for (int k = 0; k < in->k; k++) {
            saved[s].cs.a[k] = (uint64_t)(0x31 + 7 * k + s) & rv_get(in->fa)->mask;
            saved[s].cs.b[k] = (uint64_t)(0x29 + 3 * k + s) & rv_get(in->fb)->mask;
        }
        for (int q = 0; q < in->n_scales; q++)
            saved[s].cs.sa[q] = saved[s].cs.sb[q] = 127 + q;
        for (int q = 0; q < in->n_meta; q++)   /* sparse rows: legal metadata, pruned a = +0 */
            saved[s].cs.meta[q] = (uint8_t)(in->sp_group == 2 ? 0x4 + 0xA * ((q + s) & 1) : 0x8 + ((q + s) & 1));
        mf_sparse_canon(in, &saved[s].cs);
        view[s] = &saved[s];
    }
}

/* Shuffle perm[0..n) with the test's own stream. */
static void shuffle(int *perm, int n, gen_rng *r)
{
    for (int i = 0; i < n; i++)
        perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rng_below(r, (uint32_t)i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

/* Every element of every role gen_elem_roles gives for this tile, one at a
 * time (gen_part_stream, gen_part_elem, from the tile's plan), equals the
 * element gen_tile wrote into slot 1 of ref.  elems[role] counts them. */
static void check_elems(const gen_ctx *c, gen_kind kind, const gen_rng *tile_rng, uint64_t t, const bufs *ref,
                        long elems[3])
{
    const mf_instr *in = c->in;
    gen_prep pp;
    gen_plan plan;
    gen_prepare(c, &pp);
    memset(&plan, 0xC3, sizeof plan);
    plan.va = plan.vb = plan.vc = &pp.va;
    gen_plan_tile(c, &pp, kind, tile_rng, t, &plan);
    const unsigned roles = gen_elem_roles(c, &pp, kind);
    static const char *const what[3] = {"A row", "B column", "C row"};
    const mf_format fmt[3] = {in->fa, in->fb, in->fc};
    for (int role = 0; role < 3; role++) {
        if (!(roles >> role & 1))
            continue;
        const int rows = role == 1 ? c->n : c->m, len = role == 2 ? c->n : c->k;
        const size_t es = mf_tile_elem_bytes(fmt[role]);
        for (int i = 0; i < rows; i++) {
            const int phase = role == 2, part = role == 1 ? c->m + i : i;
            const gen_rng pr = gen_part_stream(c, tile_rng, phase, part);
            for (int q = len - 1; q >= 0; q--) {   /* backwards: no element leans on the one before */
                uint64_t got = gen_part_elem(c, &plan, kind, &pr, t, phase, part, q);
                uint64_t want = mf_elem_get(es, ref->p[role] + ref->slot_len[role], (size_t)i * len + q);
                if (got != want) {
                    CHECK(0, "%s, generator %s, tile %llu: %s %d element %d one at a time is %llx, gen_tile wrote %llx",
                          in->name, gen_table[kind].name, (unsigned long long)t, what[role], i, q,
                          (unsigned long long)got, (unsigned long long)want);
                    return;
                }
                elems[role]++;
            }
        }
    }
}

/* Tiles of instruction `in` (shape m x n x k) under each generator alone:
 * parts in a shuffled order == gen_tile, and the elements that can be
 * generated one at a time are gen_tile's too. */
static void check_parts(const mf_instr *in, int m, int n, int k, gen_rng *shuf, long *ntiles, long elems[3])
{
    bufs ref, par;
    bufs_alloc(&ref, in, m, n, k);
    bufs_alloc(&par, in, m, n, k);
    make_saved(in);
    int *perm = malloc(sizeof(int) * (size_t)(m + n));
    /* mutate's working cases, three interleaved (value q of case j at scratch[j + 3 q]) */
    const size_t scratch_len = 3 * (size_t)(2 * k + 1);
    uint64_t *scratch = malloc(sizeof(uint64_t) * scratch_len);
    for (int gk = 0; gk < GEN_COUNT; gk++) {
        for (uint64_t tile = 0; tile < 12; tile++) {
            gen_ctx cr, cp;
            ctx_init(&cr, in, m, n, k, 7 + tile / 4, &ref);
            ctx_init(&cp, in, m, n, k, 7 + tile / 4, &par);
            cr.mix.w[gk] = cp.mix.w[gk] = 1;
            cr.view = cp.view = view;
            cr.nview = cp.nview = gen_table[gk].needs_pool ? 4 : 0;
            uint64_t t = tile * 1000003u;
            bufs_fill(&ref, 0xA5);
            bufs_fill(&par, 0x5A);   /* a byte no part writes shows as a difference */
            gen_kind used = gen_tile(&cr, t, 1);
            CHECK(used == (gen_kind)gk, "%s: generator %s asked, %s used", in->name, gen_table[gk].name,
                  gen_name(used));
            gen_rng r;
            gen_kind kind = gen_pick(&cp, t, &r);
            const gen_rng r0 = r;
            /* parts that do not exist write nothing */
            gen_run_part(&cp, kind, &r, t, 1, 0, -1);
            gen_run_part(&cp, kind, &r, t, 1, 0, m + n);
            gen_run_part(&cp, kind, &r, t, 1, 1, m);
            gen_run_part(&cp, kind, &r, t, 1, 2, 0);
            CHECK(gen_part_count(&cp, 0) == m + n && gen_part_count(&cp, 1) == m && gen_part_count(&cp, 2) == 0,
                  "%s: part counts %d %d %d", in->name, gen_part_count(&cp, 0), gen_part_count(&cp, 1),
                  gen_part_count(&cp, 2));
            /* odd tiles: the plan worked out once (gen_plan_tile), as the GPU does, then the parts from it */
            const int planned = (int)(tile & 1);
            gen_prep pp;
            gen_plan plan;
            gen_prepare(&cp, &pp);
            memset(&plan, 0xC3, sizeof plan);   /* what the plan does not set must not matter */
            plan.va = plan.vb = plan.vc = &pp.va;
            if (planned)
                gen_plan_tile(&cp, &pp, kind, &r, t, &plan);
            for (int phase = 0; phase < 2; phase++) {
                int np = gen_part_count(&cp, phase);
                shuffle(perm, np, shuf);
                for (int q = 0; q < np; q++) {
                    if (planned && (tile & 2)) {
                        for (size_t i = 0; i < scratch_len; i++)   /* what a part leaves there must not matter */
                            scratch[i] = UINT64_C(0xC3C3C3C3C3C3C3C3) * (i + 1);
                        gen_run_part_scratch(&cp, &plan, kind, &r, t, 1, phase, perm[q], scratch + q % 3, 3);
                    } else if (planned) {
                        gen_run_part_planned(&cp, &plan, kind, &r, t, 1, phase, perm[q]);
                    } else {
                        gen_run_part(&cp, kind, &r, t, 1, phase, perm[q]);
                    }
                }
            }
            CHECK(r.s == r0.s, "%s %s: gen_run_part changed the tile stream", in->name, gen_table[gk].name);
            static const char *const what[5] = {"A", "B", "C", "SA", "SB"};
            for (int a = 0; a < 5; a++) {
                if ((a == 3 && !in->n_scales && !in->sparse) || (a == 4 && !in->n_scales))
                    continue;
                size_t sl = ref.slot_len[a];
                CHECK(!memcmp(ref.p[a] + sl, par.p[a] + sl, sl),
                      "%s (%dx%dx%d), generator %s, tile %llu: %s of the parts differs from gen_tile's", in->name, m,
                      n, k, gen_table[gk].name, (unsigned long long)t, what[a]);
                int outside = 0;
                for (size_t i = 0; i < sl; i++)
                    outside |= (par.p[a][i] != 0x5A) | (par.p[a][2 * sl + i] != 0x5A);
                CHECK(!outside, "%s, generator %s: the parts wrote %s outside their slot", in->name,
                      gen_table[gk].name, what[a]);
            }
            check_elems(&cp, kind, &r, t, &ref, elems);
            /* gen_run: the same bytes, again */
            bufs_fill(&par, 0x5A);
            gen_run(&cp, kind, &r, t, 1);
            for (int a = 0; a < 5; a++)
                if (a < 3 || in->n_scales || (a == 3 && in->sparse))
                    CHECK(!memcmp(ref.p[a] + ref.slot_len[a], par.p[a] + ref.slot_len[a], ref.slot_len[a]),
                          "%s, generator %s: gen_pick + gen_run differs from gen_tile", in->name, gen_table[gk].name);
            (*ntiles)++;
        }
    }
    free(perm);
    free(scratch);
    bufs_free(&ref);
    bufs_free(&par);
}

/* Leading exponent of a finite non-zero decoded value of format f. */
static int lead_exp(mf_format f, mf_value v)
{
    int b = 0;
    for (uint64_t s = v.sig; s; s >>= 1)
        b++;
    return v.exp - mf_format_get(f)->frac_bits + b - 1;
}

/* Cancel (float rows): partners in every row of A and column of B, the
 * same `first` for the whole tile; in mode 1 c = -(a0*b0) (nearly). */
static void check_cancel(const char *name, int *modes_seen)
{
    const mf_instr *in = mf_instr_find(name);
    CHECK(in != NULL, "no row %s", name);
    if (!in)
        return;
    bufs b;
    bufs_alloc(&b, in, in->m, in->n, in->k);
    const rv_layout *A = rv_get(in->fa), *B = rv_get(in->fb);
    const size_t ea = mf_tile_elem_bytes(in->fa), eb = mf_tile_elem_bytes(in->fb), ec = mf_tile_elem_bytes(in->fc);
    const uint64_t asign = UINT64_C(1) << (A->bits - 1), lowa = UINT64_C(1) << A->low, lowb = UINT64_C(1) << B->low;
    for (uint64_t tile = 0; tile < 40; tile++) {
        gen_ctx c;
        ctx_init(&c, in, in->m, in->n, in->k, 11, &b);
        c.mix.w[GEN_CANCEL] = 1;
        gen_tile(&c, tile, 0);
        int ok[2] = {1, 1};
        for (int first = 0; first < 2; first++) {
            for (int i = 0; i < in->m + in->n; i++) {
                int isa = i < in->m;
                for (int kk = first; kk + 1 < in->k; kk += 2) {
                    uint64_t x = isa ? mf_elem_get(ea, b.p[0], (size_t)i * in->k + kk)
                                     : mf_elem_get(eb, b.p[1], (size_t)(i - in->m) * in->k + kk);
                    uint64_t y = isa ? mf_elem_get(ea, b.p[0], (size_t)i * in->k + kk + 1)
                                     : mf_elem_get(eb, b.p[1], (size_t)(i - in->m) * in->k + kk + 1);
                    uint64_t dlt = isa ? x ^ y ^ asign : x ^ y;
                    if (isa ? !(dlt == 0 || dlt == lowa || dlt == 2 * lowa || dlt == 3 * lowa)
                            : !(dlt == 0 || dlt == lowb))
                        ok[first] = 0;
                }
            }
        }
        CHECK(ok[0] || ok[1], "%s cancel tile %llu: products are not in partner pairs", name,
              (unsigned long long)tile);
        if (ok[1] && !ok[0]) {
            modes_seen[1]++;
            /* mode 1: c cancels product 0 of its row and column */
            for (int i = 0; i < in->m; i++)
                for (int j = 0; j < in->n; j++) {
                    mf_value a0 = mf_decode(in->fa, mf_elem_get(ea, b.p[0], (size_t)i * in->k));
                    mf_value b0 = mf_decode(in->fb, mf_elem_get(eb, b.p[1], (size_t)j * in->k));
                    mf_value cv = mf_decode(in->fc, mf_elem_get(ec, b.p[2], (size_t)i * in->n + j));
                    if (a0.cls != MF_CLS_FINITE || b0.cls != MF_CLS_FINITE || cv.cls != MF_CLS_FINITE)
                        continue;
                    int pl = lead_exp(in->fa, a0) + lead_exp(in->fb, b0), cl = lead_exp(in->fc, cv);
                    CHECK(cv.sign != (a0.sign ^ b0.sign) && cl >= pl && cl <= pl + 1,
                          "%s cancel tile %llu (%d,%d): c (sign %d, exponent %d) does not cancel a0*b0 (sign %d, "
                          "exponent %d or %d)", name, (unsigned long long)tile, i, j, cv.sign, cl,
                          a0.sign ^ b0.sign, pl, pl + 1);
                }
        } else if (ok[0]) {
            modes_seen[0]++;
        }
    }
    bufs_free(&b);
}

/* Integer cancel and zero: c + A.B in [-2, 2], and c = 0 or c = -(A.B). */
static void check_int(const char *name)
{
    const mf_instr *in = mf_instr_find(name);
    CHECK(in != NULL, "no row %s", name);
    if (!in)
        return;
    bufs b;
    bufs_alloc(&b, in, in->m, in->n, in->k);
    const mf_format_info *fa = mf_format_get(in->fa);
    const size_t ea = mf_tile_elem_bytes(in->fa), eb = mf_tile_elem_bytes(in->fb), ec = mf_tile_elem_bytes(in->fc);
    long sums = 0, negated = 0, zeros = 0;
    for (int gk = 0; gk < 2; gk++) {
        gen_kind kind = gk ? GEN_ZERO : GEN_CANCEL;
        for (uint64_t tile = 0; tile < 20; tile++) {
            gen_ctx c;
            ctx_init(&c, in, in->m, in->n, in->k, 3, &b);
            c.mix.w[kind] = 1;
            gen_tile(&c, tile, 0);
            for (int i = 0; i < in->m; i++)
                for (int j = 0; j < in->n; j++) {
                    long long dot = 0;
                    for (int q = 0; q < in->k; q++) {
                        uint64_t x = mf_elem_get(ea, b.p[0], (size_t)i * in->k + q);
                        uint64_t y = mf_elem_get(eb, b.p[1], (size_t)j * in->k + q);
                        if (in->fa == MF_FMT_B1) {
                            uint32_t w = (uint32_t)((in->x & MF_INT_XOR) ? x ^ y : x & y);
                            for (; w; w &= w - 1)
                                dot++;
                        } else {   /* sign-extend fa->bits-wide two's complement (or unsigned) */
                            long long sx = (long long)(x & ((1ull << fa->bits) - 1)),
                                      sy = (long long)(y & ((1ull << fa->bits) - 1));
                            if (fa->has_sign && sx >> (fa->bits - 1))
                                sx -= 1ll << fa->bits;
                            if (fa->has_sign && sy >> (fa->bits - 1))
                                sy -= 1ll << fa->bits;
                            dot += sx * sy;
                        }
                    }
                    long long cv = (long long)(int32_t)(uint32_t)mf_elem_get(ec, b.p[2], (size_t)i * in->n + j);
                    if (kind == GEN_CANCEL) {
                        CHECK(cv + dot >= -2 && cv + dot <= 2, "%s cancel tile %llu (%d,%d): c %lld, A.B %lld", name,
                              (unsigned long long)tile, i, j, cv, dot);
                        sums++;
                    } else {
                        CHECK(cv == 0 || cv == -dot, "%s zero tile %llu (%d,%d): c %lld, A.B %lld", name,
                              (unsigned long long)tile, i, j, cv, dot);
                        negated += cv != 0;
                        zeros += cv == 0;
                    }
                }
        }
    }
    CHECK(sums > 0 && negated > 0 && zeros > 0, "%s: %ld cancel sums, %ld c = -(A.B), %ld c = 0", name, sums, negated,
          zeros);
    bufs_free(&b);
}

static double now_s(void)
{
    struct timespec t;
    timespec_get(&t, TIME_UTC);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ns per generated element of each generator alone and of the default mix
 * (gen_tile, tiles into 64 slots, best of 5). */
static void bench(void)
{
    const char *names[] = {"hopper/mma.m16n8k16.f32.f16.f16.f32", "hopper/wgmma.m64n8k32.f32.e4m3.e4m3",
                           "blackwell/tcgen05.mma.block_scale.m128n8k32.block32.f32.e5m2.e4m3.ue8m0",
                           "hopper/mma.m16n8k16.s32.s8.s8.s32", "hopper/mma.m16n8k32.f32.e4m3.e4m3.f32",
                           "hopper/mma.m16n8k32.f16.e4m3.e4m3.f16"};
    for (size_t ii = 0; ii < sizeof names / sizeof names[0]; ii++) {
        const mf_instr *in = mf_instr_find(names[ii]);
        if (!in)
            continue;
        const size_t T = 64;
        void *A = calloc(T * in->m * in->k, 8), *B = calloc(T * in->n * in->k, 8), *C = calloc(T * in->m * in->n, 8);
        void *SA = calloc(T * in->m * MF_SMAX, 8), *SB = calloc(T * in->n * MF_SMAX, 8);
        const double elems = (double)in->m * in->k + (double)in->n * in->k + (double)in->m * in->n;
        printf("%s\n", in->name);
        for (int gk = 0; gk <= GEN_COUNT; gk++) {
            if (gk < GEN_COUNT && gen_table[gk].needs_pool)
                continue;
            gen_ctx c;
            memset(&c, 0, sizeof c);
            c.in = in;
            c.m = in->m;
            c.n = in->n;
            c.k = in->k;
            c.seed = 1;
            if (gk < GEN_COUNT)
                c.mix.w[gk] = 1;
            else
                gen_mix_default(&c.mix);
            c.A = A, c.B = B, c.C = C, c.SA = SA, c.SB = SB;
            double best = 1e9;
            const size_t ntile = 2048;
            for (int rep = 0; rep < 5; rep++) {
                double t0 = now_s();
                for (size_t t = 0; t < ntile; t++)
                    gen_tile(&c, t, t % T);
                double dt = now_s() - t0;
                best = dt < best ? dt : best;
            }
            printf("  %-9s %6.2f ns/element\n", gk < GEN_COUNT ? gen_table[gk].name : "(mix)",
                   best * 1e9 / ((double)ntile * elems));
        }
        free(A), free(B), free(C), free(SA), free(SB);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--bench")) {
        bench();
        return 0;
    }
    gen_rng shuf = rng_derive(0x5eed, 1, 2);
    long ntiles = 0, elems[3] = {0, 0, 0};
    for (size_t i = 0; i < NINSTR; i++) {
        const mf_instr *in = mf_instr_find(instrs[i]);
        CHECK(in != NULL, "no row %s", instrs[i]);
        if (!in)
            continue;
        long e3[3] = {0, 0, 0};
        check_parts(in, in->m, in->n, in->k, &shuf, &ntiles, e3);
        /* the rows the GPU check generates element by element: each role has elements one at a time */
        if (!in->sparse && !in->n_scales && !mf_format_is_int(in->fa))
            CHECK(e3[0] > 0 && e3[1] > 0 && e3[2] > 0, "%s: elements one at a time: A %ld, B %ld, C %ld", in->name,
                  e3[0], e3[1], e3[2]);
        for (int q = 0; q < 3; q++)
            elems[q] += e3[q];
    }
    /* a shape with N > M (mutate's cases beyond the diagonal go to B columns) */
    const mf_instr *f16 = mf_instr_find("hopper/mma.m16n8k16.f32.f16.f16.f32");
    if (f16)
        check_parts(f16, 4, 8, f16->k, &shuf, &ntiles, elems);
    int modes[2] = {0, 0};
    check_cancel("hopper/mma.m16n8k16.f32.f16.f16.f32", modes);
    check_cancel("hopper/wgmma.m64n8k32.f32.e4m3.e4m3", modes);
    check_cancel("cdna3/mfma.f32_32x32x4_2b_bf16", modes);
    CHECK(modes[0] > 0 && modes[1] > 0, "cancel modes seen: %d pairs only, %d with c", modes[0], modes[1]);
    check_int("hopper/mma.m16n8k16.s32.s8.s8.s32");
    check_int("hopper/mma.m8n8k32.s32.s4.s4.s32");
    check_int("hopper/mma.m16n8k128.s32.b1.b1.s32.xor.popc");
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("gen parts: %ld tiles of %d generators over %d instructions equal to gen_tile part by part; elements one "
           "at a time equal to gen_tile's: %ld of A, %ld of B, %ld of C; cancel (%d + %d tiles) and integer "
           "properties ok\n", ntiles, (int)GEN_COUNT, (int)NINSTR + 1, elems[0], elems[1], elems[2], modes[0],
           modes[1]);
    return 0;
}
