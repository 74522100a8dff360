/*
 * test_layout.c - the fragment layouts of devices/cuda/layout.c, on the CPU.
 *
 * For every table row with a CUDA wrapper and every variant:
 *  1. each register-fragment layout (A, B, C/D) is a bijection onto its tile
 *     (every (row, col) hit exactly once by the 32 or 128 threads);
 *  2. each layout agrees, for every thread and element, with the PTX ISA
 *     formulas written out independently below (section "Matrix fragments for
 *     mma.m16n8k*" and the wgmma register fragments; shared/DOMAIN.md
 *     section 8 quotes the main ones);
 *  3. the wgmma shared-memory layout is a bijection onto the operand bytes, and
 *     the descriptor puts the fields at the bits DOMAIN section 8 lists;
 *  4. tcgen05: D in tensor memory, the operand row images, the scale
 *     positions, and the shared-memory and instruction descriptors
 *     (check_tcgen05).
 * Expected values come from those documents, not from layout.c.
 */
#include "layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define EXPECT(cond, ...)                                                                                              \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            if (failures++ < 20) {                                                                                     \
                printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                            \
                printf(__VA_ARGS__);                                                                                   \
                printf("\n");                                                                                          \
            }                                                                                                          \
        }                                                                                                              \
    } while (0)

/* PTX ISA formulas, written from the text (g = groupID, t = threadID_in_group). */
static void ptx_a(mf_format f, int k, int lane, int e, int *row, int *col)
{
    int g = lane >> 2, t = lane & 3;
    if (f == MF_FMT_F64 || f == MF_FMT_TF32) {
        /* .tf32/.f64: row = g for even e, g+8 for odd; col = t + 4*(e/2) */
        *row = g + 8 * (e & 1);
        *col = t + 4 * (e >> 1);
        (void)k;
    } else if (f == MF_FMT_F16 || f == MF_FMT_BF16) {
        /* DOMAIN 8: row = g for e in {0,1,4,5}, else g+8; col = t*2 + (e&1), +8 for e >= 4 */
        *row = (e == 0 || e == 1 || e == 4 || e == 5) ? g : g + 8;
        *col = t * 2 + (e & 1) + (e >= 4 ? 8 : 0);
    } else {
        /* DOMAIN 8 (8-bit m16n8k32): row = g for e in 0..3 and 8..11, else g+8;
         * col = t*4 + (e&3), +16 for e >= 8.  (k16: e in 0..7, same rule) */
        *row = ((e >= 0 && e <= 3) || (e >= 8 && e <= 11)) ? g : g + 8;
        *col = t * 4 + (e & 3) + (e >= 8 ? 16 : 0);
    }
}

static void ptx_b(mf_format f, int lane, int e, int *row, int *col)
{
    int g = lane >> 2, t = lane & 3;
    *col = g;
    if (f == MF_FMT_F64 || f == MF_FMT_TF32)
        *row = t + 4 * e;                          /* DOMAIN 8 (tf32 k8): rows t, t+4 */
    else if (f == MF_FMT_F16 || f == MF_FMT_BF16)
        *row = t * 2 + (e & 1) + (e >= 2 ? 8 : 0); /* DOMAIN 8 (f16 k16) */
    else
        *row = t * 4 + (e & 3) + (e >= 4 ? 16 : 0); /* DOMAIN 8 (8-bit k32) */
}

/* Integer and single-bit fragments (PTX ISA "Matrix Fragments for
 * mma.m8n8k16 / m8n8k32 / m8n8k128" and "mma.m16n8k16 / k32 / k64 / k128 /
 * k256" for .s8/.u8, .s4/.u4, .b1), in the PTX's value index i of a thread.
 * An ABI element is one value, except b1: element e is the word of values
 * i = 32e .. 32e+31, whose column (A) or row (B) is that of value 32e / 32. */
static int int_vals(mf_format f) { return f == MF_FMT_B1 ? 32 : 1; }

static void ptx_int_a(const mf_instr *in, int lane, int e, int *row, int *col)
{
    int g = lane >> 2, t = lane & 3, V = int_vals(in->fa), i = e * V, K = in->k * V;
    int per = (in->fa == MF_FMT_S8 || in->fa == MF_FMT_U8) ? 4 : (in->fa == MF_FMT_B1) ? 32 : 8; /* values per register */
    if (in->m == 8) { /* m8n8k16/k32/k128: row = g, col = t*per + i */
        *row = g;
        *col = t * per + i;
    } else if (K == 4 * per) { /* m16n8k16 s8, k32 s4, k128 b1: two registers */
        *row = i < per ? g : g + 8;
        *col = t * per + (i % per);
    } else { /* m16n8k32 s8, k64 s4, k256 b1: four registers */
        *row = (i < per || (i >= 2 * per && i < 3 * per)) ? g : g + 8;
        *col = t * per + (i % per) + (i >= 2 * per ? 4 * per : 0);
    }
    *col /= V;
}

static void ptx_int_b(const mf_instr *in, int lane, int e, int *row, int *col)
{
    int g = lane >> 2, t = lane & 3, V = int_vals(in->fb), i = e * V, K = in->k * V;
    int per = (in->fb == MF_FMT_S8 || in->fb == MF_FMT_U8) ? 4 : (in->fb == MF_FMT_B1) ? 32 : 8;
    *col = g;
    if (K == 4 * per) /* m8n8, m16n8k16 s8, k32 s4, k128 b1: one register, row = t*per + i */
        *row = t * per + i;
    else /* two registers: the second 4*per rows further */
        *row = t * per + (i % per) + (i >= per ? 4 * per : 0);
    *row /= V;
}

static void ptx_cd(int lane, int e, int *row, int *col)
{
    /* DOMAIN 8: row = g for e < 2, else g+8; col = t*2 + (e&1); wgmma repeats this
     * every 8 columns: col += 8*(e/4), row = g + 8*((e>>1)&1) */
    int g = lane >> 2, t = lane & 3;
    *row = g + 8 * ((e >> 1) & 1);
    *col = t * 2 + (e & 1) + 8 * (e >> 2);
}

/* Check layout L over `threads` threads onto a rows x cols tile, against the
 * formula fn (NULL: bijection only). */
