/*
 * cmd_device.c - the device subcommands: `devices` (what is present and what
 * runs on it) and `record` (run generated cases on a device and write them,
 * with the device's d, as a .vec file).
 */
#include "cli.h"
#include "instr_select.h"
#include "json.h"
#include "mf_device.h"
#include "mmafuzz_gen.h"
#include "vecfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- devices */

/* The GPUs present, open (those that fail to open keep their error). */
enum { MAX_DEVS = 16 };
typedef struct gpu_list {
    int ncuda, nhip, n;
    char spec[MAX_DEVS][32];
    const char *backend[MAX_DEVS];
    mf_device *dev[MAX_DEVS]; /* NULL: err says why */
    char err[MAX_DEVS][512];
    char hip_why[256];        /* no HIP device: what the HIP layer says */
} gpu_list;

static void gpus_open(gpu_list *g)
{
    memset(g, 0, sizeof *g);
    for (int b = 0; mf_backend_name(b); b++) {   /* the device layer's backends with GPUs */
        const char *name = mf_backend_name(b);
        int count = mf_device_count((mf_backend)b);
        if (!strcmp(name, "cuda"))
            g->ncuda = count;
        else if (!strcmp(name, "hip"))
            g->nhip = count;
        for (int d = 0; d < count && g->n < MAX_DEVS; d++, g->n++) {
            snprintf(g->spec[g->n], sizeof g->spec[g->n], "%s:%d", name, d);
            g->backend[g->n] = name;
            if (mf_device_open(g->spec[g->n], &g->dev[g->n], g->err[g->n], sizeof g->err[g->n]))
                g->dev[g->n] = NULL;
        }
    }
    if (!g->nhip) {
        mf_device *hd = NULL;
        if (mf_device_open("hip", &hd, g->hip_why, sizeof g->hip_why) == MF_DEV_OK)
            mf_device_close(hd);
    }
}

static void gpus_close(gpu_list *g)
{
    for (int d = 0; d < g->n; d++)
        if (g->dev[d])
            mf_device_close(g->dev[d]);
}

/* Whether device dev runs instruction `in` (any of the variants of its
 * form); vs receives the variants it runs ("default n256 ..."). */
static int runs_on(mf_device *dev, const mf_instr *in, const mf_device_form *form, char *vs, size_t vslen)
{
    size_t pos = 0;
    int ok = 0;
    vs[0] = 0;
    for (int v = 0; dev && form->variants[v]; v++) {
        const char *vn = form->variants[v];
        if (mf_device_supports(dev, in, vn)) {
            ok = 1;
            int w = snprintf(vs + pos, vslen - pos, "%s%s", pos ? " " : "", *vn ? vn : "default");
            if (w > 0 && (size_t)w < vslen - pos)
                pos += (size_t)w;
        }
    }
    return ok;
}

/* The rows of the table PATTERN selects, per architecture: how many, how
 * many have a device wrapper, and how many each device runs. */
typedef struct arch_count {
    int rows, wrapped;
    int runs[MAX_DEVS];
} arch_count;

static void count_rows(const char *pattern, const gpu_list *g, arch_count *c)
{
    memset(c, 0, sizeof *c * MF_ARCH_COUNT);
    for (size_t i = 0; i < mf_instr_count; i++) {
        const mf_instr *in = &mf_instr_table[i];
        if (in->arch >= MF_ARCH_COUNT || !instr_selects(pattern, in->name))
            continue;
        arch_count *a = &c[in->arch];
        a->rows++;
        mf_device_form form;
        mf_device_form_of(in, &form);
        if (!mf_device_target(in, NULL) || !form.form)
            continue;
        a->wrapped++;
        char vs[128];
        for (int d = 0; d < g->n; d++)
            a->runs[d] += runs_on(g->dev[d], in, &form, vs, sizeof vs);
    }
}

/* `devices --json`: every CUDA and HIP device, each architecture's counts,
 * and every instruction PATTERN selects with where it runs, as one object
 * ("cuda" and "hip", the device counts, come last). */
