/* v10-zookeeper-ephemeral: one ephemeral node per lock, on a ZooKeeper
 * ensemble.
 *
 * acquire: create the ephemeral node /lockstep/<name> (its data: this
 *          client's random id and the thread's id). If it exists, set a
 *          watch on it and wait until it is deleted, then try again. Every
 *          waiter watches the same node, so every release wakes them all,
 *          and all but one find it taken again: a herd. A create whose
 *          reply was lost is ours when the node's session is ours.
 * release: delete the node by its path, whatever its version.
 * lease:   the session's timeout. An ephemeral node lives as long as the
 *          session that made it: a client that dies, or stops for longer
 *          than its lease, loses its session, and the ensemble deletes
 *          the node. A live client's library pings every third of the
 *          timeout, so a slow holder keeps its lock with no thread of ours.
 *
 * ZooKeeper is a consensus system: it acknowledges a write once a
 * majority of the ensemble has it, so neither a dead leader nor a server
 * that comes back empty takes the lock with it. The config's host, port
 * and nodes name the ensemble (node i at port + i); the connection
 * provider, which returns a hiredis context, is not used here.
 *
 * What stays: the release deletes by path, so a client that never took
 * the lock deletes the holder's node; so does a holder whose session
 * expired while it was paused, when its handle opens a new session for
 * the release. And no fencing token: a paused holder wakes up believing
 * it holds the lock, and writes. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include "lock.h"

#define DEFAULT_LEASE_MS 10000 /* long enough for most critical sections */
#define DEFAULT_RETRY_MS 10    /* kept for configs that work in every stage */
#define DEFAULT_TIMEOUT_MS 1000
#define DEFAULT_NODE_TIMEOUT_MS 50 /* unused here: the ensemble answers as one */
#define DEFAULT_PORT 2181      /* ZooKeeper's client port */
#define ID_BYTES 16    /* 128 random bits: no other client will draw them */
#define TOKEN_LEN 64   /* 32 hex digits, ':', a thread id, and room to spare */
#define ROOT "/lockstep"       /* the parent of every lock's node */
#define MAX_NODES 15           /* servers in an ensemble, more than anyone runs */
#define AGAIN 100              /* try_acquire: the node went away; try at once */
#define CREATE_AGAIN 1         /* lost_create: the node is not there */

struct dlock {
    char *path;                     /* the lock's node: ROOT/<name> */
    char *hosts;                    /* "host:port,host:port+1,...": the ensemble */
    dlock_config cfg;               /* a copy: the caller's may go away */
    char id[2 * ID_BYTES + 1];      /* this client's random id, in hex */
    char errstr[DLOCK_ERRSTR_LEN];  /* why the last call failed, "" if none */
    pthread_mutex_t mu;             /* one thread at a time on zh and errstr:
                                     * threads may share a handle */
    zhandle_t *zh;                  /* the session; NULL until needed, and after
                                     * it expired */
    int held;                       /* a thread of this handle holds the node: a
                                     * lost create's node is then not ours to take */
    pthread_mutex_t wmu;            /* guards events: the only lock a watcher
                                     * takes, never held across a call */
    pthread_cond_t changed;         /* broadcast on every watcher call */
    unsigned long events;           /* watcher calls so far */
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

static long elapsed_ms(const struct timespec *start)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - start->tv_sec) * 1000 +
           (now.tv_nsec - start->tv_nsec) / 1000000;
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

/* ---- the session ------------------------------------------------------------ */

/* The library logs through this: stage code never prints. */
static void quiet(const char *message)
{
    (void)message;
}

/* Every notification: the session's state, and the watches we set. It
 * runs on the library's thread, so it only counts and wakes: whoever
 * waits calls the ensemble again itself. */
static void watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
    dlock *l = ctx;

    (void)zh;
    (void)type;
    (void)state;
    (void)path;
    pthread_mutex_lock(&l->wmu);
    l->events++;
    pthread_cond_broadcast(&l->changed);
    pthread_mutex_unlock(&l->wmu);
}

static unsigned long events_now(dlock *l)
{
    unsigned long n;

    pthread_mutex_lock(&l->wmu);
    n = l->events;
    pthread_mutex_unlock(&l->wmu);
    return n;
}

