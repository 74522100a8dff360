/*
 * layout.c - which table rows have a CUDA wrapper, their PTX text, fragment
 * layouts and expected SASS opcode (layout.h).  Read by the wrapper
 * generator, the CUDA backend, the layout tests and the SASS check.
 */
#include "layout.h"

#include <stdio.h>
#include <string.h>

static int is_8bit(mf_format f) { return f == MF_FMT_E4M3 || f == MF_FMT_E5M2; }
static int is_16bit(mf_format f) { return f == MF_FMT_F16 || f == MF_FMT_BF16; }
static int is_int8(mf_format f) { return f == MF_FMT_S8 || f == MF_FMT_U8; }
static int is_int4(mf_format f) { return f == MF_FMT_S4 || f == MF_FMT_U4; }

const char *const mf_wgmma_variants[] = {"", "a_reg", "n256", "n256,a_reg", NULL};

const char *const *mf_wgmma_sp_variants(const mf_instr *in)
{
    static const char *const sel01[] = {"", "a_reg", "n256", "n256,a_reg", "sel1", NULL};
    return mf_sp_sel_ok(in, 1) ? sel01 : mf_wgmma_variants;
}

/* mma.sp: the sparsity selector as a variant (the default "" is selector 0). */
const char *const mf_sp_variants[] = {"sel1", "sel2", "sel3", NULL};

int mf_sp_sel_ok(const mf_instr *in, int sel)
{
    return in->sparse && sel >= 0 && sel < 16 / in->n_meta;   /* 4, 8, 16 nibbles a row: 4, 2, 1 selectors */
}

/* The operand forms of wgmma, each a variant of its own with N = 8 and A from
 * shared memory (layout.h): the sign flips only for floating-point rows (PTX:
 * integer wgmma has no imm-scale-a/b), scale-d = 0 for every row. */
const char *const mf_wgmma_form_variants[] = {"neg_a", "neg_b", "neg_ab", "no_c", "trans_a", "trans_b", "trans_ab", NULL};

int mf_variant_form_ok(const mf_instr *in, const char *variant)
{
    mf_instr row;
    if (mf_variant_changes_arithmetic(variant))   /* the model's table of forms says which rows take it */
        return mf_instr_with_form(in, variant, &row) == 0;
    return !strncmp(variant, "trans_", 6) && is_16bit(in->fa) && is_16bit(in->fb);
}

int mf_variant_changes_arithmetic(const char *variant)
{
    for (int i = 1; variant && i <= MF_INSTR_FORMS; i++)   /* the model's forms (mf_instr_with_form) */
        if (!strcmp(variant, mf_instr_form_name_at(i)))
            return 1;
    return 0;
}


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
    if (!strncmp(in->qualifier, "wgmma.", 6) && in->sparse) {
        /* wgmma.mma_async.sp (PTX ISA 9.7.15.6.3): f16/bf16 m64nNk32, tf32
         * m64nNk16, e4m3/e5m2 m64nNk64 (f32 and f16 D), s8/u8 m64nNk64 */
        int ok = in->m == 64 && ((in->fa == in->fb && is_16bit(in->fa) && in->k == 32) ||
                                 (in->fa == in->fb && in->fa == MF_FMT_TF32 && in->k == 16) ||
                                 (is_8bit(in->fa) && is_8bit(in->fb) && in->k == 64) ||
                                 (is_int8(in->fa) && is_int8(in->fb) && in->k == 64));
        if (!ok) {
            *why = "no wrapper for this wgmma.sp shape";
            return MF_PTX_NONE;
        }
        return MF_PTX_WGMMA_SP;
    }
    if (!strncmp(in->qualifier, "wgmma.", 6)) {
        if (in->m != 64 || (mf_format_is_int(in->fa) && !(is_int8(in->fa) && is_int8(in->fb) && in->k == 32) &&
                            !(in->fa == MF_FMT_B1 && in->k == 8))) {
            *why = "no wrapper for this wgmma shape";
            return MF_PTX_NONE;
        }
        return MF_PTX_WGMMA;
    }
    if (!strncmp(in->qualifier, "tcgen05.", 8)) {
        /* tcgen05.mma, cta_group::1: the kinds of mf_tcgen05_kind at the
         * canonical shapes (M = 64 dense, M = 128 block-scaled, N = 8) */
        if (!mf_tcgen05_kind(in) || !((in->m == 64 && !in->n_scales) || (in->m == 128 && in->n_scales)) || in->n != 8) {
            *why = "no tcgen05 wrapper for this kind or shape";
            return MF_PTX_NONE;
        }
        return MF_PTX_TCGEN05;
    }
    if (in->sparse) {
        /* mma.sp, row.col, m16n8: f16/bf16 k16/k32, tf32 k8/k16, s8/u8 k32/k64,
         * s4/u4 k64/k128, e4m3/e5m2 k64 with f32 (PTX ISA "mma.sp") */
        int ok = in->m == 16 && in->n == 8 &&
                 ((in->fa == in->fb && is_16bit(in->fa) && (in->k == 16 || in->k == 32)) ||
                  (in->fa == in->fb && in->fa == MF_FMT_TF32 && (in->k == 8 || in->k == 16)) ||
                  (is_int8(in->fa) && is_int8(in->fb) && (in->k == 32 || in->k == 64)) ||
                  (is_8bit(in->fa) && is_8bit(in->fb) && in->k == 64 && in->fd == MF_FMT_F32) ||
                  (is_int4(in->fa) && is_int4(in->fb) && (in->k == 64 || in->k == 128)));
        if (!ok) {
            *why = "no wrapper for these sparse formats yet";
            return MF_PTX_NONE;
        }
        return MF_PTX_MMA_SP;
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
    else if (is_int8(a) && is_int8(in->fb))  /* m8n8k16, m16n8k16, m16n8k32 */
        ok = (in->m == 8 && in->k == 16) || (in->m == 16 && (in->k == 16 || in->k == 32));
    else if (is_int4(a) && is_int4(in->fb))  /* m8n8k32, m16n8k32, m16n8k64 */
        ok = (in->m == 8 && in->k == 32) || (in->m == 16 && (in->k == 32 || in->k == 64));
    else if (a == MF_FMT_B1 && in->fb == MF_FMT_B1)  /* k128 (4 words), k256 (8 words) */
        ok = (in->m == 8 && in->k == 4) || (in->m == 16 && (in->k == 4 || in->k == 8));
    if (!ok) {
        *why = in->m == 8 ? "no wrapper for the m8n8k4 quad-pair layout" : "no wrapper for these operand formats yet";
        return MF_PTX_NONE;
    }
    return MF_PTX_MMA_SYNC;
}

