/*
 * test_units.c - host tests of the fuzz driver's pieces.  Where each
 * expected value comes from is said next to it.
 */
#include "cli.h"
#include "instr_select.h"
#include "json.h"
#include "backend.h"  /* mf_device_format_uuid */
#include "mf_device.h"
#include "run_fs.h"
#include "run_mismatch.h"
#include "mmafuzz_gen.h"
#include "run_minimize.h"
#include "run_pool.h"
#include "run_store.h"
#include "vecfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_check.h"


static int has(const uint64_t *v, size_t n, uint64_t x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x)
            return 1;
    return 0;
}

/* IEEE 754 binary16 / OCP e4m3 bit patterns, from the formats' definitions
 * (shared/DOMAIN.md section 2). */
static void test_specials(void)
{
    uint64_t v[40];
    size_t n = rv_specials(MF_FMT_F16, v, 40);
    static const uint64_t f16[] = {0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x3C00, 0xBC00, 0x7BFF, 0xFBFF, 0x7C00,
                                   0xFC00, 0x7E00, 0x7C01, 0x7FFF};
    for (size_t i = 0; i < sizeof f16 / sizeof f16[0]; i++)
        CHECK(has(v, n, f16[i]), "f16 specials lack %04llx", (unsigned long long)f16[i]);
    n = rv_specials(MF_FMT_E4M3, v, 40);
    CHECK(has(v, n, 0x7E) && has(v, n, 0x7F) && has(v, n, 0xFF), "e4m3: max 0x7E (448), NaNs 0x7F and 0xFF");
    CHECK(rv_max_finite(MF_FMT_E4M3, 0) == 0x7E, "e4m3 largest finite is 0x7E (448)");
    CHECK(rv_max_finite(MF_FMT_E5M2FNUZ, 1) == 0xFF, "e5m2fnuz largest negative is 0xFF");
    n = rv_specials(MF_FMT_E4M3FNUZ, v, 40);
    CHECK(has(v, n, 0x80) && !has(v, n, 0x100), "e4m3fnuz: 0x80 is its NaN");
    /* tf32: a NaN whose payload is only in the ignored low 13 bits (reads as Inf) */
    n = rv_specials(MF_FMT_TF32, v, 40);
    CHECK(has(v, n, 0x7F800001), "tf32 specials lack 0x7f800001");
    /* rv_make: 1.5 * 2^3 in f16 = 0x4A00; 2^-24 = smallest subnormal 0x0001 */
    CHECK(rv_make(MF_FMT_F16, 0, 3, 0x200) == 0x4A00, "rv_make f16 12.0");
    CHECK(rv_make(MF_FMT_F16, 0, -24, 0) == 0x0001, "rv_make f16 2^-24");
    CHECK(rv_make(MF_FMT_F16, 1, 99, 0) == 0xFBFF, "rv_make clamps to -65504");
    /* 3 * 2^-1 = 1.5 in f32 = 0x3FC00000 */
    CHECK(rv_from_sig(MF_FMT_F32, 0, 3, -1) == 0x3FC00000, "rv_from_sig 1.5");
}

/* Signature classes of pairs of f32 outputs (by the definitions in gen_values.h). */
static void test_signature(void)
{
    CHECK(!strcmp(rv_signature(MF_FMT_F32, 0x3F800000, 0x3F7FFFFF), "last-bit-rounding"), "1 vs 1-ulp");
    CHECK(!strcmp(rv_signature(MF_FMT_F32, 0x3F800000, 0x3F7FFFFD), "ulp>1"), "3 ulps");
    CHECK(!strcmp(rv_signature(MF_FMT_F32, 0x7FFFFFFF, 0x3F800000), "nan-vs-number"), "nan vs 1");
    CHECK(!strcmp(rv_signature(MF_FMT_F32, 0x7F800000, 0x7F7FFFFF), "inf"), "inf vs max");
    CHECK(!strcmp(rv_signature(MF_FMT_F32, 0x80000000, 0x00000000), "zero-sign"), "-0 vs +0");
    CHECK(!strcmp(rv_signature(MF_FMT_F32, 0xBF800000, 0x3F800000), "sign"), "-1 vs 1");
}