/* Sleeps until a notification after the seen-th, or ms. */
static void wait_change(dlock *l, unsigned long seen, long ms)
{
    struct timespec until = deadline_after(ms);

    pthread_mutex_lock(&l->wmu);
    while (l->events == seen &&
           pthread_cond_timedwait(&l->changed, &l->wmu, &until) != ETIMEDOUT)
        ;
    pthread_mutex_unlock(&l->wmu);
}

/* Closes the session: its ephemeral nodes go with it. */
static void drop_session(dlock *l)
{
    if (l->zh != NULL)
        zookeeper_close(l->zh);
    l->zh = NULL;
    l->held = 0;
}

/* A new session, connected, with the lease as its timeout. The server
 * may grant another timeout than the one asked for (its tickTime's
 * bounds): a lock whose lease is not what the caller set refuses to work. */
static int open_session(dlock *l)
{
    unsigned long seen = events_now(l);
    struct timespec start;
    long left;
    int state;

    clock_gettime(CLOCK_MONOTONIC, &start);
    l->zh = zookeeper_init2(l->hosts, watcher, (int)l->cfg.lease_ms, NULL, l, 0, quiet);
    if (l->zh == NULL)
        return set_error(l, "cannot open a ZooKeeper session to %s: %s", l->hosts,
                         strerror(errno));
    while ((state = zoo_state(l->zh)) != ZOO_CONNECTED_STATE) {
        left = l->cfg.timeout_ms - elapsed_ms(&start);
        if (left <= 0 || state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE) {
            drop_session(l);
            return set_error(l, "no ZooKeeper server of %s answered within %ld ms",
                             l->hosts, l->cfg.timeout_ms);
        }
        wait_change(l, seen, left);
        seen = events_now(l);
    }
    if (zoo_recv_timeout(l->zh) != l->cfg.lease_ms) {
        set_error(l, "the ensemble granted a session of %d ms, not the lease of %ld ms: "
                  "its min/maxSessionTimeout must allow the lease", zoo_recv_timeout(l->zh),
                  l->cfg.lease_ms);
        drop_session(l);
        return DLOCK_ERR;
    }
    return DLOCK_OK;
}

/* Waits up to timeout_ms while the library reconnects a session it lost
 * its server for: it comes back, or the server says it expired. */
static int await_server(dlock *l)
{
    struct timespec start;
    unsigned long seen;
    long left;
    int state;

    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        seen = events_now(l);
        state = zoo_state(l->zh);
        left = l->cfg.timeout_ms - elapsed_ms(&start);
        if (state == ZOO_CONNECTED_STATE || state == ZOO_EXPIRED_SESSION_STATE || left <= 0)
            return state;
        wait_change(l, seen, left);
    }
}

/* A session to call on: the one we have, unless it expired. */
static int ensure_session(dlock *l)
{
    if (l->zh != NULL && await_server(l) == ZOO_EXPIRED_SESSION_STATE)
        drop_session(l);
    if (l->zh != NULL)
        return DLOCK_OK;
    return open_session(l);
}

/* What a failed call says, in one line. An expired session is dropped:
 * its nodes are gone, and the next call opens a new one. */
static int zk_fail(dlock *l, const char *what, int rc)
{
    if (rc == ZSESSIONEXPIRED || rc == ZINVALIDSTATE) {
        drop_session(l);
        return set_error(l, "%s: the session expired and its node went with it", what);
    }
    if (rc == ZCONNECTIONLOSS)
        return set_error(l, "%s: the connection to the ensemble was lost; the outcome "
                         "is unknown", what);
    return set_error(l, "%s: %s", what, zerror(rc));
}

/* ---- the lock ------------------------------------------------------------------ */

/* Rejects what no call could work with, once, at dlock_new. The lease is
 * checked even where the server bounds it too, so that a config works in
 * every stage or in none. */
