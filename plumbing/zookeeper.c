/* zookeeper.c: what every ZooKeeper stage shares. See zookeeper.h.
 *
 * It also defines two calls of lock.h that no ZooKeeper stage teaches:
 * dlock_config_init (the ensemble's defaults) and the weak no-op
 * dlock_failpoint. */
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

#include "zookeeper.h"

#define DEFAULT_LEASE_MS 10000 /* long enough for most critical sections */
#define DEFAULT_RETRY_MS 10    /* kept for configs that work in every stage */
#define DEFAULT_TIMEOUT_MS 1000
#define DEFAULT_NODE_TIMEOUT_MS 50 /* unused here: the ensemble answers as one */
#define DEFAULT_PORT 2181      /* ZooKeeper's client port */
#define MAX_NODES 15           /* servers in an ensemble, more than anyone runs */

int dlock_zk_error(dlock_zk *z, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(z->errstr, sizeof(z->errstr), fmt, ap);
    va_end(ap);
    return DLOCK_ERR;
}

long dlock_zk_now_ms(void)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
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
void dlock_zk_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
    dlock_zk *z = ctx;

    (void)zh;
    (void)type;
    (void)state;
    (void)path;
    pthread_mutex_lock(&z->wmu);
    z->events++;
    pthread_cond_broadcast(&z->changed);
    pthread_mutex_unlock(&z->wmu);
}

unsigned long dlock_zk_events(dlock_zk *z)
{
    unsigned long n;

    pthread_mutex_lock(&z->wmu);
    n = z->events;
    pthread_mutex_unlock(&z->wmu);
    return n;
}

/* Sleeps until a notification after the seen-th, or ms. */
static void wait_change(dlock_zk *z, unsigned long seen, long ms)
{
    struct timespec until = deadline_after(ms);

    pthread_mutex_lock(&z->wmu);
    while (z->events == seen &&
           pthread_cond_timedwait(&z->changed, &z->wmu, &until) != ETIMEDOUT)
        ;
    pthread_mutex_unlock(&z->wmu);
}

/* Closes the session: its ephemeral nodes go with it. */
static void drop_session(dlock_zk *z)
{
    if (z->zh != NULL)
        zookeeper_close(z->zh);
    z->zh = NULL;
}

/* With a password, the connected session authenticates as DLOCK_ZK_USER
 * before any request of ours: the library sends the credential ahead of
 * them, and again on every reconnect. An ensemble that enforces authentication
 * serves no request of a session without it, and the lock's nodes admit
 * only their creator's id. */
static int add_auth(dlock_zk *z)
{
    char cred[DLOCK_ERRSTR_LEN];
    int n, rc;

    if (z->cfg.password == NULL)
        return DLOCK_OK;
    n = snprintf(cred, sizeof(cred), "%s:%s", DLOCK_ZK_USER, z->cfg.password);
    rc = zoo_add_auth(z->zh, "digest", cred, n, NULL, NULL);
    return rc == ZOK ? DLOCK_OK : dlock_zk_error(z, "cannot add the digest credential: %s",
                                                 zerror(rc));
}

/* A new session, connected, with the lease as its timeout. The server
 * may grant another timeout than the one asked for (its tickTime's
 * bounds): a lock whose lease is not what the caller set refuses to work. */
static int open_session(dlock_zk *z)
{
    unsigned long seen = dlock_zk_events(z);
    long start = dlock_zk_now_ms(), left;
    int state;

    z->zh = zookeeper_init2(z->hosts, dlock_zk_watcher, (int)z->cfg.lease_ms, NULL, z, 0,
                            quiet);
    if (z->zh == NULL)
        return dlock_zk_error(z, "cannot open a ZooKeeper session to %s: %s", z->hosts,
                              strerror(errno));
    while ((state = zoo_state(z->zh)) != ZOO_CONNECTED_STATE) {
        left = z->cfg.timeout_ms - (dlock_zk_now_ms() - start);
        if (left <= 0 || state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE) {
            drop_session(z);
            return dlock_zk_error(z, "no ZooKeeper server of %s answered within %ld ms",
                                  z->hosts, z->cfg.timeout_ms);
        }
        wait_change(z, seen, left);
        seen = dlock_zk_events(z);
    }
    if (add_auth(z) != DLOCK_OK) {
        drop_session(z);
        return DLOCK_ERR;
    }
    if (zoo_recv_timeout(z->zh) != z->cfg.lease_ms) {
        dlock_zk_error(z, "the ensemble granted a session of %d ms, not the lease of %ld ms: "
                       "its min/maxSessionTimeout must allow the lease",
                       zoo_recv_timeout(z->zh), z->cfg.lease_ms);
        drop_session(z);
        return DLOCK_ERR;
    }
    return DLOCK_OK;
}

