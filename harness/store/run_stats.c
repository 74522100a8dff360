/*
 * run_stats.c - status line, JSON-lines stats and summary (see run_stats.h).
 */
#include "run_stats.h"

#include "json.h"

#include "run_fs.h"
#include "textline.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double rs_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

long long rs_total(const rs_stats *s, int field)
{
    long long t = 0;
    for (int i = 0; i < s->n; i++) {
        const rs_instr *p = &s->per[i];
        t += field == RS_CASES ? p->cases : field == RS_MISMATCHES ? p->mismatches : field == RS_UNIQUE ? p->unique
           : field == RS_NEW ? p->new_files : field == RS_NONDET ? p->nondet : p->tiles;
    }
    return t;
}

int rs_open(rs_stats *s, const char *out_dir)
{
    if (!s->json_path[0])
        snprintf(s->json_path, sizeof s->json_path, "%s/stats.jsonl", out_dir);
    const char *host = getenv("MMAFUZZ_HOSTNAME");  /* the name recorded, when set (tests, containers) */
    if (host && *host)
        snprintf(s->host, sizeof s->host, "%s", host);
    else if (gethostname(s->host, sizeof s->host - 1) != 0)
        snprintf(s->host, sizeof s->host, "?");
    /* never through a link (nothing is written outside the store); a torn last
     * record (a write cut short: a full disk, a kill) is cut off first */
    int fd = fs_open_nofollow(s->json_path, O_RDWR | O_APPEND | O_CREAT, 0666);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
        close(fd);
        fd = -1;
        errno = EINVAL;
    }
    if (fd >= 0 && st.st_size > 0) {
        off_t end = st.st_size, keep = -1;
        char buf[4096];
        while (end > 0 && keep < 0) {
            off_t at = end > (off_t)sizeof buf ? end - (off_t)sizeof buf : 0;
            ssize_t n = pread(fd, buf, (size_t)(end - at), at);
            if (n != end - at)
                break;
            if (end == st.st_size && buf[n - 1] == '\n') {
                keep = st.st_size;  /* whole */
                break;
            }
            for (ssize_t i = n - 1; i >= 0 && keep < 0; i--)
                if (buf[i] == '\n')
                    keep = at + i + 1;
            end = at;
        }
        if (keep < 0)
            keep = 0;
        if (keep < st.st_size) {
            if (ftruncate(fd, keep) == 0)
                fprintf(stderr, "mmafuzz run: %s: a torn last record (%lld bytes without a newline: a write cut "
                                "short) dropped\n", s->json_path, (long long)(st.st_size - keep));
            else
                fprintf(stderr, "mmafuzz run: %s: a torn last record, cannot cut it off (%s)\n", s->json_path,
                        strerror(errno));
        }
    }
    s->json = fd >= 0 ? fdopen(fd, "a") : NULL;
    if (!s->json) {
        fprintf(stderr, "mmafuzz run: %s: cannot open for appending (%s)\n", s->json_path,
                fs_strerror(errno));
        if (fd >= 0)
            close(fd);
        s->json_failed = 1;
    }
    s->tty = isatty(2);
    s->t0 = s->last_print = s->last_json = rs_now();
    return s->json ? 0 : -1;
}

/* The stats file could not be written: say so once, write no more. */
static void json_fail(rs_stats *s, int e)
{
    fprintf(stderr, "%smmafuzz run: %s: write failed (%s)\n", s->tty ? "\n" : "", s->json_path, strerror(e));
    fclose(s->json);
    s->json = NULL;
    s->json_failed = 1;
}

const char *rs_human(double v, char *buf, size_t len)
{
    if (v >= 1e9)
        snprintf(buf, len, "%.2fG", v * 1e-9);
    else if (v >= 1e6)
        snprintf(buf, len, "%.2fM", v * 1e-6);
    else if (v >= 1e4)
        snprintf(buf, len, "%.1fk", v * 1e-3);
    else
        snprintf(buf, len, "%.0f", v);
    return buf;
}

