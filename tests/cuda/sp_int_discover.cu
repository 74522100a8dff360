/*
 * sp_int_discover.cu - read the fragment layouts of the integer (and fp8)
 * sparse mma shapes off the hardware, without the project's layout code.
 *
 * Every warp issues one raw PTX mma.sp with registers the host set directly
 * (A, B, metadata per lane; C = 0) and returns its four D registers.  Two
 * kinds of probe per instruction and selector:
 *
 *  A probes: one packed A element (lane, register, element) = 1, the rest 0;
 *    every metadata nibble of every lane the same baseline (0x4: indices
 *    {0,1}, for 4-bit pairs {0,1}; 0xE: {2,3}).  B column n holds, in every
 *    B slot (lane with groupID n, register, element), digit (n & 3) of the
 *    slot's index in base 4, plus 1.  The one D row that is non-zero names the
 *    A element's row; its columns 0..3 spell the B slot it met.
 *  M probes: all packed A elements = 1; metadata baseline 0x4 everywhere but
 *    one (lane, nibble) set to 0xE.  B[k][n] = 1 where group(k) == n + 8*half
 *    and k's position in its group is in the upper half (8-bit: 2,3; 4-bit:
 *    4..7), else 0 (k from the dense B layout, below).  Baseline D = 0; the
 *    one non-zero D element names the (row, group) the nibble controls.
 *
 * Output, one line per probe with a non-zero D:
 *   A <inst> <base> <lane> <reg> <el> : (row col value)...
 *   M <inst> <half> <lane> <nib> : (row col value)...
 * Build: nvcc -arch=sm_90a -o sp_int_discover sp_int_discover.cu
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x)                                                                                                      \
    do {                                                                                                           \
        cudaError_t e_ = (x);                                                                                      \
        if (e_ != cudaSuccess) {                                                                                   \
            fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));                           \
            exit(1);                                                                                               \
        }                                                                                                          \
    } while (0)

/* Register operand lists. */
#define RA2 "{%4,%5}"
#define RA4 "{%4,%5,%6,%7}"
#define RB2_2 "{%6,%7}"
#define RB4_4 "{%8,%9,%10,%11}"
#define RC_2 "{%8,%9,%10,%11}"
#define RC_4 "{%12,%13,%14,%15}"

/* One kernel per instruction: warp w reads A[w][lane][RA], B[w][lane][RB], E[w][lane], writes D[w][lane][4]. */
#define KERNEL2(NAME, PTX, SEL)                                                                                    \
    __global__ void NAME(const unsigned *A, const unsigned *B, const unsigned *E, unsigned *D)                    \
    {                                                                                                              \
        int w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, l = threadIdx.x & 31;                                \
        const unsigned *a = A + (w * 32 + l) * 2, *b = B + (w * 32 + l) * 2;                                       \
        unsigned d0, d1, d2, d3, z = 0;                                                                            \
        asm volatile(PTX " {%0,%1,%2,%3}, " RA2 ", " RB2_2 ", " RC_2 ", %12, " #SEL ";"                         \
                     : "=r"(d0), "=r"(d1), "=r"(d2), "=r"(d3)                                                      \
                     : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(z), "r"(z), "r"(z), "r"(z),              \
                       "r"(E[w * 32 + l]));                                                                        \
        unsigned *d = D + (w * 32 + l) * 4;                                                                        \
        d[0] = d0; d[1] = d1; d[2] = d2; d[3] = d3;                                                                \
    }
