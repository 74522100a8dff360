/*
 * lanes.h - eight 32-bit integer lanes for the model's vectorized paths
 * (GCC/Clang vector extensions: AVX2 registers in the avx2 clone of a
 * MULTI_ISA function, pairs of SSE registers otherwise): the helpers and
 * the lane arithmetic the vectorized paths share (rounding, IEEE addition).
 * Integer code only: both clones give identical bits.
 */
#ifndef MMAFUZZ_LANES_H
#define MMAFUZZ_LANES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Built twice where the compiler can: for AVX2 and for the baseline ISA; the
 * loader picks one at start-up. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(MMAFUZZ_NO_CLONES)
#define MULTI_ISA __attribute__((target_clones("avx2", "default")))
#else
#define MULTI_ISA
#endif

typedef uint32_t v8u __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));

/* v = eight 32-bit values at p (any alignment) */
#define LOAD8(v, p) memcpy(&(v), (p), sizeof(v))

/* The helpers are always inlined into the MULTI_ISA kernels, so the note GCC
 * gives on passing AVX vectors by value without AVX does not apply. */
#pragma GCC diagnostic ignored "-Wpsabi"
#define AI static inline __attribute__((always_inline))

/* m ? a : b per lane (m: all ones or all zeros in each lane) */
AI v8u sel_lanes(v8u m, v8u a, v8u b) { return (a & m) | (b & ~m); }

/* Leading zeros of each lane (lanes that are 0 give 31: callers mask them). */
AI v8u clz_lanes(v8u x)
{
    v8u n = {0}, m;
    m = (v8u)((x >> 16) == 0), n += m & 16, x = (x & ~m) | ((x << 16) & m);
    m = (v8u)((x >> 24) == 0), n += m & 8, x = (x & ~m) | ((x << 8) & m);
    m = (v8u)((x >> 28) == 0), n += m & 4, x = (x & ~m) | ((x << 4) & m);
    m = (v8u)((x >> 30) == 0), n += m & 2, x = (x & ~m) | ((x << 2) & m);
    m = (v8u)((x >> 31) == 0), n += m & 1;
    return n;
}

/* (neg ? -1 : 1) * mag * 2^q (mag < 2^32, neg 0 or 1) rounded to a binary
 * format of ebits/fbits with prec significand bits kept, to nearest even
 * (rne) or toward zero, eight lanes at a time: what mf_round64 does for one
 * value (overflow gives Inf), then the zero_plus rule of T-FDPA rows. */
AI v8u round_lanes(v8u mag, v8u neg, v8i q, const int prec, const int fbits, const int ebits, const int rne,
                   int zero_plus)
{
    const int bias = (1 << (ebits - 1)) - 1, emin = 1 - bias, emax = bias;
    const v8i top = q + (31 - (v8i)clz_lanes(mag));
    v8i eff = top < emin;
    eff = (eff & emin) | (~eff & top);
    const v8i shift = eff - prec - q;
    const v8i right = shift > 0;
    /* shift <= 0: exact, the significand moves up by -shift <= prec bits */
    const v8i up = (-shift) & ~right;
    v8u sig = mag << (v8u)up;
    /* shift > 0: guard bit at shift-1, sticky below; shift >= 33 leaves nothing */
    v8i s1 = (shift - 1) & right;
    s1 = (s1 & (s1 <= 31)) | (31 & (s1 > 31));
    const v8u h = mag >> (v8u)s1, kept = h >> 1;
    v8u sr = kept;
    if (rne) {
        const v8u sticky = (v8u)((mag & ((1u << (v8u)s1) - 1)) != 0) & 1;
        sr += h & 1 & (sticky | kept);
    }
    sr &= (v8u)(shift <= 32);
    sig = ((v8u)right & sr) | (~(v8u)right & sig);
    /* a carry out of the rounding moves the exponent up */
    const v8i carry = (v8i)((sig >> (prec + 1)) != 0);
    sig = (sig & ~(v8u)carry) | ((sig >> 1) & (v8u)carry);
    eff -= carry;
    const v8u sgn = neg << (ebits + fbits);
    const v8u biased = (v8u)(eff + bias) & (v8u)((sig >> prec) != 0);
    v8u d = sgn | (biased << fbits) | ((sig & ((1u << prec) - 1)) << (fbits - prec));
    const v8u ovf = (v8u)(eff > emax);
    d = (d & ~ovf) | ((sgn | (((1u << ebits) - 1) << fbits)) & ovf);
    const v8u zero = (v8u)(sig == 0) | (v8u)(mag == 0);
    d = (d & ~zero) | (sgn & zero);
    if (zero_plus)
        d &= ~(v8u)((d << (32 - ebits - fbits)) == 0);   /* a zero of either sign */
    return d;
}

/* Eight rows of eight 16-bit values (row j at p + j * stride elements, any
 * alignment) transposed into eight lanes each: out[q] holds element q of
 * rows 0..7, zero-extended to 32 bits.  Three rounds of interleaving, as the
 * SSE2/AVX2 unpack instructions do it. */
