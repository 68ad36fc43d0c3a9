/* v8-redlock: a majority of independent masters.
 *
 * acquire: v5's SET key <owner> NX PX lease, sent to every one of N
 *          independent Redis masters (no replication between them) at
 *          once, each reply awaited at most node_timeout_ms. The lock is
 *          ours when a majority (N/2 + 1) said OK and some of the lease is
 *          left after the time that took and a clock-drift allowance.
 *          Otherwise the key is deleted again on every node, and the next
 *          try comes after a random delay, until the wait budget is spent.
 * release: v5's compare-and-delete script, on every node.
 *
 * A node that dies, fails over or stalls costs one vote, not the lock: one
 * master losing the key no longer hands the lock to a second client (v5's
 * failover). What stays: nothing renews the lease and nothing fences a
 * late write, so a holder that pauses longer than its lease shares the
 * lock; and a node that restarts without persistence forgets the key, so a
 * holder with a bare majority can lose the lock to a client that wins that
 * node and the ones the holder never had.
 *
 * What every Redis stage shares (the connection, its errors, the config
 * checks, the mutex, the wait loop) is in plumbing/redis.c. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <sys/random.h>
#include <unistd.h>

#include "redis.h"

#define ID_BYTES 16    /* 128 random bits: no other client will draw them */
#define TOKEN_LEN 64   /* 32 hex digits, ':', a thread id, and room to spare */
#define DRIFT_PERCENT 1 /* the nodes' clocks may run fast by 1% of the lease, */
#define DRIFT_MIN_MS 2  /* plus 2 ms of timer granularity: Redlock's allowance */

/* Delete the key only if it is still ours, as one atomic step. */
#define UNLOCK_SCRIPT                                  \
    "if redis.call('get', KEYS[1]) == ARGV[1] then\n"  \
    "    return redis.call('del', KEYS[1])\n"          \
    "end\n"                                            \
    "return 0\n"
/* SHA1 of UNLOCK_SCRIPT (sha1sum of its text): EVALSHA sends these 40
 * bytes instead of the script. If the script changes, so must this. */
#define UNLOCK_SHA "be1df71b9ec1c39c43c5a8c65087531056544b55"

static const redis_script unlock_script = { UNLOCK_SCRIPT, UNLOCK_SHA };

struct dlock {
    redis_base r;                   /* first: the plumbing's part, redis.h */
    char id[2 * ID_BYTES + 1];      /* this client's random id, in hex */
    char tried[DLOCK_ERRSTR_LEN];   /* why the latest try failed: errstr when
                                     * acquire gives up on an error */
};

/* Draws this client's id from the OS random source, never from rand():
 * another client must not be able to guess it or draw the same. */
static int random_id(dlock *l)
{
    unsigned char bytes[ID_BYTES];
    int i;

    if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes))
        return redis_error(l, "cannot read the OS random source");
    for (i = 0; i < ID_BYTES; i++)
        sprintf(l->id + 2 * i, "%02x", bytes[i]);
    return DLOCK_OK;
}

/* The value we store in the key: who holds it, down to the thread. */
static void owner_token(const dlock *l, char *token, size_t len)
{
    snprintf(token, len, "%s:%ld", l->id, (long)gettid());
}

/* The votes a lock needs: more than half of the nodes. */
static int quorum(const dlock *l)
{
    return l->r.cfg.nodes / 2 + 1;
}

/* Why a try failed, kept for the call's errstr should acquire give up:
 * a later try may still succeed. Returns DLOCK_ERR. */
static int failed_try(dlock *l, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(l->tried, sizeof(l->tried), fmt, ap);
    va_end(ap);
    return DLOCK_ERR;
}

/* What the nodes' clocks may have gained on ours while the keys lived. */
static long drift_ms(const dlock *l)
{
    return l->r.cfg.lease_ms * DRIFT_PERCENT / 100 + DRIFT_MIN_MS;
}

/* One attempt: OK when a majority gave us the key in time, BUSY when
 * others hold it, ERR (why in l->tried) when too few nodes answered or
 * the majority came too late. Called under the handle's mutex. */