int dlock_zk_await(dlock_zk *z)
{
    long start = dlock_zk_now_ms(), left;
    unsigned long seen;
    int state;

    for (;;) {
        seen = dlock_zk_events(z);
        state = zoo_state(z->zh);
        left = z->cfg.timeout_ms - (dlock_zk_now_ms() - start);
        if (state == ZOO_CONNECTED_STATE || state == ZOO_EXPIRED_SESSION_STATE || left <= 0)
            return state;
        wait_change(z, seen, left);
    }
}

int dlock_zk_session(dlock_zk *z)
{
    if (z->path == NULL)
        return DLOCK_ERR;
    if (z->zh != NULL && dlock_zk_await(z) == ZOO_EXPIRED_SESSION_STATE)
        drop_session(z);
    if (z->zh != NULL)
        return DLOCK_OK;
    return open_session(z);
}

int dlock_zk_fail(dlock_zk *z, const char *what, int rc)
{
    if (rc == ZSESSIONEXPIRED || rc == ZINVALIDSTATE) {
        drop_session(z);
        return dlock_zk_error(z, "%s: the session expired and its node went with it", what);
    }
    if (rc == ZCONNECTIONLOSS)
        return dlock_zk_error(z, "%s: the connection to the ensemble was lost; the outcome "
                              "is unknown", what);
    return dlock_zk_error(z, "%s: %s", what, zerror(rc));
}

int dlock_zk_unknown(int rc)
{
    return rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT;
}

const struct ACL_vector *dlock_zk_acl(const dlock_zk *z)
{
    return z->cfg.password != NULL ? &ZOO_CREATOR_ALL_ACL : &ZOO_OPEN_ACL_UNSAFE;
}

int dlock_zk_make_root(dlock_zk *z)
{
    int rc = zoo_create(z->zh, DLOCK_ZK_ROOT, NULL, -1, dlock_zk_acl(z), ZOO_PERSISTENT,
                        NULL, 0);

    return rc == ZNODEEXISTS ? ZOK : rc;
}

/* ---- the handle ------------------------------------------------------------------ */

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

/* Rejects what no call could work with, once, at dlock_new. The lease is
 * checked even where the server bounds it too, so that a config works in
 * every stage or in none. */
