/* checker_internal: what the checker's files share; nothing else
 * includes it.
 *
 *   checker.c        the entry point, the verdict's storage, names
 *   checker_ops.c    client threads, their operations and holds
 *   checker_keys.c   the lock key's life from the observer, and who made
 *                    each key
 *   checker_rules.c  holds, and the episodes of ME, MD and DL
 *   checker_stall.c  the episodes of ST: a free lock nobody took
 *
 * The checker turns a history into operations (Jepsen's invoke and
 * outcome pairs, one list per client thread), keys (from the observer's
 * events) and holds (who held the lock when), then applies each rule to
 * those. Indices into the history are size_t; indices into the checker's
 * own arrays are long, -1 for none. */
#ifndef SIM_CHECKER_INTERNAL_H
#define SIM_CHECKER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "checker.h"

#define NONE_AT SIZE_MAX    /* no such event */
#define NEVER INT64_MAX     /* no such time: after the run */

/* An operation's kind and how it ended. */
enum { OP_ACQUIRE, OP_RELEASE };
enum { OUT_OK, OUT_BUSY, OUT_ERROR, OUT_NOT_OWNER, OUT_CRASH, OUT_NONE };

/* One invoke and its outcome. */
typedef struct chk_op {
    int th;                 /* its thread (chk.th) */
    unsigned char kind;     /* OP_* */
    unsigned char outcome;  /* OUT_*; OUT_NONE: the run ended first */
    unsigned char nested;   /* an acquire by a thread that held the lock */
    unsigned char proof;    /* SIM_PROOF_*: an unknown acquire took effect */
    size_t inv, out;        /* its events; out NONE_AT with OUT_NONE */
    int64_t inv_ns, out_ns; /* out_ns NEVER with OUT_NONE */
    size_t proof_at;        /* the event that proves it */
    long key;               /* acquire: the key it made, -1 */
    long hold;              /* acquire: the hold it opened (nested: the
                             * hold it was asked in), -1 */
    long next;              /* its thread's next operation, -1 */
} chk_op;

/* A client thread. */
typedef struct chk_thread {
    int client, thread;
    int depth;              /* holds open now, while building */
    long pending;           /* its operation without an outcome yet, -1 */
    long last;              /* its latest operation, -1 */
    long hold;              /* its open hold, while building, -1 */
    size_t crash;           /* its client's crash, NONE_AT */
    int64_t crash_ns;       /* NEVER when it did not crash */
} chk_thread;

/* How a key ended. */
enum { END_DEL, END_EXPIRED, END_EVICTED, END_LOST, END_MISSED, END_NONE };
/* END_LOST: its server lost it: a promoted replica never had it, or the
 * node died or restarted empty. */

#define OWNER_NOBODY (-1)   /* no acquire could have made the key */
#define OWNER_SEVERAL (-2)  /* more than one could: it cannot be named */

/* One key: from its creation to its end. */
typedef struct chk_key {
    size_t create;          /* its creation event; NONE_AT: a gap */
    size_t seen_at;         /* its creation, or the event that showed the
                             * gap */
    int64_t seen_ns;        /* when the observer reported it made (a gap:
                             * the key event before it) */
    int64_t create_ns;      /* made in [seen_ns, create_ns] */
    int64_t prev_seen_ns;   /* the previous key's seen_ns; INT64_MIN */
    size_t end;             /* its end event; NONE_AT */
    int end_kind;           /* END_* */
    int64_t end_ns;         /* NEVER: it outlived the run */
    int64_t ttl_ns;         /* when it got a TTL; NEVER */
    long owner;             /* the acquire op that made it; OWNER_* */
    long cand, n_cand;      /* OWNER_SEVERAL: its candidates in chk.cands */
} chk_key;

/* A stretch in which a thread held the lock. */
typedef struct chk_hold {
    int th;
    long op;                /* the acquire that opened it */
    size_t from, to;        /* its first event and the one that ended it
                             * (NONE_AT: the run's end) */
    int64_t from_ns, to_ns; /* to_ns NEVER: it lasted to the run's end */
    int unknowing;          /* an unknown acquire's hold */
} chk_hold;

typedef struct chk {
    const sim_event *ev;
    size_t n;
    sim_verdict *v;
    int release_checks_owner; /* the stage's release-ok proves the key
                               * was the caller's */
    int nodes;              /* the lock's nodes: 1, or several masters */
    long lease_ms;          /* the run's lease: ST's bound is counted in it */
    int node;               /* the node whose keys are being read */
    int failed;             /* out of memory or unjudged: stop */
    chk_thread *th;
    int n_th;
    size_t cap_th;
    int *th_of;             /* each event's thread, -1 */
    chk_op *ops;            /* in the order they were invoked */
    size_t n_ops, cap_ops;
    chk_key *keys;          /* in the order they were made */
    size_t n_keys, cap_keys;
    long *cands;            /* candidates of keys with several */
    size_t n_cands, cap_cands;
    chk_hold *holds;
    size_t n_holds, cap_holds;
    size_t cap_episodes, cap_gaps;
} chk;

/* checker.c */
void *sim_checker_grow(chk *c, void *arr, size_t *cap, size_t need, size_t size);
void sim_checker_unjudged(chk *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
sim_episode *sim_checker_episode(chk *c, unsigned kind, int64_t at_ns);
void sim_checker_gap(chk *c, int kind, size_t at);
long sim_checker_ms(const chk *c, size_t i);
long sim_checker_open_hold(chk *c, int th, long op, size_t from,
                           int64_t from_ns);

/* checker_ops.c: 0, or -1 when the history cannot be judged. */
int sim_checker_operations(chk *c, int *have_initial, int *have_final);

/* checker_keys.c: the keys of node c->node; their owners (one node), or
 * their owners on one of several nodes and the holds that releases prove
 * (several). */
void sim_checker_keys_build(chk *c);
void sim_checker_keys_attribute(chk *c);
void sim_checker_keys_attribute_node(chk *c);
void sim_checker_unknowing_holds(chk *c);
int64_t sim_checker_op_end_ns(const chk *c, const chk_op *o);

/* checker_rules.c */
void sim_checker_mutual_exclusion(chk *c);
void sim_checker_foreign_deletes(chk *c);
void sim_checker_deadlocks(chk *c);
void sim_checker_holder(const chk *c, long hold, sim_holder *h);

/* checker_stall.c */
void sim_checker_stalls(chk *c);

#endif