static void json_line(rs_stats *s, double now)
{
    if (!s->json)
        return;
    double el = now - s->t0;
    long long cases = rs_total(s, RS_CASES);
    time_t wall = time(NULL);
    FILE *f = s->json;  /* every string through json_put_str: a host name may hold anything */
    fprintf(f, "{\"unix_time\":%lld,\"elapsed_s\":%.3f,\"device\":", (long long)wall, el);
    json_put_str(f, s->device);
    fprintf(f, ",\"seed\":%llu,\"cases\":%lld,\"tiles\":%lld,\"dot_products_per_s\":%.0f,\"mismatches_total\":%lld,"
               "\"mismatches_unique\":%lld,\"new_files\":%lld,\"nondeterministic\":%lld,\"run_id\":",
            s->seed, cases, rs_total(s, RS_TILES), el > 0 ? (double)cases / el : 0.0, rs_total(s, RS_MISMATCHES),
            rs_total(s, RS_UNIQUE), rs_total(s, RS_NEW), rs_total(s, RS_NONDET));
    static const char *const keys[] = {"shard", "host", "gpu", "gpu_uuid", "gpu_pci_bus_id"};
    const char *vals[] = {s->shard, s->host, s->gpu, s->gpu_uuid, s->gpu_pci};
    json_put_str(f, s->run_id);
    for (int k = 0; k < 5; k++) {
        fprintf(f, ",\"%s\":", keys[k]);
        json_put_str(f, vals[k]);
    }
    /* the GPUs of the device and the cases each generated and checked (--verify gpu) */
    fprintf(f, ",\"verify\":\"%s\",\"gpus\":[", s->verify_gpu ? "gpu" : "host");
    for (int g = 0; g < s->ngpu; g++) {
        fprintf(f, "%s{\"uuid\":", g ? "," : "");
        json_put_str(f, s->gpu_uuids[g]);
        fprintf(f, ",\"cases\":%lld}", s->gpu_cases[g]);
    }
    fprintf(f, "],\"instr\":{");
    for (int i = 0; i < s->n; i++) {
        const rs_instr *p = &s->per[i];
        fprintf(f, "%s", i ? "," : "");
        json_put_str(f, p->in->name);
        fprintf(f, ":{\"cases\":%lld,\"mismatches\":%lld,\"unique\":%lld,\"new_files\":%lld,\"model_thread_s\":%.3f,"
                   "\"device_s\":%.3f}",
                p->cases, p->mismatches, p->unique, p->new_files, p->model_s, p->device_s);
    }
    fprintf(s->json, "}}\n");
    int e = fs_fault("stats.write", 1);
    errno = 0;
    if (!e && (fflush(s->json) != 0 || ferror(s->json)))
        e = errno ? errno : EIO;
    if (e)
        json_fail(s, e);
}

void rs_progress_start(rs_progress *p, double period)
{
    p->tty = isatty(2);
    p->t0 = p->last = rs_now();
    p->period = period;
    p->tty_period = 0.5;
    p->printed = 0;
    const char *e = getenv("MMAFUZZ_PROGRESS_S");
    double v = e ? strtod(e, NULL) : -1;
    if (v >= 0 && v <= 10)
        p->period = p->tty_period = v;
}

int rs_progress_due(const rs_progress *p, int force)
{
    return force || rs_now() - p->last >= (p->tty ? p->tty_period : p->period);
}

void rs_progress_eta(const rs_progress *p, double done, double total, char *buf, size_t len)
{
    buf[0] = 0;
    if (!(total > 0))
        return;
    double el = rs_now() - p->t0, avg = el > 0 ? done / el : 0;
    double left = avg > 0 ? (total - done) / avg : 0;
    char t[24];
    snprintf(buf, len, " of %s (%.0f%%, ETA %.0fh%02.0fm%02.0fs)", rs_human(total, t, sizeof t), 100.0 * done / total,
             left / 3600 < 1e6 ? (double)(long)(left / 3600) : 0.0, (double)((long)left % 3600 / 60),
             (double)((long)left % 60));
}