typedef uint16_t v8h __attribute__((vector_size(16)));
typedef uint32_t v4u __attribute__((vector_size(16)));
typedef uint64_t v2q __attribute__((vector_size(16)));
AI void transpose8_u16(const uint16_t *p, size_t stride, v8u out[8])
{
    v8h r[8];
    for (int j = 0; j < 8; j++)
        memcpy(&r[j], p + (size_t)j * stride, sizeof r[j]);
    v4u t[8];
    for (int j = 0; j < 8; j += 2) {
        t[j] = (v4u)__builtin_shufflevector(r[j], r[j + 1], 0, 8, 1, 9, 2, 10, 3, 11);
        t[j + 1] = (v4u)__builtin_shufflevector(r[j], r[j + 1], 4, 12, 5, 13, 6, 14, 7, 15);
    }
    /* t[0], t[2]: elements 0-3 of rows 0-1 and 2-3; t[1], t[3]: elements 4-7 */
    v2q u[8];
    for (int h = 0; h < 2; h++)
        for (int i = 0; i < 2; i++) {
            const v4u x = t[i + 4 * h], y = t[i + 2 + 4 * h];
            u[4 * h + 2 * i] = (v2q)__builtin_shufflevector(x, y, 0, 4, 1, 5);
            u[4 * h + 2 * i + 1] = (v2q)__builtin_shufflevector(x, y, 2, 6, 3, 7);
        }
    /* u[h*4 + m]: elements 2m, 2m+1 of rows 4h..4h+3 */
    for (int m = 0; m < 4; m++) {
        out[2 * m] = __builtin_convertvector((v8h)__builtin_shufflevector(u[m], u[4 + m], 0, 2), v8u);
        out[2 * m + 1] = __builtin_convertvector((v8h)__builtin_shufflevector(u[m], u[4 + m], 1, 3), v8u);
    }
}

/* IEEE addition x + y, round to nearest even, of binary32 (f32) or binary16
 * bits in eight lanes: what mf_ieee_add does (NaN gives the canonical NaN,
 * an exact cancellation +0, two zeros the AND of their signs).  The smaller
 * operand is aligned with G guard bits and the bits shifted out jammed into
 * a sticky bit, which is exact for round to nearest even. */
AI v8u ieee_add_lanes(v8u x, v8u y, const int f32)
{
    const int fb = f32 ? 23 : 10, eb = f32 ? 8 : 5, bias = (1 << (eb - 1)) - 1, G = 7;
    const uint32_t sbit = 1u << (fb + eb), absm = sbit - 1, emask = ((1u << eb) - 1) << fb, fmask = (1u << fb) - 1;
    /* the operand of larger magnitude first */
    const v8u ax = x & absm, ay = y & absm, swap = (v8u)((v8i)ay > (v8i)ax);
    const v8u big = (x & ~swap) | (y & swap), small = (y & ~swap) | (x & swap);
    const v8u ebig = (big & emask) >> fb, esmall = (small & emask) >> fb;
    const v8u mbig = (big & fmask) | ((v8u)(ebig != 0) & (1u << fb)),
              msmall = (small & fmask) | ((v8u)(esmall != 0) & (1u << fb));
    const v8i xbig = (v8i)(ebig | ((v8u)(ebig == 0) & 1)), xsmall = (v8i)(esmall | ((v8u)(esmall == 0) & 1));
    v8i d = xbig - xsmall;   /* >= 0 */
    d = (d & (d <= 31)) | (31 & (d > 31));
    const v8u ms = msmall << G, al = ms >> (v8u)d, lost = (v8u)((al << (v8u)d) != ms) & 1;
    const v8u mb = mbig << G, diff = (v8u)(((big ^ small) & sbit) != 0);
    const v8u mag = (~diff & (mb + (al | lost))) | (diff & (mb - (al | lost)));
    /* an exact cancellation is +0; two zeros keep the AND of their signs */
    const v8u bothzero = (v8u)((ax | ay) == 0);
    v8u neg = (big >> (fb + eb)) & 1 & (v8u)(mag != 0);
    neg |= bothzero & (x >> (fb + eb)) & (y >> (fb + eb)) & 1;
    v8u d_out = round_lanes(mag, neg, xbig - (bias + fb + G), fb, fb, eb, 1, 0);
    /* NaN and Inf operands */
    const v8u xs = (v8u)((x & emask) == emask), ys = (v8u)((y & emask) == emask);
    const v8u xnan = xs & (v8u)((x & fmask) != 0), ynan = ys & (v8u)((y & fmask) != 0);
    const v8u xinf = xs & ~xnan, yinf = ys & ~ynan;
    const v8u nan = xnan | ynan | (xinf & yinf & (v8u)(((x ^ y) & sbit) != 0));
    const v8u inf = (xinf | yinf) & ~nan;
    const v8u qnan = (v8u){0} + (sbit - 1);   /* the canonical NaN */
    const v8u infv = ((xinf & x) | (~xinf & y)) & (sbit | emask);
    return (d_out & ~(nan | inf)) | (nan & qnan) | (inf & infv);
}

#endif
