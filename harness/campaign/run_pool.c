/*
 * run_pool.c - bounded pool of saved cases for corpus mutation.
 */
#include "run_pool.h"

#include <stdlib.h>
#include <string.h>

int pool_init(pool *p, size_t cap)
{
    memset(p, 0, sizeof *p);
    p->cap = cap ? cap : 1;
    p->e = malloc(p->cap * sizeof *p->e);
    return p->e ? 0 : -1;
}

void pool_free(pool *p)
{
    free(p->e);
    memset(p, 0, sizeof *p);
}

void pool_add(pool *p, const mf_instr *in, const mf_case *cs)
{
    p->version++;
    size_t slot;
    if (p->n < p->cap) {
        slot = p->n++;
    } else {
        slot = p->next;
        p->next = (p->next + 1) % p->cap;
    }
    p->e[slot].in = in;
    p->e[slot].cs = *cs;
    /* A dense row's case has no metadata (mf_tile_get_case leaves the field
     * as it was), but sparse rows of the same formats and K mutate it too
     * (pool_compatible): give it a defined one, so that what they draw from
     * it is a function of the case.  With whatever the field held, runs of
     * the same seed differed (GPU against GPU, H200). */
    if (!in->sparse)
        memset(p->e[slot].cs.meta, 0, sizeof p->e[slot].cs.meta);
}

int pool_compatible(const mf_instr *from, const mf_instr *to)
{
    return from->fa == to->fa && from->fb == to->fb && from->fc == to->fc && from->k == to->k &&
           from->fs == to->fs && from->n_scales == to->n_scales;
}

size_t pool_view(const pool *p, const mf_instr *to, const pool_entry **view, size_t max)
{
    size_t w = 0;
    for (size_t i = 0; i < p->n && w < max; i++)
        if (pool_compatible(p->e[i].in, to))
            view[w++] = &p->e[i];
    return w;
}