static void check_layout(const char *what, const mf_instr *in, const char *variant, const mf_frag_layout *L,
                         int threads, int rows, int cols, int which)
{
    int n = rows * cols;
    int *hit = calloc((size_t)n, sizeof *hit);
    int per = 1 << L->nbits;
    EXPECT(threads * per == n, "%s %s [%s]: %d threads x %d elements != %d x %d tile", in->name, what, variant, threads,
           per, rows, cols);
    for (int th = 0; th < threads; th++)
        for (int e = 0; e < per; e++) {
            int r, c, er = -1, ec = -1;
            mf_frag_pos(L, th >> 5, th & 31, e, &r, &c);
            if (r < 0 || r >= rows || c < 0 || c >= cols) {
                EXPECT(0, "%s %s [%s]: thread %d element %d at (%d,%d), outside %dx%d", in->name, what, variant, th, e,
                       r, c, rows, cols);
                continue;
            }
            hit[r * cols + c]++;
            int lane = th & 31, warp = th >> 5;
            if (mf_format_is_int(in->fa) && which == 0) {
                ptx_int_a(in, lane, e, &er, &ec);
                er += 16 * warp;
            } else if (mf_format_is_int(in->fa) && which == 1) {
                ptx_int_b(in, lane, e, &er, &ec);
            } else if (which == 0) {
                if (in->m == 8) { /* m8n8k4 f64: row = g, col = t */
                    er = lane >> 2;
                    ec = lane & 3;
                } else {
                    ptx_a(in->fa, in->k, lane, e, &er, &ec);
                }
                er += 16 * warp;
            } else if (which == 1) {
                if (in->m == 8) {
                    er = lane & 3;
                    ec = lane >> 2;
                } else {
                    ptx_b(in->fb, lane, e, &er, &ec);
                }
            } else {
                if (in->m == 8) { /* m8n8k4 f64 C/D: row = g, col = t*2 + e */
                    er = lane >> 2;
                    ec = (lane & 3) * 2 + e;
                } else {
                    ptx_cd(lane, e, &er, &ec);
                }
                er += 16 * warp;
            }
            EXPECT(r == er && c == ec, "%s %s [%s]: thread %d element %d at (%d,%d), PTX ISA says (%d,%d)", in->name,
                   what, variant, th, e, r, c, er, ec);
        }
    for (int i = 0; i < n; i++)
        EXPECT(hit[i] == 1, "%s %s [%s]: (%d,%d) hit %d times", in->name, what, variant, i / cols, i % cols, hit[i]);
    free(hit);
}

/* The transposed (MN-major) layout: a bijection onto the operand bytes; each
 * 128-byte core matrix holds 8 K positions (16 bytes apart) of 16 contiguous
 * bytes along M or N (PTX ISA canonical MN-major layout, no swizzle); K-groups
 * of 8 are LBO = 128 bytes apart, M/N groups SBO = 128 * K/8. */
static void check_smem_mn(int rows, int K, int eb)
{
    int n = rows * K * eb, T = 16 / eb;
    int *hit = calloc((size_t)n, sizeof *hit);
    for (int r = 0; r < rows; r++)
        for (int k = 0; k < K; k++) {
            unsigned o = mf_wgmma_smem_offset_mn(r, k, K, eb);
            EXPECT(o < (unsigned)n, "MN smem offset (%d,%d) = %u outside %d bytes", r, k, o, n);
            for (int b = 0; b < eb && o + (unsigned)b < (unsigned)n; b++)
                hit[o + (unsigned)b]++;
            EXPECT(o % 128 == (unsigned)((k % 8) * 16 + (r % T) * eb), "MN core-matrix layout at (%d,%d)", r, k);
            EXPECT(o / 128 == (unsigned)((r / T) * (MF_WGMMA_MN_SBO(K) / 128) + (k / 8) * (MF_WGMMA_MN_LBO(K) / 128)),
                   "MN core matrix of (%d,%d): not LBO/SBO apart", r, k);
        }
    for (int i = 0; i < n; i++)
        EXPECT(hit[i] == 1, "MN smem byte %d hit %d times (%d rows x K %d)", i, hit[i], rows, K);
    free(hit);
}

static void check_smem(int rows, int kbytes)
{
    int n = rows * kbytes;
    int *hit = calloc((size_t)n, sizeof *hit);
    for (int r = 0; r < rows; r++)
        for (int b = 0; b < kbytes; b++) {
            unsigned o = mf_wgmma_smem_offset(r, b, kbytes, 1);
            EXPECT(o < (unsigned)n, "smem offset (%d,%d) = %u outside %d bytes", r, b, o, n);
            if (o < (unsigned)n)
                hit[o]++;
            /* a core matrix is 8 rows of 16 contiguous bytes (PTX ISA) */
            EXPECT(o % 128 == (unsigned)((r % 8) * 16 + b % 16), "core-matrix row layout at (%d,%d)", r, b);
        }
    for (int i = 0; i < n; i++)
        EXPECT(hit[i] == 1, "smem byte %d hit %d times (%d rows x %d bytes)", i, hit[i], rows, kbytes);
    free(hit);
}

/* Sparse mma (PTX ISA "Matrix fragments for sparse mma.m16n8k16 / k32 with
 * .f16/.bf16" and "mma.m16n8k8 / k16 with .tf32"), from the text: the packed
 * A (M x K/2) and B (K x 8) of thread (g, t), element i. */
static void ptx_sp_a(const mf_instr *in, int lane, int i, int *row, int *col)
{
    int g = lane >> 2, t = lane & 3;
    if (in->fa == MF_FMT_S8 || in->fa == MF_FMT_U8 || in->fa == MF_FMT_E4M3 || in->fa == MF_FMT_E5M2) {
        /* "Matrix fragments for sparse mma.m16n8k32 / k64 with .u8/.s8" (and
         * ".e4m3/.e5m2" at k64, the same figures): row g
         * for a0..a3 (and a8..a11), else g+8; the thread's "four non-zero out
         * of 8 consecutive" logical columns 8t..8t+7 (+32 for i >= 8) are the
         * packed columns 4t..4t+3 (+16) */
        *row = (i & 4) ? g + 8 : g;
        *col = 4 * t + (i & 3) + (i >= 8 ? 16 : 0);
    } else if (in->fa == MF_FMT_S4 || in->fa == MF_FMT_U4) {
        /* "... sparse mma.m16n8k64 / k128 with .u4/.s4": row g for a0..a7 (and
         * a16..a23), else g+8; "eight non-zero out of 16 consecutive" logical
         * columns 16t..16t+15 (+64 for i >= 16): packed 8t..8t+7 (+32) */
        *row = (i & 8) ? g + 8 : g;
        *col = 8 * t + (i & 7) + (i >= 16 ? 32 : 0);
    } else if (in->fa == MF_FMT_TF32 && in->k == 8) {        /* a0, a1: rows g, g+8; col t */
        *row = g + 8 * i;
        *col = t;
    } else if (in->fa == MF_FMT_TF32) {               /* k16: row g (a0, a2), g+8 (a1, a3); col t, t+4 */
        *row = g + 8 * (i & 1);
        *col = t + 4 * (i >> 1);
    } else if (in->k == 16) {                          /* f16 k16: row g (a0, a1), g+8; col 2t + (i&1) */
        *row = i < 2 ? g : g + 8;
        *col = 2 * t + (i & 1);
    } else {                                           /* f16 k32: row g for i in {0,1,4,5}; col +8 for i >= 4 */
        *row = (i == 0 || i == 1 || i == 4 || i == 5) ? g : g + 8;
        *col = 2 * t + (i & 1) + (i >= 4 ? 8 : 0);
    }
}

static void ptx_sp_b(const mf_instr *in, int lane, int i, int *row, int *col)
{
    int g = lane >> 2, t = lane & 3;
    *col = g;
    if (in->fb == MF_FMT_S8 || in->fb == MF_FMT_U8 || in->fb == MF_FMT_E4M3 ||
        in->fb == MF_FMT_E5M2)   /* dense m16n8k32 B; k64: a register per 16 rows */
        *row = 4 * t + (i & 3) + 16 * (i >> 2);
    else if (in->fb == MF_FMT_S4 || in->fb == MF_FMT_U4)   /* dense m16n8k64 B; k128: a register per 32 rows */
        *row = 8 * t + (i & 7) + 32 * (i >> 3);
    else if (in->fb == MF_FMT_TF32)
        *row = t + 4 * i;                              /* b0.. : rows t, t+4, t+8, t+12 */
    else
        *row = 2 * t + (i & 1) + 8 * (i >> 1);         /* b0..: rows 2t + (i&1), +8 per register */
}

