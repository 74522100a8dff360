/*
 * cmd_model.c - the model-only subcommands: list, eval, check, bench.
 */
#include "check_rec.h"
#include "cli.h"
#include "decimal.h"
#include "instr_select.h"
#include "kernel_table.h"
#include "mf_device.h"
#include "mmafuzz_gen.h"
#include "run_stats.h"  /* the status line (rs_progress) */
#include "vecfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ list */

static const char *status_name(mf_status s)
{
    switch (s) {
    case MF_PEER_HW: return "verified(peer,hw)";
    case MF_PEER: return "verified(peer)";
    case MF_HW: return "verified(hw)";
    default: return "hypothesis";
    }
}

/* The columns of a table row, as `list` prints them in every format. */
typedef struct row_cols {
    char shape[32];
    char params[96];
    char scale[48];    /* block scales, or sparsity: "" for a dense unscaled row */
    char where[96];    /* "cuda sm_90a", "hip gfx942", or why it stays model-only */
    int on_device;     /* 1: a device wrapper runs it */
} row_cols;

static void row_columns(const mf_instr *in, row_cols *rc)
{
    snprintf(rc->shape, sizeof rc->shape, "m%dn%dk%d", in->m, in->n, in->k);
    switch (in->family) {
    case MF_T_FDPA:
    case MF_ST_FDPA:
    case MF_F16_EMU:
        snprintf(rc->params, sizeof rc->params, "F=%d L=%d e_zero=%d %s", in->F, in->L, in->e_zero, mf_rho_name(in->rho));
        break;
    case MF_GST_FDPA:
        snprintf(rc->params, sizeof rc->params, "G=%d F=%d e_zero=%d %s", in->x, in->F, in->e_zero, mf_rho_name(in->rho));
        break;
    case MF_TR_FDPA:
    case MF_GTR_FDPA:
        snprintf(rc->params, sizeof rc->params, "F=%d F2=%d L=%d", in->F, in->x, in->L);
        break;
    case MF_E_FDPA:
        snprintf(rc->params, sizeof rc->params, "L=%d", in->L);
        break;
    case MF_FTZ_MUL_ADD:
        snprintf(rc->params, sizeof rc->params, "P=%d", in->x);
        break;
    default:
        snprintf(rc->params, sizeof rc->params, "RNE");
        break;
    }
    rc->scale[0] = 0;
    if (in->n_scales)
        snprintf(rc->scale, sizeof rc->scale, "s=%s/%d", mf_format_get(in->fs)->name, in->block);
    else if (in->sparse)   /* kept products per group, metadata order rule, logical chunk length */
        snprintf(rc->scale, sizeof rc->scale, "sparse %s%s sp_L=%d", in->sp_group == 2 ? "1:2" : in->sp_group == 8 ? "4:8 pairs" : "2:4",
                 in->sparse == MF_SP_ORDERED ? " ordered" : "", in->sp_L);
    /* where it can run: a device target, or why it stays model-only */
    const char *why = NULL;
    const char *target = mf_device_target(in, &why);
    mf_device_form form;
    mf_device_form_of(in, &form);
    rc->on_device = 0;
    if (!target)
        snprintf(rc->where, sizeof rc->where, "%s", why);
    else if (!form.form)
        snprintf(rc->where, sizeof rc->where, "model-only: %s", form.why);
    else {
        snprintf(rc->where, sizeof rc->where, "%s %s", form.backend, target);
        rc->on_device = 1;
    }
}

/* One line describing a table row. */
static void describe(const mf_instr *in, char *buf, size_t len)
{
    row_cols rc;
    row_columns(in, &rc);
    snprintf(buf, len, "%-72s %s  a=%s b=%s c=%s d=%s%s%s  %s %s  %s  [%s]", in->name, rc.shape,
             mf_format_get(in->fa)->name, mf_format_get(in->fb)->name, mf_format_get(in->fc)->name,
             mf_format_get(in->fd)->name, rc.scale[0] ? " " : "", rc.scale, mf_family_name(in->family), rc.params,
             status_name(in->status), rc.where);
}

/* MATCH of arch_hypotheses.def: "" (every row), or '|'-separated pieces one of
 * which the qualifier contains. */
