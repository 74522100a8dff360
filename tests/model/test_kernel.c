/*
 * test_kernel.c - the kernel model (mmafuzz_kernel.h) on the CPU.  Expected
 * values come from: hand arithmetic on the slice rules (64 iterations in 3
 * slices: ceil 22/22/20, balanced 22/21/21); the instruction model called
 * step by step and IEEE binary32 additions of exactly representable values
 * (split-K, promotion); binary16/bfloat16 bit patterns worked out by hand
 * (the epilogue's rounding); and the parser's documented errors.  Whole calls
 * recorded on a GPU are checked in python/tests/test_kernels.py.
 */
#include "mmafuzz_kernel.h"
#include "test_check.h"

#include <string.h>

/* f16 bits of small integers and of 1 + 2^-k, by hand (bias 15, 10 fraction bits) */
#define F16_ONE 0x3C00u
#define F16_TWO 0x4000u

#include <stdio.h>

static mf_kernel model(const char *text)
{
    mf_kernel kr;
    char err[256];
    int rc = mf_kernel_parse(text, &kr, err, sizeof err);
    CHECK(rc == 0, "parse of '%s' failed: %s", text, err);
    return kr;
}

static void slices(void)
{
    mf_kernel kr = model("instr hopper/wgmma.m64n8k16.f32.f16.f16\nbk 64\nsplit 3\n");
    const uint32_t ceil_want[3][2] = {{0, 22}, {22, 44}, {44, 64}};
    for (uint32_t s = 0; s < 3; s++) {
        uint32_t f, e;
        mf_kernel_slice(&kr, 64, s, &f, &e);
        CHECK(f == ceil_want[s][0] && e == ceil_want[s][1], "ceil slice %u: [%u, %u)", s, f, e);
    }
    kr.split_rule = MF_KSPLIT_BALANCED;
    const uint32_t bal_want[3][2] = {{0, 22}, {22, 43}, {43, 64}};
    for (uint32_t s = 0; s < 3; s++) {
        uint32_t f, e;
        mf_kernel_slice(&kr, 64, s, &f, &e);
        CHECK(f == bal_want[s][0] && e == bal_want[s][1], "balanced slice %u: [%u, %u)", s, f, e);
    }
    /* more slices than iterations: the last ones are empty */
    kr.split = 5;
    kr.split_rule = MF_KSPLIT_CEIL;
    uint32_t f, e;
    mf_kernel_slice(&kr, 3, 4, &f, &e);
    CHECK(f == e, "slice 4 of 3 iterations is empty: [%u, %u)", f, e);
}

/* All-ones rows: every partial is an integer far below 2^24, so every model
 * gives K exactly; the output's bits are K in f16. */
static void exact_sums(void)
{
    static uint16_t a[4096], b[4096];
    for (int i = 0; i < 4096; i++)
        a[i] = b[i] = F16_ONE;
    const char *texts[] = {
        "instr hopper/wgmma.m64n8k16.f32.f16.f16\nbk 64\nsplit 1\nout f16\n",
        "instr hopper/wgmma.m64n8k16.f32.f16.f16\nbk 64\nsplit 3\nout f16\n",
        "instr hopper/wgmma.m64n8k16.f32.f16.f16\nbk 128\nsplit 7\nsplit_rule balanced\nreduce tree\nout f16\n",
    };
    for (size_t t = 0; t < sizeof texts / sizeof *texts; t++) {
        mf_kernel kr = model(texts[t]);
        CHECK(mf_kernel_dot(&kr, 4096, a, b) == 0x6C00u, "model %zu: 4096 ones -> 0x%llx, want 0x6C00 (4096 in f16)",
              t, (unsigned long long)mf_kernel_dot(&kr, 4096, a, b));
        CHECK(mf_kernel_dot(&kr, 1000, a, b) == 0x63D0u, "model %zu: 1000 ones (K padded) -> want 0x63D0", t);
    }
}

