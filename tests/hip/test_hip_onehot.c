/*
 * test_hip_onehot.c - on an AMD GPU, checks every wrapper's fragment layouts
 * with one-hot tiles, for each table row of the GPU's architecture.
 *
 * Expected values come from the meaning of D = A.B + C alone (no model):
 *  - A one-hot 1.0 at (i0,k0), B all 1.0, C = +0:  D[i][j] = 1.0 if i == i0, else +0;
 *  - B one-hot 1.0 at (k0,j0), A all 1.0, C = +0:  D[i][j] = 1.0 if j == j0, else +0;
 *  - C one-hot 2.0 at (i0,j0), A = B = +0:         D = C.
 * One tile per position, all in one batch, so a layout or block mix-up
 * shows as a wrong tile and position.  Encodings of 1.0 and 2.0: DOMAIN.md
 * section 2 (exponent field = bias, resp. bias + 1).  gpu label: skips
 * without an AMD GPU, fails then when MMAFUZZ_REQUIRE_GPU=1.
 */
#include "hip_test_device.h"

#include <stdint.h>

/* x * 2^e for x = 1, e in {0, 1}, in format f (sign 0, fraction 0). */
static uint64_t pow2(mf_format f, int e)
{
    const mf_format_info *fi = mf_format_get(f);
    int frac = f == MF_FMT_TF32 ? 23 : fi->frac_bits; /* tf32 sits in the top 19 bits of 32 */
    return (uint64_t)(fi->bias + e) << frac;
}

static int check_row(mf_device *dev, const mf_instr *in)
{
    int m, n, k;
    mf_device_tile_shape(dev, in, NULL, &m, &n, &k);
    size_t ta = (size_t)m * k, tb = (size_t)n * k, tc = (size_t)m * n;
    size_t nA = ta, nB = tb, nC = tc, nt = nA + nB + nC;
    size_t ea = mf_abi_elem_bytes(in->fa), eb = mf_abi_elem_bytes(in->fb), ed = mf_abi_elem_bytes(in->fd);
    unsigned char *A = calloc(nt * ta, ea), *B = calloc(nt * tb, eb), *C = calloc(nt * tc, ed),
                  *D = calloc(nt * tc, ed);
    uint64_t oneA = pow2(in->fa, 0), oneB = pow2(in->fb, 0), oneD = pow2(in->fd, 0), twoD = pow2(in->fd, 1);
    for (size_t t = 0; t < nA; t++) { /* A one-hot at position t, B ones */
        mf_abi_set(in->fa, A, t * ta + t, oneA);
        for (size_t x = 0; x < tb; x++)
            mf_abi_set(in->fb, B, t * tb + x, oneB);
    }
    for (size_t u = 0; u < nB; u++) { /* B one-hot at position u, A ones */
        size_t t = nA + u;
        mf_abi_set(in->fb, B, t * tb + u, oneB);
        for (size_t x = 0; x < ta; x++)
            mf_abi_set(in->fa, A, t * ta + x, oneA);
    }
    for (size_t u = 0; u < nC; u++) /* C one-hot 2.0 */
        mf_abi_set(in->fc, C, (nA + nB + u) * tc + u, twoD);
    for (size_t x = 0; x < nt * tc; x++) /* sentinel: a D never written shows */
        mf_abi_set(in->fd, D, x, 0x7777777777777777ull);
    char err[512];
    int bad = 0;
    if (mf_device_run_tiles(dev, in, NULL, nt, A, B, C, NULL, NULL, D, err, sizeof err)) {
        printf("FAIL %s: %s\n", in->name, err);
        bad = 1;
    }
    for (size_t t = 0; t < nt && !bad; t++)
        for (int i = 0; i < m && !bad; i++)
            for (int j = 0; j < n && !bad; j++) {
                uint64_t want;
                const char *what;
                size_t pos;
                if (t < nA) {
                    what = "A one-hot at (i,k)";
                    pos = t;
                    want = (size_t)i == t / (size_t)k ? oneD : 0;
                } else if (t < nA + nB) {
                    what = "B one-hot at (j,k) of B's columns";
                    pos = t - nA;
                    want = (size_t)j == pos / (size_t)k ? oneD : 0;
                } else {
                    what = "C one-hot at (i,j)";
                    pos = t - nA - nB;
                    want = pos == (size_t)i * n + j ? twoD : 0;
                }
                uint64_t got = mf_abi_get(in->fd, D, t * tc + (size_t)i * n + j);
                if (got != want) {
                    printf("FAIL %s: tile %zu (%s, position (%zu,%zu)): D[%d][%d] = 0x%llx, expected 0x%llx\n",
                           in->name, t, what, pos / (t < nA + nB ? (size_t)k : (size_t)n),
                           pos % (t < nA + nB ? (size_t)k : (size_t)n), i, j, (unsigned long long)got,
                           (unsigned long long)want);
                    bad = 1;
                }
            }
    if (!bad)
        printf("ok   %s: %zu one-hot tiles\n", in->name, nt);
    free(A);
    free(B);
    free(C);
    free(D);
    return bad;
}

int main(void)
{
    int status = 0;
    mf_device *dev = hip_test_open("test_hip_onehot", &status);
    if (!dev)
        return status;
    const mf_device_info *info = mf_device_get_info(dev);
    printf("device %s (%s), %s\n", info->name, info->arch, mf_arch_name(info->model_arch));
    int rows = 0, fails = 0;
    for (size_t r = 0; r < mf_instr_count; r++) {
        const mf_instr *in = &mf_instr_table[r];
        if (in->arch != info->model_arch)
            continue;
        rows++;
        fails += check_row(dev, in);
    }
    printf("%d of %d %s wrappers pass the one-hot layout test\n", rows - fails, rows, mf_arch_name(info->model_arch));
    mf_device_close(dev);
    return fails || !rows ? 1 : 0;
}