static int devices_json(const char *pattern)
{
    gpu_list g;
    gpus_open(&g);
    printf("{\"devices\": [");
    for (int d = 0; d < g.n; d++) {
        printf("%s{\"spec\": ", d ? ", " : "");
        json_put_str(stdout, g.spec[d]);
        printf(", \"backend\": ");
        json_put_str(stdout, g.backend[d]);
        if (!g.dev[d]) {
            printf(", \"error\": ");
            json_put_str(stdout, g.err[d]);
            printf("}");
            continue;
        }
        const mf_device_info *di = mf_device_get_info(g.dev[d]);
        printf(", \"name\": ");
        json_put_str(stdout, di->name);
        printf(", \"arch\": ");
        json_put_str(stdout, di->arch);
        printf(", \"table_arch\": ");
        json_put_str(stdout, di->model_arch < MF_ARCH_COUNT ? mf_arch_name(di->model_arch) : "");
        printf(", \"driver\": ");
        json_put_str(stdout, di->driver);
        printf(", \"runtime\": ");
        json_put_str(stdout, di->runtime);
        printf(", \"uuid\": ");
        json_put_str(stdout, di->uuid);
        printf(", \"pci_bus_id\": ");
        json_put_str(stdout, di->pci_bus_id);
        printf("}");
    }
    arch_count c[MF_ARCH_COUNT];
    count_rows(pattern, &g, c);
    printf("], \"architectures\": [");
    int first = 1;
    for (int a = 0; a < MF_ARCH_COUNT; a++) {
        const mf_arch_info *ai = mf_arch_get((mf_arch)a);
        if (!c[a].rows)
            continue;
        printf("%s{\"arch\": ", first ? "" : ", ");
        json_put_str(stdout, ai->name);
        printf(", \"target\": ");
        json_put_str(stdout, ai->target ? ai->target : "");
        printf(", \"instructions\": %d, \"wrapped\": %d, \"runs_on\": {", c[a].rows, c[a].wrapped);
        for (int d = 0, k = 0; d < g.n; d++)
            if (c[a].runs[d])
            {
                printf("%s", k++ ? ", " : "");
                json_put_str(stdout, g.spec[d]);
                printf(": %d", c[a].runs[d]);
            }
        printf("}}");
        first = 0;
    }
    printf("], \"instructions\": [");
    first = 1;
    for (size_t i = 0; i < mf_instr_count; i++) {
        const mf_instr *in = &mf_instr_table[i];
        if (!instr_selects(pattern, in->name))
            continue;
        const char *why_t;
        const char *target = mf_device_target(in, &why_t);
        mf_device_form form;
        mf_device_form_of(in, &form);
        printf("%s{\"name\": ", first ? "" : ",\n  ");
        first = 0;
        json_put_str(stdout, in->name);
        printf(", \"target\": ");
        json_put_str(stdout, target ? target : "");
        printf(", \"form\": ");
        json_put_str(stdout, target && form.form ? form.form : "");
        if (!target || !form.form) {
            printf(", \"why\": ");
            json_put_str(stdout, !target ? why_t : form.why ? form.why : "");
        }
        printf(", \"runs_on\": {");
        for (int d = 0, k = 0; target && form.form && d < g.n; d++) {
            char vs[128];
            if (!runs_on(g.dev[d], in, &form, vs, sizeof vs))
                continue;
            printf("%s", k++ ? ", " : "");
            json_put_str(stdout, g.spec[d]);
            printf(": [");
            /* the variants, each a string */
            for (char *p = vs, *e; *p; p = e) {
                e = strchr(p, ' ');
                int len = e ? (int)(e - p) : (int)strlen(p);
                printf("%s\"%.*s\"", p == vs ? "" : ", ", len, p);
                e = e ? e + 1 : p + len;
            }
            printf("]");
        }
        printf("}}");
    }
    gpus_close(&g);
    printf("], \"cuda\": %d, \"hip\": %d}\n", g.ncuda, g.nhip);
    return 0;
}

