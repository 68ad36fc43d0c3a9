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
 * place runs out. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "redis.h"

#define DEFAULT_LEASE_MS 10000 /* long enough for most critical sections */
#define DEFAULT_RETRY_MS 10    /* between tries: short waits, few commands */
#define DEFAULT_TIMEOUT_MS 1000
#define DEFAULT_NODE_TIMEOUT_MS 50 /* stages with several nodes: a local reply
                                    * takes well under a millisecond */
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
    "    local before = ttl\n"                                  \
    "    if last ~= false then\n"                               \
    "        before = tonumber(redis.call('zscore', KEYS[4], last)) - now\n" \
    "    end\n"                                                 \
    "    redis.call('zadd', KEYS[4], now + math.max(before, 0) + tonumber(ARGV[4]),\n" \
    "               ARGV[2])\n"                                 \
    "    redis.call('rpush', KEYS[3], ARGV[2])\n"               \
    "end\n"                                                     \
    "return ttl\n"
#define LOCK_SHA "ab8539fd12d69b435d7b5dd59424a40d8ae1f750"

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

/* A script and the SHA1 of its text (sha1sum): EVALSHA sends these 40
 * bytes instead of the script. If a script changes, so must its SHA. */
struct script {
    const char *text;
    const char *sha;
};

static const struct script lock_script = { LOCK_SCRIPT, LOCK_SHA };
static const struct script unlock_script = { UNLOCK_SCRIPT, UNLOCK_SHA };
static const struct script renew_script = { RENEW_SCRIPT, RENEW_SHA };
static const struct script leave_script = { LEAVE_SCRIPT, LEAVE_SHA };

struct dlock {
    char *key;                      /* the lock's name, used as the Redis key */
    dlock_config cfg;               /* a copy: the caller's may go away */
    struct dlock_provider provider; /* a copy of cfg's, or host:port's */
    redisContext *c;                /* NULL until needed, and after an I/O error
                                     * or READONLY */
    char id[2 * ID_BYTES + 1];      /* this client's random id, in hex */
    char errstr[DLOCK_ERRSTR_LEN];  /* why the last call failed, "" if none */
    char *channel;                  /* where releases announce themselves,
                                     * ":<field>" added: to one waiter */
    char *queue;                    /* the waiters, first to last */
    char *timeout;                  /* until when each keeps its place */
    pthread_mutex_t mu;             /* guards c, errstr and the fields below:
                                     * callers' threads and the watchdog share them */
    pthread_cond_t wake;            /* tells the watchdog the hold state changed */
    pid_t holder;                   /* the thread holding the lock through us, or 0 */
    long holds;                     /* its hold count, as the hash has it */
    pthread_t watchdog;             /* renews the lease while holds > 0 */
    int watching;                   /* the watchdog thread runs */
    int stopping;                   /* dlock_free asks the watchdog to end */
    int idle;                       /* the watchdog waits for a first hold */
    redisContext *sub;              /* a waiter's pub/sub connection, kept
                                     * between waits; NULL while one is in use */
    char *listening;                /* the channel sub stays subscribed to */
};

/* Records why a call failed; returns DLOCK_ERR so callers can return it. */
static int set_error(dlock *l, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(l->errstr, sizeof(l->errstr), fmt, ap);
    va_end(ap);
    return DLOCK_ERR;
}

static struct timeval to_timeval(long ms)
{
    struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
    return tv;
}

/* The default provider: node i at host:port + i, with a timeout on
 * connect and on every command, so a dead server gives an error instead of
 * a hang. */
