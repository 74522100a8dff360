/*
 * family_int.c - the integer and single-bit MMA family (MF_INT_DOT): mma.sync
 * and wgmma with s8/u8/s4/u4 inputs, and b1 with .and.popc / .xor.popc,
 * every one with an s32 accumulator.
 *
 * PTX ISA "mma" (Integer and single-bit forms): D = A*B + C computed exactly;
 * without .satfinite the s32 result wraps modulo 2^32; with .satfinite it is
 * clamped to [INT32_MIN, INT32_MAX] ("the result saturates to MIN_INT32 /
 * MAX_INT32 on overflow").  The clamp is of the exact sum (products and c),
 * not of a running sum: no order of accumulation can then matter.  b1: each
 * product is popc(a AND b) (.and) or popc(a XOR b) (.xor) of 32 bits, summed
 * with c, wrapping.
 *
 * On sm_90a ptxas builds b1 .xor.popc from two BMMA.AND.POPC (on complemented
 * operands) and an add, and s4/u4 with .satfinite from IMMA on unpacked int8
 * from zero, then an integer add of c and a clamp (devices/cuda/NOTES.md):
 * both compute the same exact value, which is what is modelled here.
 * Status of every row: hypothesis until the H100 has run it.
 */
#include "internal.h"

MF_HD uint64_t mf_eval_int_dot(const mf_instr *in, const mf_case *cs, const mf_trace *tr)
{
    int64_t dot = 0; /* at most 256 products of |x| <= 2^8 * 2^8: no overflow */
    const int flags = in->x;
    if (in->fa == MF_FMT_B1) {
        for (int k = 0; k < in->k; k++) {
            uint32_t a = (uint32_t)cs->a[k], b = (uint32_t)cs->b[k];
            uint32_t w = (flags & MF_INT_XOR) ? a ^ b : a & b;
            dot += mf_popc32(w);
        }
        MF_TRACE(tr, "b1: sum of popc(a %s b) over %d words = %lld", (flags & MF_INT_XOR) ? "XOR" : "AND", in->k,
                 (long long)dot);
    } else {
        for (int k = 0; k < in->k; k++)
            dot += mf_int_value(in->fa, cs->a[k]) * mf_int_value(in->fb, cs->b[k]);
        MF_TRACE(tr, "exact dot product of %d %s x %s products = %lld", in->k, mf_format_get(in->fa)->name,
                 mf_format_get(in->fb)->name, (long long)dot);
    }
    return mf_int_dot_finish(in, dot, cs->c, tr);
}

MF_HD uint64_t mf_int_dot_finish(const mf_instr *in, int64_t dot, uint64_t cbits, const mf_trace *tr)
{
    (void)tr;   /* MF_TRACE compiles to nothing in device code */
    const int flags = in->x;
    int64_t c = in->no_c ? 0 : mf_int_value(in->fc, cbits);
    int64_t sum = dot + c;
    uint32_t d;
    if (flags & MF_INT_SATFINITE) {
        int64_t lo = -(INT64_C(1) << 31), hi = (INT64_C(1) << 31) - 1;
        int64_t cl = sum < lo ? lo : sum > hi ? hi : sum;
        d = (uint32_t)(uint64_t)cl;
        MF_TRACE(tr, "%s%lld = %lld, .satfinite -> 0x%08x", in->no_c ? "(no c) " : "+ c ", (long long)c,
                 (long long)sum, d);
    } else {
        d = (uint32_t)(uint64_t)sum;  /* modulo 2^32 */
        MF_TRACE(tr, "%s%lld = %lld, modulo 2^32 -> 0x%08x", in->no_c ? "(no c) " : "+ c ", (long long)c,
                 (long long)sum, d);
    }
    return d;
}
