/*
 * mfma_info.c - builtin name, lane fragment sizes and block count of the
 * HIP wrapper of an AMD table row (mfma_info.h).
 *
 * Sources:
 *  - builtin names and operand types: LLVM clang/include/clang/Basic/
 *    BuiltinsAMDGPU.def (the __builtin_amdgcn_mfma_* entries).  They keep the
 *    CDNA1/CDNA2 spelling; CDNA3 renamed the instructions (AMD "CDNA3 ISA",
 *    section 7 "Matrix Arithmetic Instructions"), so a CDNA3 qualifier maps
 *    back by dropping the block suffix "_<N>b" and the '_' before f32, f64
 *    and f16, and by writing bf16 as "bf16_1k"; xf32 and the fp8/bf8 types
 *    keep their CDNA3 spelling.
 *  - elements per lane: the builtins' operand types, i.e. one 32-bit
 *    register (f32; bf16 before the "_1k" forms: 2 x bf16) or one 64-bit
 *    register pair (f64; xf32: 2 x f32; f16 and bf16_1k: 4 x 16 bits;
 *    fp8/bf8: 8 x 8 bits) per lane.
 *  - blocks: 64 lanes hold blocks x M x K elements of A, so
 *    blocks = 64 * elems / (M * K) (AMD Matrix Instruction Calculator,
 *    "blocks"; CDNA3 writes it in the name, which tests/hip checks).
 * The compiler checks the result: the generated wrappers are compiled with
 * -flax-vector-conversions=none, so an operand or accumulator vector of the
 * wrong length does not compile.
 */
#include "mfma_info.h"

#include <stdio.h>
#include <string.h>

void mf_mfma_mnemonic(const mf_instr *in, char *buf, size_t len)
{
    snprintf(buf, len, "v_%s", in->qualifier);
    for (char *p = buf; *p; p++)
        if (*p == '.')
            *p = '_';
}

/* Elements of A (and B) per lane: the builtin's operand register width
 * divided by the element width (header comment). */
static int lane_elems(const mf_instr *in)
{
    size_t qn = strlen(in->qualifier);
    int bf16_1k = in->arch == MF_ARCH_CDNA3 || (qn > 3 && !strcmp(in->qualifier + qn - 3, "_1k"));
    switch (in->fa) {
    case MF_FMT_F32:
    case MF_FMT_F64: return 1;
    case MF_FMT_TF32: return 2;
    case MF_FMT_F16: return 4;
    case MF_FMT_BF16: return bf16_1k ? 4 : 2;
    case MF_FMT_E4M3FNUZ:
    case MF_FMT_E5M2FNUZ: return 8;
    default: return 0;
    }
}

/* The builtin of a CDNA3 qualifier body ("f32_32x32x1_2b_f32" ->
 * "f32_32x32x1f32"), following the rules in the header comment. */
static int cdna3_builtin_body(const char *q, char *out, size_t len)
{
    char dtype[8], shape[24], rest[40];
    /* "<dtype>_<MxNxK>_<rest>" */
    const char *u1 = strchr(q, '_');
    const char *u2 = u1 ? strchr(u1 + 1, '_') : NULL;
    if (!u1 || !u2 || (size_t)(u1 - q) >= sizeof dtype || (size_t)(u2 - u1 - 1) >= sizeof shape ||
        strlen(u2 + 1) >= sizeof rest)
        return -1;
    memcpy(dtype, q, (size_t)(u1 - q));
    dtype[u1 - q] = 0;
    memcpy(shape, u1 + 1, (size_t)(u2 - u1 - 1));
    shape[u2 - u1 - 1] = 0;
    strcpy(rest, u2 + 1);
    /* drop a block count "<N>b_" */
    char *b = rest;
    while (*b >= '0' && *b <= '9')
        b++;
    if (b > rest && b[0] == 'b' && b[1] == '_')
        memmove(rest, b + 2, strlen(b + 2) + 1);
    const char *join = "", *suffix = "";
    if (!strcmp(rest, "bf16"))
        suffix = "_1k";
    else if (strcmp(rest, "f32") && strcmp(rest, "f64") && strcmp(rest, "f16"))
        join = "_"; /* xf32, fp8_fp8, bf8_fp8, ... */
    int n = snprintf(out, len, "%s_%s%s%s%s", dtype, shape, join, rest, suffix);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

int mf_mfma_info_get(const mf_instr *in, mf_mfma_info *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->in = in;
    if (!mf_arch_is_amd(in->arch)) {
        snprintf(err, errlen, "%s: not an AMD instruction", in->name);
        return -1;
    }
    if (strncmp(in->qualifier, "mfma.", 5) != 0) {
        snprintf(err, errlen, "%s: AMD qualifiers start with \"mfma.\"", in->name);
        return -1;
    }
    const char *q = in->qualifier + 5;
    char body[48];
    if (in->arch == MF_ARCH_CDNA3) {
        if (cdna3_builtin_body(q, body, sizeof body)) {
            snprintf(err, errlen, "%s: expected a qualifier mfma.<D>_<MxNxK>[_<N>b]_<type>", in->name);
            return -1;
        }
    } else {
        snprintf(body, sizeof body, "%s", q);
    }
    snprintf(out->builtin, sizeof out->builtin, "__builtin_amdgcn_mfma_%s", body);

    int n = snprintf(out->symbol, sizeof out->symbol, "mf_k_%s__%s", mf_arch_name(in->arch), in->qualifier);
    (void)n;
    for (char *p = out->symbol; *p; p++)
        if (*p == '.')
            *p = '_';

    out->ab_elems = lane_elems(in);
    if (out->ab_elems == 0 || mf_format_get(in->fa)->bits != mf_format_get(in->fb)->bits) {
        snprintf(err, errlen, "%s: A/B formats %s/%s have no MFMA operand rule", in->name,
                 mf_format_get(in->fa)->name, mf_format_get(in->fb)->name);
        return -1;
    }
    int mk = in->m * in->k;
    if (mk == 0 || (64 * out->ab_elems) % mk != 0 || in->m != in->n || in->fc != in->fd) {
        snprintf(err, errlen, "%s: shape %dx%dx%d does not fit 64 lanes of %d elements", in->name, in->m, in->n,
                 in->k, out->ab_elems);
        return -1;
    }
    out->blocks = 64 * out->ab_elems / mk;
    out->cd_elems = in->m * in->n * out->blocks / 64;
    if (out->cd_elems == 0) {
        snprintf(err, errlen, "%s: %d blocks of %dx%d do not fill 64 lanes", in->name, out->blocks, in->m, in->n);
        return -1;
    }
    return 0;
}