/* A tile is a pure function of (seed, instruction, tile index). */
static void test_reproducible(void)
{
    const mf_instr *in = mf_instr_find("hopper/mma.m16n8k16.f32.f16.f16.f32");
    size_t na = 16 * 16 * 2, nb = 8 * 16 * 2, nc = 16 * 8 * 4;
    unsigned char *buf[2][3];
    for (int r = 0; r < 2; r++) {
        buf[r][0] = calloc(2, na);
        buf[r][1] = calloc(2, nb);
        buf[r][2] = calloc(2, nc);
    }
    gen_mix mix;
    gen_mix_default(&mix);
    int kinds_seen = 0;
    for (uint64_t t = 0; t < 200; t++) {
        gen_ctx g[2];
        for (int r = 0; r < 2; r++) {
            g[r] = (gen_ctx){in, 16, 8, 16, 7, mix, NULL, 0, buf[r][0], buf[r][1], buf[r][2], NULL, NULL};
            kinds_seen |= 1 << gen_tile(&g[r], t, (size_t)r);  /* same tile, different slots */
        }
        CHECK(!memcmp(buf[0][0], buf[1][0] + na, na) && !memcmp(buf[0][1], buf[1][1] + nb, nb) &&
                  !memcmp(buf[0][2], buf[1][2] + nc, nc),
              "tile %llu differs between two generations", (unsigned long long)t);
    }
    CHECK(kinds_seen == (1 << GEN_MUTATE) - 1, "not every generator ran in 200 tiles (mask %x)", kinds_seen);
    char err[200];
    gen_mix m;
    CHECK(gen_mix_parse("uniform:2,bogus", &m, err, sizeof err) == -1 && strstr(err, "bogus"), "bad --mix item");
    /* a generator named twice was taken with the last weight, silently */
    CHECK(gen_mix_parse("uniform:2,uniform:3", &m, err, sizeof err) == -1 && strstr(err, "twice"),
          "--mix naming a generator twice accepted");
    CHECK(gen_mix_parse("special:3,mutate", &m, err, sizeof err) == 0 && m.w[GEN_SPECIAL] == 3 && m.w[GEN_MUTATE] == 1,
          "--mix parse");
    for (int r = 0; r < 2; r++)
        for (int q = 0; q < 3; q++)
            free(buf[r][q]);
}

/* The minimizer with model:ampere as the device against hopper's row.
 * Known mismatch, derived by hand from the T-FDPA rules (DOMAIN sections 3-4):
 * c = -2^-25 (f32 0xb3000000), one product 1*1.  Ampere (F = 24) truncates
 * c to 0 when aligned to e_max = 0, so d = 1.0 = 0x3f800000; hopper (F = 25)
 * keeps it: 1 - 2^-25, truncated (RZ) to 23 bits = 0x3f7fffff.
 * Extra products of 2^-24 * 2^-24 = 2^-48 lie below both F and do not matter;
 * the minimizer must remove them and move the product to position 0. */
static void test_minimize(void)
{
    const mf_instr *in = mf_instr_find("hopper/mma.m16n8k16.f32.f16.f16.f32");
    mf_device *dev;
    char err[300];
    CHECK(mf_device_open("model:ampere", &dev, err, sizeof err) == 0, "open model:ampere: %s", err);
    mz_dev z;
    CHECK(mz_dev_init(&z, dev, in, NULL) == 0, "mz_dev_init");
    mf_case cs;
    memset(&cs, 0, sizeof cs);
    cs.c = 0xb3000000;
    cs.a[5] = cs.b[5] = 0x3c00;
    for (int k = 8; k < 13; k++)
        cs.a[k] = cs.b[k] = 0x0001;
    uint64_t d;
    CHECK(mz_dev_run(&z, &cs, 1, &d) == 0 && d == 0x3f800000, "ampere d = %llx", (unsigned long long)d);
    CHECK(mf_eval(in, &cs) == 0x3f7fffff, "hopper d");
    uint64_t runs[MZ_RERUNS];
    CHECK(mz_recheck(&z, &cs, 0x3f800000, runs) == MZ_REPEATS, "the mismatch repeats");
    CHECK(mz_recheck(&z, &cs, 0x3f800001, runs) == MZ_NONDETERMINISTIC, "a batch value that does not repeat");
    mz_result res;
    CHECK(mz_minimize(&z, &cs, &res) == 0, "minimize: %s", z.err);
    mf_case want;
    memset(&want, 0, sizeof want);
    want.c = 0xb3000000;
    want.a[0] = want.b[0] = 0x3c00;
    CHECK(!memcmp(&res.cs, &want, sizeof want), "minimized to c=%llx a0=%llx b0=%llx, %d products",
          (unsigned long long)res.cs.c, (unsigned long long)res.cs.a[0], (unsigned long long)res.cs.b[0],
          res.products);
    CHECK(res.d_dev == 0x3f800000 && res.d_model == 0x3f7fffff, "outputs of the minimized case");
    /* a case that does not mismatch is left alone */
    memset(&cs, 0, sizeof cs);
    cs.a[0] = cs.b[0] = 0x3c00;
    CHECK(mz_minimize(&z, &cs, &res) == 1, "agreeing case");
    mz_dev_free(&z);
    mf_device_close(dev);
}

/* A stop request: the minimizer makes no further device call and says so
 * (Ctrl-C during `run -minimize N`). */
static void test_stop_request(void)
{
    const mf_instr *in = mf_instr_find("hopper/mma.m16n8k16.f32.f16.f16.f32");
    mf_device *dev;
    char err[300];
    CHECK(mf_device_open("model:ampere", &dev, err, sizeof err) == 0, "open model:ampere: %s", err);
    mz_dev z;
    CHECK(mz_dev_init(&z, dev, in, NULL) == 0, "mz_dev_init");
    volatile sig_atomic_t stop = 1;
    z.stop = &stop;
    mf_case cs;
    memset(&cs, 0, sizeof cs);
    cs.c = 0xb3000000;   /* the mismatch of test_minimize */
    cs.a[5] = cs.b[5] = 0x3c00;
    mz_result res;
    long calls = z.batches;
    CHECK(mz_minimize(&z, &cs, &res) == MZ_STOPPED, "minimize under a stop request");
    CHECK(z.batches == calls && z.stopped, "a device call was made after the stop request");
    uint64_t runs[MZ_RERUNS];
    CHECK(mz_recheck(&z, &cs, 0x3f800000, runs) == -1, "recheck under a stop request");
    mz_dev_free(&z);
    mf_device_close(dev);
}