static int try_acquire(dlock *l)
{
    char token[TOKEN_LEN];
    struct timespec start;
    redis_fanout f = { { 0 }, { NULL }, "" };
    int undo[REDIS_MAX_NODES], taken, answered, i;
    long spent;

    owner_token(l, token, sizeof(token));
    start = redis_deadline_after(0);
    /* v5's one command, on every node at once: the replies are awaited
     * side by side, so the round costs the slowest node's time, not the
     * sum of all of them. */
    redis_fanout_command(l, &f, NULL, "SET %s %s NX PX %ld", l->r.key, token, l->r.cfg.lease_ms);
    taken = redis_fanout_count(l, &f, REDIS_REPLY_STATUS);
    answered = taken + redis_fanout_count(l, &f, REDIS_REPLY_NIL);
    for (i = 0; i < l->r.cfg.nodes; i++)
        undo[i] = f.reply[i] == NULL || f.reply[i]->type != REDIS_REPLY_NIL;
    redis_fanout_clear(&f);
    spent = redis_elapsed_ms(&start);
    /* Each key lives lease ms from when its node set it, at the latest
     * now: what is left of the lease for us is less by the time spent, and
     * by what the nodes' clocks may have gained. */
    if (taken >= quorum(l) && l->r.cfg.lease_ms - spent - drift_ms(l) > 0)
        return DLOCK_OK;
    /* Not ours: undo it on every node that may have our key, also where no
     * reply came (a SET that arrives late may still land), so that no node
     * keeps a key for nothing until its lease runs out. A node that said
     * nil set nothing for this try; whatever it holds under our token is
     * an earlier hold of this thread, which must stay (no reentrancy: the
     * holder's own second acquire waits, as in v5). */
    redis_fanout_eval(l, &f, undo, &unlock_script, "1 %s %s", l->r.key, token);
    redis_fanout_clear(&f);
    if (taken >= quorum(l))
        return failed_try(l, "%d nodes said OK after %ld ms, past the %ld ms lease "
                          "less %ld ms of drift", taken, spent, l->r.cfg.lease_ms,
                          drift_ms(l));
    if (answered < quorum(l))
        return failed_try(l, "%d of %d nodes answered, a majority is %d: %s",
                          answered, l->r.cfg.nodes, quorum(l), f.why);
    return DLOCK_BUSY;
}

/* Gives the lock back: dlock_release under the handle's mutex. OK when a
 * majority deleted our key, NOT_OWNER when it was not ours on a majority,
 * ERR when the nodes that did not answer leave that open. */
static int release(dlock *l)
{
    char token[TOKEN_LEN];
    redis_fanout f = { { 0 }, { NULL }, "" };
    int deleted, kept, unknown;

    owner_token(l, token, sizeof(token));
    /* Every node, also those where the acquire failed or timed out: a SET
     * that arrived late may have set our key there. */
    redis_fanout_eval(l, &f, NULL, &unlock_script, "1 %s %s", l->r.key, token);
    deleted = redis_fanout_count_int(l, &f, 1);
    kept = redis_fanout_count_int(l, &f, 0);
    unknown = l->r.cfg.nodes - deleted - kept;
    redis_fanout_clear(&f);
    if (deleted >= quorum(l))
        return DLOCK_OK;
    if (deleted + unknown >= quorum(l))
        return redis_error(l, "deleted on %d of %d nodes, %d did not answer, a majority "
                           "is %d: %s", deleted, l->r.cfg.nodes, unknown, quorum(l), f.why);
    return DLOCK_NOT_OWNER;
}

/* The reason of the latest try becomes the call's: acquire gave up. */
static int report_try(dlock *l)
{
    return redis_error(l, "%s", l->tried);
}

/* Between tries: about retry_ms, drawn anew each time, so that clients
 * that split the votes between them do not try again in step. */
static long retry_delay(const dlock *l)
{
    unsigned short r = 0;

    if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
        r = (unsigned short)getpid();
    return l->r.cfg.retry_ms / 2 + (long)(r % (unsigned)(l->r.cfg.retry_ms + 1));
}

dlock *dlock_new(const char *name, const dlock_config *cfg)
{
    return redis_new(sizeof(dlock), name, cfg, REDIS_MAX_NODES, random_id);
}

int dlock_acquire(dlock *l)
{
    struct timespec start = redis_deadline_after(0);
    int rc;

    if (!redis_ready(l))
        return DLOCK_ERR;
    /* A failed majority is tried again too: nodes come back, and clients
     * that split the votes try again at different moments. */
    while ((rc = redis_guarded(l, try_acquire)) != DLOCK_OK) {
        long left = l->r.cfg.wait_ms - redis_elapsed_ms(&start), delay = retry_delay(l);

        if (left <= 0)
            break;
        redis_sleep_ms(left < delay ? left : delay);
    }
    if (rc == DLOCK_ERR)
        redis_guarded(l, report_try);
    return rc;
}

int dlock_release(dlock *l)
{
    return redis_guarded(l, release);
}

void dlock_free(dlock *l)
{
    redis_free(l);
}
