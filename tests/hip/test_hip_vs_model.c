/*
 * test_hip_vs_model.c - on an AMD GPU, runs every wrapper of the GPU's
 * architecture on seeded random tiles and compares each output element with
 * the reference model (mf_eval; NaN compared as any NaN, VECTORS.md).
 *
 * Expected values: the model, which reproduces the peer model's (MMA-Sim v2)
 * vectors for every AMD row; this test is where the hardware judges both.
 * Inputs: per element, a uniformly random bit pattern, a special value
 * (+-0, +-1, largest and smallest magnitudes, Inf/NaN patterns), or a value
 * with an exponent near 1.0 so that sums cancel and round.  The tile count is
 * not a multiple of any block count, to exercise the partial last wavefront.
 * gpu label: skips without an AMD GPU, fails then when MMAFUZZ_REQUIRE_GPU=1.
 * Usage: test_hip_vs_model [-seed=N] [-tiles=N]
 */
#include "gen_rng.h"
#include "hip_test_device.h"

#include <inttypes.h>
#include <stdint.h>

/* The project's one PRNG (gen/gen_rng.h); it only picks inputs. */
static uint64_t next(uint64_t *s) { return rng_next_u64(s); }

/* A random element of format f (bit patterns only). */
static uint64_t element(mf_format f, uint64_t *s)
{
    const mf_format_info *fi = mf_format_get(f);
    int bits = fi->bits, frac = f == MF_FMT_TF32 ? 23 : fi->frac_bits, eb = fi->exp_bits;
    uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1, r = next(s);
    uint64_t sign = (r >> 63) << (bits - 1);
    switch (r % 4) {
    case 0: return next(s) & mask;                        /* any pattern */
    case 1: {                                             /* specials */
        uint64_t emax = (1ull << eb) - 1;
        uint64_t sp[6] = {0, (uint64_t)fi->bias << frac, emax << frac, 1, (emax << frac) - 1, (emax << frac) | 1};
        return (sign | sp[next(s) % 6]) & mask;
    }
    default: {                                            /* exponent within +-3 of 1.0 */
        uint64_t e = (uint64_t)(fi->bias + (int)(next(s) % 7) - 3);
        uint64_t fr = next(s) & ((1ull << frac) - 1);
        return (sign | e << frac | fr) & mask;
    }
    }
}

int main(int argc, char **argv)
{
    uint64_t seed = 1;
    size_t ntiles = 1001;
    for (int i = 1; i < argc; i++) {
        unsigned long long v;
        if (sscanf(argv[i], "-seed=%llu", &v) == 1)
            seed = v;
        else if (sscanf(argv[i], "-tiles=%llu", &v) == 1 && v > 0)
            ntiles = (size_t)v;
        else {
            fprintf(stderr, "usage: test_hip_vs_model [-seed=N] [-tiles=N]\n");
            return 2;
        }
    }
    int status = 0;
    mf_device *dev = hip_test_open("test_hip_vs_model", &status);
    if (!dev)
        return status;
    const mf_device_info *info = mf_device_get_info(dev);
    printf("device %s (%s), %s, seed %" PRIu64 ", %zu tiles per instruction\n", info->name, info->arch,
           mf_arch_name(info->model_arch), seed, ntiles);
    int rows = 0, fails = 0;
    for (size_t r = 0; r < mf_instr_count; r++) {
        const mf_instr *in = &mf_instr_table[r];
        if (in->arch != info->model_arch)
            continue;
        rows++;
        int m, n, k;
        mf_device_tile_shape(dev, in, NULL, &m, &n, &k);
        size_t ta = (size_t)m * k, tb = (size_t)n * k, tc = (size_t)m * n;
        size_t ea = mf_abi_elem_bytes(in->fa), eb = mf_abi_elem_bytes(in->fb), ed = mf_abi_elem_bytes(in->fd);
        unsigned char *A = malloc(ntiles * ta * ea), *B = malloc(ntiles * tb * eb), *C = malloc(ntiles * tc * ed),
                      *D = malloc(ntiles * tc * ed);
        uint64_t s = seed ^ (r * 0x100000001B3ull);
        for (size_t x = 0; x < ntiles * ta; x++)
            mf_abi_set(in->fa, A, x, element(in->fa, &s));
        for (size_t x = 0; x < ntiles * tb; x++)
            mf_abi_set(in->fb, B, x, element(in->fb, &s));
        for (size_t x = 0; x < ntiles * tc; x++)
            mf_abi_set(in->fc, C, x, element(in->fc, &s));
        char err[512];
        size_t bad = 0, shown = 0;
        if (mf_device_run_tiles(dev, in, NULL, ntiles, A, B, C, NULL, NULL, D, err, sizeof err)) {
            printf("FAIL %s: %s\n", in->name, err);
            bad = 1;
        } else {
            mf_case cs;
            for (size_t t = 0; t < ntiles; t++)
                for (int i = 0; i < m; i++)
                    for (int j = 0; j < n; j++) {
                        mf_tile_get_case(in, m, n, k, A, B, C, NULL, NULL, t, i, j, &cs);
                        uint64_t want = mf_eval(in, &cs), got = mf_abi_get(in->fd, D, t * tc + (size_t)i * n + j);
                        if (!mf_output_equal(in, got, want)) {
                            if (shown++ < 3)
                                printf("FAIL %s: seed %" PRIu64 " tile %zu D[%d][%d] = 0x%llx, model 0x%llx "
                                       "(replay: mmafuzz eval %s c=%llx ...)\n",
                                       in->name, seed, t, i, j, (unsigned long long)got, (unsigned long long)want,
                                       in->name, (unsigned long long)cs.c);
                            bad++;
                        }
                    }
            if (!bad)
                printf("ok   %s: %zu outputs agree\n", in->name, ntiles * tc);
            else
                printf("FAIL %s: %zu of %zu outputs differ from the model\n", in->name, bad, ntiles * tc);
        }
        fails += bad != 0;
        free(A);
        free(B);
        free(C);
        free(D);
    }
    printf("%d of %d %s wrappers agree with the model\n", rows - fails, rows, mf_arch_name(info->model_arch));
    mf_device_close(dev);
    return fails || !rows ? 1 : 0;
}
