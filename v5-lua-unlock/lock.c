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
 * that never received the key hands the lock to a second client. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "lock.h"

#define DEFAULT_LEASE_MS 10000 /* long enough for most critical sections */
#define DEFAULT_RETRY_MS 10    /* between tries: short waits, few commands */
#define DEFAULT_TIMEOUT_MS 1000
#define DEFAULT_NODE_TIMEOUT_MS 50 /* stages with several nodes: a local reply
                                    * takes well under a millisecond */
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

struct dlock {
    char *key;                      /* the lock's name, used as the Redis key */
    dlock_config cfg;               /* a copy: the caller's may go away */
    redisContext *c;                /* NULL until needed, and after an I/O error
                                     * or READONLY */
    char id[2 * ID_BYTES + 1];      /* this client's random id, in hex */
    char errstr[DLOCK_ERRSTR_LEN];  /* why the last call failed, "" if none */
    pthread_mutex_t mu;             /* one thread at a time on c and errstr:
                                     * threads may share a handle */
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
    l->c = l->cfg.connect(l->cfg.connect_arg, 0, why, sizeof(why));
    if (l->c == NULL)
        return set_error(l, "%s", why);
    return DLOCK_OK;
}

/* Drops the connection: the next call asks the provider for a new one. */
static void disconnect(dlock *l)
{
    redisFree(l->c);
    l->c = NULL;
}

/* Sends one command. Returns its reply, or NULL with errstr set when the
 * connection failed or the server answered with an error. After an I/O
 * error or READONLY the connection is dropped, so the next call reconnects. */
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

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

    nanosleep(&ts, NULL);
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
    if (cfg->connect == NULL && (cfg->host == NULL || cfg->timeout_ms <= 0))
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

/* The value we store in the key: who holds it, down to the thread. */
static void owner_token(const dlock *l, char *token, size_t len)
{
    snprintf(token, len, "%s:%ld", l->id, (long)gettid());
}

/* Runs the unlock script by its SHA. A server that has not seen it yet
 * (just started, failed over, or after SCRIPT FLUSH) answers NOSCRIPT;
 * then we send the whole script, which also caches it there. */
static redisReply *eval_unlock(dlock *l, const char *token)
{
    redisReply *r;

    r = command(l, "EVALSHA %s 1 %s %s", UNLOCK_SHA, l->key, token);
    if (r == NULL && strstr(l->errstr, "NOSCRIPT") != NULL) {
        l->errstr[0] = '\0'; /* expected, not a failure of this call */
        r = command(l, "EVAL %s 1 %s %s", UNLOCK_SCRIPT, l->key, token);
    }
    return r;
}

/* One attempt: OK when we took the lock, BUSY when someone else has it.
 * Call with l->mu held. */
static int try_acquire(dlock *l)
{
    char token[TOKEN_LEN];
    redisReply *r;
    int taken;

    owner_token(l, token, sizeof(token));
    /* One command: the key never exists without its lease (v2's window). */
    r = command(l, "SET %s %s NX PX %ld", l->key, token, l->cfg.lease_ms);
    if (r == NULL)
        return DLOCK_ERR;
    taken = r->type == REDIS_REPLY_STATUS;
    freeReplyObject(r);
    if (!taken)
        return DLOCK_BUSY;
    return DLOCK_OK;
}

/* Gives the lock back: dlock_release with l->mu held. */
static int release(dlock *l)
{
    char token[TOKEN_LEN];
    redisReply *r;
    int ours;

    owner_token(l, token, sizeof(token));
    /* One script: nothing runs between the check and the delete. */
    r = eval_unlock(l, token);
    if (r == NULL)
        return DLOCK_ERR;
    ours = r->type == REDIS_REPLY_INTEGER && r->integer == 1;
    freeReplyObject(r);
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
    if (l->cfg.connect == NULL) {
        l->cfg.connect = connect_default;
        l->cfg.connect_arg = &l->cfg;
    }
    if (random_id(l) != DLOCK_OK)
        return l;
    l->key = strdup(name);
    if (l->key == NULL)
        set_error(l, "out of memory");
    return l;
}

int dlock_acquire(dlock *l)
{
    struct timespec start;
    int rc;

    if (l->key == NULL)
        return DLOCK_ERR;
    clock_gettime(CLOCK_MONOTONIC, &start);
    while ((rc = guarded(l, try_acquire)) == DLOCK_BUSY) {
        long left = l->cfg.wait_ms - elapsed_ms(&start);

        if (left <= 0)
            break;
        sleep_ms(left < l->cfg.retry_ms ? left : l->cfg.retry_ms);
    }
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
    redisFree(l->c);
    pthread_mutex_destroy(&l->mu);
    free(l->key);
    free(l);
}

/* A no-op unless the simulator links its own definition. */
__attribute__((weak)) void dlock_failpoint(const char *name)
{
    (void)name;
}
