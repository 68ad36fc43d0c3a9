/* checker_rules: the episodes of ME, MD and DL, from the holds, the keys
 * and their owners (checker.h states each rule).
 *
 * Each rule is decided on intervals with both of their ends known, never
 * on the order of two events stamped in the same nanosecond: that is what
 * makes a verdict independent of how ties fell. */
#include <stdlib.h>
#include <string.h>

#include "checker_internal.h"
#include "util.h"

void sim_checker_holder(const chk *c, long hold, sim_holder *h)
{
    const chk_hold *x = &c->holds[hold];
    const chk_op *o = &c->ops[x->op];

    h->client = c->th[x->th].client;
    h->thread = c->th[x->th].thread;
    h->since = x->from;
    h->since_ns = x->from_ns;
    h->proof = o->proof;
    h->proof_at = o->proof_at;
    h->ended = o->out;
    if (o->proof != SIM_PROOF_NONE)
        c->v->unknown_used = 1;
}

static int64_t clamp(const chk *c, int64_t t)
{
    return t < c->v->end_ns ? t : c->v->end_ns;
}

/* ---- ME: overlapping holds ---------------------------------------------- */

/* A hold's start or end, for the sweep. */
typedef struct edge {
    int64_t t;
    int start;      /* 0 before 1: at a tie, holds end before others begin */
    long hold;
} edge;

static int by_edge(const void *a, const void *b)
{
    const edge *x = a, *y = b;

    SIM_CMP(x->t, y->t);
    SIM_CMP(x->start, y->start);
    SIM_CMP(x->hold, y->hold);
    return 0;
}

static void overlap_episode(chk *c, long a, long b, int64_t t)
{
    sim_episode *e = sim_checker_episode(c, SIM_ANOM_ME, t);
    int64_t end = c->holds[a].to_ns < c->holds[b].to_ns ? c->holds[a].to_ns
                                                         : c->holds[b].to_ns;

    if (e == NULL)
        return;
    sim_checker_holder(c, a, &e->me.a);
    sim_checker_holder(c, b, &e->me.b);
    e->me.from_ns = t;
    e->me.to_ns = clamp(c, end);
}

/* The earliest holder in active of a thread other than h's, or -1. */
static long earliest_other(const chk *c, const long *active, size_t n, long h)
{
    long best = -1;

    for (size_t i = 0; i < n; i++) {
        const chk_hold *x = &c->holds[active[i]];

        if (x->th == c->holds[h].th)
            continue;
        if (best < 0 || x->from_ns < c->holds[best].from_ns ||
            (x->from_ns == c->holds[best].from_ns && active[i] < best))
            best = active[i];
    }
    return best;
}

static void span_edge(chk *c, size_t before, size_t after, int64_t t)
{
    sim_verdict *v = c->v;
    sim_span *p;

    if (before < 2 && after >= 2) {
        p = realloc(v->overlaps, (v->n_overlaps + 1) * sizeof(*p));
        if (p == NULL) {
            sim_checker_unjudged(c, "out of memory");
            return;
        }
        v->overlaps = p;
        v->overlaps[v->n_overlaps++] = (sim_span){ t, t };
    } else if (before >= 2 && after < 2) {
        v->overlaps[v->n_overlaps - 1].to_ns = clamp(c, t);
    }
}

static void sweep_holds(chk *c, const edge *e, size_t m, long *active)
{
    size_t n = 0;

    for (size_t i = 0; i < m && !c->failed; i++) {
        size_t before = n;

        if (!e[i].start) {
            for (size_t j = 0; j < n; j++)
                if (active[j] == e[i].hold) {
                    active[j] = active[--n];
                    break;
                }
        } else {
            long a = earliest_other(c, active, n, e[i].hold);

            if (a >= 0)
                overlap_episode(c, a, e[i].hold, e[i].t);
            active[n++] = e[i].hold;
        }
        span_edge(c, before, n, e[i].t);
    }
}

void sim_checker_mutual_exclusion(chk *c)
{
    edge *e;
    long *active;
    size_t m = 0;

    if (c->failed)
        return;
    e = malloc((2 * c->n_holds + 1) * sizeof(*e));
    active = malloc((c->n_holds + 1) * sizeof(*active));
    if (e == NULL || active == NULL) {
        sim_checker_unjudged(c, "out of memory");
    } else {
        for (size_t h = 0; h < c->n_holds; h++) {
            if (c->holds[h].to_ns <= c->holds[h].from_ns)
                continue;       /* an empty hold overlaps nothing */
            e[m++] = (edge){ c->holds[h].from_ns, 1, (long)h };
            e[m++] = (edge){ c->holds[h].to_ns, 0, (long)h };
        }
        qsort(e, m, sizeof(*e), by_edge);
        sweep_holds(c, e, m, active);
    }
    free(e);
    free(active);
}

