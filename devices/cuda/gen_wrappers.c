/*
 * gen_wrappers.c - writes the CUDA wrappers from the instruction table.
 *
 * usage: gen_wrappers OUTDIR PARTS TARGET...
 *   TARGET: the TARGET of an NVIDIA row of model/arch_table.def;
 *   PARTS: how many translation units each target's wrappers are split into.
 *
 * For every table row whose compilation target (mf_device_target) is one of
 * TARGETs and that has a PTX form (layout.h), it writes a small struct
 * holding the row's fragment layouts and one inline-asm call of its PTX
 * instruction, and one extern "C" __global__ kernel instantiating the generic
 * loop of kernels.cuh.  The wrappers of a target go (in table order, each to
 * the lightest part so far: weight()) into OUTDIR/wrappers_<TARGET>_<P>.cu,
 * P = 0 .. PARTS-1, so that a parallel build compiles them side by side (one
 * file holding all of sm_90a's is a quarter of an hour in one compiler
 * process); each part defines its
 * list mf_cuda_kernels_<TARGET>_<P>[].  It also writes
 * OUTDIR/wrappers_targets.cu (each target's parts) and OUTDIR/wrappers.tsv
 * (symbol, instruction, variant, target, expected SASS opcode, and for
 * mma.sp the selector immediate: mf_sass_sp_selector) for the SASS check,
 * in table order whatever PARTS is.  Nothing here is per instruction: every
 * line comes from the table row and layout.c.
 */
#include "layout.h"
#include "mf_device.h"

#define _GNU_SOURCE /* open_memstream */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Output goes to memory first; a file is rewritten only when its text
 * changes, so that an unchanged wrapper is not compiled again. */
typedef struct out {
    FILE *f;
    char *buf;
    size_t len;
    char path[1024];
} out;

static FILE *out_open(out *o, const char *path)
{
    snprintf(o->path, sizeof o->path, "%s", path);
    o->buf = NULL;
    o->len = 0;
    o->f = open_memstream(&o->buf, &o->len);
    if (!o->f) {
        perror("open_memstream");
        exit(2);
    }
    return o->f;
}

static void out_close(out *o)
{
    fclose(o->f);
    FILE *old = fopen(o->path, "rb");
    if (old) {
        char *prev = malloc(o->len + 1);
        size_t n = prev ? fread(prev, 1, o->len + 1, old) : 0;
        fclose(old);
        int same = prev && n == o->len && !memcmp(prev, o->buf, o->len);
        free(prev);
        if (same) {
            free(o->buf);
            return;
        }
    }
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp", o->path);
    FILE *f = fopen(tmp, "wb");
    if (!f || fwrite(o->buf, 1, o->len, f) != o->len || fclose(f) || rename(tmp, o->path)) {
        perror(o->path);
        exit(2);
    }
    free(o->buf);
}

/* Bytes of one element in registers and in the ABI arrays. */
static int ebytes(mf_format f) { return (int)mf_abi_elem_bytes(f); }
/* Bits one element takes in a register: 4 for .s4/.u4 (eight to a register,
 * one per ABI byte), else the whole ABI element. */
static int vbits(mf_format f) { return f == MF_FMT_S4 || f == MF_FMT_U4 ? 4 : 8 * ebytes(f); }

/* Symbol of a wrapper: mf_k_<arch>__<qualifier with '.', ':' -> '_'>[__variant]. */
static void symbol(const mf_instr *in, const char *variant, char *buf, size_t len)
{
    int n = snprintf(buf, len, "mf_k_%s__%s", mf_arch_name(in->arch), in->qualifier);
    if (variant && *variant)
        snprintf(buf + n, len - (size_t)n, "__%s", variant);
    for (char *p = buf; *p; p++)
        if (*p == '.' || *p == ',' || *p == ':')
            *p = '_';
}

static void put_layout(FILE *f, const char *name, const mf_frag_layout *L)
{
    fprintf(f, "    __host__ __device__ static constexpr mf_frag_layout %s() { return mf_frag_layout{%d, %d, %d, %d, %d, %d, {", name, L->g_row, L->g_col, L->t_row,
            L->t_col, L->w_row, L->nbits);
    for (int b = 0; b < MF_LAYOUT_MAXBITS; b++)
        fprintf(f, "%s%d", b ? ", " : "", L->row_step[b]);
    fprintf(f, "}, {");
    for (int b = 0; b < MF_LAYOUT_MAXBITS; b++)
        fprintf(f, "%s%d", b ? ", " : "", L->col_step[b]);
    fprintf(f, "}}; }\n");
}