void rs_progress_print(rs_progress *p, const char *line)
{
    if (p->tty)
        fprintf(stderr, "\r%-150.150s", line);
    else
        fprintf(stderr, "%s\n", line);
    p->last = rs_now();
    p->printed = 1;
}

void rs_progress_end(rs_progress *p)
{
    if (p->tty && p->printed)
        fprintf(stderr, "\n");
    p->printed = 0;
}

void rs_report(rs_stats *s, double period, int force)
{
    double now = rs_now();
    int print = force || (s->tty ? now - s->last_print >= 0.5 : now - s->last_print >= period);
    if (print) {
        long long cases = rs_total(s, RS_CASES);
        double dt = now - s->last_print;
        double rate = dt > 0 ? (double)(cases - s->cases_at_print) / dt : 0;
        double avg = now > s->t0 ? (double)cases / (now - s->t0) : 0;
        char a[24], b[24], c[24];
        /* the busiest instruction by mismatches, as a hint */
        const rs_instr *top = NULL;
        int active = 0;
        for (int i = 0; i < s->n; i++) {
            if (s->per[i].cases)
                active++;
            if (s->per[i].mismatches && (!top || s->per[i].mismatches > top->mismatches))
                top = &s->per[i];
        }
        char line[512], eta[80];
        rs_progress pr = {s->tty, s->t0, s->last_print, period, 1, 0.5};
        rs_progress_eta(&pr, (double)cases, (double)s->planned, eta, sizeof eta);
        snprintf(line, sizeof line,
                 "#%.0fs cases %s%s  %s dot products/s (now %s/s)  mismatches %lld unique / %lld total  "
                 "new files %lld  buckets %lld (new %lld)  instr %d/%d%s%s",
                 now - s->t0, rs_human((double)cases, a, sizeof a), eta, rs_human(avg, b, sizeof b),
                 rs_human(rate, c, sizeof c),
                 rs_total(s, RS_UNIQUE), rs_total(s, RS_MISMATCHES), rs_total(s, RS_NEW), s->buckets_seen,
                 s->buckets_new, active, s->n, top ? "  most: " : "", top ? top->in->name : "");
        rs_progress_print(&pr, line);
        s->last_print = now;
        s->cases_at_print = cases;
        s->rate_at_print = rate;
    }
    if (force || now - s->last_json >= period) {
        json_line(s, now);
        s->last_json = now;
    }
}

void rs_summary(rs_stats *s, FILE *f, const char *why)
{
    double el = rs_now() - s->t0;
    long long cases = rs_total(s, RS_CASES);
    if (s->tty)
        fprintf(stderr, "\n");
    /* M/s/thr: cases per second of one model thread (generation and model
     * evaluation); --verify gpu: of the GPUs (generation, instruction, model
     * and comparison, per second of device time); dev s: seconds in device
     * calls; min s, max s: mean and largest time to handle a mismatch
     * (re-runs, minimization, file) */
    char how[96];
    if (s->verify_gpu)
        snprintf(how, sizeof how, "verified on %d GPU%s, %d host threads", s->ngpu, s->ngpu == 1 ? "" : "s", s->jobs);
    else
        snprintf(how, sizeof how, "%d model threads", s->jobs);
    fprintf(f, "%-64s %12s %8s %7s %10s %8s %6s %5s %7s %7s\n", "instruction", "cases",
            s->verify_gpu ? "M/s/GPU" : "M/s/thr", "dev s",
            "mismatches", "minimzd", "unique", "new", "min s", "max s");
    for (int i = 0; i < s->n; i++) {
        const rs_instr *p = &s->per[i];
        fprintf(f, "%-64s %12lld %8.2f %7.2f %10lld %8lld %6lld %5lld %7.3f %7.3f%s\n", p->in->name, p->cases,
                p->model_s > 0 ? (double)p->cases / p->model_s * 1e-6 : 0.0, p->device_s, p->mismatches, p->minimized,
                p->unique, p->new_files, p->minimized ? p->min_seconds / (double)p->minimized : 0.0,
                p->min_max_seconds, p->dev_errors ? "  (device errors)" : "");
    }
    fprintf(f,
            "done (%s): %lld cases in %.2f s = %.3g dot products/s (%s), %lld tiles; "
            "mismatches: %lld total, %lld unique, %lld new files, %lld non-deterministic\n",
            why, cases, el, el > 0 ? (double)cases / el : 0.0, how, rs_total(s, RS_TILES), rs_total(s, RS_MISMATCHES),
            rs_total(s, RS_UNIQUE), rs_total(s, RS_NEW), rs_total(s, RS_NONDET));
}