static redisContext *connect_default(void *arg, int node, char *errstr,
                                     size_t errlen)
{
    const dlock_config *cfg = arg;
    struct timeval tv = to_timeval(cfg->timeout_ms);
    int port = cfg->port + node;
    redisContext *c = redisConnectWithTimeout(cfg->host, port, tv);

    if (c == NULL || c->err) {
        snprintf(errstr, errlen, "connect to %s:%d: %s", cfg->host, port,
                 c ? c->errstr : "out of memory");
        redisFree(c);
        return NULL;
    }
    redisSetTimeout(c, tv);
    if (cfg->password != NULL) {
        redisReply *r = redisCommand(c, "AUTH %s", cfg->password);
        int ok = r != NULL && r->type == REDIS_REPLY_STATUS;

        if (!ok)
            snprintf(errstr, errlen, "AUTH on %s:%d failed: %s", cfg->host,
                     port, r != NULL ? r->str : c->errstr);
        freeReplyObject(r);
        if (!ok) {
            redisFree(c);
            return NULL;
        }
    }
    return c;
}

/* Asks the provider for a connection to the one node (0) when we have
 * none. */
static int ensure_connected(dlock *l)
{
    char why[DLOCK_ERRSTR_LEN] = "the connection provider returned NULL";

    if (l->c != NULL)
        return DLOCK_OK;
    l->c = l->cfg.provider->connect(l->cfg.provider->arg, 0, why, sizeof(why));
    if (l->c == NULL)
        return set_error(l, "%s", why);
    return DLOCK_OK;
}

/* Drops the connection: the next call asks the provider for a new one. */
static void disconnect(dlock *l)
{
    redisFree(l->c);
    l->c = NULL;
    /* The next wait subscribes where the next commands go. */
    redisFree(l->sub);
    l->sub = NULL;
    free(l->listening);
    l->listening = NULL;
}

/* Sends one command. Returns its reply, or NULL with errstr set when the
 * connection failed or the server answered with an error. After an I/O
 * error or READONLY the connection is dropped, so the next call
 * reconnects. Call with l->mu held. */
static redisReply *command(dlock *l, const char *fmt, ...)
{
    redisReply *r;
    va_list ap;

    if (ensure_connected(l) != DLOCK_OK)
        return NULL;
    va_start(ap, fmt);
    r = redisvCommand(l->c, fmt, ap);
    va_end(ap);
    if (r == NULL) {
        set_error(l, "I/O error: %s", l->c->errstr);
        disconnect(l);
        return NULL;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        set_error(l, "server error: %s", r->str);
        /* A replica refuses writes: a failover demoted this server, so
         * ask the provider for the primary, as after an I/O error. */
        if (strncmp(r->str, "READONLY", 8) == 0)
            disconnect(l);
        freeReplyObject(r);
        return NULL;
    }
    return r;
}

static long elapsed_ms(const struct timespec *start)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - start->tv_sec) * 1000 +
           (now.tv_nsec - start->tv_nsec) / 1000000;
}

/* Rejects what no call could work with, once, at dlock_new. The lease is
 * checked even in a stage that sets no TTL, so that a config works in
 * every stage or in none. */
static int check_config(dlock *l, const char *name, const dlock_config *cfg)
{
    if (name == NULL || name[0] == '\0')
        return set_error(l, "lock name is empty: give each lock a name");
    if (cfg == NULL)
        return set_error(l, "config is NULL: call dlock_config_init first");
    if (cfg->lease_ms < DLOCK_MIN_LEASE_MS || cfg->lease_ms > DLOCK_MAX_LEASE_MS)
        return set_error(l, "lease_ms %ld is out of range: give %ld to %ld ms",
                         cfg->lease_ms, DLOCK_MIN_LEASE_MS, DLOCK_MAX_LEASE_MS);
    if (cfg->wait_ms < 0 || cfg->retry_ms <= 0)
        return set_error(l, "wait_ms must be >= 0 and retry_ms > 0");
    /* One server. Taking the first of several would look like a quorum
     * to the caller and be a single point of failure. */
    if (cfg->nodes != 1)
        return set_error(l, "nodes is %d: this stage talks to one server; give 1, "
                         "or use v8-redlock for a majority of several", cfg->nodes);
    if (cfg->provider == NULL && (cfg->host == NULL || cfg->timeout_ms <= 0))
        return set_error(l, "default provider needs a host and timeout_ms > 0");
    return DLOCK_OK;
}

/* Draws this client's id from the OS random source, never from rand():
 * another client must not be able to guess it or draw the same. */
