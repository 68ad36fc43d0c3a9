/* v11-zookeeper-sequential: a queue of sequential nodes per lock, on a
 * ZooKeeper ensemble, and the node's zxid as a fencing token.
 *
 * The layout is Apache Curator's InterProcessMutex, so that a Curator
 * client and this one contend for the same lock:
 *   /lockstep/<name>              the lock's node, a container: the server
 *                                 deletes it when its last child goes
 *   /lockstep/<name>/_c_<uuid>-lock-<10 digits>
 *                                 one ephemeral sequential node per
 *                                 acquisition; <uuid> is new each time
 *
 * acquire: create our node (its data: this client's random id and the
 *          thread's id); list the children and sort them by the digits
 *          after "lock-": the lowest holds the lock. Any other watches
 *          only the node just before its own and looks again when it
 *          goes: one waiter woken per release. A create whose reply was
 *          lost is found again by its uuid. A wait that runs out, or
 *          fails, deletes our node.
 * re-entry: counted per thread, as Curator counts it, with no call to
 *          the ensemble.
 * release: only the holding thread's; the last one deletes our node, by
 *          its own path: never another client's.
 * lease:   the session's timeout. An ephemeral node lives as long as the
 *          session that made it: a client that dies, or stops for longer
 *          than its lease, loses its session, and the ensemble deletes
 *          the node. A live client's library pings every third of the
 *          timeout, so a slow holder keeps its lock with no thread of ours.
 * token:   our node's czxid, the zxid of its creation: the leader's epoch
 *          and a counter, which only grows, also across a leader change.
 *
 * ZooKeeper is a consensus system: it acknowledges a write once a
 * majority of the ensemble has it, so neither a dead leader nor a server
 * that comes back empty takes the lock with it. The config's host, port
 * and nodes name the ensemble (node i at port + i); the connection
 * provider, which returns a hiredis context, is not used here.
 *
 * What stays: ZooKeeper tells a paused holder nothing until it calls
 * again: it wakes up believing it holds the lock. Only the fence refuses
 * its late write: the next holder's node was created later, so its czxid
 * is higher. */
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
#define CHILD_PREFIX "_c_"     /* Curator's mark of a protected node */
#define LOCK_NAME "lock-"      /* Curator's lock name: the sequence follows it */
#define UUID_LEN 36            /* 8-4-4-4-12 hex digits, as Java prints one */
#define NODE_LEN 512           /* the lock's path and one child's name */
#define CREATE_TRIES 5         /* creates whose reply was lost, found again or not */
#define DOOMED_MAX 16          /* our nodes whose delete did not go through yet */

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
    pthread_mutex_t wmu;            /* guards events: the only lock a watcher
                                     * takes, never held across a call */
    pthread_cond_t changed;         /* broadcast on every watcher call */
    unsigned long events;           /* watcher calls so far */
    pid_t holder;                   /* the thread holding the lock through us, or 0 */
    long holds;                     /* its hold count: re-entry is counted here */
    char *node;                     /* its node's path; NULL when none */
    long long token;                /* that node's czxid */
    char *doomed[DOOMED_MAX];       /* our nodes whose delete failed, by path,
                                     * or whose create may have gone through, by
                                     * its mark: a later call deletes them */
    int ndoomed;
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

/* A new random UUID, as Curator names a node with: a create whose reply
 * was lost is found again by it, and no other client draws it. */
static int new_uuid(dlock *l, char *out)
{
    unsigned char b[16];

    if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
        return set_error(l, "cannot read the OS random source");
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* its variant */
    sprintf(out, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
            b[12], b[13], b[14], b[15]);
    return DLOCK_OK;
}

/* Creates our sequential node, and its parents when they are missing:
 * ROOT, and the lock's node as a container, as Curator makes it. */