static int hyp_matches(const char *match, const char *qualifier)
{
    if (!*match)
        return 1;
    for (const char *p = match; *p;) {
        size_t n = strcspn(p, "|");
        char piece[64];
        snprintf(piece, sizeof piece, "%.*s", (int)n, p);
        if (strstr(qualifier, piece))
            return 1;
        p += n + (p[n] == '|');
    }
    return 0;
}

/* `list -v`: the rules a row takes from its architecture (model/arch_table.def)
 * and what each rests on.  The Khattak-Mikaitis models cover fp16 inputs only;
 * the hardware recordings of ../shared/vectors/hw test neither rule. */
static void print_evidence(const mf_instr *in)
{
    const mf_arch_info *ai = mf_arch_get(in->arch);
    int fused = in->family == MF_T_FDPA || in->family == MF_ST_FDPA || in->family == MF_GST_FDPA ||
                in->family == MF_F16_EMU;
    printf("    rules: NaN %s [%s]", in->nan_any ? "any" : "payload", mf_evidence_name(ai->nan_ev));
    if (fused) {
        printf("; zero sign %s [%s]", in->zero_plus ? "+0" : "sum's sign", mf_evidence_name(ai->zero_ev));
        /* f32 output, or a row-specific value: MMA-Sim 2.1.1; an architecture nobody has
         * measured or modelled: a hypothesis */
        mf_evidence ev = ai->zero_ev == MF_EV_HYP ? MF_EV_HYP : MF_EV_PEER;
        if (in->fd == MF_FMT_F16 && in->e_zero == ai->e_zero_f16) {
            ev = ai->e_zero_f16_ev;
            if (ev == MF_EV_PEER_KM && (in->fa != MF_FMT_F16 || in->fb != MF_FMT_F16))
                ev = MF_EV_PEER;
        }
        printf("; e_zero %d (%s out) [%s]", in->e_zero, mf_format_get(in->fd)->name, mf_evidence_name(ev));
    }
    if ((in->status == MF_HW || in->status == MF_PEER_HW) && fused && ai->zero_ev != MF_EV_HW)
        printf("; hw: its recordings test neither zero sign nor e_zero");
    printf("\n");
    /* an architecture nobody has measured: what each parameter is assumed to be and why */
    static const struct {
        const char *arch, *match, *param, *assumed, *evidence, *fit;
    } hyp[] = {
#define MF_ARCH_HYP(ARCH, MATCH, PARAM, ASSUMED, EVIDENCE, FIT) {#ARCH, MATCH, PARAM, ASSUMED, EVIDENCE, FIT},
#include "arch_hypotheses.def"
#undef MF_ARCH_HYP
    };
    for (size_t i = 0; i < sizeof hyp / sizeof hyp[0]; i++)
        if (!strcmp(hyp[i].arch, ai->name) && hyp_matches(hyp[i].match, in->qualifier))
            printf("    hypothesis (not run on hardware): %s = %s; evidence: %s; fit target: %s\n", hyp[i].param,
                   hyp[i].assumed, hyp[i].evidence, hyp[i].fit);
}

/* Print s as a JSON string. */
static void json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

/* Print s as a Markdown table cell ('|' escaped). */
static void md_cell(const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            putchar('\\');
        putchar(*s);
    }
}

enum { LIST_TEXT, LIST_MARKDOWN, LIST_JSON };

/* The coverage of the table by architecture (`list --summary`): rows by
 * status, and how many a device wrapper runs. */
enum { SUM_ROWS, SUM_PEER_HW, SUM_HW, SUM_PEER, SUM_HYP, SUM_DEVICE, SUM_MODEL_ONLY, SUM_N };
static const char *const sum_names[SUM_N] = {"rows", "peer+hw", "hw", "peer", "hypothesis", "wrapped", "model-only"};
static const char *const sum_keys[SUM_N] = {"rows", "peer_hw", "hw", "peer", "hypothesis", "device", "model_only"};