int mf_variant_parse(const mf_instr *in, const char *variant, mf_variant *out)
{
    memset(out, 0, sizeof *out);
    out->n = in->n;
    out->a_reg = mf_ptx_kind_of(in, NULL) == MF_PTX_MMA_SYNC || mf_ptx_kind_of(in, NULL) == MF_PTX_MMA_SP;
    if (!variant || !*variant)
        return 0;
    if (mf_ptx_kind_of(in, NULL) == MF_PTX_MMA_SP) {
        for (int i = 0; mf_sp_variants[i]; i++)
            if (!strcmp(variant, mf_sp_variants[i]) && mf_sp_sel_ok(in, i + 1)) {
                out->sel = i + 1;
                return 0;
            }
        return -1;
    }
    mf_ptx_kind kind = mf_ptx_kind_of(in, NULL);
    if (kind != MF_PTX_WGMMA && kind != MF_PTX_WGMMA_SP)
        return -1;
    if (kind == MF_PTX_WGMMA_SP && !strcmp(variant, "sel1") && mf_sp_sel_ok(in, 1)) {
        out->sel = 1;
        return 0;
    }
    for (int i = 1; mf_wgmma_variants[i]; i++)
        if (!strcmp(variant, mf_wgmma_variants[i])) {
            out->n = strstr(variant, "n256") ? 256 : in->n;
            out->a_reg = strstr(variant, "a_reg") != NULL;
            return 0;
        }
    for (int i = 0; mf_wgmma_form_variants[i]; i++)
        if (!strcmp(variant, mf_wgmma_form_variants[i]) && mf_variant_form_ok(in, variant)) {
            out->neg_a = !strcmp(variant, "neg_a") || !strcmp(variant, "neg_ab");
            out->neg_b = !strcmp(variant, "neg_b") || !strcmp(variant, "neg_ab");
            out->no_c = !strcmp(variant, "no_c");
            out->trans_a = !strcmp(variant, "trans_a") || !strcmp(variant, "trans_ab");
            out->trans_b = !strcmp(variant, "trans_b") || !strcmp(variant, "trans_ab");
            return 0;
        }
    return -1;
}

