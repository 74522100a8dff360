/*
 * test_arch_table.c - every architecture's rules come from model/arch_table.def:
 * names, vendor and targets are consistent; each instruction row's effective
 * fields (nan_any, zero_plus, e_zero) are its architecture's rule (vendor and
 * rule columns, not the position in the enum); and evaluation reads only the
 * row it is handed, so a modified copy of a row (a model variant) is
 * evaluated as written, by mf_eval and mf_eval_tiles alike.
 *
 * Expected values: the table's own columns (consistency); e_zero from
 * ../shared/DOMAIN.md, written out below (domain_e_zero), not from the
 * table; and for the modified copy the H100 finding
 * corpus/findings/h100/zero-sign.vec (first case: the H100's d = 0000, the
 * sum's sign gives model= 8000).
 */
#include "mmafuzz_model.h"

#include <stdlib.h>
#include <string.h>

#include "test_check.h"

static int is_fused(const mf_instr *in)
{
    return in->family == MF_T_FDPA || in->family == MF_ST_FDPA || in->family == MF_GST_FDPA ||
           in->family == MF_F16_EMU;
}

static void check_architectures(void)
{
    for (int a = 0; a < MF_ARCH_COUNT; a++) {
        const mf_arch_info *ai = mf_arch_get((mf_arch)a);
        CHECK(ai && mf_arch_by_name(ai->name) == (mf_arch)a, "arch %d: name does not round-trip", a);
        CHECK(!strcmp(mf_arch_name((mf_arch)a), ai->name), "arch %d: mf_arch_name", a);
        /* the vendor column, not the position in the enum, decides */
        CHECK(mf_arch_is_amd((mf_arch)a) == (ai->vendor == MF_VENDOR_AMD), "%s: mf_arch_is_amd", ai->name);
        CHECK(ai->target || *ai->no_target_why, "%s: neither a target nor why not", ai->name);
        if (ai->vendor == MF_VENDOR_NVIDIA) {
            CHECK(!*ai->hip_target, "%s: an NVIDIA arch with a HIP target", ai->name);
            CHECK(ai->nan == MF_NAN_PAYLOAD, "%s: NVIDIA NaN rule", ai->name);
            if (ai->target) {
                char first[16] = "";
                size_t n = strcspn(ai->cuda_archs, ";");
                if (n < sizeof first - 3)
                    snprintf(first, sizeof first, "sm_%.*s", (int)n, ai->cuda_archs);
                CHECK(!strcmp(first, ai->target), "%s: target %s is not sm_ + the first CUDA arch of '%s'", ai->name,
                      ai->target, ai->cuda_archs);
            }
        } else {
            /* an AMD arch with a target builds it with HIP; without one (cdna4: no
             * compiler here targets gfx950) it says why */
            CHECK(ai->target ? !strcmp(ai->target, ai->hip_target) : !*ai->hip_target && *ai->no_target_why,
                  "%s: AMD target is not its HIP target", ai->name);
            CHECK(!*ai->cuda_archs, "%s: an AMD arch with CUDA archs", ai->name);
        }
    }
    CHECK(mf_arch_get(MF_ARCH_COUNT) == NULL, "mf_arch_get past the end");
    /* compute capabilities (NVIDIA's list): 7.5 Turing, 8.0/8.6/8.7 Ampere,
     * 8.9 Ada, 9.0 Hopper, 10.0 Blackwell (B200), 10.3 Blackwell Ultra (B300),
     * 12.x RTX Blackwell; 6.1 none */
    static const struct { int major, minor; mf_arch arch; } ccs[] = {
        {7, 5, MF_ARCH_TURING}, {8, 0, MF_ARCH_AMPERE}, {8, 6, MF_ARCH_AMPERE}, {8, 7, MF_ARCH_AMPERE},
        {8, 9, MF_ARCH_ADA}, {9, 0, MF_ARCH_HOPPER}, {10, 0, MF_ARCH_BLACKWELL}, {10, 3, MF_ARCH_BLACKWELL_ULTRA},
        {12, 0, MF_ARCH_RTX_BLACKWELL}, {12, 1, MF_ARCH_RTX_BLACKWELL}, {6, 1, MF_ARCH_COUNT}, {9, 1, MF_ARCH_COUNT},
    };
    for (size_t i = 0; i < sizeof ccs / sizeof ccs[0]; i++)
        CHECK(mf_arch_by_cuda_cc(ccs[i].major, ccs[i].minor) == ccs[i].arch, "compute capability %d.%d",
              ccs[i].major, ccs[i].minor);
    char names[256];
    CHECK(!strcmp(mf_arch_list(MF_VENDOR_AMD, names, sizeof names), "cdna1, cdna2, cdna3, cdna4"), "AMD list: %s", names);
    CHECK(!mf_arch_is_amd(MF_ARCH_COUNT) && !mf_arch_is_amd((mf_arch)(MF_ARCH_COUNT + 5)),
          "an arch past the table is AMD");
}