/* The mismatch-file header: what mm_format_file writes, mm_header_parse
 * reads back (the values are the ones given to the writer). */
static void test_header(void)
{
    const mf_instr *in = mf_instr_find("hopper/mma.m16n8k16.f32.f16.f16.f32");
    const mf_instr *model = mf_instr_find("ampere/mma.m16n8k16.f32.f16.f16.f32");
    mf_device *dev;
    char err[300];
    CHECK(in && model, "rows");
    CHECK(mf_device_open("model:hopper", &dev, err, sizeof err) == 0, "open model:hopper: %s", err);
    mz_dev z;
    CHECK(mz_dev_init(&z, dev, in, model) == 0, "mz_dev_init");
    mf_case cs;
    memset(&cs, 0, sizeof cs);
    cs.a[0] = cs.b[0] = 0x3c00;
    mm_origin o = {"model:hopper", 18446744073709551615ULL, 1234, 9, 1, 2, 16, 8, "special"};
    mm_outcome out;
    memset(&out, 0, sizeof out);
    out.kind = MZ_NONDETERMINISTIC;
    out.sig = "non-deterministic";
    static char text[1 << 16];
    int n = mm_format_file(&z, &cs, 0x3f800000, &o, &out, text, sizeof text);
    CHECK(n > 0, "format");
    mm_header h;
    CHECK(mm_header_parse(text, &h, err, sizeof err) >= 8, "parse: %s", err);
    CHECK(!strcmp(h.instr, in->name), "instr '%s'", h.instr);
    CHECK(!strcmp(h.device_spec, "model:hopper"), "device-spec '%s'", h.device_spec);
    CHECK(!strcmp(h.signature, "non-deterministic"), "signature '%s'", h.signature);
    CHECK(h.model_row == model, "model '%s'", h.model);
    CHECK(h.has_seed && h.seed == 18446744073709551615ULL, "seed %llu", h.seed);
    CHECK(h.has_index && h.index == 1234, "index %lld", h.index);
    CHECK(!strcmp(h.generator, "special"), "generator '%s'", h.generator);
    CHECK(mm_header_parse("# seed: abc\n", &h, err, sizeof err) == -1 && strstr(err, "1: "), "bad seed: %s", err);
    CHECK(mm_header_parse("# model: nosuch/row (x)\n", &h, err, sizeof err) == -1, "unknown model row");
    CHECK(mm_header_parse("# just a comment\ninstr x\n", &h, err, sizeof err) == 0 && !h.model_row, "no keys");
    mz_dev_free(&z);
    mf_device_close(dev);
}

/* Numbers and seeds on the command line: decimal, seeds also 0x hex, no
 * octal, no sign on seeds, nothing out of range (the rules of
 * cli_flags.def's header and the wording). */
static void test_cli_numbers(void)
{
    unsigned long long u;
    long long x;
    CHECK(cli_parse_seed("010", &u) == 0 && u == 10, "010 is ten");
    CHECK(cli_parse_seed("08", &u) == 0 && u == 8, "08 is eight");
    CHECK(cli_parse_seed("0x10", &u) == 0 && u == 16, "0x10 is sixteen");
    CHECK(cli_parse_seed("18446744073709551615", &u) == 0 && u == 18446744073709551615ULL, "2^64-1");
    const char *bad_seeds[] = {"-1", "+1", "", " 1", "1 ", "0x", "18446744073709551616", "1e3", "0x1g", "abc"};
    for (size_t i = 0; i < sizeof bad_seeds / sizeof bad_seeds[0]; i++)
        CHECK(cli_parse_seed(bad_seeds[i], &u) == -1, "seed '%s' accepted", bad_seeds[i]);
    CHECK(cli_parse_decimal("-1", &x) == 0 && x == -1, "-1");
    CHECK(cli_parse_decimal("9223372036854775807", &x) == 0 && x == 9223372036854775807LL, "2^63-1");
    const char *bad_nums[] = {"9223372036854775808", "0x10", "", "-", "1.5", "many", " 1"};
    for (size_t i = 0; i < sizeof bad_nums / sizeof bad_nums[0]; i++)
        CHECK(cli_parse_decimal(bad_nums[i], &x) == -1, "number '%s' accepted", bad_nums[i]);
}

/* The flags table: every flag's names are in its command's --help, and
 * the parser takes each of them in the forms -name=V, --name V. */