/* The metadata register, as measured on hardware for mma.sp
 * (devices/cuda/NOTES.md): the thread of quad g holding nibble grp of row r
 * (0..15; wgmma.sp: of the warp's 16 rows), and the bit.  f16/bf16/tf32:
 * rows g and g+8 share a thread (bits 0-15 / 16-31), for m16n8k32 (tf32
 * k16, wgmma.sp f16/bf16 k32 and tf32 k16) the "threads T0/T1 for selector
 * 0" of the PTX figure split the groups 0-3 / 4-7.  8- and 4-bit types: a
 * thread per row, all eight nibbles of it (the second row's thread next to
 * the first's); 16 groups a row (s8/fp8 m16n8k64, s4 m16n8k128, wgmma.sp
 * fp8 and s8/u8 k64): T0/T1 groups 0-7, T2/T3 groups 8-15 (the figures'
 * "columns 0-31" and "32-63"). */
static void ptx_sp_meta(const mf_instr *in, int sel, int r, int grp, int *lane, int *bit)
{
    int g = r % 8, n_meta = in->n_meta;
    int narrow = in->fa == MF_FMT_S8 || in->fa == MF_FMT_U8 || in->fa == MF_FMT_S4 || in->fa == MF_FMT_U4 ||
                 in->fa == MF_FMT_E4M3 || in->fa == MF_FMT_E5M2;
    if (narrow) {
        *lane = 4 * g + (n_meta == 8 ? 2 * sel : 2 * (grp / 8)) + (r >= 8);
        *bit = 4 * (grp % 8);
        return;
    }
    if (n_meta == 4)   /* one thread per quad: tig = selector */
        *lane = 4 * g + sel;
    else               /* 8: two, tig = 2*selector (groups 0-3), 2*selector + 1 (groups 4-7) */
        *lane = 4 * g + 2 * sel + (grp >= 4);
    *bit = (r < 8 ? 0 : 16) + 4 * (grp % 4);
}

/* The metadata layout of a sparse row's (variant's) 16 rows of a warp (warp
 * w of a wgmma.sp warpgroup, or -1 for mma.sp): each (row, group) where the
 * PTX figures put it (ptx_sp_meta, as measured), and a bijection onto the 8
 * nibbles of each thread the selector names. */
static void check_sp_meta(const mf_instr *in, const char *vn, const mf_wrap_shape *s, int sel, int w)
{
    int hitM[32 * 8] = {0};
    for (int r = 0; r < 16; r++)
        for (int grp = 0; grp < s->n_meta; grp++) {
            int l, b, el, eb;
            mf_sp_meta_pos(&s->meta, sel, r, grp, &l, &b);
            ptx_sp_meta(in, sel, r, grp, &el, &eb);
            EXPECT(l == el && b == eb, "%s meta [%s] warp %d row %d group %d: lane %d bit %d, PTX lane %d bit %d",
                   in->name, vn, w, (w < 0 ? 0 : 16 * w) + r, grp, l, b, el, eb);
            if (l >= 0 && l < 32 && b >= 0 && b < 32 && b % 4 == 0)
                hitM[l * 8 + b / 4]++;
        }
    const int per = s->n_meta / 4;
    for (int l = 0; l < 32; l++)
        for (int nib = 0; nib < 8; nib++) {
            int t = l & 3, selected = t >= sel * per && t < sel * per + per;
            EXPECT(hitM[l * 8 + nib] == selected, "%s meta [%s] warp %d: lane %d nibble %d hit %d times", in->name, vn,
                   w, l, nib, hitM[l * 8 + nib]);
        }
}

static int check_sparse(const mf_instr *in)
{
    int checked = 0;
    for (int sel = 0; sel < 4; sel++) {
        const char *vn = sel ? mf_sp_variants[sel - 1] : "";
        mf_variant var;
        mf_wrap_shape s;
        int legal = sel < (in->n_meta == 4 ? 4 : in->n_meta == 8 ? 2 : 1);   /* PTX: 0..3, 0..1 or 0 */
        int ok = !mf_variant_parse(in, vn, &var) && !mf_wrap_shape_of(in, &var, &s);
        EXPECT(ok == legal, "%s: selector %d %s", in->name, sel, ok ? "accepted" : "refused");
        if (!ok)
            continue;
        int G = in->fa == MF_FMT_TF32 ? 2 : (in->fa == MF_FMT_S4 || in->fa == MF_FMT_U4) ? 8 : 4;
        EXPECT(s.sel == sel && s.n_meta == in->k / G && s.sp_group == G, "%s [%s]: sel %d n_meta %d", in->name, vn,
               s.sel, s.n_meta);
        /* A packed, B, C/D: bijections that agree with the formulas above */
        int ka = in->k / 2, hitA[16 * 64] = {0}, hitB[128 * 8] = {0};
        for (int lane = 0; lane < 32; lane++) {
            for (int e = 0; e < (1 << s.a.nbits); e++) {
                int r, c, er, ec;
                mf_frag_pos(&s.a, 0, lane, e, &r, &c);
                ptx_sp_a(in, lane, e, &er, &ec);
                EXPECT(r == er && c == ec, "%s A: lane %d elem %d at (%d,%d), PTX (%d,%d)", in->name, lane, e, r, c, er, ec);
                if (r >= 0 && r < 16 && c >= 0 && c < ka)
                    hitA[r * ka + c]++;
            }
            for (int e = 0; e < (1 << s.b.nbits); e++) {
                int r, c, er, ec;
                mf_frag_pos(&s.b, 0, lane, e, &r, &c);
                ptx_sp_b(in, lane, e, &er, &ec);
                EXPECT(r == er && c == ec, "%s B: lane %d elem %d at (%d,%d), PTX (%d,%d)", in->name, lane, e, r, c, er, ec);
                if (r >= 0 && r < in->k && c >= 0 && c < 8)
                    hitB[r * 8 + c]++;
            }
        }
        for (int q = 0; q < 16 * ka; q++)
            EXPECT(hitA[q] == 1, "%s packed A (%d,%d) hit %d times", in->name, q / ka, q % ka, hitA[q]);
        for (int q = 0; q < in->k * 8; q++)
            EXPECT(hitB[q] == 1, "%s B (%d,%d) hit %d times", in->name, q / 8, q % 8, hitB[q]);
        check_layout("C/D", in, vn, &s.cd, 32, in->m, in->n, 2);
        /* metadata: (row, group) -> (lane, bit) as measured (ptx_sp_meta),
         * and a bijection onto the 8 nibbles of each thread the selector names */
        check_sp_meta(in, vn, &s, sel, -1);
        char buf[160], sass[96];
        EXPECT(!mf_ptx_text(in, &var, buf, sizeof buf) && !mf_sass_expect(in, &var, sass, sizeof sass),
               "%s: no PTX text", in->name);
        checked++;
    }
    /* packed -> logical columns (PTX: packed element i of a group is the one
     * its i-th index names): 2:4 nibble 0x2 = (2, 0), 0xd = (1, 3); tf32 0xe */
    static const unsigned char m24[2] = {0x2, 0xd}, mtf[2] = {0x4, 0xe};
    EXPECT(mf_sp_logical_col(4, m24, 0) == 2 && mf_sp_logical_col(4, m24, 1) == 0 && mf_sp_logical_col(4, m24, 2) == 5 &&
               mf_sp_logical_col(4, m24, 3) == 7,
           "packed -> logical columns, 2:4");
    EXPECT(mf_sp_logical_col(2, mtf, 0) == 0 && mf_sp_logical_col(2, mtf, 1) == 3, "packed -> logical columns, tf32");
    /* s4/u4 (4:8 by pairs): nibble 0xd keeps pairs 1 and 3 of group 0 (elements
     * 2, 3, 6, 7), 0x2 pairs 2 and 0 of group 1 (elements 12, 13, 8, 9) */
    static const unsigned char m48[2] = {0xd, 0x2};
    static const int want48[8] = {2, 3, 6, 7, 12, 13, 8, 9};
    for (int pc = 0; pc < 8; pc++)
        EXPECT(mf_sp_logical_col(8, m48, pc) == want48[pc], "packed -> logical columns, 4:8 pairs: %d -> %d, expected %d",
               pc, mf_sp_logical_col(8, m48, pc), want48[pc]);
    return checked;
}

