/* v7-fencing-token: v6's lock, and a fencing token for every holder.
 *
 * The data layout is Redisson's FencedLock (its RLock and a counter), so a
 * Java service using Redisson and a C service using this file can contend
 * for the same lock:
 *   key     a hash; field "<client id>:<thread id>", value the hold count.
 *   channel "redisson_lock__channel:{<name>}" (no braces added when the
 *           name has a '{'); a release publishes "0".
 *   counter "redisson_lock_token:{<name>}" (braces as the channel's), a
 *           number that only grows.
 *
 * acquire: a Lua script takes the lock if the key is absent or already ours
 *          (INCR the counter, HINCRBY the count, PEXPIRE the lease) and
 *          returns the counter's value, the holder's token; else its TTL.
 *          A waiter subscribes to the channel and tries again on the unlock
 *          message, or when the TTL it was told runs out.
 * release: a Lua script decrements our count; at zero it deletes the key
 *          and publishes the unlock message. Not ours: NOT_OWNER.
 * watchdog: one thread per handle renews the lease every lease/3 while a
 *          thread of this handle holds the lock.
 *
 * This fixes what no lease can: a holder whose whole process stopped (GC,
 * SIGSTOP) wakes up believing it still holds the lock, but its token is
 * lower than the next holder's, and a resource that refuses a token lower
 * than the highest it has seen refuses its stale write. What stays: the
 * counter lives on the same primary as the lock and is replicated as
 * asynchronously; a failover to a replica that never received the last
 * increment hands the next holder the same token again, and the resource
 * cannot tell the two holders apart.
 *
 * What every Redis stage shares (the connection, its errors, the config
 * checks, the mutex, the clock, the pub/sub connection a waiter keeps) is
 * in plumbing/redis.c and plumbing/redis_wait.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "redis.h"

#define ID_BYTES 16    /* 128 random bits: no other client will draw them */
#define TOKEN_LEN 64   /* 32 hex digits, ':', a thread id, and room to spare */
#define CHANNEL_PREFIX "redisson_lock__channel:" /* Redisson's name for it */
#define UNLOCK_MESSAGE "0"                       /* Redisson's unlock message */
#define TOKEN_PREFIX "redisson_lock_token:"      /* Redisson's FencedLock counter */

/* Every script gets KEYS = {key, channel, counter}, ARGV = {lease, field,
 * message}, so one helper runs them all. */

/* Take the lock if it is free or already ours and return {-1, token};
 * else return {TTL, 0}. Every acquisition draws a new token, re-entry
 * included, as Redisson's FencedLock does. Redis does not undo a script
 * that fails halfway, so INCR runs first (a counter that is no number
 * fails there, before any hold exists; a failure after it only skips a
 * token), and PEXPIRE also runs before HINCRBY: a lease it refuses fails
 * there, before a hash without a TTL exists (on a missing key PEXPIRE
 * checks the lease and sets nothing). */
#define LOCK_SCRIPT                                             \
    "if redis.call('exists', KEYS[1]) == 0\n"                   \
    "        or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then\n" \
    "    local token = redis.call('incr', KEYS[3])\n"           \
    "    redis.call('pexpire', KEYS[1], ARGV[1])\n"             \
    "    redis.call('hincrby', KEYS[1], ARGV[2], 1)\n"          \
    "    redis.call('pexpire', KEYS[1], ARGV[1])\n"             \
    "    return {-1, token}\n"                                  \
    "end\n"                                                     \
    "return {redis.call('pttl', KEYS[1]), 0}\n"
#define LOCK_SHA "35f4556b1f69e294ad00b4d75f3ede31d957f706"

/* Drop one hold; the last one deletes the key and wakes the waiters. */
#define UNLOCK_SCRIPT                                           \
    "if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then\n"    \
    "    return nil\n"                                          \
    "end\n"                                                     \
    "if redis.call('hincrby', KEYS[1], ARGV[2], -1) > 0 then\n" \
    "    redis.call('pexpire', KEYS[1], ARGV[1])\n"             \
    "    return 0\n"                                            \
    "end\n"                                                     \
    "redis.call('del', KEYS[1])\n"                              \
    "redis.call('publish', KEYS[2], ARGV[3])\n"                 \
    "return 1\n"
#define UNLOCK_SHA "a859257fa3d5246833808b0965a50c0303bdac90"

/* Extend the lease, but only of a lock that is still ours. */
#define RENEW_SCRIPT                                            \
    "if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then\n"    \
    "    redis.call('pexpire', KEYS[1], ARGV[1])\n"             \
    "    return 1\n"                                            \
    "end\n"                                                     \
    "return 0\n"
#define RENEW_SHA "274262653a0c493f7a55e56574e1840713683047"

