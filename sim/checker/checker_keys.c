/* checker_keys: the lock key's life, read from the observer's events, and
 * the acquire that made each key (checker.h: "Keys", "Owners", "Unknown
 * outcomes").
 *
 * Who made a key is decided from operation windows only: an acquire made
 * a key only if the key appeared inside what the acquire's window allows.
 * Nothing else in the history (an unrelated earlier hold, a release that
 * returned long ago, the order the observer's messages arrived in) can
 * move a key to another owner. */
#include <stdlib.h>
#include <string.h>

#include "checker_internal.h"

/* ---- the keys ------------------------------------------------------------- */

static long new_key(chk *c, size_t seen_at, int created, int64_t seen_ns)
{
    int64_t prev = c->n_keys > 0 ? c->keys[c->n_keys - 1].seen_ns : INT64_MIN;
    chk_key *p = sim_checker_grow(c, c->keys, &c->cap_keys, c->n_keys + 1,
                                  sizeof(*p));

    if (p == NULL)
        return -1;
    c->keys = p;
    c->keys[c->n_keys] = (chk_key){
        .create = created ? seen_at : NONE_AT, .seen_at = seen_at,
        .seen_ns = created ? c->ev[seen_at].t_ns : seen_ns,
        .create_ns = c->ev[seen_at].t_ns, .prev_seen_ns = prev,
        .end = NONE_AT, .end_kind = END_NONE, .end_ns = NEVER,
        .ttl_ns = NEVER, .owner = OWNER_NOBODY };
    return (long)c->n_keys++;
}

/* An event needed a key and the observer reported none: its creation was
 * lost somewhere after the last key event it did report. */
static long supposed_key(chk *c, size_t i, int64_t last_ns)
{
    sim_checker_gap(c, SIM_GAP_NO_CREATION, i);
    return new_key(c, i, 0, last_ns != INT64_MIN ? last_ns : c->ev[0].t_ns);
}

static void end_key(chk *c, long k, size_t i, int kind)
{
    c->keys[k].end = i;
    c->keys[k].end_kind = kind;
    c->keys[k].end_ns = c->ev[i].t_ns;
}

static int end_kind(const char *word)
{
    if (strcmp(word, "del") == 0 || strcmp(word, "delete") == 0)
        return END_DEL;
    return strcmp(word, "expired") == 0 ? END_EXPIRED : END_EVICTED;
}

/* One keyspace event; cur is the key that exists, -1 none. */
static long key_event(chk *c, size_t i, long cur, int64_t last_ns)
{
    const char *word = c->ev[i].detail;
    int kind = sim_key_event_kind(word);
    /* Each is a key of its own: SET NX notifies only when it wrote, a
     * ZooKeeper node is created, or becomes the lowest, once. */
    int set = strcmp(word, "set") == 0 || strcmp(word, "create") == 0 ||
              strcmp(word, "first") == 0;

    if (kind < 0) {
        sim_checker_unjudged(c, "a key event \"%s\" at %ld ms: the checker "
                             "does not know what it does to the lock key",
                             word, sim_checker_ms(c, i));
        return -1;
    }
    if (set && cur >= 0) {
        sim_checker_gap(c, SIM_GAP_NO_END, i);
        end_key(c, cur, i, END_MISSED);
        cur = -1;
    }
    if (cur < 0 && kind == SIM_KEY_WRITE && strcmp(word, "hdel") != 0)
        return new_key(c, i, 1, 0);
    if (cur < 0 && (cur = supposed_key(c, i, last_ns)) < 0)
        return -1;
    if (kind == SIM_KEY_TTL && strcmp(word, "persist") != 0 &&
        c->keys[cur].ttl_ns == NEVER)
        c->keys[cur].ttl_ns = c->ev[i].t_ns;
    if (kind == SIM_KEY_END) {
        end_key(c, cur, i, end_kind(word));
        return -1;
    }
    return cur;
}

/* The server of the node being read lost its key: a replica without it
 * was promoted, or the node died or came back empty. */
static int loses_key(const chk *c, const sim_event *e)
{
    if (e->node != c->node)
        return 0;
    return (e->type == SIM_EV_FAILOVER && strncmp(e->detail, "promote", 7) == 0) ||
           e->type == SIM_EV_NODE_DOWN || e->type == SIM_EV_RESTART;
}

/* The first acquire-ok that opened a hold, or NONE_AT. */
static size_t first_ok(const chk *c)
{
    for (size_t o = 0; o < c->n_ops; o++)
        if (c->ops[o].kind == OP_ACQUIRE && !c->ops[o].nested &&
            c->ops[o].outcome == OUT_OK)
            return c->ops[o].out;
    return NONE_AT;
}