/* ---- MD: a delete by someone other than the owner --------------------- */

/* The releases that could have sent key k's DEL (checker.h, MD). */
typedef struct deleters {
    long *live;
    size_t n_live;
    size_t next;            /* the next release op to take in */
} deleters;

static void find_deleters(const chk *c, deleters *d, const chk_key *key)
{
    int64_t del_ns = key->end_ns;
    size_t m = 0;

    for (; d->next < c->n_ops && c->ops[d->next].inv_ns <= del_ns; d->next++)
        if (c->ops[d->next].kind == OP_RELEASE &&
            c->ops[d->next].outcome != OUT_NOT_OWNER)
            d->live[d->n_live++] = (long)d->next;
    for (size_t j = 0; j < d->n_live; j++)
        if (c->ops[d->live[j]].out_ns >= key->seen_ns)
            d->live[m++] = d->live[j];
    d->n_live = m;
}

/* 1 when owner o held the lock past the del and sent none of the DELs
 * that could have removed its key. */
static int victim(const chk *c, const deleters *d, long o, int64_t del_ns)
{
    const chk_op *op = &c->ops[o];

    if (sim_checker_op_end_ns(c, op) <= del_ns)
        return 0;
    /* Of several nodes, an acquire also deletes keys of its own tries that
     * lost: a key deleted before its owner held the lock, or whose owner
     * never did, was not taken from a holder. */
    if (c->nodes > 1 && (op->hold < 0 || c->holds[op->hold].from_ns >= del_ns))
        return 0;
    for (size_t j = 0; j < d->n_live; j++)
        if (c->ops[d->live[j]].th == c->ops[o].th)
            return 0;
    return 1;
}

static int deleter_how(const chk_op *r, int64_t del_ns)
{
    if (r->outcome == OUT_CRASH)
        return SIM_RELEASE_CRASHED;
    if (r->outcome == OUT_ERROR)
        return SIM_RELEASE_FAILED;
    return r->out_ns > del_ns ? SIM_RELEASE_IN_FLIGHT : SIM_RELEASE_RETURNED;
}

/* Who got in through the hole: the next key's owner, while the victim
 * still held. */
static void intruder(chk *c, size_t k, long victim_op, sim_md_evidence *md)
{
    const chk_key *next = k + 1 < c->n_keys ? &c->keys[k + 1] : NULL;
    const chk_op *o;

    md->intruder.client = SIM_NO_CLIENT;
    if (next == NULL || next->owner < 0)
        return;
    o = &c->ops[next->owner];
    if (o->hold < 0 || o->th == c->ops[victim_op].th ||
        c->holds[o->hold].from_ns >= sim_checker_op_end_ns(c, &c->ops[victim_op]))
        return;
    sim_checker_holder(c, o->hold, &md->intruder);
}

/* 1 when the releases that could have deleted the key are one thread's. */
static int one_thread(const chk *c, const deleters *d)
{
    for (size_t j = 1; j < d->n_live; j++)
        if (c->ops[d->live[j]].th != c->ops[d->live[0]].th)
            return 0;
    return d->n_live > 0;
}

static void delete_episode(chk *c, size_t k, const deleters *d)
{
    const chk_key *key = &c->keys[k];
    sim_episode *e = sim_checker_episode(c, SIM_ANOM_MD, key->end_ns);
    sim_md_evidence *md;

    if (e == NULL)
        return;
    md = &e->md;
    md->del = key->end;
    md->at_ns = key->end_ns;
    md->deleter = md->deleter_thread = SIM_UNNAMED;
    if (one_thread(c, d)) {
        /* A retried release: its latest try is the one that got through
         * (an earlier one would have left nothing to delete). */
        const chk_op *r = &c->ops[d->live[d->n_live - 1]];

        md->deleter = c->th[r->th].client;
        md->deleter_thread = c->th[r->th].thread;
        md->deleter_how = deleter_how(r, key->end_ns);
        if (md->deleter_how >= SIM_RELEASE_FAILED)
            c->v->unknown_used = 1;
    }
    md->owner.client = md->owner.thread = SIM_UNNAMED;
    md->intruder.client = SIM_NO_CLIENT;
    if (key->owner >= 0 && c->ops[key->owner].hold >= 0) {
        sim_checker_holder(c, c->ops[key->owner].hold, &md->owner);
        intruder(c, k, key->owner, md);
    }
}