static const redis_script lock_script = { LOCK_SCRIPT, LOCK_SHA };
static const redis_script unlock_script = { UNLOCK_SCRIPT, UNLOCK_SHA };
static const redis_script renew_script = { RENEW_SCRIPT, RENEW_SHA };

struct dlock {
    redis_base r;                   /* first: the plumbing's part, redis.h */
    char id[2 * ID_BYTES + 1];      /* this client's random id, in hex */
    char *channel;                  /* where releases announce themselves */
    char *token_key;                /* the counter the tokens are drawn from */
    /* r.mu guards the fields below too: callers' threads and the watchdog
     * share them. */
    pthread_cond_t wake;            /* tells the watchdog the hold state changed */
    pid_t holder;                   /* the thread holding the lock through us, or 0 */
    long holds;                     /* its hold count, as the hash has it */
    long long token;                /* the fencing token: the newest one its
                                     * holds drew (re-entry draws one too) */
    pthread_t watchdog;             /* renews the lease while holds > 0 */
    int watching;                   /* the watchdog thread runs */
    int stopping;                   /* dlock_free asks the watchdog to end */
    int idle;                       /* the watchdog waits for a first hold */
};

/* The TTL the calling thread's last try was told, -1 if none: threads may
 * share a handle, and each waiter sleeps by what its own try was told. */
static _Thread_local long told_ttl_ms;

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

/* The hash field we hold the lock by: who holds it, down to the thread. */
static void owner_token(const dlock *l, char *token, size_t len)
{
    snprintf(token, len, "%s:%ld", l->id, (long)gettid());
}

/* Runs a script with the keys and args every script gets, by its SHA, and
 * whole when the server lacks it. Call with the handle's mutex held. */
static redisReply *eval_script(dlock *l, const redis_script *s, const char *field)
{
    return redis_eval(l, s, "3 %s %s %s %ld %s %s", l->r.key, l->channel, l->token_key,
                      l->r.cfg.lease_ms, field, UNLOCK_MESSAGE);
}

/* Element i of an array reply as an integer; -1 when there is none. */
static long long integer_at(const redisReply *r, size_t i)
{
    if (r->type != REDIS_REPLY_ARRAY || i >= r->elements ||
        r->element[i]->type != REDIS_REPLY_INTEGER)
        return -1;
    return r->element[i]->integer;
}

/* One attempt: OK when we took the lock (or took it once more), BUSY when
 * someone else has it. Called under the handle's mutex. */
static int try_acquire(dlock *l)
{
    char token[TOKEN_LEN];
    redisReply *r;
    long long drawn;
    int taken;

    owner_token(l, token, sizeof(token));
    r = eval_script(l, &lock_script, token);
    if (r == NULL)
        return DLOCK_ERR;
    drawn = integer_at(r, 1);
    taken = drawn > 0;
    told_ttl_ms = (long)integer_at(r, 0);
    freeReplyObject(r);
    if (!taken)
        return DLOCK_BUSY;
    l->holder = gettid();
    l->holds++;
    /* The newest token: the resource may have seen it already, so a
     * hold never goes back to an older one, not even after re-entry. */
    l->token = drawn;
    /* Only an idle watchdog needs waking: one still timing a renewal
     * renews early, which is safe, and waking it on every acquire
     * costs a context switch per lock call. */
    if (l->idle)
        pthread_cond_signal(&l->wake);
    return DLOCK_OK;
}

/* Gives the lock back: dlock_release under the handle's mutex. */
static int release(dlock *l)
{
    char token[TOKEN_LEN];
    redisReply *r;
    int ours, still_held;

    owner_token(l, token, sizeof(token));
    /* One script: the count, the delete and the wake-up in one step. */
    r = eval_script(l, &unlock_script, token);
    if (r == NULL)
        return DLOCK_ERR;
    ours = r->type == REDIS_REPLY_INTEGER;
    still_held = ours && r->integer == 0;
    freeReplyObject(r);
    /* Not ours any more means the lease ran out under us: lost. */
    if (l->holder == gettid())
        l->holds = still_held ? l->holds - 1 : 0;
    if (l->holds == 0)
        l->holder = 0;
    if (!ours)
        return DLOCK_NOT_OWNER;
    return DLOCK_OK;
}

/* Renews the lease if the lock is still held through this handle. The
 * script checks the field, so a late renewal never revives a lock that was
 * released or lost. errstr belongs to the callers (lock.h): the watchdog
 * puts back what their last failed call said. Call with the handle's
 * mutex held. */
