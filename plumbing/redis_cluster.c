/* redis_cluster.c: a Redis Cluster seen from a client (see redis_cluster.h). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis_cluster.h"

#define NO_MASTER 255     /* a slot no master serves (yet) */
#define MAX_REDIRECTS 5   /* MOVED after MOVED: the map is changing, give up */

unsigned redis_cluster_crc16(const char *buf, size_t len)
{
    unsigned crc = 0;
    size_t i;
    int bit;

    for (i = 0; i < len; i++) {
        crc ^= (unsigned)(unsigned char)buf[i] << 8;
        for (bit = 0; bit < 8; bit++)
            crc = (crc & 0x8000) ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
    return crc;
}

/* Only the first '{' counts, and "{}" is no tag: then the whole key. */
int redis_cluster_keyslot(const char *key)
{
    size_t len = strlen(key);
    const char *open = strchr(key, '{');
    const char *close = open != NULL ? strchr(open + 1, '}') : NULL;

    if (close != NULL && close > open + 1)
        return (int)(redis_cluster_crc16(open + 1, (size_t)(close - open - 1)) %
                     REDIS_CLUSTER_SLOTS);
    return (int)(redis_cluster_crc16(key, len) % REDIS_CLUSTER_SLOTS);
}

void redis_cluster_init(redis_cluster *c, const char *host, const int *port, int n,
                        const char *password, long timeout_ms)
{
    int i;

    memset(c, 0, sizeof(*c));
    for (i = 0; i < n && i < REDIS_CLUSTER_MAX_NODES; i++) {
        snprintf(c->seed[i].host, sizeof(c->seed[i].host), "%s", host);
        c->seed[i].port = port[i];
    }
    c->seeds = i;
    c->password = password;
    c->timeout_ms = timeout_ms;
    memset(c->slot, NO_MASTER, sizeof(c->slot));
    pthread_mutex_init(&c->mu, NULL);
}

void redis_cluster_destroy(redis_cluster *c)
{
    pthread_mutex_destroy(&c->mu);
}

redisContext *redis_cluster_connect_addr(redis_cluster *c, const redis_cluster_addr *a,
                                         char *errstr, size_t len)
{
    struct timeval tv = { c->timeout_ms / 1000, (c->timeout_ms % 1000) * 1000 };
    redisContext *ctx = redisConnectWithTimeout(a->host, a->port, tv);
    redisReply *r;
    int ok;

    if (ctx == NULL || ctx->err) {
        snprintf(errstr, len, "connect to %s:%d: %s", a->host, a->port,
                 ctx != NULL ? ctx->errstr : "out of memory");
        redisFree(ctx);
        return NULL;
    }
    redisSetTimeout(ctx, tv);
    if (c->password == NULL)
        return ctx;
    r = redisCommand(ctx, "AUTH %s", c->password);
    ok = r != NULL && r->type == REDIS_REPLY_STATUS;
    if (!ok)
        snprintf(errstr, len, "AUTH on %s:%d failed: %s", a->host, a->port,
                 r != NULL ? r->str : ctx->errstr);
    freeReplyObject(r);
    if (!ok) {
        redisFree(ctx);
        return NULL;
    }
    return ctx;
}

/* The index of a in the masters, added when new; -1 when full. */
static int master_index(redis_cluster *c, const char *host, int port)
{
    int i;

    for (i = 0; i < c->masters; i++)
        if (c->master[i].port == port && strcmp(c->master[i].host, host) == 0)
            return i;
    if (c->masters == REDIS_CLUSTER_MAX_NODES)
        return -1;
    snprintf(c->master[i].host, sizeof(c->master[i].host), "%s", host);
    c->master[i].port = port;
    return c->masters++;
}

/* One range of CLUSTER SLOTS: start, end, then the master [host, port, id]. */
static int read_range(redis_cluster *c, const redisReply *range)
{
    const redisReply *m;
    long long s;
    int idx;

    if (range->type != REDIS_REPLY_ARRAY || range->elements < 3)
        return -1;
    m = range->element[2];
    if (m->type != REDIS_REPLY_ARRAY || m->elements < 2 || m->element[0]->type != REDIS_REPLY_STRING)
        return -1;
    idx = master_index(c, m->element[0]->str, (int)m->element[1]->integer);
    if (idx < 0)
        return -1;
    for (s = range->element[0]->integer; s <= range->element[1]->integer && s < REDIS_CLUSTER_SLOTS; s++)
        c->slot[s] = (unsigned char)idx;
    return 0;
}

/* Replaces the map with what r says; mu held. */
static int read_map(redis_cluster *c, const redisReply *r)
{
    size_t i;

    if (r->type != REDIS_REPLY_ARRAY || r->elements == 0)
        return -1;
    c->masters = 0;
    memset(c->slot, NO_MASTER, sizeof(c->slot));
    for (i = 0; i < r->elements; i++)
        if (read_range(c, r->element[i]) != 0)
            return -1;
    c->have_map = 1;
    c->refreshes++;
    return 0;
}

/* Asks node a for the map; mu held. */
static int map_from(redis_cluster *c, const redis_cluster_addr *a, char *errstr, size_t len)
{
    redisContext *ctx = redis_cluster_connect_addr(c, a, errstr, len);
    redisReply *r;
    int rc = -1;

    if (ctx == NULL)
        return -1;
    r = redisCommand(ctx, "CLUSTER SLOTS");
    if (r == NULL)
        snprintf(errstr, len, "CLUSTER SLOTS on %s:%d: %s", a->host, a->port, ctx->errstr);
    else if ((rc = read_map(c, r)) != 0)
        snprintf(errstr, len, "CLUSTER SLOTS on %s:%d: %s", a->host, a->port,
                 r->type == REDIS_REPLY_ERROR ? r->str : "no slot served yet");
    freeReplyObject(r);
    redisFree(ctx);
    return rc;
}

int redis_cluster_refresh(redis_cluster *c, char *errstr, size_t len)
{
    redis_cluster_addr known[2 * REDIS_CLUSTER_MAX_NODES];
    int n = 0, i, rc = -1;

    pthread_mutex_lock(&c->mu);
    /* The masters of the last map first: a seed may be the one that died. */
    for (i = 0; i < c->masters; i++)
        known[n++] = c->master[i];
    for (i = 0; i < c->seeds; i++)
        known[n++] = c->seed[i];
    snprintf(errstr, len, "no node to ask for the slot map: seed the cluster");
    for (i = 0; i < n && rc != 0; i++)
        rc = map_from(c, &known[i], errstr, len);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int redis_cluster_master_of(redis_cluster *c, int slot, redis_cluster_addr *out,
                            char *errstr, size_t len)
{
    int idx;

    if (!c->have_map && redis_cluster_refresh(c, errstr, len) != 0)
        return -1;
    pthread_mutex_lock(&c->mu);
    idx = c->slot[slot];
    if (idx != NO_MASTER)
        *out = c->master[idx];
    pthread_mutex_unlock(&c->mu);
    if (idx == NO_MASTER) {
        snprintf(errstr, len, "slot %d has no master in the map: the cluster is not ok", slot);
        return -1;
    }
    return 0;
}

/* The provider's connect: the plumbing asks again only after an error, a
 * MOVED or an ASK, each a sign that the map may be old: read it anew. */
static redisContext *route_connect(void *arg, int node, char *errstr, size_t len)
{
    redis_cluster_route *route = arg;
    redis_cluster_addr a;

    (void)node;
    if (route->connects++ > 0 && redis_cluster_refresh(route->cluster, errstr, len) != 0)
        return NULL;
    if (redis_cluster_master_of(route->cluster, route->slot, &a, errstr, len) != 0)
        return NULL;
    return redis_cluster_connect_addr(route->cluster, &a, errstr, len);
}

struct dlock_provider redis_cluster_provider(redis_cluster_route *route)
{
    struct dlock_provider p = { route_connect, route };

    return p;
}

/* "MOVED 3999 127.0.0.1:6381" or "ASK ...": the address named. */
static int redirect_addr(const char *err, redis_cluster_addr *a)
{
    const char *sp = strrchr(err, ' ');
    const char *colon = sp != NULL ? strrchr(sp, ':') : NULL;

    if (colon == NULL || (size_t)(colon - sp - 1) >= sizeof(a->host))
        return -1;
    memcpy(a->host, sp + 1, (size_t)(colon - sp - 1));
    a->host[colon - sp - 1] = '\0';
    a->port = atoi(colon + 1);
    return 0;
}

/* ASKING, then the command, on a connection of their own to a. */
static redisReply *asking(redis_cluster *c, const redis_cluster_addr *a, const char *cmd,
                          int n, char *errstr, size_t len)
{
    redisContext *ctx = redis_cluster_connect_addr(c, a, errstr, len);
    void *r = NULL, *ok = NULL;

    if (ctx == NULL)
        return NULL;
    if (redisAppendCommand(ctx, "ASKING") != REDIS_OK ||
        redisAppendFormattedCommand(ctx, cmd, (size_t)n) != REDIS_OK ||
        redisGetReply(ctx, &ok) != REDIS_OK || redisGetReply(ctx, &r) != REDIS_OK)
        snprintf(errstr, len, "ASKING on %s:%d: %s", a->host, a->port, ctx->errstr);
    freeReplyObject(ok);
    redisFree(ctx);
    return r;
}

/* One try on *conn, connected first to the slot's master when it is NULL. */
static redisReply *send_once(redis_cluster_route *route, redisContext **conn, const char *cmd,
                             int n, char *errstr, size_t len)
{
    redis_cluster_addr a;
    void *r = NULL;

    if (*conn == NULL) {
        if (redis_cluster_master_of(route->cluster, route->slot, &a, errstr, len) != 0)
            return NULL;
        if ((*conn = redis_cluster_connect_addr(route->cluster, &a, errstr, len)) == NULL)
            return NULL;
    }
    if (redisAppendFormattedCommand(*conn, cmd, (size_t)n) != REDIS_OK ||
        redisGetReply(*conn, &r) != REDIS_OK) {
        snprintf(errstr, len, "I/O error: %s", (*conn)->errstr);
        redisFree(*conn);
        *conn = NULL;
        return NULL;
    }
    return r;
}

static redisReply *route_command(redis_cluster_route *route, redisContext **conn,
                                 const char *cmd, int n, char *errstr, size_t len)
{
    redis_cluster_addr a;
    redisReply *r = NULL;
    int tries;

    for (tries = 0; tries < MAX_REDIRECTS; tries++) {
        if ((r = send_once(route, conn, cmd, n, errstr, len)) == NULL)
            return NULL;
        if (r->type != REDIS_REPLY_ERROR)
            return r;
        if (strncmp(r->str, "ASK ", 4) == 0 && redirect_addr(r->str, &a) == 0) {
            freeReplyObject(r);
            return asking(route->cluster, &a, cmd, n, errstr, len);
        }
        if (strncmp(r->str, "MOVED ", 6) != 0)
            return r;
        /* The slot has a new master: the map is old, and so is *conn. */
        freeReplyObject(r);
        r = NULL;
        redisFree(*conn);
        *conn = NULL;
        if (redis_cluster_refresh(route->cluster, errstr, len) != 0)
            return NULL;
    }
    snprintf(errstr, len, "slot %d moved %d times in a row: the map keeps changing",
             route->slot, MAX_REDIRECTS);
    return NULL;
}

redisReply *redis_cluster_command(redis_cluster_route *route, redisContext **conn,
                                  char *errstr, size_t len, const char *fmt, ...)
{
    redisReply *r;
    char *cmd;
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = redisvFormatCommand(&cmd, fmt, ap);
    va_end(ap);
    if (n < 0) {
        snprintf(errstr, len, "cannot format the command: out of memory");
        return NULL;
    }
    r = route_command(route, conn, cmd, n, errstr, len);
    redisFreeCommand(cmd);
    return r;
}
