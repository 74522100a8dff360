/*
 * instr_table.c - the instruction table (rows in instr_table.def), names of
 * architectures, families and conversions, and name look-up.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

/* The architecture table (rows in arch_table.def). */
#define EV_(x) MF_EV_##x
#define ZERO_(x) MF_ZERO_##x
#define NAN_(x) MF_NAN_##x
#define VENDOR_(x) MF_VENDOR_##x
const mf_arch_info mf_arch_table[MF_ARCH_COUNT] = {
#define MF_ARCH(ID, NAME, VENDOR, TARGET, CUDA_ARCHS, HIP_TARGET, WHY, ZERO, ZERO_EV, NAN, NAN_EV, EZ16, EZ16_EV,   \
                EZ32, CC)                                                                                           \
    [MF_ARCH_##ID] = {#NAME, VENDOR_(VENDOR), sizeof(TARGET) > 1 ? (TARGET) : NULL, CUDA_ARCHS, HIP_TARGET, WHY,     \
                      ZERO_(ZERO), EV_(ZERO_EV), NAN_(NAN), EV_(NAN_EV), EZ16, EV_(EZ16_EV), EZ32, CC},
#include "arch_table.def"
#undef MF_ARCH
};

const mf_arch_info *mf_arch_get(mf_arch a)
{
    return (unsigned)a < MF_ARCH_COUNT ? &mf_arch_table[a] : NULL;
}

const char *mf_arch_name(mf_arch a)
{
    return (unsigned)a < MF_ARCH_COUNT ? mf_arch_table[a].name : "?";
}

mf_arch mf_arch_by_name(const char *name)
{
    for (int a = 0; a < MF_ARCH_COUNT; a++)
        if (strcmp(mf_arch_table[a].name, name) == 0)
            return (mf_arch)a;
    return MF_ARCH_COUNT;
}

int mf_arch_is_amd(mf_arch a)
{
    return (unsigned)a < MF_ARCH_COUNT && mf_arch_table[a].vendor == MF_VENDOR_AMD;
}

mf_arch mf_arch_by_cuda_cc(int major, int minor)
{
    char exact[24], any[24];
    snprintf(exact, sizeof exact, "%d.%d", major, minor);
    snprintf(any, sizeof any, "%d.*", major);
    for (int a = 0; a < MF_ARCH_COUNT; a++) {
        const char *p = mf_arch_table[a].cuda_cc;
        while (*p) {
            size_t n = strcspn(p, " ");
            if ((n == strlen(exact) && !strncmp(p, exact, n)) || (n == strlen(any) && !strncmp(p, any, n)))
                return (mf_arch)a;
            p += n;
            p += *p == ' ';
        }
    }
    return MF_ARCH_COUNT;
}

char *mf_arch_list(int vendor, char *buf, size_t len)
{
    size_t pos = 0;
    if (len)
        buf[0] = 0;
    for (int a = 0; a < MF_ARCH_COUNT && pos < len; a++) {
        if (vendor >= 0 && (int)mf_arch_table[a].vendor != vendor)
            continue;
        int n = snprintf(buf + pos, len - pos, "%s%s", pos ? ", " : "", mf_arch_table[a].name);
        if (n < 0)
            break;
        pos += (size_t)n;
    }
    return buf;
}

const char *mf_evidence_name(mf_evidence e)
{
    switch (e) {
    case MF_EV_HW: return "hw";
    case MF_EV_PEER: return "MMA-Sim 2.1.1";
    case MF_EV_PEER_KM: return "MMA-Sim 2.1.1 + Khattak-Mikaitis";
    case MF_EV_HYP: return "hypothesis, not measured";
    default: return "-";
    }
}

const char *mf_family_name(mf_family f)
{
    static const char *const names[MF_FAMILY_COUNT] = {
        "T-FDPA", "ST-FDPA", "GST-FDPA", "FMA-chain", "E-FDPA", "FTZ-Mul-Add", "TR-FDPA", "GTR-FDPA", "F16-emu",
        "INT-dot",
    };
    return (unsigned)f < MF_FAMILY_COUNT ? names[f] : "?";
}

const char *mf_rho_name(mf_rho r)
{
    static const char *const names[MF_RHO_COUNT] = {"RZ-FP32", "RZ-E8M13", "RNE-FP16", "RNE", "RZ", "RD", "RU"};
    return (unsigned)r < MF_RHO_COUNT ? names[r] : "?";
}

#define FMT_(x) MF_FMT_##x

/* Per architecture, as constant expressions for the row initializers below:
 * its rules (arch_table.def), named MF_A_<field>_<name>. */
enum {
#define MF_ARCH(ID, NAME, VENDOR, TARGET, CUDA_ARCHS, HIP_TARGET, WHY, ZERO, ZERO_EV, NAN, NAN_EV, EZ16, EZ16_EV,   \
                EZ32, CC)                                                                                           \
    MF_A_ID_##NAME = MF_ARCH_##ID, MF_A_ZERO_PLUS_##NAME = ZERO_(ZERO) == MF_ZERO_PLUS,                                \
    MF_A_NAN_ANY_##NAME = NAN_(NAN) == MF_NAN_ANY, MF_A_EZ16_##NAME = EZ16, MF_A_EZ32_##NAME = EZ32,
