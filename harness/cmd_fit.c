/*
 * cmd_fit.c - `mmafuzz fit INSTR [--start ARCH] [--device SPEC] FILE|DIR...`:
 * the table row that explains recorded cases, stores and probe results
 * (harness/refine/fit.h), printed as an instr_table.def line.
 */
#include "cli.h"
#include "fit.h"
#include "mf_device.h"
#include "probe.h"
#include "run_minimize.h"
#include "run_store.h"
#include "vecfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct fit_ctx {
    const mf_instr *target;
    rf_cases *data;
    long from_files;
} fit_ctx;

static int on_case(const st_case *c, void *vctx)
{
    fit_ctx *f = vctx;
    if (c->in && c->has_d && !strcmp(c->in->qualifier, f->target->qualifier)) {
        if (rf_cases_add(f->data, &c->cs, c->d))
            return 1;
        f->from_files++;
    }
    return 0;
}

typedef struct check_ctx {
    const mf_instr *target;
    const rf_row *row;
    long n, agree;
} check_ctx;

static int on_check(const st_case *c, void *vctx)
{
    check_ctx *k = vctx;
    if (c->in == k->target && c->has_d) {
        rf_obs o = {c->cs, c->d};
        k->n++;
        k->agree += rf_agrees(k->row, &o);
    }
    return 0;
}

static void sink(void *ctx, const mf_case *cs, uint64_t d)
{
    rf_cases_add(ctx, cs, d);
}

