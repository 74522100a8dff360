/*
 * run_workers.c - the worker pool (see run_workers.h), on POSIX threads.
 */
#include "run_workers.h"

#include <pthread.h>
#include <stdlib.h>

struct workers {
    int n;
    pthread_t *t;
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    unsigned long gen;   /* job number */
    int pending;         /* workers still running the current job */
    int quit;
    worker_fn fn;
    void *ctx;
};

typedef struct warg {
    workers *p;
    int w;
} warg;

static void *worker_main(void *arg)
{
    warg a = *(warg *)arg;
    free(arg);
    workers *p = a.p;
    unsigned long seen = 0;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (p->gen == seen && !p->quit)
            pthread_cond_wait(&p->go, &p->mu);
        if (p->quit) {
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        seen = p->gen;
        worker_fn fn = p->fn;
        void *ctx = p->ctx;
        pthread_mutex_unlock(&p->mu);
        fn(ctx, a.w, p->n);
        pthread_mutex_lock(&p->mu);
        if (--p->pending == 0)
            pthread_cond_broadcast(&p->done);
        pthread_mutex_unlock(&p->mu);
    }
}

workers *workers_new(int n)
{
    if (n < 1)
        n = 1;
    workers *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->n = n;
    p->t = calloc((size_t)n, sizeof *p->t);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    for (int i = 0; p->t && i < n; i++) {
        warg *a = malloc(sizeof *a);
        if (!a || (a->p = p, a->w = i, pthread_create(&p->t[i], NULL, worker_main, a) != 0)) {
            free(a);
            p->n = i;
            workers_free(p);
            return NULL;
        }
    }
    return p->t ? p : (free(p), NULL);
}

int workers_count(const workers *p) { return p->n; }

void workers_start(workers *p, worker_fn fn, void *ctx)
{
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->ctx = ctx;
    p->pending = p->n;
    p->gen++;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
}

void workers_wait(workers *p)
{
    pthread_mutex_lock(&p->mu);
    while (p->pending > 0)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

void workers_free(workers *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n; i++)
        pthread_join(p->t[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->done);
    free(p->t);
    free(p);
}
