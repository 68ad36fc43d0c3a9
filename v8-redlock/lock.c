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
 * node and the ones the holder never had. */
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
#define MAX_NODES 15   /* one round's replies live on the stack; 5 is usual */
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

struct dlock {
    char *key;                      /* the lock's name, used as the Redis key */
    dlock_config cfg;               /* a copy: the caller's may go away */
    struct dlock_provider provider; /* a copy of cfg's, or host:port's */
    redisContext *c[MAX_NODES];     /* one per node; NULL until needed, and after
                                     * an I/O error, a late reply or READONLY */
    char id[2 * ID_BYTES + 1];      /* this client's random id, in hex */
    char tried[DLOCK_ERRSTR_LEN];   /* why the latest try failed: errstr when
                                     * acquire gives up on an error */
    char errstr[DLOCK_ERRSTR_LEN];  /* why the last call failed, "" if none */
    pthread_mutex_t mu;             /* one thread at a time on c and errstr:
                                     * threads may share a handle */
};

/* One command sent to every node at once, and what each one answered. */
typedef struct fanout {
    int pending[MAX_NODES];         /* sent; its reply has not come yet */
    redisReply *reply[MAX_NODES];   /* the reply; NULL: none came in time */
    char why[DLOCK_ERRSTR_LEN];     /* the first node that failed, and why */
} fanout;

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

/* Asks the provider for a connection to node when we have none; why gets
 * the reason when it gives none. */
static int ensure_connected(dlock *l, int node, char *why, size_t len)
{
    if (l->c[node] != NULL)
        return DLOCK_OK;
    snprintf(why, len, "the connection provider returned NULL");
    l->c[node] = l->cfg.provider->connect(l->cfg.provider->arg, node, why, len);
    if (l->c[node] == NULL)
        return DLOCK_ERR;
    return DLOCK_OK;
}

/* Drops node's connection: the next call asks the provider for a new one. */
static void disconnect(dlock *l, int node)
{
    redisFree(l->c[node]);
    l->c[node] = NULL;
}

/* Node failed this round: its reason is kept when it is the first. */
static void node_failed(fanout *f, int node, const char *fmt, ...)
{
    va_list ap;
    int n;

    f->pending[node] = 0;
    if (f->why[0] != '\0')
        return;
    n = snprintf(f->why, sizeof(f->why), "node %d: ", node);
    va_start(ap, fmt);
    vsnprintf(f->why + n, sizeof(f->why) - n, fmt, ap);
    va_end(ap);
}

/* Queues one command for node and writes it out, without waiting for its
 * reply: every node has its command before any reply is read. */
static void send_to(dlock *l, fanout *f, int node, const char *fmt, va_list ap)
{
    char why[DLOCK_ERRSTR_LEN];
    int done = 0;

    if (ensure_connected(l, node, why, sizeof(why)) != DLOCK_OK) {
        node_failed(f, node, "%s", why);
        return;
    }
    if (redisvAppendCommand(l->c[node], fmt, ap) != REDIS_OK) {
        node_failed(f, node, "out of memory");
        return;
    }
    while (!done) {
        if (redisBufferWrite(l->c[node], &done) != REDIS_OK) {
            node_failed(f, node, "I/O error: %s", l->c[node]->errstr);
            disconnect(l, node);
            return;
        }
    }
    f->pending[node] = 1;
}

/* The same command to every node (only given: to the nodes it marks). */
static void send_all(dlock *l, fanout *f, const int *only, const char *fmt, ...)
{
    va_list ap;
    int i;

    for (i = 0; i < l->cfg.nodes; i++) {
        if (only != NULL && !only[i])
            continue;
        va_start(ap, fmt);
        send_to(l, f, i, fmt, ap);
        va_end(ap);
    }
}

/* A reply from node. An error reply counts as a failed node, but for
 * NOSCRIPT, which eval_unlock answers with the script. A replica refuses
 * writes: a failover demoted this node's server, so the next call asks the
 * provider for the node's primary, as after an I/O error. */
static void got_reply(dlock *l, fanout *f, int node, redisReply *r)
{
    f->pending[node] = 0;
    f->reply[node] = r;
    if (r->type != REDIS_REPLY_ERROR || strncmp(r->str, "NOSCRIPT", 8) == 0)
        return;
    node_failed(f, node, "server error: %s", r->str);
    if (strncmp(r->str, "READONLY", 8) == 0)
        disconnect(l, node);
}

/* Reads what node has sent; a whole reply ends its wait. */
static void read_from(dlock *l, fanout *f, int node)
{
    void *reply = NULL;

    if (redisBufferRead(l->c[node]) != REDIS_OK ||
        redisGetReplyFromReader(l->c[node], &reply) != REDIS_OK) {
        node_failed(f, node, "I/O error: %s", l->c[node]->errstr);
        disconnect(l, node);
        return;
    }
    if (reply != NULL)
        got_reply(l, f, node, reply);
}