static void test_flags_table(void)
{
    for (int f = 0; f < CLI_NFLAGS; f++) {
        const cli_flag *fl = &cli_flags[f];
        char *help = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&help, &len);
        cli_usage(fl->cmd, m);
        fclose(m);
        char name[64], opt[80], dashed[80];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(fl->names, "|"), fl->names);
        snprintf(dashed, sizeof dashed, "-%s", name);
        CHECK(strstr(help, dashed) != NULL, "flag %s missing from its command's --help", name);
        free(help);
        /* a value of the flag's type */
        const char *val = fl->type == CLI_ARCH ? "ampere" : fl->type == CLI_INT ? "1" : "0";
        if (fl->type == CLI_INT && fl->min > 1)
            val = NULL;
        char *argv[4] = {"cmd", opt, NULL, NULL};
        int argc = 2;
        if (fl->type == CLI_BOOL) {
            snprintf(opt, sizeof opt, "-%s", name);
        } else if (val) {
            snprintf(opt, sizeof opt, "--%s", name);
            argv[2] = (char *)val;
            argc = 3;
        } else {
            continue;
        }
        void *a = malloc(cli_opts_size(fl->cmd));
        if (!a)
            return;
        /* positional arguments the command needs (up to four: gemm's M N K TYPE): enough to parse */
        char *argv2[8] = {argv[0], argv[1], argv[2], NULL};
        int rc = cli_parse_opts(fl->cmd, argc, argv, a);
        for (int extra = 1; rc != 0 && extra <= 4; extra++) {
            cli_free_opts(fl->cmd, a);
            argv2[argc + extra - 1] = "p1";
            rc = cli_parse_opts(fl->cmd, argc + extra, argv2, a);
        }
        CHECK(rc == 0 && cli_opts_given(a, (cli_flag_id)f) == 1, "flag %s (%s) not taken by the parser", name, opt);
        cli_free_opts(fl->cmd, a);
        free(a);
    }
}

/* The typed options of one command (cli_opts_run, from the table): values,
 * defaults (cli_flags.def: --out mismatches, -batch 4194304) and counts. */
static void test_typed_options(void)
{
    char *argv[] = {"run", "-runs=7", "-seed", "0x10", "--instr", "a/*", "--instr=b", "-v", "--no-sync", NULL};
    cli_opts_run o;
    int rc = cli_run_parse(9, argv, &o);
    CHECK(rc == 0, "run's options not parsed");
    if (rc == 0) {
        CHECK(o.runs == 7 && o.given.runs == 1, "-runs=7: %lld (given %d)", o.runs, o.given.runs);
        CHECK(o.seed == 16 && o.given.seed == 1, "-seed 0x10: %llu", o.seed);
        CHECK(o.instr.n == 2 && !strcmp(o.instr.v[0], "a/*") && !strcmp(o.instr.v[1], "b") && o.given.instr == 2,
              "--instr twice: %d values", o.instr.n);
        CHECK(o.verbose == 1 && o.no_sync == 1 && o.given.verbose == 1, "-v, --no-sync");
        CHECK(o.out && !strcmp(o.out, "mismatches") && !o.given.out, "--out's default: %s", o.out ? o.out : "NULL");
        CHECK(o.batch == 4194304 && !o.given.batch, "-batch's default: %lld", o.batch);
        CHECK(!o.model && !o.given.model && o.corpus.n == 0 && o.npos == 0, "flags not given");
    }
    cli_run_free(&o);
    /* positional arguments, and a bad value: usage error, nothing left to free but the struct */
    char *argv2[] = {"fit", "hopper/mma.m16n8k16.f32.f16.f16.f32", "dir1", "-runs", "x", NULL};
    cli_opts_fit f;
    CHECK(cli_fit_parse(5, argv2, &f) == -1, "fit -runs x accepted");
    cli_fit_free(&f);
    argv2[3] = NULL;
    CHECK(cli_fit_parse(3, argv2, &f) == 0 && f.npos == 2 && !strcmp(f.pos[1], "dir1") && f.tries == 20000,
          "fit INSTR dir1: %d positional", f.npos);
    cli_fit_free(&f);
    /* `mmafuzz --help` lists every command of the table */
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    cli_commands_usage(m);
    fclose(m);
    for (int c = 0; c < CLI_CMD_COUNT; c++) {
        char line[64];
        snprintf(line, sizeof line, "  %s ", cli_commands[c].name);
        CHECK(text && strstr(text, line) != NULL, "%s missing from mmafuzz --help", cli_commands[c].name);
    }
    free(text);
}

/* One selector: glob, exact name, substring (list's rule everywhere). */
static void test_instr_select(void)
{
    CHECK(instr_selects("hopper/mma.m16n8k16.*", "hopper/mma.m16n8k16.f32.f16.f16.f32"), "glob");
    CHECK(!instr_selects("hopper/mma.m16n8k16.*", "ampere/mma.m16n8k16.f32.f16.f16.f32"), "glob, other arch");
    CHECK(instr_selects("hopper/mma.m16n8k16.f32.f16.f16.f32", "hopper/mma.m16n8k16.f32.f16.f16.f32"), "exact");
    CHECK(instr_selects("m16n8k16.f32.f16", "ampere/mma.m16n8k16.f32.f16.f16.f32"), "substring");
    CHECK(instr_selects(NULL, "ampere/mma.m16n8k16.f32.f16.f16.f32"), "no pattern selects all");
    const char *none = "hopper/mma.nosuch";
    CHECK(instr_select_check("test", "", &none, 1) == 1, "a pattern selecting nothing is reported");
}