/* `devices -v`: one line per NVIDIA instruction, whether each GPU runs it. */
static void devices_list(const char *pattern, const gpu_list *g)
{
    printf("\n%-58s %-8s %s\n", "instruction", "target", g->ncuda ? "status per device" : "status (no CUDA device present)");
    for (size_t i = 0; i < mf_instr_count; i++) {
        const mf_instr *in = &mf_instr_table[i];
        if (mf_arch_is_amd(in->arch) || !instr_selects(pattern, in->name))
            continue;
        const char *why_t;
        const char *target = mf_device_target(in, &why_t);
        mf_device_form form;
        mf_device_form_of(in, &form);
        printf("%-58s %-8s", in->name, target ? target : "-");
        if (!target) {
            printf(" %s\n", why_t);
            continue;
        }
        if (!form.form) {
            printf(" model-only: %s\n", form.why);
            continue;
        }
        int ncuda_open = 0;
        for (int d = 0; d < g->n; d++)
            ncuda_open += g->dev[d] && !strcmp(g->backend[d], "cuda");
        if (!ncuda_open) {
            printf(" wrapped; needs a %s GPU\n", target);
            continue;
        }
        int several = form.variants[0] && form.variants[1];
        for (int d = 0; d < g->n; d++) {
            if (!g->dev[d] || strcmp(g->backend[d], "cuda"))
                continue;
            char vs[128];
            if (runs_on(g->dev[d], in, &form, vs, sizeof vs))
                printf(" %s runs (%s)", g->spec[d], several ? vs : form.form);
            else
                printf(" %s no (needs %s)", g->spec[d], target);
        }
        printf("\n");
    }
}

int cmd_devices(int argc, char **argv)
{
    cli_opts_devices a;
    int prc = cli_devices_parse(argc, argv, &a);
    if (prc)
        return prc > 0 ? 0 : 2;  /* --help printed, or bad usage; nothing held */
    const char *pattern = a.npos ? a.pos[0] : NULL;
    const char *any = a.any;
    int json = a.json > 0;
    int verbose = a.verbose > 0;
    cli_devices_free(&a);
    if (any) {
        int b = mf_backend_by_name(any);
        if (b == MF_BACKEND_MODEL)
            return 0;  /* model:ARCH devices are always there */
        if (b >= 0)
            return mf_device_count((mf_backend)b) > 0 ? 0 : 1;
        fprintf(stderr, "mmafuzz devices: --any: expected cuda, hip or model, got '%s'\n", any);
        return 2;
    }
    if (pattern && instr_select_check("devices", "", &pattern, 1))
        return 1;
    if (json)
        return devices_json(pattern);
    gpu_list g;
    gpus_open(&g);
    printf("CUDA devices: %d\n", g.ncuda);
    for (int d = 0; d < g.n; d++) {
        if (!strcmp(g.backend[d], "hip"))
            continue;
        if (!g.dev[d]) {
            printf("  %s: cannot open: %s\n", g.spec[d], g.err[d]);
            continue;
        }
        const mf_device_info *di = mf_device_get_info(g.dev[d]);
        printf("  %s: %s  %s  table architecture %s  %s  %s  %s  pci %s\n", g.spec[d], di->name, di->arch,
               di->model_arch < MF_ARCH_COUNT ? mf_arch_name(di->model_arch) : "(none)", di->driver, di->runtime,
               di->uuid, di->pci_bus_id[0] ? di->pci_bus_id : "?");
    }
    /* AMD GPUs: the HIP layer has its own backend; say what it sees */
    printf("HIP devices: %d\n", g.nhip);
    for (int d = 0; d < g.n; d++) {
        if (strcmp(g.backend[d], "hip"))
            continue;
        if (!g.dev[d]) {
            printf("  %s: cannot open: %s\n", g.spec[d], g.err[d]);
            continue;
        }
        const mf_device_info *di = mf_device_get_info(g.dev[d]);
        printf("  %s: %s  %s  table architecture %s  %s  %s\n", g.spec[d], di->name, di->arch,
               di->model_arch < MF_ARCH_COUNT ? mf_arch_name(di->model_arch) : "(none)", di->driver, di->runtime);
    }
    if (!g.nhip && g.hip_why[0])
        printf("  hip: %s\n", g.hip_why);

    /* one line per architecture: its rows, those with a device wrapper, and
     * how many each GPU runs */
    arch_count c[MF_ARCH_COUNT];
    count_rows(pattern, &g, c);
    printf("\n%-15s %12s  %-8s %7s  %s\n", "architecture", "instructions", "target", "wrapped", "runs on");
    int nvidia_rows = 0, amd_rows = 0;
    for (int ar = 0; ar < MF_ARCH_COUNT; ar++) {
        const mf_arch_info *ai = mf_arch_get((mf_arch)ar);
        if (!c[ar].rows)
            continue;
        if (mf_arch_is_amd((mf_arch)ar))
            amd_rows += c[ar].rows;
        else
            nvidia_rows += c[ar].rows;
        printf("%-15s %12d  %-8s %7d ", ai->name, c[ar].rows, ai->target ? ai->target : "-", c[ar].wrapped);
        int k = 0;
        for (int d = 0; d < g.n; d++)
            if (c[ar].runs[d])
                printf("%s %s (%d)", k++ ? "," : "", g.spec[d], c[ar].runs[d]);
        if (!k && !ai->target)
            printf(" - (%s)", ai->no_target_why);
        else if (!k && !c[ar].wrapped)
            printf(" - (no row has a device wrapper)");
        else if (!k)
            printf(" no %s GPU here", ai->target);
        printf("\n");
    }
    printf("%-15s %12d  every row of ARCH, on the CPU (the C model): --device model:ARCH\n", "model:ARCH",
           nvidia_rows + amd_rows);

    if (verbose)
        devices_list(pattern, &g);
    printf("\n");
    for (int d = 0; d < g.n; d++) {
        if (!g.dev[d])
            continue;
        const mf_device_info *di = mf_device_get_info(g.dev[d]);
        int amd = !strcmp(g.backend[d], "hip"), total = 0;
        for (int ar = 0; ar < MF_ARCH_COUNT; ar++)
            total += c[ar].runs[d];
        printf("%s %s %s: %d of %d %s instructions run here (", g.spec[d], di->name, di->arch, total,
               amd ? amd_rows : nvidia_rows, amd ? "AMD" : "NVIDIA");
        int k = 0;
        for (int ar = 0; ar < MF_ARCH_COUNT; ar++)
            if (c[ar].runs[d])
                printf("%s%s %d", k++ ? ", " : "", mf_arch_name((mf_arch)ar), c[ar].runs[d]);
        printf("%s)\n", k ? "" : "none");
    }
    if (!g.n)
        printf("no GPU here: every instruction runs on the model only (--device model:ARCH)\n");
    if (!verbose)
        printf("one line per instruction: mmafuzz devices -v [PATTERN]; for tools: mmafuzz devices --json\n");
    gpus_close(&g);
    if (!nvidia_rows && !amd_rows && pattern) {
        fprintf(stderr, "mmafuzz devices: no instruction matches '%s'\n", pattern);
        return 1;
    }
    return 0;
}

