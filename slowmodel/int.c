/*
 * int.c - the slow model of the integer family (MF_INT_DOT), written from
 * the PTX ISA's description of integer mma: each product and c as exact
 * integers, their sum, then modulo 2^32 or, with .satfinite, clamped to the
 * s32 range; b1: each of the 32 bit positions of a word counted one at a
 * time (AND or XOR).  It reads the formats' widths from the table row only
 * and does its own sign extension.  Sparse rows (mma.sp): only the positions
 * the metadata keeps count (PTX ISA "Sparse matrix storage": s8/u8, bits 0-1
 * and 2-3 of a group's nibble are the two kept positions of its 4; s4/u4,
 * the two kept pairs of its 8), read here from the nibble's bits.
 */
#include "slow_internal.h"

/* The bits of x of an integer format: low `bits` bits, signed or not. */
static int64_t sm_int(uint64_t x, int bits, int is_signed)
{
    uint64_t v = x & ((UINT64_C(1) << bits) - 1);
    if (is_signed && v >= (UINT64_C(1) << (bits - 1)))
        return -(int64_t)((UINT64_C(1) << bits) - v);
    return (int64_t)v;
}

static int fmt_bits(mf_format f) { return mf_format_table[f].bits; }
static int fmt_signed(mf_format f) { return mf_format_table[f].has_sign; }

uint64_t sm_eval_int(const mf_instr *in, const mf_case *cs)
{
    int64_t sum = in->no_c ? 0 : sm_int(cs->c, 32, 1);
    for (int k = 0; k < in->k; k++) {
        if (in->sparse) {
            int per = in->sp_group / 4;  /* elements an index names: 1, or 2 (a pair) */
            unsigned v = cs->meta[k / in->sp_group];
            int slot = (k % in->sp_group) / per;
            if (slot != (int)(v & 3) && slot != (int)((v >> 2) & 3))
                continue;   /* pruned: never reaches the hardware */
        }
        if (in->fa == MF_FMT_B1) {
            for (int bit = 0; bit < 32; bit++) {
                int x = (int)((cs->a[k] >> bit) & 1), y = (int)((cs->b[k] >> bit) & 1);
                sum += (in->x & MF_INT_XOR) ? (x != y) : (x && y);
            }
        } else {
            sum += sm_int(cs->a[k], fmt_bits(in->fa), fmt_signed(in->fa)) *
                   sm_int(cs->b[k], fmt_bits(in->fb), fmt_signed(in->fb));
        }
    }
    if (in->x & MF_INT_SATFINITE) {
        if (sum > INT32_MAX)
            sum = INT32_MAX;
        if (sum < INT32_MIN)
            sum = INT32_MIN;
    }
    return (uint64_t)sum & 0xFFFFFFFFu;
}