void sim_checker_foreign_deletes(chk *c)
{
    deleters d = { malloc((c->n_ops ? c->n_ops : 1) * sizeof(long)), 0, 0 };

    if (d.live == NULL)
        sim_checker_unjudged(c, "out of memory");
    for (size_t k = 0; k < c->n_keys && !c->failed; k++) {
        const chk_key *key = &c->keys[k];
        int all = key->owner != OWNER_NOBODY;

        if (key->end_kind != END_DEL)
            continue;
        find_deleters(c, &d, key);
        if (key->owner >= 0)
            all = victim(c, &d, key->owner, key->end_ns);
        for (long j = 0; key->owner == OWNER_SEVERAL && j < key->n_cand; j++)
            all = all && victim(c, &d, c->cands[key->cand + j], key->end_ns);
        if (all)
            delete_episode(c, k, &d);
    }
    free(d.live);
}

/* ---- DL: giving up where waiting could never succeed ------------------ */

/* 1 when o's thread invoked a release after o. */
static int released_after(const chk *c, const chk_op *o)
{
    for (long i = o->next; i >= 0; i = c->ops[i].next)
        if (c->ops[i].kind == OP_RELEASE)
            return 1;
    return 0;
}

/* For an acquire-ok: its releases up to b all failed (SIM_STUCK_RELEASE_
 * FAILED, *at the last failure), or -1 when one returned or may still. */
static int release_failed(const chk *c, const chk_op *o, int64_t b, size_t *at)
{
    int failed = -1;

    for (long i = o->next; i >= 0; i = c->ops[i].next) {
        const chk_op *r = &c->ops[i];

        if (r->kind != OP_RELEASE || r->inv_ns > b)
            continue;
        if (r->outcome != OUT_ERROR || r->out_ns > b)
            return -1;  /* it returned, or may still delete the key */
        failed = SIM_STUCK_RELEASE_FAILED;
        *at = r->out;
    }
    return failed;
}

/* Why o's key stays, seen at time b: SIM_STUCK_*, or -1 when o may still
 * delete it. *at gets the crash or error that left it. */
static int stuck(const chk *c, const chk_op *o, int64_t b, size_t *at)
{
    const chk_thread *t = &c->th[o->th];

    *at = t->crash;
    if (o->outcome == OUT_CRASH)
        return SIM_STUCK_CRASHED_ACQUIRING;
    if (t->crash_ns <= b)
        return SIM_STUCK_CRASHED;
    if (o->outcome == OUT_ERROR && o->out_ns <= b && !released_after(c, o)) {
        *at = o->out;
        return SIM_STUCK_ACQUIRE_FAILED;
    }
    return o->outcome == OUT_OK ? release_failed(c, o, b, at) : -1;
}

/* The lock key at a moment: which key, and whether it had a TTL. */
typedef struct key_state {
    long key;           /* -1: none */
    int ttl;
    size_t live;        /* live holders (acquire-ok holds) */
} key_state;

/* The key's owner if it will never delete it; fills the DL evidence.
 * Returns 0 when some owner or candidate may still delete it. */
static int stuck_key(const chk *c, long k, int64_t b, sim_dl_evidence *dl)
{
    const chk_key *key = &c->keys[k];
    size_t at = NONE_AT;

    dl->owner = dl->owner_thread = SIM_UNNAMED;
    dl->stuck = SIM_STUCK_UNNAMED;
    dl->stuck_at = NONE_AT;
    if (key->owner >= 0) {
        const chk_op *o = &c->ops[key->owner];

        if ((dl->stuck = stuck(c, o, b, &at)) < 0)
            return 0;
        dl->owner = c->th[o->th].client;
        dl->owner_thread = c->th[o->th].thread;
        dl->stuck_at = at;
        dl->stuck_ns = at != NONE_AT ? c->ev[at].t_ns : 0;
        return 1;
    }
    for (long j = 0; key->owner == OWNER_SEVERAL && j < key->n_cand; j++)
        if (stuck(c, &c->ops[c->cands[key->cand + j]], b, &at) < 0)
            return 0;
    return 1;
}

