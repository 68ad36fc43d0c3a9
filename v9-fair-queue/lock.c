/* v9-fair-queue: v6's lock, handed over in the order the waiters asked.
 *
 * The data layout is Redisson's fair lock (RedissonFairLock), so a Java
 * service using Redisson and a C service using this file can queue for
 * the same lock:
 *   key     a hash; field "<client id>:<thread id>", value the hold count.
 *   queue   "redisson_lock_queue:{<name>}", a list of waiting fields.
 *   timeout "redisson_lock_timeout:{<name>}", a sorted set: each waiter's
 *           score is the server time (ms) until which it keeps its place.
 *   channel "redisson_lock__channel:{<name>}:<field>", one per waiter (no
 *           braces added when the name has a '{'); a release publishes "0"
 *           to the first waiter's only.
 *
 * acquire: a Lua script first drops the waiters at the head whose place
 *          ran out, then takes the lock if the key is absent and we are
 *          first in the queue (or it is empty), or the key is already ours
 *          (HINCRBY the count, PEXPIRE the lease); else it queues us at the
 *          tail and says how long to sleep. A waiter subscribes to its own
 *          channel and tries again on the unlock message, or when that
 *          time runs out; one that gives up leaves the queue.
 * release: a Lua script decrements our count; at zero it deletes the key
 *          and publishes the unlock message to the first waiter. Not ours:
 *          NOT_OWNER.
 * watchdog: one thread per handle renews the lease every lease/3 while a
 *          thread of this handle holds the lock.
 *
 * This fixes the thundering herd of v6 (every waiter woke on every
 * release, and one that always lost could wait forever). What stays, v6's
 * flaws, and one of its own: the release wakes only the first waiter, so
 * a waiter that died in the queue holds up everyone behind it until its
 * place runs out.
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
#define QUEUE_PREFIX "redisson_lock_queue:"      /* Redisson's waiter list */
#define TIMEOUT_PREFIX "redisson_lock_timeout:"  /* and their places' ends */

/* Every script gets KEYS = {key, channel, queue, timeout}, ARGV = {lease,
 * field, message, wait}, so one helper runs them all. A waiter keeps its
 * place for its wait budget (Redisson's tryLock(wait) does the same). */

/* The server's clock in ms, one clock for every waiter's place whatever
 * the clients' clocks say; then the waiters at the head whose place ran
 * out leave the queue (only from the head, as Redisson does). */
#define DROP_EXPIRED_SCRIPT                                     \
    "local t = redis.call('time')\n"                            \
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n" \
    "while true do\n"                                           \
    "    local first = redis.call('lindex', KEYS[3], 0)\n"      \
    "    if first == false then break end\n"                    \
    "    local place = redis.call('zscore', KEYS[4], first)\n"  \
    "    if place ~= false and tonumber(place) > now then break end\n" \
    "    redis.call('lpop', KEYS[3])\n"                         \
    "    redis.call('zrem', KEYS[4], first)\n"                  \
    "end\n"                                                     \
    "local first = redis.call('lindex', KEYS[3], 0)\n"

/* Wakes the first waiter, on its own channel, when there is one. */
#define WAKE_FIRST_SCRIPT                                       \
    "first = redis.call('lindex', KEYS[3], 0)\n"                \
    "if first ~= false then\n"                                  \
    "    redis.call('publish', KEYS[2] .. ':' .. first, ARGV[3])\n" \
    "end\n"

/* Take the lock if it is free and our turn, or already ours; else queue
 * up and say how long to sleep: the lock's TTL, or while it is free, the
 * time the first waiter has left to take it. Redis does not undo a script
 * that fails halfway, so PEXPIRE also runs before HINCRBY: a lease it
 * refuses fails there, before a hash without a TTL exists (on a missing
 * key PEXPIRE checks the lease and sets nothing). Our place ends when the
 * last waiter's does (or the lock's TTL), plus our budget; taking the lock
 * gives that budget back to the waiters behind us. A budget of 0 (try
 * once) keeps no place. */
