/*
 * kernel.c - the kernel model's arithmetic (mmafuzz_kernel.h): one output of a
 * GEMM call as the main loop's instruction chained over K, split-K slices and
 * their binary32 reduction, promotion, and the epilogue's conversion.
 */
#include "mmafuzz_kernel.h"

#include "internal.h"

#include <string.h>

enum { MF_KSPLIT_MAX = 256 }; /* most slices a kernel model may have (mf_kernel_check) */

MF_HD void mf_kernel_slice(const mf_kernel *kr, uint32_t iters, uint32_t s, uint32_t *first, uint32_t *end)
{
    const uint32_t S = kr->split ? kr->split : 1;
    uint32_t f, e;
    if (kr->split_rule == MF_KSPLIT_BALANCED) {
        const uint32_t q = iters / S, r = iters % S;
        f = s * q + (s < r ? s : r);
        e = f + q + (s < r);
    } else {
        const uint32_t per = (iters + S - 1) / S;
        f = s * per;
        e = f + per;
    }
    *first = f < iters ? f : iters;
    *end = e < iters ? e : iters;
}

/* binary32 bits x converted to format `out` (F32, F16, BF16): round to
 * nearest even, overflow to Inf, NaN to the format's canonical NaN. */
MF_HD static uint64_t f32_to(mf_format out, uint32_t x)
{
    if (out == MF_FMT_F32)
        return x;
    const int fbits = out == MF_FMT_F16 ? 10 : 7, ebits = out == MF_FMT_F16 ? 5 : 8;
    const mf_value v = mf_decode(MF_FMT_F32, x);
    const uint64_t sgn = (uint64_t)v.sign << (ebits + fbits);
    if (v.cls == MF_CLS_NAN)
        return out == MF_FMT_F16 ? mf_canonical_nan(MF_FMT_F16) : 0x7FFFu;
    if (v.cls == MF_CLS_INF)
        return sgn | ((uint64_t)((1u << ebits) - 1) << fbits);
    if (v.cls == MF_CLS_ZERO)
        return sgn;
    return mf_round64(v.sign, v.sig, v.exp - 23, fbits, fbits, ebits, MF_RM_RNE);
}

/* The slices' binary32 partials part[0..S) added as kr->reduce says (part
 * is overwritten): serial ((p0 + p1) + p2 ...) or a pairwise tree.  The one
 * reduction of both evaluation paths. */
MF_HD static uint32_t reduce_parts(const mf_kernel *kr, uint32_t *part, uint32_t S)
{
    if (kr->reduce == MF_KRED_TREE) {
        for (uint32_t w = 1; w < S; w *= 2)
            for (uint32_t s = 0; s + w < S; s += 2 * w)
                part[s] = (uint32_t)mf_f32_add(part[s], part[s + w]);
        return part[0];
    }
    uint32_t sum = part[0];
    for (uint32_t s = 1; s < S; s++)
        sum = (uint32_t)mf_f32_add(sum, part[s]);
    return sum;
}

MF_HD void mf_kernel_slice_k(const mf_kernel *kr, size_t K, uint32_t s, size_t *k0, size_t *k1)
{
    const size_t ik = kr->in->k, bk = kr->bk ? kr->bk : ik;
    const uint32_t iters = (uint32_t)((K + bk - 1) / bk);
    const size_t kpad = (K + ik - 1) / ik * ik;
    uint32_t f, e;
    mf_kernel_slice(kr, iters, s, &f, &e);
    *k0 = (size_t)f * bk;
    *k1 = (size_t)e * bk < kpad ? (size_t)e * bk : kpad;
}

MF_HD void mf_kernel_step_done(const mf_kernel *kr, mf_kacc *st)
{
    if (kr->promote && ++st->n == kr->promote) {
        st->main = (uint32_t)mf_f32_add(st->main, st->acc);
        st->acc = 0;
        st->n = 0;
    }
}

MF_HD uint32_t mf_kernel_part(const mf_kernel *kr, const mf_kacc *st)
{
    if (!kr->promote)
        return st->acc;
    return st->n ? (uint32_t)mf_f32_add(st->main, st->acc) : st->main;
}

MF_HD uint64_t mf_kernel_finish(const mf_kernel *kr, uint32_t *part)
{
    return f32_to(kr->out, reduce_parts(kr, part, kr->split ? kr->split : 1));
}

