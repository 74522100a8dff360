/*
 * layout.c - which table rows have a CUDA wrapper, their PTX text, fragment
 * layouts and expected SASS opcode (layout.h).  Read by the wrapper
 * generator, the CUDA backend, the layout tests and the SASS check.
 */
#include "layout.h"

#include <stdio.h>
#include <string.h>

const char *const mf_wgmma_variants[] = {"", "a_reg", "n256", "n256,a_reg", NULL};

static int is_8bit(mf_format f) { return f == MF_FMT_E4M3 || f == MF_FMT_E5M2; }
static int is_16bit(mf_format f) { return f == MF_FMT_F16 || f == MF_FMT_BF16; }

mf_ptx_kind mf_ptx_kind_of(const mf_instr *in, const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    *why = "";
    if (mf_arch_is_amd(in->arch)) {
        *why = "AMD instruction (HIP device layer)";
        return MF_PTX_NONE;
    }
    if (in->arch == MF_ARCH_VOLTA) {
        *why = "model-only: nvcc 13.0 no longer builds sm_70";
        return MF_PTX_NONE;
    }
    if (!strncmp(in->qualifier, "wgmma.", 6))
        return in->m == 64 ? MF_PTX_WGMMA : MF_PTX_NONE;
    if (!strncmp(in->qualifier, "tcgen05.", 8)) {
        *why = "no tcgen05 wrapper yet (tensor-memory kernels)";
        return MF_PTX_NONE;
    }
    if (strncmp(in->qualifier, "mma.", 4) || in->n_scales) {
        *why = "no wrapper for this PTX form yet (block-scaled mma)";
        return MF_PTX_NONE;
    }
    mf_format a = in->fa;
    int ok = 0;
    if (a == MF_FMT_F64)
        ok = in->n == 8 && ((in->m == 8 && in->k == 4) || (in->m == 16 && (in->k == 4 || in->k == 8 || in->k == 16)));
    else if (a == MF_FMT_TF32)
        ok = in->m == 16 && (in->k == 4 || in->k == 8);
    else if (is_16bit(a))
        ok = in->m == 16 && (in->k == 8 || in->k == 16);
    else if (is_8bit(a) && is_8bit(in->fb))
        ok = in->m == 16 && (in->k == 16 || in->k == 32);
    if (!ok) {
        *why = in->m == 8 ? "no wrapper for the m8n8k4 quad-pair layout" : "no wrapper for these operand formats yet";
        return MF_PTX_NONE;
    }
    return MF_PTX_MMA_SYNC;
}

int mf_variant_parse(const mf_instr *in, const char *variant, mf_variant *out)
{
    out->n = in->n;
    out->a_reg = mf_ptx_kind_of(in, NULL) == MF_PTX_MMA_SYNC;
    if (!variant || !*variant)
        return 0;
    if (mf_ptx_kind_of(in, NULL) != MF_PTX_WGMMA)
        return -1;
    for (int i = 1; mf_wgmma_variants[i]; i++)
        if (!strcmp(variant, mf_wgmma_variants[i])) {
            out->n = strstr(variant, "n256") ? 256 : in->n;
            out->a_reg = strstr(variant, "a_reg") != NULL;
            return 0;
        }
    return -1;
}

/* A layout in the linear form of layout.h. */
static mf_frag_layout lay(int g_row, int g_col, int t_row, int t_col, int nbits, const int *rs, const int *cs)
{
    mf_frag_layout L;
    memset(&L, 0, sizeof L);
    L.g_row = (int8_t)g_row;
    L.g_col = (int8_t)g_col;
    L.t_row = (int8_t)t_row;
    L.t_col = (int8_t)t_col;
    L.nbits = (int8_t)nbits;
    for (int b = 0; b < nbits; b++) {
        L.row_step[b] = (int16_t)(rs ? rs[b] : 0);
        L.col_step[b] = (int16_t)(cs ? cs[b] : 0);
    }
    return L;
}

