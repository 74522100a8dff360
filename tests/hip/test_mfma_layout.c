/*
 * test_mfma_layout.c - host checks of the AMD MFMA wrapper data
 * (devices/hip/mfma_info.c, mfma_layout.c), for every CDNA1-3 table row.
 * Runs on any machine; needs no HIP toolchain.
 *
 * Where the expected values come from:
 *  1. bijection: each layout must place the 64 lanes' values on the
 *     blocks x tile positions one to one (a property, no data needed);
 *  2. AMD Matrix Instruction Calculator formulas (ROCm/amd_matrix_instruction_
 *     calculator, gfx9 "Matrix element to register mapping"), coded here in
 *     the calculator's own direction (matrix coordinate -> lane, register),
 *     independently of the CuTe tables under test;
 *  3. shared/DOMAIN.md section 8, "AMD MFMA 16x16x16";
 *  4. CDNA3 instruction names, which spell the block count ("_4b_");
 *  5. builtin names as LLVM's BuiltinsAMDGPU.def spells them.
 */
#include "mfma_layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                                                                     \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            failures++;                                                                                      \
            if (failures <= 40) {                                                                            \
                fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                              \
                fprintf(stderr, __VA_ARGS__);                                                                \
                fputc('\n', stderr);                                                                         \
            }                                                                                                \
        }                                                                                                    \
    } while (0)

/* 1. Every (lane, v) lands inside the tiles, and every position once. */
static void check_bijection(const char *name, const char *op, const mf_tv_layout *L, uint32_t per_lane,
                            uint32_t positions)
{
    CHECK(mf_tv_size(L) == 64 * per_lane, "%s %s: layout covers %u values, expected 64 x %u", name, op,
          mf_tv_size(L), per_lane);
    CHECK(64 * per_lane == positions, "%s %s: 64 lanes x %u values != %u tile positions", name, op, per_lane,
          positions);
    unsigned char *hit = calloc(positions, 1);
    for (uint32_t lane = 0; lane < 64; lane++)
        for (uint32_t v = 0; v < per_lane; v++) {
            uint32_t off = mf_tv_offset(L, lane, v);
            if (off >= positions) {
                CHECK(0, "%s %s: lane %u value %u -> offset %u outside %u positions", name, op, lane, v, off,
                      positions);
                continue;
            }
            CHECK(!hit[off], "%s %s: offset %u reached twice (lane %u value %u)", name, op, off, lane, v);
            hit[off] = 1;
        }
    free(hit);
}

/* 2a. Calculator, A and B: lane = M*block + M*blocks*floor(k/E) + i, value k % E. */
static void check_ab_calculator(const mf_mfma_info *x, const mf_tv_layout *L, const char *op)
{
    const mf_instr *in = x->in;
    int M = in->m, K = in->k, E = x->ab_elems, B = x->blocks;
    for (int blk = 0; blk < B; blk++)
        for (int i = 0; i < M; i++)
            for (int k = 0; k < K; k++) {
                uint32_t lane = (uint32_t)(M * blk + M * B * (k / E) + i);
                uint32_t want = (uint32_t)(blk * M * K + i * K + k);
                uint32_t got = mf_tv_offset(L, lane, (uint32_t)(k % E));
                CHECK(got == want, "%s %s[%d][%d] block %d: lane %u value %d holds offset %u, calculator says %u",
                      in->name, op, i, k, blk, lane, k % E, got, want);
            }
}

/* 2b. Calculator, C and D ("C or D[i][j].block" Lane and GPR formulas). */
static void check_cd_calculator(const mf_mfma_info *x, const mf_tv_layout *L)
{
    const mf_instr *in = x->in;
    int M = in->m, N = in->n, B = x->blocks, f64 = in->fd == MF_FMT_F64;
    for (int blk = 0; blk < B; blk++)
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                int lane = 0, reg = -1;
                if (!f64) {
                    if (N * M / 4 > 64)
                        lane += (N * (i / 4)) % 64;
                    else if (N * M / 4 == 64)
                        lane += N * (i / 4);
                    if (M * N < 64)
                        lane += N * blk;
                    lane += j;
                    if (M == 4 && N == 4 && B == 16)
                        reg = i;
                    else if (M == 16 && N == 16)
                        reg = 4 * blk + i % 4;
                    else if (M == 32 && N == 32)
                        reg = 16 * blk + 4 * (i / 8) + i % 4;
                } else {
                    lane = 16 * (i % 4) + (M * N < 64 ? N * blk : 0) + j;
                    reg = B == 1 ? i / 4 : B == 4 ? 0 : -1; /* register pairs */
                }
                CHECK(reg >= 0, "%s: the calculator has no C/D formula for this shape", in->name);
                if (reg < 0)
                    return;
                uint32_t want = (uint32_t)(blk * M * N + i * N + j);
                uint32_t got = mf_tv_offset(L, (uint32_t)lane, (uint32_t)reg);
                CHECK(got == want, "%s D[%d][%d] block %d: lane %d register %d holds offset %u, calculator says %u",
                      in->name, i, j, blk, lane, reg, got, want);
            }
}

/* 3. DOMAIN.md section 8, 16x16x16 (tid = lane): A row = tid%16,
 * k = tid/16*4 + i; B k = tid/16*4 + i, n = tid%16; C row = tid/16*4 + i,
 * col = tid%16. */