static int random_id(dlock *l)
{
    unsigned char bytes[ID_BYTES];
    int i;

    if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes))
        return set_error(l, "cannot read the OS random source");
    for (i = 0; i < ID_BYTES; i++)
        sprintf(l->id + 2 * i, "%02x", bytes[i]);
    return DLOCK_OK;
}

/* The hash field we hold the lock by: who holds it, down to the thread. */
static void owner_token(const dlock *l, char *token, size_t len)
{
    snprintf(token, len, "%s:%ld", l->id, (long)gettid());
}

/* Runs a script by its SHA. A server that has not seen it yet (just
 * started, failed over, or after SCRIPT FLUSH) answers NOSCRIPT; then we
 * send the whole script, which also caches it there. Call with l->mu held. */
static redisReply *eval_script(dlock *l, const struct script *s,
                               const char *field)
{
    redisReply *r;

    r = command(l, "EVALSHA %s 4 %s %s %s %s %ld %s %s %ld", s->sha, l->key,
                l->channel, l->queue, l->timeout, l->cfg.lease_ms, field,
                UNLOCK_MESSAGE, l->cfg.wait_ms);
    if (r == NULL && strstr(l->errstr, "NOSCRIPT") != NULL) {
        l->errstr[0] = '\0'; /* expected, not a failure of this call */
        r = command(l, "EVAL %s 4 %s %s %s %s %ld %s %s %ld", s->text, l->key,
                    l->channel, l->queue, l->timeout, l->cfg.lease_ms, field,
                    UNLOCK_MESSAGE, l->cfg.wait_ms);
    }
    return r;
}

/* One attempt: OK when we took the lock (or took it once more), BUSY with
 * the holder's remaining TTL in *ttl_ms when someone else has it. */
static int try_acquire(dlock *l, long *ttl_ms)
{
    char token[TOKEN_LEN];
    redisReply *r;
    int taken;

    owner_token(l, token, sizeof(token));
    pthread_mutex_lock(&l->mu);
    r = eval_script(l, &lock_script, token);
    if (r == NULL) {
        pthread_mutex_unlock(&l->mu);
        return DLOCK_ERR;
    }
    taken = r->type == REDIS_REPLY_NIL;
    *ttl_ms = r->type == REDIS_REPLY_INTEGER ? (long)r->integer : -1;
    freeReplyObject(r);
    if (taken) {
        l->holder = gettid();
        l->holds++;
        /* Only an idle watchdog needs waking: one still timing a renewal
         * renews early, which is safe, and waking it on every acquire
         * costs a context switch per lock call. */
        if (l->idle)
            pthread_cond_signal(&l->wake);
    }
    pthread_mutex_unlock(&l->mu);
    return taken ? DLOCK_OK : DLOCK_BUSY;
}

/* Gives the lock back: dlock_release with l->mu held. */
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

/* Runs one step of the protocol (one try, or the release) with l->mu
 * held: threads may share a handle, and its connection and errstr serve
 * one thread at a time. A waiter holds the guard for a try, never while it
 * sleeps between tries, so it cannot keep the holder from releasing. */
static int guarded(dlock *l, int (*step)(dlock *l))
{
    int rc;

    pthread_mutex_lock(&l->mu);
    rc = step(l);
    pthread_mutex_unlock(&l->mu);
    return rc;
}

/* Records an error from a thread that does not hold l->mu. */
static int fail(dlock *l, const char *what, const char *why)
{
    pthread_mutex_lock(&l->mu);
    set_error(l, "%s: %s", what, why);
    pthread_mutex_unlock(&l->mu);
    return DLOCK_ERR;
}

/* Whether a reply is the server's confirmation of a SUBSCRIBE. */
static int is_subscribed(const redisReply *r)
{
    return r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
           r->element[0]->type == REDIS_REPLY_STRING &&
           strcmp(r->element[0]->str, "subscribe") == 0;
}

