/*
 * kernel_check.cuh - whole GEMM calls checked on the GPU against the kernel
 * model, and their operands made on the GPU (devices/mf_kcheck.h).
 *
 * Included at the end of verify.cu: the model is compiled as device code once
 * per library (model_device.cuh defines kernels and __device__ tables that a
 * second translation unit would define again), and this check uses what
 * verify.cu's fixed-shape check uses (vbytes, vload_row, the fp8 product
 * table).
 *
 * One thread an output.  It walks the kernel model as mf_kernel_dot does,
 * through the model's own pieces (mf_kernel_slice_k, mf_kernel_step_done,
 * mf_kernel_part, mf_kernel_finish), and evaluates each instruction step
 * with
 *   - the model's fixed-shape T-FDPA entry (mf_t_fdpa_fixed: formats and
 *     lengths as constants, operands in registers) for the main-loop rows of
 *     kfixed_for's list, on a GPU of compute capability 9.0 (as verify.cu's
 *     fixed-shape check: ptxas time), or
 *   - mf_eval on an mf_case (mf_kernel_dot itself) for every other row.
 * B is read as N x K rows; a row-major B (K x N) is transposed into scratch
 * memory first.
 */

namespace {

struct KParams {
    mfd::mf_instr in;         /* the kernel model's row (device copy by value) */
    mfd::mf_kernel kr;        /* kr.in is set on the device to &in */
    unsigned long long m, n, k, calls;
    const unsigned char *A, *B, *D;
    const unsigned short *tab;   /* the fp8 product table, else NULL */
    unsigned long long *count;   /* [0] outputs that differ */
    mf_kcheck_miss *miss;        /* the first MF_KCHECK_MISSES of them */
};

__device__ __forceinline__ void kreport(const KParams &p, unsigned long long idx, uint64_t got, uint64_t want)
{
    const bool nan_both = mfd::mf_is_nan(p.kr.out, got) && mfd::mf_is_nan(p.kr.out, want);
    if (got == want || nan_both)
        return;
    const unsigned long long slot = atomicAdd(p.count, 1ull);
    if (slot < MF_KCHECK_MISSES) {
        const unsigned long long mn = p.m * p.n, c = idx / mn, o = idx - c * mn;
        mf_kcheck_miss h;
        h.call = (uint32_t)c;
        h.i = (uint32_t)(o / p.n);
        h.j = (uint32_t)(o % p.n);
        h.got = got;
        h.want = want;
        p.miss[slot] = h;
    }
}

__device__ __forceinline__ uint64_t kload_d(const KParams &p, unsigned long long idx)
{
    return vld(p.D, idx, (int)mfd::mf_tile_elem_bytes(p.kr.out));
}

/* Every row: mf_kernel_dot (mf_eval on an mf_case each step). */
__global__ void __launch_bounds__(128) kgeneral_kernel(const __grid_constant__ KParams p)
{
    mfd::mf_kernel kr = p.kr;
    kr.in = &p.in;
    const unsigned long long total = p.calls * p.m * p.n;
    const size_t ea = mfd::mf_tile_elem_bytes(p.in.fa), eb = mfd::mf_tile_elem_bytes(p.in.fb);
    for (unsigned long long idx = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; idx < total;
         idx += (unsigned long long)gridDim.x * blockDim.x) {
        const unsigned long long mn = p.m * p.n, c = idx / mn, o = idx - c * mn, i = o / p.n, j = o % p.n;
        const unsigned char *a = p.A + ((c * p.m + i) * p.k) * ea, *b = p.B + ((c * p.n + j) * p.k) * eb;
        kreport(p, idx, kload_d(p, idx), mfd::mf_kernel_dot(&kr, (size_t)p.k, a, b));
    }
}

/* The fixed-shape rows: FA x FB, instruction K = IK in chunks of L. */
template <int FA, int FB, int IK, int L>
__global__ void __launch_bounds__(128) kfixed_kernel(const __grid_constant__ KParams p)
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ == 900
    constexpr int EA = vbytes(FA), EB = vbytes(FB);
    constexpr bool TAB = mfd_prod_packs(FA, FB);
    mfd::mf_kernel kr = p.kr;
    kr.in = &p.in;
    const uint32_t S = kr.split ? kr.split : 1;
    const unsigned long long total = p.calls * p.m * p.n;
    for (unsigned long long idx = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; idx < total;
         idx += (unsigned long long)gridDim.x * blockDim.x) {
        const unsigned long long mn = p.m * p.n, c = idx / mn, o = idx - c * mn, i = o / p.n, j = o % p.n;
        const unsigned char *arow = p.A + ((c * p.m + i) * p.k) * EA, *brow = p.B + ((c * p.n + j) * p.k) * EB;
        uint32_t part[256];
        for (uint32_t s = 0; s < S; s++) {
            size_t k0, k1;
            mfd::mf_kacc st = {0, 0, 0};
            for (mfd::mf_kernel_slice_k(&kr, (size_t)p.k, s, &k0, &k1); k0 < k1; k0 += IK) {
                uint64_t a[IK], b[IK];
                if (k0 + IK <= p.k && ((c * p.m + i) * p.k + k0) * EA % 16 == 0 && ((c * p.n + j) * p.k + k0) * EB % 16 == 0) {
                    vload_row<EA, IK>(arow + k0 * EA, a);
                    vload_row<EB, IK>(brow + k0 * EB, b);
                } else {
#pragma unroll
                    for (int q = 0; q < IK; q++) {
                        a[q] = k0 + q < p.k ? vld(arow, k0 + q, EA) : 0;
                        b[q] = k0 + q < p.k ? vld(brow, k0 + q, EB) : 0;
                    }
                }
                uint32_t w[IK];
                if (TAB) {
#pragma unroll
                    for (int q = 0; q < IK; q++)
                        w[q] = __ldg(p.tab + ((unsigned)a[q] | (unsigned)b[q] << 8));
                }
                st.acc = (uint32_t)mfd::mf_t_fdpa_fixed(&p.in, (mfd::mf_format)FA, (mfd::mf_format)FB,
                                                        mfd::MF_FMT_F32, mfd::MF_FMT_F32, a, b, TAB ? w : NULL,
                                                        st.acc, IK, L);
                mfd::mf_kernel_step_done(&kr, &st);
            }
            part[s] = mfd::mf_kernel_part(&kr, &st);
        }
        kreport(p, idx, kload_d(p, idx), mfd::mf_kernel_finish(&kr, part));
    }
#endif
}

