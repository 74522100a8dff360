/*
 * check_mfma_opcodes.c - checks a built code object of the HIP wrappers.
 *
 * usage: check_mfma_opcodes OBJDUMP CODE_OBJECT ARCH      (ARCH: cdna1..3)
 *
 * For every table row of ARCH, the wrapper kernel must be in the code object
 * and its disassembly (OBJDUMP -d) must hold exactly one v_mfma/v_smfmac
 * instruction, whose mnemonic is the one the table names: "v_" + the row's
 * qualifier with '.' as '_' (VECTORS.md: AMD qualifiers are the ISA names in
 * that architecture's spelling).  The code object's ELF header must name the
 * architecture's GPU (e_flags EF_AMDGPU_MACH, LLVM BinaryFormat/ELF.h).
 * Prints one line per row; exit 0 when all pass, 1 otherwise, 2 on bad usage.
 */
#include "mf_device.h"
#include "mfma_info.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXFN 256

typedef struct fn {
    char name[128];
    char mfma[8][64]; /* MFMA mnemonics found, in order */
    int n;
} fn;

static fn fns[MAXFN];
static int nfns;

/* EF_AMDGPU_MACH values of LLVM's BinaryFormat/ELF.h. */
static int expected_mach(const char *gfx)
{
    return !strcmp(gfx, "gfx908") ? 0x30 : !strcmp(gfx, "gfx90a") ? 0x3f : !strcmp(gfx, "gfx942") ? 0x4c : -1;
}

static int check_elf(const char *path, const char *gfx)
{
    unsigned char h[64];
    FILE *f = fopen(path, "rb");
    if (!f || fread(h, 1, sizeof h, f) != sizeof h) {
        fprintf(stderr, "%s: cannot read an ELF header\n", path);
        if (f)
            fclose(f);
        return -1;
    }
    fclose(f);
    unsigned machine = h[18] | h[19] << 8;
    uint32_t flags = (uint32_t)h[48] | (uint32_t)h[49] << 8 | (uint32_t)h[50] << 16 | (uint32_t)h[51] << 24;
    if (memcmp(h, "\177ELF", 4) || machine != 224 /* EM_AMDGPU */ || (int)(flags & 0xff) != expected_mach(gfx)) {
        fprintf(stderr, "%s: expected an AMDGPU code object for %s (EF_AMDGPU_MACH 0x%x), found machine %u flags 0x%x\n",
                path, gfx, (unsigned)expected_mach(gfx), machine, (unsigned)flags);
        return -1;
    }
    return 0;
}

/* Read OBJDUMP -d output: "<addr> <symbol>:" opens a function; the first
 * word of an instruction line starting "v_mfma" or "v_smfmac" is recorded. */
static int read_disassembly(const char *objdump, const char *path)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' -d '%s'", objdump, path);
    FILE *p = popen(cmd, "r");
    if (!p) {
        perror(cmd);
        return -1;
    }
    char line[1024];
    fn *cur = NULL;
    while (fgets(line, sizeof line, p)) {
        char *lt = strchr(line, '<'), *gt = lt ? strstr(lt, ">:") : NULL;
        if (line[0] >= '0' && line[0] <= 'f' && lt && gt) {
            if (nfns == MAXFN)
                break;
            cur = &fns[nfns++];
            memset(cur, 0, sizeof *cur);
            snprintf(cur->name, sizeof cur->name, "%.*s", (int)(gt - lt - 1), lt + 1);
            continue;
        }
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (cur && (!strncmp(s, "v_mfma", 6) || !strncmp(s, "v_smfmac", 8))) {
            size_t w = strcspn(s, " \t\n");
            if (cur->n < 8)
                snprintf(cur->mfma[cur->n], sizeof cur->mfma[0], "%.*s", (int)w, s);
            cur->n++;
        }
    }
    int rc = pclose(p);
    if (rc != 0) {
        fprintf(stderr, "%s exited with status %d\n", cmd, rc);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: check_mfma_opcodes OBJDUMP CODE_OBJECT ARCH\n");
        return 2;
    }
    mf_arch arch = mf_arch_by_name(argv[3]);
    if (arch == MF_ARCH_COUNT || !mf_arch_is_amd(arch)) {
        fprintf(stderr, "check_mfma_opcodes: '%s' is not an AMD architecture\n", argv[3]);
        return 2;
    }
    const mf_instr *first = NULL;
    for (size_t r = 0; r < mf_instr_count && !first; r++)
        if (mf_instr_table[r].arch == arch)
            first = &mf_instr_table[r];
    if (!first) {
        fprintf(stderr, "check_mfma_opcodes: the table has no %s rows\n", argv[3]);
        return 1;
    }
    const char *gfx = mf_device_target(first, NULL);
    if (!gfx || check_elf(argv[2], gfx) || read_disassembly(argv[1], argv[2]))
        return 1;

    int pass = 0, fail = 0;
    for (size_t r = 0; r < mf_instr_count; r++) {
        const mf_instr *in = &mf_instr_table[r];
        if (in->arch != arch)
            continue;
        char want[96], err[256];
        snprintf(want, sizeof want, "v_%s", in->qualifier);
        for (char *c = want; *c; c++)
            if (*c == '.')
                *c = '_';
        mf_mfma_info x;
        const fn *f = NULL;
        if (mf_mfma_info_get(in, &x, err, sizeof err) == 0)
            for (int i = 0; i < nfns && !f; i++)
                if (!strcmp(fns[i].name, x.symbol))
                    f = &fns[i];
        if (!f) {
            printf("FAIL %-40s %s: kernel %s not in %s\n", in->name, gfx, x.symbol, argv[2]);
            fail++;
        } else if (f->n != 1 || strcmp(f->mfma[0], want)) {
            printf("FAIL %-40s %s: expected one %s, found %d MFMA instruction(s)%s%s\n", in->name, gfx, want, f->n,
                   f->n ? ", the first " : "", f->n ? f->mfma[0] : "");
            fail++;
        } else {
            printf("ok   %-40s %s  %s\n", in->name, gfx, f->mfma[0]);
            pass++;
        }
    }
    printf("%s: %d of %d wrappers hold exactly their table opcode\n", argv[3], pass, pass + fail);
    return fail ? 1 : 0;
}
