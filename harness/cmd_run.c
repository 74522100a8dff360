/*
 * cmd_run.c - `mmafuzz run`: the fuzz driver.  The options are
 * run_options.c (from the flags table cli_flags.def), the campaign state
 * file run_state.c, and the campaign itself run_loop.c.
 */
#include "cli.h"
#include "mf_device.h"
#include "run_loop.h"
#include "run_options.h"

#include <stdio.h>
#include <stdlib.h>

int cmd_run(int argc, char **argv)
{
    run_opts o;
    int prc = run_opts_parse(argc, argv, &o);
    if (prc) {
        run_opts_free(&o);
        return prc > 0 ? 0 : 2;
    }
    char err[700];
    mf_device *dev;
    if (mf_device_open(o.device, &dev, err, sizeof err)) {
        fprintf(stderr, "mmafuzz run: --device %s: %s\n", o.device, err);
        run_opts_free(&o);
        return 2;
    }
    run_instr *ri;
    int ni;
    long long mismatches = 0;
    run_err rc = run_select(&o, dev, &ri, &ni);
    if (rc == RUN_OK) {
        rc = run_loop(&o, dev, ri, ni, &mismatches);
        free(ri);
    }
    mf_device_close(dev);
    int done = 1;  /* --campaign: every tile of the shard done */
    for (int q = 0; o.campaign && q < o.def->ninstr; q++)
        done &= o.cstate->in[q].done == cp_shard_tiles(o.def->instr[q].tiles, o.shard_i, o.shard_n);
    int campaign = o.campaign != NULL;
    run_opts_free(&o);
    if (rc != RUN_OK)
        return 2;
    if (campaign)  /* for schedulers: 0 the shard is complete (its disagreements are in its state), 3 not yet */
        return done ? 0 : 3;
    return mismatches ? 1 : 0;
}