static int create_node(dlock *l, const char *uuid, char *out, long long *czxid)
{
    char prefix[NODE_LEN], owner[TOKEN_LEN];
    struct Stat st;
    int rc, tries;

    snprintf(prefix, sizeof(prefix), "%s/%s%s-%s", l->path, CHILD_PREFIX, uuid, LOCK_NAME);
    owner_token(l, owner, sizeof(owner));
    for (tries = 0; tries < 2; tries++) {
        rc = zoo_create2(l->zh, prefix, owner, (int)strlen(owner), &ZOO_OPEN_ACL_UNSAFE,
                         ZOO_EPHEMERAL_SEQUENTIAL, out, NODE_LEN, &st);
        if (rc != ZNONODE)
            break;
        rc = zoo_create(l->zh, ROOT, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, ZOO_PERSISTENT, NULL, 0);
        if (rc == ZOK || rc == ZNODEEXISTS)
            rc = zoo_create(l->zh, l->path, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, ZOO_CONTAINER,
                            NULL, 0);
        if (rc != ZOK && rc != ZNODEEXISTS)
            return rc;
    }
    if (rc == ZOK)
        *czxid = st.czxid;
    return rc;
}

/* The sequence of a child: what follows its last "lock-"; -1 for a node
 * that is no lock's child. */
static long long sequence(const char *name)
{
    const char *p = strstr(name, LOCK_NAME), *next;

    if (p == NULL)
        return -1;
    while ((next = strstr(p + 1, LOCK_NAME)) != NULL)
        p = next;
    return strtoll(p + strlen(LOCK_NAME), NULL, 10);
}

/* Curator's protected mode: after a create whose reply was lost, our
 * node is the child that carries our uuid, if the create got through. */
static int find_ours(dlock *l, const char *uuid, char *out, long long *czxid)
{
    struct String_vector kids = { 0, NULL };
    char mark[UUID_LEN + 8];
    struct Stat st;
    int rc = zoo_get_children(l->zh, l->path, 0, &kids), i;

    snprintf(mark, sizeof(mark), "%s%s-", CHILD_PREFIX, uuid);
    for (i = 0, rc = rc == ZOK ? ZNONODE : rc; i < kids.count && rc == ZNONODE; i++) {
        if (strncmp(kids.data[i], mark, strlen(mark)) != 0)
            continue;
        snprintf(out, NODE_LEN, "%s/%s", l->path, kids.data[i]);
        rc = zoo_exists(l->zh, out, 0, &st);
        *czxid = st.czxid;
    }
    deallocate_String_vector(&kids);
    return rc;
}

/* A call whose reply was lost: it may have been done, or not. */
static int unknown(int rc)
{
    return rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT;
}

/* A node of ours whose delete did not go through (the connection was
 * lost): Curator's guaranteed delete keeps it for a later call, so that
 * nobody waits behind it while our session lives. With l->mu held. */
static void doom(dlock *l, const char *node)
{
    if (l->ndoomed < DOOMED_MAX && (l->doomed[l->ndoomed] = strdup(node)) != NULL)
        l->ndoomed++;
}

/* Deletes the children that carry mark (a create's "_c_<uuid>-"), listed
 * in kids (listed: the listing's result). ZOK when none is left. */
