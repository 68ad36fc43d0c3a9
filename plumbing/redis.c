/* redis.c: the plumbing every Redis stage shares (see redis.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis.h"

/* The shared part of a stage's handle: its first member (redis.h). */
static redis_base *base(dlock *l)
{
    return (redis_base *)(void *)l;
}

int redis_error(dlock *l, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(base(l)->errstr, sizeof(base(l)->errstr), fmt, ap);
    va_end(ap);
    return DLOCK_ERR;
}

/* The default provider: node i at host:port + i, with a timeout on
 * connect and on every command, so a dead server gives an error instead of
 * a hang. */
static redisContext *connect_default(void *arg, int node, char *errstr,
                                     size_t errlen)
{
    const dlock_config *cfg = arg;
    struct timeval tv = { cfg->timeout_ms / 1000, (cfg->timeout_ms % 1000) * 1000 };
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

redisContext *redis_connect(dlock *l, int node, char *why, size_t len)
{
    const struct dlock_provider *p = &base(l)->provider;

    snprintf(why, len, "the connection provider returned NULL");
    return p->connect(p->arg, node, why, len);
}

redisContext *redis_connection(dlock *l, int node, char *why, size_t len)
{
    redis_base *b = base(l);

    if (b->c[node] == NULL)
        b->c[node] = redis_connect(l, node, why, len);
    return b->c[node];
}

void redis_disconnect(dlock *l, int node)
{
    redis_base *b = base(l);

    redisFree(b->c[node]);
    b->c[node] = NULL;
    redis_drop_sub(l);
}

/* A replica refuses writes with READONLY: a failover demoted this server,
 * so the provider is asked for the primary, as after an I/O error. A Redis
 * Cluster node that does not serve the key's slot answers MOVED (or ASK
 * while the slot moves): the provider is asked again too, and a provider
 * for a cluster follows the redirect to the node that serves it. */
int redis_must_reconnect(const redisReply *r)
{
    return r->type == REDIS_REPLY_ERROR &&
           (strncmp(r->str, "READONLY", 8) == 0 || strncmp(r->str, "MOVED ", 6) == 0 ||
            strncmp(r->str, "ASK ", 4) == 0);
}

/* Sends a formatted command to node and reads its reply, error replies
 * included. NULL with errstr set after an I/O error, which drops the
 * connection. */
static redisReply *round_trip(dlock *l, int node, const char *cmd, size_t len)
{
    char why[DLOCK_ERRSTR_LEN];
    redisContext *c = redis_connection(l, node, why, sizeof(why));
    void *r = NULL;

    if (c == NULL) {
        redis_error(l, "%s", why);
        return NULL;
    }
    if (redisAppendFormattedCommand(c, cmd, len) != REDIS_OK ||
        redisGetReply(c, &r) != REDIS_OK) {
        redis_error(l, "I/O error: %s", c->errstr);
        redis_disconnect(l, node);
        return NULL;
    }
    return r;
}

/* An error reply becomes errstr and NULL; any other reply is returned. */
static redisReply *checked(dlock *l, int node, redisReply *r)
{
    if (r == NULL || r->type != REDIS_REPLY_ERROR)
        return r;
    redis_error(l, "server error: %s", r->str);
    if (redis_must_reconnect(r))
        redis_disconnect(l, node);
    freeReplyObject(r);
    return NULL;
}

redisReply *redis_command(dlock *l, const char *fmt, ...)
{
    redisReply *r;
    char *cmd;
    va_list ap;
    int len;

    va_start(ap, fmt);
    len = redisvFormatCommand(&cmd, fmt, ap);
    va_end(ap);
    if (len < 0) {
        redis_error(l, "cannot format \"%s\": out of memory or a bad format", fmt);
        return NULL;
    }
    r = checked(l, 0, round_trip(l, 0, cmd, len));
    redisFreeCommand(cmd);
    return r;
}

/* verb (EVALSHA or EVAL) and body (the SHA or the text) in front of args,
 * a formatted command that holds EVAL's numkeys, keys and args: one
 * command, formatted, in *out. Its length, or -1 when out of memory. */
static int prepend(char **out, const char *verb, const char *body, const char *args)
{
    const char *rest = strstr(args, "\r\n") + 2;
    int n = atoi(args + 1), len;

    len = asprintf(out, "*%d\r\n$%zu\r\n%s\r\n$%zu\r\n%s\r\n%s", n + 2, strlen(verb), verb,
                   strlen(body), body, rest);
    return len < 0 ? -1 : len;
}

/* Sends s as verb (by SHA or whole) with args; the raw reply, as round_trip. */
static redisReply *eval_as(dlock *l, const char *verb, const char *body, const char *args)
{
    redisReply *r;
    char *cmd;
    int len = prepend(&cmd, verb, body, args);

    if (len < 0) {
        redis_error(l, "out of memory");
        return NULL;
    }
    r = round_trip(l, 0, cmd, len);
    free(cmd);
    return r;
}

redisReply *redis_eval(dlock *l, const redis_script *s, const char *fmt, ...)
{
    redisReply *r;
    char *args;
    va_list ap;
    int len;

    va_start(ap, fmt);
    len = redisvFormatCommand(&args, fmt, ap);
    va_end(ap);
    if (len < 0) {
        redis_error(l, "cannot format \"%s\": out of memory or a bad format", fmt);
        return NULL;
    }
    r = eval_as(l, "EVALSHA", s->sha, args);
    /* NOSCRIPT is expected, not a failure of this call: errstr stays. */
    if (r != NULL && r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOSCRIPT", 8) == 0) {
        freeReplyObject(r);
        r = eval_as(l, "EVAL", s->text, args);
    }
    redisFreeCommand(args);
    return checked(l, 0, r);
}

/* ---- several nodes at once --------------------------------------------------- */

/* Node failed this round: its reason is kept when it is the first. */
static void node_failed(redis_fanout *f, int node, const char *fmt, ...)
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

/* Queues a formatted command for node and writes it out, without waiting
 * for its reply: every node has its command before any reply is read. */
static void send_to(dlock *l, redis_fanout *f, int node, const char *cmd, size_t len)
{
    char why[DLOCK_ERRSTR_LEN];
    redisContext *c = redis_connection(l, node, why, sizeof(why));
    int done = 0;

    if (c == NULL) {
        node_failed(f, node, "%s", why);
        return;
    }
    if (redisAppendFormattedCommand(c, cmd, len) != REDIS_OK) {
        node_failed(f, node, "out of memory");
        return;
    }
    while (!done) {
        if (redisBufferWrite(c, &done) != REDIS_OK) {
            node_failed(f, node, "I/O error: %s", c->errstr);
            redis_disconnect(l, node);
            return;
        }
    }
    f->pending[node] = 1;
}

/* A reply from node. An error reply counts as a failed node, but for
 * NOSCRIPT, which redis_fanout_eval answers with the script. */
static void got_reply(dlock *l, redis_fanout *f, int node, redisReply *r)
{
    f->pending[node] = 0;
    f->reply[node] = r;
    if (r->type != REDIS_REPLY_ERROR || strncmp(r->str, "NOSCRIPT", 8) == 0)
        return;
    node_failed(f, node, "server error: %s", r->str);
    if (redis_must_reconnect(r))
        redis_disconnect(l, node);
}

/* Reads what node has sent; a whole reply ends its wait. */
static void read_from(dlock *l, redis_fanout *f, int node)
{
    redisContext *c = base(l)->c[node];
    void *reply = NULL;

    if (redisBufferRead(c) != REDIS_OK || redisGetReplyFromReader(c, &reply) != REDIS_OK) {
        node_failed(f, node, "I/O error: %s", c->errstr);
        redis_disconnect(l, node);
        return;
    }
    if (reply != NULL)
        got_reply(l, f, node, reply);
}

/* The nodes still waited for, as poll()'s list; who[k] is p[k]'s node. */
static int waiting(dlock *l, const redis_fanout *f, struct pollfd *p, int *who)
{
    int i, n = 0;

    for (i = 0; i < base(l)->cfg.nodes; i++) {
        if (!f->pending[i])
            continue;
        p[n] = (struct pollfd){ base(l)->c[i]->fd, POLLIN, 0 };
        who[n++] = i;
    }
    return n;
}

/* Reads the replies of the nodes it was sent to, as each comes in, until
 * all have answered or node_timeout_ms has passed: a stalled node costs
 * its timeout once, not the command timeout, and not once per node. */
static void collect(dlock *l, redis_fanout *f)
{
    struct pollfd p[REDIS_MAX_NODES];
    struct timespec start = redis_deadline_after(0);
    int who[REDIS_MAX_NODES], n, k, ready;
    long left;

    while ((n = waiting(l, f, p, who)) > 0) {
        left = base(l)->cfg.node_timeout_ms - redis_elapsed_ms(&start);
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
            redis_disconnect(l, who[k]);
        }
    }
}