#define KERNEL4(NAME, PTX, SEL)                                                                                    \
    __global__ void NAME(const unsigned *A, const unsigned *B, const unsigned *E, unsigned *D)                    \
    {                                                                                                              \
        int w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, l = threadIdx.x & 31;                                \
        const unsigned *a = A + (w * 32 + l) * 4, *b = B + (w * 32 + l) * 4;                                       \
        unsigned d0, d1, d2, d3, z = 0;                                                                            \
        asm volatile(PTX " {%0,%1,%2,%3}, " RA4 ", " RB4_4 ", " RC_4 ", %16, " #SEL ";"                         \
                     : "=r"(d0), "=r"(d1), "=r"(d2), "=r"(d3)                                                      \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]),  \
                       "r"(z), "r"(z), "r"(z), "r"(z), "r"(E[w * 32 + l]));                                        \
        unsigned *d = D + (w * 32 + l) * 4;                                                                        \
        d[0] = d0; d[1] = d1; d[2] = d2; d[3] = d3;                                                                \
    }
#define KERNEL4F(NAME, PTX, SEL)                                                                                   \
    __global__ void NAME(const unsigned *A, const unsigned *B, const unsigned *E, unsigned *D)                    \
    {                                                                                                              \
        int w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, l = threadIdx.x & 31;                                \
        const unsigned *a = A + (w * 32 + l) * 4, *b = B + (w * 32 + l) * 4;                                       \
        float d0, d1, d2, d3, z = 0.f;                                                                             \
        asm volatile(PTX " {%0,%1,%2,%3}, " RA4 ", " RB4_4 ", " RC_4 ", %16, " #SEL ";"                         \
                     : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)                                                      \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]),  \
                       "f"(z), "f"(z), "f"(z), "f"(z), "r"(E[w * 32 + l]));                                        \
        unsigned *d = D + (w * 32 + l) * 4;                                                                        \
        /* integer-valued results: store them as integers */                                                      \
        d[0] = (unsigned)(int)d0; d[1] = (unsigned)(int)d1; d[2] = (unsigned)(int)d2; d[3] = (unsigned)(int)d3;    \
    }

#define SP "mma.sp.sync.aligned."
#define OM "mma.sp::ordered_metadata.sync.aligned."
KERNEL2(k_s8k32_s0, SP "m16n8k32.row.col.s32.s8.s8.s32", 0)
KERNEL2(k_s8k32_s1, SP "m16n8k32.row.col.s32.s8.s8.s32", 1)
KERNEL2(k_s8k32_o0, OM "m16n8k32.row.col.s32.s8.s8.s32", 0)
KERNEL2(k_s8k32_o1, OM "m16n8k32.row.col.s32.s8.s8.s32", 1)
KERNEL4(k_s8k64_s0, SP "m16n8k64.row.col.s32.s8.s8.s32", 0)
KERNEL4(k_s8k64_o0, OM "m16n8k64.row.col.s32.s8.s8.s32", 0)
KERNEL2(k_s4k64_s0, SP "m16n8k64.row.col.s32.s4.s4.s32", 0)
KERNEL2(k_s4k64_s1, SP "m16n8k64.row.col.s32.s4.s4.s32", 1)
KERNEL2(k_s4k64_o0, OM "m16n8k64.row.col.s32.s4.s4.s32", 0)
KERNEL4(k_s4k128_s0, SP "m16n8k128.row.col.s32.s4.s4.s32", 0)
KERNEL4(k_s4k128_o0, OM "m16n8k128.row.col.s32.s4.s4.s32", 0)
KERNEL4F(k_e4m3k64_s0, SP "m16n8k64.row.col.f32.e4m3.e4m3.f32", 0)
KERNEL4F(k_e4m3k64_o0, OM "m16n8k64.row.col.f32.e4m3.e4m3.f32", 0)
KERNEL4F(k_e5m2k64_s0, SP "m16n8k64.row.col.f32.e5m2.e5m2.f32", 0)

typedef void (*kfn)(const unsigned *, const unsigned *, const unsigned *, unsigned *);

struct inst {
    const char *name;
    kfn fn;
    int ra, rb;  /* registers of A and B per thread */
    int vb;      /* bits per element: 8 or 4 */
    int fp8;     /* 0, 1 e4m3, 2 e5m2 */
    int k;       /* logical K */
};