/* e_zero of the T-FDPA family by architecture and output format, copied by
 * hand from ../shared/DOMAIN.md: f32 output from section 4's table (MMA-Sim
 * v2; section 4a, MMA-Sim 2.1.1, leaves it), f16 output from section 4a
 * (MMA-Sim 2.1.1, with the Khattak-Mikaitis models: -19 V100, -20 A100/Ada,
 * -21 H100/B200; -21 measured on the H100 by this project). */
static const struct { const char *arch; int ez16, ez32; } domain_e_zero[] = {
    {"volta", -19, -131}, {"turing", -20, -132},    {"ampere", -20, -132},        {"ada", -20, -132},
    {"hopper", -21, -133}, {"blackwell", -21, -133}, {"rtx_blackwell", -21, -133},
    /* not in DOMAIN.md: B300's rows are the hypothesis that they are B200's
     * (model/arch_hypotheses.def), so B200's values are what they must hold */
    {"blackwell_ultra", -21, -133},
};

/* DOMAIN.md's e_zero of architecture `name` for output format fd; 0 and
 * *found 0 when DOMAIN.md gives none. */
static int domain_ez(const char *name, mf_format fd, int *found)
{
    for (size_t i = 0; i < sizeof domain_e_zero / sizeof *domain_e_zero; i++)
        if (!strcmp(domain_e_zero[i].arch, name)) {
            *found = 1;
            return fd == MF_FMT_F16 ? domain_e_zero[i].ez16 : domain_e_zero[i].ez32;
        }
    *found = 0;
    return 0;
}

static void check_rows(void)
{
    for (size_t i = 0; i < mf_instr_count; i++) {
        const mf_instr *in = &mf_instr_table[i];
        const mf_arch_info *ai = mf_arch_get(in->arch);
        CHECK(ai != NULL, "%s: no architecture", in->name);
        if (!ai)
            continue;
        size_t an = strlen(ai->name);
        CHECK(!strncmp(in->name, ai->name, an) && in->name[an] == '/', "%s: name is not ARCH/...", in->name);
        CHECK(in->nan_any == (ai->nan == MF_NAN_ANY || in->fd == MF_FMT_F64), "%s: nan_any %d is not its arch's rule",
              in->name, in->nan_any);
        CHECK(in->zero_plus == (ai->zero == MF_ZERO_PLUS), "%s: zero_plus %d is not its arch's rule", in->name,
              in->zero_plus);
        /* e_zero by the output format, except the rows that name their own
         * (GST-FDPA's -139; Turing's m8n8k4, which takes Volta's parameters) */
        if (is_fused(in) && in->family != MF_GST_FDPA && strncmp(in->name, "turing/mma.m8n8k4", 17)) {
            int found, want = domain_ez(ai->name, in->fd, &found);
            CHECK(found, "%s: ../shared/DOMAIN.md gives no e_zero for %s", in->name, ai->name);
            CHECK(!found || in->e_zero == want, "%s: e_zero %d, DOMAIN.md gives %d for %s output", in->name,
                  in->e_zero, want, mf_format_get(in->fd)->name);
        }
        if (!strncmp(in->name, "turing/mma.m8n8k4", 17)) {
            int found, want = domain_ez("volta", in->fd, &found);
            CHECK(in->F == 23 && in->e_zero == want, "%s: not Volta's parameters (F %d, e_zero %d; DOMAIN.md: 23, %d)",
                  in->name, in->F, in->e_zero, want);
        }
    }
}

