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

/* The kept logical positions of cs in K order (meta_order 0) or in
 * metadata order (1).  @return how many (K/2). */
MF_HD static int kept_positions(const mf_instr *in, const mf_case *cs, int meta_order, int *pos)
{
    int n = 0;
    for (int g = 0; g < in->n_meta; g++) {
        int p[MF_SP_KEPT_MAX];
        int c = mf_sparse_group_kept(in, g, cs->meta[g], p);
        if (c >= 2 && !meta_order && p[c / 2] < p[0]) {
            /* the second index's element (s4/u4: pair) first */
            for (int i = 0; i < c / 2; i++) {
                int t = p[i];
                p[i] = p[i + c / 2];
                p[i + c / 2] = t;
            }
        }
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

MF_HD uint64_t mf_eval_sparse(const mf_instr *in, const mf_case *cs, const mf_trace *tr)
{
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