static long elapsed_ms(const struct timespec *start)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - start->tv_sec) * 1000 +
           (now.tv_nsec - start->tv_nsec) / 1000000;
}

/* The nodes still waited for, as poll()'s list; who[k] is p[k]'s node. */
static int waiting(const dlock *l, const fanout *f, struct pollfd *p, int *who)
{
    int i, n = 0;

    for (i = 0; i < l->cfg.nodes; i++) {
        if (!f->pending[i])
            continue;
        p[n].fd = l->c[i]->fd;
        p[n].events = POLLIN;
        p[n].revents = 0;
        who[n++] = i;
    }
    return n;
}

/* Reads the replies of the nodes it was sent to, as each comes in, until
 * all have answered or node_timeout_ms has passed: a stalled node costs
 * its timeout once, not the command timeout, and not once per node. A node
 * that does not answer in time is dropped, since its reply may still come
 * and must never be read as the answer to a later command. */
static void collect(dlock *l, fanout *f)
{
    struct pollfd p[MAX_NODES];
    struct timespec start;
    int who[MAX_NODES], n, k, ready;
    long left;

    clock_gettime(CLOCK_MONOTONIC, &start);
    while ((n = waiting(l, f, p, who)) > 0) {
        left = l->cfg.node_timeout_ms - elapsed_ms(&start);
        ready = left > 0 ? poll(p, n, (int)left) : 0;
        if (ready < 0 && errno == EINTR)
            continue; /* a signal, or SIGSTOP and SIGCONT: the clock runs on */
        for (k = 0; k < n; k++) {
            if (ready > 0) {
                if (p[k].revents != 0)
                    read_from(l, f, who[k]);
                continue;
            }
            node_failed(f, who[k], "%s", ready == 0 ? "no reply within node_timeout_ms"
                                                    : strerror(errno));
            disconnect(l, who[k]);
        }
    }
}

/* How many nodes answered with a reply of this type. */
static int count(const dlock *l, const fanout *f, int type)
{
    int i, n = 0;

    for (i = 0; i < l->cfg.nodes; i++)
        n += f->reply[i] != NULL && f->reply[i]->type == type;
    return n;
}

/* How many nodes answered the integer value. */
static int count_int(const dlock *l, const fanout *f, long long value)
{
    int i, n = 0;

    for (i = 0; i < l->cfg.nodes; i++)
        n += f->reply[i] != NULL && f->reply[i]->type == REDIS_REPLY_INTEGER &&
             f->reply[i]->integer == value;
    return n;
}