/* Sends SUBSCRIBE on sub and reads up to the server's confirmation. What
 * the last wait left unread (its UNSUBSCRIBE's answer, messages about
 * earlier releases) comes before the confirmation and is skipped. 0, or
 * -1 when the connection failed (sub->errstr says why). */
static int subscribe_on(redisContext *sub, const char *channel)
{
    redisReply *r = NULL;

    if (redisAppendCommand(sub, "SUBSCRIBE %s", channel) != REDIS_OK)
        return -1;
    do {
        freeReplyObject(r);
        if (redisGetReply(sub, (void **)&r) != REDIS_OK)
            return -1;
    } while (!is_subscribed(r));
    freeReplyObject(r);
    return 0;
}

/* Subscribes a waiter to its own unlock channel, on the connection the
 * last wait kept or on a new one. *kept is 1 when the last wait left it
 * subscribed to this very channel: then it listened before our last try,
 * and nothing needs sending. A kept one of another thread's channel
 * leaves that first. The kept one may have died since (the server closed
 * it, or went away): then a new one from the provider, as after a failed
 * command. NULL with errstr set on failure. */
static redisContext *subscribe(dlock *l, const char *channel, int *kept)
{
    char why[DLOCK_ERRSTR_LEN] = "the connection provider returned NULL";
    redisContext *sub;

    pthread_mutex_lock(&l->mu);
    sub = l->sub;
    l->sub = NULL;
    *kept = sub != NULL && l->listening != NULL && strcmp(l->listening, channel) == 0;
    pthread_mutex_unlock(&l->mu);
    if (*kept)
        return sub;
    if (sub != NULL && redisAppendCommand(sub, "UNSUBSCRIBE") == REDIS_OK &&
        subscribe_on(sub, channel) == 0)
        return sub;
    redisFree(sub);
    sub = l->cfg.provider->connect(l->cfg.provider->arg, 0, why, sizeof(why));
    if (sub == NULL) {
        fail(l, "subscribe", why);
        return NULL;
    }
    if (subscribe_on(sub, channel) == 0)
        return sub;
    fail(l, "subscribe", sub->errstr);
    redisFree(sub);
    return NULL;
}

/* Ends a wait, still subscribed: the channel is ours alone, and only a
 * release that finds us first in the queue publishes on it, so it stays
 * quiet while we are not queued, and the next wait sends no SUBSCRIBE
 * (a message that came too late for this wait costs the next one a try).
 * The connection is kept for the next wait, so that a contended acquire
 * costs no new TCP connection. */
static void unsubscribe(dlock *l, redisContext *sub, const char *channel)
{
    char *name;

    if (sub == NULL)
        return;
    name = strdup(channel);
    pthread_mutex_lock(&l->mu);
    if (name != NULL && l->sub == NULL) {
        l->sub = sub;
        sub = NULL;
        free(l->listening);
        l->listening = name;
        name = NULL;
    }
    pthread_mutex_unlock(&l->mu);
    free(name);
    redisFree(sub); /* out of memory, or another thread's wait kept one first */
}

/* Waits up to ms for a message on the unlock channel. A timeout is no
 * failure: the TTL we were told has run out, so the caller tries again. A
 * broken connection is dropped (*sub = NULL): the caller subscribes anew. */
static void wait_unlock(redisContext **sub, long ms)
{
    struct pollfd p = { (*sub)->fd, POLLIN, 0 };
    void *reply = NULL;

    /* An earlier read may have left a whole message in hiredis's buffer. */
    if (redisReaderGetReply((*sub)->reader, &reply) == REDIS_OK && reply) {
        freeReplyObject(reply);
        return;
    }
    if (poll(&p, 1, ms < 1 ? 1 : ms > INT_MAX ? INT_MAX : (int)ms) <= 0)
        return;
    if (redisGetReply(*sub, &reply) != REDIS_OK) {
        redisFree(*sub);
        *sub = NULL;
        return;
    }
    freeReplyObject(reply);
}

/* Renews the lease if the lock is still held through this handle. The
 * script checks the field, so a late renewal never revives a lock that was
 * released or lost. errstr belongs to the callers (lock.h): the watchdog
 * puts back what their last failed call said. Call with l->mu held. */
