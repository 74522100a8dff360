/*
 * run_stats.h - what a fuzz campaign counts, and how it shows it: a status
 * line on a terminal (plain periodic lines otherwise), a JSON-lines stats
 * file in the output folder (one object per report, in the spirit of
 * AFL++'s fuzzer_stats / plot_data) and the final summary.
 */
#ifndef MMAFUZZ_RUN_STATS_H
#define MMAFUZZ_RUN_STATS_H

#include "mmafuzz_model.h"

#include <stdio.h>

#define RS_MAX_GPUS 16

/* Counters of one instruction. */
typedef struct rs_instr {
    const mf_instr *in;
    long long cases;       /* dot-product cases compared (one per output element) */
    long long tiles;       /* MMA tiles run */
    long long mismatches;  /* cases where device and model disagree */
    long long minimized;   /* mismatches re-run and minimized (or filed as non-deterministic) */
    long long unique;      /* distinct mismatch files this run saw */
    long long new_files;   /* of which written by this run */
    long long nondet;      /* filed as non-deterministic or context-dependent */
    double min_seconds, min_max_seconds;  /* handling the mismatches (re-runs, minimization, file): sum, largest */
    double model_s;        /* model threads' seconds on it (generating and evaluating), summed over threads */
    double device_s;       /* seconds of its device calls (the main thread; overlaps the model threads) */
    long long dev_errors;
} rs_instr;

typedef struct rs_stats {
    rs_instr *per;
    int n;
    double t0, last_print, last_json;
    long long cases_at_print;
    double rate_at_print;
    int tty;
    FILE *json;  /* the JSON-lines file, or NULL */
    char json_path[1100];
    int json_failed;  /* it could not be opened or written: the run's result is an error */
    const char *device;
    unsigned long long seed;
    int jobs;
    long long buckets_seen, buckets_new;  /* buckets of the disagreements (harness/refine/buckets.h) */
    long long planned;   /* cases this process is to run (-runs, a shard's tiles left), or 0: unknown */
    const char *run_id;  /* the process run's unique id, or NULL */
    char shard[40];      /* "I/N" under run --campaign, or "" */
    char host[128];      /* set by rs_open */
    char gpu[300];       /* the device: name, architecture, index and CUDA_VISIBLE_DEVICES; models say so */
    char gpu_uuid[48];   /* the physical GPU (mf_device_info.uuid: "GPU-...", "model", "" unknown) */
    char gpu_pci[24];    /* its PCI bus id (mf_device_info.pci_bus_id) */
    int verify_gpu;      /* --verify gpu: the GPUs generated, evaluated and compared */
    int ngpu;            /* GPUs of the device (cuda:LIST) and the cases each ran (--verify gpu) */
    char gpu_uuids[RS_MAX_GPUS][48];
    long long gpu_cases[RS_MAX_GPUS];
} rs_stats;

/* @return seconds on a monotonic clock. */
double rs_now(void);

/* Open the stats file json_path if set (run --campaign: SHARD/stats/RUNID.jsonl,
 * one file per process run), else <out>/stats.jsonl (appending).  Each record
 * carries run_id, shard, host and gpu.  @return 0, or -1
 * when it cannot be opened (said on stderr; json_failed set). */
int rs_open(rs_stats *s, const char *out_dir);
/* One record of a stats file, as rs_read_file hands it out. */
typedef struct rs_record {
    const char *line;    /* the JSON object (json.h: json_member reads its fields) */
    long lineno;
    long long unix_time; /* the wall clock at the record, whole seconds */
    double elapsed_s;    /* seconds since the process started */
    long long cases;     /* cases run by then */
} rs_record;

/* Read a stats file (stats.jsonl, stats/RUNID.jsonl) strictly
 * (docs/user-guide.md): every line one JSON object (RFC 8259) with
 * unix_time (a whole number), elapsed_s (a number) and cases (a whole
 * number of at most 2^63-1), no NUL byte, no empty line.  The one damage a
 * writer leaves, a last record cut short (no newline: a kill, a full disk;
 * rs_open cuts it off before appending), is skipped and its length put in
 * *torn; any other bad line makes the whole file an error.  A file that
 * does not exist has no records.  Then fn(record, ctx) for each record.
 * @return the number of records, -1 on a damaged or unreadable file
 * ("FILE:LINE: what was expected" in err), -2 when fn returned non-zero. */
long rs_read_file(const char *path, int (*fn)(const rs_record *r, void *ctx), void *ctx, long *torn, char *err,
                  size_t errlen);

/* Print a status line (terminal: rewrite in place every 0.5 s; otherwise a
 * plain line every `period` s) and append a JSON line every `period` s;
 * force = 1 does both now. */
void rs_report(rs_stats *s, double period, int force);
/* The final summary: one line per instruction and the totals. */
void rs_summary(rs_stats *s, FILE *f, const char *why);
/* Close the stats file.  @return 0, or -1 if it could not be opened,
 * written or closed at any time (said on stderr when it happened). */
int rs_close(rs_stats *s);

long long rs_total(const rs_stats *s, int field);

/* The status line of any long job (run's above, replay's, check's): on a
 * terminal one line rewritten in place every 0.5 s, otherwise a plain line
 * every `period` s; nothing for a job shorter than that. */
typedef struct rs_progress {
    int tty;           /* stderr is a terminal */
    double t0, last;   /* start, last line (rs_now) */
    double period;     /* seconds between lines when not on a terminal */
    int printed;       /* a line was printed (on a terminal: rs_progress_end ends it) */
    double tty_period; /* seconds between lines on a terminal (0.5) */
} rs_progress;
/* MMAFUZZ_PROGRESS_S (0 to 10, for tests) sets both intervals. */
void rs_progress_start(rs_progress *p, double period);
/* @return 1 when a line is due now (force: always). */
int rs_progress_due(const rs_progress *p, int force);
/* " of TOTAL (P%, ETA 0h01m02s)": `done` of `total` units, and the time
 * left at the average rate since the start ("" when total <= 0). */
void rs_progress_eta(const rs_progress *p, double done, double total, char *buf, size_t len);
/* Print the line (in place on a terminal) and remember the time. */
void rs_progress_print(rs_progress *p, const char *line);
/* On a terminal, end the line in place with a newline. */
void rs_progress_end(rs_progress *p);
/* "1.23M" style numbers for status lines. */
const char *rs_human(double v, char *buf, size_t len);
enum { RS_CASES, RS_MISMATCHES, RS_UNIQUE, RS_NEW, RS_NONDET, RS_TILES };

#endif
