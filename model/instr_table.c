/*
 * instr_table.c - the instruction table (rows in instr_table.def), names of
 * architectures, families and conversions, and name look-up.
 */
#include "internal.h"

#include <string.h>

static const char *const arch_names[MF_ARCH_COUNT] = {
    "volta", "turing", "ampere", "ada", "hopper", "blackwell", "rtx_blackwell", "cdna1", "cdna2", "cdna3",
};

const char *mf_arch_name(mf_arch a)
{
    return (unsigned)a < MF_ARCH_COUNT ? arch_names[a] : "?";
}

mf_arch mf_arch_by_name(const char *name)
{
    for (int a = 0; a < MF_ARCH_COUNT; a++)
        if (strcmp(arch_names[a], name) == 0)
            return (mf_arch)a;
    return MF_ARCH_COUNT;
}

int mf_arch_is_amd(mf_arch a)
{
    return a >= MF_ARCH_CDNA1 && a <= MF_ARCH_CDNA3;
}

const char *mf_family_name(mf_family f)
{
    static const char *const names[MF_FAMILY_COUNT] = {
        "T-FDPA", "ST-FDPA", "GST-FDPA", "FMA-chain", "E-FDPA", "FTZ-Mul-Add", "TR-FDPA", "GTR-FDPA", "F16-emu",
    };
    return (unsigned)f < MF_FAMILY_COUNT ? names[f] : "?";
}

const char *mf_rho_name(mf_rho r)
{
    static const char *const names[MF_RHO_COUNT] = {"RZ-FP32", "RZ-E8M13", "RNE-FP16", "RNE"};
    return (unsigned)r < MF_RHO_COUNT ? names[r] : "?";
}

#define FMT_(x) MF_FMT_##x
#define MF_ARCH_ID_volta MF_ARCH_VOLTA
#define MF_ARCH_ID_turing MF_ARCH_TURING
#define MF_ARCH_ID_ampere MF_ARCH_AMPERE
#define MF_ARCH_ID_ada MF_ARCH_ADA
#define MF_ARCH_ID_hopper MF_ARCH_HOPPER
#define MF_ARCH_ID_blackwell MF_ARCH_BLACKWELL
#define MF_ARCH_ID_rtx_blackwell MF_ARCH_RTX_BLACKWELL
#define MF_ARCH_ID_cdna1 MF_ARCH_CDNA1
#define MF_ARCH_ID_cdna2 MF_ARCH_CDNA2
#define MF_ARCH_ID_cdna3 MF_ARCH_CDNA3


/* Architecture specifics that are not parameters of a family.
 *
 * Zero sign of the truncated fused sums (DOMAIN section 3, T-FDPA step 8:
 * "the sign of an exact zero result is one of the things hardware must
 * decide").  MMA-Sim keeps the sign of a negative sum that rounds to zero
 * (-0).  On an H100, every hopper T-FDPA instruction (mma.sync, wgmma, and
 * the HMMA steps of fp8 mma.sync) returns +0 instead: 6,453 minimized
 * mismatches of 17 instructions, e.g. mma.m16n8k16.f16.f16.f16.f16 with c=0,
 * a0=0c00 (2^-12), b0=8800 (-2^-13): -2^-25 rounds to zero, H100 gives 0000
 * (corpus/findings/h100/).  Other architectures keep MMA-Sim's rule until
 * measured. */
#define ZERO_PLUS(arch) ((arch) == MF_ARCH_HOPPER)

const mf_instr mf_instr_table[] = {
#define MF_INSTR(ARCH, Q, M, N, K, A, B, C, D, S, BLOCK, FAM, F, L, EZ, X, RHO, STATUS)                     \
    {#ARCH "/" Q, Q, MF_ARCH_ID_##ARCH, M, N, K, FMT_(A), FMT_(B), FMT_(C), FMT_(D), FMT_(S), BLOCK, FAM, F, L,  \
     EZ, X, RHO, STATUS,                                                                                     \
     /* NaN payloads are modelled only for NVIDIA non-FP64 outputs (VECTORS.md) */                          \
     (MF_ARCH_ID_##ARCH >= MF_ARCH_CDNA1) || FMT_(D) == MF_FMT_F64,                                             \
     ZERO_PLUS(MF_ARCH_ID_##ARCH),                                                                              \
     (BLOCK) ? (K) / ((BLOCK) ? (BLOCK) : 1) : 0},
#include "instr_table.def"
#undef MF_INSTR
};
const size_t mf_instr_count = sizeof mf_instr_table / sizeof mf_instr_table[0];

const mf_instr *mf_instr_find(const char *name)
{
    for (size_t i = 0; i < mf_instr_count; i++)
        if (strcmp(mf_instr_table[i].name, name) == 0)
            return &mf_instr_table[i];
    return NULL;
}

const mf_instr *mf_instr_on_arch(const mf_instr *in, mf_arch a)
{
    if (in->arch == a)
        return in;
    for (size_t i = 0; i < mf_instr_count; i++)
        if (mf_instr_table[i].arch == a && strcmp(mf_instr_table[i].qualifier, in->qualifier) == 0)
            return &mf_instr_table[i];
    return NULL;
}

/* Levenshtein distance, capped at the lengths of the model's names. */
static size_t edit_distance(const char *s, const char *t)
{
    size_t n = strlen(s), m = strlen(t);
    if (n > 127 || m > 127)
        return (size_t)-1;
    size_t row[128];
    for (size_t j = 0; j <= m; j++)
        row[j] = j;
    for (size_t i = 1; i <= n; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t up = row[j];
            size_t best = diag + (s[i - 1] != t[j - 1]);
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[m];
}

size_t mf_instr_closest(const char *name, const mf_instr **out, size_t max)
{
    size_t dist[16];
    size_t n = 0;
    if (max > 16)
        max = 16;
    for (size_t i = 0; i < mf_instr_count; i++) {
        size_t d = edit_distance(name, mf_instr_table[i].name);
        /* insertion into the sorted list of the best `max` */
        size_t pos = n;
        while (pos > 0 && dist[pos - 1] > d)
            pos--;
        if (pos >= max)
            continue;
        size_t last = n < max ? n : max - 1;
        for (size_t j = last; j > pos; j--) {
            dist[j] = dist[j - 1];
            out[j] = out[j - 1];
        }
        dist[pos] = d;
        out[pos] = &mf_instr_table[i];
        if (n < max)
            n++;
    }
    return n;
}

int mf_glob_match(const char *p, const char *s)
{
    const char *star_p = NULL, *star_s = NULL;
    while (*s) {
        if (*p == '*') {
            star_p = ++p;
            star_s = s;
            continue;
        }
        if (*p == '[') {
            const char *q = p + 1;
            int neg = (*q == '!' || *q == '^');
            if (neg)
                q++;
            int hit = 0;
            while (*q && *q != ']') {
                if (q[1] == '-' && q[2] && q[2] != ']') {
                    if (*s >= q[0] && *s <= q[2])
                        hit = 1;
                    q += 3;
                } else {
                    if (*s == *q)
                        hit = 1;
                    q++;
                }
            }
            if (*q == ']' && hit != neg) {
                p = q + 1;
                s++;
                continue;
            }
        } else if (*p == '?' || *p == *s) {
            p++;
            s++;
            continue;
        }
        if (!star_p)
            return 0;
        p = star_p;
        s = ++star_s;
    }
    while (*p == '*')
        p++;
    return *p == 0;
}