/* A fragment of an M=16 (per warp) operand of K columns; PTX ISA "Matrix
 * Fragments for mma.m16n8k*" (DOMAIN section 8). */
static mf_frag_layout a_frag(mf_format f, int k)
{
    if (f == MF_FMT_F64 || f == MF_FMT_TF32) {
        /* .tf32/.f64 m16n8k4/k8/k16: row = groupID (+8 for odd e); col = tig + 4*(e>>1) */
        static const int rs[3] = {8, 0, 0}, cs[3] = {0, 4, 8};
        return lay(1, 0, 0, 1, k == 4 ? 1 : k == 8 ? 2 : 3, rs, cs);
    }
    if (is_16bit(f)) {
        /* .f16/.bf16 m16n8k8/k16: row = groupID (+8 for e&2); col = tig*2 + (e&1) (+8 for e>=4) */
        static const int rs[3] = {0, 8, 0}, cs[3] = {1, 0, 8};
        return lay(1, 0, 0, 2, k == 8 ? 2 : 3, rs, cs);
    }
    /* 8-bit m16n8k16/k32: row = groupID (+8 for e&4); col = tig*4 + (e&3) (+16 for e>=8) */
    static const int rs[4] = {0, 0, 8, 0}, cs[4] = {1, 2, 0, 16};
    return lay(1, 0, 0, 4, k == 16 ? 3 : 4, rs, cs);
}

/* B fragment (K x 8) of mma.sync; same sources. */
static mf_frag_layout b_frag(mf_format f, int k)
{
    if (f == MF_FMT_F64 || f == MF_FMT_TF32) {
        /* row = tig + 4*e; col = groupID */
        static const int rs[2] = {4, 8};
        return lay(0, 1, 1, 0, k == 4 ? 0 : k == 8 ? 1 : 2, rs, NULL);
    }
    if (is_16bit(f)) {
        /* row = tig*2 + (e&1) (+8 for e>=2); col = groupID */
        static const int rs[2] = {1, 8};
        return lay(0, 1, 2, 0, k == 8 ? 1 : 2, rs, NULL);
    }
    /* 8-bit: row = tig*4 + (e&3) (+16 for e>=4); col = groupID */
    static const int rs[3] = {1, 2, 16};
    return lay(0, 1, 4, 0, k == 16 ? 2 : 3, rs, NULL);
}

/* C/D fragment of m16n8 (mma.sync) and of each warp's 16 rows of wgmma
 * m64nN (PTX ISA "wgmma .m64nNk*: Matrix D register fragment"):
 * row = groupID (+8 for e&2); col = tig*2 + (e&1) + 8*(e>>2). */
static mf_frag_layout cd_frag(int n)
{
    static const int rs[8] = {0, 8, 0, 0, 0, 0, 0, 0}, cs[8] = {1, 0, 8, 16, 32, 64, 128, 256};
    int nbits = 0;
    while ((2 << nbits) < n)
        nbits++;
    return lay(1, 0, 0, 2, nbits, rs, cs);
}

int mf_wrap_shape_of(const mf_instr *in, const mf_variant *v, mf_wrap_shape *out)
{
    memset(out, 0, sizeof *out);
    out->kind = mf_ptx_kind_of(in, NULL);
    out->m = in->m;
    out->n = v->n;
    out->k = in->k;
    switch (out->kind) {
    case MF_PTX_MMA_SYNC:
        out->threads = 32;
        out->a_in_regs = 1;
        if (in->m == 8) {
            /* m8n8k4 .f64: A row = groupID, col = tig; B row = tig, col = groupID;
             * C/D row = groupID, col = tig*2 + e */
            static const int cs[1] = {1};
            out->a = lay(1, 0, 0, 1, 0, NULL, NULL);
            out->b = lay(0, 1, 1, 0, 0, NULL, NULL);
            out->cd = lay(1, 0, 0, 2, 1, NULL, cs);
        } else {
            out->a = a_frag(in->fa, in->k);
            out->b = b_frag(in->fb, in->k);
            out->cd = cd_frag(8);
        }
        return 0;
    case MF_PTX_WGMMA:
        if (v->n != 8 && v->n != 256)
            return -1;
        out->threads = 128;
        out->a_in_regs = v->a_reg;
        out->a = a_frag(in->fa, in->k);
        out->a.w_row = 16;
        out->cd = cd_frag(v->n);
        out->cd.w_row = 16;
        return 0;
    default:
        return -1;
    }
}