static void print_summary(const char *pattern, int format)
{
    long n[MF_ARCH_COUNT + 1][SUM_N];
    memset(n, 0, sizeof n);
    for (size_t i = 0; i < mf_instr_count; i++) {
        const mf_instr *in = &mf_instr_table[i];
        if (!instr_selects(pattern, in->name))
            continue;
        row_cols rc;
        row_columns(in, &rc);
        int st = in->status == MF_PEER_HW ? SUM_PEER_HW : in->status == MF_HW ? SUM_HW
                 : in->status == MF_PEER ? SUM_PEER : SUM_HYP;
        for (int t = 0; t < 2; t++) {
            long *c = n[t ? MF_ARCH_COUNT : (int)in->arch];
            c[SUM_ROWS]++;
            c[st]++;
            c[rc.on_device ? SUM_DEVICE : SUM_MODEL_ONLY]++;
        }
    }
    if (format == LIST_JSON)
        printf("{\"architectures\":[");
    else if (format == LIST_MARKDOWN) {
        printf("| architecture | vendor | target |");
        for (int k = 0; k < SUM_N; k++)
            printf(" %s |", sum_names[k]);
        printf("\n|---|---|---|");
        for (int k = 0; k < SUM_N; k++)
            printf("---:|");
        printf("\n");
    } else {
        printf("%-15s %-6s %-8s", "architecture", "vendor", "target");
        for (int k = 0; k < SUM_N; k++)
            printf(" %11s", sum_names[k]);
        printf("\n");
    }
    int first = 1;
    for (int a = 0; a <= MF_ARCH_COUNT; a++) {
        if (!n[a][SUM_ROWS])
            continue;
        const mf_arch_info *ai = a < MF_ARCH_COUNT ? mf_arch_get((mf_arch)a) : NULL;
        const char *name = ai ? ai->name : "all";
        const char *vendor = ai ? (mf_arch_is_amd((mf_arch)a) ? "AMD" : "NVIDIA") : "";
        const char *target = ai && ai->target ? ai->target : ai ? "-" : "";
        if (format == LIST_JSON) {
            if (a == MF_ARCH_COUNT)
                printf("],\"total\":{");
            else {
                printf("%s{\"name\":", first ? "" : ",");
                json_str(name);
                printf(",\"vendor\":");
                json_str(vendor);
                printf(",\"target\":");
                json_str(target);
                printf(",");
            }
            for (int k = 0; k < SUM_N; k++)
                printf("%s\"%s\":%ld", k ? "," : "", sum_keys[k], n[a][k]);
            printf("}");
        } else if (format == LIST_MARKDOWN) {
            if (ai)
                printf("| %s | %s | %s |", name, vendor, target);
            else
                printf("| **all** | | |");
            for (int k = 0; k < SUM_N; k++)
                printf(ai ? " %ld |" : " **%ld** |", n[a][k]);
            printf("\n");
        } else {
            printf("%-15s %-6s %-8s", name, vendor, target);
            for (int k = 0; k < SUM_N; k++)
                printf(" %11ld", n[a][k]);
            printf("\n");
        }
        first = 0;
    }
    if (format == LIST_JSON)
        printf("}\n");
}

static void print_row(const mf_instr *in, int format, int verbose, int first)
{
    if (format == LIST_TEXT) {
        char line[448];
        describe(in, line, sizeof line);
        puts(line);
        if (verbose)
            print_evidence(in);
        return;
    }
    row_cols rc;
    row_columns(in, &rc);
    const char *f[4] = {mf_format_get(in->fa)->name, mf_format_get(in->fb)->name, mf_format_get(in->fc)->name,
                        mf_format_get(in->fd)->name};
    if (format == LIST_MARKDOWN) {
        printf("| `%s` | %s | %s %s %s %s | ", in->name, rc.shape, f[0], f[1], f[2], f[3]);
        md_cell(rc.scale);
        printf(" | %s | %s | %s | ", mf_family_name(in->family), rc.params, status_name(in->status));
        md_cell(rc.where);
        printf(" |\n");
        return;
    }
    static const char *const keys[4] = {"a", "b", "c", "d"};
    printf("%s{\"name\":", first ? "" : ",\n");
    json_str(in->name);
    printf(",\"arch\":");
    json_str(mf_arch_name(in->arch));
    printf(",\"m\":%d,\"n\":%d,\"k\":%d", in->m, in->n, in->k);
    for (int i = 0; i < 4; i++) {
        printf(",\"%s\":", keys[i]);
        json_str(f[i]);
    }
    printf(",\"scale_or_sparsity\":");
    json_str(rc.scale);
    printf(",\"family\":");
    json_str(mf_family_name(in->family));
    printf(",\"params\":");
    json_str(rc.params);
    printf(",\"status\":");
    json_str(status_name(in->status));
    printf(",\"device\":%s,\"where\":", rc.on_device ? "true" : "false");
    json_str(rc.where);
    printf("}");
}