/* A formatted command to every node (only given: to the nodes it marks),
 * the replies awaited side by side: the round costs the slowest node's
 * time, not the sum of all of them. */
static void round_all(dlock *l, redis_fanout *f, const int *only, const char *cmd, int len)
{
    int i;

    for (i = 0; i < base(l)->cfg.nodes; i++) {
        if (only == NULL || only[i])
            send_to(l, f, i, cmd, len);
    }
    collect(l, f);
}

void redis_fanout_command(dlock *l, redis_fanout *f, const int *only, const char *fmt, ...)
{
    char *cmd;
    va_list ap;
    int len;

    va_start(ap, fmt);
    len = redisvFormatCommand(&cmd, fmt, ap);
    va_end(ap);
    if (len < 0) {
        snprintf(f->why, sizeof(f->why), "cannot format \"%s\": out of memory or a bad format", fmt);
        return;
    }
    round_all(l, f, only, cmd, len);
    redisFreeCommand(cmd);
}

/* Sends s as verb (by SHA or whole) with args to the nodes only marks. */
static void eval_all(dlock *l, redis_fanout *f, const int *only, const char *verb,
                     const char *body, const char *args)
{
    char *cmd;
    int len = prepend(&cmd, verb, body, args);

    if (len < 0) {
        snprintf(f->why, sizeof(f->why), "out of memory");
        return;
    }
    round_all(l, f, only, cmd, len);
    free(cmd);
}

