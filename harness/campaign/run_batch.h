/*
 * run_batch.h - the batches of `mmafuzz run` (run_loop.h): a batch is tiles
 * of one instruction in the device ABI's arrays, generated and compared
 * with the model by the worker threads chunk by chunk; every disagreement
 * is counted by bucket (a tally per chunk) and the first ones are recorded
 * as candidates for filing (run_file.c).  What is recorded depends on the
 * chunks only, not on the number of threads or their timing.
 */
#ifndef MMAFUZZ_RUN_BATCH_H
#define MMAFUZZ_RUN_BATCH_H

#include "buckets.h"
#include "campaign.h"
#include "mf_device.h"
#include "mmafuzz_gen.h"
#include "run_pool.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define CHUNKS 1024         /* a batch is cut into this many chunks (fewer if it has fewer tiles) */
#define REC_PER_CHUNK 64     /* plain run: disagreements per chunk recorded as candidates for filing (all are counted) */
#define GPU_RECS 4096        /* --verify gpu, plain run: disagreements of a call recorded as candidates for filing */
_Static_assert(GPU_RECS <= CHUNKS * REC_PER_CHUNK, "a call's candidates fit the recs of a batch");

/* One recorded mismatch of a batch. */
typedef struct rec {
    unsigned long long tile;  /* the tile's index in the campaign */
    int i, j;
    uint64_t dev, model;
    int cls;                  /* --campaign: its signature class */
    uint64_t bk;              /* its bucket id (rf_classify) */
} rec;

/* The disagreements of one chunk by bucket (buckets.h): every disagreement
 * is classified, so the counts are exact; entries in order of first
 * sighting, found through an open-addressing table of their indices. */
typedef struct tally_e {
    uint64_t id;
    long long n;
    rec first;                /* its first disagreement in the chunk (describes a bucket new to the run) */
} tally_e;

typedef struct tally {
    tally_e *e;
    size_t n, cap;
    int32_t *slot;            /* nslot (a power of two) entries: an index into e, or -1 */
    size_t nslot;
    int oom;                  /* a sighting was lost for want of memory: the run stops */
} tally;

typedef struct batch {
    int slot;                 /* index into the run's instruction list */
    const mf_instr *in;
    const mf_instr *model;    /* the row the model evaluates (in, unless --model) */
    int m, n, k;
    size_t ntiles;
    unsigned long long first_tile;  /* slot t holds tile tile_base + tile_stride * (first_tile + t) */
    unsigned long long tile_base, tile_stride;
    int camp;                 /* --campaign: record per tile (trecs) and count per class (ncls) */
    rec *trecs;               /* CP_TILE_RECS per tile: the first mismatch of each class in the tile */
    unsigned char *trec_n;    /* per tile */
    long long *ncls;          /* CP_NCLASS per chunk */
    const rf_classifier *cls; /* the buckets of the instruction against its model row */
    tally *tl;                /* per chunk */
    void *A, *B, *C, *SA, *SB, *D;
    unsigned char *gen;       /* generator of each tile */
    size_t cap_tiles;         /* tiles the arrays hold */
    size_t nchunks;           /* chunk c: tiles [ntiles*c/nchunks, ntiles*(c+1)/nchunks) */
    rec *recs;                /* plain run: REC_PER_CHUNK per chunk (GPU_RECS in chunk 0 of a --verify gpu call) */
    int *nrec;                /* per chunk */
    long long *nmis;          /* per chunk */
    double *chunk_s;          /* per chunk: seconds spent generating it plus evaluating it */
    unsigned char *want;      /* per worker: the model's output tile */
    size_t want_bytes;
    gen_ctx g;
    /* --verify gpu: the tiles stayed on the GPU; a tile's case is generated
     * again on the host (gen_tile, the same bits) into slot 0 when asked for */
    int sparse;
    unsigned long long cached_tile;
    int cached;
    rec **dumpv;              /* --dump-disagreements, host path: every disagreement of chunk c */
    size_t *ndump, *capdump;
} batch;


/* One job of the workers: evaluate one batch and generate the next.  The
 * workers take chunks from the two counters, so a slow thread delays the
 * batch by one chunk at most; what is recorded depends on the chunks only,
 * not on the number of threads or their timing. */
typedef struct job {
    batch *eval, *gen;
    atomic_size_t next_eval, next_gen;
} job;


/* chunk c of batch b: tiles [chunk_first(b, c), chunk_first(b, c + 1)) */
static inline size_t chunk_first(const batch *b, size_t c) { return b->ntiles * c / b->nchunks; }
/* the campaign tile in slot t of batch b */
static inline unsigned long long tile_of(const batch *b, size_t t)
{
    return b->tile_base + b->tile_stride * (b->first_tile + t);
}

/* Count disagreement r in bucket id; t->oom set when memory ran out. */
void tally_reset(tally *t);
void tally_add(tally *t, uint64_t id, const rec *r);

/* The case of output (i, j) of campaign tile `tile` of batch b, and the
 * generator of its tile: read from the batch's arrays, or (a batch verified
 * on the GPU) from the tile generated again on the host. */
gen_kind batch_case(batch *b, unsigned long long tile, int i, int j, mf_case *cs);

/* The description of the bucket of tally entry e (the case of its first
 * disagreement classified again, with its words): for a bucket this process
 * meets for the first time. */
void tally_describe(batch *b, const tally_e *e, rf_bucket *bk);

/* Point batch b (slot: the instruction's index in the run's list) at tiles
 * [first, first + nt) of the instruction: tile t of the batch is campaign
 * tile tile_base + tile_stride * (first + t); view: the pool's cases for it. */
void batch_plan(batch *b, int slot, const mf_instr *in, const mf_instr *model, int m, int n, int k,
                const rf_classifier *cls, unsigned long long first, size_t nt, unsigned long long tile_base,
                unsigned long long tile_stride, uint64_t seed, gen_mix mix, const pool_entry **view, size_t nview);

/* The batch's SA and SB arrays as the device ABI takes them: SA for a
 * block-scaled row (its scales) or a sparse row (its metadata), SB for a
 * block-scaled row; NULL otherwise.  Every path that runs a batch on the
 * device passes these. */
static inline void *batch_sa(const batch *b) { return b->in->n_scales || b->in->sparse ? b->SA : NULL; }
static inline void *batch_sb(const batch *b) { return b->in->n_scales ? b->SB : NULL; }

/* The tile arrays from the device's allocator (page-locked for CUDA: copied
 * without staging), for `tiles` tiles of at most bytes[q] bytes each array;
 * camp: record per tile and count per class.  @return 0, or -1 (out of
 * memory: free_batch frees what was made). */
int alloc_batch(batch *b, mf_device *dev, size_t bytes[6], size_t tiles, size_t want_bytes, int nworkers, int camp);
void free_batch(batch *b, mf_device *dev);

/* The workers' jobs (run_workers.h): job_fn evaluates jb->eval and
 * generates jb->gen chunk by chunk; hits_fn buckets the hits of a device
 * call (hits_job). */
void job_fn(void *ctx, int w, int nw);
/* --verify gpu: the bucket of every hit of a device call, in the model
 * threads.  The hits (sorted by tile) are cut into pieces by index alone,
 * piece p counted in tally p (so what is counted, and in which order, does
 * not depend on the threads); worker w generates a hit's tile again into
 * slot w of the batch (the same bits as on the device). */
typedef struct hits_job {
    batch *b;
    const mf_verify_hit *hits;
    size_t nhits, npieces;
    atomic_size_t next;
} hits_job;
void hits_fn(void *ctx, int w, int nw);

#endif