/* The Hopper main-loop rows that GEMM libraries issue (wgmma, f32
 * accumulator): A, B, the instruction's K, the chunk length L. */
#define KFIXED_SHAPES(X)                                                                                          \
    X(F16, F16, 16, 16) X(BF16, BF16, 16, 16) X(TF32, TF32, 8, 8) X(E4M3, E4M3, 32, 32) X(E4M3, E5M2, 32, 32)     \
    X(E5M2, E4M3, 32, 32) X(E5M2, E5M2, 32, 32)

typedef void (*KFixedFn)(KParams);
struct KFixedShape {
    int fa, fb, k, l;
    KFixedFn fn;
};
#define KFIXED_ENTRY(A, B, K, L) {mfd::MF_FMT_##A, mfd::MF_FMT_##B, K, L, kfixed_kernel<mfd::MF_FMT_##A, mfd::MF_FMT_##B, K, L>},
const KFixedShape kfixed_shapes[] = {KFIXED_SHAPES(KFIXED_ENTRY)};

/* The fixed-shape kernel for row `in` on a GPU of compute capability cc, or
 * NULL: a T-FDPA row with a fast plan, no operand forms, f32 C and D. */
const KFixedShape *kfixed_for(const mf_instr *in, int cc)
{
    if (cc != 90 || in->family != MF_T_FDPA || in->sparse || in->fc != MF_FMT_F32 || in->fd != MF_FMT_F32 ||
        !mf_t_fdpa_plan(in))
        return NULL;
    for (const KFixedShape &s : kfixed_shapes)
        if (s.fa == (int)in->fa && s.fb == (int)in->fb && s.k == (int)in->k && s.l == (int)in->L)
            return &s;
    return NULL;
}

