/*
 * test_device_model.cpp - the device-code model and generator library
 * (devices/cuda/model_device.cuh: the same C sources in their device
 * configuration, MF_DEVICE_BUILD, namespace mfd) compiled by the host C++
 * compiler and checked against the host library, bit for bit:
 *
 *   decode   mfd::mf_decode against ::mf_decode, every pattern of every
 *            format of 16 bits or fewer (the device has no decode tables),
 *            and fp8 -> f16 (F16-emu) for every byte;
 *   eval     mfd::mf_eval against ::mf_eval_trace(in, cs, NULL) (the host's
 *            general path) and ::mf_eval (with its fast paths), and the
 *            fixed-shape entry mfd::mf_t_fdpa_fixed of the GPU's check on
 *            the T-FDPA rows with a fast plan (mfd::mf_eval itself takes
 *            mf_f16_emu_fixed and mf_fma_chain_fixed), and on the sparse
 *            floating-point rows mfd::mf_sparse_fixed as model_bench's
 *            fixed-shape kernel calls it (operands gathered by selects; fp8
 *            also through mf_prod_pack entries), on every row
 *            of the instruction table, on cases from the generator library
 *            (default mix: every generator but mutation); and
 *            mfd::mf_output_equal against ::mf_output_equal;
 *   forms    the same on modified copies of every row that set wgmma's
 *            operand forms (neg_a, neg_b, no_c, no_c with no_c_neg_zero),
 *            -forms N cases each (default 500): the paths of eval.c and
 *            family_tfdpa.c / family_int.c that no table row takes;
 *   gen      mfd::gen_tile against ::gen_tile: every generator alone
 *            (mutation with a small pool of saved cases) on every row, the
 *            generator returned and every byte of A, B, C, SA, SB.
 *
 * The expected values are the host library's: it is checked against
 * recorded and hand-derived vectors by the other model tests; this test says
 * only that the device configuration computes the same thing.
 *
 * Cases per row: -cases N (default 100000) for the rows of one
 * architecture per family (hopper where it has the family, else the first
 * architecture in table order that has it), -rest N
 * (default 2000) for the other rows; -all gives every row -cases.
 * Cases per form and row: -forms N (default 500).  Tiles per generator and
 * row: -tiles N (default 8).  -seed S.
 */
#include "model_device.cuh"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <vector>

/* The host library's fp8 -> f16 table lookup (model/internal.h, C linkage). */
extern "C" uint16_t mf_fp8_f16(mf_format f, uint64_t x);

static_assert(sizeof(mfd::mf_instr) == sizeof(::mf_instr), "mf_instr: same layout on both sides");
static_assert(sizeof(mfd::mf_case) == sizeof(::mf_case), "mf_case: same layout on both sides");
static_assert(sizeof(mfd::gen_ctx) == sizeof(::gen_ctx), "gen_ctx: same layout on both sides");
static_assert(sizeof(mfd::gen_saved_case) == sizeof(::gen_saved_case), "gen_saved_case: same layout");
static_assert((int)mfd::GEN_COUNT == (int)::GEN_COUNT, "one generator table");

static int failures;

#define FAIL(...)                                                                                            \
    do {                                                                                                     \
        if (failures++ < 20) {                                                                               \
            printf("FAIL: ");                                                                                \
            printf(__VA_ARGS__);                                                                             \
            printf("\n");                                                                                    \
        }                                                                                                    \
    } while (0)

