/* report_lanes: a history read into each client's stretches and
 * moments, once, for every picture of a run. See lanes.h. */
#include <stdlib.h>
#include <string.h>

#include "lanes.h"

/* One client thread's open stretches while the history is read. */
typedef struct thread_state {
    int client, thread;
    int64_t wait, hold, cs, release; /* since when; -1: not open */
    int64_t read;                    /* the stock it last read */
    int depth;                       /* holds open (a reentrant lock) */
} thread_state;

typedef struct reader {
    sim_lanes *l;
    thread_state *th;
    size_t n_th, cap_th;
    int64_t *paused;     /* per client: a pause's start + 1; 0: none */
    int64_t *cut;        /* per client: a cut's start + 1; 0: none */
    int64_t *cut_nodes;  /* per client: the nodes it is cut off from */
    int *dead;           /* per client: killed; its events end there */
    int failed;          /* out of memory */
} reader;

/* arr with room for one more past its n elements: *cap grown when it
 * must be; NULL when out of memory (arr is then still valid). */
static void *room(void *arr, size_t n, size_t *cap, size_t size)
{
    void *p;

    if (n < *cap)
        return arr;
    if ((p = realloc(arr, (*cap * 2 + 16) * size)) != NULL)
        *cap = *cap * 2 + 16;
    return p;
}

static sim_stretch *add(reader *r, int client, int kind, int64_t from, int64_t to)
{
    sim_lanes *l = r->l;
    sim_stretch *p = room(l->st, l->n, &l->cap, sizeof(*p));

    if (p == NULL) {
        r->failed = 1;
        return NULL;
    }
    l->st = p;
    l->st[l->n] = (sim_stretch){ client, kind, from, to, -1, 0, 0 };
    return &l->st[l->n++];
}

static thread_state *thread_of(reader *r, int client, int thread)
{
    thread_state *p;

    for (size_t i = 0; i < r->n_th; i++)
        if (r->th[i].client == client && r->th[i].thread == thread)
            return &r->th[i];
    if ((p = room(r->th, r->n_th, &r->cap_th, sizeof(*p))) == NULL) {
        r->failed = 1;
        return NULL;
    }
    r->th = p;
    r->th[r->n_th] = (thread_state){ client, thread, -1, -1, -1, -1, 0, 0 };
    return &r->th[r->n_th++];
}

/* Ends the stretch open since *since (if any) at t. */
static sim_stretch *close_at(reader *r, int client, int kind, int64_t *since, int64_t t)
{
    sim_stretch *s = NULL;

    if (*since >= 0)
        s = add(r, client, kind, *since, t);
    *since = -1;
    return s;
}

/* Whatever a thread has open ends at t: its client was killed, or the
 * run ended. */
static void close_thread(reader *r, thread_state *t, int64_t at)
{
    close_at(r, t->client, SIM_LANE_WAIT, &t->wait, at);
    close_at(r, t->client, SIM_LANE_HOLD, &t->hold, at);
    close_at(r, t->client, SIM_LANE_CS, &t->cs, at);
    close_at(r, t->client, SIM_LANE_RELEASE, &t->release, at);
}

/* A thread's strongest open stretch: inside beats releasing beats
 * holding beats waiting; -1 when it has none open. */
static int strongest(const thread_state *t)
{
    return t->cs >= 0 ? SIM_LANE_CS : t->release >= 0 ? SIM_LANE_RELEASE
           : t->hold >= 0 ? SIM_LANE_HOLD : t->wait >= 0 ? SIM_LANE_WAIT : -1;
}

static int rank(int kind)
{
    switch (kind) {
    case SIM_LANE_CS: return 4;
    case SIM_LANE_RELEASE: return 3;
    case SIM_LANE_HOLD: return 2;
    case SIM_LANE_WAIT: return 1;
    default: return 0;
    }
}

/* A pause ends: the stretch the client woke into, the strongest any of
 * its threads has open, or -1. */
static int woke_into(const reader *r, int client)
{
    int best = -1;

    for (size_t k = 0; k < r->n_th; k++)
        if (r->th[k].client == client && rank(strongest(&r->th[k])) > rank(best))
            best = strongest(&r->th[k]);
    return best;
}

static void acquired(reader *r, thread_state *t, const sim_event *e)
{
    sim_stretch *token;

    close_at(r, t->client, SIM_LANE_WAIT, &t->wait, e->t_ns);
    if (e->type == SIM_EV_ACQUIRE_OK) {
        if (t->depth++ == 0)
            t->hold = e->t_ns;
        /* A stage that fences: the token this hold drew. */
        if (e->token > 0 && (token = add(r, t->client, SIM_LANE_TOKEN, e->t_ns, e->t_ns)))
            token->wrote = e->token;
        return;
    }
    add(r, t->client, e->type == SIM_EV_ACQUIRE_BUSY ? SIM_LANE_GAVE_UP : SIM_LANE_ERROR,
        e->t_ns, e->t_ns);
}

