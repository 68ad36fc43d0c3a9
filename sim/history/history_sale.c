/* history_sale: the journal of one flash sale (see history_sale.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "history_sale.h"
#include "util.h"

#define META_FMT "sale units=%ld segments=%d buyers=%d stage=%d pause=%ld first=%d fault=%15s t0=%" SCNd64

int64_t sim_sale_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void sim_sale_log_event(FILE *f, int buyer, int seg, char op, long long value)
{
    fprintf(f, "%" PRId64 " %d %d %c %lld\n", sim_sale_now_ns(), buyer, seg, op, value);
}

long sim_sale_initial_stock(const sim_sale_meta *m, int seg)
{
    return m->units / m->segments + (seg < m->units % m->segments ? 1 : 0);
}

static int by_time(const void *a, const void *b)
{
    const sim_sale_event *x = a, *y = b;

    if (x->t_ns != y->t_ns)
        return x->t_ns < y->t_ns ? -1 : 1;
    return x->buyer - y->buyer;
}

/* Appends the events of path to *ev (n of cap); a missing file has none. */
static int read_events(const char *path, sim_sale_event **ev, size_t *n, size_t *cap,
                       char *errstr, size_t len)
{
    FILE *f = fopen(path, "r");
    sim_sale_event e;
    char line[256];
    long t;

    if (f == NULL)
        return errno == ENOENT ? 0 : sim_error(errstr, len, "open %s: %s", path, strerror(errno));
    while (fgets(line, sizeof(line), f) != NULL) {
        if (sscanf(line, "%ld %d %d %c %lld", &t, &e.buyer, &e.seg, &e.op, &e.value) != 5)
            continue; /* the settings line */
        e.t_ns = t;
        if (*n == *cap) {
            sim_sale_event *bigger = realloc(*ev, (*cap = *cap ? 2 * *cap : 4096) * sizeof(e));

            if (bigger == NULL) {
                fclose(f);
                return sim_error(errstr, len, "out of memory reading %s", path);
            }
            *ev = bigger;
        }
        (*ev)[(*n)++] = e;
    }
    fclose(f);
    return 0;
}

static void write_meta(FILE *f, const sim_sale_meta *m)
{
    fprintf(f, "sale units=%ld segments=%d buyers=%d stage=%d pause=%ld first=%d fault=%s t0=%" PRId64 "\n",
            m->units, m->segments, m->buyers, m->stage, m->pause_ms, m->first, m->fault, m->t0_ns);
}

int sim_sale_log_merge(const sim_sale_meta *m, const char *const *files, int nfiles,
                       const char *out, char *errstr, size_t len)
{
    sim_sale_event *ev = NULL;
    size_t n = 0, cap = 0, i;
    FILE *f;
    int k;

    for (k = 0; k < nfiles; k++)
        if (read_events(files[k], &ev, &n, &cap, errstr, len) != 0) {
            free(ev);
            return -1;
        }
    qsort(ev, n, sizeof(*ev), by_time);
    if ((f = fopen(out, "w")) == NULL) {
        free(ev);
        return sim_error(errstr, len, "cannot write the sale's history %s: %s", out, strerror(errno));
    }
    write_meta(f, m);
    for (i = 0; i < n; i++)
        fprintf(f, "%" PRId64 " %d %d %c %lld\n", ev[i].t_ns, ev[i].buyer, ev[i].seg, ev[i].op,
                ev[i].value);
    free(ev);
    if (fclose(f) != 0)
        return sim_error(errstr, len, "write %s: %s", out, strerror(errno));
    return 0;
}

int sim_sale_log_load(sim_sale_log *log, const char *path, char *errstr, size_t len)
{
    FILE *f = fopen(path, "r");
    sim_sale_meta *m = &log->meta;
    size_t cap = 0, i;
    char line[256];

    memset(log, 0, sizeof(*log));
    if (f == NULL)
        return sim_error(errstr, len, "open %s: %s", path, strerror(errno));
    if (fgets(line, sizeof(line), f) == NULL ||
        sscanf(line, META_FMT, &m->units, &m->segments, &m->buyers, &m->stage, &m->pause_ms,
               &m->first, m->fault, &m->t0_ns) != 8 || m->segments < 1 ||
        m->segments > SIM_SALE_MAX_SEGMENTS || m->units < 1) {
        fclose(f);
        return sim_error(errstr, len, "%s is no sale's history: its first line is not "
                         "'sale units=S segments=K ...'", path);
    }
    fclose(f);
    if (read_events(path, &log->ev, &log->n, &cap, errstr, len) != 0)
        return -1;
    for (i = 0; i < log->n; i++)
        log->ev[i].t_ns -= m->t0_ns;
    return 0;
}

void sim_sale_log_free(sim_sale_log *log)
{
    free(log->ev);
    log->ev = NULL;
    log->n = 0;
}
