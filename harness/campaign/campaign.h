/*
 * campaign.h - a campaign defined once and run in shards (`mmafuzz campaign
 * init`, `run --campaign DIR -shard I/N`, `merge`, `report`).
 *
 * Layout of a campaign folder DIR:
 *   DIR/campaign.def          the definition (text, written once, never changed;
 *                             its id is XXH3-64 of the text after the "id" line)
 *   DIR/pool.vec              the frozen starting mutation pool (.vec)
 *   DIR/shards/I-of-N/        one shard: a mismatch store (findings by hash,
 *                             index.tsv), shard.state, stats/RUNID.jsonl, .shard-lock
 *
 * A case is one dot product; a tile is one instruction's M x N cases.  Tile
 * t of instruction X is a pure function of (definition, X, t).  Instruction
 * X has tiles 0 .. T(X)-1 (T from -runs, split evenly, rounded up to whole
 * tiles); shard I of N runs the tiles t = I (mod N), in increasing t.
 *
 * shard.state holds together, per instruction: the shard's tiles done, the
 * cases run, the disagreements, and the disagreements per signature class
 * with the hash of one finding of the class ("-" while none is filed), and
 * the disagreements per bucket (harness/refine/buckets.h: every disagreement
 * of the shard's cases is classified, so the counts are exact).  It
 * is written atomically (temporary file, fsync, rename, fsync of the
 * folder) after the findings it counts, so a resume counts every case
 * exactly once.
 */
#ifndef MMAFUZZ_CAMPAIGN_H
#define MMAFUZZ_CAMPAIGN_H

#include <stddef.h>

#define CP_MAX_INSTR 512
#define CP_DIR_MAX 760   /* the longest campaign folder name: DIR/shards/I-of-N stays within ST_ROOT_MAX (run_store.h) */
#define CP_NCLASS 7      /* the signature classes, cp_class_names */
#define CP_TILE_RECS 4   /* mismatches recorded per tile for filing: the first of each class, at most this many */
#define CP_DEF_VERSION 1
#define CP_STATE_VERSION 2  /* 2: bucket lines (a version 1 state is refused: it has no bucket counts) */

/* The signature classes of rv_signature (gen/gen_values.h), in a fixed order. */
extern const char *const cp_class_names[CP_NCLASS];
/* @return the index of a class name, or -1. */
int cp_class_index(const char *sig);

typedef struct cp_instr {
    char name[160];
    int m, n, k;
    unsigned long long tiles;  /* T: tiles 0 .. T-1 */
} cp_instr;

/* The definition of a campaign. */
typedef struct cp_def {
    char id[17];               /* 16 hex digits */
    unsigned long long seed;
    char device[200];          /* --device as given at init */
    char model[40];            /* --model, or "" */
    char mix[160];             /* the generator mix, as gen_mix_format writes it */
    long long runs;            /* the -runs budget */
    long long minimize_every;  /* policy: a tile is sampled for filing when hash(seed, instr, tile) % R == 0 */
    int gen_version;           /* MF_GEN_VERSION at init */
    char pool_hash[33];        /* XXH3-128 of pool.vec */
    long long pool_cases;
    int ninstr;
    cp_instr instr[CP_MAX_INSTR];
} cp_def;

/* Read DIR/campaign.def (checks its id and pool.vec's hash).
 * @return 0, or -1 with a "FILE:LINE: what was expected" message in err. */
int cp_def_read(const char *dir, cp_def *d, char *err, size_t errlen);

/* Write DIR/campaign.def from d (id computed and stored in d->id) with
 * link(2): it never replaces a definition.  @return 0 written, 1 an
 * identical definition was there already, 2 a different one was
 * (message in err), -1 an error (message in err). */
int cp_def_write(const char *dir, cp_def *d, char *err, size_t errlen);

/* @return 1 if tile `tile` of instruction `name` is sampled for filing. */
int cp_tile_sampled(const cp_def *d, const char *name, unsigned long long tile);

/* Tiles of instruction x that shard i of n owns: #{t < T : t = i mod n}. */
unsigned long long cp_shard_tiles(unsigned long long T, int i, int n);

/* "I/N" or "I-of-N" -> i, n (0 <= i < n <= 1,000,000).  @return 0 or -1. */
int cp_parse_shard(const char *s, int *i, int *n);

/* DIR/shards/I-of-N */
void cp_shard_dir(const char *dir, int i, int n, char *buf, size_t len);

/* One process per shard: an exclusive flock(2) on SHARD/.shard-lock (the store keeps .lock for its index), held until
 * the process exits (the kernel drops it when the process dies, however it
 * dies).  @return the lock's file descriptor, or -1 (message in err; errno
 * EWOULDBLOCK when another process holds it). */
int cp_lock_shard(const char *shard_dir, char *err, size_t errlen);

/* Per instruction in a shard's state. */
typedef struct cp_istate {
    char name[160];
    unsigned long long done;       /* the shard's tiles done: its first `done` tiles, in increasing t */
    long long cases, mismatches;
    long long cls[CP_NCLASS];      /* disagreements per signature class */
    char cls_hex[CP_NCLASS][33];   /* one finding of the class ("" while none) */
} cp_istate;

/* A bucket's disagreements in a shard (state line "bucket NAME ID COUNT WORDS"). */
typedef struct cp_bucket {
    int instr;                     /* index into cp_state.in */
    char id[17];                   /* the bucket id: 16 hex digits */
    long long count;
    char words[300];               /* its explanation in words */
} cp_bucket;

typedef struct cp_state {
    char id[17];
    int shard, nshards;
    int ninstr;
    cp_istate in[CP_MAX_INSTR];
    cp_bucket *bk;                 /* malloc'd (cp_state_free), in order of first sighting */
    size_t nbk, capbk;
} cp_state;

/* Add n disagreements to bucket `id` of instruction index q (words: its
 * explanation, used when the state does not list it yet).  @return 0, or -1
 * when out of memory. */
int cp_state_bucket_add(cp_state *st, int q, const char *id, long long n, const char *words);
/* Make room for `extra` more buckets, so that as many cp_state_bucket_add
 * calls cannot fail (a batch's counts enter the state whole or not at all).
 * @return 0, or -1 when out of memory. */
int cp_state_bucket_reserve(cp_state *st, size_t extra);
/* @return the index of bucket `id` of instruction index q in st->bk, or -1. */
long cp_state_bucket_find(const cp_state *st, int q, const char *id);
/* Free st's bucket list (the state itself is the caller's). */
void cp_state_free(cp_state *st);

/* Read SHARD/shard.state.  @return 0, 1 when it does not exist (st set to
 * an empty state of d's instructions), -1 on a malformed file or another
 * campaign's (message in err).  st is overwritten (a bucket list it held is
 * not freed: cp_state_free first); the caller frees the one read. */
int cp_state_read(const char *shard_dir, const cp_def *d, int i, int n, cp_state *st, char *err, size_t errlen);
/* Read a state file without a definition (merge, report).  Same returns,
 * except that a missing file is -1. */
int cp_state_read_file(const char *path, cp_state *st, char *err, size_t errlen);

/* Write SHARD/shard.state atomically (fault point state.write between the
 * temporary file and the rename).  @return 0, or -1 (message in err). */
int cp_state_write(const char *shard_dir, const cp_state *st, char *err, size_t errlen);

/* A run id unique to this process run: UTC time, host, pid, random bits. */
void cp_run_id(char *buf, size_t len);

#endif