/* Inline-asm constraint and conversion for a register of an operand. */
static const char *reg_constraint(mf_format f) { return f == MF_FMT_F64 ? "d" : f == MF_FMT_F32 ? "f" : "r"; }
static const char *to_reg(mf_format f) { return f == MF_FMT_F64 ? "__longlong_as_double((long long)" : f == MF_FMT_F32 ? "__uint_as_float(" : "("; }

/* Write "{%s,%s,...}" with n consecutive operand numbers from *next. */
static void put_group(FILE *f, int n, int *next)
{
    fputc('{', f);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%%%d", i ? "," : "", (*next)++);
    fputc('}', f);
}

/* tcgen05.mma (layout.h): the struct's numbers, the D layout in tensor
 * memory, and mma(), issued by one thread with the row's instruction
 * descriptor as an immediate operand; accumulate (enable-input-d = 1) into D
 * loaded with C. */
static void put_tcgen05(FILE *f, const mf_instr *in, const mf_wrap_shape *s, const char *ptx, int id)
{
    fprintf(f, "\n/* %s: %s, instruction descriptor 0x%08x */\nstruct W_%d {\n", in->name, ptx, (unsigned)s->idesc, id);
    fprintf(f, "    enum { M = %d, N = %d, K = %d, EA = %d, EB = %d, EC = %d, ED = %d, A_BITS = %d, B_BITS = %d, A_PAD = %d,"
               " B_PAD = %d, RD = %d, SV = %d, TMEM_COLS = %d };\n",
            s->m, s->n, s->k, ebytes(in->fa), ebytes(in->fb), ebytes(in->fc), ebytes(in->fd), s->a_bits, s->b_bits,
            s->a_pad, s->b_pad, 1 << s->cd.nbits, s->scale_vec, s->tmem_cols);
    fprintf(f, "    static constexpr unsigned IDESC = 0x%08xu;\n", (unsigned)s->idesc);
    put_layout(f, "LCD", &s->cd);
    fprintf(f, "    __device__ __forceinline__ static void mma(unsigned d, unsigned long long desc_a, unsigned long long desc_b,"
               " unsigned sfa, unsigned sfb)\n    {\n");
    if (s->scale_vec)
        fprintf(f, "        asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %%4, 0;\\n%s [%%0], %%1, %%2, %%3, [%%5], [%%6], p;\\n}\\n\"\n"
                   "            :: \"r\"(d), \"l\"(desc_a), \"l\"(desc_b), \"r\"(IDESC), \"r\"(1), \"r\"(sfa), \"r\"(sfb) : \"memory\");\n",
                ptx);
    else
        fprintf(f, "        (void)sfa; (void)sfb;\n"
                   "        asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %%4, 0;\\n%s [%%0], %%1, %%2, %%3, p;\\n}\\n\"\n"
                   "            :: \"r\"(d), \"l\"(desc_a), \"l\"(desc_b), \"r\"(IDESC), \"r\"(1) : \"memory\");\n",
                ptx);
    fprintf(f, "    }\n};\n");
}

