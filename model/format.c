/*
 * format.c - number formats: descriptions and bit-pattern decoding
 * (shared/DOMAIN.md section 2).
 */
#include "internal.h"

#include <string.h>

/* name, bits, hex width, exp bits, frac bits, bias, has_sign, has_inf; one
 * row per mf_format, in its order (positional: the table also compiles as
 * C++ for the device, which has no array designators). */
MF_DEVTAB const mf_format_info mf_format_table[MF_FMT_COUNT] = {
    /* MF_FMT_NONE     */ {"none",     0,  0,  0,  0,    0, 0, 0},
    /* MF_FMT_F64      */ {"f64",     64, 16, 11, 52, 1023, 1, 1},
    /* MF_FMT_F32      */ {"f32",     32,  8,  8, 23,  127, 1, 1},
    /* MF_FMT_TF32     */ {"tf32",    32,  8,  8, 10,  127, 1, 1},
    /* MF_FMT_F16      */ {"f16",     16,  4,  5, 10,   15, 1, 1},
    /* MF_FMT_BF16     */ {"bf16",    16,  4,  8,  7,  127, 1, 1},
    /* MF_FMT_E4M3     */ {"e4m3",     8,  2,  4,  3,    7, 1, 0},
    /* MF_FMT_E5M2     */ {"e5m2",     8,  2,  5,  2,   15, 1, 1},
    /* MF_FMT_E4M3FNUZ */ {"e4m3fnuz", 8,  2,  4,  3,    8, 1, 0},
    /* MF_FMT_E5M2FNUZ */ {"e5m2fnuz", 8,  2,  5,  2,   16, 1, 0},
    /* MF_FMT_E3M2     */ {"e3m2",     6,  2,  3,  2,    3, 1, 0},
    /* MF_FMT_E2M3     */ {"e2m3",     6,  2,  2,  3,    1, 1, 0},
    /* MF_FMT_E2M1     */ {"e2m1",     4,  1,  2,  1,    1, 1, 0},
    /* MF_FMT_UE8M0    */ {"ue8m0",    8,  2,  8,  0,  127, 0, 0},
    /* MF_FMT_UE4M3    */ {"ue4m3",    8,  2,  4,  3,    7, 0, 0},
    /* MF_FMT_S8       */ {"s8",       8,  2,  0,  0,    0, 1, 0},
    /* MF_FMT_U8       */ {"u8",       8,  2,  0,  0,    0, 0, 0},
    /* MF_FMT_S4       */ {"s4",       4,  1,  0,  0,    0, 1, 0},
    /* MF_FMT_U4       */ {"u4",       4,  1,  0,  0,    0, 0, 0},
    /* MF_FMT_B1       */ {"b1",      32,  8,  0,  0,    0, 0, 0},  /* 32 values per element */
    /* MF_FMT_S32      */ {"s32",     32,  8,  0,  0,    0, 1, 0},
};

#if !MF_TABLE_DECLS
MF_HD const mf_format_info *mf_format_row(unsigned f)
{
    return &mf_format_table[f];
}
#endif

#ifndef MF_DEVICE_BUILD
mf_format mf_format_by_name(const char *name)
{
    for (int f = 1; f < MF_FMT_COUNT; f++)
        if (strcmp(mf_format_table[f].name, name) == 0)
            return (mf_format)f;
    return MF_FMT_NONE;
}
#endif