static const inst insts[] = {
    {"s8k32.sp.sel0", k_s8k32_s0, 2, 2, 8, 0, 32},     {"s8k32.sp.sel1", k_s8k32_s1, 2, 2, 8, 0, 32},
    {"s8k32.om.sel0", k_s8k32_o0, 2, 2, 8, 0, 32},     {"s8k32.om.sel1", k_s8k32_o1, 2, 2, 8, 0, 32},
    {"s8k64.sp.sel0", k_s8k64_s0, 4, 4, 8, 0, 64},     {"s8k64.om.sel0", k_s8k64_o0, 4, 4, 8, 0, 64},
    {"s4k64.sp.sel0", k_s4k64_s0, 2, 2, 4, 0, 64},     {"s4k64.sp.sel1", k_s4k64_s1, 2, 2, 4, 0, 64},
    {"s4k64.om.sel0", k_s4k64_o0, 2, 2, 4, 0, 64},     {"s4k128.sp.sel0", k_s4k128_s0, 4, 4, 4, 0, 128},
    {"s4k128.om.sel0", k_s4k128_o0, 4, 4, 4, 0, 128},  {"e4m3k64.sp.sel0", k_e4m3k64_s0, 4, 4, 8, 1, 64},
    {"e4m3k64.om.sel0", k_e4m3k64_o0, 4, 4, 8, 1, 64}, {"e5m2k64.sp.sel0", k_e5m2k64_s0, 4, 4, 8, 2, 64},
};

/* A small non-negative integer (0..64) in the element encoding of the instruction. */
static unsigned enc(const inst &I, int v)
{
    if (!I.fp8 || v == 0)
        return (unsigned)v & (I.vb == 8 ? 0xFFu : 0xFu);
    static const unsigned e4[] = {0, 0x38, 0x40, 0x44, 0x48}, e5[] = {0, 0x3C, 0x40, 0x42, 0x44};
    if (v > 4) {
        fprintf(stderr, "enc %d\n", v);
        exit(1);
    }
    return I.fp8 == 1 ? e4[v] : e5[v];
}

/* The dense B layout the PTX gives (assumed, used for the M probes only):
 * 8-bit: k = tig*4 + (e&3) + 16*((e>>2)&1) + 32*((e>>3)&1), e = reg*4 + byte;
 * 4-bit: k = tig*8 + (e&7) + 32*((e>>3)&1) + 64*((e>>4)&1), e = reg*8 + nibble. */
static int b_k(const inst &I, int lane, int e)
{
    int t = lane & 3;
    if (I.vb == 8)
        return t * 4 + (e & 3) + 16 * ((e >> 2) & 1) + 32 * ((e >> 3) & 1);
    return t * 8 + (e & 7) + 32 * ((e >> 3) & 1) + 64 * ((e >> 4) & 1);
}

static void put(std::vector<unsigned> &R, int w, int lane, int nr, int e, int vb, unsigned v)
{
    int per = 32 / vb;
    R[(w * 32 + lane) * nr + e / per] |= v << (vb * (e % per));
}