static void renew(dlock *l)
{
    char token[TOKEN_LEN], callers[DLOCK_ERRSTR_LEN];
    redisReply *r;

    snprintf(token, sizeof(token), "%s:%ld", l->id, (long)l->holder);
    memcpy(callers, l->errstr, sizeof(callers));
    r = eval_script(l, &renew_script, token);
    memcpy(l->errstr, callers, sizeof(callers));
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
    memcpy(callers, l->errstr, sizeof(callers));
    r = eval_script(l, &leave_script, token);
    memcpy(l->errstr, callers, sizeof(callers));
    freeReplyObject(r);
    return DLOCK_OK;
}

/* The CLOCK_MONOTONIC time ms from now. */
static struct timespec deadline_after(long ms)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += ms / 1000;
    t.tv_nsec += (ms % 1000) * 1000000;
    if (t.tv_nsec >= 1000000000) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000;
    }
    return t;
}

/* Waits on l->wake until the deadline; with l->mu held. 1 when it passed. */
static int sleep_until(dlock *l, const struct timespec *deadline)
{
    return pthread_cond_timedwait(&l->wake, &l->mu, deadline) == ETIMEDOUT;
}

/* The watchdog thread: idle while nobody holds the lock through this
 * handle; while someone does, renews the lease every lease/3, so a live
 * holder never loses the lock however long it takes. */