static void thread_event(reader *r, thread_state *t, const sim_event *e)
{
    sim_stretch *s;

    switch (e->type) {
    case SIM_EV_ACQUIRE_INVOKE: t->wait = e->t_ns; break;
    case SIM_EV_ACQUIRE_OK:
    case SIM_EV_ACQUIRE_BUSY:
    case SIM_EV_ACQUIRE_ERROR: acquired(r, t, e); break;
    case SIM_EV_CS_ENTER: t->cs = e->t_ns; break;
    case SIM_EV_CS_EXIT: close_at(r, t->client, SIM_LANE_CS, &t->cs, e->t_ns); break;
    case SIM_EV_STOCK_READ: t->read = e->value; break;
    case SIM_EV_STOCK_WRITE:
        if ((s = add(r, t->client, SIM_LANE_SALE, e->t_ns, e->t_ns)) != NULL) {
            s->read = t->read;
            s->wrote = e->value;
            r->l->sales++;
        }
        break;
    case SIM_EV_RELEASE_INVOKE:
        /* The outermost release ends the hold; a retry finds it ended. */
        if (t->depth > 0 && --t->depth == 0)
            close_at(r, t->client, SIM_LANE_HOLD, &t->hold, e->t_ns);
        t->release = e->t_ns;
        break;
    case SIM_EV_RELEASE_OK:
    case SIM_EV_RELEASE_NOT_OWNER:
    case SIM_EV_RELEASE_ERROR:
        if ((s = close_at(r, t->client, SIM_LANE_RELEASE, &t->release, e->t_ns)) != NULL)
            s->ended = e->type;
        break;
    default: break;
    }
}

static void pause_ends(reader *r, int c, int64_t at)
{
    int64_t since = r->paused[c] - 1;
    sim_stretch *s;

    close_at(r, c, SIM_LANE_PAUSE, &since, at);
    if ((s = add(r, c, SIM_LANE_WOKE, at, at)) != NULL) {
        s->read = r->paused[c] - 1;
        s->wrote = woke_into(r, c);
    }
    r->paused[c] = 0;
}

/* A cut ends (its link is back, the client died, or the run ended): one
 * stretch with every node it was cut off from. */
static void cut_ends(reader *r, int c, int64_t at)
{
    int64_t since = r->cut[c] - 1;
    sim_stretch *s;

    if (r->cut[c] > 0 && (s = close_at(r, c, SIM_LANE_CUT, &since, at)) != NULL)
        s->read = r->cut_nodes[c];
    r->cut[c] = 0;
    r->cut_nodes[c] = 0;
}

static void client_event(reader *r, const sim_event *e)
{
    int c = e->client;
    thread_state *t;

    if (r->dead[c])
        return;
    if (e->type == SIM_EV_CUT_BEGIN) {
        if (r->cut[c] == 0)
            r->cut[c] = e->t_ns + 1;
        if (e->node >= 0 && e->node < 63)
            r->cut_nodes[c] |= (int64_t)1 << e->node;
    } else if (e->type == SIM_EV_CUT_END) {
        cut_ends(r, c, e->t_ns);
    } else if (e->type == SIM_EV_PAUSE_BEGIN) {
        r->paused[c] = e->t_ns + 1;
    } else if (e->type == SIM_EV_PAUSE_END) {
        if (r->paused[c] > 0)
            pause_ends(r, c, e->t_ns);
    } else if (e->type == SIM_EV_CRASH) {
        /* A killed process is neither paused nor doing anything. */
        int64_t since = r->paused[c] - 1;

        close_at(r, c, SIM_LANE_PAUSE, &since, e->t_ns);
        r->paused[c] = 0;
        cut_ends(r, c, e->t_ns);
        for (size_t k = 0; k < r->n_th; k++)
            if (r->th[k].client == c)
                close_thread(r, &r->th[k], e->t_ns);
        add(r, c, SIM_LANE_KILLED, e->t_ns, e->t_ns);
        r->dead[c] = 1;
    } else if ((t = thread_of(r, c, e->thread)) != NULL) {
        thread_event(r, t, e);
    }
}

/* What is still open at the run's end ends there; then the fence at
 * work: each write the resource refused, as the verdict tells it. */
static void finish(reader *r, int clients, int64_t end, const sim_verdict *v)
{
    for (size_t k = 0; k < r->n_th; k++)
        close_thread(r, &r->th[k], end);
    for (int c = 0; c < clients; c++) {
        int64_t since = r->paused[c] - 1;

        if (r->paused[c] > 0)
            close_at(r, c, SIM_LANE_PAUSE, &since, end);
        cut_ends(r, c, end);
    }
    for (size_t i = 0; v != NULL && i < v->n_refusals; i++) {
        const sim_refusal *f = &v->refusals[i];
        sim_stretch *s;

        if (f->client >= 0 && f->client < clients &&
            (s = add(r, f->client, SIM_LANE_REFUSED, f->at_ns, f->at_ns)) != NULL)
            s->wrote = (int64_t)i;
    }
}

int sim_lanes_read(sim_lanes *l, const sim_event *ev, size_t n, int clients,
                   int64_t end, const sim_verdict *v)
{
    reader r = { .l = l };

    memset(l, 0, sizeof(*l));
    if (clients > 0) {
        r.paused = calloc((size_t)clients, sizeof(*r.paused));
        r.cut = calloc((size_t)clients, sizeof(*r.cut));
        r.cut_nodes = calloc((size_t)clients, sizeof(*r.cut_nodes));
        r.dead = calloc((size_t)clients, sizeof(*r.dead));
        r.failed = r.paused == NULL || r.cut == NULL || r.cut_nodes == NULL ||
                   r.dead == NULL;
    }
    for (size_t i = 0; !r.failed && i < n; i++)
        if (ev[i].client >= 0 && ev[i].client < clients)
            client_event(&r, &ev[i]);
    if (!r.failed)
        finish(&r, clients, end, v);
    free(r.th);
    free(r.paused);
    free(r.cut);
    free(r.cut_nodes);
    free(r.dead);
    if (r.failed)
        sim_lanes_free(l);
    return r.failed ? -1 : 0;
}

void sim_lanes_free(sim_lanes *l)
{
    free(l->st);
    memset(l, 0, sizeof(*l));
}

int sim_lanes_sessions(const sim_event *ev, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ev[i].type == SIM_EV_KEY && (strcmp(ev[i].detail, "create") == 0 ||
                                         strcmp(ev[i].detail, "first") == 0))
            return 1;
    return 0;
}