int cmd_list(int argc, char **argv)
{
    cli_opts_list a;
    int prc = cli_list_parse(argc, argv, &a);
    if (prc)
        return prc > 0 ? 0 : 2;  /* --help printed, or bad usage; nothing held */
    const char *pattern = a.npos ? a.pos[0] : NULL;
    int verbose = a.verbose > 0;
    int summary = a.summary > 0;
    const char *fmt = a.format;
    int format = !strcmp(fmt, "text") ? LIST_TEXT : !strcmp(fmt, "markdown") ? LIST_MARKDOWN
                 : !strcmp(fmt, "json") ? LIST_JSON : -1;
    if (format < 0) {
        fprintf(stderr, "mmafuzz list: --format %s: expected text, markdown or json\n", fmt);
        cli_list_free(&a);
        return 2;
    }
    if (verbose && format != LIST_TEXT) {
        fprintf(stderr, "mmafuzz list: -v is for --format text only\n");
        cli_list_free(&a);
        return 2;
    }
    if (pattern && instr_select_check("list", "", &pattern, 1)) {
        cli_list_free(&a);
        return 1;
    }
    if (summary) {
        print_summary(pattern, format);
        cli_list_free(&a);
        return 0;
    }
    if (format == LIST_MARKDOWN)
        printf("| instruction | shape | a b c d | scales / sparsity | family | parameters | status | runs on |\n"
               "|---|---|---|---|---|---|---|---|\n");
    else if (format == LIST_JSON)
        printf("[");
    int first = 1;
    for (size_t i = 0; i < mf_instr_count; i++) {
        const mf_instr *in = &mf_instr_table[i];
        if (!instr_selects(pattern, in->name))
            continue;
        print_row(in, format, verbose, first);
        first = 0;
    }
    if (format == LIST_JSON)
        printf("]\n");
    cli_list_free(&a);
    return 0;
}

/* ------------------------------------------------------------------ eval */

static void print_unknown(const char *prefix, const char *name)
{
    const mf_instr *near[3];
    size_t n = mf_instr_closest(name, near, 3);
    fprintf(stderr, "%sunknown instruction '%s'", prefix, name);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "%s%s", i ? ", " : "; closest: ", near[i]->name);
    fprintf(stderr, "\n");
}

static void trace_to_stdout(void *ctx, const char *text)
{
    (void)ctx;
    printf("  %s\n", text);
}

int cmd_eval(int argc, char **argv)
{
    cli_opts_eval a;
    int prc = cli_eval_parse(argc, argv, &a);
    if (prc)
        return prc > 0 ? 0 : 2;  /* --help printed, or bad usage; nothing held */
    int trace = a.trace > 0;
    const char *name = a.pos[0];
    char line[8192] = "";
    size_t pos = 0;
    for (int i = 1; i < a.npos; i++) {
        int n = snprintf(line + pos, sizeof line - pos, "%s%s", pos ? " " : "", a.pos[i]);
        if (n < 0 || (size_t)n >= sizeof line - pos) {
            fprintf(stderr, "mmafuzz eval: case too long\n");
            cli_eval_free(&a);
            return 2;
        }
        pos += (size_t)n;
    }
    const mf_instr *in = mf_instr_find(name);
    if (!in) {
        print_unknown("mmafuzz eval: ", name);
        cli_eval_free(&a);
        return 2;
    }
    cli_eval_free(&a);
    mf_vec_case vc;
    char err[300];
    if (mf_vec_parse_case(in, line, &vc, err, sizeof err)) {
        fprintf(stderr, "mmafuzz eval: %s\n", err);
        return 2;
    }
    mf_trace tr = {trace_to_stdout, NULL};
    if (trace)
        printf("%s (%s)\n", in->name, mf_family_name(in->family));
    uint64_t d = mf_eval_trace(in, &vc.cs, trace ? &tr : NULL);
    char hex[24], dec[64];
    mf_vec_format_value(in->fd, d, hex, sizeof hex);
    mf_decimal(in->fd, d, 17, dec, sizeof dec);
    printf("d=%s  %s\n", hex, dec);
    if (vc.has_d && !mf_output_equal(in, d, vc.d)) {
        char exp_hex[24];
        mf_vec_format_value(in->fd, vc.d, exp_hex, sizeof exp_hex);
        mf_decimal(in->fd, vc.d, 17, dec, sizeof dec);
        printf("expected d=%s  %s\n", exp_hex, dec);
        return 1;
    }
    return 0;
}