void redis_fanout_eval(dlock *l, redis_fanout *f, const int *only, const redis_script *s,
                       const char *fmt, ...)
{
    int noscript[REDIS_MAX_NODES] = { 0 }, i, any = 0;
    char *args;
    va_list ap;

    va_start(ap, fmt);
    i = redisvFormatCommand(&args, fmt, ap);
    va_end(ap);
    if (i < 0) {
        snprintf(f->why, sizeof(f->why), "cannot format \"%s\": out of memory or a bad format", fmt);
        return;
    }
    eval_all(l, f, only, "EVALSHA", s->sha, args);
    for (i = 0; i < base(l)->cfg.nodes; i++) {
        const redisReply *r = f->reply[i];

        if (r == NULL || r->type != REDIS_REPLY_ERROR || strncmp(r->str, "NOSCRIPT", 8) != 0)
            continue;
        freeReplyObject(f->reply[i]);
        f->reply[i] = NULL;
        noscript[i] = any = 1;
    }
    if (any)
        eval_all(l, f, noscript, "EVAL", s->text, args);
    redisFreeCommand(args);
}

int redis_fanout_count(dlock *l, const redis_fanout *f, int type)
{
    int i, n = 0;

    for (i = 0; i < base(l)->cfg.nodes; i++)
        n += f->reply[i] != NULL && f->reply[i]->type == type;
    return n;
}

int redis_fanout_count_int(dlock *l, const redis_fanout *f, long long value)
{
    int i, n = 0;

    for (i = 0; i < base(l)->cfg.nodes; i++)
        n += f->reply[i] != NULL && f->reply[i]->type == REDIS_REPLY_INTEGER &&
             f->reply[i]->integer == value;
    return n;
}

void redis_fanout_clear(redis_fanout *f)
{
    int i;

    for (i = 0; i < REDIS_MAX_NODES; i++) {
        freeReplyObject(f->reply[i]);
        f->reply[i] = NULL;
        f->pending[i] = 0;
    }
}

/* Rejects what no call could work with, once, at dlock_new. The lease is
 * checked even in a stage that sets no TTL, so that a config works in
 * every stage or in none. */
static int check_config(dlock *l, const char *name, const dlock_config *cfg, int max_nodes)
{
    if (name == NULL || name[0] == '\0')
        return redis_error(l, "lock name is empty: give each lock a name");
    if (cfg == NULL)
        return redis_error(l, "config is NULL: call dlock_config_init first");
    if (cfg->lease_ms < DLOCK_MIN_LEASE_MS || cfg->lease_ms > DLOCK_MAX_LEASE_MS)
        return redis_error(l, "lease_ms %ld is out of range: give %ld to %ld ms",
                           cfg->lease_ms, DLOCK_MIN_LEASE_MS, DLOCK_MAX_LEASE_MS);
    if (cfg->wait_ms < 0 || cfg->retry_ms <= 0)
        return redis_error(l, "wait_ms must be >= 0 and retry_ms > 0");
    /* One server. Taking the first of several would look like a quorum
     * to the caller and be a single point of failure. */
    if (max_nodes == 1 && cfg->nodes != 1)
        return redis_error(l, "nodes is %d: this stage talks to one server; give 1, "
                           "or use v8-redlock for a majority of several", cfg->nodes);
    if (cfg->nodes < 1 || cfg->nodes > max_nodes)
        return redis_error(l, "nodes is %d: give 1 to %d independent servers (5 is "
                           "the usual)", cfg->nodes, max_nodes);
    if (max_nodes > 1 && (cfg->node_timeout_ms <= 0 || cfg->node_timeout_ms > INT_MAX))
        return redis_error(l, "node_timeout_ms %ld is out of range: give 1 to %d ms, "
                           "far below the lease", cfg->node_timeout_ms, INT_MAX);
    if (cfg->provider == NULL && (cfg->host == NULL || cfg->timeout_ms <= 0))
        return redis_error(l, "default provider needs a host and timeout_ms > 0");
    return DLOCK_OK;
}

