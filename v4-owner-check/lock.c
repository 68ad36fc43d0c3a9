/* v4-owner-check: the key says whose lock it is.
 *
 * acquire: SET key <owner> NX PX lease, polled until the wait budget is
 *          spent; <owner> is this client's random id and the thread's id.
 * release: GET key; only if it holds our owner, DEL key.
 *
 * A late holder no longer deletes another client's lock (v3's DEL), as long
 * as nothing happens between GET and DEL. But they are two commands: a
 * holder paused between them wakes up and deletes a lock that expired and
 * went to someone else meanwhile. And a holder slower than its lease still
 * shares the lock with the next client.
 *
 * What every Redis stage shares (the connection, its errors, the config
 * checks, the mutex, the wait loop) is in plumbing/redis.c. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "redis.h"

#define ID_BYTES 16    /* 128 random bits: no other client will draw them */
#define TOKEN_LEN 64   /* 32 hex digits, ':', a thread id, and room to spare */

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
    /* Look before deleting: the key may have expired and gone to another. */
    r = redis_command(l, "GET %s", l->r.key);
    if (r == NULL)
        return DLOCK_ERR;
    ours = r->type == REDIS_REPLY_STRING && strcmp(r->str, token) == 0;
    freeReplyObject(r);
    if (!ours)
        return DLOCK_NOT_OWNER;
    dlock_failpoint("release.after_get");
    /* A second command: the lock can change hands between GET and DEL. */
    r = redis_command(l, "DEL %s", l->r.key);
    if (r == NULL)
        return DLOCK_ERR;
    freeReplyObject(r);
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