/* ----------------------------------------------------------------- record */

/* Record `runs` cases of one instruction: tile t of the run contributes its
 * output (i, j) drawn from (seed, t).  @return 0, 1 on a device error. */
static int record_one(mf_device *dev, const mf_instr *in, const char *variant, long long runs, unsigned long long seed,
                      FILE *out, double deadline)
{
    int m, n, k;
    char err[512];
    if (mf_device_tile_shape(dev, in, variant, &m, &n, &k))
        return 1;
    size_t S = in->n_scales;
    size_t batch = 4096;
    size_t ba = batch * (size_t)m * k, bb = batch * (size_t)n * k, bc = batch * (size_t)m * n;
    void *A = malloc(ba * mf_abi_elem_bytes(in->fa)), *B = malloc(bb * mf_abi_elem_bytes(in->fb));
    void *C = malloc(bc * mf_abi_elem_bytes(in->fc)), *D = malloc(bc * mf_abi_elem_bytes(in->fd));
    /* SA: the scales, or a sparse row's metadata (n_meta bytes per row of A) */
    void *SA = S ? malloc(batch * m * S * mf_abi_elem_bytes(in->fs)) : in->sparse ? malloc(batch * m * in->n_meta) : NULL;
    void *SB = S ? malloc(batch * n * S * mf_abi_elem_bytes(in->fs)) : NULL;
    int rc = 0;
    if (!A || !B || !C || !D || (S && (!SA || !SB)) || (in->sparse && !SA)) {
        fprintf(stderr, "mmafuzz record: out of memory\n");
        rc = 1;
    }
    /* an operand form that changes the arithmetic (neg_a, neg_b, neg_ab, no_c) is named on the instr line;
     * every other variant computes what the table row computes */
    mf_instr form_row;
    if (mf_device_variant_is_form(variant) && !mf_instr_with_form(in, variant, &form_row))
        fprintf(out, "instr %s form=%s\n", in->name, variant);
    else
        fprintf(out, "instr %s\n", in->name);
    char line[16384];
    for (long long done = 0; !rc && done < runs;) {
        if (deadline > 0 && (double)time(NULL) >= deadline)
            break;
        size_t nt = (size_t)(runs - done) < batch ? (size_t)(runs - done) : batch;
        gen_fill_tiles(in, m, n, k, seed, (uint64_t)done, nt, A, B, C, SA, SB);
        if (mf_device_run_tiles(dev, in, variant, nt, A, B, C, SA, SB, D, err, sizeof err)) {
            fprintf(stderr, "mmafuzz record: %s\n", err);
            rc = 1;
            break;
        }
        for (size_t t = 0; t < nt; t++) {
            gen_rng st = rng_derive(seed, UINT64_C(0xA5A5A5A5), (uint64_t)done + t);   /* which output of the tile */
            uint64_t r = rng_next(&st);
            int i = (int)(r % (uint64_t)m), j = (int)((r >> 32) % (uint64_t)n);
            mf_case cs;
            mf_tile_get_case(in, m, n, k, A, B, C, SA, SB, t, i, j, &cs);
            uint64_t d = mf_abi_get(in->fd, D, (t * (size_t)m + (size_t)i) * (size_t)n + (size_t)j);
            if (mf_vec_format_case(in, &cs, &d, line, sizeof line) < 0) {
                fprintf(stderr, "mmafuzz record: case line too long\n");
                rc = 1;
                break;
            }
            fprintf(out, "%s\n", line);
        }
        done += (long long)nt;
    }
    free(A);
    free(B);
    free(C);
    free(D);
    free(SA);
    free(SB);
    return rc;
}