void *redis_new(size_t size, const char *name, const dlock_config *cfg, int max_nodes,
                int (*init)(dlock *l))
{
    dlock *l = calloc(1, size);
    redis_base *b;

    if (l == NULL)
        return NULL;
    b = base(l);
    pthread_mutex_init(&b->mu, NULL);
    if (max_nodes > REDIS_MAX_NODES)
        max_nodes = REDIS_MAX_NODES;
    if (check_config(l, name, cfg, max_nodes) != DLOCK_OK)
        return l;
    b->cfg = *cfg;
    b->provider = cfg->provider != NULL ? *cfg->provider
                                        : (struct dlock_provider){ connect_default, &b->cfg };
    b->cfg.provider = &b->provider;
    if ((b->key = strdup(name)) == NULL) {
        redis_error(l, "out of memory");
    } else if (init != NULL && init(l) != DLOCK_OK) {
        free(b->key); /* refused: every call returns DLOCK_ERR */
        b->key = NULL;
    }
    return l;
}

int redis_ready(const dlock *l)
{
    return ((const redis_base *)(const void *)l)->key != NULL;
}

void redis_free(dlock *l)
{
    redis_base *b;
    int i;

    if (l == NULL)
        return;
    b = base(l);
    for (i = 0; i < REDIS_MAX_NODES; i++)
        redisFree(b->c[i]);
    redis_drop_sub(l);
    pthread_mutex_destroy(&b->mu);
    free(b->key);
    free(l);
}

int redis_guarded(dlock *l, int (*step)(dlock *l))
{
    int rc;

    if (!redis_ready(l))
        return DLOCK_ERR;
    pthread_mutex_lock(&base(l)->mu);
    rc = step(l);
    pthread_mutex_unlock(&base(l)->mu);
    return rc;
}

int redis_poll(dlock *l, int (*try)(dlock *l))
{
    struct timespec start = redis_deadline_after(0);
    long retry = base(l)->cfg.retry_ms;
    int rc;

    while ((rc = redis_guarded(l, try)) == DLOCK_BUSY) {
        long left = base(l)->cfg.wait_ms - redis_elapsed_ms(&start);

        if (left <= 0)
            break;
        redis_sleep_ms(left < retry ? left : retry);
    }
    return rc;
}

long redis_elapsed_ms(const struct timespec *start)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - start->tv_sec) * 1000 +
           (now.tv_nsec - start->tv_nsec) / 1000000;
}

void redis_sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

    nanosleep(&ts, NULL);
}

struct timespec redis_deadline_after(long ms)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_nsec += (ms % 1000) * 1000000;
    t.tv_sec += ms / 1000 + t.tv_nsec / 1000000000;
    t.tv_nsec %= 1000000000;
    return t;
}

char *redis_tagged(const char *prefix, const char *name)
{
    const char *brace = strchr(name, '{') != NULL ? "" : "{";
    char *s = malloc(strlen(prefix) + strlen(name) + 3);

    if (s != NULL)
        sprintf(s, "%s%s%s%s", prefix, brace, name, *brace ? "}" : "");
    return s;
}

/* ---- lock.h's calls that are the same in every Redis stage ------------------ */

void dlock_config_init(dlock_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->lease_ms = 10000;     /* long enough for most critical sections */
    cfg->retry_ms = 10;        /* between tries: short waits, few commands */
    cfg->nodes = 1;
    cfg->node_timeout_ms = 50; /* several nodes: a local reply takes well
                                * under a millisecond */
    cfg->host = "127.0.0.1";
    cfg->port = 6379;
    cfg->timeout_ms = 1000;
}

const char *dlock_errstr(const dlock *l)
{
    return ((const redis_base *)(const void *)l)->errstr;
}

/* Weak: a stage that draws fencing tokens (v7) defines its own; the
 * others keep this one. */
__attribute__((weak)) long long dlock_token(dlock *l)
{
    (void)l;
    return 0;
}

/* A no-op unless the simulator links its own definition. */
__attribute__((weak)) void dlock_failpoint(const char *name)
{
    (void)name;
}