/* wgmma.mma_async.sp (PTX ISA 9.7.15.6): every variant a row is built in.
 * The register A (a_reg) is the packed M x K/2 matrix, each warp its 16 rows
 * in sparse mma's fragment of the same types (9.7.15.6.2: "four .b32
 * registers, two non-zero f16 out of 4 consecutive" / "four non-zero
 * e4m3/s8 out of eight consecutive" each; tf32 as sparse m16n8k16 tf32):
 * ptx_sp_a with the logical K of the mma.sp row of the same A bytes (f16
 * k32, tf32 k16, 8-bit k64 as here), plus 16 * warp.  D as dense wgmma.  The
 * metadata as sparse mma's figures per warp (ptx_sp_meta).  Selector 0..1
 * for f16/bf16/tf32, 0 for fp8 and s8/u8 (the table of 9.7.15.6.3). */
static int check_wgmma_sp(const mf_instr *in)
{
    int checked = 0, nsel = in->fa == MF_FMT_F16 || in->fa == MF_FMT_BF16 || in->fa == MF_FMT_TF32 ? 2 : 1;
    const int KP = in->k / 2;
    const char *const *vl = mf_wgmma_sp_variants(in);
    EXPECT(in->m == 64 && in->n_meta == (in->fa == MF_FMT_TF32 ? in->k / 2 : in->k / 4), "%s: shape", in->name);
    for (int pass = 0; pass < 2; pass++)
        for (int v = 0; pass ? mf_wgmma_form_variants[v] != NULL : vl[v] != NULL; v++) {
            const char *vn = pass ? mf_wgmma_form_variants[v] : vl[v];
            int f16ish = in->fa == MF_FMT_F16 || in->fa == MF_FMT_BF16;
            int want = !pass ? 1 : !strncmp(vn, "trans_", 6) ? f16ish : !mf_format_is_int(in->fa) || !strcmp(vn, "no_c");
            mf_variant var;
            mf_wrap_shape s;
            int ok = !mf_variant_parse(in, vn, &var) && !mf_wrap_shape_of(in, &var, &s);
            EXPECT(ok == want, "%s: variant '%s' %s", in->name, vn, ok ? "accepted" : "refused");
            if (!ok)
                continue;
            int sel = !strcmp(vn, "sel1");
            EXPECT(s.kind == MF_PTX_WGMMA_SP && s.threads == 128 && s.sel == sel && s.n_meta == in->n_meta &&
                       s.sp_group == in->sp_group && s.n == (strstr(vn, "n256") ? 256 : 8) &&
                       s.a_in_regs == (strstr(vn, "a_reg") != NULL),
                   "%s [%s]: kind %d threads %d sel %d n %d a_reg %d", in->name, vn, s.kind, s.threads, s.sel, s.n,
                   s.a_in_regs);
            /* the register A: a bijection onto the packed 64 x K/2, as the PTX formula */
            if (s.a_in_regs) {
                int *hit = calloc((size_t)64 * KP, sizeof *hit);
                for (int th = 0; th < 128; th++)
                    for (int e = 0; e < (1 << s.a.nbits); e++) {
                        int r, c, er, ec;
                        mf_frag_pos(&s.a, th >> 5, th & 31, e, &r, &c);
                        ptx_sp_a(in, th & 31, e, &er, &ec);
                        er += 16 * (th >> 5);
                        EXPECT(r == er && c == ec, "%s A [%s]: thread %d elem %d at (%d,%d), PTX (%d,%d)", in->name, vn, th,
                               e, r, c, er, ec);
                        if (r >= 0 && r < 64 && c >= 0 && c < KP)
                            hit[r * KP + c]++;
                    }
                for (int i = 0; i < 64 * KP; i++)
                    EXPECT(hit[i] == 1, "%s A [%s]: packed (%d,%d) hit %d times", in->name, vn, i / KP, i % KP, hit[i]);
                free(hit);
            }
            check_layout("C/D", in, vn, &s.cd, 128, 64, s.n, 2);
            /* the metadata: each warp's 16 rows onto the nibbles of the threads
             * the selector names, once each, as the PTX figures */
            for (int w = 0; w < 4; w++)
                check_sp_meta(in, vn, &s, sel, w);
            char buf[160], sass[96], sl[32];
            EXPECT(!mf_ptx_text(in, &var, buf, sizeof buf) && !mf_sass_expect(in, &var, sass, sizeof sass) &&
                       !mf_sass_sp_selector(in, &var, sl, sizeof sl),
                   "%s [%s]: no PTX text / SASS", in->name, vn);
            checked++;
        }
    mf_variant bad;
    EXPECT((mf_variant_parse(in, "sel1", &bad) == 0) == (nsel == 2), "%s: selector 1 %s", in->name,
           nsel == 2 ? "refused" : "accepted");
    EXPECT(mf_variant_parse(in, "sel2", &bad) != 0 && mf_variant_parse(in, "sel1,a_reg", &bad) != 0,
           "%s: selector 2 or a selector with a_reg accepted", in->name);
    return checked;
}

/* tcgen05 (layout.h), from the PTX ISA text, not from layout.c:
 *  - D of M = 64 read by tcgen05.ld.16x256b.x1: thread t of warp w, register
 *    i: TMEM lane 32w + t/4 + 8*(i/2), column 2*(t%4) + i%2; data path layout
 *    of M = 64, cta_group::1: D row r at lane 32*(r/16) + r%16; so row 16w +
 *    t/4 + 8*(i/2).  M = 128 by tcgen05.ld.32x32b.x8: lane 32w + t = row,
 *    register i = column i;
 *  - the row image: every bit of every element lands once, inside the 32
 *    bytes, padding bits are those the PTX "unpacked" form leaves empty (the
 *    last 4 bytes of each 16-byte slot for e3m2/e2m3, the last 8 for e2m1);
 *  - the instruction descriptor, bit by bit, for rows written out here. */
static void tcgen05_d_pos(int m, int warp, int lane, int i, int *row, int *col)
{
    if (m == 64) {
        *row = 16 * warp + lane / 4 + 8 * (i / 2);
        *col = 2 * (lane % 4) + i % 2;
    } else {
        *row = 32 * warp + lane;
        *col = i;
    }
}