int rs_close(rs_stats *s)
{
    if (s->json && fclose(s->json) != 0) {
        fprintf(stderr, "mmafuzz run: %s: write failed (%s)\n", s->json_path, strerror(errno));
        s->json_failed = 1;
    }
    s->json = NULL;
    return s->json_failed ? -1 : 0;
}

/* ------------------------------------------------------------ reader */

/* A whole number field: digits only (RFC 8259's integer, no sign), at most
 * LLONG_MAX.  @return 0 or -1. */
static int whole_number(const char *p, long long *v)
{
    const char *e = p ? json_number_end(p) : NULL;
    char num[24];
    unsigned long long x;
    if (!e || (size_t)(e - p) >= sizeof num)
        return -1;
    memcpy(num, p, (size_t)(e - p));
    num[e - p] = 0;
    if (tl_decimal(num, LLONG_MAX, &x))
        return -1;
    *v = (long long)x;
    return 0;
}

long rs_read_file(const char *path, int (*fn)(const rs_record *r, void *ctx), void *ctx, long *torn, char *err,
                  size_t errlen)
{
    size_t len, pos = 0;
    *torn = 0;
    struct stat lst;
    int ls = lstat(path, &lst);
    if ((ls != 0 && errno == ENOENT) || (ls == 0 && S_ISLNK(lst.st_mode)))
        return 0;  /* none; or a link, not read through: rs_open refuses it with a message */
    char *buf = fs_read_all(path, &len, err, errlen);
    if (!buf)
        return -1;
    long lineno = 0, col = 0, n = 0, rc = 0;
    char *line;
    int t;
    while (!rc && (t = tl_next(buf, len, &pos, &lineno, &line, &col)) != TL_END) {
        size_t rest = len - (size_t)(line - buf);
        if (t == TL_NUL && !memchr(line, '\n', rest))
            t = TL_TORN;  /* a tail of NUL bytes: a write cut short */
        long bad = t == TL_NUL ? col : line[0] ? json_check_object(line) : 1;
        if (t == TL_TORN && bad) {
            *torn = (long)rest;
            break;
        }
        rs_record r = {line, lineno, 0, 0, 0};
        const char *el = NULL;
        int ok = 0;
        if (t == TL_NUL)
            snprintf(err, errlen, "%s:%ld: a NUL byte at column %ld (a stats file is text: damaged)", path, lineno,
                     col);
        else if (!line[0])
            snprintf(err, errlen, "%s:%ld: an empty line (expected one JSON object per line)", path, lineno);
        else if (bad)
            snprintf(err, errlen, "%s:%ld: column %ld: expected one JSON object (RFC 8259) per line", path, lineno,
                     bad);
        else if (whole_number(json_member(line, "unix_time"), &r.unix_time) ||
                 whole_number(json_member(line, "cases"), &r.cases) || !(el = json_member(line, "elapsed_s")) ||
                 !json_number_end(el) || *el == '-')
            snprintf(err, errlen, "%s:%ld: expected a stats record: unix_time and cases whole numbers (at most "
                                  "%lld), elapsed_s a number of 0 or more", path, lineno, LLONG_MAX);
        else
            ok = 1;
        if (!ok) {
            rc = -1;
            break;
        }
        r.elapsed_s = strtod(el, NULL);
        n++;
        if (fn && fn(&r, ctx))
            rc = -2;
    }
    free(buf);
    return rc ? rc : n;
}
