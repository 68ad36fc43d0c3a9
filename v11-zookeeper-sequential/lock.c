/* v11-zookeeper-sequential: a queue of sequential nodes per lock, on a
 * ZooKeeper ensemble, and the node's zxid as a fence.
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
 * and nodes name the ensemble (node i at port + i). The session, the
 * config, the errors and the wait are plumbing/zookeeper.c's.
 *
 * What stays: ZooKeeper tells a paused holder nothing until it calls
 * again: it wakes up believing it holds the lock. Only the fence refuses
 * its late write: the next holder's node was created later, so its czxid
 * is higher. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include "zookeeper.h"

#define CHILD_PREFIX "_c_"     /* Curator's mark of a protected node */
#define LOCK_NAME "lock-"      /* Curator's lock name: the sequence follows it */
#define UUID_LEN 36            /* 8-4-4-4-12 hex digits, as Java prints one */
#define NODE_LEN 512           /* the lock's path and one child's name */
#define CREATE_TRIES 5         /* creates whose reply was lost, found again or not */
#define DOOMED_MAX 16          /* our nodes whose delete did not go through yet */

struct dlock {
    dlock_zk zk;                    /* the config, the session, the error, the mutex */
    pid_t holder;                   /* the thread holding the lock through us, or 0 */
    long holds;                     /* its hold count: re-entry is counted here */
    char *node;                     /* its node's path; NULL when none */
    long long token;                /* that node's czxid */
    char *doomed[DOOMED_MAX];       /* our nodes whose delete failed, by path,
                                     * or whose create may have gone through, by
                                     * its mark: a later call deletes them */
    int ndoomed;
};

/* A new random UUID, as Curator names a node with: a create whose reply
 * was lost is found again by it, and no other client draws it. */
static int new_uuid(dlock *l, char *out)
{
    unsigned char b[16];

    if (dlock_zk_random(&l->zk, b, sizeof(b)) != DLOCK_OK)
        return DLOCK_ERR;
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* its variant */
    sprintf(out, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
            b[12], b[13], b[14], b[15]);
    return DLOCK_OK;
}

/* Creates our sequential node, and its parents when they are missing:
 * DLOCK_ZK_ROOT, and the lock's node as a container, as Curator makes it. */
static int create_node(dlock *l, const char *uuid, char *out, long long *czxid)
{
    char prefix[NODE_LEN], owner[DLOCK_ZK_OWNER_LEN];
    struct Stat st;
    int rc, tries;

    snprintf(prefix, sizeof(prefix), "%s/%s%s-%s", l->zk.path, CHILD_PREFIX, uuid, LOCK_NAME);
    dlock_zk_owner(&l->zk, owner, sizeof(owner));
    for (tries = 0; tries < 2; tries++) {
        rc = zoo_create2(l->zk.zh, prefix, owner, (int)strlen(owner), dlock_zk_acl(&l->zk),
                         ZOO_EPHEMERAL_SEQUENTIAL, out, NODE_LEN, &st);
        if (rc != ZNONODE)
            break;
        rc = dlock_zk_make_root(&l->zk);
        if (rc == ZOK)
            rc = zoo_create(l->zk.zh, l->zk.path, NULL, -1, dlock_zk_acl(&l->zk),
                            ZOO_CONTAINER, NULL, 0);
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
    int rc = zoo_get_children(l->zk.zh, l->zk.path, 0, &kids), i;

    snprintf(mark, sizeof(mark), "%s%s-", CHILD_PREFIX, uuid);
    for (i = 0, rc = rc == ZOK ? ZNONODE : rc; i < kids.count && rc == ZNONODE; i++) {
        if (strncmp(kids.data[i], mark, strlen(mark)) != 0)
            continue;
        snprintf(out, NODE_LEN, "%s/%s", l->zk.path, kids.data[i]);
        rc = zoo_exists(l->zk.zh, out, 0, &st);
        *czxid = st.czxid;
    }
    deallocate_String_vector(&kids);
    return rc;
}

/* A node of ours whose delete did not go through (the connection was
 * lost): Curator's guaranteed delete keeps it for a later call, so that
 * nobody waits behind it while our session lives. With the handle's
 * mutex held. */
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
        snprintf(path, sizeof(path), "%s/%s", l->zk.path, kids->data[j]);
        gone = zoo_delete(l->zk.zh, path, -1);
        if (gone != ZOK && gone != ZNONODE)
            rc = gone;
    }
    return rc;
}

