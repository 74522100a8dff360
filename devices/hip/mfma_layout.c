/*
 * mfma_layout.c - the fragment layouts of the AMD MFMA wrappers
 * (mfma_layout.h), for every CDNA1-3 row of the instruction table.
 *
 * Source: AMD Matrix Instruction Calculator (ROCm/amd_matrix_instruction_
 * calculator, gfx9/CDNA "Matrix element to register mapping"), which writes
 * AMD's ISA documents (CDNA3 ISA section 7.1, "Dependent Matrix Operations"
 * and the MFMA operand tables) as formulas.  shared/DOMAIN.md section 8
 * gives the 16x16x16 case, which tests/hip checks separately.
 */
#include "mfma_layout.h"

#include <stdio.h>
#include <string.h>

/*
 * A and B (calculator: "A[i][k].block Lane: M*block + M*blocks*floor(k/E) + i",
 * register element k % E; B alike with j for i):
 *   lane = i + M*block + M*blocks*(k / E),   v = k % E
 * As a CuTe layout over the ABI tile of A (offset block*M*K + i*K + k):
 *   lane modes (M : K) (blocks : M*K) (64/(M*blocks) : E),  v mode (E : 1).
 */
static void ab_layout(int rows, int K, int blocks, int E, mf_tv_layout *L)
{
    memset(L, 0, sizeof *L);
    L->nlane = 3;
    L->lane[0] = (mf_tv_mode){(uint32_t)rows, (uint32_t)K};
    L->lane[1] = (mf_tv_mode){(uint32_t)blocks, (uint32_t)(rows * K)};
    L->lane[2] = (mf_tv_mode){(uint32_t)(64 / (rows * blocks)), (uint32_t)E};
    L->nval = 1;
    L->val[0] = (mf_tv_mode){(uint32_t)E, 1};
}

/*
 * C and D, offset block*M*N + i*N + j.  From the calculator's
 * "C or D[i][j].block GPR" and "Lane" formulas:
 *   f32 32x32:  lane = 32*(i/4 % 2) + j          GPR = 16*block + 4*(i/8) + i%4
 *   f32 16x16:  lane = 16*(i/4) + j              GPR = 4*block + i%4
 *   f32 4x4:    lane = 4*block + j               GPR = i
 *   f64 16x16:  lane = 16*(i%4) + j              GPR pair = i/4
 *   f64 4x4:    lane = 16*(i%4) + 4*block + j    GPR pair = 0
 */
static const struct cd_row {
    uint8_t m, f64, blocks;
    mf_tv_layout tv;
} cd_rows[] = {
    {32, 0, 1, {2, 2, {{32, 1}, {2, 4 * 32}}, {{4, 32}, {4, 8 * 32}}}},
    {32, 0, 2, {2, 3, {{32, 1}, {2, 4 * 32}}, {{4, 32}, {4, 8 * 32}, {2, 32 * 32}}}},
    {16, 0, 1, {2, 1, {{16, 1}, {4, 4 * 16}}, {{4, 16}}}},
    {16, 0, 4, {2, 2, {{16, 1}, {4, 4 * 16}}, {{4, 16}, {4, 16 * 16}}}},
    {4, 0, 16, {2, 1, {{4, 1}, {16, 4 * 4}}, {{4, 4}}}},
    {16, 1, 1, {2, 1, {{16, 1}, {4, 16}}, {{4, 4 * 16}}}},
    {4, 1, 4, {3, 1, {{4, 1}, {4, 4 * 4}, {4, 4}}, {{1, 0}}}},
};

int mf_mfma_layouts_get(const mf_mfma_info *x, mf_mfma_layouts *out, char *err, size_t errlen)
{
    const mf_instr *in = x->in;
    memset(out, 0, sizeof *out);
    int f64 = in->fd == MF_FMT_F64;
    const struct cd_row *cd = NULL;
    for (size_t r = 0; r < sizeof cd_rows / sizeof cd_rows[0]; r++)
        if (cd_rows[r].m == in->m && cd_rows[r].f64 == f64 && cd_rows[r].blocks == x->blocks)
            cd = &cd_rows[r];
    if (!cd || in->m != in->n || 64 % (in->m * x->blocks) != 0) {
        snprintf(err, errlen, "%s: no C/D layout for %dx%d, %d block(s), %s", in->name, in->m, in->n, x->blocks,
                 mf_format_get(in->fd)->name);
        return -1;
    }
    ab_layout(in->m, in->k, x->blocks, x->ab_elems, &out->a);
    ab_layout(in->n, in->k, x->blocks, x->ab_elems, &out->b);
    out->cd = cd->tv;
    out->blocks = (uint32_t)x->blocks;
    out->a_tile = (uint32_t)(in->m * in->k);
    out->b_tile = (uint32_t)(in->n * in->k);
    out->cd_tile = (uint32_t)(in->m * in->n);
    return 0;
}
