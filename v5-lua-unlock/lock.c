/* v5-lua-unlock: compare and delete in one step.
 *
 * acquire: SET key <owner> NX PX lease, polled until the wait budget is
 *          spent; <owner> is this client's random id and the thread's id.
 * release: a Lua script that deletes the key only if it holds our owner,
 *          sent as EVALSHA, and whole (EVAL) when the server lacks it.
 *
 * Redis runs a script with no other command in between, so the lock cannot
 * change hands between the check and the delete (v4's window). What stays:
 * a holder slower than its lease still shares the lock with the next client;
 * the same thread cannot take the lock twice; and a failover to a replica
 * that never received the key hands the lock to a second client.
 *
 * What every Redis stage shares (the connection, its errors, the config
 * checks, the mutex, the wait loop) is in plumbing/redis.c. */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/random.h>
#include <unistd.h>

#include "redis.h"

#define ID_BYTES 16    /* 128 random bits: no other client will draw them */
#define TOKEN_LEN 64   /* 32 hex digits, ':', a thread id, and room to spare */

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

/* One attempt: OK when we took the lock, BUSY when someone else has it.
 * Called under the handle's mutex. */
static int try_acquire(dlock *l)
{
    char token[TOKEN_LEN];
    redisReply *r;
    int taken;

    owner_token(l, token, sizeof(token));
    /* One command: the key never exists without its lease (v2's window). */
    r = redis_command(l, "SET %s %s NX PX %ld", l->r.key, token, l->r.cfg.lease_ms);
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
    char token[TOKEN_LEN];
    redisReply *r;
    int ours;

    owner_token(l, token, sizeof(token));
    /* One script: nothing runs between the check and the delete. */
    r = redis_eval(l, &unlock_script, "1 %s %s", l->r.key, token);
    if (r == NULL)
        return DLOCK_ERR;
    ours = r->type == REDIS_REPLY_INTEGER && r->integer == 1;
    freeReplyObject(r);
    if (!ours)
        return DLOCK_NOT_OWNER;
    return DLOCK_OK;
}

dlock *dlock_new(const char *name, const dlock_config *cfg)
{
    return redis_new(sizeof(dlock), name, cfg, 1, random_id);
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