/* The qualifier's text after "OP.mMnNkK." (the types). */
static const char *types_of(const mf_instr *in)
{
    const char *p = strchr(in->qualifier, '.');
    return p ? strchr(p + 1, '.') : NULL;
}

int mf_ptx_text(const mf_instr *in, const mf_variant *v, char *buf, size_t len)
{
    const char *types = types_of(in);
    int n;
    switch (mf_ptx_kind_of(in, NULL)) {
    case MF_PTX_MMA_SYNC:
        n = snprintf(buf, len, "mma.sync.aligned.m%dn%dk%d.row.col%s", in->m, in->n, in->k, types);
        break;
    case MF_PTX_WGMMA:
        n = snprintf(buf, len, "wgmma.mma_async.sync.aligned.m%dn%dk%d%s", in->m, v->n, in->k, types);
        break;
    default:
        return -1;
    }
    return n > 0 && (size_t)n < len ? 0 : -1;
}

static const char *sass_type(mf_format f)
{
    switch (f) {
    case MF_FMT_E4M3: return "E4M3";
    case MF_FMT_E5M2: return "E5M2";
    case MF_FMT_BF16: return "BF16";
    case MF_FMT_TF32: return "TF32";
    default: return "";
    }
}

int mf_sass_expect(const mf_instr *in, const mf_variant *v, char *buf, size_t len)
{
    const char *acc = in->fd == MF_FMT_F16 ? "F16" : "F32";
    int n;
    switch (mf_ptx_kind_of(in, NULL)) {
    case MF_PTX_MMA_SYNC:
        if (in->fa == MF_FMT_F64) {
            /* FP64 tensor core, one DMMA of the same shape; sm_80/sm_89 spell
             * m8n8k4 "DMMA.884", sm_90 and later write "DMMA.8x8x4", "DMMA.16x8x16" */
            if (in->arch != MF_ARCH_AMPERE && in->arch != MF_ARCH_ADA)
                n = snprintf(buf, len, "DMMA.%dx%dx%d", in->m, in->n, in->k);
            else
                n = snprintf(buf, len, "DMMA.%d%d%d", in->m, in->n, in->k);
        } else if (is_8bit(in->fa) && (in->arch == MF_ARCH_HOPPER || in->arch == MF_ARCH_BLACKWELL)) {
            /* no fp8 mma.sync unit on sm_90/sm_100: fp8 -> f16 (F2FP), then two
             * chained HMMA: .16816 for K=32, .1688 for K=16 (DOMAIN section 5) */
            n = snprintf(buf, len, "HMMA.%s.%s", in->k == 32 ? "16816" : "1688", acc);
        } else if (is_8bit(in->fa)) {
            n = snprintf(buf, len, "QMMA.168%d.%s.%s.%s", in->k, acc, sass_type(in->fa), sass_type(in->fb));
        } else {
            const char *t = sass_type(in->fa);
            n = snprintf(buf, len, "HMMA.168%d.%s%s%s", in->k, acc, *t ? "." : "", t);
        }
        break;
    case MF_PTX_WGMMA:
        if (is_8bit(in->fa))
            n = snprintf(buf, len, "QGMMA.64x%dx%d.%s.%s.%s", v->n, in->k, acc, sass_type(in->fa), sass_type(in->fb));
        else {
            const char *t = sass_type(in->fa);
            n = snprintf(buf, len, "HGMMA.64x%dx%d.%s%s%s", v->n, in->k, acc, *t ? "." : "", t);
        }
        break;
    default:
        return -1;
    }
    return n > 0 && (size_t)n < len ? 0 : -1;
}
