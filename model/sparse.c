/*
 * sparse.c - structured-sparse rows (mma.sp, mma.sp::ordered_metadata).
 *
 * A case of a sparse row holds the logical dense row of A (K values, zeros at
 * the pruned positions) and the metadata (mf_case.meta: which positions of
 * each group are kept, PTX ISA "Sparse matrix storage").  The arithmetic is
 * a HYPOTHESIS to be tested on hardware: the row's family and parameters (F,
 * e_zero, rho: hopper's dense T-FDPA of the same types) applied to the kept
 * products only.  How exactly is mf_sp_model:
 *   MF_SPM_KEPT           the K/2 kept products in K order, chunks of L kept
 *                         products (the dense instruction whose K is K/2);
 *   MF_SPM_META_ORDER     (a) the kept products in metadata order (order does
 *                         not change a fused sum, but does change which chunk
 *                         a product falls in when there are several);
 *   MF_SPM_LOGICAL_CHUNKS (b) chunks of sp_L logical K positions, each the
 *                         fused sum of the kept products it contains;
 *   MF_SPM_DENSE_LOGICAL  (c) the dense model on the logical row: a pruned
 *                         position is a zero product (it takes e_zero),
 *                         chunks of sp_L.
 * A value of a at a pruned position never reaches the hardware (the packed A
 * has only the kept ones): every mode reads it as +0.
 *
 * Integer rows (MF_INT_DOT: s8/u8 2:4, s4/u4 4:8 by pairs) take the same
 * path: their arithmetic is exact, so every mode gives the dense integer dot
 * product of the kept products plus c, wrapped or (.satfinite) clamped to
 * s32, as the dense rows (family_int.c).  On sm_90a ptxas 13.0 builds s4/u4
 * from two IMMA.SP on unpacked int8 from zero (the even and the odd elements
 * of each pair, the same metadata), then adds c and clamps in integer
 * instructions (devices/cuda/NOTES.md): the same exact value.
 */
#include "internal.h"

/* The kept logical positions of group g of cs in K order (meta_order 0) or
 * in metadata order (1).  @return how many (MF_SP_KEPT_MAX at most). */
MF_HD static inline int group_kept(const mf_instr *in, const uint8_t *meta, int g, int meta_order, int *p)
{
    int c = mf_sparse_group_kept(in, g, meta[g], p);
    if (c >= 2 && !meta_order && p[c / 2] < p[0]) {
        /* the second index's element (s4/u4: pair) first */
        for (int i = 0; i < c / 2; i++) {
            int t = p[i];
            p[i] = p[i + c / 2];
            p[i + c / 2] = t;
        }
    }
    return c;
}

/* The kept logical positions of cs, group by group (group_kept).
 * @return how many (K/2). */
MF_HD static int kept_positions(const mf_instr *in, const mf_case *cs, int meta_order, int *pos)
{
    int n = 0;
    for (int g = 0; g < in->n_meta; g++) {
        int p[MF_SP_KEPT_MAX];
        int c = group_kept(in, cs->meta, g, meta_order, p);
        for (int i = 0; i < c; i++)
            pos[n++] = p[i];
    }
    return n;
}

/* The dense row that evaluates n of the products: the sparse row's fields
 * with k = L = n (one chunk) or k = n, L = L (chunks). */
MF_HD static mf_instr dense_of(const mf_instr *in, int k, int L)
{
    mf_instr r = *in;
    r.sparse = 0;
    r.sp_model = 0;
    r.k = (uint16_t)k;
    r.L = (int16_t)(L < k ? L : k);
    return r;
}

MF_HD static uint64_t eval_dense(const mf_instr *r, const mf_case *t, const mf_trace *tr)
{
    return tr ? mf_eval_trace(r, t, tr) : mf_eval(r, t);
}