#define LOCK_SCRIPT                                             \
    DROP_EXPIRED_SCRIPT                                         \
    "if (redis.call('exists', KEYS[1]) == 0\n"                  \
    "        and (first == false or first == ARGV[2]))\n"       \
    "        or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then\n" \
    "    redis.call('pexpire', KEYS[1], ARGV[1])\n"             \
    "    if first == ARGV[2] then\n"                            \
    "        redis.call('lpop', KEYS[3])\n"                     \
    "        redis.call('zrem', KEYS[4], ARGV[2])\n"            \
    "        for _, w in ipairs(redis.call('lrange', KEYS[3], 0, -1)) do\n" \
    "            redis.call('zincrby', KEYS[4], -tonumber(ARGV[4]), w)\n" \
    "        end\n"                                             \
    "    end\n"                                                 \
    "    redis.call('hincrby', KEYS[1], ARGV[2], 1)\n"          \
    "    redis.call('pexpire', KEYS[1], ARGV[1])\n"             \
    "    return nil\n"                                          \
    "end\n"                                                     \
    "local ttl = redis.call('pttl', KEYS[1])\n"                 \
    "if ttl < 0 then\n"                                         \
    "    ttl = tonumber(redis.call('zscore', KEYS[4], first)) - now\n" \
    "end\n"                                                     \
    "if tonumber(ARGV[4]) > 0\n"                                \
    "        and redis.call('zscore', KEYS[4], ARGV[2]) == false then\n" \
    "    local last = redis.call('lindex', KEYS[3], -1)\n"      \
    "    local before = last and tonumber(redis.call('zscore', KEYS[4], last)) - now or ttl\n" \
    "    redis.call('zadd', KEYS[4], now + math.max(before, 0) + tonumber(ARGV[4]),\n" \
    "               ARGV[2])\n"                                 \
    "    redis.call('rpush', KEYS[3], ARGV[2])\n"               \
    "end\n"                                                     \
    "return ttl\n"
#define LOCK_SHA "3aa3f3b9dd6efa34cce2b4f8d13b52ca06413da7"

/* Drop one hold; the last one deletes the key and wakes the first waiter,
 * only it. A lock already gone wakes it too (as Redisson's does), so a
 * late release never leaves the queue asleep. */
#define UNLOCK_SCRIPT                                           \
    DROP_EXPIRED_SCRIPT                                         \
    "if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then\n"    \
    "    if redis.call('exists', KEYS[1]) == 0 then\n"          \
    WAKE_FIRST_SCRIPT                                           \
    "    end\n"                                                 \
    "    return nil\n"                                          \
    "end\n"                                                     \
    "if redis.call('hincrby', KEYS[1], ARGV[2], -1) > 0 then\n" \
    "    redis.call('pexpire', KEYS[1], ARGV[1])\n"             \
    "    return 0\n"                                            \
    "end\n"                                                     \
    "redis.call('del', KEYS[1])\n"                              \
    WAKE_FIRST_SCRIPT                                           \
    "return 1\n"
#define UNLOCK_SHA "56d43c98410411dce24911248e63ffbce75f956f"

/* A waiter that gives up leaves the queue, and the places of those behind
 * it end its budget sooner, as if it had never queued. If the lock is
 * free, the new first waiter is told: it may have been waiting for us. */
#define LEAVE_SCRIPT                                            \
    "local behind = false\n"                                    \
    "for _, w in ipairs(redis.call('lrange', KEYS[3], 0, -1)) do\n" \
    "    if behind then\n"                                      \
    "        redis.call('zincrby', KEYS[4], -tonumber(ARGV[4]), w)\n" \
    "    end\n"                                                 \
    "    behind = behind or w == ARGV[2]\n"                     \
    "end\n"                                                     \
    "redis.call('zrem', KEYS[4], ARGV[2])\n"                    \
    "redis.call('lrem', KEYS[3], 0, ARGV[2])\n"                 \
    "if redis.call('exists', KEYS[1]) == 0 then\n"              \
    "    local first\n"                                         \
    WAKE_FIRST_SCRIPT                                           \
    "end\n"                                                     \
    "return 1\n"
#define LEAVE_SHA "74222cb9393c1353673e7752ccad1d8b8f7bca1e"

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
static const redis_script leave_script = { LEAVE_SCRIPT, LEAVE_SHA };

struct dlock {
    redis_base r;                   /* first: the plumbing's part, redis.h */
    char id[2 * ID_BYTES + 1];      /* this client's random id, in hex */
    char *channel;                  /* where releases announce themselves,
                                     * ":<field>" added: to one waiter */
    char *queue;                    /* the waiters, first to last */
    char *timeout;                  /* until when each keeps its place */
    /* r.mu guards the fields below too: callers' threads and the watchdog
     * share them. */
    pthread_cond_t wake;            /* tells the watchdog the hold state changed */
    pid_t holder;                   /* the thread holding the lock through us, or 0 */
    long holds;                     /* its hold count, as the hash has it */
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
    return redis_eval(l, s, "4 %s %s %s %s %ld %s %s %ld", l->r.key, l->channel, l->queue,
                      l->timeout, l->r.cfg.lease_ms, field, UNLOCK_MESSAGE, l->r.cfg.wait_ms);
}