static int run_dev(void *ctx, const mf_case *cs, size_t n, uint64_t *out)
{
    return mz_dev_run(ctx, cs, n, out);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The point as a line of the target's table (its name, shape and formats). */
static void print_row(const char *label, const rf_row *r, const mf_instr *target)
{
    rf_row p = *r;
    p.in.name = target->name;
    p.in.qualifier = target->qualifier;
    p.in.arch = target->arch;
    p.in.status = target->status;
    char buf[600];
    printf("%s%s\n", label, rf_row_def_line(&p, buf, sizeof buf));
}

static void print_case(const mf_instr *target, const rf_row *r, const rf_obs *o, const char *note)
{
    char line[8192], mh[24];
    mf_vec_format_case(target, &o->cs, &o->d, line, sizeof line);
    mf_vec_format_value(target->fd, rf_row_eval(r, &o->cs), mh, sizeof mh);
    printf("  %s model=%s%s\n", line, mh, note);
}

int cmd_fit(int argc, char **argv)
{
    cli_opts_fit a;
    int prc = cli_fit_parse(argc, argv, &a);
    if (prc)
        return prc > 0 ? 0 : 2;  /* --help printed, or bad usage; nothing held */
    /* the strings point into argv; the lists are copied before cli_fit_free */
    const char *instr = a.pos[0], *start_arch = a.start, *spec = a.device;
    const char *paths[256], *checks[32];
    int np = 0, nc = 0;
    for (int i = 1; i < a.npos && np < 256; i++)
        paths[np++] = a.pos[i];
    for (int i = 0; i < a.check.n && nc < 32; i++)
        checks[nc++] = a.check.v[i];
    long long runs = a.given.runs ? a.runs : -1;
    unsigned long long seed = a.seed;
    long long max_rounds = a.max_rounds, tries = a.tries;
    int too_many = a.npos - 1 > 256;
    cli_fit_free(&a);
    if (too_many) {
        fprintf(stderr, "mmafuzz fit: at most 256 FILE|DIR\n");
        return 2;
    }
    const mf_instr *target = mf_instr_find(instr);
    if (!target) {
        const mf_instr *near[3];
        size_t n = mf_instr_closest(instr, near, 3);
        fprintf(stderr, "mmafuzz fit: unknown instruction '%s'%s", instr, n ? "; closest:" : "");
        for (size_t i = 0; i < n; i++)
            fprintf(stderr, " %s", near[i]->name);
        fprintf(stderr, "\n");
        return 2;
    }
    const mf_instr *start = target;
    static mf_instr nearest;  /* target with the parameters of start_arch's closest row */
    static char nearest_name[160];
    if (start_arch) {
        mf_arch a = mf_arch_by_name(start_arch);
        start = a == MF_ARCH_COUNT ? NULL : mf_instr_on_arch(target, a);
        const mf_instr *donor = start || a == MF_ARCH_COUNT ? NULL : rf_nearest_start(target, a, &nearest);
        if (donor) {
            snprintf(nearest_name, sizeof nearest_name, "%s's parameters", donor->name);
            nearest.name = nearest_name;
            start = &nearest;
            printf("start: %s has no %s; starting from the parameters of its closest row, %s\n", start_arch,
                   target->qualifier, donor->name);
        }
        if (!start) {
            fprintf(stderr, "mmafuzz fit: --start %s: no such architecture, or it has no row like %s\n", start_arch,
                    target->qualifier);
            return 2;
        }
    }
    if (!spec && !np) {
        fprintf(stderr, "mmafuzz fit: nothing to fit: give FILE|DIR or --device\n");
        return 2;
    }
    double t0 = now();
    static rf_cases data;
    fit_ctx fc = {target, &data, 0};
    if (np) {
        long bad = st_read(paths, np, on_case, &fc);
        if (bad) {
            fprintf(stderr, "mmafuzz fit: %ld files could not be read\n", bad);
            return 2;
        }
    }
    /* the device: probes first (their inference seeds the search), then random cases */
    mf_device *dev = NULL;
    static mz_dev z;
    rf_row seeds[1];
    int nseeds = 0;
    long probe_cases = 0, random_cases = 0, sep_cases = 0;
    if (spec) {
        char err[512];
        if (mf_device_open(spec, &dev, err, sizeof err)) {
            fprintf(stderr, "mmafuzz fit: %s\n", err);
            return 2;
        }
        const mf_instr *drow = mf_instr_on_arch(target, mf_device_get_info(dev)->model_arch);
        if (!drow)
            drow = target;
        if (!mf_device_supports(dev, drow, NULL) || mz_dev_init(&z, dev, drow, NULL)) {
            fprintf(stderr, "mmafuzz fit: %s does not run %s%s%s\n", spec, drow->name, z.err[0] ? ": " : "", z.err);
            mf_device_close(dev);
            return 2;
        }
        static rf_probe_run pr;
        size_t before = data.n;
        rf_probe_set_sink(sink, &data);
        /* a sparse row is probed through its dense view (probe.h): legal metadata, the products at the
         * kept positions */
        int prc = rf_probe_all(start, run_dev, &z, &pr);
        rf_probe_set_sink(NULL, NULL);
        if (prc) {
            fprintf(stderr, "mmafuzz fit: device error: %s\n", z.err);
            return 2;
        }
        probe_cases = (long)(data.n - before);
        /* the probes' inference as a seed point */
        seeds[0] = rf_row_of(start);
        for (int p = 0; p < rf_probe_count; p++) {
            const rf_probe_result *r = &pr.r[p];
            if (r->status != RF_PROBE_OK)
                continue;
            switch (rf_probes[p].param) {
            case RP_F: seeds[0].in.F = (int16_t)r->value; break;
            case RP_L: seeds[0].in.L = (int16_t)r->value; break;
            case RP_RHO: seeds[0].in.rho = (mf_rho)r->value; break;
            case RP_EZERO: seeds[0].in.e_zero = (int16_t)r->value; break;
            case RP_ZERO_PLUS: seeds[0].in.zero_plus = (uint8_t)r->value; break;
            default: break;
            }
        }
        nseeds = 1;
        if (runs < 0)
            runs = 2000;
        uint64_t rng = (uint64_t)seed;
        mf_case *cs = malloc((size_t)(runs > 0 ? runs : 1) * sizeof *cs);
        uint64_t *out = malloc((size_t)(runs > 0 ? runs : 1) * sizeof *out);
        if (!cs || !out) {
            fprintf(stderr, "mmafuzz fit: out of memory\n");
            return 2;
        }
        for (long long i = 0; i < runs; i++)
            rf_random_case(start, &rng, &cs[i]);
        if (runs > 0 && mz_dev_run(&z, cs, (size_t)runs, out)) {
            fprintf(stderr, "mmafuzz fit: device error: %s\n", z.err);
            return 2;
        }
        for (long long i = 0; i < runs; i++)
            rf_cases_add(&data, &cs[i], out[i]);
        random_cases = (long)runs;
        free(cs);
        free(out);
    }
    if (!data.n) {
        fprintf(stderr, "mmafuzz fit: no case of %s in the input\n", target->qualifier);
        if (dev)
            mf_device_close(dev);
        return 2;
    }
    static rf_space sp;
    if (rf_space_build(start, seeds, nseeds, &sp)) {
        fprintf(stderr, "mmafuzz fit: out of memory\n");
        return 2;
    }
    size_t searched = sp.n;
    long long evals = 0;
    double ts = now();
    rf_space_filter(&sp, &data, &evals);
    double search_s = now() - ts;
    long long search_evals = evals;
    uint64_t rng = (uint64_t)seed * 0x2545F4914F6CDD1DULL + 7;
    static rf_cases extra;  /* separating cases found (without a device) */
    int rounds = 0, status = 0;
    if (sp.n > 0) {
        rf_space_sort(&sp);
        for (size_t i = 1; i < sp.n;) {
            mf_case sep;
            long t = sp.n > 64 ? tries / 4 : tries;
            if (!rf_separate(&sp.c[0].row, &sp.c[i].row, &data, &rng, t, &sep, &evals)) {
                sp.c[i].equivalent = 1;
                i++;
                continue;
            }
            if (dev && rounds < max_rounds) {
                uint64_t d;
                if (mz_dev_run(&z, &sep, 1, &d)) {
                    fprintf(stderr, "mmafuzz fit: device error: %s\n", z.err);
                    status = 2;
                    break;
                }
                rounds++;
                sep_cases++;
                rf_cases_add(&data, &sep, d);
                rf_cases one = {&data.v[data.n - 1], 1, 1};
                rf_space_filter(&sp, &one, &evals);
                for (size_t q = 0; q < sp.n; q++)
                    sp.c[q].equivalent = 0;
                rf_space_sort(&sp);
                i = 1;
                if (!sp.n)
                    break;
                continue;
            }
            /* no device: name the case that separates them */
            sp.c[i].equivalent = 0;
            if (extra.n < 8)
                rf_cases_add(&extra, &sep, 0);
            i++;
        }
    }
    double total_s = now() - t0;
    printf("fit %s from %s's row: %zu cases (%ld from files, %ld probes, %ld random, %ld separating on the device)\n",
           target->name, mf_arch_name(start->arch), data.n, fc.from_files, probe_cases, random_cases, sep_cases);
    printf("searched %zu rows: %lld candidate evaluations in %.3f s (%.3g/s); %lld in all, total %.2f s\n",
           searched, search_evals, search_s, search_s > 0 ? (double)search_evals / search_s : 0.0, evals, total_s);
    rf_row table_row = rf_row_of(target), start_row = rf_row_of(start);
    const rf_row *chosen = NULL;
    char diff[400];
    if (!sp.n) {
        /* none fits: the closest, by agreement count */
        rf_space_free(&sp);
        rf_space_build(start, seeds, nseeds, &sp);
        rf_space_count(&sp, &data, 20000, &evals);
        rf_space_sort(&sp);
        chosen = &sp.c[0].row;
        printf("result: no row of the space fits; the closest agrees with %ld of %zu cases\n", sp.c[0].agree,
               data.n < 20000 ? data.n : (size_t)20000);
        print_row("closest: ", chosen, target);
        printf("diff against %s: %s\n", start->name, rf_row_diff(&start_row, chosen, diff, sizeof diff)[0] ? diff : "(none)");
        /* the cases it misses, minimized on the device (harness/minimize: ddmin over the
         * products and c, then simpler values) while the device still disagrees with the
         * closest row; a case read from a file is shown as recorded (the device that gave
         * it is not at hand), and so is one the closest row misses only by its chunk order
         * (the minimizer evaluates table rows, which have none) */
        printf("cases it misses (first 5%s):\n", dev ? ", minimized on the device" : "; --device minimizes them");
        int shown = 0;
        for (size_t q = 0; q < data.n && shown < 5; q++)
            if (!rf_agrees(chosen, &data.v[q])) {
                char note[96] = "";
                rf_obs o = data.v[q];
                if (dev && !chosen->reverse) {
                    const mf_instr *saved = z.model;
                    mz_result res;
                    z.model = &chosen->in;
                    int mr = mz_minimize(&z, &o.cs, &res);
                    z.model = saved;
                    if (mr < 0 && mr != MZ_STOPPED) {
                        fprintf(stderr, "mmafuzz fit: device error: %s\n", z.err);
                        status = 2;
                        break;
                    }
                    if (mr == 0) {
                        int before = 0;
                        for (int k = 0; k < target->k; k++)
                            before += o.cs.a[k] != 0 && o.cs.b[k] != 0;
                        snprintf(note, sizeof note, "  (minimized: %d of %d products, c %s)", res.products, before,
                                 res.c_nonzero ? "kept" : "zero");
                        o.cs = res.cs;
                        o.d = res.d_dev;
                    } else {
                        snprintf(note, sizeof note, "  (as recorded: this device agrees with the row on it)");
                    }
                }
                print_case(target, chosen, &o, note);
                shown++;
            }
        status = status ? status : 1;
    } else {
        size_t neq = 0, nsep = 0;
        for (size_t i = 1; i < sp.n; i++)
            neq += sp.c[i].equivalent, nsep += !sp.c[i].equivalent;
        chosen = &sp.c[0].row;
        if (nsep) {
            printf("result: underdetermined: %zu rows agree with every case; %zu of them are separable\n", sp.n,
                   nsep);
            status = status ? status : 1;
        } else {
            printf("result: fitted: one row agrees with every case (%zu more agree and no case separating them "
                   "was found in %lld tries each; the one closest to the start row is shown)\n",
                   neq, tries);
        }
        print_row("row: ", chosen, target);
        printf("diff against %s: %s\n", start->name,
               rf_row_diff(&start_row, chosen, diff, sizeof diff)[0] ? diff : "(none)");
        printf("diff against the table's %s: %s\n", target->name,
               rf_row_diff(&table_row, chosen, diff, sizeof diff)[0] ? diff : "(none)");
        printf("agreement: %zu of %zu cases\n", data.n, data.n);
        if (nsep) {
            printf("candidates (closest to the start row first):\n");
            for (size_t i = 0, shown = 0; i < sp.n && shown < 10; i++)
                if (i == 0 || !sp.c[i].equivalent) {
                    printf("  %s\n", rf_row_diff(&start_row, &sp.c[i].row, diff, sizeof diff)[0] ? diff : "(start row)");
                    shown++;
                }
            printf("separating cases (run them on the device, or use --device):\ninstr %s\n", target->name);
            for (size_t q = 0; q < extra.n; q++) {
                char line[8192];
                mf_vec_format_case(target, &extra.v[q].cs, NULL, line, sizeof line);
                printf("%s\n", line);
            }
        }
        int is_table = rf_row_same(chosen, &table_row), table_in = is_table;
        for (size_t i = 0; i < sp.n; i++)
            table_in |= rf_row_same(&sp.c[i].row, &table_row);
        if (is_table || table_in) {
            printf("table row %s: %s\n", target->name, is_table ? "recovered exactly" : "among the agreeing rows");
        } else {
            /* outside the searched space (a start far from it): held against the same cases, and
             * against the fitted row on separating cases */
            size_t miss = 0;
            for (size_t q = 0; q < data.n; q++)
                miss += !rf_agrees(&table_row, &data.v[q]);
            mf_case sep;
            long long ev = 0;
            if (miss)
                printf("table row %s: not among the agreeing rows (misses %zu of %zu cases)\n", target->name, miss,
                       data.n);
            else if (rf_separate(chosen, &table_row, &data, &rng, (long)tries, &sep, &ev))
                printf("table row %s: not among the agreeing rows (agrees with every case, but a case separates "
                       "it from the fitted row)\n", target->name);
            else
                printf("table row %s: among the agreeing rows (outside the searched space: agrees with every case, "
                       "and no case separating it from the fitted row was found in %lld tries)\n",
                       target->name, tries);
        }
    }
    for (int i = 0; i < nc; i++) {
        check_ctx k = {target, chosen, 0, 0};
        const char *one[1] = {checks[i]};
        long bad = st_read(one, 1, on_check, &k);
        printf("check %s: %ld of %ld cases of %s agree%s\n", checks[i], k.agree, k.n, target->name,
               bad ? " (some files unreadable)" : "");
        if (k.agree != k.n && !status)
            status = 1;
    }
    if (dev) {
        mz_dev_free(&z);
        mf_device_close(dev);
    }
    rf_space_free(&sp);
    rf_cases_free(&data);
    rf_cases_free(&extra);
    return status;
}