#ifdef MF_DEVICE_BUILD
/* ---- device code: the kept products straight into registers
 *
 * The general path below gathers the kept products into a second mf_case
 * (2 KiB of local memory in device code) and evaluates the dense row through
 * mf_eval again.  For the rows of MF_SPM_KEPT and MF_SPM_META_ORDER without
 * operand forms, device code instead (sparse_fixed)
 *   - floating point, where the dense row has a fixed-shape entry
 *     (mf_sparse_fixed_ok): gathers the n = K/2 kept values of a and b into
 *     arrays of constant length and calls that entry (mf_t_fdpa_fixed,
 *     mf_f16_emu_fixed) itself, the entries, chunks and order that the
 *     general path reaches through mf_eval (mf_t_fdpa_fast, mf_eval_f16_emu),
 *     so the same bits (mf_sparse_fixed; devices/cuda/model_bench.cu calls it
 *     too, on operands in registers);
 *   - integer (MF_INT_DOT): sums the kept products where they are, then
 *     mf_eval_int_dot's last step (mf_int_dot_finish); the sum is exact, so
 *     its order does not matter.
 * tests/model/test_device_model.cpp holds every sparse row against the host
 * library's general path, and mf_sparse_fixed as model_bench calls it. */

/* v[base + off] for 0 <= off < w (w a constant) by selects, not by a
 * dynamic index: when v is an array of constant length in registers (the
 * caller's operands, model_bench's fixed-shape kernel), a dynamic index
 * would move it to local memory. */
MF_HD static inline __attribute__((always_inline)) uint64_t sel_in_group(const uint64_t *v, int base, int off,
                                                                        const int w)
{
    uint64_t x = v[base];
    MF_UNROLL
    for (int o = 1; o < w; o++)
        x = off == o ? v[base + o] : x;
    return x;
}

/* The n kept values of logical rows a and b (metadata meta, one nibble a
 * group) in the order group_kept gives, per kept positions of each group (a
 * constant: in->sp_group / 2) into ka, kb.  in_registers (a constant): a and
 * b are the caller's arrays of constant length (sel_in_group), else memory
 * (an mf_case: one load each). */
MF_HD static inline __attribute__((always_inline)) void gather_kept(const mf_instr *in, const uint64_t *a,
                                                                   const uint64_t *b, const uint8_t *meta,
                                                                   int meta_order, uint64_t *ka, uint64_t *kb,
                                                                   const int n, const int per,
                                                                   const int in_registers)
{
    MF_UNROLL
    for (int g = 0; g < n / per; g++) {
        int p[MF_SP_KEPT_MAX] = {0, 0, 0, 0};
        group_kept(in, meta, g, meta_order, p);
        MF_UNROLL
        for (int i = 0; i < per; i++) {
            const int base = g * 2 * per;
            ka[g * per + i] = in_registers ? sel_in_group(a, base, p[i] - base, 2 * per) : a[p[i]];
            kb[g * per + i] = in_registers ? sel_in_group(b, base, p[i] - base, 2 * per) : b[p[i]];
        }
    }
}

/* A floating-point sparse row on its kept products, n of them and chunks
 * of L (constants), A and B of formats fa, fb, kept per group `per` (a
 * constant), for a row with mf_sparse_fixed_ok: from logical rows a, b and
 * the metadata (in_registers: gather_kept).  tab: NULL, or the fp8 pair's
 * table of mf_prod_pack entries (index a | b << 8; as_f16 for F16-emu), the
 * kept products read from it (the GPU's product table). */