static int count_case(const st_case *c, void *ctx)
{
    (void)c;
    ++*(int *)ctx;
    return 0;
}

static char *slurp(const char *path, size_t *n)
{
    char err[200];
    return fs_read_all(path, n, err, sizeof err);
}

/* The store: hash names, no overwrite, counts, and the reader that skips a
 * corrupt file without touching it. */
static void test_store(const char *dir)
{
    char err[600], cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0, "clean %s", dir);
    store st;
    CHECK(st_open(&st, dir, err, sizeof err) == 0, "st_open: %s", err);
    const mf_instr *in = mf_instr_find("hopper/mma.m16n8k16.f32.f16.f16.f32");
    mf_case cs;
    memset(&cs, 0, sizeof cs);
    cs.c = 0xb3000000;
    cs.a[0] = cs.b[0] = 0x3c00;
    char hex[ST_HASH_HEX];
    st_hash(in, &cs, hex);
    char text[4096], line[2048];
    mf_vec_format_case(in, &cs, NULL, line, sizeof line);
    int n = snprintf(text, sizeof text, "# test\ninstr %s\n%s d=3f800000 model=3f7fffff\n", in->name, line);
    CHECK(st_file(&st, in, hex, "last-bit-rounding", text, (size_t)n, err, sizeof err) == 1, "first filing is new");
    CHECK(st_file(&st, in, hex, "last-bit-rounding", "other text", 10, err, sizeof err) == 0, "second is known");
    CHECK(st_flush(&st, err, sizeof err) == 0, "flush: %s", err);
    char path[1400];
    st_path(dir, in, hex, path, sizeof path);
    size_t len;
    char *back = slurp(path, &len);
    CHECK(back && len == (size_t)n && !memcmp(back, text, len), "the file was overwritten");
    free(back);
    st_close(&st);
    CHECK(st_open(&st, dir, err, sizeof err) == 0 && st_find(&st, hex) && st_find(&st, hex)->count == 2,
          "index count after two sightings");
    st_close(&st);

    /* corrupt files next to the good one: a bad hex digit, a truncated line,
     * a file whose name is not the hash of its case */
    char bad1[1500], bad2[1500], bad3[1500];
    snprintf(bad1, sizeof bad1, "%s/%s/corrupt1.vec", dir, in->name);
    snprintf(bad2, sizeof bad2, "%s/%s/corrupt2.vec", dir, in->name);
    snprintf(bad3, sizeof bad3, "%s/%s/00000000000000000000000000000000.vec", dir, in->name);
    const char *t1 = "instr hopper/mma.m16n8k16.f32.f16.f16.f32\nc=b300000g a=3c00 b=3c00\n";
    char t2[4096], t3[4096];
    snprintf(t2, sizeof t2, "instr %s\n%.*s\n", in->name, 30, line);
    snprintf(t3, sizeof t3, "instr %s\n%s\n", in->name, line);
    CHECK(fs_write_atomic(bad1, t1, strlen(t1), 0, err, sizeof err) == 0, "write bad1");
    CHECK(fs_write_atomic(bad2, t2, strlen(t2), 0, err, sizeof err) == 0, "write bad2");
    CHECK(fs_write_atomic(bad3, t3, strlen(t3), 0, err, sizeof err) == 0, "write bad3");
    const char *paths[1] = {dir};
    int ncases = 0;
    long skipped = st_read(paths, 1, count_case, &ncases);
    CHECK(skipped == 3, "st_read skipped %ld files, expected 3", skipped);
    CHECK(ncases == 1, "st_read delivered %d cases, expected the good one", ncases);
    char *b1 = slurp(bad1, &len);
    CHECK(b1 && len == strlen(t1) && !memcmp(b1, t1, len), "corrupt file modified");
    free(b1);
    char *b3 = slurp(bad3, &len);
    CHECK(b3 && len == strlen(t3), "misnamed file modified");
    free(b3);
}

/* A GPU's UUID as nvidia-smi -L prints it: "GPU-" and the 16 bytes in hex,
 * grouped 8-4-4-4-12 (the RFC 4122 text form); expected strings written by
 * hand from that form. */
static void test_gpu_uuid(void)
{
    unsigned char b[16];
    for (int i = 0; i < 16; i++)
        b[i] = (unsigned char)(i * 17);  /* 00 11 22 ... ff */
    char out[48];
    mf_device_format_uuid(b, out, sizeof out);
    CHECK(!strcmp(out, "GPU-00112233-4455-6677-8899-aabbccddeeff"), "uuid: %s", out);
    b[0] = 0x5c;
    b[15] = 0x01;
    mf_device_format_uuid(b, out, sizeof out);
    CHECK(!strcmp(out, "GPU-5c112233-4455-6677-8899-aabbccddee01"), "uuid: %s", out);
    mf_device *dev;
    char err[256];
    CHECK(mf_device_open("model:ampere", &dev, err, sizeof err) == 0, "%s", err);
    const mf_device_info *di = mf_device_get_info(dev);
    CHECK(!strcmp(di->uuid, "model") && !strcmp(di->pci_bus_id, "model"), "model device: uuid %s, pci %s", di->uuid,
          di->pci_bus_id);
    mf_device_close(dev);
}

