/* tally: lost updates, handoffs, waits and fairness from a contended
 * history. See tally.h. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tally.h"
#include "util.h"

/* The replay's state, and the samples it collects. */
typedef struct replay {
    const sim_tally_window *w;
    sim_tally *t;
    double *handoff, *wait;                /* samples, ms */
    long served[SIM_TALLY_CLIENTS];        /* acquisitions in the window */
    int64_t invoked[SIM_TALLY_CLIENTS];    /* the open acquire call's start, 0 = none */
    int last_releaser;                     /* a release not yet followed by an acquire */
    int64_t released_ns;
} replay;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

void sim_tally_sort(double *v, size_t n)
{
    qsort(v, n, sizeof(v[0]), cmp_double);
}

double sim_tally_percentile(const double *sorted, size_t n, double p)
{
    size_t rank;

    if (n == 0)
        return NAN;
    rank = (size_t)ceil(p / 100.0 * (double)n);
    return sorted[rank > 0 ? rank - 1 : 0];
}

double sim_tally_median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    sim_tally_sort(v, n);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int in_window(const replay *r, int64_t t_ns)
{
    return t_ns >= r->w->go_ns && t_ns < r->w->stop_ns;
}

/* An acquire call ends: its wait counts when it began in the window. */
static void end_call(replay *r, const sim_event *e)
{
    int64_t began = r->invoked[e->client];

    if (began != 0 && in_window(r, began))
        r->wait[r->t->waits++] = (double)(e->t_ns - began) / 1e6;
    r->invoked[e->client] = 0;
}

/* The lock changed hands (or did not) when an acquire returned OK. */
static void acquired(replay *r, const sim_event *e)
{
    r->t->acquisitions++;
    if (in_window(r, e->t_ns)) {
        r->served[e->client]++;
        if (r->last_releaser == e->client)
            r->t->rewon++;
        else if (r->last_releaser >= 0)
            r->handoff[r->t->handoffs++] = (double)(e->t_ns - r->released_ns) / 1e6;
    }
    r->last_releaser = -1;
}

static void step(replay *r, const sim_event *e)
{
    if (e->client < 0 || e->client >= SIM_TALLY_CLIENTS)
        return;
    switch (e->type) {
    case SIM_EV_ACQUIRE_INVOKE:
        r->invoked[e->client] = e->t_ns;
        break;
    case SIM_EV_ACQUIRE_OK:
        end_call(r, e);
        acquired(r, e);
        break;
    case SIM_EV_ACQUIRE_BUSY:
    case SIM_EV_ACQUIRE_ERROR:
        end_call(r, e);
        r->t->busy += e->type == SIM_EV_ACQUIRE_BUSY;
        r->t->errors += e->type == SIM_EV_ACQUIRE_ERROR;
        break;
    case SIM_EV_RELEASE_INVOKE:
        r->last_releaser = e->client;
        r->released_ns = e->t_ns;
        break;
    case SIM_EV_RELEASE_NOT_OWNER:
    case SIM_EV_RELEASE_ERROR:
        r->t->errors++;
        break;
    default:
        break;
    }
}

/* The figures from the samples: rates and fairness over the window. */
static void figures(replay *r)
{
    sim_tally *t = r->t;
    long in = 0;
    int i, clients = r->w->clients < SIM_TALLY_CLIENTS ? r->w->clients : SIM_TALLY_CLIENTS;

    t->least = clients > 0 ? LONG_MAX : 0;
    for (i = 0; i < clients; i++) {
        in += r->served[i];
        t->least = r->served[i] < t->least ? r->served[i] : t->least;
        t->most = r->served[i] > t->most ? r->served[i] : t->most;
    }
    t->rate = r->w->stop_ns > r->w->go_ns ? in / ((double)(r->w->stop_ns - r->w->go_ns) / 1e9) : NAN;
    t->lost = t->acquisitions - r->w->counted;
    sim_tally_sort(r->handoff, t->handoffs);
    sim_tally_sort(r->wait, t->waits);
    t->handoff_p50_ms = sim_tally_percentile(r->handoff, t->handoffs, 50);
    t->handoff_p99_ms = sim_tally_percentile(r->handoff, t->handoffs, 99);
    t->wait_p50_ms = sim_tally_percentile(r->wait, t->waits, 50);
    t->wait_p99_ms = sim_tally_percentile(r->wait, t->waits, 99);
    t->wait_max_ms = t->waits > 0 ? r->wait[t->waits - 1] : NAN;
    t->rewon_share = t->rewon + (long)t->handoffs > 0
        ? (double)t->rewon / (double)(t->rewon + (long)t->handoffs) : NAN;
}

int sim_tally_history(const sim_event *ev, size_t n, const sim_tally_window *w,
                      sim_tally *out, char *errstr, size_t len)
{
    replay r;
    size_t i;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    memset(&r, 0, sizeof(r));
    r.w = w;
    r.t = out;
    r.last_releaser = -1;
    r.handoff = malloc((n + 1) * sizeof(double));
    r.wait = malloc((n + 1) * sizeof(double));
    if (r.handoff == NULL || r.wait == NULL) {
        rc = sim_error(errstr, len, "out of memory for %zu events' samples", n);
    } else {
        for (i = 0; i < n; i++)
            step(&r, &ev[i]);
        figures(&r);
    }
    free(r.handoff);
    free(r.wait);
    return rc;
}