/* A modified copy of a table row, not in the table: evaluation must read the
 * copy's fields (no look-up by row position). */
static void check_modified_copy(void)
{
    const mf_instr *row = mf_instr_find("hopper/mma.m16n8k16.f16.f16.f16.f16");
    CHECK(row != NULL, "hopper f16 row missing");
    if (!row)
        return;
    mf_case cs;
    memset(&cs, 0, sizeof cs);
    cs.c = 0x0000;
    cs.a[0] = 0x0c00; /* 2^-12 */
    cs.b[0] = 0x8800; /* -2^-13: the product -2^-25 rounds to zero */
    CHECK(mf_eval(row, &cs) == 0x0000, "table row: %04llx, the H100 gives 0000", (unsigned long long)mf_eval(row, &cs));
    mf_instr *copy = malloc(sizeof *copy);
    if (!copy)
        return;
    *copy = *row;
    copy->zero_plus = 0;
    uint64_t d = mf_eval(copy, &cs);
    CHECK(d == 0x8000, "copy with zero_plus = 0: %04llx, expected 8000", (unsigned long long)d);
    /* the same through the tiles: output (0,0) holds the case, the rest zero */
    int m = copy->m, n = copy->n, k = copy->k;
    uint16_t *A = calloc((size_t)m * k, 2), *B = calloc((size_t)n * k, 2), *C = calloc((size_t)m * n, 2),
             *D = calloc((size_t)m * n, 2);
    if (A && B && C && D) {
        A[0] = 0x0c00;
        B[0] = 0x8800;
        mf_eval_tiles(copy, m, n, k, 1, A, B, C, NULL, NULL, D);
        CHECK(D[0] == 0x8000, "tiles, copy: %04x, expected 8000", D[0]);
        mf_eval_tiles(row, m, n, k, 1, A, B, C, NULL, NULL, D);
        CHECK(D[0] == 0x0000, "tiles, table row: %04x, expected 0000", D[0]);
    }
    free(A);
    free(B);
    free(C);
    free(D);
    /* a changed e_zero on a copy: a zero c and a tiny product whose
     * truncation depends on it must follow the copy's e_zero, on both paths */
    *copy = *row;
    int changed = 0;
    for (uint64_t a0 = 0x0001; a0 < 0x0400 && !changed; a0 += 7) {
        memset(&cs, 0, sizeof cs);
        cs.a[0] = a0;
        cs.b[0] = 0x0001;
        cs.a[1] = 0x3c00;
        cs.b[1] = 0x0001;
        uint64_t base = mf_eval(copy, &cs);
        copy->e_zero = 10;   /* zero terms now dominate e_max: low bits are cut */
        uint64_t moved = mf_eval(copy, &cs);
        copy->e_zero = row->e_zero;
        changed = base != moved;
    }
    CHECK(changed, "no case moved with the copy's e_zero");
    free(copy);
}

/* The floating-point families' working arrays hold MF_KMAX_FLOAT products
 * (mmafuzz_model.h): no row with floating-point A may have a longer K (only
 * integer rows, the sparse s4/u4 m16n8k128, reach MF_KMAX); a sparse row's
 * kept products, half of K, fit MF_KMAX / 2; its metadata MF_MMAX nibbles. */
static void check_k_limits(void)
{
    for (size_t r = 0; r < mf_instr_count; r++) {
        const mf_instr *in = &mf_instr_table[r];
        CHECK(in->k <= MF_KMAX, "%s: k %d > MF_KMAX", in->name, in->k);
        CHECK(mf_format_is_int(in->fa) || in->k <= MF_KMAX_FLOAT, "%s: k %d > MF_KMAX_FLOAT", in->name, in->k);
        CHECK(!in->sparse || (in->n_meta <= MF_MMAX && in->n_meta * in->sp_group == in->k),
              "%s: %d metadata nibbles of %d positions for K %d", in->name, in->n_meta, in->sp_group, in->k);
    }
}

int main(void)
{
    check_architectures();
    check_rows();
    check_k_limits();
    check_modified_copy();
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    else
        printf("arch table: %d architectures, %zu rows consistent; modified copies evaluated as written\n",
               (int)MF_ARCH_COUNT, mf_instr_count);
    return failures != 0;
}