/* B (K x N row-major, `calls` of them) into N x K rows. */
__global__ void ktranspose_kernel(const unsigned char *B, unsigned char *T, unsigned long long k,
                                  unsigned long long n, unsigned long long calls, int es)
{
    const unsigned long long total = calls * k * n;
    for (unsigned long long x = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; x < total;
         x += (unsigned long long)gridDim.x * blockDim.x) {
        const unsigned long long kn = k * n, c = x / kn, r = x - c * kn, kk = r / n, j = r % n;
        const unsigned long long dst = c * kn + j * k + kk;
        switch (es) {
        case 1: T[dst] = B[x]; break;
        case 2: ((unsigned short *)T)[dst] = ((const unsigned short *)B)[x]; break;
        default: ((unsigned *)T)[dst] = ((const unsigned *)B)[x]; break;
        }
    }
}

__device__ __forceinline__ uint64_t ksplitmix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* A value of format (ebits, fbits, bias) with unbiased exponent e (clamped
 * to the normal range), sign s and fraction bits r. */
__device__ __forceinline__ uint64_t kvalue(int ebits, int fbits, int bias, int has_inf, int s, int e, uint64_t r)
{
    const int emax = (1 << ebits) - 1 - (has_inf ? 1 : 0);
    int be = e + bias;
    be = be < 1 ? 1 : be > emax ? emax : be;
    uint64_t frac = r & ((1ull << fbits) - 1);
    if (!has_inf && be == emax)
        frac &= ~1ull;   /* e4m3: S.1111.111 is NaN */
    return (uint64_t)s << (ebits + fbits) | (uint64_t)be << fbits | frac;
}