static void check_tcgen05_row_image(int bits, int padded, int K)
{
    int hit[256] = {0};
    for (int k = 0; k < K; k++)
        for (int b = 0; b < bits; b++) {
            int p = mf_tcgen05_row_bit(k, b, bits, padded), eb = -1;
            EXPECT(p >= 0 && p < 256, "tcgen05 row image (%d bits, pad %d): element %d bit %d at %d", bits, padded, k, b, p);
            if (p < 0 || p >= 256)
                continue;
            hit[p]++;
            EXPECT(mf_tcgen05_row_elem(p, bits, padded, &eb) == k && eb == b,
                   "tcgen05 row image (%d bits): the inverse of element %d bit %d", bits, k, b);
            /* PTX: 16 elements low bits first into the first 2*bits bytes of each 16-byte slot */
            int want = padded ? (k / 16) * 128 + (k % 16) * bits + b : k * bits + b;
            EXPECT(p == want, "tcgen05 row image (%d bits, pad %d): element %d bit %d at %d, PTX %d", bits, padded, k, b, p,
                   want);
        }
    for (int p = 0; p < 256; p++) {
        int used = !padded || p % 128 < 16 * bits, eb;
        EXPECT(hit[p] == used, "tcgen05 row image (%d bits, pad %d): bit %d hit %d times", bits, padded, p, hit[p]);
        if (!used)
            EXPECT(mf_tcgen05_row_elem(p, bits, padded, &eb) == -1, "padding bit %d not padding", p);
    }
}

static int check_tcgen05(const mf_instr *in)
{
    mf_variant var;
    mf_wrap_shape s;
    EXPECT(!mf_variant_parse(in, "", &var) && !mf_wrap_shape_of(in, &var, &s), "%s: no tcgen05 shape", in->name);
    EXPECT(mf_variant_parse(in, "n256", &var) != 0, "%s: tcgen05 takes no variant", in->name);
    mf_variant_parse(in, "", &var);
    mf_wrap_shape_of(in, &var, &s);
    EXPECT(s.threads == 128 && s.n == 8 && (in->n_scales ? in->m == 128 : in->m == 64), "%s: shape", in->name);
    int hit[128 * 8] = {0};
    for (int th = 0; th < 128; th++)
        for (int e = 0; e < (1 << s.cd.nbits); e++) {
            int r, c, er, ec;
            mf_frag_pos(&s.cd, th >> 5, th & 31, e, &r, &c);
            tcgen05_d_pos(in->m, th >> 5, th & 31, e, &er, &ec);
            EXPECT(r == er && c == ec, "%s D: thread %d register %d at (%d,%d), PTX (%d,%d)", in->name, th, e, r, c, er, ec);
            if (r >= 0 && r < in->m && c >= 0 && c < 8)
                hit[r * 8 + c]++;
        }
    for (int i = 0; i < in->m * 8; i++)
        EXPECT(hit[i] == 1, "%s D: (%d,%d) hit %d times", in->name, i / 8, i % 8, hit[i]);
    /* K elements fill the 32-byte row exactly (padded sub-byte: 16 to a 16-byte slot) */
    int per_slot_a = s.a_pad ? 16 : 128 / s.a_bits, per_slot_b = s.b_pad ? 16 : 128 / s.b_bits;
    EXPECT(in->k == 2 * per_slot_a && in->k == 2 * per_slot_b, "%s: K = %d does not fill 32 bytes", in->name, in->k);
    check_tcgen05_row_image(s.a_bits, s.a_pad, in->k);
    check_tcgen05_row_image(s.b_bits, s.b_pad, in->k);
    /* scales: rows 0..M-1 (and 0..7 of B) onto distinct (column, lane) */
    if (in->n_scales) {
        int sh[4 * 32] = {0};
        for (int r = 0; r < in->m; r++) {
            int c, l;
            mf_tcgen05_sf_pos(r, &c, &l);
            EXPECT(c == r / 32 && l == r % 32, "%s: scale row %d at column %d lane %d", in->name, r, c, l);
            if (c >= 0 && c < 4 && l >= 0 && l < 32)
                sh[c * 32 + l]++;
        }
        for (int i = 0; i < 128; i++)
            EXPECT(sh[i] == 1, "%s: scale slot %d hit %d times", in->name, i, sh[i]);
        EXPECT(s.scale_vec == in->k / in->block && s.tmem_cols == 128, "%s: scale_vec %d", in->name, s.scale_vec);
    }
    return 1;
}