/* The device layer answers what the harness asks instead of it testing the
 * backend: every table row's form comes from the backend of its vendor (the
 * arch table's column: AMD rows hip's mfma, NVIDIA rows cuda's); a backend
 * name names its backend; model:ARCH neither verifies on itself nor claims
 * an operand form wgmma lacks.  The expected words: mf_device.h's comments
 * (mf_device_describe, mf_device_form) and layout.h's list of wgmma's
 * operand forms ("no_c" a form, "n256" a shape). */
static void test_device_asks(void)
{
    int nvidia = 0, amd = 0;
    for (size_t i = 0; i < mf_instr_count; i++) {
        const mf_instr *in = &mf_instr_table[i];
        mf_device_form f;
        mf_device_form_of(in, &f);
        const char *want = mf_arch_is_amd(in->arch) ? "hip" : "cuda";
        CHECK(f.backend && !strcmp(f.backend, want), "%s: form of backend %s, expected %s", in->name,
              f.backend ? f.backend : "(none)", want);
        CHECK(f.form || (f.why && *f.why), "%s: no form and no reason", in->name);
        CHECK(!mf_arch_is_amd(in->arch) || (f.form && !strcmp(f.form, "mfma")), "%s: AMD row's form %s", in->name,
              f.form ? f.form : "(none)");
        nvidia += !mf_arch_is_amd(in->arch);
        amd += mf_arch_is_amd(in->arch) != 0;
    }
    CHECK(nvidia > 0 && amd > 0, "rows of both vendors (%d, %d)", nvidia, amd);
    CHECK(mf_backend_by_name("cuda") == MF_BACKEND_CUDA && mf_backend_by_name("hip") == MF_BACKEND_HIP &&
              mf_backend_by_name("model") == MF_BACKEND_MODEL && mf_backend_by_name("cudax") == -1,
          "backend names");
    CHECK(!strcmp(mf_backend_name(MF_BACKEND_CUDA), "cuda") && !strcmp(mf_backend_name(MF_BACKEND_HIP), "hip") &&
              mf_backend_name(MF_BACKEND_MODEL) == NULL,
          "the backends with wrappers: cuda, hip");
    mf_device *dev;
    char err[256];
    CHECK(mf_device_open("model:hopper", &dev, err, sizeof err) == 0, "%s", err);
    const mf_instr *wg = mf_instr_find("hopper/wgmma.m64n8k16.f32.f16.f16");
    CHECK(wg != NULL, "hopper/wgmma.m64n8k16.f32.f16.f16 in the table");
    if (dev && wg) {
        char line[200];
        mf_device_describe(dev, line, sizeof line);
        CHECK(!strcmp(line, "model:hopper (a model, no hardware)"), "describe: %s", line);
        const char *why = NULL;
        CHECK(!mf_device_verifies(dev) && !mf_device_can_verify(dev, wg, NULL, wg, &why) && why && *why,
              "model:hopper verifies on itself (%s)", why ? why : "no reason");
        CHECK(mf_device_supports(dev, wg, "no_c") && !mf_device_supports(dev, wg, "n256"),
              "model:hopper: no_c is an operand form of the row, n256 is not");
        mf_instr row;
        CHECK(mf_backend_form_row(wg, "no_c", &row) == 0 && row.no_c && !wg->no_c, "no_c's model row");
    }
    mf_device_close(dev);
}

/* A dense row's case enters the pool with metadata 0, whatever its field
 * held (mf_tile_get_case does not write it for dense rows), because sparse
 * rows of the same formats and K mutate it (pool_compatible) and draw from
 * it; a sparse row's case keeps its own.  The garbage below stands for the
 * stack contents that made two GPU runs of one seed differ. */
static void test_pool_meta(void)
{
    const mf_instr *dense = mf_instr_find("hopper/mma.m16n8k16.f32.f16.f16.f32");
    const mf_instr *sp = mf_instr_find("hopper/mma.sp.m16n8k16.f32.f16.f16.f32");
    CHECK(dense && sp && pool_compatible(dense, sp), "pool: the rows are missing or no longer compatible");
    if (!dense || !sp)
        return;
    pool p;
    CHECK(pool_init(&p, 4) == 0, "pool_init");
    mf_case cs;
    memset(&cs, 0xEE, sizeof cs);
    pool_add(&p, dense, &cs);
    int zero = 1;
    for (size_t q = 0; q < sizeof cs.meta; q++)
        zero &= p.e[0].cs.meta[q] == 0;
    CHECK(zero, "pool: a dense case kept the metadata field's contents");
    for (int g = 0; g < sp->n_meta; g++)
        cs.meta[g] = 0x4;   /* indices 0 and 1: legal */
    pool_add(&p, sp, &cs);
    CHECK(p.e[1].cs.meta[0] == 0x4 && p.e[1].cs.meta[sp->n_meta - 1] == 0x4, "pool: a sparse case lost its metadata");
    pool_free(&p);
}