MF_HD static inline __attribute__((always_inline)) uint64_t mf_sparse_fixed(const mf_instr *in, mf_format fa,
                                                                           mf_format fb, const uint64_t *a,
                                                                           const uint64_t *b, const uint8_t *meta,
                                                                           uint64_t c, const int n, const int L,
                                                                           const int per, const int in_registers,
                                                                           const unsigned short *tab)
{
    uint64_t ka[MF_KMAX_FLOAT / 2], kb[MF_KMAX_FLOAT / 2];
    gather_kept(in, a, b, meta, in->sp_model == MF_SPM_META_ORDER, ka, kb, n, per, in_registers);
    const mf_instr r = dense_of(in, n, L);
    if (tab) {   /* one call each way: a pointer chosen at run time would move w and ka, kb to local memory */
        uint32_t w[MF_KMAX_FLOAT / 2];
        MF_UNROLL
        for (int q = 0; q < n; q++)
            w[q] = tab[(ka[q] & 0xFF) | (kb[q] & 0xFF) << 8];
        if (in->family == MF_F16_EMU)
            return mf_f16_emu_fixed(&r, fa, fb, ka, kb, w, c, n);
        return mf_t_fdpa_fixed(&r, fa, fb, r.fc, r.fd, ka, kb, w, c, n, L);
    }
    if (in->family == MF_F16_EMU)
        return mf_f16_emu_fixed(&r, fa, fb, ka, kb, NULL, c, n);
    return mf_t_fdpa_fixed(&r, fa, fb, r.fc, r.fd, ka, kb, NULL, c, n, L);
}

/* 1 when floating-point sparse row `in` can take mf_sparse_fixed: mode
 * KEPT or META_ORDER, no operand forms, and its dense row (K/2 kept
 * products, the row's chunk length) has a fixed-shape entry: F16-emu with
 * K/2 = 16 or 32, or T-FDPA with a fast plan.  (*per: kept per group.) */
MF_HD static inline int mf_sparse_fixed_ok(const mf_instr *in, int *per)
{
    *per = in->sp_group / 2;
    if (!in->sparse || (in->sp_model != MF_SPM_KEPT && in->sp_model != MF_SPM_META_ORDER) || in->neg_a ||
        in->neg_b || in->no_c || (*per != 1 && *per != 2))
        return 0;
    mf_instr r = dense_of(in, in->k / 2, in->L);
    if (in->family == MF_F16_EMU)
        return *per == 2 && (r.k == 16 || r.k == 32) && mf_f16_emu_fast(&r);
    return in->family == MF_T_FDPA && mf_t_fdpa_plan(&r) != NULL;
}

/* The sparse T-FDPA shapes with a fixed-length path: A and B formats, kept
 * products n (K/2) and chunk length L of the dense row, as the table's
 * sparse rows have them (instr_table.def).  A row of another shape takes the
 * general path: the same bits, slower. */
#define SP_T_FDPA_SHAPES(X)                                                                                  \
    X(F16, F16, 8, 8) X(F16, F16, 16, 8) X(F16, F16, 16, 16)                                                 \
    X(BF16, BF16, 8, 8) X(BF16, BF16, 16, 8) X(BF16, BF16, 16, 16)                                           \
    X(TF32, TF32, 4, 4) X(TF32, TF32, 8, 4) X(TF32, TF32, 8, 8)                                              \
    X(E4M3, E4M3, 32, 32) X(E4M3, E5M2, 32, 32) X(E5M2, E4M3, 32, 32) X(E5M2, E5M2, 32, 32)

/* @return 0 with *d when row `in` (sparse) has a fixed-length path here,
 * else 1 (the caller takes the general path). */
