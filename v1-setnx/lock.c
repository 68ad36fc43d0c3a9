/* v1-setnx: the naive lock.
 *
 * acquire: SETNX key 1, polled until the wait budget is spent.
 * release: DEL key.
 *
 * The key has no time to live: a client that dies while holding it leaves
 * it behind forever, and every other client waits in vain (deadlock).
 *
 * What every Redis stage shares (the connection, its errors, the config
 * checks, the mutex, the wait loop) is in plumbing/redis.c. */
#include "redis.h"

struct dlock {
    redis_base r;                   /* first: the plumbing's part, redis.h */
};

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