/* Where the structure shows in the bits (hopper f16 rows: T-FDPA with F = 25
 * and RZ-FP32, DOMAIN.md section 3; binary32 additions RNE).  Products by
 * hand: 4096 * 4096 = 2^24 (f16 0x6C00 twice), 1 * 1 = 1, 1 * 2 = 2.
 *  - K 32, bk 16: [2^24] then [1, 2].  One slice: the second step sums
 *    2^24 + 3 exactly and truncates to binary32: 2^24 + 2 (0x4B800001).  Two
 *    slices: 2^24 and 3 added in binary32, a tie, to even: 2^24 + 4
 *    (0x4B800002).
 *  - K 64, bk 16: [2^24], [1], [1], [1] in four slices.  Serial: each
 *    2^24 + 1 ties to even 2^24 (0x4B800000).  Tree: (2^24 + 1) + (1 + 1) =
 *    2^24 + 2 (0x4B800001).  One slice: each step's 2^24 + 1 truncates to
 *    2^24 (0x4B800000). */
static void structure_shows(void)
{
    static uint16_t a[64], b[64];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    a[0] = b[0] = 0x6C00;
    a[16] = b[16] = F16_ONE;
    a[17] = F16_ONE;
    b[17] = F16_TWO;
    const char *row = "instr hopper/wgmma.m64n8k16.f32.f16.f16\nbk 16\nout f32\n";
    char t[256];
    snprintf(t, sizeof t, "%ssplit 1\n", row);
    mf_kernel one = model(t);
    snprintf(t, sizeof t, "%ssplit 2\n", row);
    mf_kernel two = model(t);
    CHECK(mf_kernel_dot(&one, 32, a, b) == 0x4B800001u, "one slice: want 2^24 + 2");
    CHECK(mf_kernel_dot(&two, 32, a, b) == 0x4B800002u, "two slices: want 2^24 + 4");

    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    a[0] = b[0] = 0x6C00;
    a[16] = b[16] = a[32] = b[32] = a[48] = b[48] = F16_ONE;
    snprintf(t, sizeof t, "%ssplit 4\nreduce serial\n", row);
    mf_kernel serial = model(t);
    snprintf(t, sizeof t, "%ssplit 4\nreduce tree\n", row);
    mf_kernel tree = model(t);
    CHECK(mf_kernel_dot(&one, 64, a, b) == 0x4B800000u, "one slice of four ones: want 2^24");
    CHECK(mf_kernel_dot(&serial, 64, a, b) == 0x4B800000u, "serial: want 2^24");
    CHECK(mf_kernel_dot(&tree, 64, a, b) == 0x4B800001u, "tree: want 2^24 + 2");
}

static void promotion(void)
{
    static uint16_t a[128], b[128];
    for (int i = 0; i < 128; i++)
        a[i] = b[i] = 0;
    /* every promotion adds a binary32 partial into the main accumulator:
     * with all-zero operands the result is +0 whatever the interval */
    mf_kernel p = model("instr hopper/wgmma.m64n8k16.f32.f16.f16\nbk 16\npromote 2\nout f32\n");
    CHECK(mf_kernel_dot(&p, 128, a, b) == 0, "zeros -> +0");
}

/* The batched host path (mf_kernel_eval_rows, through mf_eval_cases' lanes)
 * against the one-output path (mf_kernel_dot, through mf_eval), on random
 * finite operands: two implementations of the instruction, one answer. */
