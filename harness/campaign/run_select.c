/*
 * run_select.c - which instructions `mmafuzz run` runs, and how it checks
 * them (run_loop.h: run_select): the instructions the patterns select that
 * the device runs, or a campaign definition's (its shard locked and its
 * state read), their tile shapes, resume counters and quotas; and whether
 * the device verifies them itself (--verify).
 */
#include "run_loop.h"

#include "campaign.h"
#include "instr_select.h"
#include "run_fs.h"
#include "run_state.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --campaign: the definition's instructions, the lock and the shard state. */
static run_err select_campaign(const run_opts *o, mf_device *dev, run_instr **out, int *nout)
{
    const cp_def *d = o->def;
    char err[1400];
    int fd = cp_lock_shard(o->shard_dir, err, sizeof err);  /* creates the shard's folders, none a link */
    if (fd < 0) {
        fprintf(stderr, "mmafuzz run: %s\n", err);
        return RUN_ERR_STORE;
    }
    ((run_opts *)o)->lock_fd = fd;  /* held until the process exits */
    int rc = cp_state_read(o->shard_dir, d, o->shard_i, o->shard_n, o->cstate, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "mmafuzz run: %s\n", err);
        return RUN_ERR_INPUT;
    }
    run_instr *ri = calloc((size_t)d->ninstr, sizeof *ri);
    if (!ri)
        return RUN_ERR_NOMEM;
    int ni = 0;
    long long left = 0;
    for (int q = 0; q < d->ninstr; q++) {
        const cp_instr *ci = &d->instr[q];
        const mf_instr *in = mf_instr_find(ci->name);
        run_instr *r = &ri[ni];
        r->in = in;
        r->model = in && o->model ? mf_instr_on_arch(in, mf_arch_by_name(o->model)) : in;
        if (!in || !r->model || !mf_device_supports(dev, in, NULL) ||
            mf_device_tile_shape(dev, in, NULL, &r->m, &r->n, &r->k) || r->m != ci->m || r->n != ci->n ||
            r->k != ci->k) {
            fprintf(stderr, "mmafuzz run: %s: the device %s does not run it as the definition says (%dx%dx%d)\n",
                    ci->name, o->device, ci->m, ci->n, ci->k);
            free(ri);
            return RUN_ERR_USAGE;
        }
        r->cp = q;
        r->tiles_per_batch = (size_t)(o->batch / (r->m * r->n));
        if (r->tiles_per_batch < 1)
            r->tiles_per_batch = 1;
        unsigned long long own = cp_shard_tiles(ci->tiles, o->shard_i, o->shard_n);
        r->next_tile = r->done_tile = o->cstate->in[q].done;
        r->quota = (long long)(own - r->done_tile) * r->m * r->n;
        left += r->quota;
        ni++;
    }
    fprintf(stderr, "mmafuzz run: shard %d/%d: %s, %lld cases left\n", o->shard_i, o->shard_n,
            rc == 1 ? "starting" : "resuming from its state", left);
    *out = ri;
    *nout = ni;
    return RUN_OK;
}

/* --verify: gpu when asked, or by default on a device that verifies on
 * itself (a CUDA device whose build has the device-code model) and can
 * verify every instruction; else host.  The device says what it can do
 * (mf_device_verifies, mf_device_can_verify). */
static run_err choose_verify(const run_opts *o, mf_device *dev, const run_instr *ri, int ni)
{
    run_opts *w = (run_opts *)o;  /* the decision is part of the options from here on */
    int want_gpu = o->verify && !strcmp(o->verify, "gpu"), want_host = o->verify && !strcmp(o->verify, "host");
    w->verify_gpu = 0;
    if (want_host)
        return RUN_OK;
    if (want_gpu && !mf_device_verifies(dev)) {
        fprintf(stderr, "mmafuzz run: --verify gpu needs a CUDA device (--device cuda[:N|:all|:N,M]); %s checks its "
                        "cases on the host (--verify host)\n", o->device);
        return RUN_ERR_USAGE;
    }
    for (int i = 0; i < ni; i++) {
        const char *why = NULL;
        if (!mf_device_can_verify(dev, ri[i].in, NULL, ri[i].model, &why)) {
            if (want_gpu) {
                fprintf(stderr, "mmafuzz run: --verify gpu: %s: %s (--verify host checks it)\n", ri[i].in->name,
                        why ? why : "not verifiable on this device");
                return RUN_ERR_USAGE;
            }
            return RUN_OK;  /* the default: host for all when one cannot (one pipeline per run) */
        }
    }
    w->verify_gpu = mf_device_verifies(dev);
    return RUN_OK;
}

