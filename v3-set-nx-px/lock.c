/* v3-set-nx-px: the key and its lease in one command.
 *
 * acquire: SET key 1 NX PX lease, polled until the wait budget is spent.
 * release: DEL key.
 *
 * The key can no longer exist without its lease (v2's crash window). But a
 * holder slower than its lease still loses the lock to another client
 * without knowing, and its DEL then deletes that client's lock: the value
 * "1" cannot tell whose lock it is.
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

    /* One command: the key never exists without its lease (v2's window). */
    r = redis_command(l, "SET %s 1 NX PX %ld", l->r.key, l->r.cfg.lease_ms);
    if (r == NULL)
        return DLOCK_ERR;
    taken = r->type == REDIS_REPLY_STATUS;
    freeReplyObject(r);
    if (!taken)
        return DLOCK_BUSY;
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
