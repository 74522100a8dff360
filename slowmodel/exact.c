/*
 * exact.c - exact binary fixed-point numbers (exact.h).
 */
#include "exact.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void out_of_range(const char *what, int e)
{
    fprintf(stderr, "slow model: %s: exponent %d outside the exact range\n", what, e);
    abort();
}

void sm_zero(sm_num *x) { memset(x, 0, sizeof *x); }

static int is_neg(const sm_num *x) { return (x->w[SM_LIMBS - 1] >> 31) != 0; }

static int bit(const sm_num *x, int i) { return (int)((x->w[i / 32] >> (i % 32)) & 1u); }

/* x += 2^i (i a bit index). */
static void add_bit(sm_num *x, int i)
{
    uint64_t carry = (uint64_t)1 << (i % 32);
    for (int l = i / 32; l < SM_LIMBS && carry; l++) {
        uint64_t s = (uint64_t)x->w[l] + carry;
        x->w[l] = (uint32_t)s;
        carry = s >> 32;
    }
}

void sm_set(sm_num *x, int neg, uint64_t m, int e)
{
    sm_zero(x);
    if (!m)
        return;
    if (e + SM_FRAC < 0 || e + 64 > SM_TOP)
        out_of_range("sm_set", e);
    int b = e + SM_FRAC, l = b / 32, s = b % 32;
    unsigned __int128 v = (unsigned __int128)m << s; /* below 2^96: three limbs */
    x->w[l] = (uint32_t)v;
    x->w[l + 1] = (uint32_t)(v >> 32);
    x->w[l + 2] = (uint32_t)(v >> 64);
    if (neg)
        sm_neg(x);
}

void sm_set128(sm_num *x, int neg, uint64_t hi, uint64_t lo, int e)
{
    sm_num h;
    sm_set(x, 0, lo, e);
    sm_set(&h, 0, hi, e + 64);
    sm_add(x, &h);
    if (neg)
        sm_neg(x);
}

void sm_neg(sm_num *x)
{
    uint64_t carry = 1;
    for (int l = 0; l < SM_LIMBS; l++) {
        uint64_t s = (uint64_t)(uint32_t)~x->w[l] + carry;
        x->w[l] = (uint32_t)s;
        carry = s >> 32;
    }
}

void sm_add(sm_num *x, const sm_num *y)
{
    uint64_t carry = 0;
    for (int l = 0; l < SM_LIMBS; l++) {
        uint64_t s = (uint64_t)x->w[l] + y->w[l] + carry;
        x->w[l] = (uint32_t)s;
        carry = s >> 32;
    }
}

int sm_sign(const sm_num *x)
{
    if (is_neg(x))
        return -1;
    for (int l = 0; l < SM_LIMBS; l++)
        if (x->w[l])
            return 1;
    return 0;
}

void sm_mul_small(sm_num *x, uint32_t m)
{
    int neg = is_neg(x);
    if (neg)
        sm_neg(x);
    uint64_t carry = 0;
    for (int l = 0; l < SM_LIMBS; l++) {
        uint64_t p = (uint64_t)x->w[l] * m + carry;
        x->w[l] = (uint32_t)p;
        carry = p >> 32;
    }
    if (carry || is_neg(x))
        out_of_range("sm_mul_small", SM_TOP);
    if (neg)
        sm_neg(x);
}

void sm_scale2(sm_num *x, int s)
{
    int neg = is_neg(x);
    if (neg)
        sm_neg(x);
    sm_num r;
    sm_zero(&r);
    for (int i = 0; i < SM_LIMBS * 32; i++) {
        if (!bit(x, i))
            continue;
        if (i + s < 0 || i + s >= SM_LIMBS * 32 - 1)
            out_of_range("sm_scale2", i + s - SM_FRAC);
        add_bit(&r, i + s);
    }
    *x = r;
    if (neg)
        sm_neg(x);
}

int sm_ilog2(const sm_num *x)
{
    sm_num m = *x;
    if (is_neg(&m))
        sm_neg(&m);
    for (int l = SM_LIMBS - 1; l >= 0; l--)
        if (m.w[l])
            return l * 32 + 31 - __builtin_clz(m.w[l]) - SM_FRAC;
    fprintf(stderr, "slow model: sm_ilog2 of zero\n");
    abort();
}

void sm_round(sm_num *x, int q, sm_mode mode)
{
    int b = q + SM_FRAC; /* bit index of 2^q */
    if (b <= 0)
        return;          /* every value is a multiple of 2^q already */
    if (b >= SM_TOP + SM_FRAC)
        out_of_range("sm_round", q);
    int neg = is_neg(x);
    if (neg)
        sm_neg(x);       /* work on the magnitude */
    int half = bit(x, b - 1), below = 0;
    for (int l = 0; l < (b - 1) / 32 && !below; l++)
        below = x->w[l] != 0;           /* whole limbs below bit b-1 */
    if ((b - 1) % 32)
        below |= (x->w[(b - 1) / 32] & ((1u << ((b - 1) % 32)) - 1)) != 0;
    for (int l = 0; l < b / 32; l++)
        x->w[l] = 0;                    /* truncate the magnitude */
    if (b % 32)
        x->w[b / 32] &= ~((1u << (b % 32)) - 1);
    int up = 0;
    switch (mode) {
    case SM_RZ: up = 0; break;
    case SM_RD: up = neg && (half || below); break;
    case SM_RNE: up = half && (below || bit(x, b)); break;
    }
    if (up)
        add_bit(x, b);
    if (neg)
        sm_neg(x);
}

uint64_t sm_mag(const sm_num *x, int q)
{
    sm_num m = *x;
    if (is_neg(&m))
        sm_neg(&m);
    uint64_t r = 0;
    int b = q + SM_FRAC;
    for (int i = 63; i >= 0; i--)
        r = (r << 1) | (uint64_t)(b + i >= 0 && b + i < SM_LIMBS * 32 ? bit(&m, b + i) : 0);
    return r;
}