int mf_variant_model_row(const mf_instr *in, const char *variant, mf_instr *out)
{
    mf_variant v;
    if (mf_variant_parse(in, variant, &v))
        return -1;
    if (!mf_variant_changes_arithmetic(variant)) {
        *out = *in;
        return 0;
    }
    return mf_instr_with_form(in, variant, out);   /* the model's table of forms */
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
    if (is_int4(f)) {
        /* .s4/.u4 m16n8k32/k64 (one ABI element per value, 8 per register):
         * row = groupID (+8 for e&8); col = tig*8 + (e&7) (+32 for e>=16) */
        static const int rs4[5] = {0, 0, 0, 8, 0}, cs4[5] = {1, 2, 4, 0, 32};
        return lay(1, 0, 0, 8, k == 32 ? 4 : 5, rs4, cs4);
    }
    if (f == MF_FMT_B1) {
        /* .b1 m16n8k128/k256, in 32-bit words (k = K/32 = 4 or 8): row = groupID
         * (+8 for e&1); word = tig (+4 for e>=2, i.e. +128 values) */
        static const int rs1[2] = {8, 0}, cs1[2] = {0, 4};
        return lay(1, 0, 0, 1, k == 4 ? 1 : 2, rs1, cs1);
    }
    /* 8-bit (fp8, s8/u8) m16n8k16/k32: row = groupID (+8 for e&4); col = tig*4 + (e&3) (+16 for e>=8) */
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
        /* row = tig*2 + (e&1) + 8*(e>>1); col = groupID (k8, k16; k32: sparse m16n8k32) */
        static const int rs[3] = {1, 8, 16};
        return lay(0, 1, 2, 0, k == 8 ? 1 : k == 16 ? 2 : 3, rs, NULL);
    }
    if (is_int4(f)) {
        /* .s4/.u4 k32/k64: row = tig*8 + (e&7) (+32 for e>=8); col = groupID;
         * k128 (sparse m16n8k128, PTX ISA figures "rows 0-31" ... "96-127"):
         * also +64 for e>=16 */
        static const int rs4[5] = {1, 2, 4, 32, 64};
        return lay(0, 1, 8, 0, k == 32 ? 3 : k == 64 ? 4 : 5, rs4, NULL);
    }
    if (f == MF_FMT_B1) {
        /* .b1 k128/k256 in words: word row = tig (+4 for e=1); col = groupID */
        static const int rs1[1] = {4};
        return lay(0, 1, 1, 0, k == 4 ? 0 : 1, rs1, NULL);
    }
    /* 8-bit: row = tig*4 + (e&3) (+16 for e>=4); col = groupID; k64 (sparse
     * m16n8k64 s8/u8, PTX ISA figures "rows 0-15" ... "48-63", one register
     * each): also +32 for e>=8 */
    static const int rs[4] = {1, 2, 16, 32};
    return lay(0, 1, 4, 0, k == 16 ? 2 : k == 32 ? 3 : 4, rs, NULL);
}

/* A and B fragments of the m8n8 integer shapes (PTX ISA "Matrix Fragments for
 * mma.m8n8k16" (.s8/.u8), "mma.m8n8k32" (.s4/.u4), "mma.m8n8k128" (.b1)):
 * one register per thread; A row = groupID, col = tig*V + e; B row = tig*V +
 * e, col = groupID, with V = 4 (8-bit), 8 (4-bit) or 1 word (b1). */