static int check_domain_16x16x16(const mf_mfma_info *x, const mf_mfma_layouts *L)
{
    const mf_instr *in = x->in;
    if (!(in->m == 16 && in->n == 16 && in->k == 16))
        return 0;
    for (uint32_t tid = 0; tid < 64; tid++)
        for (uint32_t i = 0; i < 4; i++) {
            uint32_t k = tid / 16 * 4 + i;
            CHECK(mf_tv_offset(&L->a, tid, i) == (tid % 16) * 16 + k, "%s: A lane %u value %u vs DOMAIN 8",
                  in->name, tid, i);
            CHECK(mf_tv_offset(&L->b, tid, i) == (tid % 16) * 16 + k, "%s: B lane %u value %u vs DOMAIN 8",
                  in->name, tid, i);
            CHECK(mf_tv_offset(&L->cd, tid, i) == (tid / 16 * 4 + i) * 16 + tid % 16,
                  "%s: C lane %u value %u vs DOMAIN 8", in->name, tid, i);
        }
    return 1;
}

/* 4. "_<N>b_" in a CDNA3 name is the block count; no suffix means 1. */
static void check_cdna3_blocks(const mf_mfma_info *x)
{
    const mf_instr *in = x->in;
    if (in->arch != MF_ARCH_CDNA3)
        return;
    int named = 1;
    for (const char *p = in->qualifier; *p; p++)
        if (*p == '_' && p[1] >= '0' && p[1] <= '9') {
            char *end;
            long v = strtol(p + 1, &end, 10);
            if (end[0] == 'b' && end[1] == '_')
                named = (int)v;
        }
    CHECK(x->blocks == named, "%s: derived %d blocks, the name says %d", in->name, x->blocks, named);
}

/* 5. LLVM BuiltinsAMDGPU.def spellings of a few rows of each naming rule
 * (the opcode check of tests/hip covers every row on compiled code). */
static void check_builtin_names(void)
{
    static const struct {
        const char *row, *builtin;
    } known[] = {
        {"cdna1/mfma.f32_32x32x1f32", "__builtin_amdgcn_mfma_f32_32x32x1f32"},
        {"cdna1/mfma.f32_4x4x2bf16", "__builtin_amdgcn_mfma_f32_4x4x2bf16"},
        {"cdna2/mfma.f32_16x16x16bf16_1k", "__builtin_amdgcn_mfma_f32_16x16x16bf16_1k"},
        {"cdna2/mfma.f64_4x4x4f64", "__builtin_amdgcn_mfma_f64_4x4x4f64"},
        {"cdna3/mfma.f32_16x16x16_f16", "__builtin_amdgcn_mfma_f32_16x16x16f16"},
        {"cdna3/mfma.f32_32x32x1_2b_f32", "__builtin_amdgcn_mfma_f32_32x32x1f32"},
        {"cdna3/mfma.f64_4x4x4_4b_f64", "__builtin_amdgcn_mfma_f64_4x4x4f64"},
        {"cdna3/mfma.f32_32x32x8_bf16", "__builtin_amdgcn_mfma_f32_32x32x8bf16_1k"},
        {"cdna3/mfma.f32_16x16x8_xf32", "__builtin_amdgcn_mfma_f32_16x16x8_xf32"},
        {"cdna3/mfma.f32_32x32x16_bf8_fp8", "__builtin_amdgcn_mfma_f32_32x32x16_bf8_fp8"},
    };
    char err[256];
    for (size_t r = 0; r < sizeof known / sizeof known[0]; r++) {
        const mf_instr *in = mf_instr_find(known[r].row);
        CHECK(in != NULL, "%s: not in the instruction table", known[r].row);
        if (!in)
            continue;
        mf_mfma_info x;
        CHECK(mf_mfma_info_get(in, &x, err, sizeof err) == 0, "%s", err);
        CHECK(!strcmp(x.builtin, known[r].builtin), "%s: builtin %s, LLVM spells it %s", in->name, x.builtin,
              known[r].builtin);
    }
}

int main(void)
{
    int rows = 0, domain = 0, model_only = 0;
    char err[256];
    for (size_t r = 0; r < mf_instr_count; r++) {
        const mf_instr *in = &mf_instr_table[r];
        if (!mf_arch_is_amd(in->arch))
            continue;
        if (!mf_arch_get(in->arch)->hip_target[0]) {   /* no compiler targets it: no wrapper, no layout (cdna4) */
            model_only++;
            continue;
        }
        rows++;
        mf_mfma_info x;
        mf_mfma_layouts L;
        if (mf_mfma_info_get(in, &x, err, sizeof err) || mf_mfma_layouts_get(&x, &L, err, sizeof err)) {
            CHECK(0, "%s", err);
            continue;
        }
        check_bijection(in->name, "A", &L.a, (uint32_t)x.ab_elems, L.blocks * L.a_tile);
        check_bijection(in->name, "B", &L.b, (uint32_t)x.ab_elems, L.blocks * L.b_tile);
        check_bijection(in->name, "C/D", &L.cd, (uint32_t)x.cd_elems, L.blocks * L.cd_tile);
        check_ab_calculator(&x, &L.a, "A");
        check_ab_calculator(&x, &L.b, "B");
        check_cd_calculator(&x, &L.cd);
        domain += check_domain_16x16x16(&x, &L);
        check_cdna3_blocks(&x);
    }
    check_builtin_names();
    CHECK(rows > 0, "the table has no AMD rows");
    CHECK(domain > 0, "no 16x16x16 row was checked against DOMAIN.md section 8");
    printf("%d AMD rows: layouts bijective and equal to the calculator's formulas; %d rows vs DOMAIN 8; "
           "%d failure(s); %d rows of architectures no compiler here targets (model only) not laid out\n",
           rows, domain, failures, model_only);
    return failures ? 1 : 0;
}