void sim_checker_keys_build(chk *c)
{
    long cur = -1;
    int64_t last_ns = INT64_MIN;
    int heard = 0;

    for (size_t i = 0; i < c->n && !c->failed; i++) {
        const sim_event *e = &c->ev[i];
        /* A waiter's node coming and going (v11's queue) is not the
         * lock key's life: the holder's node alone is. */
        int key = e->type == SIM_EV_KEY && e->node == c->node &&
                  sim_key_event_kind(e->detail) != SIM_KEY_QUEUE;

        if (loses_key(c, e) && cur >= 0) {
            end_key(c, cur, i, END_LOST);
            cur = -1;
        }
        if (key) {
            cur = key_event(c, i, cur, last_ns);
            heard = 1;
        }
        if (key || loses_key(c, e))
            last_ns = e->t_ns;
    }
    /* A node that was down all along, or kept no key, reported none. */
    if (!heard && c->nodes == 1 && first_ok(c) != NONE_AT)
        sim_checker_gap(c, SIM_GAP_NO_OBSERVER, first_ok(c));
}

/* ---- who made each key ------------------------------------------------------ */

/* An acquire that may have made a key: a first-level one, not BUSY. Of
 * several nodes, a BUSY one too: a try that won too few of them made keys
 * on some before it gave them back. */
static int may_create(const chk *c, const chk_op *o)
{
    return o->kind == OP_ACQUIRE && !o->nested &&
           (o->outcome != OUT_BUSY || c->nodes > 1);
}

/* Certainly made one: it returned OK, or its owner-checked release did. */
static int certain(const chk *c, const chk_op *o)
{
    return may_create(c, o) && (o->outcome == OUT_OK || o->proof != SIM_PROOF_NONE);
}

/* (b) of "Unknown outcomes": the thread's next step is a release that
 * returned OK, in a stage whose release checks the owner. */
static void release_proofs(chk *c)
{
    for (size_t i = 0; c->release_checks_owner && i < c->n_ops; i++) {
        chk_op *o = &c->ops[i];
        const chk_op *r = o->next >= 0 ? &c->ops[o->next] : NULL;

        if (may_create(c, o) && o->outcome == OUT_ERROR && r != NULL &&
            r->kind == OP_RELEASE && r->outcome == OUT_OK) {
            o->proof = SIM_PROOF_RELEASE;
            o->proof_at = r->out;
        }
    }
}

/* Op made key k. Of one node, that proves an unknown acquire took the
 * lock; of several, one key is no majority, and proves nothing. */
static void own(chk *c, long k, long op)
{
    c->keys[k].owner = op;
    c->ops[op].key = k;
    if (c->nodes == 1 && c->ops[op].outcome != OUT_OK &&
        c->ops[op].proof == SIM_PROOF_NONE) {
        c->ops[op].proof = SIM_PROOF_KEY;
        c->ops[op].proof_at = c->keys[k].seen_at;
    }
}

