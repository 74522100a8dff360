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

/* `devices --json`: every CUDA and HIP device, as one JSON object. */
static int devices_json(void)
{
    static const struct {
        mf_backend b;
        const char *name;
    } backends[] = {{MF_BACKEND_CUDA, "cuda"}, {MF_BACKEND_HIP, "hip"}};
    printf("{\"devices\": [");
    int first = 1;
    for (size_t q = 0; q < sizeof backends / sizeof backends[0]; q++) {
        int n = mf_device_count(backends[q].b);
        for (int d = 0; d < n; d++) {
            char spec[32], err[512];
            snprintf(spec, sizeof spec, "%s:%d", backends[q].name, d);
            mf_device *dev;
            printf("%s{\"spec\": ", first ? "" : ", ");
            json_put_str(stdout, spec);
            printf(", \"backend\": ");
            json_put_str(stdout, backends[q].name);
            first = 0;
            if (mf_device_open(spec, &dev, err, sizeof err)) {
                printf(", \"error\": ");
                json_put_str(stdout, err);
                printf("}");
                continue;
            }
            const mf_device_info *di = mf_device_get_info(dev);
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
            mf_device_close(dev);
        }
    }
    printf("], \"cuda\": %d, \"hip\": %d}\n", mf_device_count(MF_BACKEND_CUDA), mf_device_count(MF_BACKEND_HIP));
    return 0;
}

int cmd_devices(int argc, char **argv)
{
    cli_args a;
    int prc = cli_parse(CLI_CMD_devices, argc, argv, &a);
    if (prc) {
        cli_free(&a);
        return prc > 0 ? 0 : 2;
    }
    const char *pattern = a.npos ? a.pos[0] : NULL;
    const char *any = CLI_V(&a, devices, any).s;
    int json = CLI_V(&a, devices, json).given > 0;
    cli_free(&a);
    if (any) {
        if (!strcmp(any, "cuda"))
            return mf_device_count(MF_BACKEND_CUDA) > 0 ? 0 : 1;
        if (!strcmp(any, "hip"))
            return mf_device_count(MF_BACKEND_HIP) > 0 ? 0 : 1;
        if (!strcmp(any, "model"))
            return 0;  /* model:ARCH devices are always there */
        fprintf(stderr, "mmafuzz devices: --any: expected cuda, hip or model, got '%s'\n", any);
        return 2;
    }
    if (json)
        return devices_json();
    if (pattern && instr_select_check("devices", "", &pattern, 1))
        return 1;
    int ncuda = mf_device_count(MF_BACKEND_CUDA);
    mf_device *devs[16];
    int ndev = 0;
    printf("CUDA devices: %d\n", ncuda);
    for (int d = 0; d < ncuda && ndev < 16; d++) {
        char spec[32], err[512];
        snprintf(spec, sizeof spec, "cuda:%d", d);
        if (mf_device_open(spec, &devs[ndev], err, sizeof err)) {
            printf("  %s: cannot open: %s\n", spec, err);
            continue;
        }
        const mf_device_info *di = mf_device_get_info(devs[ndev]);
        printf("  %s: %s  %s  table architecture %s  %s  %s  %s  pci %s\n", spec, di->name, di->arch,
               di->model_arch < MF_ARCH_COUNT ? mf_arch_name(di->model_arch) : "(none)", di->driver, di->runtime,
               di->uuid, di->pci_bus_id[0] ? di->pci_bus_id : "?");
        ndev++;
    }
    /* AMD GPUs: the HIP layer has its own backend; say what it sees */
    int nhip = mf_device_count(MF_BACKEND_HIP);
    printf("HIP devices: %d\n", nhip);
    if (!nhip) {
        mf_device *hd = NULL;
        char herr[256];
        if (mf_device_open("hip", &hd, herr, sizeof herr) == MF_DEV_OK)
            mf_device_close(hd);
        else
            printf("  hip: %s\n", herr);
    }
    printf("\n%-58s %-8s %s\n", "instruction", "target", ncuda ? "status per device" : "status (no CUDA device present)");
    size_t shown = 0, runnable = 0;
    for (size_t i = 0; i < mf_instr_count; i++) {
        const mf_instr *in = &mf_instr_table[i];
        if (mf_arch_is_amd(in->arch) || !instr_selects(pattern, in->name))
            continue;
        const char *why_t;
        const char *target = mf_device_target(in, &why_t);
        mf_device_form form;
        mf_device_form_of(in, &form);
        printf("%-58s %-8s", in->name, target ? target : "-");
        shown++;
        if (!target) {
            printf(" %s\n", why_t);
            continue;
        }
        if (!form.form) {
            printf(" model-only: %s\n", form.why);
            continue;
        }
        if (!ndev) {
            printf(" wrapped; needs a %s GPU\n", target);
            continue;
        }
        int several = form.variants[0] && form.variants[1];
        for (int d = 0; d < ndev; d++) {
            char vs[128] = "";
            size_t pos = 0;
            int ok = 0;
            for (int v = 0; form.variants[v]; v++) {
                const char *vn = form.variants[v];
                if (mf_device_supports(devs[d], in, vn)) {
                    ok = 1;
                    int w = snprintf(vs + pos, sizeof vs - pos, "%s%s", pos ? " " : "", *vn ? vn : "default");
                    if (w > 0 && (size_t)w < sizeof vs - pos)
                        pos += (size_t)w;
                }
            }
            if (ok) {
                runnable++;
                printf(" cuda:%d runs (%s)", d, several ? vs : form.form);
            } else {
                printf(" cuda:%d no (needs %s)", d, target);
            }
        }
        printf("\n");
    }
    for (int d = 0; d < ndev; d++)
        mf_device_close(devs[d]);
    if (!shown && pattern) {
        fprintf(stderr, "mmafuzz devices: no NVIDIA instruction matches '%s'\n", pattern);
        return 1;
    }
    if (ndev)
        printf("\n%zu of %zu instructions run here\n", runnable, shown);
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
    cli_args a;
    int prc = cli_parse(CLI_CMD_record, argc, argv, &a);
    if (prc) {
        cli_free(&a);
        return prc > 0 ? 0 : 2;
    }
    const char *spec = CLI_V(&a, record, device).s, *pattern = CLI_V(&a, record, instr).s;
    const char *outpath = CLI_V(&a, record, out).s, *variant = CLI_V(&a, record, variant).s;
    long long runs = CLI_V(&a, record, runs).i, max_time = CLI_V(&a, record, max_total_time).i;
    unsigned long long seed = CLI_V(&a, record, seed).u;
    cli_free(&a);  /* the strings point into argv */
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
