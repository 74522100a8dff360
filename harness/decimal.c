/*
 * decimal.c - exact binary-to-decimal display of a bit pattern, in integers
 * (no host floating point), for people reading `mmafuzz eval` output.
 */
#include "decimal.h"

#include <stdio.h>
#include <string.h>

/* A big natural number in base 10^9, little-endian limbs. */
#define LIMBS 140 /* enough for 2^1100 or 5^1100 */
typedef struct {
    uint32_t l[LIMBS];
    int n;
} bignum;

static void big_set(bignum *b, uint64_t v)
{
    b->n = 0;
    while (v) {
        b->l[b->n++] = (uint32_t)(v % 1000000000u);
        v /= 1000000000u;
    }
}

static void big_mul_small(bignum *b, uint32_t m)
{
    uint64_t carry = 0;
    for (int i = 0; i < b->n; i++) {
        uint64_t x = (uint64_t)b->l[i] * m + carry;
        b->l[i] = (uint32_t)(x % 1000000000u);
        carry = x / 1000000000u;
    }
    while (carry && b->n < LIMBS) {
        b->l[b->n++] = (uint32_t)(carry % 1000000000u);
        carry /= 1000000000u;
    }
}

/* Decimal digits of b into out (no leading zeros); returns the count. */
static int big_digits(const bignum *b, char *out)
{
    if (b->n == 0) {
        out[0] = '0';
        out[1] = 0;
        return 1;
    }
    int len = sprintf(out, "%u", b->l[b->n - 1]);
    for (int i = b->n - 2; i >= 0; i--)
        len += sprintf(out + len, "%09u", b->l[i]);
    return len;
}

void mf_decimal(mf_format f, uint64_t bits, int sig_digits, char *buf, size_t len)
{
    mf_value v = mf_decode(f, bits);
    const char *sign = v.sign ? "-" : "";
    if (v.cls == MF_CLS_NAN) {
        snprintf(buf, len, "nan");
        return;
    }
    if (v.cls == MF_CLS_INF) {
        snprintf(buf, len, "%sinf", sign);
        return;
    }
    if (v.cls == MF_CLS_ZERO || v.sig == 0) {
        snprintf(buf, len, "%s0", sign);
        return;
    }
    /* value = sig * 2^e */
    int e = v.exp - mf_format_get(f)->frac_bits;
    bignum b;
    big_set(&b, v.sig);
    int dexp = 0;  /* value = b * 10^dexp */
    if (e >= 0) {
        for (int i = 0; i < e; i++)
            big_mul_small(&b, 2);
    } else {
        for (int i = 0; i < -e; i++)
            big_mul_small(&b, 5);  /* sig * 2^e = sig * 5^-e * 10^e */
        dexp = e;
    }
    static char digits[LIMBS * 9 + 2];
    int nd = big_digits(&b, digits);
    /* round to sig_digits, half up on the decimal digits */
    if (nd > sig_digits) {
        int up = digits[sig_digits] >= '5';
        dexp += nd - sig_digits;
        nd = sig_digits;
        digits[nd] = 0;
        for (int i = nd - 1; up && i >= 0; i--) {
            if (digits[i] == '9') {
                digits[i] = '0';
            } else {
                digits[i]++;
                up = 0;
            }
        }
        if (up) {
            memmove(digits + 1, digits, (size_t)nd);
            digits[0] = '1';
            digits[nd] = 0;
            dexp++;
        }
    }
    while (nd > 1 && digits[nd - 1] == '0') {
        digits[--nd] = 0;
        dexp++;
    }
    int sci = dexp + nd - 1;  /* exponent of the leading digit */
    if (sci >= -5 && sci < 17) {
        /* plain notation */
        char tmp[64];
        if (dexp >= 0) {
            snprintf(tmp, sizeof tmp, "%s%0*d", digits, dexp, 0);
            if (dexp == 0)
                snprintf(tmp, sizeof tmp, "%s", digits);
        } else if (-dexp < nd) {
            snprintf(tmp, sizeof tmp, "%.*s.%s", nd + dexp, digits, digits + nd + dexp);
        } else {
            snprintf(tmp, sizeof tmp, "0.%0*d%s", -dexp - nd, 0, digits);
            if (-dexp - nd == 0)
                snprintf(tmp, sizeof tmp, "0.%s", digits);
        }
        snprintf(buf, len, "%s%s", sign, tmp);
    } else {
        snprintf(buf, len, "%s%c%s%.*se%+d", sign, digits[0], nd > 1 ? "." : "", nd - 1, digits + 1, sci);
    }
}