/* ----------------------------------------------------------------- check */

/* Cases whose expected d is superseded by a hardware measurement (shared/
 * vectors/README.md: "where a file disagrees with hardware you measured,
 * hardware wins").  Kept as "instr case" keys with their d. */
typedef struct override_set {
    char **key;
    uint64_t *d;
    int *used;
    const char **from;   /* the override file of each case */
    size_t n, cap;
} override_set;

static void case_key(const mf_vec_case *vc, char *buf, size_t len)
{
    const char *form = mf_instr_form_name(vc->instr);
    int n = snprintf(buf, len, "%s%s%s ", vc->instr->name, form ? " form=" : "", form ? form : "");
    if (n > 0 && (size_t)n < len)
        mf_vec_format_case(vc->instr, &vc->cs, NULL, buf + n, len - (size_t)n);
}

static int override_load(override_set *o, const char *path)
{
    char err[512];
    mf_vec_reader *r = mf_vec_open(path, err, sizeof err);
    if (!r) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    mf_vec_case vc;
    int rc;
    while ((rc = mf_vec_next(r, &vc)) == MF_VEC_CASE) {
        if (!vc.has_d) {
            fprintf(stderr, "%s:%ld: expected a d= field (the hardware's output)\n", path, vc.line);
            mf_vec_close(r);
            return -1;
        }
        if (o->n == o->cap) {
            size_t cap = o->cap ? 2 * o->cap : 16;
            char **k = realloc(o->key, cap * sizeof *k);
            uint64_t *d = k ? realloc(o->d, cap * sizeof *d) : NULL;
            int *u = d ? realloc(o->used, cap * sizeof *u) : NULL;
            const char **fr = u ? realloc(o->from, cap * sizeof *fr) : NULL;
            if (k) o->key = k;
            if (d) o->d = d;
            if (u) o->used = u;
            if (fr) o->from = fr;
            if (!k || !d || !u || !fr) {
                fprintf(stderr, "out of memory\n");
                mf_vec_close(r);
                return -1;
            }
            o->cap = cap;
        }
        char key[8192];
        case_key(&vc, key, sizeof key);
        o->key[o->n] = strdup(key);
        o->d[o->n] = vc.d;
        o->used[o->n] = 0;
        o->from[o->n] = path;
        o->n++;
    }
    if (rc != MF_VEC_EOF) {
        fprintf(stderr, "%s\n", mf_vec_error(r));
        mf_vec_close(r);
        return -1;
    }
    mf_vec_close(r);
    return 0;
}

/* @return the index of the override of case vc, or -1. */
static long override_find(const override_set *o, const mf_vec_case *vc)
{
    if (!o->n)
        return -1;
    char key[8192];
    case_key(vc, key, sizeof key);
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->key[i], key))
            return (long)i;
    return -1;
}

static void override_free(override_set *o)
{
    for (size_t i = 0; i < o->n; i++)
        free(o->key[i]);
    free(o->key);
    free(o->d);
    free(o->used);
    free(o->from);
}