static int check_config(dlock *l, const char *name, const dlock_config *cfg)
{
    if (name == NULL || name[0] == '\0')
        return set_error(l, "lock name is empty: give each lock a name");
    if (strchr(name, '/') != NULL || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return set_error(l, "lock name \"%s\" is no ZooKeeper node name: give one "
                         "without '/', other than . and ..", name);
    if (cfg == NULL)
        return set_error(l, "config is NULL: call dlock_config_init first");
    if (cfg->lease_ms < DLOCK_MIN_LEASE_MS || cfg->lease_ms > DLOCK_MAX_LEASE_MS)
        return set_error(l, "lease_ms %ld is out of range: give %ld to %ld ms",
                         cfg->lease_ms, DLOCK_MIN_LEASE_MS, DLOCK_MAX_LEASE_MS);
    if (cfg->wait_ms < 0 || cfg->retry_ms <= 0)
        return set_error(l, "wait_ms must be >= 0 and retry_ms > 0");
    if (cfg->nodes < 1 || cfg->nodes > MAX_NODES)
        return set_error(l, "nodes is %d: give the ensemble's size, 1 to %d servers "
                         "at port, port + 1, ...", cfg->nodes, MAX_NODES);
    if (cfg->host == NULL || cfg->timeout_ms <= 0 || cfg->port < 1 ||
        cfg->port + cfg->nodes - 1 > 65535)
        return set_error(l, "the ensemble needs a host, ports within 1..65535 and "
                         "timeout_ms > 0");
    if (cfg->password != NULL)
        return set_error(l, "password is set: this stage does not authenticate to "
                         "ZooKeeper; give NULL");
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

/* The value we store in the node: who holds it, down to the thread. */
static void owner_token(const dlock *l, char *token, size_t len)
{
    snprintf(token, len, "%s:%ld", l->id, (long)gettid());
}

/* The node's path and the ensemble's address, from the config. */
static int name_paths(dlock *l, const char *name)
{
    size_t len = (size_t)l->cfg.nodes * (strlen(l->cfg.host) + 8) + 1, used = 0;
    int i;

    l->path = malloc(strlen(ROOT) + strlen(name) + 2);
    l->hosts = malloc(len);
    if (l->path == NULL || l->hosts == NULL)
        return set_error(l, "out of memory");
    sprintf(l->path, "%s/%s", ROOT, name);
    for (i = 0; i < l->cfg.nodes; i++)
        used += (size_t)snprintf(l->hosts + used, len - used, "%s%s:%d", i ? "," : "",
                                 l->cfg.host, l->cfg.port + i);
    return DLOCK_OK;
}

/* Creates the lock's ephemeral node, and ROOT first when it is missing. */
static int create_node(dlock *l, const char *owner)
{
    int rc = zoo_create(l->zh, l->path, owner, (int)strlen(owner), &ZOO_OPEN_ACL_UNSAFE,
                        ZOO_EPHEMERAL, NULL, 0);

    if (rc != ZNONODE)
        return rc;
    rc = zoo_create(l->zh, ROOT, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, NULL, 0);
    if (rc != ZOK && rc != ZNODEEXISTS)
        return rc;
    return zoo_create(l->zh, l->path, owner, (int)strlen(owner), &ZOO_OPEN_ACL_UNSAFE,
                      ZOO_EPHEMERAL, NULL, 0);
}

/* A call whose reply was lost: it may have been done, or not. */
static int unknown(int rc)
{
    return rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT;
}

/* After a create whose reply was lost, once the server is back: ZOK when
 * the node is there and our session owns it (the create went through),
 * ZNODEEXISTS when it is another's, CREATE_AGAIN when it is not there;
 * else rc. Without this look, a lost reply would leave us waiting for our
 * own node for as long as our session lives. */
static int lost_create(dlock *l, int rc)
{
    struct Stat st;
    int found;

    if (!unknown(rc) || await_server(l) != ZOO_CONNECTED_STATE)
        return rc;
    found = zoo_exists(l->zh, l->path, 0, &st);
    if (found == ZNONODE)
        return CREATE_AGAIN;
    if (found != ZOK)
        return rc;
    return st.ephemeralOwner == zoo_client_id(l->zh)->client_id && !l->held ? ZOK
                                                                              : ZNODEEXISTS;
}

/* One attempt, with l->mu held: OK when we created the node, BUSY when
 * it exists (with a watch on it when watch is set; *seen is the count of
 * notifications before it was set), AGAIN when it went away meanwhile. */
static int try_acquire(dlock *l, int watch, unsigned long *seen)
{
    char token[TOKEN_LEN];
    struct Stat st;
    int rc;

    if (ensure_session(l) != DLOCK_OK)
        return DLOCK_ERR;
    owner_token(l, token, sizeof(token));
    rc = lost_create(l, create_node(l, token));
    if (rc == CREATE_AGAIN)
        return AGAIN;
    if (rc == ZOK) {
        l->held = 1;
        return DLOCK_OK;
    }
    if (rc != ZNODEEXISTS)
        return zk_fail(l, "create", rc);
    if (!watch)
        return DLOCK_BUSY;
    *seen = events_now(l);
    rc = zoo_wexists(l->zh, l->path, watcher, l, &st);
    if (rc == ZNONODE)
        return AGAIN;
    return rc == ZOK ? DLOCK_BUSY : zk_fail(l, "exists", rc);
}

/* Gives the lock back: dlock_release with l->mu held. By path: whoever's
 * node it is. */
static int release(dlock *l)
{
    int rc;

    if (ensure_session(l) != DLOCK_OK)
        return DLOCK_ERR;
    rc = zoo_delete(l->zh, l->path, -1);
    if (rc == ZOK || rc == ZNONODE)
        l->held = 0;
    if (rc == ZOK)
        return DLOCK_OK;
    return rc == ZNONODE ? DLOCK_NOT_OWNER : zk_fail(l, "delete", rc);
}

void dlock_config_init(dlock_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->lease_ms = DEFAULT_LEASE_MS;
    cfg->retry_ms = DEFAULT_RETRY_MS;
    cfg->nodes = 1;
    cfg->node_timeout_ms = DEFAULT_NODE_TIMEOUT_MS;
    cfg->host = "127.0.0.1";
    cfg->port = DEFAULT_PORT;
    cfg->timeout_ms = DEFAULT_TIMEOUT_MS;
}

dlock *dlock_new(const char *name, const dlock_config *cfg)
{
    dlock *l = calloc(1, sizeof(*l));
    pthread_condattr_t attr;

    if (l == NULL)
        return NULL;
    pthread_mutex_init(&l->mu, NULL);
    pthread_mutex_init(&l->wmu, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&l->changed, &attr);
    pthread_condattr_destroy(&attr);
    if (check_config(l, name, cfg) != DLOCK_OK)
        return l;
    l->cfg = *cfg;
    if (random_id(l) != DLOCK_OK || name_paths(l, name) != DLOCK_OK) {
        free(l->path);
        l->path = NULL;
    }
    return l;
}

int dlock_acquire(dlock *l)
{
    struct timespec start;
    unsigned long seen = 0;
    long left;
    int rc;

    if (l->path == NULL)
        return DLOCK_ERR;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        left = l->cfg.wait_ms - elapsed_ms(&start);
        pthread_mutex_lock(&l->mu);
        rc = try_acquire(l, left > 0, &seen);
        pthread_mutex_unlock(&l->mu);
        if (rc == AGAIN)
            continue;
        if (rc != DLOCK_BUSY || (left = l->cfg.wait_ms - elapsed_ms(&start)) <= 0)
            return rc;
        /* No polling: the watch wakes us when the node is deleted. */
        wait_change(l, seen, left);
    }
}

int dlock_release(dlock *l)
{
    int rc;

    if (l->path == NULL)
        return DLOCK_ERR;
    pthread_mutex_lock(&l->mu);
    rc = release(l);
    pthread_mutex_unlock(&l->mu);
    return rc;
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
    drop_session(l);
    pthread_cond_destroy(&l->changed);
    pthread_mutex_destroy(&l->wmu);
    pthread_mutex_destroy(&l->mu);
    free(l->path);
    free(l->hosts);
    free(l);
}

/* A no-op unless the simulator links its own definition. */
__attribute__((weak)) void dlock_failpoint(const char *name)
{
    (void)name;
}
