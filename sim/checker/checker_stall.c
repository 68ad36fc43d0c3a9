/* checker_stall: the episodes of ST, a free lock that a live client
 * waited for and nobody took (checker.h states the rule).
 *
 * The lock is free where no node has a key: the gaps between the keys
 * that judge_keys published, from the first key to the run's end. Each
 * acquire's wait is laid over those gaps; a stretch longer than the bound
 * is one episode. */
#include <stdlib.h>
#include <string.h>

#include "checker_internal.h"

/* A stretch with no key on any node. */
typedef struct gap {
    int64_t from, to;
    int taken;      /* it ended because a key appeared */
} gap;

static int by_from(const void *a, const void *b)
{
    const sim_key_span *x = a, *y = b;

    return (x->from_ns > y->from_ns) - (x->from_ns < y->from_ns);
}

/* The free stretches of the run since the lock was first taken, in time
 * order, into *out (the caller frees it). Their count, or -1 when out of
 * memory. Before the first key there is nothing to hand on: the clients
 * are still connecting (a ZooKeeper session is a write through the
 * leader, slow on a loaded machine), and a stall is a lock not passed on. */
static long free_gaps(chk *c, gap **out)
{
    const sim_verdict *v = c->v;
    sim_key_span *k = malloc((v->n_keys + 1) * sizeof(*k));
    gap *g = malloc((v->n_keys + 1) * sizeof(*g));
    int64_t cursor = v->start_ns;
    long n = 0;

    if (k == NULL || g == NULL) {
        free(k);
        free(g);
        sim_checker_unjudged(c, "out of memory");
        return -1;
    }
    /* No key at all: the lock was never seen taken (a kind with no
     * observer, MariaDB's), so no stretch of the run is known free. */
    if (v->n_keys == 0) {
        free(k);
        *out = g;
        return 0;
    }
    memcpy(k, v->keys, v->n_keys * sizeof(*k));
    qsort(k, v->n_keys, sizeof(*k), by_from);
    if (k[0].from_ns > cursor)
        cursor = k[0].from_ns;
    for (size_t i = 0; i < v->n_keys; i++) {
        if (k[i].from_ns > cursor)
            g[n++] = (gap){ cursor, k[i].from_ns, 1 };
        if (k[i].to_ns > cursor)
            cursor = k[i].to_ns;
    }
    if (cursor < v->end_ns)
        g[n++] = (gap){ cursor, v->end_ns, 0 };
    free(k);
    *out = g;
    return n;
}

/* The first gap that ends after t (binary search); n when none. */
static long first_after(const gap *g, long n, int64_t t)
{
    long lo = 0, hi = n;

    while (lo < hi) {
        long mid = lo + (hi - lo) / 2;

        if (g[mid].to <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The earliest waiter of another thread that asked before w and died
 * waiting before the stall ended: the dead waiter ahead of w. */
static void dead_ahead(const chk *c, const chk_op *w, int64_t until, sim_st_evidence *st)
{
    const chk_op *dead = NULL;

    st->dead = st->dead_thread = SIM_NO_CLIENT;
    for (size_t i = 0; i < c->n_ops; i++) {
        const chk_op *o = &c->ops[i];

        if (o->kind != OP_ACQUIRE || o->outcome != OUT_CRASH || o->th == w->th ||
            o->inv_ns >= w->inv_ns || o->out_ns > until)
            continue;
        if (dead == NULL || o->inv_ns < dead->inv_ns)
            dead = o;
    }
    if (dead == NULL)
        return;
    st->dead = c->th[dead->th].client;
    st->dead_thread = c->th[dead->th].thread;
    st->dead_invoke_ns = dead->inv_ns;
    st->dead_crash_ns = dead->out_ns;
}

static void stall_episode(chk *c, const chk_op *w, int64_t from, int64_t to,
                          int taken, int64_t bound)
{
    sim_episode *e = sim_checker_episode(c, SIM_ANOM_ST, from);

    if (e == NULL)
        return;
    e->st.waiter = c->th[w->th].client;
    e->st.waiter_thread = c->th[w->th].thread;
    e->st.invoke = w->inv;
    e->st.invoke_ns = w->inv_ns;
    e->st.from_ns = from;
    e->st.to_ns = to;
    e->st.bound_ns = bound;
    e->st.taken = taken;
    dead_ahead(c, w, to, &e->st);
}

/* One acquire's wait over the free stretches. */
static void waited(chk *c, const chk_op *w, const gap *g, long n, int64_t bound)
{
    const chk_thread *t = &c->th[w->th];
    int64_t end = w->out_ns < c->v->end_ns ? w->out_ns : c->v->end_ns;

    if (t->crash_ns < end)
        end = t->crash_ns;
    for (long i = first_after(g, n, w->inv_ns); i < n && g[i].from < end; i++) {
        int64_t from = g[i].from > w->inv_ns ? g[i].from : w->inv_ns;
        int64_t to = g[i].to < end ? g[i].to : end;

        if (to - from > bound)
            stall_episode(c, w, from, to, g[i].taken && to == g[i].to, bound);
    }
}

void sim_checker_stalls(chk *c)
{
    int64_t bound = (int64_t)SIM_STALL_LEASES * c->lease_ms * 1000000;
    gap *g = NULL;
    long n;

    if (c->failed || (n = free_gaps(c, &g)) < 0)
        return;
    for (size_t i = 0; i < c->n_ops && !c->failed; i++) {
        const chk_op *o = &c->ops[i];

        if (o->kind == OP_ACQUIRE && !o->nested)
            waited(c, o, g, n, bound);
    }
    free(g);
}