/* The `.vec` key form= of an instr line (wgmma's arithmetic forms).
 * Expected values, hand-derived from the PTX ISA's definition of wgmma
 * (imm-scale-a = -1 negates A; scale-d = 0 gives D = A*B, C not read):
 * a = (1.0, 0, ..., 0), b = (1.0, 0, ..., 0) in f16, so A*B = 1.0 exactly;
 * with neg_a and c = +0 the sum is -1.0 (f32 0xbf800000); with neg_ab it is
 * +1.0; with no_c and c = 1.0 it is A*B = 1.0 (0x3f800000), where the row
 * without the form gives 2.0 (0x40000000). */
static void test_vec_forms(void)
{
    static const char z15[] = ",0000,0000,0000,0000,0000,0000,0000,0000,0000,0000,0000,0000,0000,0000,0000";
    char text[4096];
    snprintf(text, sizeof text,
             "instr hopper/wgmma.m64n8k16.f32.f16.f16 form=neg_a\n"
             "c=00000000 a=3c00%s b=3c00%s d=bf800000\n"
             "instr hopper/wgmma.m64n8k16.f32.f16.f16 form=neg_ab\n"
             "c=00000000 a=3c00%s b=3c00%s d=3f800000\n"
             "instr hopper/wgmma.m64n8k16.f32.f16.f16 form=no_c\n"
             "c=3f800000 a=3c00%s b=3c00%s d=3f800000\n"
             "instr hopper/wgmma.m64n8k16.f32.f16.f16\n"
             "c=3f800000 a=3c00%s b=3c00%s d=40000000\n"
             "instr hopper/wgmma.m64n8k16.f32.f16.f16 form=neg_a\n"
             "c=00000000 a=3c00%s b=3c00%s d=bf800000\n",
             z15, z15, z15, z15, z15, z15, z15, z15, z15, z15);
    mf_vec_reader *r = mf_vec_open_mem("forms.vec", text, strlen(text));
    mf_vec_case vc;
    const mf_instr *first = NULL;
    static const char *const want_form[5] = {"neg_a", "neg_ab", "no_c", NULL, "neg_a"};
    for (int i = 0; i < 5; i++) {
        int rc = mf_vec_next(r, &vc);
        CHECK(rc == MF_VEC_CASE, "forms.vec case %d: status %d (%s)", i, rc, mf_vec_error(r));
        if (rc != MF_VEC_CASE)
            break;
        const char *f = mf_instr_form_name(vc.instr);
        CHECK(want_form[i] ? f && !strcmp(f, want_form[i]) : !f, "forms.vec case %d: form %s", i, f ? f : "none");
        CHECK(!strcmp(vc.instr->name, "hopper/wgmma.m64n8k16.f32.f16.f16"), "forms.vec case %d: name %s", i,
              vc.instr->name);
        CHECK(mf_eval(vc.instr, &vc.cs) == vc.d, "forms.vec case %d: model %llx, expected %llx", i,
              (unsigned long long)mf_eval(vc.instr, &vc.cs), (unsigned long long)vc.d);
        if (i == 0)
            first = vc.instr;
        if (i == 4)
            CHECK(vc.instr == first, "a form's row is made once");
    }
    CHECK(mf_vec_next(r, &vc) == MF_VEC_EOF, "forms.vec: end");
    mf_vec_close(r);
    /* a case's row outlives its reader: the mutation pool keeps the rows of the cases it loads for the whole run
     * (a row freed with its reader was read after the free by `run` and `campaign init` with corpus/golden,
     * whose wgmma files have form= lines; AddressSanitizer saw it, a Release build crashed).  Expected: the row
     * as mf_instr_with_form makes it (name, formats, K, form fields), and a second reader's row is the same one. */
    mf_instr want;
    CHECK(first && !mf_instr_with_form(mf_instr_find("hopper/wgmma.m64n8k16.f32.f16.f16"), "neg_a", &want),
          "mf_instr_with_form(neg_a)");
#define SAME_ROW(x) ((x)->name == want.name && (x)->fa == want.fa && (x)->fb == want.fb && (x)->fc == want.fc && \
                     (x)->fd == want.fd && (x)->k == want.k && (x)->neg_a == want.neg_a && (x)->neg_b == want.neg_b && \
                     (x)->no_c == want.no_c && (x)->no_c_neg_zero == want.no_c_neg_zero)
    if (first) {
        CHECK(SAME_ROW(first), "a form's row changed once its reader was closed");
        r = mf_vec_open_mem("again.vec", text, strlen(text));
        CHECK(mf_vec_next(r, &vc) == MF_VEC_CASE && vc.instr == first, "a second reader made the row again");
        mf_vec_close(r);
        CHECK(SAME_ROW(first), "a form's row changed once the second reader was closed");
    }
