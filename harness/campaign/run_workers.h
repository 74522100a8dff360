/*
 * run_workers.h - a small fixed pool of threads for the model side of the
 * fuzz driver.  One job at a time: every worker calls fn(ctx, w, nworkers)
 * once; the caller starts a job, does its own work (the device call), then
 * waits for the job to finish.
 */
#ifndef MMAFUZZ_RUN_WORKERS_H
#define MMAFUZZ_RUN_WORKERS_H

typedef struct workers workers;
typedef void (*worker_fn)(void *ctx, int w, int nworkers);

/* @return a pool of n >= 1 threads, or NULL. */
workers *workers_new(int n);
int workers_count(const workers *p);
/* Start fn on every worker (the previous job must have been waited for). */
void workers_start(workers *p, worker_fn fn, void *ctx);
/* Wait until every worker has returned from the current job. */
void workers_wait(workers *p);
void workers_free(workers *p);

#endif