/* Deletes what doom kept, with the handle's mutex held and a session
 * open: a node by its path, or whichever child carries a create's mark
 * (Curator finds and deletes a protected node whose create failed). One
 * that expired took them with it (ZNONODE). */
static void delete_doomed(dlock *l)
{
    struct String_vector kids = { 0, NULL };
    int i, kept = 0, rc, listed = ZNOTHING;

    for (i = 0; i < l->ndoomed; i++) {
        if (l->doomed[i][0] == '/') {
            rc = zoo_delete(l->zk.zh, l->doomed[i], -1);
        } else {
            if (listed == ZNOTHING)
                listed = zoo_get_children(l->zk.zh, l->zk.path, 0, &kids);
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

/* Our node in the queue, with the handle's mutex held: created, or found
 * again after a lost reply. */
static int enqueue(dlock *l, char *out, long long *czxid)
{
    char uuid[UUID_LEN + 1], mark[UUID_LEN + 8];
    int rc = ZCONNECTIONLOSS, tries;

    if (dlock_zk_session(&l->zk) != DLOCK_OK || new_uuid(l, uuid) != DLOCK_OK)
        return DLOCK_ERR;
    delete_doomed(l);
    for (tries = 0; tries < CREATE_TRIES && dlock_zk_unknown(rc); tries++) {
        if (tries > 0 && (dlock_zk_await(&l->zk) != ZOO_CONNECTED_STATE ||
                          (rc = find_ours(l, uuid, out, czxid)) != ZNONODE))
            break;
        rc = create_node(l, uuid, out, czxid);
    }
    if (rc == ZOK)
        return DLOCK_OK;
    if (dlock_zk_unknown(rc) || tries > 1) {
        snprintf(mark, sizeof(mark), "%s%s-", CHILD_PREFIX, uuid);
        doom(l, mark); /* it may have gone through: a later call deletes it */
    }
    return dlock_zk_fail(&l->zk, "create", rc);
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
    snprintf(path, sizeof(path), "%s/%s", l->zk.path, child);
    zoo_delete(l->zk.zh, path, -1);
    return 1;
}

/* Our place in the queue: *pred gets the child just before ours, "" when
 * ours is the lowest. ZOK, ZNONODE when ours is not there, or an error. */
static int place(dlock *l, const char *ours, char *pred)
{
    struct String_vector kids = { 0, NULL };
    long long mine = sequence(ours), best = -1, seq;
    int rc = zoo_get_children(l->zk.zh, l->zk.path, 0, &kids), found = 0, i;

    pred[0] = '\0';
    for (i = 0; rc == ZOK && i < kids.count; i++) {
        seq = sequence(kids.data[i]);
        found |= strcmp(kids.data[i], ours) == 0;
        if (duplicate(l, ours, kids.data[i]))
            continue;
        if (seq >= 0 && seq < mine && seq > best) {
            best = seq;
            snprintf(pred, NODE_LEN, "%s/%s", l->zk.path, kids.data[i]);
        }
    }
    deallocate_String_vector(&kids);
    return rc == ZOK && !found ? ZNONODE : rc;
}

/* One look, with the handle's mutex held: OK when our node (arg) is the
 * lowest, BUSY when it waits (with a watch on its predecessor when watch
 * is set; *seen is the count of notifications before it was set), AGAIN
 * when the predecessor went away meanwhile or the connection was lost. */
static int try_acquire(dlock *l, void *arg, int watch, unsigned long *seen)
{
    char pred[NODE_LEN], buf[1], *node = arg;
    int rc, len = sizeof(buf);

    if (dlock_zk_session(&l->zk) != DLOCK_OK)
        return DLOCK_ERR;
    rc = place(l, strrchr(node, '/') + 1, pred);
    if (rc == ZNONODE)
        return dlock_zk_error(&l->zk, "our node %s is gone: its session expired", node);
    if (rc == ZOK && pred[0] == '\0')
        return DLOCK_OK;
    if (rc == ZOK && !watch)
        return DLOCK_BUSY;
    /* Only the node before ours: a release wakes one waiter, not the herd. */
    *seen = dlock_zk_events(&l->zk);
    if (rc == ZOK)
        rc = zoo_wget(l->zk.zh, pred, dlock_zk_watcher, &l->zk, buf, &len, NULL);
    if (rc == ZNONODE)
        return DLOCK_ZK_AGAIN;
    if (rc == ZCONNECTIONLOSS && watch) /* the budget is not spent: look again */
        return dlock_zk_fail(&l->zk, "watch", rc), DLOCK_ZK_AGAIN;
    return rc == ZOK ? DLOCK_BUSY : dlock_zk_fail(&l->zk, "watch", rc);
}

/* A wait that ran out or failed: our node leaves the queue, so that no
 * one waits behind it; a later call deletes it when this one cannot. */
static void leave_queue(dlock *l, const char *node)
{
    int rc = ZCONNECTIONLOSS;

    pthread_mutex_lock(&l->zk.mu);
    if (l->zk.zh != NULL && zoo_state(l->zk.zh) == ZOO_CONNECTED_STATE)
        rc = zoo_delete(l->zk.zh, node, -1);
    if (rc != ZOK && rc != ZNONODE)
        doom(l, node);
    pthread_mutex_unlock(&l->zk.mu);
}

/* The holding thread takes it once more: a count, no call. */
static int reenter(dlock *l)
{
    int again;

    pthread_mutex_lock(&l->zk.mu);
    again = l->holds > 0 && l->holder == gettid();
    if (again)
        l->holds++;
    pthread_mutex_unlock(&l->zk.mu);
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

/* Gives the lock back, with the handle's mutex held. Only the holding
 * thread's last release calls the ensemble, and deletes our own node.
 * No session to call on keeps the hold, so that a retry can delete it; a
 * delete whose outcome is unknown ends it, as Curator's does, and a later
 * call deletes the node (doom). */
static int release(dlock *l, void *arg)
{
    int rc;

    (void)arg;
    /* Only the thread that took it: another thread of this process too
     * gets NOT_OWNER, as Curator refuses it. */
    if (l->holds == 0 || l->holder != gettid())
        return DLOCK_NOT_OWNER;
    if (--l->holds > 0)
        return DLOCK_OK;
    l->holds = 1;
    if (dlock_zk_session(&l->zk) != DLOCK_OK)
        return DLOCK_ERR;
    delete_doomed(l);
    rc = zoo_delete(l->zk.zh, l->node, -1);
    if (rc != ZOK && rc != ZNONODE)
        doom(l, l->node);
    forget_hold(l);
    if (rc == ZOK || rc == ZNONODE)
        return rc == ZOK ? DLOCK_OK : DLOCK_NOT_OWNER;
    return dlock_zk_fail(&l->zk, "delete", rc);
}

dlock *dlock_new(const char *name, const dlock_config *cfg)
{
    dlock *l = calloc(1, sizeof(*l));

    if (l != NULL)
        dlock_zk_init(&l->zk, name, cfg);
    return l;
}

/* Our node joins the queue and waits its turn: until it is the lowest,
 * the budget runs out, or the session is lost. */
int dlock_acquire(dlock *l)
{
    char node[NODE_LEN];
    long long czxid = 0;
    long start;
    int rc;

    if (reenter(l))
        return DLOCK_OK;
    start = dlock_zk_now_ms();
    pthread_mutex_lock(&l->zk.mu);
    rc = enqueue(l, node, &czxid);
    pthread_mutex_unlock(&l->zk.mu);
    if (rc != DLOCK_OK)
        return rc;
    if ((rc = dlock_zk_wait(&l->zk, try_acquire, l, node, start)) != DLOCK_OK) {
        leave_queue(l, node);
        return rc;
    }
    /* The hold: this thread's, counted, on our node. */
    pthread_mutex_lock(&l->zk.mu);
    l->holder = gettid();
    l->holds = 1;
    l->token = czxid;
    l->node = strdup(node);
    if (l->node == NULL) {
        forget_hold(l);
        rc = dlock_zk_error(&l->zk, "out of memory");
    }
    pthread_mutex_unlock(&l->zk.mu);
    if (rc != DLOCK_OK)
        leave_queue(l, node);
    return rc;
}

int dlock_release(dlock *l)
{
    return dlock_zk_guarded(&l->zk, release, l, NULL);
}

long long dlock_token(dlock *l)
{
    long long token;

    pthread_mutex_lock(&l->zk.mu);
    token = l->holds > 0 && l->holder == gettid() ? l->token : 0;
    pthread_mutex_unlock(&l->zk.mu);
    return token;
}

const char *dlock_errstr(const dlock *l)
{
    return l->zk.errstr;
}

void dlock_free(dlock *l)
{
    if (l == NULL)
        return;
    dlock_zk_free(&l->zk);
    free(l->node);
    while (l->ndoomed > 0)
        free(l->doomed[--l->ndoomed]);
    free(l);
}
