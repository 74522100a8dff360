/*
 * model_device_check.cu - compiles the device-code model and generator
 * library (model_device.cuh) with kernels that call mfd::mf_eval,
 * mfd::mf_output_equal and mfd::gen_tile: the build fails if any function of
 * their paths is not device code.  Never run; the CTest cuda_model_device
 * checks that the object holds the kernels (cuobjdump, no GPU needed).  The
 * kernels that run are in model_bench.cu.
 */
#include "model_device.cuh"

/* One case per thread: d = mf_eval, and whether it equals expected. */
__global__ void mfd_check_eval(const mfd::mf_instr *in, const mfd::mf_case *cs, const uint64_t *expected, size_t n,
                               uint64_t *d, int *equal)
{
    const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    d[i] = mfd::mf_eval(in, &cs[i]);
    equal[i] = mfd::mf_output_equal(in, d[i], expected[i]);
}

/* One tile per thread: tile first + i into slot i. */
__global__ void mfd_check_gen(const mfd::gen_ctx *g, uint64_t first, size_t ntiles, int *kind)
{
    const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < ntiles)
        kind[i] = (int)mfd::gen_tile(g, first + i, i);
}