#undef SAME_ROW
    /* what has no such form is an error naming the line */
    static const char *const bad[] = {
        "instr hopper/wgmma.m64n8k16.f32.f16.f16 form=neg_c\n",         /* no such form */
        "instr hopper/mma.m16n8k16.f32.f16.f16.f32 form=neg_a\n",       /* mma.sync has no immediate forms */
        "instr hopper/wgmma.m64n8k32.s32.s8.s8 form=neg_a\n",           /* integer wgmma: scale-d only */
        "instr hopper/wgmma.m64n8k16.f32.f16.f16 form=\n",              /* empty */
        "instr hopper/wgmma.m64n8k16.f32.f16.f16 neg_a\n",              /* not key=value */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = mf_vec_open_mem("bad.vec", bad[i], strlen(bad[i]));
        int rc = mf_vec_next(r, &vc);
        CHECK(rc == MF_VEC_ERROR && strstr(mf_vec_error(r), "bad.vec:1:"), "bad form line %zu: status %d (%s)", i,
              rc, mf_vec_error(r));
        mf_vec_close(r);
    }
    const char *ok = "instr hopper/wgmma.m64n8k32.s32.s8.s8 form=no_c\n";
    r = mf_vec_open_mem("ok.vec", ok, strlen(ok));
    CHECK(mf_vec_next(r, &vc) == MF_VEC_EOF, "integer wgmma takes no_c (%s)", mf_vec_error(r));
    mf_vec_close(r);
}

/* json_put_str into a string. */
static const char *json_of(const char *s)
{
    static char out[1024];
    FILE *f = fmemopen(out, sizeof out, "w");
    json_put_str(f, s);
    fclose(f);
    return out;
}

/* JSON strings (harness/util/json.h).  Expected values: RFC 8259 section 7
 * (the escapes; \uXXXX with UTF-16 surrogate pairs) and RFC 3629 section 4
 * (well-formed UTF-8: no overlong forms, no surrogates), written by hand. */
static void test_json(void)
{
    static const struct { const char *in, *out; } w[] = {
        {"plain", "\"plain\""},
        {"a\"b\\c", "\"a\\\"b\\\\c\""},
        {"\t\x01\x1f\x7f", "\"\\u0009\\u0001\\u001f\\u007f\""},
        {"\xc3\xa9 \xf0\x9f\x98\x80", "\"\xc3\xa9 \xf0\x9f\x98\x80\""},  /* e-acute, U+1F600: kept */
        {"x\xffy", "\"x\\ufffdy\""},                                         /* not UTF-8 */
        {"\xc3", "\"\\ufffd\""},                                             /* cut sequence */
        {"\xc0\xaf", "\"\\ufffd\\ufffd\""},                                   /* overlong '/' */
        {"\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""},                         /* a surrogate */
    };
    for (size_t i = 0; i < sizeof w / sizeof *w; i++)
        CHECK(!strcmp(json_of(w[i].in), w[i].out), "json_put_str case %zu: %s, expected %s", i, json_of(w[i].in),
              w[i].out);
    CHECK(!strcmp(json_of(NULL), "\"\""), "json_put_str(NULL): %s", json_of(NULL));
    static const struct { const char *in, *out; } r[] = {
        {"\"a\\\"b\\\\c\\/\\b\\f\\n\\r\\t\",", "a\"b\\c/\b\f\n\r\t"},
        {"\"\\u00e9\\u0041\"", "\xc3\xa9" "A"},
        {"\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80"},
        {"\"\xc3\xa9\"", "\xc3\xa9"},
    };
    char out[64];
    for (size_t i = 0; i < sizeof r / sizeof *r; i++) {
        const char *end = json_get_str(r[i].in, out, sizeof out);
        CHECK(end && !strcmp(out, r[i].out), "json_get_str case %zu: '%s'", i, out);
        CHECK(end && end == strrchr(r[i].in, '"') + 1, "json_get_str case %zu: end not after the closing quote", i);
    }
    static const char *const bad[] = {"\"abc", "\"\\x\"", "\"\\ud83d\"", "\"\\ude00\"", "\"\\u12g4\"", "\"a\tb\"",
                                      "\"\xff\"", "abc", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(!json_get_str(bad[i], out, sizeof out) && !out[0], "json_get_str accepted bad case %zu", i);
    /* cut at a character boundary: "a" + e-acute in 3 bytes (with the NUL) keeps "a" */
    CHECK(json_get_str("\"a\xc3\xa9" "b\"", out, 3) && !strcmp(out, "a"), "json_get_str cut: '%s'", out);
    CHECK(json_get_str("\"abcdef\"", out, 4) && !strcmp(out, "abc"), "json_get_str cut: '%s'", out);
    /* every ASCII character but NUL, written and read back */
    char all[128];
    for (int c = 1; c < 128; c++)
        all[c - 1] = (char)c;
    all[127] = 0;
    char back[128];
    CHECK(json_get_str(json_of(all), back, sizeof back) && !strcmp(back, all), "json: ASCII does not round-trip");
}

int main(int argc, char **argv)
{
    test_json();
    test_vec_forms();
    test_pool_meta();
    test_gpu_uuid();
    test_device_asks();
    test_specials();
    test_signature();
    test_reproducible();
    test_minimize();
    test_stop_request();
    test_header();
    test_cli_numbers();
    test_flags_table();
    test_typed_options();
    test_instr_select();
    test_store(argc > 1 ? argv[1] : "driver_units_store");
    if (failures) {
        printf("%d failures\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