static void renew(dlock *l)
{
    char token[TOKEN_LEN], callers[DLOCK_ERRSTR_LEN];
    redisReply *r;

    snprintf(token, sizeof(token), "%s:%ld", l->id, (long)l->holder);
    memcpy(callers, l->r.errstr, sizeof(callers));
    r = eval_script(l, &renew_script, token);
    memcpy(l->r.errstr, callers, sizeof(callers));
    if (r == NULL)
        return; /* I/O error: the next period reconnects and tries again */
    if (r->type == REDIS_REPLY_INTEGER && r->integer == 0) {
        l->holder = 0; /* the lease ran out before we renewed: lost */
        l->holds = 0;
    }
    freeReplyObject(r);
}

/* The watchdog thread: idle while nobody holds the lock through this
 * handle; while someone does, renews the lease every lease/3, so a live
 * holder never loses the lock however long it takes. */
static void *watchdog(void *arg)
{
    dlock *l = arg;
    long period = l->r.cfg.lease_ms / 3 > 0 ? l->r.cfg.lease_ms / 3 : 1;
    struct timespec next;

    pthread_mutex_lock(&l->r.mu);
    while (!l->stopping) {
        if (l->holds == 0) {
            l->idle = 1;
            pthread_cond_wait(&l->wake, &l->r.mu);
            l->idle = 0;
            continue;
        }
        next = redis_deadline_after(period);
        while (!l->stopping && l->holds > 0 &&
               pthread_cond_timedwait(&l->wake, &l->r.mu, &next) != ETIMEDOUT)
            ;
        if (l->stopping || l->holds == 0)
            continue;
        pthread_mutex_unlock(&l->r.mu);
        dlock_failpoint("watchdog.before_renew");
        pthread_mutex_lock(&l->r.mu);
        if (l->holds > 0)
            renew(l);
    }
    pthread_mutex_unlock(&l->r.mu);
    return NULL;
}

/* Sets up a condition on the monotonic clock (wall clock jumps
 * must not skip a renewal) and the watchdog thread. */
static int start_watchdog(dlock *l)
{
    redis_cond_init(&l->wake);
    if (pthread_create(&l->watchdog, NULL, watchdog, l) != 0) {
        pthread_cond_destroy(&l->wake);
        return redis_error(l, "cannot start the watchdog thread");
    }
    l->watching = 1;
    return DLOCK_OK;
}

/* The unlock channel and the token counter, named by Redisson's rule
 * (redis_tagged). */
static int name_channel(dlock *l, const char *name)
{
    l->channel = redis_tagged(CHANNEL_PREFIX, name);
    l->token_key = redis_tagged(TOKEN_PREFIX, name);
    if (l->channel == NULL || l->token_key == NULL)
        return redis_error(l, "out of memory");
    return DLOCK_OK;
}

/* What this stage adds to the plumbing's handle, once it has its key. */
static int init(dlock *l)
{
    if (random_id(l) != DLOCK_OK || name_channel(l, l->r.key) != DLOCK_OK)
        return DLOCK_ERR;
    if (start_watchdog(l) != DLOCK_OK)
        return DLOCK_ERR;
    return DLOCK_OK;
}

dlock *dlock_new(const char *name, const dlock_config *cfg)
{
    return redis_new(sizeof(dlock), name, cfg, 1, init);
}

int dlock_acquire(dlock *l)
{
    struct timespec start = redis_deadline_after(0);
    redisContext *sub = NULL;
    int rc;

    while ((rc = redis_guarded(l, try_acquire)) == DLOCK_BUSY) {
        long left = l->r.cfg.wait_ms - redis_elapsed_ms(&start);

        if (left <= 0)
            break;
        /* Listen first, then try once more: an unlock that came between
         * our last try and the subscription would go unheard. */
        if (sub == NULL) {
            if ((sub = redis_subscribe(l, l->channel, NULL)) == NULL) {
                rc = DLOCK_ERR;
                break;
            }
            continue;
        }
        /* No polling: sleep until the holder's unlock message, or until
         * the TTL we were told runs out (a holder that died sends none). */
        redis_wait_message(&sub, told_ttl_ms >= 0 && told_ttl_ms < left ? told_ttl_ms : left);
    }
    redis_unsubscribe(l, sub, l->channel);
    return rc;
}

int dlock_release(dlock *l)
{
    return redis_guarded(l, release);
}

long long dlock_token(dlock *l)
{
    long long token;

    /* Under the guard: the watchdog may find the hold lost meanwhile. */
    pthread_mutex_lock(&l->r.mu);
    token = l->holder == gettid() ? l->token : 0;
    pthread_mutex_unlock(&l->r.mu);
    return token;
}

void dlock_free(dlock *l)
{
    if (l == NULL)
        return;
    if (l->watching) {
        pthread_mutex_lock(&l->r.mu);
        l->stopping = 1;
        pthread_cond_signal(&l->wake);
        pthread_mutex_unlock(&l->r.mu);
        pthread_join(l->watchdog, NULL);
        pthread_cond_destroy(&l->wake);
    }
    free(l->channel);
    free(l->token_key);
    redis_free(l);
}
