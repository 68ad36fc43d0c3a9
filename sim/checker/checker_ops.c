/* checker_ops: a history's client events as operations and holds.
 *
 * Each client thread's events become Jepsen's operations, an invoke and
 * its outcome (OK, BUSY, NOT_OWNER, an error, the client's crash, or none
 * when the run ended first), and the holds its acquire-oks opened. A
 * thread whose steps are out of order (an outcome without an invoke, two
 * invokes, a step after its crash) makes the history one the checker
 * cannot judge: it says where, and gives no verdict. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checker_internal.h"

/* ---- what can be judged -------------------------------------------------- */

/* An operation's step: it belongs to a client thread. */
static int op_event(int type)
{
    return type >= SIM_EV_ACQUIRE_INVOKE && type <= SIM_EV_STOCK_REFUSED;
}

/* Any event a client (or the nemesis about a client) records. */
static int client_event(int type)
{
    return op_event(type) || type == SIM_EV_CRASH ||
           type == SIM_EV_PAUSE_BEGIN || type == SIM_EV_PAUSE_END ||
           type == SIM_EV_CUT_BEGIN || type == SIM_EV_CUT_END ||
           type == SIM_EV_FAILPOINT;
}

static int check_event(chk *c, size_t i)
{
    const sim_event *e = &c->ev[i];

    if (e->type < 0 || e->type >= SIM_EV_TYPE_COUNT) {
        sim_checker_unjudged(c, "event %zu (%ld ms) has type %d, which this "
                             "checker does not know", i, sim_checker_ms(c, i),
                             (int)e->type);
        return -1;
    }
    if (client_event(e->type) && (e->client < 0 || e->thread < 0)) {
        sim_checker_unjudged(c, "a %s at %ld ms names client %d, thread %d: "
                             "clients and threads are numbered from 0",
                             sim_event_type_name(e->type), sim_checker_ms(c, i),
                             (int)e->client, (int)e->thread);
        return -1;
    }
    if (i > 0 && sim_event_order(&c->ev[i - 1], e) > 0) {
        sim_checker_unjudged(c, "the events are out of order at %ld ms: sort "
                             "them with sim_history_sort", sim_checker_ms(c, i));
        return -1;
    }
    return 0;
}

/* ---- threads --------------------------------------------------------------- */

/* Client threads by (client, thread), in a hash table that grows: no
 * table of fixed size, any numbers. */
typedef struct thread_map {
    int64_t *keys;
    int *ids;          /* -1: empty slot */
    size_t cap;        /* a power of two */
} thread_map;

static size_t slot_of(int64_t key, size_t cap)
{
    uint64_t x = (uint64_t)key + 0x9E3779B97F4A7C15u;

    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9u;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBu;
    return (size_t)(x ^ (x >> 31)) & (cap - 1);
}

static int map_grow(thread_map *m)
{
    thread_map big = { NULL, NULL, m->cap ? m->cap * 2 : 64 };

    big.keys = malloc(big.cap * sizeof(*big.keys));
    big.ids = malloc(big.cap * sizeof(*big.ids));
    if (big.keys == NULL || big.ids == NULL) {
        free(big.keys);
        free(big.ids);
        return -1;
    }
    for (size_t i = 0; i < big.cap; i++)
        big.ids[i] = -1;
    for (size_t i = 0; i < m->cap; i++) {
        size_t j = slot_of(m->keys[i], big.cap);

        if (m->ids[i] < 0)
            continue;
        while (big.ids[j] >= 0)
            j = (j + 1) & (big.cap - 1);
        big.keys[j] = m->keys[i];
        big.ids[j] = m->ids[i];
    }
    free(m->keys);
    free(m->ids);
    *m = big;
    return 0;
}

