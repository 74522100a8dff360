/*
 * bench.c - mmafuzz_cuda_bench: dot products per second through the CUDA
 * device layer, transfers included (host arrays in, D back in host memory).
 *
 * usage: mmafuzz_cuda_bench [-device cuda:N] [-bytes MB] [-reps R] [INSTR[@VARIANT]]...
 * Default instructions: hopper/mma.m16n8k16.f32.f16.f16.f32 and
 * hopper/wgmma.m64n8k16.f32.f16.f16@n256.  For each, a batch of about MB
 * megabytes (default 2048) of random bit patterns is run R times (default 5)
 * from page-locked host memory and once from ordinary (pageable) memory; the
 * median wall time of mf_device_run_tiles gives dot products/s = tiles*M*N/t.
 */
#include "mf_device.h"
#include "mmafuzz_gen.h"

#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Random bit patterns from the project's one PRNG (gen/gen_rng.h). */
static void fill(void *p, size_t bytes, unsigned long long seed)
{
    unsigned char *q = p;
    gen_rng r = rng_derive(seed, 0, 0);
    for (size_t i = 0; i + 8 <= bytes; i += 8) {
        uint64_t x = rng_next(&r);
        memcpy(q + i, &x, 8);
    }
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int bench_one(mf_device *dev, const char *spec, long long mb, int reps)
{
    char name[256], err[512];
    snprintf(name, sizeof name, "%s", spec);
    char *at = strchr(name, '@');
    const char *variant = NULL;
    if (at) {
        *at = 0;
        variant = at + 1;
    }
    const mf_instr *in = mf_instr_find(name);
    if (!in) {
        fprintf(stderr, "mmafuzz_cuda_bench: unknown instruction '%s'\n", name);
        return 2;
    }
    if (!mf_device_supports(dev, in, variant)) {
        fprintf(stderr, "mmafuzz_cuda_bench: %s%s%s does not run on %s\n", name, variant ? "@" : "",
                variant ? variant : "", mf_device_get_info(dev)->name);
        return 1;
    }
    int m, n, k;
    mf_device_tile_shape(dev, in, variant, &m, &n, &k);
    size_t bytes[4] = {(size_t)m * k * mf_abi_elem_bytes(in->fa), (size_t)n * k * mf_abi_elem_bytes(in->fb),
                       (size_t)m * n * mf_abi_elem_bytes(in->fc), (size_t)m * n * mf_abi_elem_bytes(in->fd)};
    size_t tile = bytes[0] + bytes[1] + bytes[2] + bytes[3];
    size_t ntiles = (size_t)mb * 1024 * 1024 / tile;
    void *buf[4];
    for (int i = 0; i < 4; i++)
        if (cudaMallocHost(&buf[i], ntiles * bytes[i]) != cudaSuccess) {
            fprintf(stderr, "mmafuzz_cuda_bench: cudaMallocHost of %zu bytes failed\n", ntiles * bytes[i]);
            return 1;
        }
    for (int i = 0; i < 3; i++)
        fill(buf[i], ntiles * bytes[i], 0x1234567ull + (unsigned long long)i);
    double *t = calloc((size_t)reps + 1, sizeof *t);
    /* warm-up: allocations, module load */
    if (mf_device_run_tiles(dev, in, variant, ntiles, buf[0], buf[1], buf[2], NULL, NULL, buf[3], err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        if (mf_device_run_tiles(dev, in, variant, ntiles, buf[0], buf[1], buf[2], NULL, NULL, buf[3], err,
                                sizeof err)) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        t[r] = now() - t0;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_d);
    double med = t[reps / 2], dots = (double)ntiles * m * n;
    /* once more from pageable memory (staged through page-locked buffers) */
    void *pg[4];
    for (int i = 0; i < 4; i++) {
        pg[i] = malloc(ntiles * bytes[i]);
        if (!pg[i]) {
            fprintf(stderr, "out of memory\n");
            return 1;
        }
        if (i < 3)
            memcpy(pg[i], buf[i], ntiles * bytes[i]);
    }
    mf_device_run_tiles(dev, in, variant, ntiles, pg[0], pg[1], pg[2], NULL, NULL, pg[3], err, sizeof err);
    double t0 = now();
    int rc = mf_device_run_tiles(dev, in, variant, ntiles, pg[0], pg[1], pg[2], NULL, NULL, pg[3], err, sizeof err);
    double tp = now() - t0;
    int same = rc == 0 && !memcmp(pg[3], buf[3], ntiles * bytes[3]);
    printf("%-48s %-11s tiles=%-8zu m%dn%dk%d  %6.2f GB/s  %.3g dot/s pinned (median of %d)  %.3g dot/s pageable%s\n",
           in->name, variant ? variant : "-", ntiles, m, n, k, (double)(ntiles * tile) / med / 1e9, dots / med, reps,
           dots / tp, same ? "" : "  [pageable D differs!]");
    for (int i = 0; i < 4; i++) {
        cudaFreeHost(buf[i]);
        free(pg[i]);
    }
    free(t);
    return same ? 0 : 1;
}

int main(int argc, char **argv)
{
    const char *spec = "cuda";
    long long mb = 2048;
    int reps = 5, nnames = 0;
    const char *names[64];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-help")) {
            printf("usage: mmafuzz_cuda_bench [-device cuda:N] [-bytes MB] [-reps R] [INSTR[@VARIANT]]...\n");
            return 0;
        } else if (!strcmp(argv[i], "-device") && i + 1 < argc) {
            spec = argv[++i];
        } else if (!strcmp(argv[i], "-bytes") && i + 1 < argc) {
            mb = atoll(argv[++i]);
        } else if (!strcmp(argv[i], "-reps") && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (argv[i][0] != '-' && nnames < 64) {
            names[nnames++] = argv[i];
        } else {
            fprintf(stderr, "mmafuzz_cuda_bench: bad argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (mb < 1 || reps < 1) {
        fprintf(stderr, "mmafuzz_cuda_bench: -bytes and -reps must be positive\n");
        return 2;
    }
    if (!nnames) {
        names[nnames++] = "hopper/mma.m16n8k16.f32.f16.f16.f32";
        names[nnames++] = "hopper/wgmma.m64n8k16.f32.f16.f16@n256";
    }
    mf_device *dev;
    char err[512];
    if (mf_device_open(spec, &dev, err, sizeof err)) {
        fprintf(stderr, "mmafuzz_cuda_bench: %s\n", err);
        return 77;
    }
    const mf_device_info *di = mf_device_get_info(dev);
    printf("# %s (%s), %s, %s\n", di->name, di->arch, di->driver, di->runtime);
    int status = 0;
    for (int i = 0; i < nnames; i++) {
        int rc = bench_one(dev, names[i], mb, reps);
        if (rc > status)
            status = rc;
    }
    mf_device_close(dev);
    return status;
}