/* The latest unowned key that appeared inside o's window. */
static long latest_key_in_window(const chk *c, const chk_op *o)
{
    size_t lo = 0, hi = c->n_keys;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (c->keys[mid].seen_ns <= o->out_ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (long k = (long)lo - 1; k >= 0 && c->keys[k].create_ns >= o->inv_ns; k--)
        if (c->keys[k].owner == OWNER_NOBODY)
            return k;
    return -1;
}

typedef struct returned {
    size_t out;   /* the outcome's event: the order they returned in */
    long op;
} returned;

static int by_out(const void *a, const void *b)
{
    const returned *x = a, *y = b;

    return (x->out > y->out) - (x->out < y->out);
}

/* Rule (1): acquires that certainly made a key, in the order they
 * returned, each take the latest unowned key of their window. */
static void match_certain(chk *c)
{
    returned *order = malloc((c->n_ops ? c->n_ops : 1) * sizeof(*order));
    size_t m = 0;

    if (order == NULL) {
        sim_checker_unjudged(c, "out of memory");
        return;
    }
    for (size_t i = 0; i < c->n_ops; i++)
        if (certain(c, &c->ops[i]))
            order[m++] = (returned){ c->ops[i].out, (long)i };
    qsort(order, m, sizeof(*order), by_out);
    for (size_t i = 0; i < m; i++) {
        long k = latest_key_in_window(c, &c->ops[order[i].op]);

        if (k >= 0)
            own(c, k, order[i].op);
    }
    free(order);
}

/* The acquires that may still have made a key, in the order invoked. */
typedef struct pool {
    long *free;             /* no key yet, may_create */
    size_t n_free;
    long *live;             /* those whose window can reach the key at hand */
    size_t n_live;
} pool;

/* Of several nodes, a client records its acquire-ok only once the
 * observer has reported its keys on every node (the sync marker,
 * observer.h): a key reported after that ok is not its. One node's rules
 * do not lean on that. */
static int synced_before(const chk *c, const chk_op *o, const chk_key *key)
{
    return c->nodes > 1 && o->outcome == OUT_OK && o->out_ns < key->seen_ns;
}

/* Moves the pool to key k: takes in acquires invoked by the time k was
 * made, drops those that returned before the previous key was reported
 * (or that own a key now). The key's candidates are then pool->live. */
static void reach(const chk *c, pool *p, size_t *next, long k)
{
    const chk_key *key = &c->keys[k];
    size_t m = 0;

    while (*next < p->n_free && c->ops[p->free[*next]].inv_ns <= key->create_ns)
        p->live[p->n_live++] = p->free[(*next)++];
    for (size_t j = 0; j < p->n_live; j++) {
        const chk_op *o = &c->ops[p->live[j]];

        if ((o->key < 0 || c->nodes > 1) && o->out_ns >= key->prev_seen_ns &&
            !synced_before(c, o, key))
            p->live[m++] = p->live[j];
    }
    p->n_live = m;
}

/* One sweep of rule (2) over the unowned keys: a key with one candidate
 * is its. Returns how many keys found their owner. */
static int sweep(chk *c, pool *p)
{
    size_t next = 0;
    int found = 0;

    p->n_live = 0;
    for (size_t k = 0; k < c->n_keys; k++) {
        if (c->keys[k].owner >= 0)
            continue;
        reach(c, p, &next, (long)k);
        c->keys[k].owner = p->n_live == 0 ? OWNER_NOBODY : OWNER_SEVERAL;
        if (p->n_live == 1) {
            own(c, (long)k, p->live[0]);
            p->n_live = 0;
            found++;
        }
    }
    return found;
}

/* Key k has several candidates, pool->live: they are kept, for the
 * rules. */
static void candidates(chk *c, long k, const pool *p)
{
    long *q = sim_checker_grow(c, c->cands, &c->cap_cands,
                               c->n_cands + p->n_live, sizeof(*q));

    if (q == NULL)
        return;
    c->cands = q;
    memcpy(c->cands + c->n_cands, p->live, p->n_live * sizeof(*q));
    c->keys[k].owner = OWNER_SEVERAL;
    c->keys[k].cand = (long)c->n_cands;
    c->keys[k].n_cand = (long)p->n_live;
    c->n_cands += p->n_live;
}

/* Keys still with several candidates keep their list, for the rules. */
static void keep_candidates(chk *c, pool *p)
{
    size_t next = 0;

    p->n_live = 0;
    for (size_t k = 0; k < c->n_keys && !c->failed; k++) {
        if (c->keys[k].owner != OWNER_SEVERAL)
            continue;
        reach(c, p, &next, (long)k);
        candidates(c, (long)k, p);
    }
}

/* Rule (2), until no key finds an owner any more: a key taken by its one
 * candidate may leave another key with one. */
static void match_the_rest(chk *c)
{
    pool p = { NULL, 0, NULL, 0 };

    p.free = malloc((c->n_ops ? c->n_ops : 1) * sizeof(*p.free));
    p.live = malloc((c->n_ops ? c->n_ops : 1) * sizeof(*p.live));
    if (p.free == NULL || p.live == NULL) {
        sim_checker_unjudged(c, "out of memory");
    } else {
        for (size_t i = 0; i < c->n_ops; i++)
            if (may_create(c, &c->ops[i]) && c->ops[i].key < 0)
                p.free[p.n_free++] = (long)i;
        while (sweep(c, &p) > 0)
            ;
        keep_candidates(c, &p);
    }
    free(p.free);
    free(p.live);
}

/* ---- unknowing holds ---------------------------------------------------------- */

/* When o's grant ends at the latest: its thread's next release, or its
 * client's crash. */
static int64_t grant_end(const chk *c, const chk_op *o, size_t *at)
{
    const chk_thread *t = &c->th[o->th];

    for (long r = o->next; r >= 0; r = c->ops[r].next)
        if (c->ops[r].kind == OP_RELEASE) {
            *at = c->ops[r].inv;
            return c->ops[r].inv_ns;
        }
    *at = t->crash;
    return t->crash_ns;
}

/* An acquire-ok's hold ends where its thread released or crashed; an
 * unknown acquire's grant too, whatever became of its key. */
int64_t sim_checker_op_end_ns(const chk *c, const chk_op *o)
{
    size_t at;

    if (o->outcome == OUT_OK && o->hold >= 0)
        return c->holds[o->hold].to_ns;
    return grant_end(c, o, &at);
}

/* An acquire whose outcome was unknown and is proven: it held the lock
 * from its outcome or its key, whichever came first, until its key ended,
 * its thread released or its client crashed. */
static void unknowing_hold(chk *c, long id)
{
    chk_op *o = &c->ops[id];
    const chk_key *key = o->key >= 0 ? &c->keys[o->key] : NULL;
    size_t from = o->out, to;
    int64_t from_ns = o->out_ns, to_ns = grant_end(c, o, &to);
    long h;

    if (key != NULL && key->create_ns < from_ns) {
        from = key->seen_at;
        from_ns = key->create_ns;
    }
    if (key != NULL && key->end_ns < to_ns) {
        to = key->end;
        to_ns = key->end_ns;
    }
    /* The observer may hear the key's end late; the next key was made
     * after it ended, and before its owner's acquire returned. */
    if (key != NULL && o->key + 1 < (long)c->n_keys) {
        const chk_key *next = &c->keys[o->key + 1];
        const chk_op *maker = next->owner >= 0 ? &c->ops[next->owner] : NULL;

        if (next->create_ns < to_ns) {
            to = next->seen_at;
            to_ns = next->create_ns;
        }
        if (maker != NULL && maker->out_ns < to_ns) {
            to = maker->out;
            to_ns = maker->out_ns;
        }
    }
    if ((h = sim_checker_open_hold(c, o->th, id, from, from_ns)) < 0)
        return;
    c->holds[h].to = to;
    c->holds[h].to_ns = to_ns > from_ns ? to_ns : from_ns;
    c->holds[h].unknowing = 1;
    c->ops[id].hold = h;
}

/* Of several nodes, an acquire-ok won keys on a majority, and no one can
 * tell which: the latest key of its window on one node may be another
 * client's, whose try lost elsewhere. Only rule (2), the one acquire that
 * could have made a key, names an owner there, in one pass: an acquire
 * that retried may have made several keys on a node, so owning one does
 * not rule it out for the next. The holds an unknown outcome proves come
 * from its release alone, once for all nodes. */
void sim_checker_keys_attribute_node(chk *c)
{
    pool p = { NULL, 0, NULL, 0 };
    size_t next = 0;

    for (size_t i = 0; i < c->n_ops; i++)
        c->ops[i].key = -1;
    p.free = malloc((c->n_ops ? c->n_ops : 1) * sizeof(*p.free));
    p.live = malloc((c->n_ops ? c->n_ops : 1) * sizeof(*p.live));
    if (p.free == NULL || p.live == NULL)
        sim_checker_unjudged(c, "out of memory");
    for (size_t i = 0; p.free != NULL && i < c->n_ops; i++)
        if (may_create(c, &c->ops[i]))
            p.free[p.n_free++] = (long)i;
    for (size_t k = 0; k < c->n_keys && !c->failed; k++) {
        reach(c, &p, &next, (long)k);
        if (p.n_live == 1)
            own(c, (long)k, p.live[0]);
        else if (p.n_live > 1)
            candidates(c, (long)k, &p);
    }
    free(p.free);
    free(p.live);
}

void sim_checker_unknowing_holds(chk *c)
{
    release_proofs(c);
    for (size_t i = 0; i < c->n_ops && !c->failed; i++)
        if (c->ops[i].proof != SIM_PROOF_NONE && c->ops[i].outcome != OUT_OK)
            unknowing_hold(c, (long)i);
}

void sim_checker_keys_attribute(chk *c)
{
    int heard = c->n_keys > 0;

    if (c->failed)
        return;
    release_proofs(c);
    match_certain(c);
    match_the_rest(c);
    for (size_t i = 0; i < c->n_ops && !c->failed; i++) {
        const chk_op *o = &c->ops[i];

        if (o->proof != SIM_PROOF_NONE && o->outcome != OUT_OK)
            unknowing_hold(c, (long)i);
        else if (heard && o->kind == OP_ACQUIRE && o->outcome == OUT_OK &&
                 !o->nested && o->key < 0)
            sim_checker_gap(c, SIM_GAP_NO_KEY, o->out);
    }
}