static void batched_equals_single(void)
{
    const char *texts[] = {
        "instr hopper/wgmma.m64n8k16.f32.f16.f16\nbk 64\nsplit 5\nreduce tree\nout f16\n",
        "instr hopper/wgmma.m64n8k16.f32.bf16.bf16\nbk 64\nsplit 3\nsplit_rule balanced\nout bf16\n",
        "instr hopper/wgmma.m64n8k32.f32.e4m3.e4m3\nbk 128\npromote 4\nout f32\n",
        "instr hopper/wgmma.m64n8k8.f32.tf32.tf32\nbk 32\nsplit 2\nout f32\n",
    };
    enum { N = 100, K = 1000 };
    static uint32_t A[N][K], B[N][K];
    uint64_t st = 7;
    for (size_t t = 0; t < sizeof texts / sizeof *texts; t++) {
        mf_kernel kr = model(texts[t]);
        const size_t ea = mf_tile_elem_bytes(kr.in->fa);
        static uint8_t a8[N][K * 4], b8[N][K * 4];
        const void *ra[N], *rb[N];
        for (int o = 0; o < N; o++) {
            for (int k = 0; k < K; k++) {
                /* finite values of moderate exponent: sign, exponent near the bias, random fraction */
                uint64_t r = test_random(&st);
                uint64_t x = kr.in->fa == MF_FMT_F16 ? ((r & 0x83FF) | (0x3400 + ((r >> 16) % 6) * 0x400))
                           : kr.in->fa == MF_FMT_BF16 ? ((r & 0x807F) | (0x3C80 + ((r >> 16) % 6) * 0x80))
                           : kr.in->fa == MF_FMT_E4M3 ? ((r & 0x87) | (0x20 + ((r >> 16) % 6) * 0x8))
                                                       : ((r & 0x807FE000) | (0x3E000000 + ((r >> 32) % 6) * 0x800000));
                A[o][k] = (uint32_t)x;
                r = test_random(&st);
                B[o][k] = kr.in->fa == MF_FMT_F16 ? (uint32_t)((r & 0x83FF) | (0x3400 + ((r >> 16) % 6) * 0x400))
                        : kr.in->fa == MF_FMT_BF16 ? (uint32_t)((r & 0x807F) | (0x3C80 + ((r >> 16) % 6) * 0x80))
                        : kr.in->fa == MF_FMT_E4M3 ? (uint32_t)((r & 0x87) | (0x20 + ((r >> 16) % 6) * 0x8))
                                                    : (uint32_t)((r & 0x807FE000) | (0x3E000000 + ((r >> 32) % 6) * 0x800000));
                mf_elem_set(ea, a8[o], (size_t)k, A[o][k]);
                mf_elem_set(ea, b8[o], (size_t)k, B[o][k]);
            }
            ra[o] = a8[o];
            rb[o] = b8[o];
        }
        uint32_t D[N];
        mf_kernel_eval_rows(&kr, K, N, ra, rb, D);
        const size_t ed = mf_tile_elem_bytes(kr.out);
        for (int o = 0; o < N; o++) {
            uint64_t want = mf_kernel_dot(&kr, K, a8[o], b8[o]);
            uint64_t got = mf_elem_get(ed, D, (size_t)o);
            CHECK(got == want, "model %zu output %d: batched 0x%llx, single 0x%llx", t, o, (unsigned long long)got,
                  (unsigned long long)want);
        }
    }
}

static void parse_errors(void)
{
    mf_kernel kr;
    char err[256];
    struct {
        const char *text, *want;
    } bad[] = {
        {"instr nosuch/row\n", "line 1: no instruction 'nosuch/row'"},
        {"instr hopper/wgmma.m64n8k16.f32.f16.f16\nbk 24\n", "bk must be a positive multiple"},
        {"instr hopper/wgmma.m64n8k16.f32.f16.f16\nsplit 0\n", "split must be 1 to 256"},
        {"instr hopper/wgmma.m64n8k16.f32.f16.f16\nsplit 2x\n", "line 2: bad value '2x' for split"},
        {"instr hopper/wgmma.m64n8k16.f32.f16.f16\nsplit 99999999999\n", "line 2: bad value"},
        {"instr hopper/wgmma.m64n8k16.f32.f16.f16\nreduce atomic\n", "line 2: bad value 'atomic' for reduce"},
        {"instr hopper/wgmma.m64n8k16.f32.f16.f16\nwhat 3\n", "line 2: unknown key 'what'"},
        {"instr hopper/wgmma.m64n8k16.f32.f16.f16\nsplit 2 3\n", "line 2: expected 'key value'"},
        {"instr hopper/wgmma.m64n8k16.f16.f16.f16\n", "C and D must be f32"},
        {"bk 64\n", "no instruction"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = mf_kernel_parse(bad[i].text, &kr, err, sizeof err);
        CHECK(rc == -1 && strstr(err, bad[i].want), "'%s': rc %d, err '%s', want '%s'", bad[i].text, rc, err,
              bad[i].want);
    }
    /* round trip: the canonical text parses to the same model */
    mf_kernel a = model("# a comment\ninstr hopper/wgmma.m64n8k32.f32.e4m3.e4m3 # row\nbk 128\nsplit 3\n"
                        "split_rule balanced\nreduce tree\npromote 4\nout bf16\n");
    char buf[512];
    mf_kernel_format(&a, buf, sizeof buf);
    mf_kernel b = model(buf);
    CHECK(!memcmp(&a, &b, sizeof a), "round trip of\n%s", buf);
}

int main(void)
{
    slices();
    exact_sums();
    structure_shows();
    promotion();
    batched_equals_single();
    parse_errors();
    if (failures)
        fprintf(stderr, "%d failures\n", failures);
    else
        printf("kernel model: all checks passed\n");
    return failures != 0;
}
