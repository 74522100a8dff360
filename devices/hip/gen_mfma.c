/*
 * gen_mfma.c - writes the HIP MFMA wrappers from the instruction table.
 *
 * usage: gen_mfma OUTDIR ARCH...        (ARCH: an AMD row of model/arch_table.def)
 *
 * For every table row of each ARCH it writes one MF_MFMA_KERNEL line into
 * OUTDIR/mfma_<ARCH>.hip: the kernel symbol, the builtin and the operand
 * types, all derived from the row by mfma_info.c.  Nothing here is per
 * instruction.  Files are written to a temporary name and renamed.
 */
#include "mfma_info.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Storage type of one element in the ABI arrays (devices/mf_device.h). */
static const char *storage(mf_format f)
{
    int bits = mf_format_get(f)->bits;
    return bits > 32 ? "uint64_t" : bits > 16 ? "uint32_t" : bits > 8 ? "uint16_t" : "uint8_t";
}

/* The builtin's A/B operand type for `e` values of format f per lane. */
static const char *ab_type(mf_format f, int e)
{
    switch (f) {
    case MF_FMT_F32: return e == 1 ? "float" : NULL;
    case MF_FMT_F64: return e == 1 ? "double" : NULL;
    case MF_FMT_TF32: return e == 2 ? "mf_v2f" : NULL;
    case MF_FMT_F16: return e == 4 ? "mf_v4h" : NULL;
    case MF_FMT_BF16: return e == 2 ? "mf_v2s" : e == 4 ? "mf_v4s" : NULL;
    case MF_FMT_E4M3FNUZ:
    case MF_FMT_E5M2FNUZ: return e == 8 ? "long" : NULL; /* 8 bytes in one 64-bit operand */
    default: return NULL;
    }
}

/* The builtin's C/D type for `e` values of format f per lane. */
static const char *cd_type(mf_format f, int e, char *buf, size_t len)
{
    if (f == MF_FMT_F64)
        return e == 1 ? "double" : e == 4 ? "mf_v4d" : NULL;
    if (f != MF_FMT_F32 || (e != 4 && e != 16 && e != 32))
        return NULL;
    snprintf(buf, len, "mf_v%df", e);
    return buf;
}

static int write_arch(const char *outdir, mf_arch arch)
{
    char path[1024], tmp[1100];
    snprintf(path, sizeof path, "%s/mfma_%s.hip", outdir, mf_arch_name(arch));
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        perror(tmp);
        return 2;
    }
    fprintf(f, "/* mfma_%s.hip - written by gen_mfma from model/instr_table.def; do not edit. */\n"
               "#include \"mfma_kernel.h\"\n\n",
            mf_arch_name(arch));
    int rows = 0;
    for (size_t r = 0; r < mf_instr_count; r++) {
        const mf_instr *in = &mf_instr_table[r];
        if (in->arch != arch)
            continue;
        mf_mfma_info x;
        char err[256], cdbuf[16];
        if (mf_mfma_info_get(in, &x, err, sizeof err)) {
            fprintf(stderr, "gen_mfma: %s\n", err);
            fclose(f);
            remove(tmp);
            return 2;
        }
        const char *ta = ab_type(in->fa, x.ab_elems), *td = cd_type(in->fd, x.cd_elems, cdbuf, sizeof cdbuf);
        if (!ta || !td) {
            fprintf(stderr, "gen_mfma: %s: no builtin operand type for %d x %s / %d x %s per lane\n", in->name,
                    x.ab_elems, mf_format_get(in->fa)->name, x.cd_elems, mf_format_get(in->fd)->name);
            fclose(f);
            remove(tmp);
            return 2;
        }
        fprintf(f, "/* %s: %d block(s) */\nMF_MFMA_KERNEL(%s, %s, %s, %s, %d, %s, %s, %d)\n", in->name, x.blocks,
                x.symbol, x.builtin, storage(in->fa), ta, x.ab_elems, storage(in->fd), td, x.cd_elems);
        rows++;
    }
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        perror(path);
        remove(tmp);
        return 2;
    }
    if (rows == 0) {
        fprintf(stderr, "gen_mfma: the table has no %s rows\n", mf_arch_name(arch));
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: gen_mfma OUTDIR ARCH...   (ARCH: an AMD row of model/arch_table.def)\n");
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        mf_arch a = mf_arch_by_name(argv[i]);
        if (a == MF_ARCH_COUNT || !mf_arch_is_amd(a)) {
            char amd[128] = "";
            for (int b = 0; b < MF_ARCH_COUNT; b++)
                if (mf_arch_is_amd((mf_arch)b))
                    snprintf(amd + strlen(amd), sizeof amd - strlen(amd), "%s%s", *amd ? ", " : "",
                             mf_arch_name((mf_arch)b));
            fprintf(stderr, "gen_mfma: '%s' is not an AMD architecture (%s)\n", argv[i], amd);
            return 2;
        }
        int rc = write_arch(argv[1], a);
        if (rc)
            return rc;
    }
    return 0;
}