/* One struct W_<id> per (row, variant) and its kernel. */
static void put_wrapper(FILE *f, const mf_instr *in, const char *variant, int id, FILE *tsv, const char *target,
                        char (*entries)[640], int *nentries)
{
    mf_variant v;
    mf_wrap_shape s;
    char ptx[160], sym[200], sass[96];
    if (mf_variant_parse(in, variant, &v) || mf_wrap_shape_of(in, &v, &s) || mf_ptx_text(in, &v, ptx, sizeof ptx) ||
        mf_sass_expect(in, &v, sass, sizeof sass)) {
        fprintf(stderr, "gen_wrappers: %s variant '%s' has no wrapper shape\n", in->name, variant);
        exit(1);
    }
    symbol(in, variant, sym, sizeof sym);
    if (s.kind == MF_PTX_TCGEN05) {   /* one CTA of 128 threads a tile; A and B in shared memory */
        put_tcgen05(f, in, &s, ptx, id);
        int smem = (s.m + s.n) * MF_TCGEN05_ROW_BYTES;
        fprintf(f, "extern \"C\" __global__ void __launch_bounds__(128) %s(mf_kargs g) { mf_tcgen05_tiles<W_%d>(g); }\n", sym, id);
        snprintf(entries[(*nentries)++], 640, "    {\"%s\", \"%s\", \"%s\", (const void *)%s, 128, 1, %d},", in->name, variant,
                 sym, sym, smem);
        fprintf(tsv, "%s\t%s\t%s\t%s\t%s\t-\n", sym, in->name, *variant ? variant : "-", target, sass);
        return;
    }
    int wide = in->fa == MF_FMT_F64;             /* 64-bit registers throughout */
    int rbytes = wide ? 8 : 4;
    int ra = ((1 << s.a.nbits) * vbits(in->fa) + 8 * rbytes - 1) / (8 * rbytes);
    int rb = ((1 << s.b.nbits) * vbits(in->fb) + 8 * rbytes - 1) / (8 * rbytes);
    int rc = ((1 << s.cd.nbits) * ebytes(in->fc) + rbytes - 1) / rbytes;
    int rd = ((1 << s.cd.nbits) * ebytes(in->fd) + rbytes - 1) / rbytes;
    fprintf(f, "\n/* %s%s%s: %s */\nstruct W_%d {\n", in->name, *variant ? " variant " : "", variant, ptx, id);
    fprintf(f, "    typedef %s reg_t;\n", wide ? "unsigned long long" : "unsigned int");
    fprintf(f, "    enum { M = %d, N = %d, K = %d, EA = %d, EB = %d, EC = %d, ED = %d, VA = %d, VB = %d, RA = %d, RB = %d,"
               " RC = %d, RD = %d, A_REGS = %d, TRANS_A = %d, TRANS_B = %d };\n",
            s.m, s.n, s.k, ebytes(in->fa), ebytes(in->fb), ebytes(in->fc), ebytes(in->fd), vbits(in->fa), vbits(in->fb),
            ra, rb, rc, rd, s.a_in_regs, v.trans_a, v.trans_b);
    put_layout(f, "LA", &s.a);
    if (s.kind == MF_PTX_MMA_SYNC || s.kind == MF_PTX_MMA_SP)
        put_layout(f, "LB", &s.b);
    put_layout(f, "LCD", &s.cd);
    int sparse = s.kind == MF_PTX_MMA_SP || s.kind == MF_PTX_WGMMA_SP;
    int wg = s.kind == MF_PTX_WGMMA || s.kind == MF_PTX_WGMMA_SP;
    if (sparse) { /* the metadata (layout.h, mf_sp_meta_pos) and the selector */
        fprintf(f, "    enum { N_META = %d, SP_GROUP = %d, SEL = %d };\n", s.n_meta, s.sp_group, s.sel);
        fprintf(f, "    __host__ __device__ static constexpr mf_sp_meta_layout META() { return mf_sp_meta_layout{%d, %d, %d, %d, %d}; }\n",
                s.meta.sel_tig, s.meta.hi_tig, s.meta.hi_bit, s.meta.run, s.meta.run_tig);
    }
    int next = 0;
    const char *dc = reg_constraint(in->fd);
    if (s.kind == MF_PTX_MMA_SYNC || s.kind == MF_PTX_MMA_SP) {
        int sp = s.kind == MF_PTX_MMA_SP;
        fprintf(f, "    __device__ __forceinline__ static void mma(reg_t (&d)[RD], const reg_t (&a)[RA], const reg_t (&b)[RB],"
                   " const reg_t (&c)[RC]%s)\n    {\n", sp ? ", unsigned int e" : "");
        const char *dt = in->fd == MF_FMT_F64 ? "double" : in->fd == MF_FMT_F32 ? "float" : "unsigned int";
        fprintf(f, "        %s t[RD];\n        asm volatile(\"%s \"\n            \"", dt, ptx);
        put_group(f, rd, &next);
        fputs(", ", f);
        put_group(f, ra, &next);
        fputs(", ", f);
        put_group(f, rb, &next);
        fputs(", ", f);
        put_group(f, rc, &next);
        if (sp)
            fprintf(f, ", %%%d, %d", next++, s.sel);
        fprintf(f, ";\"\n            : ");
        for (int i = 0; i < rd; i++)
            fprintf(f, "%s\"=%s\"(t[%d])", i ? ", " : "", dc, i);
        fprintf(f, "\n            : ");
        for (int i = 0; i < ra; i++)
            fprintf(f, "%s\"%s\"(%sa[%d]))", i ? ", " : "", reg_constraint(in->fa), to_reg(in->fa), i);
        for (int i = 0; i < rb; i++)
            fprintf(f, ", \"%s\"(%sb[%d]))", reg_constraint(in->fb), to_reg(in->fb), i);
        for (int i = 0; i < rc; i++)
            fprintf(f, ", \"%s\"(%sc[%d]))", reg_constraint(in->fc), to_reg(in->fc), i);
        if (sp)
            fprintf(f, ", \"r\"(e)");
        fprintf(f, ");\n");
        if (in->fd == MF_FMT_F64)
            fprintf(f, "#pragma unroll\n        for (int i = 0; i < RD; i++) d[i] = (reg_t)__double_as_longlong(t[i]);\n");
        else if (in->fd == MF_FMT_F32)
            fprintf(f, "#pragma unroll\n        for (int i = 0; i < RD; i++) d[i] = __float_as_uint(t[i]);\n");
        else
            fprintf(f, "#pragma unroll\n        for (int i = 0; i < RD; i++) d[i] = t[i];\n");
        fprintf(f, "    }\n};\n");
    } else {
        /* wgmma: D is read and written (scale-d = 1: D = A*B + D, D loaded with C;
         * the "no_c" variant: scale-d = 0, D = A*B) */
        int ab16 = in->fa == MF_FMT_F16 || in->fa == MF_FMT_BF16; /* takes imm-trans operands */
        int isint = mf_format_is_int(in->fa);                       /* takes no imm-scale operands */
        char scales[16] = "";
        if (!isint)
            snprintf(scales, sizeof scales, ", %d, %d", v.neg_a ? -1 : 1, v.neg_b ? -1 : 1);
        fprintf(f, "    __device__ __forceinline__ static void mma(reg_t (&d)[RD], const reg_t (&a)[RA], unsigned long long "
                   "desc_a, unsigned long long desc_b%s)\n    {\n", sparse ? ", unsigned int e" : "");
        if (in->fd == MF_FMT_F32)
            fprintf(f, "        float t[RD];\n#pragma unroll\n        for (int i = 0; i < RD; i++) t[i] = __uint_as_float(d[i]);\n");
        else
            fprintf(f, "        unsigned int t[RD];\n#pragma unroll\n        for (int i = 0; i < RD; i++) t[i] = d[i];\n");
        fprintf(f, "        (void)a; (void)desc_a;\n");
        /* operands: d, a (registers or descriptor), b-desc, [sp-meta], scale-d; wgmma.sp
         * (PTX ISA 9.7.15.6.3): d, a, b-desc, sp-meta, sp-sel, scale-d, ... */
        fprintf(f, "        asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %%%d, 0;\\n%s \"\n            \"",
                rd + (s.a_in_regs ? ra : 1) + 1 + sparse, ptx);
        put_group(f, rd, &next);
        if (s.a_in_regs) {
            fputs(", ", f);
            put_group(f, ra, &next);
        } else {
            fprintf(f, ", %%%d", next++);
        }
        char trans[16] = "";
        if (ab16 && s.a_in_regs)
            snprintf(trans, sizeof trans, ", %d", v.trans_b);
        else if (ab16)
            snprintf(trans, sizeof trans, ", %d, %d", v.trans_a, v.trans_b);
        fprintf(f, ", %%%d", next++);
        if (sparse)
            fprintf(f, ", %%%d, %d", next++, s.sel);
        fprintf(f, ", p%s%s;\\n}\\n\"\n            : ", scales, trans);
        for (int i = 0; i < rd; i++)
            fprintf(f, "%s\"+%s\"(t[%d])", i ? ", " : "", dc, i);
        fprintf(f, "\n            : ");
        if (s.a_in_regs)
            for (int i = 0; i < ra; i++)
                fprintf(f, "\"r\"(a[%d]), ", i);
        else
            fprintf(f, "\"l\"(desc_a), ");
        fprintf(f, "\"l\"(desc_b), %s\"r\"(%d)\n            : \"memory\");\n", sparse ? "\"r\"(e), " : "", v.no_c ? 0 : 1);
        if (in->fd == MF_FMT_F32)
            fprintf(f, "#pragma unroll\n        for (int i = 0; i < RD; i++) d[i] = __float_as_uint(t[i]);\n");
        else
            fprintf(f, "#pragma unroll\n        for (int i = 0; i < RD; i++) d[i] = t[i];\n");
        fprintf(f, "    }\n};\n");
    }
    int wgs = 2; /* warpgroups per block */
    int threads = wg ? 128 * wgs : 256;
    int per_block = wg ? wgs : threads / 32;
    /* shared memory a warpgroup: A (wgmma.sp: packed, K/2) and B */
    int smem = wg ? wgs * (64 * (sparse ? in->k / 2 : in->k) * ebytes(in->fa) + s.n * in->k * ebytes(in->fb)) : 0;
    fprintf(f, "extern \"C\" __global__ void __launch_bounds__(%d) %s(mf_kargs g) { %s<W_%d>(g); }\n", threads, sym,
            s.kind == MF_PTX_WGMMA ? "mf_wgmma_tiles" : s.kind == MF_PTX_WGMMA_SP ? "mf_wgmma_sp_tiles"
            : s.kind == MF_PTX_MMA_SP ? "mf_mma_sp_tiles" : "mf_mma_sync_tiles",
            id);
    snprintf(entries[(*nentries)++], 640, "    {\"%s\", \"%s\", \"%s\", (const void *)%s, %d, %d, %d},", in->name, variant,
             sym, sym, threads, per_block, smem);
    char sel[32];
    if (mf_sass_sp_selector(in, &v, sel, sizeof sel))
        exit(1);
    fprintf(tsv, "%s\t%s\t%s\t%s\t%s\t%s\n", sym, in->name, *variant ? variant : "-", target, sass, sel);
}