static void give_up(chk *c, const chk_op *o, const key_state *before,
                    const key_state *after)
{
    int64_t b = o->out_ns;
    sim_dl_evidence dl;
    sim_episode *e;

    memset(&dl, 0, sizeof(dl));
    dl.self = o->nested;
    if (!dl.self && (before->key < 0 || before->key != after->key ||
                     before->ttl || after->ttl || before->live > 0 ||
                     after->live > 0 || !stuck_key(c, before->key, b, &dl)))
        return;
    if ((e = sim_checker_episode(c, SIM_ANOM_DL, b)) == NULL)
        return;
    dl.waiter = c->th[o->th].client;
    dl.waiter_thread = c->th[o->th].thread;
    dl.invoke = o->inv;
    dl.busy = o->out;
    dl.invoke_ns = o->inv_ns;
    dl.busy_ns = b;
    dl.held_since_ns = dl.self ? c->holds[o->hold].from_ns : 0;
    if (!dl.self && dl.stuck != SIM_STUCK_CRASHED &&
        dl.stuck != SIM_STUCK_UNNAMED)
        c->v->unknown_used = 1;
    e->dl = dl;
}

/* The state after event i, from the one before it. */
static void step_state(const chk *c, size_t i, key_state *s, size_t *next_key)
{
    const chk_key *k = *next_key < c->n_keys ? &c->keys[*next_key] : NULL;
    const sim_event *e = &c->ev[i];

    if (k != NULL && k->seen_at == i) {
        s->key = (long)(*next_key)++;
        s->ttl = 0;
    }
    if (e->type == SIM_EV_KEY && s->key >= 0 &&
        sim_key_event_kind(e->detail) == SIM_KEY_TTL)
        s->ttl = strcmp(e->detail, "persist") != 0;
    if (s->key >= 0 && c->keys[s->key].end == i)
        s->key = -1;
}

/* Live holders: acquire-ok holds that began at or before event i and
 * have not ended before it. */
static size_t count_live(const size_t *from, const size_t *to,
                         size_t n, size_t i, size_t *f, size_t *t)
{
    while (*f < n && from[*f] <= i)
        (*f)++;
    while (*t < n && to[*t] <= i)
        (*t)++;
    return *f - *t;
}

static int by_index(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;

    return (x > y) - (x < y);
}

/* A busy acquire, by the event it gave up at. */
typedef struct busy {
    size_t out;
    long op;
} busy;

static int by_out(const void *a, const void *b)
{
    const busy *x = a, *y = b;

    return (x->out > y->out) - (x->out < y->out);
}

/* The busy acquires in the order they gave up. */
static size_t busy_ops(const chk *c, busy *list)
{
    size_t m = 0;

    for (size_t i = 0; i < c->n_ops; i++)
        if (c->ops[i].kind == OP_ACQUIRE && c->ops[i].outcome == OUT_BUSY)
            list[m++] = (busy){ c->ops[i].out, (long)i };
    qsort(list, m, sizeof(*list), by_out);
    return m;
}

/* Walks the history once, a nanosecond at a time: a waiter that gave up
 * in that nanosecond meets the key and the holders as they were both
 * before and after it, and counts only if both would deadlock it. */
static void walk(chk *c, const busy *list, size_t nb, const size_t *from,
                 const size_t *to, size_t nh)
{
    key_state s = { -1, 0, 0 }, before;
    size_t next_key = 0, f = 0, t = 0, bi = 0, i = 0;

    while (i < c->n && bi < nb && !c->failed) {
        size_t j = i;

        before = s;
        for (; j < c->n && c->ev[j].t_ns == c->ev[i].t_ns; j++) {
            step_state(c, j, &s, &next_key);
            s.live = count_live(from, to, nh, j, &f, &t);
        }
        for (; bi < nb && list[bi].out < j; bi++)
            give_up(c, &c->ops[list[bi].op], &before, &s);
        i = j;
    }
}

void sim_checker_deadlocks(chk *c)
{
    busy *list = malloc((c->n_ops + 1) * sizeof(*list));
    size_t *from = malloc((c->n_holds + 1) * sizeof(*from));
    size_t *to = malloc((c->n_holds + 1) * sizeof(*to));
    size_t nh = 0, nb;

    if (list == NULL || from == NULL || to == NULL) {
        sim_checker_unjudged(c, "out of memory");
    } else if (!c->failed) {
        for (size_t h = 0; h < c->n_holds; h++)
            if (!c->holds[h].unknowing) {
                from[nh] = c->holds[h].from;
                to[nh++] = c->holds[h].to;  /* NONE_AT: sorts last */
            }
        qsort(from, nh, sizeof(*from), by_index);
        qsort(to, nh, sizeof(*to), by_index);
        nb = busy_ops(c, list);
        walk(c, list, nb, from, to, nh);
    }
    free(list);
    free(from);
    free(to);
}
