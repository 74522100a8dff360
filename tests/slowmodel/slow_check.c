/*
 * slow_check.c - checks the slow model against .vec files: every case's d
 * (a hardware recording or the peer model's output, never the model's) must
 * be reproduced under the comparison rule of shared/VECTORS.md.
 *
 * usage: slow_check [-errors=N] [-override=FILE]... FILE...
 * -override: a case of FILE (same instruction and inputs) replaces the d of
 * the same case in the checked files, e.g. a peer-model case that hardware
 * superseded (corpus/findings/).
 * Exit status: 0 all agree, 1 some disagree, 2 bad input.
 */
#include "slowmodel.h"
#include "vecfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct override {
    const mf_instr *in;
    mf_case cs;
    uint64_t d;
} override;

static override *ovr;
static size_t novr;

/* Read the cases of an override file.  @return 0, or 2 on bad input. */
static int read_overrides(const char *path)
{
    char err[512];
    mf_vec_reader *r = mf_vec_open(path, err, sizeof err);
    if (!r) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    mf_vec_case vc;
    int rc;
    while ((rc = mf_vec_next(r, &vc)) == MF_VEC_CASE) {
        if (!vc.has_d)
            continue;
        override *o = realloc(ovr, (novr + 1) * sizeof *ovr);
        if (!o)
            break;
        ovr = o;
        ovr[novr].in = vc.instr;
        ovr[novr].cs = vc.cs;
        ovr[novr++].d = vc.d;
    }
    if (rc != MF_VEC_EOF)
        fprintf(stderr, "%s\n", mf_vec_error(r));
    mf_vec_close(r);
    return rc == MF_VEC_EOF ? 0 : 2;
}

int main(int argc, char **argv)
{
    long max_errors = 10, shown = 0, pass = 0, fail = 0, form_skipped = 0;
    long *fails = calloc(mf_instr_count, sizeof *fails);
    int status = 0;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "-errors=", 8)) {
            max_errors = atol(argv[i] + 8);
            continue;
        }
        if (!strncmp(argv[i], "-override=", 10)) {
            if (read_overrides(argv[i] + 10))
                return 2;
            continue;
        }
        char err[512];
        mf_vec_reader *r = mf_vec_open(argv[i], err, sizeof err);
        if (!r) {
            fprintf(stderr, "%s\n", err);
            return 2;
        }
        mf_vec_set_skip_unknown(r, 1);
        mf_vec_case vc;
        int rc;
        while ((rc = mf_vec_next(r, &vc)) != MF_VEC_EOF) {
            if (rc == MF_VEC_UNKNOWN)
                continue;
            if (rc == MF_VEC_ERROR) {
                fprintf(stderr, "%s\n", mf_vec_error(r));
                status = 2;
                break;
            }
            if (!vc.has_d)
                continue;
            if (mf_instr_form_index(vc.instr)) {   /* wgmma's operand forms (form=): not in the slow model */
                form_skipped++;
                continue;
            }
            for (size_t o = 0; o < novr; o++)
                if (ovr[o].in == vc.instr && !memcmp(&ovr[o].cs, &vc.cs, sizeof vc.cs))
                    vc.d = ovr[o].d;
            uint64_t d = slow_eval(vc.instr, &vc.cs);
            if (slow_output_equal(vc.instr, d, vc.d)) {
                pass++;
                continue;
            }
            fail++;
            fails[vc.instr - mf_instr_table]++;
            if (shown++ < max_errors) {
                char line[4096], g[24], e[24];
                mf_vec_format_case(vc.instr, &vc.cs, NULL, line, sizeof line);
                mf_vec_format_value(vc.instr->fd, d, g, sizeof g);
                mf_vec_format_value(vc.instr->fd, vc.d, e, sizeof e);
                printf("%s:%ld: %s %s => slow %s, expected %s\n", argv[i], vc.line, vc.instr->name, line, g, e);
            }
        }
        mf_vec_close(r);
    }
    for (size_t i = 0; i < mf_instr_count; i++)
        if (fails[i])
            printf("%-76s %6ld disagree\n", mf_instr_table[i].name, fails[i]);
    if (form_skipped)
        printf("slow model: %ld agree, %ld disagree, %ld skipped (wgmma operand forms, form=)\n", pass, fail,
               form_skipped);
    else
        printf("slow model: %ld agree, %ld disagree\n", pass, fail);
    free(fails);
    free(ovr);
    return status ? status : fail ? 1 : 0;
}