static int check_config(dlock_zk *z, const char *name, const dlock_config *cfg)
{
    if (name == NULL || name[0] == '\0')
        return dlock_zk_error(z, "lock name is empty: give each lock a name");
    if (strchr(name, '/') != NULL || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return dlock_zk_error(z, "lock name \"%s\" is no ZooKeeper node name: give one "
                              "without '/', other than . and ..", name);
    if (cfg == NULL)
        return dlock_zk_error(z, "config is NULL: call dlock_config_init first");
    if (cfg->lease_ms < DLOCK_MIN_LEASE_MS || cfg->lease_ms > DLOCK_MAX_LEASE_MS)
        return dlock_zk_error(z, "lease_ms %ld is out of range: give %ld to %ld ms",
                              cfg->lease_ms, DLOCK_MIN_LEASE_MS, DLOCK_MAX_LEASE_MS);
    if (cfg->wait_ms < 0 || cfg->retry_ms <= 0)
        return dlock_zk_error(z, "wait_ms must be >= 0 and retry_ms > 0");
    if (cfg->nodes < 1 || cfg->nodes > MAX_NODES)
        return dlock_zk_error(z, "nodes is %d: give the ensemble's size, 1 to %d servers "
                              "at port, port + 1, ...", cfg->nodes, MAX_NODES);
    if (cfg->host == NULL || cfg->timeout_ms <= 0 || cfg->port < 1 ||
        cfg->port + cfg->nodes - 1 > 65535)
        return dlock_zk_error(z, "the ensemble needs a host, ports within 1..65535 and "
                              "timeout_ms > 0");
    if (cfg->password != NULL && (cfg->password[0] == '\0' ||
                                  strlen(cfg->password) > DLOCK_ERRSTR_LEN / 2))
        return dlock_zk_error(z, "password is empty or longer than %d bytes: give the "
                              "ensemble's digest password, or NULL", DLOCK_ERRSTR_LEN / 2);
    return DLOCK_OK;
}

int dlock_zk_random(dlock_zk *z, unsigned char *out, size_t n)
{
    if (getrandom(out, n, 0) != (ssize_t)n)
        return dlock_zk_error(z, "cannot read the OS random source");
    return DLOCK_OK;
}

/* This client's id, the node's path and the ensemble's address. */
static int name_paths(dlock_zk *z, const char *name)
{
    size_t len = (size_t)z->cfg.nodes * (strlen(z->cfg.host) + 8) + 1, used = 0;
    unsigned char bytes[DLOCK_ZK_ID_BYTES];
    int i;

    if (dlock_zk_random(z, bytes, sizeof(bytes)) != DLOCK_OK)
        return DLOCK_ERR;
    for (i = 0; i < DLOCK_ZK_ID_BYTES; i++)
        sprintf(z->id + 2 * i, "%02x", bytes[i]);
    z->path = malloc(strlen(DLOCK_ZK_ROOT) + strlen(name) + 2);
    z->hosts = malloc(len);
    if (z->path == NULL || z->hosts == NULL)
        return dlock_zk_error(z, "out of memory");
    sprintf(z->path, "%s/%s", DLOCK_ZK_ROOT, name);
    for (i = 0; i < z->cfg.nodes; i++)
        used += (size_t)snprintf(z->hosts + used, len - used, "%s%s:%d", i ? "," : "",
                                 z->cfg.host, z->cfg.port + i);
    return DLOCK_OK;
}

void dlock_zk_init(dlock_zk *z, const char *name, const dlock_config *cfg)
{
    pthread_condattr_t attr;

    pthread_mutex_init(&z->mu, NULL);
    pthread_mutex_init(&z->wmu, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&z->changed, &attr);
    pthread_condattr_destroy(&attr);
    if (check_config(z, name, cfg) != DLOCK_OK)
        return;
    z->cfg = *cfg;
    if (name_paths(z, name) != DLOCK_OK) {
        free(z->path);
        z->path = NULL;
    }
}

void dlock_zk_free(dlock_zk *z)
{
    drop_session(z);
    pthread_cond_destroy(&z->changed);
    pthread_mutex_destroy(&z->wmu);
    pthread_mutex_destroy(&z->mu);
    free(z->path);
    free(z->hosts);
}

void dlock_zk_owner(const dlock_zk *z, char *out, size_t len)
{
    snprintf(out, len, "%s:%ld", z->id, (long)gettid());
}

/* ---- steps under the handle's mutex ------------------------------------------------ */

int dlock_zk_guarded(dlock_zk *z, dlock_zk_step *step, dlock *l, void *arg)
{
    int rc;

    if (z->path == NULL)
        return DLOCK_ERR;
    pthread_mutex_lock(&z->mu);
    rc = step(l, arg);
    pthread_mutex_unlock(&z->mu);
    return rc;
}

int dlock_zk_wait(dlock_zk *z, dlock_zk_try *attempt, dlock *l, void *arg, long start_ms)
{
    unsigned long seen = 0;
    long left;
    int rc;

    for (;;) {
        left = z->cfg.wait_ms - (dlock_zk_now_ms() - start_ms);
        pthread_mutex_lock(&z->mu);
        rc = attempt(l, arg, left > 0, &seen);
        pthread_mutex_unlock(&z->mu);
        if (rc == DLOCK_ZK_AGAIN)
            continue;
        if (rc != DLOCK_BUSY || (left = z->cfg.wait_ms - (dlock_zk_now_ms() - start_ms)) <= 0)
            return rc;
        /* No polling: the watch the try set wakes us. */
        wait_change(z, seen, left);
    }
}

/* A no-op unless the simulator links its own definition. */
__attribute__((weak)) void dlock_failpoint(const char *name)
{
    (void)name;
}