MF_HD static int sparse_fixed(const mf_instr *in, const mf_case *cs, uint64_t *d)
{
    if (in->family == MF_INT_DOT) {
        if ((in->sp_model != MF_SPM_KEPT && in->sp_model != MF_SPM_META_ORDER) || in->neg_a || in->neg_b ||
            in->no_c)
            return 1;
        /* exact: the kept products in any order (mf_eval_int_dot on the dense row of them) */
        int64_t dot = 0;
        for (int g = 0; g < in->n_meta; g++) {
            int p[MF_SP_KEPT_MAX];
            const int c = mf_sparse_group_kept(in, g, cs->meta[g], p);
            for (int i = 0; i < c; i++)
                dot += mf_int_value(in->fa, cs->a[p[i]]) * mf_int_value(in->fb, cs->b[p[i]]);
        }
        *d = mf_int_dot_finish(in, dot, cs->c, NULL);
        return 0;
    }
    int per;
    if (!mf_sparse_fixed_ok(in, &per))
        return 1;
    const int n = in->k / 2, L = in->L < n ? in->L : n;
    if (in->family == MF_F16_EMU) {
        *d = n == 32 ? mf_sparse_fixed(in, in->fa, in->fb, cs->a, cs->b, cs->meta, cs->c, 32, 32, 2, 0, NULL)
                     : mf_sparse_fixed(in, in->fa, in->fb, cs->a, cs->b, cs->meta, cs->c, 16, 16, 2, 0, NULL);
        return 0;
    }
#define SP_T_FDPA_CASE(A, B, N, LL)                                                                          \
    if (in->fa == MF_FMT_##A && in->fb == MF_FMT_##B && n == (N) && L == (LL)) {                             \
        *d = mf_sparse_fixed(in, MF_FMT_##A, MF_FMT_##B, cs->a, cs->b, cs->meta, cs->c, N, LL,               \
                             MF_FMT_##A == MF_FMT_TF32 ? 1 : 2, 0, NULL);                                    \
        return 0;                                                                                            \
    }
    SP_T_FDPA_SHAPES(SP_T_FDPA_CASE)
#undef SP_T_FDPA_CASE
    return 1;
}
#endif

MF_HD uint64_t mf_eval_sparse(const mf_instr *in, const mf_case *cs, const mf_trace *tr)
{
#ifdef MF_DEVICE_BUILD
    {
        uint64_t d;
        if (sparse_fixed(in, cs, &d) == 0)
            return d;
    }
#endif
    int pos[MF_KMAX / 2];   /* the kept positions: half of K for every sparsity (2:4, 1:2, 4:8) */
    mf_case t;
    t.c = cs->c;
    for (int s = 0; s < MF_SMAX; s++)
        t.sa[s] = t.sb[s] = 0;
    switch (in->sp_model) {
    case MF_SPM_DENSE_LOGICAL: {
        mf_instr r = dense_of(in, in->k, in->sp_L);
        for (int q = 0; q < in->k; q++) {
            t.a[q] = mf_sparse_is_kept(in, cs, q) ? cs->a[q] : 0;
            t.b[q] = cs->b[q];
        }
        MF_TRACE(tr, "sparse (c): the dense model on the logical row, K = %d, L = %d, pruned a = +0", r.k, r.L);
        return eval_dense(&r, &t, tr);
    }
    case MF_SPM_LOGICAL_CHUNKS: {
        const int L = in->sp_L > 0 ? in->sp_L : in->k;
        uint64_t c = cs->c;
        int n = kept_positions(in, cs, 0, pos), i = 0;
        for (int k0 = 0; k0 < in->k; k0 += L) {
            int m = 0;
            for (; i < n && pos[i] < k0 + L; i++, m++) {
                t.a[m] = cs->a[pos[i]];
                t.b[m] = cs->b[pos[i]];
            }
            mf_instr r = dense_of(in, m, m);
            if (k0)
                r.fc = in->fd;   /* chunks after the first chain D's format, as in T-FDPA */
            t.c = c;
            MF_TRACE(tr, "sparse (b): logical positions %d..%d, %d kept products", k0, k0 + L - 1, m);
            c = eval_dense(&r, &t, tr);
        }
        return c;
    }
    default: {
        const int meta_order = in->sp_model == MF_SPM_META_ORDER;
        int n = kept_positions(in, cs, meta_order, pos);
        for (int i = 0; i < n; i++) {
            t.a[i] = cs->a[pos[i]];
            t.b[i] = cs->b[pos[i]];
        }
        mf_instr r = dense_of(in, n, in->L);
        MF_TRACE(tr, "sparse%s: %d kept products in %s order, chunks of %d", meta_order ? " (a)" : "", n,
                 meta_order ? "metadata" : "K", r.L);
        return eval_dense(&r, &t, tr);
    }
    }
}