int cmd_record(int argc, char **argv)
{
    cli_opts_record a;
    int prc = cli_record_parse(argc, argv, &a);
    if (prc)
        return prc > 0 ? 0 : 2;  /* --help printed, or bad usage; nothing held */
    const char *spec = a.device, *pattern = a.instr;
    const char *outpath = a.out, *variant = a.variant;
    long long runs = a.runs, max_time = a.max_total_time;
    unsigned long long seed = a.seed;
    cli_record_free(&a);  /* the strings point into argv */
    if (!pattern || !outpath) {
        fprintf(stderr, "mmafuzz record: --instr and --out are required (see mmafuzz record --help)\n");
        return 2;
    }
    if (instr_select_check("record", "--instr ", &pattern, 1))
        return 2;
    mf_device *dev;
    char err[512];
    if (mf_device_open(spec, &dev, err, sizeof err)) {
        fprintf(stderr, "mmafuzz record: %s\n", err);
        return 1;
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", outpath);
    FILE *out = fopen(tmp, "w");
    if (!out) {
        fprintf(stderr, "mmafuzz record: %s: %s\n", tmp, strerror(errno));
        mf_device_close(dev);
        return 2;
    }
    const mf_device_info *di = mf_device_get_info(dev);
    fprintf(out, "# recorded by mmafuzz %s record on %s (%s; %s; %s)\n", MF_VERSION, di->name, di->arch, di->driver,
            di->runtime);
    fprintf(out, "# -seed %llu -runs %lld%s%s: case t is output (i,j) of tile t of the run, generators version %d "
                 "(run's default mix)\n", seed, runs, variant ? " --variant " : "", variant ? variant : "", MF_GEN_VERSION);
    double deadline = max_time ? (double)time(NULL) + (double)max_time : 0;
    int status = 0, recorded = 0;
    for (size_t i = 0; i < mf_instr_count && !status; i++) {
        const mf_instr *in = &mf_instr_table[i];
        if (!instr_selects(pattern, in->name))
            continue;
        if (!mf_device_supports(dev, in, variant)) {
            fprintf(stderr, "mmafuzz record: %s: not runnable on %s, skipped\n", in->name, di->name);
            continue;
        }
        status = record_one(dev, in, variant, runs, seed, out, deadline);
        recorded++;
    }
    if (!recorded && !status)
        fprintf(stderr, "mmafuzz record: no instruction matching '%s' runs on %s\n", pattern, di->name);
    mf_device_close(dev);
    if (fclose(out) != 0 || status || !recorded) {
        remove(tmp);
        return 1;
    }
    if (rename(tmp, outpath)) {
        fprintf(stderr, "mmafuzz record: rename %s -> %s: %s\n", tmp, outpath, strerror(errno));
        remove(tmp);
        return 2;
    }
    fprintf(stderr, "mmafuzz record: %d instruction(s) written to %s\n", recorded, outpath);
    return 0;
}