static run_err select_instrs(const run_opts *o, mf_device *dev, run_instr **out, int *nout);

run_err run_select(const run_opts *o, mf_device *dev, run_instr **out, int *nout)
{
    run_err rc = o->campaign ? select_campaign(o, dev, out, nout) : select_instrs(o, dev, out, nout);
    if (rc == RUN_OK && (rc = choose_verify(o, dev, *out, *nout)) != RUN_OK) {
        free(*out);
        *out = NULL;
        *nout = 0;
    }
    return rc;
}

static run_err select_instrs(const run_opts *o, mf_device *dev, run_instr **out, int *nout)
{
    *out = NULL;
    *nout = 0;
    if (instr_select_check("run", "--instr ", o->pat, o->npat))
        return RUN_ERR_USAGE;
    run_instr *ri = calloc(mf_instr_count, sizeof *ri);
    if (!ri) {
        fprintf(stderr, "mmafuzz run: out of memory\n");
        return RUN_ERR_NOMEM;
    }
    int ni = 0, skipped = 0;
    for (size_t i = 0; i < mf_instr_count; i++) {
        const mf_instr *in = &mf_instr_table[i];
        if (!instr_selects_any(o->pat, o->npat, in->name))
            continue;
        if (!mf_device_supports(dev, in, NULL)) {
            if (o->npat && o->verbose)
                fprintf(stderr, "mmafuzz run: %s: not runnable on %s, skipped\n", in->name, o->device);
            skipped += o->npat > 0;
            continue;
        }
        run_instr *r = &ri[ni];
        r->in = in;
        r->model = o->model ? mf_instr_on_arch(in, mf_arch_by_name(o->model)) : in;
        if (!r->model) {
            if (o->npat && o->verbose)
                fprintf(stderr, "mmafuzz run: %s: model %s has no such instruction, skipped\n", in->name, o->model);
            skipped += o->npat > 0;
            continue;
        }
        if (mf_device_tile_shape(dev, in, NULL, &r->m, &r->n, &r->k) || r->k != in->k || r->m < 1 || r->n < 1) {
            fprintf(stderr, "mmafuzz run: %s: the device gives no usable tile shape, skipped\n", in->name);
            continue;
        }
        r->tiles_per_batch = (size_t)(o->batch / (r->m * r->n));
        if (r->tiles_per_batch < 1)
            r->tiles_per_batch = 1;
        ni++;
    }
    if (skipped && !o->verbose)
        fprintf(stderr, "mmafuzz run: %d selected instruction%s not runnable on %s%s, skipped (-v lists them)\n",
                skipped, skipped == 1 ? "" : "s", o->device, o->model ? " or not in the --model architecture" : "");
    if (ni == 0) {
        fprintf(stderr, "mmafuzz run: no instruction to run on %s\n", o->device);
        free(ri);
        return RUN_ERR_USAGE;
    }
    /* resume: the tile counters */
    if (o->resume) {
        run_state_tile *t = NULL;
        int nt = 0;
        run_opts dummy = *o;
        if (run_state_read(o->resume, &dummy, 1, 1, &t, &nt, NULL)) {
            free(ri);
            return RUN_ERR_INPUT;
        }
        for (int i = 0; i < ni; i++)
            for (int q = 0; q < nt; q++)
                if (!strcmp(t[q].name, ri[i].in->name))
                    ri[i].next_tile = ri[i].done_tile = ri[i].start_tile = t[q].tile;
        free(t);
    }
    /* quotas: -runs split evenly over the instructions (rounded up, without overflow) */
    for (int i = 0; i < ni; i++)
        ri[i].quota = o->runs < 0 ? -1 : o->runs / ni + (o->runs % ni != 0);
    *out = ri;
    *nout = ni;
    return RUN_OK;
}