/* The wrappers of one target being written: its parts and their list entries. */
enum { MAX_PARTS = 64, MAX_WRAPPERS = 1000 };
typedef struct target_out {
    const char *target;
    int nparts;
    out part[MAX_PARTS];
    int id;                          /* wrappers so far */
    long load[MAX_PARTS];            /* each part's weight so far (weight()) */
    char (*entries)[640];            /* list entry of each wrapper, in table order */
    int entry_part[MAX_WRAPPERS];
    FILE *tsv;
} target_out;

/* The compile time of a wrapper grows with its accumulator: D's registers
 * (4 for m16n8, 128 for wgmma n256 f32) plus what every wrapper costs.  A
 * wrapper goes to the part with the least weight so far: round-robin put
 * every wgmma row's n256 variants into the same part (the variant lists have
 * 16-aligned lengths), which then took three times as long as the others. */
static int weight(const mf_instr *in, const char *variant)
{
    mf_variant v;
    mf_wrap_shape s;
    if (mf_variant_parse(in, variant, &v) || mf_wrap_shape_of(in, &v, &s))
        return 16; /* put_wrapper reports it */
    int rbytes = in->fa == MF_FMT_F64 ? 8 : 4;
    return ((1 << s.cd.nbits) * ebytes(in->fd) + rbytes - 1) / rbytes + 16;
}