__global__ void kgen_kernel(unsigned char *D, unsigned long long count, unsigned long long per, uint64_t seed,
                            int kind, int role, int fmt, long long kdim, long long kstride, long long rstride)
{
    const mfd::mf_format_info *fi = mfd::mf_format_get((mfd::mf_format)fmt);
    const int ebits = fi->exp_bits, fbits = fi->frac_bits, bias = fi->bias, inf = fi->has_inf;
    const int es = vbytes(fmt), bits = fi->bits;
    for (unsigned long long x = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; x < count;
         x += (unsigned long long)gridDim.x * blockDim.x) {
        const unsigned long long call = x / per, e = x - call * per;
        const long long kk = rstride ? (long long)(e % (unsigned long long)rstride)
                                     : (long long)((e / (unsigned long long)kstride) % (unsigned long long)kdim);
        unsigned long long src = x;
        int neg = 0;
        if (kind == MF_KGEN_CANCEL && kk >= kdim / 2 && kk - kdim / 2 < kdim / 2) {
            /* the mirror element in the first half of K: same value for A, negated for B */
            src = rstride ? x - (unsigned long long)(kdim / 2) : x - (unsigned long long)(kdim / 2 * kstride);
            neg = role;
        }
        const uint64_t h = ksplitmix(seed ^ ksplitmix(src * 2 + (unsigned long long)role));
        const int s = (int)(h >> 63);
        uint64_t v;
        switch (kind) {
        case MF_KGEN_WIDE: {
            const int emax = (1 << ebits) - 2 - bias + (inf ? 0 : 1);
            const int emin = 1 - bias - fbits;
            v = kvalue(ebits, fbits, bias, inf, s, emin + (int)((h >> 20) % (uint64_t)(emax - emin + 1)), h);
            if (emin + (int)((h >> 20) % (uint64_t)(emax - emin + 1)) < 1 - bias)
                v = (uint64_t)s << (ebits + fbits) | (h & ((1ull << fbits) - 1));   /* subnormal */
            break;
        }
        case MF_KGEN_SPECIAL:
            if (((h >> 40) & 63) == 0) {
                switch ((h >> 46) % 6) {
                case 0: v = (uint64_t)s << (ebits + fbits); break;                      /* +-0 */
                case 1: v = (uint64_t)s << (ebits + fbits) | 1; break;                  /* smallest subnormal */
                case 2: v = kvalue(ebits, fbits, bias, inf, s, 1 << ebits, ~0ull); break; /* the largest */
                case 3: v = kvalue(ebits, fbits, bias, inf, s, -bias, 0); break;      /* the smallest normal */
                case 4: v = inf ? (uint64_t)s << (ebits + fbits) | (((1ull << ebits) - 1) << fbits)
                                : (((1ull << (ebits + fbits)) - 1)); break;           /* Inf (or NaN) */
                default: v = (((1ull << ebits) - 1) << fbits) | (1ull << (fbits - 1)); break; /* NaN */
                }
                break;
            }
            v = kvalue(ebits, fbits, bias, inf, s, (int)((h >> 20) % 17) - 8, h);
            break;
        case MF_KGEN_SPIKES:
            v = ((h >> 40) & 127) == 0 ? kvalue(ebits, fbits, bias, inf, s, (bias > 100 ? 24 : bias - 2), h)
                                       : kvalue(ebits, fbits, bias, inf, s, (int)((h >> 20) % 5) - 4, h);
            break;
        default:   /* NORMAL, CANCEL */
            v = kvalue(ebits, fbits, bias, inf, s, (int)((h >> 20) % 17) - 8, h);
            break;
        }
        if (neg)
            v ^= 1ull << (ebits + fbits);
        if (fmt == mfd::MF_FMT_TF32)
            v = v << 13 | (h & 0x1FFF);   /* f32 storage: the 13 bits below TF32's fraction are noise */
        (void)bits;
        switch (es) {
        case 1: D[x] = (unsigned char)v; break;
        case 2: ((unsigned short *)D)[x] = (unsigned short)v; break;
        default: ((unsigned *)D)[x] = (unsigned)v; break;
        }
    }
}

int kerr(cudaError_t e, const char *what, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: %s", what, cudaGetErrorString(e));
    return -1;
}

} /* namespace */

extern "C" int mf_kgen_run(mf_format f, void *dptr, size_t count, size_t per, uint64_t seed, int kind, int role,
                           int64_t kdim, int64_t kstride, int64_t rstride, void *stream, char *err, size_t errlen)
{
    if (kind < 0 || kind >= MF_KGEN_COUNT || kdim <= 0 || (!rstride && kstride <= 0) || per == 0) {
        snprintf(err, errlen, "mf_kgen_run: bad arguments");
        return -1;
    }
    static int inited[64];
    int dev = 0;
    cudaGetDevice(&dev);
    if (dev >= 0 && dev < 64 && !inited[dev]) {   /* the device's format table (mfd tables) */
        cudaError_t e = mfd_device_init((cudaStream_t)stream);
        if (e != cudaSuccess)
            return kerr(e, "mf_kgen_run: device tables", err, errlen);
        inited[dev] = 1;
    }
    kgen_kernel<<<1024, 256, 0, (cudaStream_t)stream>>>((unsigned char *)dptr, count, per, seed, kind, role, (int)f,
                                                        kdim, kstride, rstride);
    cudaError_t e = cudaGetLastError();
    return e != cudaSuccess ? kerr(e, "mf_kgen_run", err, errlen) : 0;
}