MF_HD uint64_t mf_kernel_dot(const mf_kernel *kr, size_t K, const void *a, const void *b)
{
    const mf_instr *in = kr->in;
    const size_t ea = mf_tile_elem_bytes(in->fa), eb = mf_tile_elem_bytes(in->fb);
    const size_t ik = in->k;
    const uint32_t S = kr->split ? kr->split : 1;
    uint32_t part[MF_KSPLIT_MAX];
    mf_case cs;
    memset(&cs, 0, sizeof cs);
    for (uint32_t s = 0; s < S && s < MF_KSPLIT_MAX; s++) {
        size_t k0, k1;
        mf_kacc st = {0, 0, 0};
        for (mf_kernel_slice_k(kr, K, s, &k0, &k1); k0 < k1; k0 += ik) {
            cs.c = st.acc;
            for (size_t q = 0; q < ik; q++) {
                const size_t idx = k0 + q;
                cs.a[q] = idx < K ? mf_elem_get(ea, a, idx) : 0;
                cs.b[q] = idx < K ? mf_elem_get(eb, b, idx) : 0;
            }
            st.acc = (uint32_t)mf_eval(in, &cs);
            mf_kernel_step_done(kr, &st);
        }
        part[s] = mf_kernel_part(kr, &st);
    }
    return mf_kernel_finish(kr, part);
}

#ifndef MF_DEVICE_BUILD
const char *mf_kernel_check(const mf_kernel *kr)
{
    const mf_instr *in = kr->in;
    if (!in)
        return "no instruction (key 'instr')";
    if (in->fc != MF_FMT_F32 || in->fd != MF_FMT_F32)
        return "the instruction's C and D must be f32 (the kernel model accumulates in binary32)";
    if (in->n_scales || in->sparse || mf_format_is_int(in->fa))
        return "block-scaled, sparse and integer rows are not kernel instructions yet";
    if (kr->bk == 0 || kr->bk % in->k)
        return "bk must be a positive multiple of the instruction's K";
    if (kr->split == 0 || kr->split > MF_KSPLIT_MAX)
        return "split must be 1 to 256";
    if (kr->split_rule >= MF_KSPLIT_COUNT || kr->reduce >= MF_KRED_COUNT)
        return "unknown split rule or reduction";
    if (kr->out != MF_FMT_F32 && kr->out != MF_FMT_F16 && kr->out != MF_FMT_BF16)
        return "out must be f32, f16 or bf16";
    return NULL;
}

enum { MF_KBLOCK = 64 }; /* outputs evaluated together: one mf_eval_cases batch a step */

void mf_kernel_eval_rows(const mf_kernel *kr, size_t K, size_t n, const void *const *a, const void *const *b,
                         void *D)
{
    const mf_instr *in = kr->in;
    const size_t ea = mf_tile_elem_bytes(in->fa), eb = mf_tile_elem_bytes(in->fb), ed = mf_tile_elem_bytes(kr->out);
    const size_t ik = in->k;
    const uint32_t S = kr->split ? kr->split : 1;
    uint8_t sa[MF_KBLOCK * MF_KMAX * 8], sb[MF_KBLOCK * MF_KMAX * 8];
    uint32_t acc[MF_KBLOCK], nxt[MF_KBLOCK];
    for (size_t o0 = 0; o0 < n; o0 += MF_KBLOCK) {
        const size_t nb = n - o0 < MF_KBLOCK ? n - o0 : MF_KBLOCK;
        /* the slices' partials, reduced as they come (serial) or kept (tree) */
        static _Thread_local uint32_t parts[MF_KSPLIT_MAX][MF_KBLOCK];
        for (uint32_t s = 0; s < S && s < MF_KSPLIT_MAX; s++) {
            size_t k0, k1;
            mf_kacc st[MF_KBLOCK];
            memset(st, 0, sizeof st);
            for (mf_kernel_slice_k(kr, K, s, &k0, &k1); k0 < k1; k0 += ik) {
                for (size_t o = 0; o < nb; o++)
                    for (size_t q = 0; q < ik; q++) {
                        const size_t idx = k0 + q;
                        mf_elem_set(ea, sa, o * ik + q, idx < K ? mf_elem_get(ea, a[o0 + o], idx) : 0);
                        mf_elem_set(eb, sb, o * ik + q, idx < K ? mf_elem_get(eb, b[o0 + o], idx) : 0);
                    }
                for (size_t o = 0; o < nb; o++)
                    acc[o] = st[o].acc;
                mf_eval_cases(in, nb, sa, sb, acc, NULL, NULL, nxt);
                for (size_t o = 0; o < nb; o++) {
                    st[o].acc = nxt[o];
                    mf_kernel_step_done(kr, &st[o]);
                }
            }
            for (size_t o = 0; o < nb; o++)
                parts[s][o] = mf_kernel_part(kr, &st[o]);
        }
        for (size_t o = 0; o < nb; o++) {
            uint32_t p[MF_KSPLIT_MAX];
            for (uint32_t s = 0; s < S; s++)
                p[s] = parts[s][o];
            mf_elem_set(ed, D, o0 + o, mf_kernel_finish(kr, p));
        }
    }
}
#endif
