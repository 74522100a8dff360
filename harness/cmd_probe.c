/*
 * cmd_probe.c - `mmafuzz probe --device SPEC [--instr PATTERN]`: the
 * directed experiments of the papers (harness/refine/probe.h) run on a
 * device and on the model, as a feature table per instruction.
 */
#include "cli.h"
#include "instr_select.h"
#include "mf_device.h"
#include "probe.h"
#include "run_minimize.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct dev_ctx {
    mz_dev z;
} dev_ctx;

static int run_dev(void *ctx, const mf_case *cs, size_t n, uint64_t *out)
{
    dev_ctx *d = ctx;
    return mz_dev_run(&d->z, cs, n, out);
}

/* Print one instruction's feature table; @return the number of features where device and model differ. */
static int print_table(const mf_instr *in, const rf_probe_run *dv, const rf_probe_run *md)
{
    int diff = 0;
    printf("\n%s  (%s, F %d, L %d, e_zero %d, %s%s)\n", in->name, mf_family_name(in->family), in->F, in->L,
           in->e_zero, mf_rho_name(in->rho), in->zero_plus ? ", zero sum +0" : "");
    printf("  %-32s %-30s %-30s\n", "feature", "device", "model");
    for (int p = 0; p < rf_probe_count; p++) {
        int same = !strcmp(dv->r[p].text, md->r[p].text);
        /* a NaN is a NaN where the row's rule says any NaN equals any other (FP64, AMD: VECTORS.md) */
        if (!same && rf_probes[p].rule == PR_NAN_KIND && in->nan_any && dv->r[p].value < 2 && md->r[p].value < 2)
            same = 1;
        diff += !same;
        printf("  %-32s %-30s %-30s%s\n", rf_probes[p].feature, dv->r[p].text, md->r[p].text, same ? "" : "  *");
    }
    return diff;
}

int cmd_probe(int argc, char **argv)
{
    cli_opts_probe a;
    int prc = cli_probe_parse(argc, argv, &a);
    if (prc)
        return prc > 0 ? 0 : 2;  /* --help printed, or bad usage; nothing held */
    const char *spec = a.device;
    int check_row = a.check_row > 0, list = a.list > 0;
    const char *pats[64];
    int npat = a.instr.n;
    for (int i = 0; i < npat; i++)
        pats[i] = a.instr.v[i];
    cli_probe_free(&a);  /* the strings point into argv */
    if (instr_select_check("probe", "--instr ", pats, npat))
        return 2;
    if (list) {
        for (int p = 0; p < rf_probe_count; p++)
            printf("%-32s j = %d..%d  %s\n", rf_probes[p].feature, rf_probes[p].lo, rf_probes[p].hi,
                   rf_probes[p].source);
        return 0;
    }
    if (!spec) {
        fprintf(stderr, "mmafuzz probe: --device SPEC is required (cuda, hip, model:ARCH)\n");
        return 2;
    }
    mf_device *dev;
    char err[512];
    if (mf_device_open(spec, &dev, err, sizeof err)) {
        fprintf(stderr, "mmafuzz probe: %s\n", err);
        return 2;
    }
    const mf_device_info *di = mf_device_get_info(dev);
    printf("probe: %s (arch %s)\n", di->name, di->arch);
    int status = 0, ninstr = 0, ndiff = 0, nbad = 0;
    long cases = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (size_t i = 0; i < mf_instr_count; i++) {
        const mf_instr *in = &mf_instr_table[i];
        if (in->arch != di->model_arch || !instr_selects_any(pats, npat, in->name) || !mf_device_supports(dev, in, NULL))
            continue;
        static dev_ctx dc;
        memset(&dc, 0, sizeof dc);
        if (mz_dev_init(&dc.z, dev, in, NULL)) {
            fprintf(stderr, "mmafuzz probe: %s: %s\n", in->name, dc.z.err);
            status = 2;
            continue;
        }
        static rf_probe_run dv, md;
        rf_row mr = rf_row_of(in);
        if (rf_probe_all(in, run_dev, &dc, &dv)) {
            fprintf(stderr, "mmafuzz probe: %s: device error: %s\n", in->name, dc.z.err);
            mz_dev_free(&dc.z);
            status = 2;
            continue;
        }
        mz_dev_free(&dc.z);
        rf_probe_all(in, rf_run_row, &mr, &md);
        cases += dv.cases;
        ninstr++;
        ndiff += print_table(in, &dv, &md) > 0;
        if (check_row) {
            char buf[2048];
            int bad = rf_probe_check_row(in, &dv, buf, sizeof buf);
            if (bad) {
                printf("  check against the row: %d parameters differ\n%s", bad, buf);
                nbad++;
            } else if (in->family == MF_T_FDPA || in->family == MF_ST_FDPA) {
                printf("  check against the row: every inferred parameter agrees\n");
            }
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double sec = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("\n%d instructions, %ld probe cases on the device in %.2f s; %d differ from the model", ninstr, cases,
           sec, ndiff);
    if (check_row)
        printf("; %d disagree with their table row", nbad);
    printf("\n");
    mf_arch arch = di->model_arch;  /* di belongs to dev: read it before the close */
    mf_device_close(dev);
    if (status)
        return status;
    if (!ninstr) {
        fprintf(stderr, "mmafuzz probe: no instruction of %s that the device runs is selected\n", mf_arch_name(arch));
        return 2;
    }
    return ndiff || nbad ? 1 : 0;
}