/* check's status line: cases and failures so far, bytes read of all the files, ETA. */
static void check_progress(rs_progress *p, long long cases, long long failed, double done, double total)
{
    char c[24], r[24], b[24], eta[80], line[300];
    double el = rs_now() - p->t0;
    rs_progress_eta(p, done, total, eta, sizeof eta);
    snprintf(line, sizeof line, "mmafuzz check: #%.0fs cases %s (%s/s)  bytes %s%s  failed %lld", el,
             rs_human((double)cases, c, sizeof c), rs_human(el > 0 ? (double)cases / el : 0, r, sizeof r),
             rs_human(done, b, sizeof b), eta, failed);
    rs_progress_print(p, line);
}

int cmd_check(int argc, char **argv)
{
    cli_opts_check a;
    int prc = cli_check_parse(argc, argv, &a);
    if (prc)
        return prc > 0 ? 0 : 2;  /* --help printed, or bad usage; nothing held */
    int skip_unknown = a.skip_unknown > 0;
    long long max_errors = a.errors;
    override_set ovr = {0};
    const cli_list *ovr_paths = &a.override;
    int ovr_bad = 0;
    for (int f = 0; f < ovr_paths->n && !ovr_bad; f++)
        ovr_bad = override_load(&ovr, ovr_paths->v[f]) != 0;
    if (ovr_bad) {
        override_free(&ovr);
        cli_check_free(&a);
        return 2;
    }
    const char **files = a.pos;
    int nfiles = a.npos;
    /* recordings (.npz): check_rec.c; the kernel tables, --kernel, threads */
    char table_paths[2][4096];
    const char *tables[16];
    check_rec_opts ro = {.kernel_file = a.kernel, .tables = tables, .max_errors = max_errors, .jobs = (int)a.jobs,
                         .json = a.json > 0};
    if (a.kernel_table.n) {
        for (int i = 0; i < a.kernel_table.n && i < 16; i++)
            tables[ro.ntables++] = a.kernel_table.v[i];
    } else {
        int nd = mf_ktable_defaults(table_paths, 2);
        for (int i = 0; i < nd; i++)
            tables[ro.ntables++] = table_paths[i];
    }
    if (ro.jobs == 0)
        ro.jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
    check_rec_totals rt = {0};
    for (int f = 0; f < nfiles; f++)
        if (ro.json && !check_is_recording(files[f])) {
            fprintf(stderr, "mmafuzz check: --json is for recordings (.npz); %s is not one\n", files[f]);
            override_free(&ovr);
            cli_check_free(&a);
            return 2;
        }
    /* counters per (table row, form): slot row * (MF_INSTR_FORMS + 1) + form number */
    const size_t nslots = mf_instr_count * (MF_INSTR_FORMS + 1);
    long *pass = calloc(nslots, sizeof *pass), *fail = calloc(nslots, sizeof *fail);
    int *order = calloc(nslots, sizeof *order);
    const mf_instr *slot_in = NULL;
    size_t slot_idx = 0;
    int nseen = 0;
    long total_pass = 0, total_fail = 0, total_skip = 0, shown = 0;
    int status = 0;
    double bytes_total = 0, bytes_done = 0;  /* progress: bytes of the files as stored */
    for (int f = 0; f < nfiles; f++) {
        struct stat sb;
        if (stat(files[f], &sb) == 0)
            bytes_total += (double)sb.st_size;
    }
    rs_progress prog;
    rs_progress_start(&prog, 10);
    for (int f = 0; f < nfiles && status != 2; f++) {
        if (check_is_recording(files[f])) {
            rt.shown = shown;
            if (check_recording(files[f], &ro, &rt) == 2)
                status = 2;
            shown = rt.shown;
            continue;
        }
        char err[512];
        mf_vec_reader *r = mf_vec_open(files[f], err, sizeof err);
        if (!r) {
            fprintf(stderr, "%s\n", err);
            status = 2;
            break;
        }
        mf_vec_set_skip_unknown(r, skip_unknown);
        mf_vec_case vc;
        int rc;
        long file_cases = 0;
        while ((rc = mf_vec_next(r, &vc)) != MF_VEC_EOF) {
            if (rc == MF_VEC_UNKNOWN) {
                if (skip_unknown)
                    continue;
                char prefix[300];
                snprintf(prefix, sizeof prefix, "%.*s", (int)(strstr(mf_vec_error(r), ": unknown") ?
                         strstr(mf_vec_error(r), ": unknown") - mf_vec_error(r) + 2 : 0), mf_vec_error(r));
                print_unknown(prefix, mf_vec_unknown_name(r));
                status = 2;
                break;
            }
            if (rc == MF_VEC_ERROR) {
                fprintf(stderr, "%s\n", mf_vec_error(r));
                status = 2;
                break;
            }
            const mf_instr *in = vc.instr;
            if (in != slot_in) {   /* a new instr line: its counters' slot (table row, form) */
                slot_in = in;
                slot_idx = (size_t)(mf_instr_find(in->name) - mf_instr_table) * (MF_INSTR_FORMS + 1) +
                           (size_t)mf_instr_form_index(in);
            }
            size_t idx = slot_idx;
            file_cases++;
            if (!pass[idx] && !fail[idx])
                order[nseen++] = (int)idx;
            if (!vc.has_d) {
                fprintf(stderr, "%s:%ld: expected a d= field to compare with\n", files[f], vc.line);
                status = 2;
                break;
            }
            uint64_t d = mf_eval(in, &vc.cs);
            long ov = override_find(&ovr, &vc);
            if (ov >= 0) {
                ovr.used[ov]++;
                if (ovr.used[ov] == 1)
                    printf("%s:%ld: %s: d superseded by %s\n", files[f], vc.line, in->name, ovr.from[ov]);
                vc.d = ovr.d[ov];
            }
            if (mf_output_equal(in, d, vc.d)) {
                pass[idx]++;
                total_pass++;
            } else {
                fail[idx]++;
                total_fail++;
                if (shown < max_errors) {
                    char cbuf[4096], g[24], e[24];
                    mf_vec_format_case(in, &vc.cs, NULL, cbuf, sizeof cbuf);
                    mf_vec_format_value(in->fd, d, g, sizeof g);
                    mf_vec_format_value(in->fd, vc.d, e, sizeof e);
                    printf("%s:%ld: %s %s => %s, expected %s\n", files[f], vc.line, in->name, cbuf, g, e);
                    shown++;
                }
            }
            if ((file_cases & 4095) == 0 && rs_progress_due(&prog, 0))
                check_progress(&prog, total_pass + total_fail, total_fail, bytes_done + (double)mf_vec_offset(r),
                               bytes_total);
        }
        total_skip += mf_vec_skipped(r);
        if (status != 2 && !file_cases && !mf_vec_skipped(r)) {
            fprintf(stderr, "%s: no cases (expected an 'instr NAME' line and case lines)\n", files[f]);
            status = 2;
        }
        struct stat sb;
        bytes_done += stat(files[f], &sb) == 0 ? (double)sb.st_size : (double)mf_vec_offset(r);
        mf_vec_close(r);
    }
    if (prog.printed)
        check_progress(&prog, total_pass + total_fail, total_fail, bytes_done, bytes_total);
    rs_progress_end(&prog);
    total_pass += rt.pass;
    total_fail += rt.fail;
    if (status != 2 && ro.json) {
        printf("{\"passed\": %ld, \"failed\": %ld}\n", total_pass, total_fail);
        status = total_fail ? 1 : 0;
    } else if (status != 2) {
        for (int i = 0; i < nseen; i++) {
            const mf_instr *in = &mf_instr_table[(size_t)order[i] / (MF_INSTR_FORMS + 1)];
            const char *form = mf_instr_form_name_at(order[i] % (MF_INSTR_FORMS + 1));
            char name[200];
            snprintf(name, sizeof name, "%s%s%s", in->name, form ? " form=" : "", form ? form : "");
            printf("%-76s %7ld passed %6ld failed\n", name, pass[order[i]], fail[order[i]]);
        }
        if (total_skip)
            printf("%ld passed, %ld failed, %ld skipped\n", total_pass, total_fail, total_skip);
        else
            printf("%ld passed, %ld failed\n", total_pass, total_fail);
        status = total_fail ? 1 : 0;
    }
    override_free(&ovr);
    free(pass);
    free(fail);
    free(order);
    cli_check_free(&a);
    return status;
}