#include "arch_table.def"
#undef MF_ARCH
};

/* E_ZERO written EZ_D in a row: the architecture's e_zero for the row's
 * output format D (as MMA-Sim 2.1.1 keys it). */
#define EZ_D 0x7fff
#define ROW_EZ(ARCH, D, EZ)                                                                                      \
    ((EZ) != EZ_D ? (EZ) : FMT_(D) == MF_FMT_F16 ? MF_A_EZ16_##ARCH : MF_A_EZ32_##ARCH)

/* The rows.  Each row's effective rules are filled here from its
 * architecture's (zero_plus, nan_any, e_zero), so that evaluation reads only
 * the row it is given: a modified copy of a row is evaluated as written. */
const mf_instr mf_instr_table[] = {
#define MF_INSTR(ARCH, Q, M, N, K, A, B, C, D, S, BLOCK, FAM, F, L, EZ, X, RHO, STATUS)                     \
    {#ARCH "/" Q, Q, (mf_arch)MF_A_ID_##ARCH, M, N, K, FMT_(A), FMT_(B), FMT_(C), FMT_(D), FMT_(S), BLOCK, FAM, F, L, \
     ROW_EZ(ARCH, D, EZ), X, RHO, STATUS,                                                                      \
     /* NaN payloads are modelled only for non-FP64 outputs of PAYLOAD architectures (VECTORS.md) */          \
     MF_A_NAN_ANY_##ARCH || FMT_(D) == MF_FMT_F64,                                                             \
     MF_A_ZERO_PLUS_##ARCH,                                                                                    \
     (BLOCK) ? (K) / ((BLOCK) ? (BLOCK) : 1) : 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
/* A sparse row: the same fields, no scales; tf32's metadata nibble covers a
 * pair of elements (1:2), s4/u4's a group of 8 (4:8, the indices naming
 * pairs), every other format's a group of 4 (2:4). */
#define SP_GROUP_(A) (FMT_(A) == MF_FMT_TF32 ? 2 : FMT_(A) == MF_FMT_S4 || FMT_(A) == MF_FMT_U4 ? 8 : 4)
#define MF_INSTR_SP(ARCH, Q, M, N, K, A, B, C, D, FAM, F, L, EZ, X, RHO, STATUS, SPARSE, SP_L)                     \
    {#ARCH "/" Q, Q, (mf_arch)MF_A_ID_##ARCH, M, N, K, FMT_(A), FMT_(B), FMT_(C), FMT_(D), MF_FMT_NONE, 0, FAM, F, L,  \
     ROW_EZ(ARCH, D, EZ), X, RHO, STATUS, MF_A_NAN_ANY_##ARCH || FMT_(D) == MF_FMT_F64, MF_A_ZERO_PLUS_##ARCH, 0,     \
     0, 0, 0, 0, SPARSE, SP_GROUP_(A), (K) / SP_GROUP_(A), MF_SPM_KEPT, SP_L},
#include "instr_table.def"
#undef MF_INSTR_SP
#undef MF_INSTR
#undef SP_GROUP_
};
const size_t mf_instr_count = sizeof mf_instr_table / sizeof mf_instr_table[0];

const mf_instr *mf_instr_find(const char *name)
{
    for (size_t i = 0; i < mf_instr_count; i++)
        if (strcmp(mf_instr_table[i].name, name) == 0)
            return &mf_instr_table[i];
    return NULL;
}

/* The forms, one row each (numbered from 1 in this order): name, then the fields it sets. */
static const struct {
    const char *name;
    uint8_t neg_a, neg_b, no_c;
} instr_forms[MF_INSTR_FORMS] = {
    {"neg_a", 1, 0, 0},
    {"neg_b", 0, 1, 0},
    {"neg_ab", 1, 1, 0},
    {"no_c", 0, 0, 1},
};

int mf_instr_with_form(const mf_instr *in, const char *form, mf_instr *out)
{
    if (!form || strncmp(in->qualifier, "wgmma.", 6) || mf_instr_form_index(in))
        return -1;
    for (int i = 0; i < MF_INSTR_FORMS; i++) {
        if (strcmp(form, instr_forms[i].name))
            continue;
        if ((instr_forms[i].neg_a || instr_forms[i].neg_b) && mf_format_is_int(in->fa))
            return -1;   /* integer and b1 wgmma take scale-d only */
        *out = *in;
        out->neg_a = instr_forms[i].neg_a;
        out->neg_b = instr_forms[i].neg_b;
        out->no_c = instr_forms[i].no_c;
        out->no_c_neg_zero = 0;
        return 0;
    }
    return -1;
}

int mf_instr_form_index(const mf_instr *in)
{
    for (int i = 0; i < MF_INSTR_FORMS; i++)
        if (in->neg_a == instr_forms[i].neg_a && in->neg_b == instr_forms[i].neg_b &&
            in->no_c == instr_forms[i].no_c)
            return i + 1;
    return 0;
}

const char *mf_instr_form_name_at(int i) { return i >= 1 && i <= MF_INSTR_FORMS ? instr_forms[i - 1].name : NULL; }

const char *mf_instr_form_name(const mf_instr *in) { return mf_instr_form_name_at(mf_instr_form_index(in)); }

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