static mfd::mf_instr to_dev(const ::mf_instr *in)
{
    mfd::mf_instr d;
    memcpy(&d, in, sizeof d);
    return d;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---------------------------------------------------------------- decode */

static void check_decode(void)
{
    long n = 0;
    for (int f = 1; f < MF_FMT_COUNT; f++) {
        const int bits = mf_format_get((mf_format)f)->bits;
        if (bits > 16)
            continue;
        for (uint64_t x = 0; x < (UINT64_C(1) << bits); x++, n++) {
            ::mf_value h = ::mf_decode((mf_format)f, x);
            mfd::mf_value d = mfd::mf_decode((mfd::mf_format)f, x);
            if (h.sig != d.sig || h.exp != d.exp || h.sign != d.sign || h.cls != d.cls)
                FAIL("decode %s 0x%" PRIx64 ": host sig %" PRIx64 " exp %d, device sig %" PRIx64 " exp %d",
                     mf_format_get((mf_format)f)->name, x, h.sig, h.exp, d.sig, d.exp);
        }
    }
    /* fp8 -> f16 (F16-emu): the device works it out from the fields */
    const mf_format f8[2] = {MF_FMT_E4M3, MF_FMT_E5M2};
    for (int i = 0; i < 2; i++)
        for (uint64_t x = 0; x < 256; x++, n++)
            if (mfd::mf_fp8_f16((mfd::mf_format)f8[i], x) != ::mf_fp8_f16(f8[i], x))
                FAIL("fp8 -> f16 %s 0x%02" PRIx64 ": host 0x%04x, device 0x%04x", mf_format_get(f8[i])->name, x,
                     ::mf_fp8_f16(f8[i], x), mfd::mf_fp8_f16((mfd::mf_format)f8[i], x));
    /* F16-emu's fixed-shape check decodes each fp8 input straight as the f16 it converts to
     * (dec_fp8_as_f16): the host's conversion table, decoded by the host's mf_decode, is the
     * reference (sign, significand with its hidden bit, exponent; NaN and Inf as the special
     * flag; a zero's exponent is never read) */
    for (int i = 0; i < 2; i++)
        for (uint64_t x = 0; x < 256; x++, n++) {
            const ::mf_value h = ::mf_decode(MF_FMT_F16, ::mf_fp8_f16(f8[i], x));
            uint32_t sig, sign;
            int exp;
            const int special = mfd::dec_fp8_as_f16((mfd::mf_format)f8[i], x, &sig, &exp, &sign);
            const int hspecial = h.cls == MF_CLS_NAN || h.cls == MF_CLS_INF;
            if (special != hspecial || (!special && (sig != h.sig || (int)sign != h.sign || (sig && exp != h.exp))))
                FAIL("fp8 as f16 %s 0x%02" PRIx64 ": sig %x exp %d special %d, host's f16 sig %" PRIx64 " exp %d",
                     mf_format_get(f8[i])->name, x, sig, exp, special, h.sig, h.exp);
        }
    printf("decode: %ld patterns (formats of up to 16 bits, fp8 -> f16, fp8 decoded as f16)\n", n);
}

/* The GPU's product table (mf_prod_pack, devices/cuda/verify.cu): every entry of every fp8
 * format pair, T-FDPA's decoding and F16-emu's (as_f16), unpacked by mf_prod_unpack, against the
 * product of the host's mf_decode of the two inputs (of the f16 they convert to, for F16-emu):
 * significand product, exponent sum (read only for a nonzero product), sign, and NaN/Inf. */
static void check_prod_table(void)
{
    long n = 0;
    const mf_format f8[2] = {MF_FMT_E4M3, MF_FMT_E5M2};
    for (int as_f16 = 0; as_f16 < 2; as_f16++)
        for (int ia = 0; ia < 2; ia++)
            for (int ib = 0; ib < 2; ib++)
                for (uint32_t x = 0; x < 256; x++)
                    for (uint32_t y = 0; y < 256; y++, n++) {
                        const mf_format fa = f8[ia], fb = f8[ib];
                        const ::mf_value va = as_f16 ? ::mf_decode(MF_FMT_F16, ::mf_fp8_f16(fa, x)) : ::mf_decode(fa, x);
                        const ::mf_value vb = as_f16 ? ::mf_decode(MF_FMT_F16, ::mf_fp8_f16(fb, y)) : ::mf_decode(fb, y);
                        const int special = va.cls == MF_CLS_NAN || va.cls == MF_CLS_INF || vb.cls == MF_CLS_NAN ||
                                            vb.cls == MF_CLS_INF;
                        const uint64_t sig = va.sig * vb.sig;
                        /* a special entry's flags: NaN for a NaN input or Inf times zero, else the Inf's sign */
                        const int zero = va.cls == MF_CLS_ZERO || vb.cls == MF_CLS_ZERO;
                        const uint32_t flags = !special ? 0u
                                               : va.cls == MF_CLS_NAN || vb.cls == MF_CLS_NAN || zero ? 1u
                                               : va.sign ^ vb.sign ? 4u : 2u;
                        const uint32_t w = mfd::mf_prod_pack((mfd::mf_format)fa, (mfd::mf_format)fb, as_f16, x, y);
                        uint32_t psig, pneg;
                        int32_t pexp;
                        const uint32_t pspecial = mfd::mf_prod_unpack(w, as_f16, &psig, &pexp, &pneg);
                        if (w > 0xFFFF || (int)pspecial != special || (special && (w & 0x7FFF) != flags) ||
                            (!special && (psig != sig || pneg != (uint32_t)(va.sign ^ vb.sign) ||
                                          (sig && pexp != va.exp + vb.exp))))
                            FAIL("product table %s x %s%s 0x%02x 0x%02x: entry 0x%x (sig %x exp %d neg %u special %u), "
                                 "host sig %" PRIx64 " exp %d neg %d special %d",
                                 mf_format_get(fa)->name, mf_format_get(fb)->name, as_f16 ? " (as f16)" : "", x, y, w,
                                 psig, pexp, pneg, pspecial, sig, va.exp + vb.exp, va.sign ^ vb.sign, special);
                    }
    /* the CUDA files' constant-expression copy of the predicate, on every pair of formats */
    static_assert(mfd_prod_packs(mfd::MF_FMT_E5M2, mfd::MF_FMT_E4M3) && !mfd_prod_packs(mfd::MF_FMT_F16, mfd::MF_FMT_E4M3),
                  "mfd_prod_packs is a constant expression");
    for (int fa = 0; fa < MF_FMT_COUNT; fa++)
        for (int fb = 0; fb < MF_FMT_COUNT; fb++)
            if (mfd_prod_packs(fa, fb) != (mfd::mf_prod_packs((mfd::mf_format)fa, (mfd::mf_format)fb) != 0))
                FAIL("mfd_prod_packs(%s, %s) differs from mf_prod_packs", mf_format_get((mf_format)fa)->name,
                     mf_format_get((mf_format)fb)->name);
    printf("product table: %ld entries (fp8 format pairs, both decodings)\n", n);
}

/* ---------------------------------------------------------------- eval */

static long n_fixed;   /* cases checked through the fixed-shape entries */

/* Case (i, j) of tile `slot` of the generated buffers. */
static void case_of(const ::mf_instr *in, const std::vector<uint8_t> *buf, size_t slot, int i, int j, ::mf_case *cs)
{
    const int m = in->m, n = in->n, k = in->k, S = in->n_scales;
    const size_t ea = mf_tile_elem_bytes(in->fa), eb = mf_tile_elem_bytes(in->fb), ec = mf_tile_elem_bytes(in->fc);
    const size_t es = mf_tile_elem_bytes(in->fs);
    memset(cs, 0, sizeof *cs);
    for (int kk = 0; kk < k; kk++) {
        cs->a[kk] = mf_elem_get(ea, buf[0].data(), (slot * m + i) * (size_t)k + kk);
        cs->b[kk] = mf_elem_get(eb, buf[1].data(), (slot * n + j) * (size_t)k + kk);
    }
    cs->c = mf_elem_get(ec, buf[2].data(), (slot * m + i) * (size_t)n + j);
    for (int s = 0; s < S; s++) {
        cs->sa[s] = mf_elem_get(es, buf[3].data(), (slot * m + i) * (size_t)S + s);
        cs->sb[s] = mf_elem_get(es, buf[4].data(), (slot * n + j) * (size_t)S + s);
    }
    for (int g = 0; in->sparse && g < in->n_meta; g++)   /* a sparse row's SA: its metadata */
        cs->meta[g] = buf[3][(slot * m + i) * (size_t)in->n_meta + g];
}

/* SA of row `in`: the scales, or a sparse row's metadata; SB: the scales. */
static bool has_sa(const ::mf_instr *in) { return in->n_scales || in->sparse; }

/* Buffers for `tiles` tiles of row `in`: A, B, C, SA, SB. */
static void alloc_tiles(const ::mf_instr *in, size_t tiles, std::vector<uint8_t> *buf)
{
    const size_t m = in->m, n = in->n, k = in->k, S = in->n_scales;
    buf[0].assign(tiles * m * k * mf_tile_elem_bytes(in->fa), 0);
    buf[1].assign(tiles * n * k * mf_tile_elem_bytes(in->fb), 0);
    buf[2].assign(tiles * m * n * mf_tile_elem_bytes(in->fc), 0);
    buf[3].assign(tiles * m * (in->sparse ? in->n_meta : S * mf_tile_elem_bytes(in->fs)) + 1, 0);
    buf[4].assign(tiles * n * S * mf_tile_elem_bytes(in->fs) + 1, 0);
}

static long check_eval_row(const ::mf_instr *in, long cases, uint64_t seed)
{
    const mfd::mf_instr din = to_dev(in);
    const long per_tile = (long)in->m * in->n;
    const size_t tiles = (size_t)((cases + per_tile - 1) / per_tile);
    std::vector<uint8_t> buf[5];
    alloc_tiles(in, tiles, buf);
    gen_fill_tiles(in, in->m, in->n, in->k, seed, 0, tiles, buf[0].data(), buf[1].data(), buf[2].data(),
                   has_sa(in) ? buf[3].data() : NULL, in->n_scales ? buf[4].data() : NULL);
    long n = 0;
    ::mf_case cs;
    mfd::mf_case dcs;
    for (size_t t = 0; t < tiles; t++)
        for (int i = 0; i < in->m; i++)
            for (int j = 0; j < in->n; j++, n++) {
                case_of(in, buf, t, i, j, &cs);
                memcpy(&dcs, &cs, sizeof dcs);
                const uint64_t general = ::mf_eval_trace(in, &cs, NULL), fast = ::mf_eval(in, &cs);
                const uint64_t dev = mfd::mf_eval(&din, &dcs);
                if (dev != general || dev != fast)
                    FAIL("%s tile %zu (%d,%d): device 0x%" PRIx64 ", host general 0x%" PRIx64 ", host mf_eval 0x%" PRIx64,
                         in->name, t, i, j, dev, general, fast);
                /* the fixed-shape entries of the GPU's check (devices/cuda/verify.cu), for the rows they
                 * serve: decoding the inputs, and (fp8) reading the products from mf_prod_pack entries, the
                 * GPU's product table */
                const bool packs = mfd::mf_prod_packs(din.fa, din.fb);
                if (din.family == mfd::MF_T_FDPA && mfd::mf_t_fdpa_plan(&din)) {
                    uint32_t w[MF_KMAX_FLOAT];
                    for (int q = 0; packs && q < din.k; q++)
                        w[q] = mfd::mf_prod_pack(din.fa, din.fb, 0, dcs.a[q], dcs.b[q]);
                    for (int use = 0; use <= (packs ? 1 : 0); use++) {
                        const uint64_t fx = mfd::mf_t_fdpa_fixed(&din, din.fa, din.fb, din.fc, din.fd, dcs.a, dcs.b,
                                                                 use ? w : NULL, dcs.c, din.k, din.L);
                        if (fx != general)
                            FAIL("%s tile %zu (%d,%d): mf_t_fdpa_fixed%s 0x%" PRIx64 ", host general 0x%" PRIx64,
                                 in->name, t, i, j, use ? " (packed)" : "", fx, general);
                    }
                    n_fixed++;
                }
                if (din.family == mfd::MF_F16_EMU && (din.k == 16 || din.k == 32) && mfd::mf_f16_emu_fast(&din) &&
                    !mfd::mf_row_has_forms(&din) && packs) {
                    uint32_t w[MF_KMAX_FLOAT];
                    for (int q = 0; q < din.k; q++)
                        w[q] = mfd::mf_prod_pack(din.fa, din.fb, 1, dcs.a[q], dcs.b[q]);
                    for (int use = 0; use <= 1; use++) {
                        const uint64_t fx = din.k == 32
                                                ? mfd::mf_f16_emu_fixed(&din, din.fa, din.fb, dcs.a, dcs.b, use ? w : NULL,
                                                                        dcs.c, 32)
                                                : mfd::mf_f16_emu_fixed(&din, din.fa, din.fb, dcs.a, dcs.b, use ? w : NULL,
                                                                        dcs.c, 16);
                        if (fx != general)
                            FAIL("%s tile %zu (%d,%d): mf_f16_emu_fixed%s 0x%" PRIx64 ", host general 0x%" PRIx64,
                                 in->name, t, i, j, use ? " (packed)" : "", fx, general);
                    }
                    n_fixed++;
                }
                /* a sparse row's fixed-length path (model/sparse.c) as model_bench's fixed-shape kernel
                 * calls it: the logical rows as arrays gathered by selects, and (fp8) the kept products read
                 * from mf_prod_pack entries */
                int per;
                if (din.sparse && din.family != mfd::MF_INT_DOT && mfd::mf_sparse_fixed_ok(&din, &per)) {
                    const int n = din.k / 2, L = din.L < n ? din.L : n;
                    const int as_f16 = din.family == mfd::MF_F16_EMU;
                    static unsigned short tab[65536];
                    static int tab_fa = -1, tab_fb = -1, tab_f16 = -1;
                    if (packs && (tab_fa != din.fa || tab_fb != din.fb || tab_f16 != as_f16)) {
                        for (unsigned x = 0; x < 65536; x++)
                            tab[x] = (unsigned short)mfd::mf_prod_pack(din.fa, din.fb, as_f16, x & 0xFF, x >> 8);
                        tab_fa = din.fa, tab_fb = din.fb, tab_f16 = as_f16;
                    }
                    for (int use = 0; use <= (packs ? 1 : 0); use++) {
                        const uint64_t fx = mfd::mf_sparse_fixed(&din, din.fa, din.fb, dcs.a, dcs.b, dcs.meta, dcs.c,
                                                                 n, L, per, 1, use ? tab : NULL);
                        if (fx != general)
                            FAIL("%s tile %zu (%d,%d): mf_sparse_fixed%s 0x%" PRIx64 ", host general 0x%" PRIx64,
                                 in->name, t, i, j, use ? " (packed)" : "", fx, general);
                    }
                    n_fixed++;
                }
                /* the comparison rule: against itself, a neighbour, and the canonical NaN */
                const uint64_t other[3] = {general, general ^ 1, (UINT64_C(1) << (mf_format_get(in->fd)->bits - 1)) - 1};
                for (int o = 0; o < 3; o++)
                    if (mfd::mf_output_equal(&din, dev, other[o]) != ::mf_output_equal(in, general, other[o]))
                        FAIL("%s: mf_output_equal(0x%" PRIx64 ", 0x%" PRIx64 ") differs", in->name, dev, other[o]);
            }
    return n;
}

/* ---------------------------------------------------------------- gen */

static long check_gen_row(const ::mf_instr *in, int tiles, uint64_t seed)
{
    /* a pool of saved cases of this row (uniform tiles' diagonals) */
    enum { POOL = 12 };
    std::vector<uint8_t> pbuf[5];
    alloc_tiles(in, POOL, pbuf);
    gen_fill_tiles(in, in->m, in->n, in->k, seed ^ 0x5eed, 1000, POOL, pbuf[0].data(), pbuf[1].data(), pbuf[2].data(),
                   has_sa(in) ? pbuf[3].data() : NULL, in->n_scales ? pbuf[4].data() : NULL);
    static ::gen_saved_case pool[POOL];
    static mfd::gen_saved_case dpool[POOL];
    const ::gen_saved_case *view[POOL];
    const mfd::gen_saved_case *dview[POOL];
    const mfd::mf_instr din = to_dev(in);
    for (int p = 0; p < POOL; p++) {
        pool[p].in = in;
        case_of(in, pbuf, (size_t)p, p % in->m, (p * 7) % in->n, &pool[p].cs);
        dpool[p].in = &din;
        memcpy(&dpool[p].cs, &pool[p].cs, sizeof dpool[p].cs);
        view[p] = &pool[p];
        dview[p] = &dpool[p];
    }
    std::vector<uint8_t> hb[5], db[5];
    alloc_tiles(in, (size_t)tiles, hb);
    alloc_tiles(in, (size_t)tiles, db);
    long n = 0;
    for (int g = 0; g < GEN_COUNT; g++) {
        ::gen_ctx h;
        memset(&h, 0, sizeof h);
        h.in = in;
        h.m = in->m;
        h.n = in->n;
        h.k = in->k;
        h.seed = seed;
        h.mix.w[g] = 1;
        h.view = view;
        h.nview = POOL;
        mfd::gen_ctx d;
        memset(&d, 0, sizeof d);
        d.in = &din;
        d.m = in->m;
        d.n = in->n;
        d.k = in->k;
        d.seed = seed;
        d.mix.w[g] = 1;
        d.view = dview;
        d.nview = POOL;
        for (int b = 0; b < 5; b++) {
            std::fill(hb[b].begin(), hb[b].end(), 0xA5);
            std::fill(db[b].begin(), db[b].end(), 0xA5);
        }
        void **hp[5] = {&h.A, &h.B, &h.C, &h.SA, &h.SB};
        void **dp[5] = {&d.A, &d.B, &d.C, &d.SA, &d.SB};
        for (int b = 0; b < 5; b++) {
            *hp[b] = (b == 3 && !has_sa(in)) || (b == 4 && !in->n_scales) ? NULL : hb[b].data();
            *dp[b] = (b == 3 && !has_sa(in)) || (b == 4 && !in->n_scales) ? NULL : db[b].data();
        }
        for (int t = 0; t < tiles; t++, n++) {
            const uint64_t tile = (uint64_t)t * 7919 + (uint64_t)g;
            const int kh = (int)::gen_tile(&h, tile, (size_t)t), kd = (int)mfd::gen_tile(&d, tile, (size_t)t);
            if (kh != g || kd != g)
                FAIL("%s generator %s tile %" PRIu64 ": host used %d, device %d", in->name, gen_name((gen_kind)g),
                     tile, kh, kd);
        }
        static const char *names[5] = {"A", "B", "C", "SA", "SB"};
        for (int b = 0; b < 5; b++)
            if (hb[b] != db[b]) {
                size_t at = 0;
                while (hb[b][at] == db[b][at])
                    at++;
                FAIL("%s generator %s: %s differs at byte %zu (host 0x%02x, device 0x%02x)", in->name,
                     gen_name((gen_kind)g), names[b], at, hb[b][at], db[b][at]);
            }
    }
    return n;
}

int main(int argc, char **argv)
{
    long cases = 100000, rest = 2000, forms = 500;
    int tiles = 8, all = 0;
    uint64_t seed = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-all"))
            all = 1;
        else if (i + 1 < argc && !strcmp(argv[i], "-cases"))
            cases = atol(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "-rest"))
            rest = atol(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "-forms"))
            forms = atol(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "-tiles"))
            tiles = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "-seed"))
            seed = strtoull(argv[++i], NULL, 0);
        else {
            fprintf(stderr, "usage: %s [-cases N] [-rest N] [-forms N] [-all] [-tiles N] [-seed S]\n", argv[0]);
            return 2;
        }
    }
    if (cases <= 0 || rest <= 0 || tiles <= 0) {
        fprintf(stderr, "%s: -cases, -rest and -tiles expect a positive number\n", argv[0]);
        return 2;
    }
    double t0 = now();
    check_decode();
    check_prod_table();

    /* one architecture per family gets -cases per row: hopper where it has
     * rows of the family (the GPU path's first target), else the first
     * architecture in table order that has */
    int full_arch[MF_FAMILY_COUNT];
    for (int f = 0; f < MF_FAMILY_COUNT; f++)
        full_arch[f] = -1;
    for (size_t r = 0; r < mf_instr_count; r++)
        if (mf_instr_table[r].arch == MF_ARCH_HOPPER)
            full_arch[mf_instr_table[r].family] = MF_ARCH_HOPPER;
    for (size_t r = 0; r < mf_instr_count; r++)
        if (full_arch[mf_instr_table[r].family] < 0)
            full_arch[mf_instr_table[r].family] = (int)mf_instr_table[r].arch;
    long n_eval = 0, rows_full = 0;
    long per_family[MF_FAMILY_COUNT] = {0};
    double family_s[MF_FAMILY_COUNT] = {0};
    for (size_t r = 0; r < mf_instr_count; r++) {
        const ::mf_instr *in = &mf_instr_table[r];
        const int full = all || (int)in->arch == full_arch[in->family];
        const double tr = now();
        const long n = check_eval_row(in, full ? cases : rest, seed + r);
        n_eval += n;
        per_family[in->family] += n;
        family_s[in->family] += now() - tr;
        rows_full += full;
    }
    double t1 = now();
    printf("eval: %ld cases over %zu rows (%ld rows at %ld cases, the others at %ld), %.1f s\n", n_eval, mf_instr_count,
           rows_full, cases, all ? cases : rest, t1 - t0);
    for (int f = 0; f < MF_FAMILY_COUNT; f++)
        printf("  %-12s %9ld cases (full rows: %s), %.2f s\n", mf_family_name((mf_family)f), per_family[f],
               full_arch[f] >= 0 ? mf_arch_name((mf_arch)full_arch[f]) : "-", family_s[f]);
    printf("  of them %ld through the fixed-shape entries (T-FDPA, F16-emu, sparse), fp8 ones also packed\n", n_fixed);

    /* wgmma's operand forms: copies of every row, no table row sets them */
    long n_forms = 0;
    for (size_t r = 0; r < mf_instr_count; r++)
        for (int f = 0; f < 4; f++) {
            ::mf_instr form = mf_instr_table[r];
            form.neg_a = f == 0;
            form.neg_b = f == 1;
            form.no_c = f >= 2;
            form.no_c_neg_zero = f == 3;
            n_forms += check_eval_row(&form, forms, seed * 7 + r * 4 + f);
            /* a case the generators rarely make: every product -0 (a = -0,
             * b = +0), c = +0, where no_c_neg_zero decides the sign */
            ::mf_case cs;
            memset(&cs, 0, sizeof cs);
            for (int kk = 0; kk < form.k; kk++)
                cs.a[kk] = UINT64_C(1) << (mf_format_get(form.fa)->bits - 1);
            mfd::mf_case dcs;
            memcpy(&dcs, &cs, sizeof dcs);
            const mfd::mf_instr dform = to_dev(&form);
            const uint64_t h = ::mf_eval_trace(&form, &cs, NULL), d = mfd::mf_eval(&dform, &dcs);
            if (h != d)
                FAIL("%s form %d, products all -0: device 0x%" PRIx64 ", host 0x%" PRIx64, form.name, f, d, h);
            n_forms++;
        }
    const double t2 = now();
    printf("forms: %ld cases (neg_a, neg_b, no_c, no_c with no_c_neg_zero on every row), %.1f s\n", n_forms, t2 - t1);
    t1 = t2;

    const int eval_failures = failures;
    long n_gen = 0;
    for (size_t r = 0; r < mf_instr_count; r++)
        n_gen += check_gen_row(&mf_instr_table[r], tiles, seed * 31 + r);
    printf("gen: %ld tiles (%d generators, %d tiles each per row), %.1f s\n", n_gen, (int)GEN_COUNT, tiles,
           now() - t1);
    if (failures) {
        printf("%d failures (%d in decode and eval, %d in gen)\n", failures, eval_failures, failures - eval_failures);
        return 1;
    }
    printf("device-code model and generators equal the host library\n");
    return 0;
}