static int delete_marked(dlock *l, const struct String_vector *kids, int listed,
                         const char *mark)
{
    char path[NODE_LEN];
    int rc = listed, j, gone;

    for (j = 0; listed == ZOK && j < kids->count; j++) {
        if (strncmp(kids->data[j], mark, strlen(mark)) != 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", l->path, kids->data[j]);
        gone = zoo_delete(l->zh, path, -1);
        if (gone != ZOK && gone != ZNONODE)
            rc = gone;
    }
    return rc;
}

/* Deletes what doom kept, with l->mu held and a session open: a node by
 * its path, or whichever child carries a create's mark (Curator finds and
 * deletes a protected node whose create failed). One that expired took
 * them with it (ZNONODE). */
static void delete_doomed(dlock *l)
{
    struct String_vector kids = { 0, NULL };
    int i, kept = 0, rc, listed = ZNOTHING;

    for (i = 0; i < l->ndoomed; i++) {
        if (l->doomed[i][0] == '/') {
            rc = zoo_delete(l->zh, l->doomed[i], -1);
        } else {
            if (listed == ZNOTHING)
                listed = zoo_get_children(l->zh, l->path, 0, &kids);
            rc = delete_marked(l, &kids, listed, l->doomed[i]);
        }
        if (rc == ZOK || rc == ZNONODE)
            free(l->doomed[i]);
        else
            l->doomed[kept++] = l->doomed[i];
    }
    l->ndoomed = kept;
    deallocate_String_vector(&kids);
}

/* Our node in the queue, with l->mu held: created, or found again after
 * a lost reply. */
static int enqueue(dlock *l, char *out, long long *czxid)
{
    char uuid[UUID_LEN + 1], mark[UUID_LEN + 8];
    int rc = ZCONNECTIONLOSS, tries;

    if (ensure_session(l) != DLOCK_OK || new_uuid(l, uuid) != DLOCK_OK)
        return DLOCK_ERR;
    delete_doomed(l);
    for (tries = 0; tries < CREATE_TRIES && unknown(rc); tries++) {
        if (tries > 0 && (await_server(l) != ZOO_CONNECTED_STATE ||
                          (rc = find_ours(l, uuid, out, czxid)) != ZNONODE))
            break;
        rc = create_node(l, uuid, out, czxid);
    }
    if (rc == ZOK)
        return DLOCK_OK;
    if (unknown(rc) || tries > 1) {
        snprintf(mark, sizeof(mark), "%s%s-", CHILD_PREFIX, uuid);
        doom(l, mark); /* it may have gone through: a later call deletes it */
    }
    return zk_fail(l, "create", rc);
}

/* A second node of the same acquisition: a create whose reply was lost
 * went through after all, and the one that replaced it too. It would
 * hold the lock for a client that waits elsewhere: it goes. */
static int duplicate(dlock *l, const char *ours, const char *child)
{
    size_t mark = strlen(CHILD_PREFIX) + UUID_LEN + 1;
    char path[NODE_LEN];

    if (strcmp(child, ours) == 0 || strncmp(child, ours, mark) != 0)
        return 0;
    snprintf(path, sizeof(path), "%s/%s", l->path, child);
    zoo_delete(l->zh, path, -1);
    return 1;
}

/* Our place in the queue: *pred gets the child just before ours, "" when
 * ours is the lowest. ZOK, ZNONODE when ours is not there, or an error. */
static int place(dlock *l, const char *ours, char *pred)
{
    struct String_vector kids = { 0, NULL };
    long long mine = sequence(ours), best = -1, seq;
    int rc = zoo_get_children(l->zh, l->path, 0, &kids), found = 0, i;

    pred[0] = '\0';
    for (i = 0; rc == ZOK && i < kids.count; i++) {
        seq = sequence(kids.data[i]);
        found |= strcmp(kids.data[i], ours) == 0;
        if (duplicate(l, ours, kids.data[i]))
            continue;
        if (seq >= 0 && seq < mine && seq > best) {
            best = seq;
            snprintf(pred, NODE_LEN, "%s/%s", l->path, kids.data[i]);
        }
    }
    deallocate_String_vector(&kids);
    return rc == ZOK && !found ? ZNONODE : rc;
}

/* One look, with l->mu held: OK when our node is the lowest, BUSY when
 * it waits (with a watch on its predecessor when watch is set; *seen is
 * the count of notifications before it was set), AGAIN when the
 * predecessor went away meanwhile or the connection was lost. */
static int try_acquire(dlock *l, const char *node, int watch, unsigned long *seen)
{
    char pred[NODE_LEN], buf[1];
    int rc, len = sizeof(buf);

    if (ensure_session(l) != DLOCK_OK)
        return DLOCK_ERR;
    rc = place(l, strrchr(node, '/') + 1, pred);
    if (rc == ZNONODE)
        return set_error(l, "our node %s is gone: its session expired", node);
    if (rc == ZOK && pred[0] == '\0')
        return DLOCK_OK;
    if (rc == ZOK && !watch)
        return DLOCK_BUSY;
    *seen = events_now(l);
    if (rc == ZOK)
        rc = zoo_wget(l->zh, pred, watcher, l, buf, &len, NULL);
    if (rc == ZNONODE || rc == ZCONNECTIONLOSS)
        return rc == ZNONODE ? AGAIN : (zk_fail(l, "watch", rc), AGAIN);
    return rc == ZOK ? DLOCK_BUSY : zk_fail(l, "watch", rc);
}

/* A wait that ran out or failed: our node leaves the queue, so that no
 * one waits behind it; a later call deletes it when this one cannot. */
static void leave_queue(dlock *l, const char *node)
{
    int rc = ZCONNECTIONLOSS;

    pthread_mutex_lock(&l->mu);
    if (l->zh != NULL && zoo_state(l->zh) == ZOO_CONNECTED_STATE)
        rc = zoo_delete(l->zh, node, -1);
    if (rc != ZOK && rc != ZNONODE)
        doom(l, node);
    pthread_mutex_unlock(&l->mu);
}

/* The holding thread takes it once more: a count, no call. */
static int reenter(dlock *l)
{
    int again;

    pthread_mutex_lock(&l->mu);
    again = l->holds > 0 && l->holder == gettid();
    if (again)
        l->holds++;
    pthread_mutex_unlock(&l->mu);
    return again;
}

/* The hold is over: it was released, or its node is gone. */
static void forget_hold(dlock *l)
{
    l->holder = 0;
    l->holds = 0;
    l->token = 0;
    free(l->node);
    l->node = NULL;
}

/* Gives the lock back: dlock_release with l->mu held. Only the holding
 * thread's last release calls the ensemble, and deletes our own node.
 * No session to call on keeps the hold, so that a retry can delete it; a
 * delete whose outcome is unknown ends it, as Curator's does, and a later
 * call deletes the node (doom). */
static int release(dlock *l)
{
    int rc;

    if (l->holds == 0 || l->holder != gettid())
        return DLOCK_NOT_OWNER;
    if (--l->holds > 0)
        return DLOCK_OK;
    l->holds = 1;
    if (ensure_session(l) != DLOCK_OK)
        return DLOCK_ERR;
    delete_doomed(l);
    rc = zoo_delete(l->zh, l->node, -1);
    if (rc != ZOK && rc != ZNONODE)
        doom(l, l->node);
    forget_hold(l);
    if (rc == ZOK || rc == ZNONODE)
        return rc == ZOK ? DLOCK_OK : DLOCK_NOT_OWNER;
    return zk_fail(l, "delete", rc);
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

/* The queue's wait, after our node was made: until it is the lowest, the
 * budget runs out, or the session is lost. */
static int wait_turn(dlock *l, const char *node, const struct timespec *start)
{
    unsigned long seen = 0;
    long left;
    int rc;

    for (;;) {
        left = l->cfg.wait_ms - elapsed_ms(start);
        pthread_mutex_lock(&l->mu);
        rc = try_acquire(l, node, left > 0, &seen);
        pthread_mutex_unlock(&l->mu);
        if (rc == AGAIN && left > 0)
            continue;
        if (rc == AGAIN)
            return DLOCK_ERR; /* the connection is lost and the budget spent */
        if (rc != DLOCK_BUSY || (left = l->cfg.wait_ms - elapsed_ms(start)) <= 0)
            return rc;
        /* No polling: the watch wakes us when our predecessor goes. */
        wait_change(l, seen, left);
    }
}

int dlock_acquire(dlock *l)
{
    struct timespec start;
    char node[NODE_LEN];
    long long czxid = 0;
    int rc;

    if (l->path == NULL)
        return DLOCK_ERR;
    if (reenter(l))
        return DLOCK_OK;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pthread_mutex_lock(&l->mu);
    rc = enqueue(l, node, &czxid);
    pthread_mutex_unlock(&l->mu);
    if (rc != DLOCK_OK)
        return rc;
    if ((rc = wait_turn(l, node, &start)) != DLOCK_OK) {
        leave_queue(l, node);
        return rc;
    }
    pthread_mutex_lock(&l->mu);
    l->holder = gettid();
    l->holds = 1;
    l->token = czxid;
    l->node = strdup(node);
    if (l->node == NULL) {
        forget_hold(l);
        rc = set_error(l, "out of memory");
    }
    pthread_mutex_unlock(&l->mu);
    if (rc != DLOCK_OK)
        leave_queue(l, node);
    return rc;
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

long long dlock_token(dlock *l)
{
    long long token;

    pthread_mutex_lock(&l->mu);
    token = l->holds > 0 && l->holder == gettid() ? l->token : 0;
    pthread_mutex_unlock(&l->mu);
    return token;
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
    free(l->node);
    while (l->ndoomed > 0)
        free(l->doomed[--l->ndoomed]);
    free(l);
}

/* A no-op unless the simulator links its own definition. */
__attribute__((weak)) void dlock_failpoint(const char *name)
{
    (void)name;
}