extern "C" int mf_kcheck_run(const mf_kcheck_job *job, mf_kcheck_result *res, void *stream, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    const char *why = mf_kernel_check(job->kr);
    if (why) {
        snprintf(err, errlen, "kernel model: %s", why);
        return -1;
    }
    cudaStream_t st = (cudaStream_t)stream;
    const mf_instr *in = job->kr->in;
    int dev = 0, major = 0, minor = 0, sms = 1;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    KParams p;
    memset(&p, 0, sizeof p);
    memcpy(&p.in, in, sizeof p.in);
    memcpy(&p.kr, job->kr, sizeof p.kr);
    p.kr.in = NULL;
    p.m = (unsigned long long)job->m;
    p.n = (unsigned long long)job->n;
    p.k = (unsigned long long)job->k;
    p.calls = (unsigned long long)job->calls;
    p.A = (const unsigned char *)job->dA;
    p.D = (const unsigned char *)job->dD;
    const size_t eb = mf_tile_elem_bytes(in->fb), ea = mf_tile_elem_bytes(in->fa);
    unsigned char *scratch = NULL;   /* B as N x K rows, count and misses */
    const size_t bbytes = job->b_colmajor ? 0 : (size_t)(p.calls * p.k * p.n) * eb;
    const size_t extra = 64 + sizeof(mf_kcheck_miss) * MF_KCHECK_MISSES;
    cudaError_t e = cudaMallocAsync((void **)&scratch, bbytes + extra, st);
    if (e != cudaSuccess)
        return kerr(e, "mf_kcheck_run: scratch memory", err, errlen);
    p.count = (unsigned long long *)(scratch + bbytes);
    p.miss = (mf_kcheck_miss *)(scratch + bbytes + 64);
    cudaMemsetAsync(p.count, 0, 64, st);
    if (job->b_colmajor) {
        p.B = (const unsigned char *)job->dB;
    } else {
        ktranspose_kernel<<<1024, 256, 0, st>>>((const unsigned char *)job->dB, scratch, p.k, p.n, p.calls, (int)eb);
        p.B = scratch;
    }
    const KFixedShape *fx = kfixed_for(in, major * 10 + minor);
    unsigned short *tab = NULL;
    if (fx && mfd_prod_packs(in->fa, in->fb)) {
        e = cudaMallocAsync((void **)&tab, 65536 * 2, st);
        if (e == cudaSuccess)
            mfd_prod_table_kernel<<<64, 256, 0, st>>>((int)in->fa, (int)in->fb, 0, tab);
        else
            fx = NULL;
    }
    p.tab = tab;
    const unsigned long long total = p.calls * p.m * p.n;
    const unsigned long long blocks = (total + 127) / 128;
    const unsigned grid = (unsigned)(blocks < (unsigned long long)sms * 16 ? blocks : (unsigned long long)sms * 16);
    if (fx) {
        fx->fn<<<grid ? grid : 1, 128, 0, st>>>(p);
    } else {
        cudaDeviceSetLimit(cudaLimitStackSize, MFD_STACK_BYTES);
        kgeneral_kernel<<<grid ? grid : 1, 128, 0, st>>>(p);
    }
    e = cudaGetLastError();
    unsigned long long count = 0;
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(&count, p.count, sizeof count, cudaMemcpyDeviceToHost, st);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(res->miss, p.miss, sizeof res->miss, cudaMemcpyDeviceToHost, st);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(st);
    cudaFreeAsync(scratch, st);
    if (tab)
        cudaFreeAsync(tab, st);
    if (e != cudaSuccess)
        return kerr(e, "mf_kcheck_run", err, errlen);
    (void)ea;
    const uint64_t ik = in->k;
    res->outputs = total;
    res->differ = count;
    res->steps = total * ((p.k + ik - 1) / ik);
    res->fixed = fx != NULL;
    res->nmiss = (int)(count < MF_KCHECK_MISSES ? count : MF_KCHECK_MISSES);
    return 0;
}
