/* v2-expire: the lock gets a lease.
 *
 * acquire: SETNX key 1, then PEXPIRE key lease; polled until the wait
 *          budget is spent.
 * release: DEL key.
 *
 * The lease frees the lock of a client that died (v1's deadlock), but it is
 * set by a second command: a client that dies between the two leaves a key
 * that never expires. And a holder slower than its lease loses the lock to
 * another client without knowing, then its DEL deletes that client's lock.
 *
 * What every Redis stage shares (the connection, its errors, the config
 * checks, the mutex, the wait loop) is in plumbing/redis.c. */
#include <string.h>

#include "redis.h"

struct dlock {
    redis_base r;                   /* first: the plumbing's part, redis.h */
};

/* PEXPIRE failed after our SETNX, so the key would never expire: delete
 * it again (redis_command reconnects if the connection broke) and report
 * PEXPIRE's error. Only a client that dies first leaves the key behind. */
static int undo_setnx(dlock *l)
{
    char why[DLOCK_ERRSTR_LEN];

    memcpy(why, l->r.errstr, sizeof(why));
    freeReplyObject(redis_command(l, "DEL %s", l->r.key));
    memcpy(l->r.errstr, why, sizeof(why));
    return DLOCK_ERR;
}

/* One attempt: OK when we took the lock, BUSY when someone else has it.
 * Called under the handle's mutex. */
static int try_acquire(dlock *l)
{
    redisReply *r;
    int taken;

    r = redis_command(l, "SETNX %s 1", l->r.key);
    if (r == NULL)
        return DLOCK_ERR;
    taken = r->type == REDIS_REPLY_INTEGER && r->integer == 1;
    freeReplyObject(r);
    if (!taken)
        return DLOCK_BUSY;
    dlock_failpoint("acquire.after_setnx");
    /* A second command: dying before it leaves a key that never expires. */
    r = redis_command(l, "PEXPIRE %s %ld", l->r.key, l->r.cfg.lease_ms);
    if (r == NULL)
        return undo_setnx(l);
    freeReplyObject(r);
    return DLOCK_OK;
}

/* Gives the lock back: dlock_release under the handle's mutex. */
static int release(dlock *l)
{
    redisReply *r;

    r = redis_command(l, "DEL %s", l->r.key);
    if (r == NULL)
        return DLOCK_ERR;
    freeReplyObject(r);
    return DLOCK_OK;
}

dlock *dlock_new(const char *name, const dlock_config *cfg)
{
    return redis_new(sizeof(dlock), name, cfg, 1, NULL);
}

int dlock_acquire(dlock *l)
{
    return redis_poll(l, try_acquire);
}

int dlock_release(dlock *l)
{
    return redis_guarded(l, release);
}

void dlock_free(dlock *l)
{
    redis_free(l);
}