/* One attempt: OK when we took the lock (or took it once more), BUSY when
 * someone else has it. Called under the handle's mutex. */
static int try_acquire(dlock *l)
{
    char token[TOKEN_LEN];
    redisReply *r;
    int taken;

    owner_token(l, token, sizeof(token));
    r = eval_script(l, &lock_script, token);
    if (r == NULL)
        return DLOCK_ERR;
    taken = r->type == REDIS_REPLY_NIL;
    told_ttl_ms = r->type == REDIS_REPLY_INTEGER ? (long)r->integer : -1;
    freeReplyObject(r);
    if (!taken)
        return DLOCK_BUSY;
    l->holder = gettid();
    l->holds++;
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

/* A waiter that gives up leaves the queue, so it holds up nobody behind
 * it. Its acquire's own result stands: errstr stays as the acquire left
 * it, and a leave that fails costs the others at most our place's time. */
static int leave(dlock *l)
{
    char token[TOKEN_LEN], callers[DLOCK_ERRSTR_LEN];
    redisReply *r;

    owner_token(l, token, sizeof(token));
    memcpy(callers, l->r.errstr, sizeof(callers));
    r = eval_script(l, &leave_script, token);
    memcpy(l->r.errstr, callers, sizeof(callers));
    freeReplyObject(r);
    return DLOCK_OK;
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

/* The unlock channel, the queue and its places, named by Redisson's rule
 * (redis_tagged). */
static int name_channel(dlock *l, const char *name)
{
    l->channel = redis_tagged(CHANNEL_PREFIX, name);
    l->queue = redis_tagged(QUEUE_PREFIX, name);
    l->timeout = redis_tagged(TIMEOUT_PREFIX, name);
    if (l->channel == NULL || l->queue == NULL || l->timeout == NULL)
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
    /* A wait ends still subscribed: the channel is ours alone, and only a
     * release that finds us first in the queue publishes on it, so it
     * stays quiet while we are not queued, and the next wait sends no
     * SUBSCRIBE (a message that came too late for this wait costs the
     * next one a try). */
    l->r.stay_subscribed = 1;
    return DLOCK_OK;
}

dlock *dlock_new(const char *name, const dlock_config *cfg)
{
    return redis_new(sizeof(dlock), name, cfg, 1, init);
}

int dlock_acquire(dlock *l)
{
    struct timespec start = redis_deadline_after(0);
    char token[TOKEN_LEN], *mine;
    redisContext *sub = NULL;
    int rc, kept;

    if (!redis_ready(l))
        return DLOCK_ERR; /* refused by dlock_new: it has no channel */
    /* Our own channel: a release wakes the first waiter only. */
    owner_token(l, token, sizeof(token));
    if (asprintf(&mine, "%s:%s", l->channel, token) < 0)
        return redis_fail(l, "acquire", "out of memory");
    while ((rc = redis_guarded(l, try_acquire)) == DLOCK_BUSY) {
        long left = l->r.cfg.wait_ms - redis_elapsed_ms(&start);

        if (left <= 0)
            break;
        /* Listen first, then try once more: an unlock that came between
         * our last try and the subscription would go unheard. A wait
         * that was kept listening since the last one needs no new try. */
        if (sub == NULL) {
            if ((sub = redis_subscribe(l, mine, &kept)) == NULL) {
                rc = DLOCK_ERR;
                break;
            }
            if (!kept)
                continue;
        }
        /* No polling: sleep until the holder's unlock message, or until
         * the TTL we were told runs out (a holder that died sends none). */
        redis_wait_message(&sub, told_ttl_ms >= 0 && told_ttl_ms < left ? told_ttl_ms : left);
    }
    redis_unsubscribe(l, sub, mine);
    free(mine);
    if (rc != DLOCK_OK && l->r.cfg.wait_ms > 0)
        redis_guarded(l, leave);
    return rc;
}

int dlock_release(dlock *l)
{
    return redis_guarded(l, release);
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
    free(l->queue);
    free(l->timeout);
    redis_free(l);
}