static void emit(target_out *t, const mf_instr *in, const char *variant)
{
    if (t->id >= MAX_WRAPPERS) {
        fprintf(stderr, "gen_wrappers: more than %d wrappers for %s\n", MAX_WRAPPERS, t->target);
        exit(2);
    }
    int p = 0, n = t->id;
    for (int q = 1; q < t->nparts; q++)
        if (t->load[q] < t->load[p])
            p = q;
    t->load[p] += weight(in, variant);
    put_wrapper(t->part[p].f, in, variant, t->id, t->tsv, t->target, t->entries, &n);
    t->entry_part[t->id++] = p;
}

int main(int argc, char **argv)
{
    char *end = NULL;
    long nparts = argc >= 4 ? strtol(argv[2], &end, 10) : 0;
    if (argc < 4 || !end || *end || nparts < 1 || nparts > MAX_PARTS) {
        fprintf(stderr, "usage: gen_wrappers OUTDIR PARTS TARGET...   (PARTS: 1 to %d)\n", MAX_PARTS);
        return 2;
    }
    const char *outdir = argv[1];
    char path[1024];
    out otsv, otg;
    snprintf(path, sizeof path, "%s/wrappers.tsv", outdir);
    FILE *tsv = out_open(&otsv, path);
    fprintf(tsv, "# symbol\tinstruction\tvariant\ttarget\texpected SASS opcode (generated from the table)\t"
                 "mma.sp: the selector immediate (and SHFL when ptxas moves the metadata)\n");
    static char entries[MAX_WRAPPERS][640];
    static target_out T;
    for (int a = 3; a < argc; a++) {
        const char *target = argv[a];
        T.target = target;
        T.nparts = (int)nparts;
        T.id = 0;
        memset(T.load, 0, sizeof T.load);
        T.entries = entries;
        T.tsv = tsv;
        for (int p = 0; p < T.nparts; p++) {
            snprintf(path, sizeof path, "%s/wrappers_%s_%d.cu", outdir, target, p);
            FILE *f = out_open(&T.part[p], path);
            fprintf(f, "/* Generated by gen_wrappers from model/instr_table.def: do not edit. */\n"
                       "/* %s wrappers, part %d of %d */\n"
                       "#include \"kernels.cuh\"\n\nnamespace {\n", target, p + 1, T.nparts);
        }
        for (size_t i = 0; i < mf_instr_count; i++) {
            const mf_instr *in = &mf_instr_table[i];
            const char *tg = mf_device_target(in, NULL);
            mf_ptx_kind kind = mf_ptx_kind_of(in, NULL);
            if (!tg || strcmp(tg, target) || kind == MF_PTX_NONE)
                continue;
            if (kind == MF_PTX_WGMMA) {
                for (int v = 0; mf_wgmma_variants[v]; v++)
                    emit(&T, in, mf_wgmma_variants[v]);
                for (int v = 0; mf_wgmma_form_variants[v]; v++)
                    if (mf_variant_form_ok(in, mf_wgmma_form_variants[v]))
                        emit(&T, in, mf_wgmma_form_variants[v]);
            } else if (kind == MF_PTX_WGMMA_SP) {
                /* N and the A source, selector 1 where legal, the operand forms */
                const char *const *vl = mf_wgmma_sp_variants(in);
                for (int v = 0; vl[v]; v++)
                    emit(&T, in, vl[v]);
                for (int v = 0; mf_wgmma_form_variants[v]; v++)
                    if (mf_variant_form_ok(in, mf_wgmma_form_variants[v]))
                        emit(&T, in, mf_wgmma_form_variants[v]);
            } else if (kind == MF_PTX_MMA_SP) {
                /* one wrapper per legal sparsity selector (an immediate) */
                emit(&T, in, "");
                for (int v = 0; mf_sp_variants[v]; v++)
                    if (mf_sp_sel_ok(in, v + 1))
                        emit(&T, in, mf_sp_variants[v]);
            } else
                emit(&T, in, "");
        }
        for (int p = 0; p < T.nparts; p++) {
            FILE *f = T.part[p].f;
            fprintf(f, "\n} /* namespace */\n\nextern \"C\" const mf_cuda_kernel mf_cuda_kernels_%s_%d[] = {\n", target, p);
            for (int e = 0; e < T.id; e++)
                if (T.entry_part[e] == p)
                    fprintf(f, "%s\n", entries[e]);
            fprintf(f, "    {0, 0, 0, 0, 0, 0, 0}};\n");
            out_close(&T.part[p]);
        }
    }
    /* the list of lists: each target's parts */
    snprintf(path, sizeof path, "%s/wrappers_targets.cu", outdir);
    FILE *f = out_open(&otg, path);
    fprintf(f, "/* Generated by gen_wrappers: do not edit. */\n#include \"kernel_registry.h\"\n\n");
    for (int a = 3; a < argc; a++)
        for (int p = 0; p < nparts; p++)
            fprintf(f, "extern \"C\" const mf_cuda_kernel mf_cuda_kernels_%s_%d[];\n", argv[a], p);
    for (int a = 3; a < argc; a++) {
        fprintf(f, "\nstatic const mf_cuda_kernel *const parts_%s[] = {", argv[a]);
        for (int p = 0; p < nparts; p++)
            fprintf(f, "%smf_cuda_kernels_%s_%d", p ? ", " : "", argv[a], p);
        fprintf(f, ", 0};\n");
    }
    fprintf(f, "\nextern \"C\" const mf_cuda_target mf_cuda_targets[] = {\n");
    for (int a = 3; a < argc; a++)
        fprintf(f, "    {\"%s\", parts_%s},\n", argv[a], argv[a]);
    fprintf(f, "};\nextern \"C\" const int mf_cuda_target_count = %d;\n", argc - 3);
    out_close(&otg);
    out_close(&otsv);
    return 0;
}