static void m8n8_int_frags(mf_format f, mf_frag_layout *a, mf_frag_layout *b)
{
    static const int steps[3] = {1, 2, 4};
    int nbits = is_int8(f) ? 2 : is_int4(f) ? 3 : 0;
    *a = lay(1, 0, 0, 1 << nbits, nbits, NULL, steps);
    *b = lay(0, 1, 1 << nbits, 0, nbits, steps, NULL);
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

/* The metadata register of mma.sp and wgmma.sp (layout.h, mf_sp_meta_pos),
 * by operand width (narrow: 8- and 4-bit types) and nibbles a row.  Measured
 * for mma.sp on hardware by one-hot probes (devices/cuda/NOTES.md):
 * f16/bf16/tf32 on an H100 and an H200, the narrow types on an H200 (.sp and
 * ::ordered_metadata alike).  wgmma.sp (each warp's 16 rows) takes the entry
 * of its types: f16/bf16 k32 and tf32 k16 the second, fp8 and s8/u8 k64 the
 * fourth; not yet measured. */
static const struct {
    int narrow, n_meta;
    mf_sp_meta_layout L;   /* sel_tig, hi_tig, hi_bit, run, run_tig */
} sp_meta_layouts[] = {
    /* f16/bf16 m16n8k16, tf32 m16n8k8: tig = sel, row g bits 0-15, row g+8 bits 16-31 */
    {0, 4, {1, 0, 16, 4, 1}},
    /* f16/bf16 m16n8k32, tf32 m16n8k16: tig 2*sel groups 0-3, 2*sel + 1 groups 4-7, rows as above */
    {0, 8, {2, 0, 16, 4, 1}},
    /* s8/u8 m16n8k32, s4/u4 m16n8k64: tig 2*sel row g, 2*sel + 1 row g+8, group i at bits 4i */
    {1, 8, {2, 1, 0, 8, 2}},
    /* s8/u8 and e4m3/e5m2 m16n8k64, s4/u4 m16n8k128 (selector 0): tig 0 row g, tig 1 row g+8
     * (groups 0-7), tig 2 row g, tig 3 row g+8 (groups 8-15) */
    {1, 16, {0, 1, 0, 8, 2}},
};

static int sp_meta_layout_of(const mf_instr *in, mf_sp_meta_layout *out)
{
    int narrow = is_8bit(in->fa) || is_int8(in->fa) || is_int4(in->fa);
    for (size_t i = 0; i < sizeof sp_meta_layouts / sizeof sp_meta_layouts[0]; i++)
        if (sp_meta_layouts[i].narrow == narrow && sp_meta_layouts[i].n_meta == in->n_meta) {
            *out = sp_meta_layouts[i].L;
            return 0;
        }
    return -1;
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
        if (in->m == 8 && mf_format_is_int(in->fa)) {
            /* C/D as m8n8k4 .f64: row = groupID, col = tig*2 + e */
            static const int cs[1] = {1};
            m8n8_int_frags(in->fa, &out->a, &out->b);
            out->cd = lay(1, 0, 0, 2, 1, NULL, cs);
        } else if (in->m == 8) {
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
    case MF_PTX_MMA_SP:
        /* PTX ISA "Matrix fragments for sparse mma.m16n8k16/k32" (f16/bf16),
         * "mma.m16n8k8/k16" (tf32), "mma.m16n8k32/k64 with .u8/.s8" and
         * "mma.m16n8k64/k128 with .u4/.s4": A is the packed M x K/2 matrix in
         * the layout of the dense A of K/2 (f16 k16: as m16n8k8; k32: as
         * m16n8k16; tf32 k8: a0 (groupID, tig), a1 (groupID+8, tig); k16: as
         * m16n8k8; s8 k32: as m16n8k16 s8, the thread's packed columns tig*4..+3
         * being its "4 non-zero out of 8 consecutive" logical ones tig*8..+7;
         * s8 k64: as m16n8k32 s8; s4 k64: as m16n8k32 s4; s4 k128: as m16n8k64
         * s4); B the dense B of the logical K (f16 k32: row = tig*2 + (e&1) +
         * 8*(e>>1); tf32 k16: row = tig + 4*e; s8 k32 and s4 k64: the dense
         * m16n8k32 s8 and m16n8k64 s4 B; s8 k64 and s4 k128: one more step,
         * b_frag); C/D as m16n8.  The packed A of s8, s4 and fp8 was read off
         * an H200 with raw registers (NOTES): as here, given that B.  The
         * metadata register: sp_meta_layouts */
        if (!mf_sp_sel_ok(in, v->sel) || sp_meta_layout_of(in, &out->meta))
            return -1;
        out->threads = 32;
        out->a_in_regs = 1;
        out->a = a_frag(in->fa, in->k / 2);
        out->b = b_frag(in->fb, in->k);
        out->cd = cd_frag(8);
        out->n_meta = in->n_meta;
        out->sp_group = in->sp_group;
        out->sel = v->sel;
        return 0;
    case MF_PTX_WGMMA:
        if ((v->n != 8 && v->n != 256) ||
            ((v->neg_a || v->neg_b || v->no_c || v->trans_a || v->trans_b) && (v->n != in->n || v->a_reg)))
            return -1;
        out->threads = 128;
        out->a_in_regs = v->a_reg;
        out->a = a_frag(in->fa, in->k);
        out->a.w_row = 16;
        out->cd = cd_frag(v->n);
        out->cd.w_row = 16;
        return 0;
    case MF_PTX_WGMMA_SP:
        /* PTX ISA 9.7.15.6.2 "Matrix fragments for sparse wgmma.mma_async.m64nNk32 /
         * k16 / k64": A from registers is the packed M x K/2 matrix, each warp
         * its 16 rows (warp w: rows 16w..16w+15) in the figures' layout, which
         * is sparse mma's of the same types: f16/bf16 k32 as m16n8k16 ("two
         * non-zero out of 4 consecutive" a register), tf32 k16 as m16n8k8, fp8
         * and s8/u8 k64 as m16n8k32 8-bit ("four non-zero out of eight
         * consecutive" a register) over the packed columns (CuTe's SM90
         * sparse GMMA RS atoms use the dense ALayout_64x32 / 64x16 / 64x64
         * of the logical K, the same); D as dense wgmma; the metadata as
         * sparse mma's per warp (the PTX shows the mma.sp figures:
         * m16n8k32 f16, m16n8k16 tf32, m16n8k64 u8/s8): the sp_meta_layouts
         * entry of the same operand width and nibbles a row, i.e. of mma.sp
         * m16n8k32 f16/bf16, m16n8k16 tf32 and m16n8k64 s8/u8/e4m3/e5m2 (the
         * last measured on an H200 for mma.sp), mf_sp_meta_pos over the
         * warp's rows.  Selector 0..1 for f16/bf16/tf32, 0 for fp8 and s8/u8
         * (PTX table in 9.7.15.6.3), a variant with N = 8 and A from shared
         * memory as the operand forms. */
        if ((v->n != 8 && v->n != 256) || !mf_sp_sel_ok(in, v->sel) || sp_meta_layout_of(in, &out->meta) ||
            ((v->neg_a || v->neg_b || v->no_c || v->trans_a || v->trans_b || v->sel) && (v->n != in->n || v->a_reg)))
            return -1;
        out->threads = 128;
        out->a_in_regs = v->a_reg;
        out->a = a_frag(in->fa, in->k / 2);
        out->a.w_row = 16;
        out->cd = cd_frag(v->n);
        out->cd.w_row = 16;
        out->n_meta = in->n_meta;
        out->sp_group = in->sp_group;
        out->sel = v->sel;
        return 0;
    case MF_PTX_TCGEN05: {
        /* layout.h, "tcgen05": D in tensor memory, read by the 4 warps of the
         * CTA; M = 64 as the wgmma D fragment (tcgen05.ld.16x256b.x1), M = 128
         * row 32*warp + lane, register i = column i (tcgen05.ld.32x32b.x8) */
        static const int cs3[3] = {1, 2, 4};
        const char *kind = mf_tcgen05_kind(in);
        if (v->n != in->n || v->a_reg)
            return -1;
        out->threads = 128;
        if (in->m == 64) {
            out->cd = cd_frag(8);
            out->cd.w_row = 16;
        } else {
            out->cd = lay(4, 0, 1, 0, 3, NULL, cs3);
            out->cd.w_row = 32;
        }
        out->idesc = mf_tcgen05_idesc(in, in->m, v->n);
        out->scale_vec = in->n_scales;
        out->a_bits = mf_format_get(in->fa)->bits;
        out->b_bits = mf_format_get(in->fb)->bits;
        int f8f6f4 = !strcmp(kind, "f8f6f4") || !strcmp(kind, "mxf8f6f4");
        out->a_pad = f8f6f4 && out->a_bits < 8;
        out->b_pad = f8f6f4 && out->b_bits < 8;
        out->tmem_cols = in->n_scales ? 128 : 32;   /* a power of two >= 32: D (and the scales) */
        return 0;
    }
    default:
        return -1;
    }
}

const char *mf_tcgen05_kind(const mf_instr *in)
{
    if (strncmp(in->qualifier, "tcgen05.", 8))
        return NULL;
    int fp8to4a = in->fa == MF_FMT_E4M3 || in->fa == MF_FMT_E5M2 || in->fa == MF_FMT_E3M2 || in->fa == MF_FMT_E2M3 ||
                  in->fa == MF_FMT_E2M1;
    int fp8to4b = in->fb == MF_FMT_E4M3 || in->fb == MF_FMT_E5M2 || in->fb == MF_FMT_E3M2 || in->fb == MF_FMT_E2M3 ||
                  in->fb == MF_FMT_E2M1;
    if (in->n_scales) {
        if (in->fd != MF_FMT_F32)
            return NULL;
        if (in->k == 32 && in->block == 32 && in->fs == MF_FMT_UE8M0 && fp8to4a && fp8to4b)
            return "mxf8f6f4";
        if (in->k == 64 && in->fa == MF_FMT_E2M1 && in->fb == MF_FMT_E2M1 && in->block == 32 && in->fs == MF_FMT_UE8M0)
            return "mxf4";
        if (in->k == 64 && in->fa == MF_FMT_E2M1 && in->fb == MF_FMT_E2M1 && in->block == 16 &&
            (in->fs == MF_FMT_UE8M0 || in->fs == MF_FMT_UE4M3))
            return "mxf4nvf4";
        return NULL;
    }
    if (in->fd != MF_FMT_F32 && in->fd != MF_FMT_F16)
        return NULL;
    if (in->fa == MF_FMT_TF32 && in->fb == MF_FMT_TF32 && in->k == 8 && in->fd == MF_FMT_F32)
        return "tf32";
    if (is_16bit(in->fa) && is_16bit(in->fb) && in->k == 16)
        return "f16";
    if (fp8to4a && fp8to4b && in->k == 32)
        return "f8f6f4";
    return NULL;
}

/* The type codes of the instruction descriptor (layout.h). */
static uint32_t tcgen05_type_code(const char *kind, mf_format f)
{
    if (!strcmp(kind, "mxf4") || !strcmp(kind, "mxf4nvf4"))
        return 1;   /* E2M1 */
    switch (f) {
    case MF_FMT_F16: case MF_FMT_E4M3: return 0;
    case MF_FMT_BF16: case MF_FMT_E5M2: return 1;
    case MF_FMT_TF32: return 2;
    case MF_FMT_E2M3: return 3;
    case MF_FMT_E3M2: return 4;
    default: return 5;   /* E2M1 */
    }
}

uint32_t mf_tcgen05_idesc(const mf_instr *in, int m, int n)
{
    const char *kind = mf_tcgen05_kind(in);
    if (!kind)
        return 0;
    uint32_t d = tcgen05_type_code(kind, in->fa) << 7 | tcgen05_type_code(kind, in->fb) << 10 |
                 (uint32_t)(n >> 3) << 17 | (uint32_t)(m >> 4) << 24;
    if (in->n_scales)
        d |= (uint32_t)(in->fs == MF_FMT_UE8M0) << 23;
    else
        d |= (uint32_t)(in->fd == MF_FMT_F32) << 4;
    return d;
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
        n = snprintf(buf, len, "mma.sync.aligned.m%dn%dk%d.row.col%s", in->m, in->n, in->k * mf_format_lanes(in->fa),
                     types);
        break;
    case MF_PTX_WGMMA:
        n = snprintf(buf, len, "wgmma.mma_async.sync.aligned.m%dn%dk%d%s", in->m, v->n, in->k * mf_format_lanes(in->fa),
                     types);
        break;
    case MF_PTX_MMA_SP: {
        /* "mma.sp[::ordered_metadata].mMnNkK.TYPES" -> "mma.sp[::ordered_metadata].sync.aligned.mMnNkK.row.col.TYPES" */
        const char *shape = strstr(in->qualifier, ".m");
        const char *t = shape ? strchr(shape + 1, '.') : NULL;
        if (!t)
            return -1;
        n = snprintf(buf, len, "%.*s.sync.aligned.m%dn%dk%d.row.col%s", (int)(shape - in->qualifier), in->qualifier,
                     in->m, in->n, in->k, t);
        break;
    }
    case MF_PTX_WGMMA_SP: {
        /* "wgmma.sp.mMnNkK.TYPES" -> "wgmma.mma_async.sp.sync.aligned.mMnNkK.TYPES" (the
         * types as the PTX syntax orders them: {.satfinite}.s32.atype.btype) */
        const char *shape = strstr(in->qualifier, ".m");
        const char *t = shape ? strchr(shape + 1, '.') : NULL;
        if (!t)
            return -1;
        n = snprintf(buf, len, "wgmma.mma_async.sp.sync.aligned.m%dn%dk%d%s", in->m, v->n, in->k, t);
        break;
    }
    case MF_PTX_TCGEN05: {
        /* the types go in the instruction descriptor, not the text */
        const char *kind = mf_tcgen05_kind(in);
        if (in->n_scales)
            n = snprintf(buf, len, "tcgen05.mma.cta_group::1.kind::%s.block_scale.scale_vec::%dX", kind, in->n_scales);
        else
            n = snprintf(buf, len, "tcgen05.mma.cta_group::1.kind::%s", kind);
        break;
    }
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
        } else if (mf_format_is_int(in->fa)) {
            /* ptxas 13.0 (devices/cuda/NOTES.md, "Integer mma.sync on every target"):
             *  sm_80, sm_89: native, one IMMA.<m n k>.<A>.<B>[.SAT] (s4/u4 as S4/U4),
             *    b1 one BMMA.<m n k>.AND.POPC / .XOR.POPC;
             *  sm_90a: s8/u8 native; s4/u4 as two IMMA of half the 4-bit K on int8
             *    unpacked from the nibbles, from zero, then integer adds of c (a
             *    clamp by SEL for .satfinite); b1 .and native, .xor as two
             *    BMMA.AND.POPC on complemented operands plus an add;
             *  sm_100a, sm_120a: as sm_90a for s8/u8 and s4/u4, except that m8n8
             *    runs as the m16n8 IMMA of its K; b1 (.and and .xor) as
             *    IMMA.16832.U8.U8 on bits unpacked to bytes, K/32 of them. */
            const int sat = (in->x & MF_INT_SATFINITE) != 0, k4 = is_int4(in->fa);
            const int native = in->arch == MF_ARCH_AMPERE || in->arch == MF_ARCH_ADA;
            const int wide = in->arch == MF_ARCH_BLACKWELL || in->arch == MF_ARCH_RTX_BLACKWELL;
            const char *sa = mf_format_get(in->fa)->has_sign ? "S" : "U", *sb = mf_format_get(in->fb)->has_sign ? "S" : "U";
            if (in->fa == MF_FMT_B1 && wide)
                n = snprintf(buf, len, "IMMA.16832.U8.U8");
            else if (in->fa == MF_FMT_B1)
                n = snprintf(buf, len, "BMMA.%d%d%d.%s.POPC", in->m, in->n, in->k * 32,
                             native && (in->x & MF_INT_XOR) ? "XOR" : "AND");
            else if (native)
                n = snprintf(buf, len, "IMMA.%d%d%d.%s%d.%s%d%s", in->m, in->n, in->k, sa, k4 ? 4 : 8, sb, k4 ? 4 : 8,
                             sat ? ".SAT" : "");
            else
                n = snprintf(buf, len, "IMMA.%d%d%d.%s8.%s8%s", wide ? 16 : in->m, in->n, k4 ? in->k / 2 : in->k, sa,
                             sb, sat && !k4 ? ".SAT" : "");
        } else if (is_8bit(in->fa)) {
            n = snprintf(buf, len, "QMMA.168%d.%s.%s.%s", in->k, acc, sass_type(in->fa), sass_type(in->fb));
        } else {
            const char *t = sass_type(in->fa);
            n = snprintf(buf, len, "HMMA.168%d.%s%s%s", in->k, acc, *t ? "." : "", t);
        }
        break;
    case MF_PTX_MMA_SP: {
        /* ptxas 13.0 (sm_80, sm_90a): one HMMA.SP of the logical shape, the
         * selector an immediate operand: "HMMA.SP.16832.F32.BF16",
         * "HMMA.SP.1688.F32.TF32", "HMMA.SP.16816.F16" (.sp and
         * ::ordered_metadata alike).  Integer rows: s8/u8 one
         * IMMA.SP.168<K>.<A>8.<B>8[.SAT] on every target; s4/u4 native on
         * sm_80/sm_89 (IMMA.SP.168<K>.<A>4.<B>4[.SAT]), elsewhere (sm_90a,
         * sm_100a, sm_120a) two IMMA.SP.168<K/2>.<A>8.<B>8 on int8 unpacked
         * from the nibbles, from zero, then integer adds of c (and a clamp by
         * SEL for .satfinite, a saturating VIADD.S32.ISAT on sm_120a: devices/cuda/NOTES.md) */
        if (is_8bit(in->fa) && (in->arch == MF_ARCH_HOPPER || in->arch == MF_ARCH_BLACKWELL)) {
            /* fp8 m16n8k64: no fp8 unit; F2FP to f16, two chained HMMA.SP.16832.F32
             * (devices/cuda/NOTES.md) */
            n = snprintf(buf, len, "HMMA.SP.16832.F32");
            break;
        }
        if (is_8bit(in->fa)) {   /* sm_89, sm_120a: native */
            n = snprintf(buf, len, "QMMA.SP.16864.F32.%s.%s", sass_type(in->fa), sass_type(in->fb));
            break;
        }
        if (mf_format_is_int(in->fa)) {
            int k4 = is_int4(in->fa), native4 = in->arch == MF_ARCH_AMPERE || in->arch == MF_ARCH_ADA;
            int sat = (in->x & MF_INT_SATFINITE) != 0;
            const char *sa = mf_format_get(in->fa)->has_sign ? "S" : "U", *sb = mf_format_get(in->fb)->has_sign ? "S" : "U";
            if (k4 && !native4)
                n = snprintf(buf, len, "IMMA.SP.168%d.%s8.%s8", in->k / 2, sa, sb);
            else
                n = snprintf(buf, len, "IMMA.SP.168%d.%s%d.%s%d%s", in->k, sa, k4 ? 4 : 8, sb, k4 ? 4 : 8,
                             sat ? ".SAT" : "");
            break;
        }
        const char *t = sass_type(in->fa);
        n = snprintf(buf, len, "HMMA.SP.168%d.%s%s%s", in->k, acc, *t ? "." : "", t);
        break;
    }
    case MF_PTX_WGMMA:
        if (in->fa == MF_FMT_B1)
            n = snprintf(buf, len, "BGMMA.64x%dx%d.AND.POPC", v->n, in->k * 32);
        else if (mf_format_is_int(in->fa))
            n = snprintf(buf, len, "IGMMA.64x%dx%d.%s8.%s8%s", v->n, in->k, mf_format_get(in->fa)->has_sign ? "S" : "U",
                         mf_format_get(in->fb)->has_sign ? "S" : "U", (in->x & MF_INT_SATFINITE) ? ".SAT" : "");
        else if (is_8bit(in->fa))
            n = snprintf(buf, len, "QGMMA.64x%dx%d.%s.%s.%s", v->n, in->k, acc, sass_type(in->fa), sass_type(in->fb));
        else {
            const char *t = sass_type(in->fa);
            n = snprintf(buf, len, "HGMMA.64x%dx%d.%s%s%s", v->n, in->k, acc, *t ? "." : "", t);
        }
        break;
    case MF_PTX_WGMMA_SP:
        /* ptxas 13.0, sm_90a: one HGMMA.SP / QGMMA.SP / IGMMA.SP of the logical
         * shape (cuobjdump of a kernel per form): "HGMMA.SP.64x8x32.F32[.BF16]",
         * "HGMMA.SP.64x8x32.F16", "HGMMA.SP.64x8x16.F32.TF32",
         * "QGMMA.SP.64x8x64.F32.E4M3.E5M2", "IGMMA.SP.64x8x64.S8.U8.SAT" */
        if (mf_format_is_int(in->fa))
            n = snprintf(buf, len, "IGMMA.SP.64x%dx%d.%s8.%s8%s", v->n, in->k,
                         mf_format_get(in->fa)->has_sign ? "S" : "U", mf_format_get(in->fb)->has_sign ? "S" : "U",
                         (in->x & MF_INT_SATFINITE) ? ".SAT" : "");
        else if (is_8bit(in->fa))
            n = snprintf(buf, len, "QGMMA.SP.64x%dx%d.%s.%s.%s", v->n, in->k, acc, sass_type(in->fa),
                         sass_type(in->fb));
        else {
            const char *t = sass_type(in->fa);
            n = snprintf(buf, len, "HGMMA.SP.64x%dx%d.%s%s%s", v->n, in->k, acc, *t ? "." : "", t);
        }
        break;
    case MF_PTX_TCGEN05: {
        /* ptxas 13.0 (cuobjdump of a kernel per kind, sm_100a and sm_103a):
         * one opcode per kind, the types only in the descriptor: kind::f16 and
         * tf32 UTCHMMA, f8f6f4 and mxf8f6f4 UTCQMMA, mxf4 and mxf4nvf4
         * scale_vec::2X UTCOMMA (the same encoding), mxf4nvf4 scale_vec::4X
         * UTCOMMA.4X on sm_100a, UTCOMMA.BLOCK16 on sm_103a (the same bits);
         * kind::i8 (UTCIMMA) is refused for sm_103a and has no table row */
        const char *kind = mf_tcgen05_kind(in);
        if (!strcmp(kind, "f16") || !strcmp(kind, "tf32"))
            n = snprintf(buf, len, "UTCHMMA");
        else if (!strcmp(kind, "f8f6f4") || !strcmp(kind, "mxf8f6f4"))
            n = snprintf(buf, len, "UTCQMMA");
        else if (in->n_scales == 4)
            n = snprintf(buf, len, "UTCOMMA.%s", in->arch == MF_ARCH_BLACKWELL ? "4X" : "BLOCK16");
        else
            n = snprintf(buf, len, "UTCOMMA");
        break;
    }
    default:
        return -1;
    }
    return n > 0 && (size_t)n < len ? 0 : -1;
}