static void *watchdog(void *arg)
{
    dlock *l = arg;
    long period = l->cfg.lease_ms / 3 > 0 ? l->cfg.lease_ms / 3 : 1;
    struct timespec next;

    pthread_mutex_lock(&l->mu);
    while (!l->stopping) {
        if (l->holds == 0) {
            l->idle = 1;
            pthread_cond_wait(&l->wake, &l->mu);
            l->idle = 0;
            continue;
        }
        next = deadline_after(period);
        while (!l->stopping && l->holds > 0 && !sleep_until(l, &next))
            ;
        if (l->stopping || l->holds == 0)
            continue;
        pthread_mutex_unlock(&l->mu);
        dlock_failpoint("watchdog.before_renew");
        pthread_mutex_lock(&l->mu);
        if (l->holds > 0)
            renew(l);
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

/* Sets up a condition on the monotonic clock (wall clock jumps
 * must not skip a renewal) and the watchdog thread. */
static int start_watchdog(dlock *l)
{
    pthread_condattr_t attr;

    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&l->wake, &attr);
    pthread_condattr_destroy(&attr);
    if (pthread_create(&l->watchdog, NULL, watchdog, l) != 0) {
        pthread_cond_destroy(&l->wake);
        return set_error(l, "cannot start the watchdog thread");
    }
    l->watching = 1;
    return DLOCK_OK;
}

/* A prefix and the lock's name in braces, by Redisson's rule. NULL when
 * out of memory. */
static char *braced(const char *prefix, const char *name)
{
    const char *brace = strchr(name, '{') != NULL ? "" : "{";
    char *s = malloc(strlen(prefix) + strlen(name) + 3);

    if (s != NULL)
        sprintf(s, "%s%s%s%s", prefix, brace, name, *brace ? "}" : "");
    return s;
}

/* The unlock channel, the queue and its places, named by Redisson's rule:
 * the lock's name in braces,
 * a hash tag, so that in a Redis Cluster the channel and the key live in
 * the same slot. A name with a '{' in it is taken as it is: it may carry
 * its own hash tag ("{shop}:stock"), and braces around it would make the
 * channel's tag differ from the key's (CROSSSLOT), and the channel differ
 * from the one a Redisson client listens on. */
static int name_channel(dlock *l, const char *name)
{
    l->channel = braced(CHANNEL_PREFIX, name);
    l->queue = braced(QUEUE_PREFIX, name);
    l->timeout = braced(TIMEOUT_PREFIX, name);
    if (l->channel == NULL || l->queue == NULL || l->timeout == NULL)
        return set_error(l, "out of memory");
    return DLOCK_OK;
}

void dlock_config_init(dlock_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->lease_ms = DEFAULT_LEASE_MS;
    cfg->retry_ms = DEFAULT_RETRY_MS;
    cfg->nodes = 1;
    cfg->node_timeout_ms = DEFAULT_NODE_TIMEOUT_MS;
    cfg->host = "127.0.0.1";
    cfg->port = 6379;
    cfg->timeout_ms = DEFAULT_TIMEOUT_MS;
}

dlock *dlock_new(const char *name, const dlock_config *cfg)
{
    dlock *l = calloc(1, sizeof(*l));

    if (l == NULL)
        return NULL;
    pthread_mutex_init(&l->mu, NULL);
    if (check_config(l, name, cfg) != DLOCK_OK)
        return l;
    l->cfg = *cfg;
    l->provider = cfg->provider != NULL ? *cfg->provider
                                        : (struct dlock_provider){ connect_default, &l->cfg };
    l->cfg.provider = &l->provider;
    if (random_id(l) != DLOCK_OK || name_channel(l, name) != DLOCK_OK)
        return l;
    if (start_watchdog(l) != DLOCK_OK)
        return l;
    l->key = strdup(name);
    if (l->key == NULL)
        set_error(l, "out of memory");
    return l;
}

int dlock_acquire(dlock *l)
{
    char token[TOKEN_LEN], *mine;
    struct timespec start;
    redisContext *sub = NULL;
    long ttl;
    int rc, kept;

    if (l->key == NULL)
        return DLOCK_ERR;
    /* Our own channel: a release wakes the first waiter only. */
    owner_token(l, token, sizeof(token));
    mine = malloc(strlen(l->channel) + strlen(token) + 2);
    if (mine == NULL)
        return fail(l, "acquire", "out of memory");
    sprintf(mine, "%s:%s", l->channel, token);
    clock_gettime(CLOCK_MONOTONIC, &start);
    while ((rc = try_acquire(l, &ttl)) == DLOCK_BUSY) {
        long left = l->cfg.wait_ms - elapsed_ms(&start);

        if (left <= 0)
            break;
        /* Listen first, then try once more: an unlock that came between
         * our last try and the subscription would go unheard. A wait
         * that was kept listening since the last one needs no new try. */
        if (sub == NULL) {
            if ((sub = subscribe(l, mine, &kept)) == NULL) {
                rc = DLOCK_ERR;
                break;
            }
            if (!kept)
                continue;
        }
        /* No polling: sleep until the holder's unlock message, or until
         * the TTL we were told runs out (a holder that died sends none). */
        wait_unlock(&sub, ttl >= 0 && ttl < left ? ttl : left);
    }
    unsubscribe(l, sub, mine);
    free(mine);
    if (rc != DLOCK_OK && l->cfg.wait_ms > 0)
        guarded(l, leave);
    return rc;
}

int dlock_release(dlock *l)
{
    if (l->key == NULL)
        return DLOCK_ERR;
    return guarded(l, release);
}

/* This stage draws no fencing tokens. */
long long dlock_token(dlock *l)
{
    (void)l;
    return 0;
}

const char *dlock_errstr(const dlock *l)
{
    return l->errstr;
}

void dlock_free(dlock *l)
{
    if (l == NULL)
        return;
    if (l->watching) {
        pthread_mutex_lock(&l->mu);
        l->stopping = 1;
        pthread_cond_signal(&l->wake);
        pthread_mutex_unlock(&l->mu);
        pthread_join(l->watchdog, NULL);
        pthread_cond_destroy(&l->wake);
    }
    redisFree(l->c);
    redisFree(l->sub);
    free(l->listening);
    pthread_mutex_destroy(&l->mu);
    free(l->channel);
    free(l->queue);
    free(l->timeout);
    free(l->key);
    free(l);
}

/* A no-op unless the simulator links its own definition. */
__attribute__((weak)) void dlock_failpoint(const char *name)
{
    (void)name;
}
