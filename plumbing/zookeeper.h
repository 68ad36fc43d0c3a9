/* zookeeper.h: what every ZooKeeper stage's lock.c shares, written once.
 *
 * A stage's handle embeds a dlock_zk: the config, the error string, the
 * handle's mutex, and the session with its watcher. The stage keeps its
 * lesson (its nodes, its acquire and release steps); this file keeps what
 * every stage on an ensemble needs around them: the config checks, the
 * session (connect, wait for a lost server, a new session after expiry),
 * the errors in one line, and the wait budget, in which the stage's try
 * runs with the mutex held and the waiter sleeps until a watch fires.
 * Compiled with each stage against the stage's own lock.h (-DTHREADED).
 *
 * Errors, the hiredis way: a function that can fail returns DLOCK_ERR (or
 * a ZooKeeper code, where it says so) with one line in errstr. */
#ifndef DLOCK_ZOOKEEPER_H
#define DLOCK_ZOOKEEPER_H

#include <pthread.h>
#include <stddef.h>
#include <zookeeper/zookeeper.h>

#include "lock.h"

#define DLOCK_ZK_ROOT "/lockstep"  /* the parent of every lock's node */
#define DLOCK_ZK_ID_BYTES 16       /* 128 random bits: no other client will draw them */
#define DLOCK_ZK_OWNER_LEN 64      /* an owner: 32 hex digits, ':', a thread id, and room */
#define DLOCK_ZK_AGAIN 100         /* a try: what it looked at moved; try again at once */
#define DLOCK_ZK_USER "lockstep"   /* the digest user a password authenticates as */

typedef struct dlock_zk {
    char errstr[DLOCK_ERRSTR_LEN]; /* why the last call failed, "" if none */
    dlock_config cfg;              /* a copy: the caller's may go away */
    char *path;                    /* the lock's node, ROOT/<name>; NULL when the
                                    * name or the config was refused */
    char *hosts;                   /* "host:port,host:port+1,...": the ensemble */
    char id[2 * DLOCK_ZK_ID_BYTES + 1]; /* this client's random id, in hex */
    pthread_mutex_t mu;            /* one thread at a time on zh and errstr:
                                    * threads may share a handle */
    zhandle_t *zh;                 /* the session; NULL until needed, and after
                                    * it expired */
    pthread_mutex_t wmu;           /* guards events: the only lock a watcher
                                    * takes, never held across a call */
    pthread_cond_t changed;        /* broadcast on every watcher call */
    unsigned long events;          /* watcher calls so far */
} dlock_zk;

/* A step of a stage, run with z->mu held (dlock_zk_guarded). */
typedef int dlock_zk_step(dlock *l, void *arg);

/* One try of a stage's acquire, run with z->mu held (dlock_zk_wait):
 * DLOCK_OK, DLOCK_ERR, DLOCK_ZK_AGAIN, or DLOCK_BUSY, with a watch set
 * when watch is and *seen the count of notifications before it was set. */
typedef int dlock_zk_try(dlock *l, void *arg, int watch, unsigned long *seen);

/* Fills z for the lock called name: checks the name and cfg, copies cfg,
 * draws the client's id. A refusal leaves z->path NULL and the reason in
 * z->errstr, which every call then returns. */
void dlock_zk_init(dlock_zk *z, const char *name, const dlock_config *cfg);

/* Closes the session (its ephemeral nodes go with it) and frees z's own. */
void dlock_zk_free(dlock_zk *z);

/* Records why a call failed; returns DLOCK_ERR. */
int dlock_zk_error(dlock_zk *z, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* What a failed call (what) with code rc says, in one line; DLOCK_ERR.
 * An expired session is dropped: its nodes are gone, and the next call
 * opens a new one. */
int dlock_zk_fail(dlock_zk *z, const char *what, int rc);

/* A session to call on, with z->mu held: the one we have, unless it
 * expired, or a new one, connected, with the lease as its timeout.
 * DLOCK_OK, or DLOCK_ERR (also for a handle whose config was refused). */
int dlock_zk_session(dlock_zk *z);

/* Waits up to timeout_ms while the library reconnects a session it lost
 * its server for; returns its state: ZOO_CONNECTED_STATE when it is back,
 * ZOO_EXPIRED_SESSION_STATE when the server says it expired. */
int dlock_zk_await(dlock_zk *z);

/* A call whose reply was lost: it may have been done, or not. */
int dlock_zk_unknown(int rc);

/* The watcher to set a watch with, its context z: it counts and wakes. */
void dlock_zk_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx);

/* The count of notifications so far: read it before setting a watch. */
unsigned long dlock_zk_events(dlock_zk *z);

/* The ACL of every node a stage creates: with a password, its creator's
 * (the digest id lockstep:<password>) alone may read, change or delete
 * it; without one, anyone may. */
const struct ACL_vector *dlock_zk_acl(const dlock_zk *z);

/* Creates ROOT when it is missing: ZOK when it is there, or the error. */
int dlock_zk_make_root(dlock_zk *z);

/* The value a stage stores in its node: who holds it, down to the thread. */
void dlock_zk_owner(const dlock_zk *z, char *out, size_t len);

/* n bytes from the OS random source, never from rand(): another client
 * must not be able to guess them or draw the same. DLOCK_OK or DLOCK_ERR. */
int dlock_zk_random(dlock_zk *z, unsigned char *out, size_t n);

/* Runs step(l, arg) with z->mu held; DLOCK_ERR for a refused config. */
int dlock_zk_guarded(dlock_zk *z, dlock_zk_step *step, dlock *l, void *arg);

/* The CLOCK_MONOTONIC time in ms: where a wait budget starts. */
long dlock_zk_now_ms(void);

/* The wait budget (cfg.wait_ms from start_ms): tries attempt(l, arg, ...)
 * with z->mu held, at once again after DLOCK_ZK_AGAIN, and after
 * DLOCK_BUSY sleeps until a notification or the budget's end; returns
 * the first other result, or DLOCK_BUSY when the budget is spent. */
int dlock_zk_wait(dlock_zk *z, dlock_zk_try *attempt, dlock *l, void *arg, long start_ms);

#endif