/* ----------------------------------------------------------------- bench */

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int cmd_bench(int argc, char **argv)
{
    cli_opts_bench a;
    int prc = cli_bench_parse(argc, argv, &a);
    if (prc)
        return prc > 0 ? 0 : 2;  /* --help printed, or bad usage; nothing held */
    const char *const *patterns = a.instr.v;
    int npat = a.instr.n;
    unsigned long long seed = a.seed;
    long long min_ms = a.ms;
    long long runs = a.given.runs ? a.runs : 0;
    if (instr_select_check("bench", "--instr ", patterns, npat)) {
        cli_bench_free(&a);
        return 2;
    }
    enum { POOL = 1024 };   /* cases per instruction, evaluated round and round */
    mf_case *pool = malloc(POOL * sizeof *pool);
    if (!pool) {
        cli_bench_free(&a);
        return 2;
    }
    double fam_min[MF_FAMILY_COUNT];
    const mf_instr *fam_slowest[MF_FAMILY_COUNT] = {0};
    for (int f = 0; f < MF_FAMILY_COUNT; f++)
        fam_min[f] = 1e300;
    volatile uint64_t sink = 0;
    size_t measured = 0;
    for (size_t i = 0; i < mf_instr_count; i++) {
        const mf_instr *in = &mf_instr_table[i];
        if (!instr_selects_any(patterns, npat, in->name))
            continue;
        gen_rng s = rng_derive((uint64_t)seed, rng_hash_str(in->name), 0);
        for (int j = 0; j < POOL; j++) {
            mf_case *cs = &pool[j];
            memset(cs, 0, sizeof *cs);
            cs->c = gen_random_finite(in->fc, &s);
            for (int k = 0; k < in->k; k++) {
                cs->a[k] = gen_random_finite(in->fa, &s);
                cs->b[k] = gen_random_finite(in->fb, &s);
            }
            for (int k = 0; k < in->n_scales; k++) {
                /* scales near 2^0 keep the sums in range */
                cs->sa[k] = (in->fs == MF_FMT_UE8M0 ? 120 : 0x30) + rng_below(&s, 16);
                cs->sb[k] = (in->fs == MF_FMT_UE8M0 ? 120 : 0x30) + rng_below(&s, 16);
            }
        }
        /* WINDOWS timed windows, the median rate reported: a pause of the
         * machine (another process, a VM's steal time) spoils one window, not
         * the figure */
        enum { WINDOWS = 5 };
        double rates[WINDOWS];
        for (int w = 0; w < WINDOWS; w++) {
            long long n = 0;
            double t0 = now_seconds(), t;
            do {
                for (int j = 0; j < POOL; j++)
                    sink += mf_eval(in, &pool[j]);
                n += POOL;
                t = now_seconds() - t0;
            } while (runs ? n < runs / WINDOWS + (runs % WINDOWS != 0) : t * 1000 * WINDOWS < (double)min_ms);
            rates[w] = (double)n / t;
        }
        for (int a = 1; a < WINDOWS; a++)   /* insertion sort of five */
            for (int b = a; b > 0 && rates[b - 1] > rates[b]; b--) {
                double x = rates[b];
                rates[b] = rates[b - 1];
                rates[b - 1] = x;
            }
        double rate = rates[WINDOWS / 2];
        printf("%-76s %-11s %10.2f M dot products/s\n", in->name, mf_family_name(in->family), rate * 1e-6);
        fflush(stdout);
        if (rate < fam_min[in->family]) {
            fam_min[in->family] = rate;
            fam_slowest[in->family] = in;
        }
        measured++;
    }
    if (measured > 1) {
        printf("\nslowest instruction per family (one core):\n");
        for (int f = 0; f < MF_FAMILY_COUNT; f++)
            if (fam_slowest[f])
                printf("  %-11s %10.2f M dot products/s  %s\n", mf_family_name((mf_family)f), fam_min[f] * 1e-6,
                       fam_slowest[f]->name);
    }
    free(pool);
    cli_bench_free(&a);
    (void)sink;
    return measured ? 0 : 1;
}