/* Frees the replies; the round can be sent again. */
static void clear(fanout *f)
{
    int i;

    for (i = 0; i < MAX_NODES; i++) {
        freeReplyObject(f->reply[i]);
        f->reply[i] = NULL;
        f->pending[i] = 0;
    }
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
    if (cfg->nodes < 1 || cfg->nodes > MAX_NODES)
        return set_error(l, "nodes is %d: give 1 to %d independent servers (5 is "
                         "the usual)", cfg->nodes, MAX_NODES);
    if (cfg->node_timeout_ms <= 0 || cfg->node_timeout_ms > INT_MAX)
        return set_error(l, "node_timeout_ms %ld is out of range: give 1 to %d ms, "
                         "far below the lease", cfg->node_timeout_ms, INT_MAX);
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

/* The value we store in the key: who holds it, down to the thread. */
static void owner_token(const dlock *l, char *token, size_t len)
{
    snprintf(token, len, "%s:%ld", l->id, (long)gettid());
}

/* Runs the unlock script by its SHA on every node (only given: on the
 * nodes it marks); the nodes that have not seen it yet (just started,
 * failed over, or after SCRIPT FLUSH) answer NOSCRIPT and get the whole
 * script (EVAL), which also caches it there. */
static void eval_unlock(dlock *l, const char *token, const int *only, fanout *f)
{
    int noscript[MAX_NODES] = { 0 }, i, any = 0;

    send_all(l, f, only, "EVALSHA %s 1 %s %s", UNLOCK_SHA, l->key, token);
    collect(l, f);
    for (i = 0; i < l->cfg.nodes; i++) {
        const redisReply *r = f->reply[i];

        if (r == NULL || r->type != REDIS_REPLY_ERROR || strncmp(r->str, "NOSCRIPT", 8) != 0)
            continue;
        freeReplyObject(f->reply[i]);
        f->reply[i] = NULL;
        noscript[i] = any = 1;
    }
    if (!any)
        return;
    send_all(l, f, noscript, "EVAL %s 1 %s %s", UNLOCK_SCRIPT, l->key, token);
    collect(l, f);
}

/* The votes a lock needs: more than half of the nodes. */
static int quorum(const dlock *l)
{
    return l->cfg.nodes / 2 + 1;
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
    return l->cfg.lease_ms * DRIFT_PERCENT / 100 + DRIFT_MIN_MS;
}

/* One attempt: OK when a majority gave us the key in time, BUSY when
 * others hold it, ERR (why in l->tried) when too few nodes answered or
 * the majority came too late. Call with l->mu held. */
static int try_acquire(dlock *l)
{
    char token[TOKEN_LEN];
    struct timespec start;
    fanout f = { { 0 }, { NULL }, "" };
    int undo[MAX_NODES], taken, answered, i;
    long spent;

    owner_token(l, token, sizeof(token));
    clock_gettime(CLOCK_MONOTONIC, &start);
    /* v5's one command, on every node at once: the replies are awaited
     * side by side, so the round costs the slowest node's time, not the
     * sum of all of them. */
    send_all(l, &f, NULL, "SET %s %s NX PX %ld", l->key, token, l->cfg.lease_ms);
    collect(l, &f);
    taken = count(l, &f, REDIS_REPLY_STATUS);
    answered = taken + count(l, &f, REDIS_REPLY_NIL);
    for (i = 0; i < l->cfg.nodes; i++)
        undo[i] = f.reply[i] == NULL || f.reply[i]->type != REDIS_REPLY_NIL;
    clear(&f);
    spent = elapsed_ms(&start);
    /* Each key lives lease ms from when its node set it, at the latest
     * now: what is left of the lease for us is less by the time spent, and
     * by what the nodes' clocks may have gained. */
    if (taken >= quorum(l) && l->cfg.lease_ms - spent - drift_ms(l) > 0)
        return DLOCK_OK;
    /* Not ours: undo it on every node that may have our key, also where no
     * reply came (a SET that arrives late may still land), so that no node
     * keeps a key for nothing until its lease runs out. A node that said
     * nil set nothing for this try; whatever it holds under our token is
     * an earlier hold of this thread, which must stay (no reentrancy: the
     * holder's own second acquire waits, as in v5). */
    eval_unlock(l, token, undo, &f);
    clear(&f);
    if (taken >= quorum(l))
        return failed_try(l, "%d nodes said OK after %ld ms, past the %ld ms lease "
                          "less %ld ms of drift", taken, spent, l->cfg.lease_ms,
                          drift_ms(l));
    if (answered < quorum(l))
        return failed_try(l, "%d of %d nodes answered, a majority is %d: %s",
                          answered, l->cfg.nodes, quorum(l), f.why);
    return DLOCK_BUSY;
}

/* Gives the lock back: dlock_release with l->mu held. OK when a majority
 * deleted our key, NOT_OWNER when it was not ours on a majority, ERR when
 * the nodes that did not answer leave that open. */
static int release(dlock *l)
{
    char token[TOKEN_LEN];
    fanout f = { { 0 }, { NULL }, "" };
    int deleted, kept, unknown;

    owner_token(l, token, sizeof(token));
    /* Every node, also those where the acquire failed or timed out: a SET
     * that arrived late may have set our key there. */
    eval_unlock(l, token, NULL, &f);
    deleted = count_int(l, &f, 1);
    kept = count_int(l, &f, 0);
    unknown = l->cfg.nodes - deleted - kept;
    clear(&f);
    if (deleted >= quorum(l))
        return DLOCK_OK;
    if (deleted + unknown >= quorum(l))
        return set_error(l, "deleted on %d of %d nodes, %d did not answer, a majority "
                         "is %d: %s", deleted, l->cfg.nodes, unknown, quorum(l), f.why);
    return DLOCK_NOT_OWNER;
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

/* The reason of the latest try becomes the call's: acquire gave up. */
static int report_try(dlock *l)
{
    return set_error(l, "%s", l->tried);
}

/* Between tries: about retry_ms, drawn anew each time, so that clients
 * that split the votes between them do not try again in step. */
static long retry_delay(const dlock *l)
{
    unsigned short r = 0;

    if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
        r = (unsigned short)getpid();
    return l->cfg.retry_ms / 2 + (long)(r % (unsigned)(l->cfg.retry_ms + 1));
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
    /* A failed majority is tried again too: nodes come back, and clients
     * that split the votes try again at different moments. */
    while ((rc = guarded(l, try_acquire)) != DLOCK_OK) {
        long left = l->cfg.wait_ms - elapsed_ms(&start), delay = retry_delay(l);

        if (left <= 0)
            break;
        sleep_ms(left < delay ? left : delay);
    }
    if (rc == DLOCK_ERR)
        guarded(l, report_try);
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
    int i;

    if (l == NULL)
        return;
    for (i = 0; i < MAX_NODES; i++)
        redisFree(l->c[i]);
    pthread_mutex_destroy(&l->mu);
    free(l->key);
    free(l);
}

/* A no-op unless the simulator links its own definition. */
__attribute__((weak)) void dlock_failpoint(const char *name)
{
    (void)name;
}