int main(void)
{
    int rows_checked = 0, tcgen05_rows = 0;
    for (size_t i = 0; i < mf_instr_count; i++) {
        const mf_instr *in = &mf_instr_table[i];
        mf_ptx_kind kind = mf_ptx_kind_of(in, NULL);
        if (kind == MF_PTX_NONE)
            continue;
        if (kind == MF_PTX_MMA_SP) {
            rows_checked += check_sparse(in);
            continue;
        }
        if (kind == MF_PTX_WGMMA_SP) {
            rows_checked += check_wgmma_sp(in);
            continue;
        }
        if (kind == MF_PTX_TCGEN05) {
            rows_checked += check_tcgen05(in);
            tcgen05_rows++;
            continue;
        }
        for (int v = 0; kind == MF_PTX_WGMMA ? mf_wgmma_variants[v] != NULL : v == 0; v++) {
            const char *vn = kind == MF_PTX_WGMMA ? mf_wgmma_variants[v] : "";
            mf_variant var;
            mf_wrap_shape s;
            EXPECT(!mf_variant_parse(in, vn, &var) && !mf_wrap_shape_of(in, &var, &s), "%s: variant '%s' not parsed",
                   in->name, vn);
            if (kind == MF_PTX_WGMMA) {
                if (s.a_in_regs)
                    check_layout("A", in, vn, &s.a, 128, 64, in->k, 0);
                check_layout("C/D", in, vn, &s.cd, 128, 64, s.n, 2);
                EXPECT(s.n == (strstr(vn, "n256") ? 256 : 8), "%s [%s]: N = %d", in->name, vn, s.n);
            } else {
                check_layout("A", in, vn, &s.a, 32, in->m, in->k, 0);
                check_layout("B", in, vn, &s.b, 32, in->k, in->n, 1);
                check_layout("C/D", in, vn, &s.cd, 32, in->m, in->n, 2);
            }
            rows_checked++;
        }
        /* the operand-form variants: N = 8, A from shared memory, the flags of
         * their names; negation only for floating-point rows (PTX ISA: integer
         * wgmma has no imm-scale-a/b) */
        for (int v = 0; kind == MF_PTX_WGMMA && mf_wgmma_form_variants[v]; v++) {
            const char *vn = mf_wgmma_form_variants[v];
            mf_variant var;
            mf_wrap_shape s;
            int f16ish = (in->fa == MF_FMT_F16 || in->fa == MF_FMT_BF16) && (in->fb == MF_FMT_F16 || in->fb == MF_FMT_BF16);
            int want = !strncmp(vn, "trans_", 6) ? f16ish : !mf_format_is_int(in->fa) || !strcmp(vn, "no_c");
            int ok = !mf_variant_parse(in, vn, &var) && !mf_wrap_shape_of(in, &var, &s);
            EXPECT(ok == want, "%s: variant '%s' %s", in->name, vn, ok ? "accepted" : "refused");
            if (!ok)
                continue;
            EXPECT(s.n == 8 && !s.a_in_regs, "%s [%s]: N = %d, A in registers %d", in->name, vn, s.n, s.a_in_regs);
            EXPECT(var.neg_a == (strstr(vn, "neg_a") != NULL || !strcmp(vn, "neg_ab")) &&
                       var.neg_b == (!strcmp(vn, "neg_b") || !strcmp(vn, "neg_ab")) && var.no_c == !strcmp(vn, "no_c") &&
                       var.trans_a == (!strcmp(vn, "trans_a") || !strcmp(vn, "trans_ab")) &&
                       var.trans_b == (!strcmp(vn, "trans_b") || !strcmp(vn, "trans_ab")),
                   "%s [%s]: flags %d %d %d %d %d", in->name, vn, var.neg_a, var.neg_b, var.no_c, var.trans_a,
                   var.trans_b);
            EXPECT(mf_variant_changes_arithmetic(vn) == (var.neg_a || var.neg_b || var.no_c), "%s [%s]: changes arithmetic",
                   in->name, vn);
            mf_instr mr;
            EXPECT(!mf_variant_model_row(in, vn, &mr) && mr.neg_a == var.neg_a && mr.neg_b == var.neg_b &&
                       mr.no_c == var.no_c && mr.no_c_neg_zero == 0,
                   "%s [%s]: model row flags", in->name, vn);
            rows_checked++;
        }
    }
    {
        mf_variant bad;
        const mf_instr *fr = mf_instr_find("hopper/wgmma.m64n8k16.f32.f16.f16");
        EXPECT(fr && mf_variant_parse(fr, "neg_c", &bad) != 0, "unknown form variant accepted");
        EXPECT(fr && mf_variant_parse(mf_instr_find("hopper/mma.m16n8k32.s32.s8.s8.s32"), "no_c", &bad) != 0,
               "mma.sync takes no variant");
    }
    EXPECT(rows_checked >= 40, "only %d wrapped (row, variant) pairs", rows_checked);
    check_smem(64, 32);
    check_smem(8, 32);
    check_smem(256, 32);
    check_smem_mn(64, 16, 2);
    check_smem_mn(8, 16, 2);
    check_smem_mn(256, 16, 2);
    /* wgmma.sp: B of the logical K, 64 bytes a row (f16 K = 32, tf32 16, 8-bit 64) */
    check_smem(8, 64);
    check_smem(256, 64);
    check_smem_mn(8, 32, 2);
    check_smem_mn(256, 32, 2);
    /* descriptor bits (DOMAIN 8): 0-13 start >> 4, 16-29 LBO >> 4, 32-45 SBO >> 4 */
    uint64_t d = mf_wgmma_desc(0x1230, 128, 256);
    EXPECT(d == ((uint64_t)0x123 | ((uint64_t)8 << 16) | ((uint64_t)16 << 32)), "descriptor 0x%llx",
           (unsigned long long)d);
    EXPECT(mf_wgmma_desc(0x40000 + 0x10, 0, 0) == 1, "start address keeps 18 bits");
    /* the PTX text of two rows, from the PTX ISA syntax */
    char buf[160];
    mf_variant v;
    const mf_instr *r1 = mf_instr_find("hopper/mma.m16n8k16.f32.f16.f16.f32");
    mf_variant_parse(r1, NULL, &v);
    mf_ptx_text(r1, &v, buf, sizeof buf);
    EXPECT(!strcmp(buf, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"), "PTX text '%s'", buf);
    const mf_instr *r2 = mf_instr_find("hopper/wgmma.m64n8k32.f16.e4m3.e5m2");
    mf_variant_parse(r2, "n256,a_reg", &v);
    mf_ptx_text(r2, &v, buf, sizeof buf);
    EXPECT(!strcmp(buf, "wgmma.mma_async.sync.aligned.m64n256k32.f16.e4m3.e5m2"), "PTX text '%s'", buf);
    /* rows whose PTX text and SASS are known by hand, one table: the integer
     * and b1 rows (PTX text from the PTX ISA syntax; the b1 rows' k is K/32
     * words, the text keeps the PTX K; SASS as ptxas 13.0 writes it for
     * sm_90a, cuobjdump --dump-sass of a test kernel per form), then the
     * sparse ones */
    static const struct {
        const char *row, *variant, *ptx, *sass;
    } known[] = {
        {"hopper/mma.m16n8k32.satfinite.s32.s8.u8.s32", "", "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.u8.s32",
         "IMMA.16832.S8.U8.SAT"},
        {"hopper/mma.m8n8k16.s32.u8.s8.s32", "", "mma.sync.aligned.m8n8k16.row.col.s32.u8.s8.s32", "IMMA.8816.U8.S8"},
        {"hopper/mma.m16n8k64.satfinite.s32.s4.u4.s32", "", "mma.sync.aligned.m16n8k64.row.col.satfinite.s32.s4.u4.s32",
         "IMMA.16832.S8.U8"},
        {"hopper/mma.m8n8k32.s32.u4.u4.s32", "", "mma.sync.aligned.m8n8k32.row.col.s32.u4.u4.s32", "IMMA.8816.U8.U8"},
        {"hopper/mma.m16n8k256.s32.b1.b1.s32.xor.popc", "", "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc",
         "BMMA.168256.AND.POPC"},
        {"hopper/mma.m8n8k128.s32.b1.b1.s32.and.popc", "", "mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.and.popc",
         "BMMA.88128.AND.POPC"},
        {"hopper/wgmma.m64n8k32.s32.s8.u8.satfinite", "", "wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.u8.satfinite",
         "IGMMA.64x8x32.S8.U8.SAT"},
        {"hopper/wgmma.m64n8k256.s32.b1.b1.and.popc", "n256", "wgmma.mma_async.sync.aligned.m64n256k256.s32.b1.b1.and.popc",
         "BGMMA.64x256x256.AND.POPC"},
        /* sparse rows: PTX text from the PTX ISA syntax, SASS as ptxas 13.0
         * writes it for sm_80 and sm_90a (cuobjdump --dump-sass of a test kernel) */
        {"hopper/mma.sp.m16n8k16.f32.f16.f16.f32", "sel3", "mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
         "HMMA.SP.16816.F32"},
        {"hopper/mma.sp::ordered_metadata.m16n8k32.f32.bf16.bf16.f32", "sel1",
         "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32", "HMMA.SP.16832.F32.BF16"},
        {"hopper/mma.sp.m16n8k8.f32.tf32.tf32.f32", "", "mma.sp.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
         "HMMA.SP.1688.F32.TF32"},
        {"hopper/mma.sp.m16n8k32.f16.f16.f16.f16", "", "mma.sp.sync.aligned.m16n8k32.row.col.f16.f16.f16.f16",
         "HMMA.SP.16832.F16"},
        /* integer: s8/u8 native everywhere; s4/u4 native on sm_80/sm_89, on
         * sm_90a two IMMA.SP of half the K on unpacked int8 (no .SAT: SEL) */
        {"hopper/mma.sp.m16n8k32.satfinite.s32.u8.s8.s32", "sel1",
         "mma.sp.sync.aligned.m16n8k32.row.col.satfinite.s32.u8.s8.s32", "IMMA.SP.16832.U8.S8.SAT"},
        {"hopper/mma.sp::ordered_metadata.m16n8k64.s32.s8.s8.s32", "",
         "mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.s32.s8.s8.s32", "IMMA.SP.16864.S8.S8"},
        {"hopper/mma.sp.m16n8k64.satfinite.s32.u4.s4.s32", "sel1",
         "mma.sp.sync.aligned.m16n8k64.row.col.satfinite.s32.u4.s4.s32", "IMMA.SP.16832.U8.S8"},
        {"hopper/mma.sp.m16n8k128.s32.s4.u4.s32", "", "mma.sp.sync.aligned.m16n8k128.row.col.s32.s4.u4.s32",
         "IMMA.SP.16864.S8.U8"},
        {"ampere/mma.sp.m16n8k128.satfinite.s32.u4.s4.s32", "",
         "mma.sp.sync.aligned.m16n8k128.row.col.satfinite.s32.u4.s4.s32", "IMMA.SP.168128.U4.S4.SAT"},
        {"ada/mma.sp::ordered_metadata.m16n8k64.s32.s4.s4.s32", "sel1",
         "mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32", "IMMA.SP.16864.S4.S4"},
        /* fp8 on sm_90a: two HMMA.SP.16832.F32 on f16 */
        {"hopper/mma.sp.m16n8k64.f32.e4m3.e5m2.f32", "", "mma.sp.sync.aligned.m16n8k64.row.col.f32.e4m3.e5m2.f32",
         "HMMA.SP.16832.F32"},
    };
    for (size_t q = 0; q < sizeof known / sizeof known[0]; q++) {
        const mf_instr *ri = mf_instr_find(known[q].row);
        EXPECT(ri != NULL, "%s: no such row", known[q].row);
        if (!ri)
            continue;
        char sass[96];
        EXPECT(!mf_variant_parse(ri, known[q].variant, &v) && !mf_ptx_text(ri, &v, buf, sizeof buf) &&
                   !strcmp(buf, known[q].ptx),
               "%s: PTX text '%s', expected '%s'", known[q].row, buf, known[q].ptx);
        EXPECT(!mf_sass_expect(ri, &v, sass, sizeof sass) && !strcmp(sass, known[q].sass), "%s: SASS '%s', expected '%s'",
               known[q].row, sass, known[q].sass);
    }
    /* wgmma.sp: PTX text from the PTX ISA syntax (9.7.15.6.3; .satfinite after
     * the shape), SASS and selector as ptxas 13.0 writes them for sm_90a
     * (cuobjdump of a kernel per form: the selector an immediate before gsb0
     * on HGMMA.SP, none on QGMMA.SP / IGMMA.SP) */
    static const struct {
        const char *row, *variant, *ptx, *sass, *sel;
    } wsp[] = {
        {"hopper/wgmma.sp.m64n8k32.f32.f16.f16", "sel1", "wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16",
         "HGMMA.SP.64x8x32.F32", "sel=0x1"},
        {"hopper/wgmma.sp.m64n8k32.f16.f16.f16", "n256", "wgmma.mma_async.sp.sync.aligned.m64n256k32.f16.f16.f16",
         "HGMMA.SP.64x256x32.F16", "sel=0x0"},
        {"hopper/wgmma.sp.m64n8k32.f32.bf16.bf16", "a_reg", "wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.bf16.bf16",
         "HGMMA.SP.64x8x32.F32.BF16", "sel=0x0"},
        {"hopper/wgmma.sp.m64n8k16.f32.tf32.tf32", "sel1", "wgmma.mma_async.sp.sync.aligned.m64n8k16.f32.tf32.tf32",
         "HGMMA.SP.64x8x16.F32.TF32", "sel=0x1"},
        {"hopper/wgmma.sp.m64n8k64.f32.e4m3.e5m2", "", "wgmma.mma_async.sp.sync.aligned.m64n8k64.f32.e4m3.e5m2",
         "QGMMA.SP.64x8x64.F32.E4M3.E5M2", "-"},
        {"hopper/wgmma.sp.m64n8k64.f16.e5m2.e5m2", "n256,a_reg", "wgmma.mma_async.sp.sync.aligned.m64n256k64.f16.e5m2.e5m2",
         "QGMMA.SP.64x256x64.F16.E5M2.E5M2", "-"},
        {"hopper/wgmma.sp.m64n8k64.satfinite.s32.s8.u8", "", "wgmma.mma_async.sp.sync.aligned.m64n8k64.satfinite.s32.s8.u8",
         "IGMMA.SP.64x8x64.S8.U8.SAT", "-"},
        {"hopper/wgmma.sp.m64n8k64.s32.u8.u8", "no_c", "wgmma.mma_async.sp.sync.aligned.m64n8k64.s32.u8.u8",
         "IGMMA.SP.64x8x64.U8.U8", "-"},
    };
    for (size_t q = 0; q < sizeof wsp / sizeof wsp[0]; q++) {
        const mf_instr *ri = mf_instr_find(wsp[q].row);
        char sass[96], sel[32] = "";
        EXPECT(ri && mf_ptx_kind_of(ri, NULL) == MF_PTX_WGMMA_SP && !mf_variant_parse(ri, wsp[q].variant, &v) &&
                   !mf_ptx_text(ri, &v, buf, sizeof buf) && !strcmp(buf, wsp[q].ptx),
               "%s [%s]: PTX text '%s', expected '%s'", wsp[q].row, wsp[q].variant, buf, wsp[q].ptx);
        EXPECT(ri && !mf_sass_expect(ri, &v, sass, sizeof sass) && !strcmp(sass, wsp[q].sass),
               "%s [%s]: SASS '%s', expected '%s'", wsp[q].row, wsp[q].variant, sass, wsp[q].sass);
        EXPECT(ri && !mf_sass_sp_selector(ri, &v, sel, sizeof sel) && !strcmp(sel, wsp[q].sel),
               "%s [%s]: selector '%s', expected '%s'", wsp[q].row, wsp[q].variant, sel, wsp[q].sel);
    }
    /* the selector the SASS shows (cuobjdump of ptxas 13.0 output): the
     * variant's, except plain .sp f16 on sm_100a/sm_120a (metadata moved by
     * SHFL, selector 0) */
    static const struct {
        const char *row, *variant, *sel;
    } sels[] = {
        {"hopper/mma.sp.m16n8k16.f32.f16.f16.f32", "sel3", "sel=0x3"},
        {"ampere/mma.sp.m16n8k32.f16.f16.f16.f16", "sel1", "sel=0x1"},
        {"blackwell/mma.sp.m16n8k16.f32.f16.f16.f32", "sel3", "sel=0x0,SHFL"},
        {"blackwell/mma.sp::ordered_metadata.m16n8k16.f32.f16.f16.f32", "sel3", "sel=0x3"},
        {"rtx_blackwell/mma.sp.m16n8k16.f32.bf16.bf16.f32", "sel2", "sel=0x2"},
        {"hopper/mma.m16n8k16.f32.f16.f16.f32", "", "-"},
        /* integer: the variant's selector on sm_80..sm_90a; on sm_100a/sm_120a
         * SHFL and selector 0 for every .sp, and for s4/u4 ::ordered_metadata */
        {"hopper/mma.sp.m16n8k32.s32.s8.s8.s32", "sel1", "sel=0x1"},
        {"hopper/mma.sp::ordered_metadata.m16n8k64.s32.u4.u4.s32", "sel1", "sel=0x1"},
        {"ampere/mma.sp.m16n8k64.s32.s4.s4.s32", "sel1", "sel=0x1"},
        {"blackwell/mma.sp.m16n8k32.s32.s8.s8.s32", "sel1", "sel=0x0,SHFL"},
        {"blackwell/mma.sp::ordered_metadata.m16n8k32.s32.s8.s8.s32", "sel1", "sel=0x1"},
        {"rtx_blackwell/mma.sp::ordered_metadata.m16n8k64.s32.s4.s4.s32", "sel1", "sel=0x0,SHFL"},
        {"rtx_blackwell/mma.sp::ordered_metadata.m16n8k64.s32.s8.s8.s32", "", "sel=0x0"},
        {"hopper/mma.sp::ordered_metadata.m16n8k64.f32.e5m2.e5m2.f32", "", "-"},   /* selectors 0 and 1 of its own */
    };
    for (size_t q = 0; q < sizeof sels / sizeof sels[0]; q++) {
        const mf_instr *ri = mf_instr_find(sels[q].row);
        char sel[32] = "";
        EXPECT(ri && !mf_variant_parse(ri, sels[q].variant, &v) && !mf_sass_sp_selector(ri, &v, sel, sizeof sel) &&
                   !strcmp(sel, sels[q].sel),
               "%s [%s]: selector '%s', expected '%s'", sels[q].row, sels[q].variant, sel, sels[q].sel);
    }
    {
        mf_variant bad;
        EXPECT(mf_variant_parse(mf_instr_find("hopper/mma.sp.m16n8k32.f32.f16.f16.f32"), "sel2", &bad) != 0,
               "m16n8k32 takes selectors 0 and 1 only");
        EXPECT(mf_variant_parse(mf_instr_find("hopper/mma.m16n8k16.f32.f16.f16.f32"), "sel1", &bad) != 0,
               "a dense mma takes no selector");
        EXPECT(mf_variant_parse(mf_instr_find("hopper/mma.sp.m16n8k64.s32.s8.s8.s32"), "sel1", &bad) != 0,
               "s8 m16n8k64 takes selector 0 only");
        EXPECT(mf_variant_parse(mf_instr_find("hopper/mma.sp.m16n8k128.s32.u4.u4.s32"), "sel1", &bad) != 0,
               "s4 m16n8k128 takes selector 0 only");
        EXPECT(mf_variant_parse(mf_instr_find("hopper/mma.sp.m16n8k64.s32.u4.u4.s32"), "sel1", &bad) == 0,
               "s4 m16n8k64 takes selector 1");
    }
    /* tcgen05: every Blackwell tcgen05 row of the table is wrapped (84 rows:
     * tf32, f16/bf16, the 25 f8f6f4 pairs x f32/f16 D, 25 mxf8f6f4 pairs,
     * mxf4, mxf4nvf4 with ue8m0 and ue4m3) */
    {
        int bw = 0;
        for (size_t i = 0; i < mf_instr_count; i++)
            bw += mf_instr_table[i].arch == MF_ARCH_BLACKWELL && !strncmp(mf_instr_table[i].qualifier, "tcgen05.", 8);
        EXPECT(bw == 84, "%d blackwell tcgen05 rows", bw);
        EXPECT(tcgen05_rows >= bw, "%d tcgen05 rows wrapped of %d", tcgen05_rows, bw);
    }
    /* descriptor: the wgmma fields plus 0b001 at bits 46-48 (PTX ISA, tcgen05 shared memory descriptor) */
    EXPECT(mf_tcgen05_desc(0x1230, 128, 256) == ((uint64_t)0x123 | ((uint64_t)8 << 16) | ((uint64_t)16 << 32) |
                                                 ((uint64_t)1 << 46)),
           "tcgen05 descriptor 0x%llx", (unsigned long long)mf_tcgen05_desc(0x1230, 128, 256));
    /* instruction descriptors written out from the PTX ISA tables (layout.h), PTX text, SASS (ptxas 13.0) */
    static const struct {
        const char *row;
        unsigned idesc;
        const char *ptx, *sass;
    } tc[] = {
        /* f16: D F32 (1 << 4), A F16 0, B BF16 1 << 10, N 8 >> 3 = 1 << 17, M 64 >> 4 = 4 << 24 */
        {"blackwell/tcgen05.mma.m64n8k16.f32.f16.bf16", (1u << 4) | (1u << 10) | (1u << 17) | (4u << 24),
         "tcgen05.mma.cta_group::1.kind::f16", "UTCHMMA"},
        /* f16 D: dtype 0 */
        {"blackwell/tcgen05.mma.m64n8k16.f16.f16.f16", (1u << 17) | (4u << 24), "tcgen05.mma.cta_group::1.kind::f16",
         "UTCHMMA"},
        /* tf32: A and B 2 */
        {"blackwell/tcgen05.mma.m64n8k8.f32.tf32.tf32", (1u << 4) | (2u << 7) | (2u << 10) | (1u << 17) | (4u << 24),
         "tcgen05.mma.cta_group::1.kind::tf32", "UTCHMMA"},
        /* f8f6f4: E3M2 4, E2M1 5 */
        {"blackwell/tcgen05.mma.m64n8k32.f16.e3m2.e2m1", (4u << 7) | (5u << 10) | (1u << 17) | (4u << 24),
         "tcgen05.mma.cta_group::1.kind::f8f6f4", "UTCQMMA"},
        /* mxf8f6f4: E5M2 1, E2M3 3, UE8M0 (1 << 23), M 128 >> 4 = 8 << 24 */
        {"blackwell/tcgen05.mma.block_scale.m128n8k32.block32.f32.e5m2.e2m3.ue8m0",
         (1u << 7) | (3u << 10) | (1u << 17) | (1u << 23) | (8u << 24),
         "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X", "UTCQMMA"},
        /* mxf4: E2M1 is 1 in the mxf4 kinds */
        {"blackwell/tcgen05.mma.block_scale.m128n8k64.block32.f32.e2m1.e2m1.ue8m0",
         (1u << 7) | (1u << 10) | (1u << 17) | (1u << 23) | (8u << 24),
         "tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X", "UTCOMMA"},
        /* mxf4nvf4 with UE4M3 scales: bit 23 clear */
        {"blackwell/tcgen05.mma.block_scale.m128n8k64.block16.f32.e2m1.e2m1.ue4m3",
         (1u << 7) | (1u << 10) | (1u << 17) | (8u << 24),
         "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X", "UTCOMMA.4X"},
    };
    for (size_t q = 0; q < sizeof tc / sizeof tc[0]; q++) {
        const mf_instr *ri = mf_instr_find(tc[q].row);
        char sass[96] = "";
        mf_wrap_shape s;
        EXPECT(ri && mf_ptx_kind_of(ri, NULL) == MF_PTX_TCGEN05 && !mf_variant_parse(ri, "", &v) &&
                   !mf_wrap_shape_of(ri, &v, &s) && s.idesc == tc[q].idesc,
               "%s: instruction descriptor 0x%08x, PTX ISA 0x%08x", tc[q].row, ri ? mf_tcgen05_idesc(ri, ri->m, 8) : 0,
               tc[q].idesc);
        EXPECT(ri && !mf_ptx_text(ri, &v, buf, sizeof buf) && !strcmp(buf, tc[q].ptx), "%s: PTX text '%s', expected '%s'",
               tc[q].row, buf, tc[q].ptx);
        EXPECT(ri && !mf_sass_expect(ri, &v, sass, sizeof sass) && !strcmp(sass, tc[q].sass),
               "%s: SASS '%s', expected '%s'", tc[q].row, sass, tc[q].sass);
    }
    EXPECT(mf_ptx_kind_of(mf_instr_find("volta/mma.m8n8k4.f32.f16.f16.f32"), NULL) == MF_PTX_NONE,
           "volta must stay model-only");
    printf("%d (row, variant) layouts checked, %d failures\n", rows_checked, failures);
    return failures ? 1 : 0;
}