MF_HD mf_value mf_decode(mf_format f, uint64_t x)
{
    mf_value v;
    switch (f) {
    case MF_FMT_F64:
        return mf_decode_ieee(x, 11, 52, 1023, 1);
    case MF_FMT_F32:
        return mf_decode_ieee(x & 0xFFFFFFFFu, 8, 23, 127, 1);
    case MF_FMT_TF32:
        /* The tensor cores read the top 19 bits only (DOMAIN section 2). */
        return mf_decode_ieee((x & 0xFFFFFFFFu) >> 13, 8, 10, 127, 1);
    case MF_FMT_F16:
        return mf_decode_ieee(x & 0xFFFF, 5, 10, 15, 1);
    case MF_FMT_BF16:
        return mf_decode_ieee(x & 0xFFFF, 8, 7, 127, 1);
    case MF_FMT_E5M2:
        return mf_decode_ieee(x & 0xFF, 5, 2, 15, 1);
    case MF_FMT_E4M3:
        x &= 0xFF;
        if ((x & 0x7F) == 0x7F) { /* S.1111.111 is the only NaN; no Inf */
            v.sign = (uint8_t)(x >> 7);
            v.cls = MF_CLS_NAN;
            v.sig = 0;
            v.exp = 0;
            return v;
        }
        return mf_decode_ieee(x, 4, 3, 7, 0);
    case MF_FMT_E4M3FNUZ:
    case MF_FMT_E5M2FNUZ:
        x &= 0xFF;
        if (x == 0x80) { /* the only NaN; there is no -0 and no Inf */
            v.sign = 1;
            v.cls = MF_CLS_NAN;
            v.sig = 0;
            v.exp = 0;
            return v;
        }
        return f == MF_FMT_E4M3FNUZ ? mf_decode_ieee(x, 4, 3, 8, 0) : mf_decode_ieee(x, 5, 2, 16, 0);
    case MF_FMT_E3M2:
        return mf_decode_ieee(x & 0x3F, 3, 2, 3, 0);
    case MF_FMT_E2M3:
        return mf_decode_ieee(x & 0x3F, 2, 3, 1, 0);
    case MF_FMT_E2M1:
        return mf_decode_ieee(x & 0xF, 2, 1, 1, 0);
    case MF_FMT_UE8M0:
        x &= 0xFF;
        v.sign = 0;
        v.sig = 1;
        v.exp = (int)x - 127;
        v.cls = x == 0xFF ? MF_CLS_NAN : MF_CLS_FINITE;
        return v;
    case MF_FMT_UE4M3:
        /* The hardware ignores the top bit (DOMAIN section 2). */
        x &= 0x7F;
        if (x == 0x7F) {
            v.sign = 0;
            v.cls = MF_CLS_NAN;
            v.sig = 0;
            v.exp = 0;
            return v;
        }
        return mf_decode_ieee(x, 4, 3, 7, 0);
    case MF_FMT_S8:
    case MF_FMT_U8:
    case MF_FMT_S4:
    case MF_FMT_U4:
    case MF_FMT_B1:
    case MF_FMT_S32: {
        /* integers: value = (-1)^sign * sig (exp 0, no fraction bits); b1: the
         * 32-bit word as an unsigned integer */
        const mf_format_info *fi = mf_format_get(f);
        x &= (UINT64_C(1) << fi->bits) - 1;
        int neg = fi->has_sign && ((x >> (fi->bits - 1)) & 1);
        v.sign = (uint8_t)neg;
        v.sig = neg ? (UINT64_C(1) << fi->bits) - x : x;
        v.exp = 0;
        v.cls = x ? MF_CLS_FINITE : MF_CLS_ZERO;
        return v;
    }
    default:
        v.sign = 0;
        v.cls = MF_CLS_NAN;
        v.sig = 0;
        v.exp = 0;
        return v;
    }
}

MF_HD int mf_is_nan(mf_format f, uint64_t x)
{
    return mf_decode(f, x).cls == MF_CLS_NAN;
}

/* ------------------------------------------------ decode look-up tables */

#ifndef MF_DEVICE_BUILD  /* host only: device code decodes from the fields */

/* Formats of 16 bits or fewer (tf32 excepted) decode through tables built
 * once at load time from mf_decode itself; see mf_decode_fast. */
static uint32_t tab_f16[1 << 16], tab_bf16[1 << 16];
static uint32_t tab_8bit[MF_FMT_COUNT][256];

const uint32_t *mf_dec_tab[MF_FMT_COUNT];
uint32_t mf_dec_mask[MF_FMT_COUNT];

__attribute__((constructor)) static void build_decode_tables(void)
{
    for (uint32_t x = 0; x < (1u << 16); x++) {
        tab_f16[x] = mf_dec_pack(mf_decode(MF_FMT_F16, x));
        tab_bf16[x] = mf_dec_pack(mf_decode(MF_FMT_BF16, x));
    }
    mf_dec_tab[MF_FMT_F16] = tab_f16;
    mf_dec_mask[MF_FMT_F16] = 0xFFFF;
    mf_dec_tab[MF_FMT_BF16] = tab_bf16;
    mf_dec_mask[MF_FMT_BF16] = 0xFFFF;
    for (int f = MF_FMT_E4M3; f <= MF_FMT_UE4M3; f++) {
        for (uint32_t x = 0; x < 256; x++)
            tab_8bit[f][x] = mf_dec_pack(mf_decode((mf_format)f, x));
        mf_dec_tab[f] = tab_8bit[f];
        mf_dec_mask[f] = 0xFF;
    }
}
#endif