int mf_sass_sp_selector(const mf_instr *in, const mf_variant *v, char *buf, size_t len)
{
    int n;
    mf_ptx_kind kind = mf_ptx_kind_of(in, NULL);
    if (kind == MF_PTX_WGMMA_SP) {
        /* HGMMA.SP (f16/bf16/tf32): the selector an immediate before gsb0
         * ("HGMMA.SP.64x8x32.F32 R24, gdesc[UR8], R24, R28, 0x1, gsb0"); QGMMA.SP and
         * IGMMA.SP (selector 0 only) print none */
        n = is_8bit(in->fa) || mf_format_is_int(in->fa) ? snprintf(buf, len, "-") : snprintf(buf, len, "sel=0x%x", v->sel);
        return n > 0 && (size_t)n < len ? 0 : -1;
    }
    if (kind != MF_PTX_MMA_SP ||
        (is_8bit(in->fa) && (in->arch == MF_ARCH_HOPPER || in->arch == MF_ARCH_BLACKWELL)))
        /* fp8 on sm_90a: the two HMMA.SP take selectors 0 and 1 of regrouped
         * metadata (NOTES), not the row's: not checked */
        n = snprintf(buf, len, "-");
    else if ((in->arch == MF_ARCH_BLACKWELL || in->arch == MF_ARCH_RTX_BLACKWELL) &&
             ((in->sparse == MF_SP && (in->fa == MF_FMT_F16 || mf_format_is_int(in->fa))) || is_int4(in->fa)))
        /* ptxas moves the metadata itself (layout.h): plain .sp f16 and every
         * integer .sp; s4/u4 ::ordered_metadata too (its two IMMA.SP on
         * unpacked int8 take the metadata from SHFL) */
        n = snprintf(buf, len, "sel=0x0,SHFL");
    else
        n = snprintf(buf, len, "sel=0x%x", v->sel);
    return n > 0 && (size_t)n < len ? 0 : -1;
}