/* The thread of event i, added the first time it takes a step. */
static int thread_of(chk *c, thread_map *m, size_t i)
{
    int64_t key = (int64_t)c->ev[i].client * 4294967296LL + c->ev[i].thread;
    size_t j;
    chk_thread *t;

    if ((size_t)c->n_th * 2 >= m->cap && map_grow(m) != 0)
        return -1;
    for (j = slot_of(key, m->cap); m->ids[j] >= 0; j = (j + 1) & (m->cap - 1))
        if (m->keys[j] == key)
            return m->ids[j];
    t = sim_checker_grow(c, c->th, &c->cap_th, (size_t)c->n_th + 1,
                         sizeof(*t));
    if (t == NULL)
        return -1;
    c->th = t;
    c->th[c->n_th] = (chk_thread){ .client = c->ev[i].client,
        .thread = c->ev[i].thread, .pending = -1, .last = -1, .hold = -1,
        .crash = NONE_AT, .crash_ns = NEVER };
    m->keys[j] = key;
    m->ids[j] = c->n_th;
    return c->n_th++;
}

/* Every client thread that took a step, in the order they first did, and
 * each event's thread. */
static int map_threads(chk *c)
{
    thread_map m = { NULL, NULL, 0 };
    int rc = 0;

    if ((c->th_of = malloc(c->n * sizeof(*c->th_of))) == NULL)
        rc = -1;
    for (size_t i = 0; i < c->n && rc == 0; i++) {
        c->th_of[i] = -1;
        if (op_event(c->ev[i].type) && c->ev[i].client >= 0 &&
            (c->th_of[i] = thread_of(c, &m, i)) < 0)
            rc = -1;
    }
    free(m.keys);
    free(m.ids);
    if (rc != 0)
        sim_checker_unjudged(c, "out of memory");
    return rc;
}

/* ---- operations and holds -------------------------------------------------- */

static const char *step_name(const chk *c, size_t i)
{
    return sim_event_type_name(c->ev[i].type);
}

static int out_of_order(chk *c, int th, size_t i, const char *why)
{
    char name[16];

    sim_check_client_name(c->th[th].client, name, sizeof(name));
    sim_checker_unjudged(c, "client %s (thread %d): %s at %ld ms %s", name,
                         c->th[th].thread, step_name(c, i),
                         sim_checker_ms(c, i), why);
    return -1;
}

static long new_op(chk *c, int th, int kind, size_t i)
{
    chk_op *p = sim_checker_grow(c, c->ops, &c->cap_ops, c->n_ops + 1,
                                 sizeof(*p));
    chk_thread *t = &c->th[th];
    long id = (long)c->n_ops;

    if (p == NULL)
        return -1;
    c->ops = p;
    c->ops[c->n_ops++] = (chk_op){ .th = th, .kind = (unsigned char)kind,
        .outcome = OUT_NONE, .nested = kind == OP_ACQUIRE && t->depth > 0,
        .inv = i, .out = NONE_AT, .inv_ns = c->ev[i].t_ns, .out_ns = NEVER,
        .proof_at = NONE_AT, .key = -1,
        .hold = kind == OP_ACQUIRE && t->depth > 0 ? t->hold : -1, .next = -1 };
    if (t->last >= 0)
        c->ops[t->last].next = id;
    t->last = t->pending = id;
    return id;
}

/* A hold opens at acquire-ok (or an unknown acquire's proof); it closes
 * at to (NONE_AT: the run's end). */
long sim_checker_open_hold(chk *c, int th, long op, size_t from,
                           int64_t from_ns)
{
    chk_hold *p = sim_checker_grow(c, c->holds, &c->cap_holds,
                                   c->n_holds + 1, sizeof(*p));

    if (p == NULL)
        return -1;
    c->holds = p;
    c->holds[c->n_holds] = (chk_hold){ th, op, from, NONE_AT, from_ns, NEVER, 0 };
    return (long)c->n_holds++;
}

static void close_hold(chk *c, int th, size_t i)
{
    chk_thread *t = &c->th[th];

    if (t->hold < 0)
        return;
    c->holds[t->hold].to = i;
    c->holds[t->hold].to_ns = c->ev[i].t_ns;
    t->hold = -1;
    t->depth = 0;
}