static void run_inst(const inst &I, FILE *out)
{
    int per = 32 / I.vb, na = I.ra * per, nb = I.rb * per, sg = I.vb == 8 ? 4 : 8, ngroups = I.k / sg;
    /* probes: A for bases 0x4, 0xE: 2 * 32 * na; M: halves * 32 * 8 */
    int halves = (ngroups + 7) / 8;
    int nA = 2 * 32 * na, nM = halves * 32 * 8 + halves;  /* + one baseline per half */
    int nw = nA + nM;
    std::vector<unsigned> A((size_t)nw * 32 * I.ra), B((size_t)nw * 32 * I.rb), E((size_t)nw * 32), D((size_t)nw * 32 * 4);
    int w = 0;
    for (int base = 0; base < 2; base++)
        for (int lane = 0; lane < 32; lane++)
            for (int e = 0; e < na; e++, w++) {
                put(A, w, lane, I.ra, e, I.vb, enc(I, 1));
                for (int l = 0; l < 32; l++) {
                    E[w * 32 + l] = base ? 0xEEEEEEEEu : 0x44444444u;
                    for (int f = 0; f < nb; f++) {
                        int slot = (l & 3) * nb + f, n = l >> 2;
                        put(B, w, l, I.rb, f, I.vb, enc(I, ((slot >> (2 * (n & 3))) & 3) + 1));
                    }
                }
            }
    for (int h = 0; h < halves; h++)
        for (int lane = -1; lane < 32; lane++)
            for (int nib = 0; nib < 8; nib++) {
                if (lane < 0 && nib)
                    break;
                for (int l = 0; l < 32; l++) {
                    E[w * 32 + l] = 0x44444444u;
                    if (l == lane)
                        E[w * 32 + l] = (E[w * 32 + l] & ~(0xFu << (4 * nib))) | (0xEu << (4 * nib));
                    for (int e = 0; e < na; e++)
                        put(A, w, l, I.ra, e, I.vb, enc(I, 1));
                    for (int f = 0; f < nb; f++) {
                        int k = b_k(I, l, f), n = l >> 2, g = k / sg, pos = k % sg;
                        if (g == n + 8 * h && pos >= sg / 2)
                            put(B, w, l, I.rb, f, I.vb, enc(I, 1));
                    }
                }
                w++;
            }
    if (w != nw) {
        fprintf(stderr, "count %d %d\n", w, nw);
        exit(1);
    }
    unsigned *dA, *dB, *dE, *dD;
    CK(cudaMalloc(&dA, A.size() * 4));
    CK(cudaMalloc(&dB, B.size() * 4));
    CK(cudaMalloc(&dE, E.size() * 4));
    CK(cudaMalloc(&dD, D.size() * 4));
    CK(cudaMemcpy(dA, A.data(), A.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dB, B.data(), B.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dE, E.data(), E.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(dD, 0xFF, D.size() * 4));
    I.fn<<<nw, 32>>>(dA, dB, dE, dD);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(D.data(), dD, D.size() * 4, cudaMemcpyDeviceToHost));
    cudaFree(dA); cudaFree(dB); cudaFree(dE); cudaFree(dD);
    /* report */
    w = 0;
    auto report = [&](const char *head) {
        int any = 0;
        char buf[4096];
        int len = snprintf(buf, sizeof buf, "%s :", head);
        for (int l = 0; l < 32; l++)
            for (int r = 0; r < 4; r++) {
                int v = (int)D[(w * 32 + l) * 4 + r];
                if (!v)
                    continue;
                int row = (l >> 2) + 8 * ((r >> 1) & 1), col = 2 * (l & 3) + (r & 1);
                if (len < (int)sizeof buf - 40)
                    len += snprintf(buf + len, sizeof buf - len, " (%d %d %d)", row, col, v);
                any = 1;
            }
        if (any || head[0] == 'B')
            fprintf(out, "%s\n", buf);
    };
    char head[128];
    for (int base = 0; base < 2; base++)
        for (int lane = 0; lane < 32; lane++)
            for (int e = 0; e < na; e++, w++) {
                snprintf(head, sizeof head, "A %s %s %d %d %d", I.name, base ? "E" : "4", lane, e / per, e % per);
                report(head);
            }
    for (int h = 0; h < halves; h++)
        for (int lane = -1; lane < 32; lane++)
            for (int nib = 0; nib < 8; nib++) {
                if (lane < 0 && nib)
                    break;
                if (lane < 0)
                    snprintf(head, sizeof head, "B %s %d", I.name, h);
                else
                    snprintf(head, sizeof head, "M %s %d %d %d", I.name, h, lane, nib);
                report(head);
                w++;
            }
}

int main(int argc, char **argv)
{
    FILE *out = argc > 1 ? fopen(argv[1], "w") : stdout;
    if (!out)
        return 1;
    for (const inst &I : insts)
        run_inst(I, out);
    fclose(out);
    printf("done\n");
    return 0;
}