static int invoke(chk *c, int th, size_t i, int kind)
{
    chk_thread *t = &c->th[th];

    if (t->pending >= 0)
        return out_of_order(c, th, i, "comes before the outcome of its "
                            "previous step");
    if (new_op(c, th, kind, i) < 0)
        return -1;
    /* The release that ends the outermost hold ends it at its invoke. */
    if (kind == OP_RELEASE && t->depth > 0 && --t->depth == 0)
        close_hold(c, th, i);
    return 0;
}

static int outcome(chk *c, int th, size_t i, int kind, int out)
{
    chk_thread *t = &c->th[th];
    chk_op *o;
    long id;

    if (t->pending < 0 || c->ops[t->pending].kind != kind)
        return out_of_order(c, th, i, "has no invoke before it");
    id = t->pending;
    o = &c->ops[id];
    o->outcome = (unsigned char)out;
    o->out = i;
    o->out_ns = c->ev[i].t_ns;
    t->pending = -1;
    if (out == OUT_OK && kind == OP_ACQUIRE && t->depth++ == 0) {
        if ((t->hold = sim_checker_open_hold(c, th, id, i, o->out_ns)) < 0)
            return -1;
        o->hold = t->hold;
    }
    return 0;
}

/* One step of a client thread. */
static int op_step(chk *c, size_t i)
{
    int th = c->th_of[i];

    if (c->th[th].crash != NONE_AT)
        return out_of_order(c, th, i, "comes after its client's crash");
    switch (c->ev[i].type) {
    case SIM_EV_ACQUIRE_INVOKE: return invoke(c, th, i, OP_ACQUIRE);
    case SIM_EV_ACQUIRE_OK: return outcome(c, th, i, OP_ACQUIRE, OUT_OK);
    case SIM_EV_ACQUIRE_BUSY: return outcome(c, th, i, OP_ACQUIRE, OUT_BUSY);
    case SIM_EV_ACQUIRE_ERROR: return outcome(c, th, i, OP_ACQUIRE, OUT_ERROR);
    case SIM_EV_RELEASE_INVOKE: return invoke(c, th, i, OP_RELEASE);
    case SIM_EV_RELEASE_OK: return outcome(c, th, i, OP_RELEASE, OUT_OK);
    case SIM_EV_RELEASE_NOT_OWNER:
        return outcome(c, th, i, OP_RELEASE, OUT_NOT_OWNER);
    case SIM_EV_RELEASE_ERROR: return outcome(c, th, i, OP_RELEASE, OUT_ERROR);
    case SIM_EV_STOCK_WRITE: c->v->stock.sold++; return 0;
    default: return 0;
    }
}

/* A SIGKILL: every thread of the client stops where it was. */
static void crash(chk *c, size_t i)
{
    int client = c->ev[i].client;

    for (int th = 0; th < c->n_th; th++) {
        chk_thread *t = &c->th[th];

        if (t->client != client || t->crash != NONE_AT)
            continue;
        t->crash = i;
        t->crash_ns = c->ev[i].t_ns;
        if (t->pending >= 0) {
            c->ops[t->pending].outcome = OUT_CRASH;
            c->ops[t->pending].out = i;
            c->ops[t->pending].out_ns = c->ev[i].t_ns;
            t->pending = -1;
        }
        close_hold(c, th, i);
    }
}

int sim_checker_operations(chk *c, int *have_initial, int *have_final)
{
    if (map_threads(c) != 0)
        return -1;
    for (size_t i = 0; i < c->n && !c->failed; i++) {
        const sim_event *e = &c->ev[i];

        if (check_event(c, i) != 0)
            return -1;
        if (client_event(e->type) && e->client >= c->v->clients)
            c->v->clients = e->client + 1;
        if (op_event(e->type) && op_step(c, i) != 0)
            return -1;
        if (e->type == SIM_EV_CRASH)
            crash(c, i);
        if (e->type == SIM_EV_STOCK_INITIAL && !*have_initial) {
            c->v->stock.initial = e->value;
            *have_initial = 1;
        }
        if (e->type == SIM_EV_STOCK_FINAL) {
            c->v->stock.final = e->value;
            *have_final = 1;
        }
    }
    return c->failed ? -1 : 0;
}

