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
 * and nodes name the ensemble (node i at port + i). The session, the
 * config, the errors and the wait are plumbing/zookeeper.c's.
 *
 * What stays: the release deletes by path, so a client that never took
 * the lock deletes the holder's node; so does a holder whose session
 * expired while it was paused, when its handle opens a new session for
 * the release. And no fencing token: a paused holder wakes up believing
 * it holds the lock, and writes. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zookeeper/zookeeper.h>

#include "zookeeper.h"

#define CREATE_AGAIN 1 /* lost_create: the node is not there */

struct dlock {
    dlock_zk zk;                    /* the config, the session, the error, the mutex */
    int64_t held;                   /* the session in which a thread of this handle
                                     * holds the node, 0 if none: a lost create's
                                     * node is then not ours to take */
};

/* Creates the lock's ephemeral node, and ROOT first when it is missing. */
static int create_node(dlock *l, const char *owner)
{
    int rc = zoo_create(l->zk.zh, l->zk.path, owner, (int)strlen(owner),
                        dlock_zk_acl(&l->zk), ZOO_EPHEMERAL, NULL, 0);

    if (rc != ZNONODE || (rc = dlock_zk_make_root(&l->zk)) != ZOK)
        return rc;
    return zoo_create(l->zk.zh, l->zk.path, owner, (int)strlen(owner), dlock_zk_acl(&l->zk),
                      ZOO_EPHEMERAL, NULL, 0);
}

/* After a create whose reply was lost, once the server is back: ZOK when
 * the node is there and our session owns it (the create went through),
 * ZNODEEXISTS when it is another's, CREATE_AGAIN when it is not there;
 * else rc. Without this look, a lost reply would leave us waiting for our
 * own node for as long as our session lives. */
static int lost_create(dlock *l, int rc)
{
    struct Stat st;
    int64_t me;
    int found;

    if (!dlock_zk_unknown(rc) || dlock_zk_await(&l->zk) != ZOO_CONNECTED_STATE)
        return rc;
    found = zoo_exists(l->zk.zh, l->zk.path, 0, &st);
    if (found == ZNONODE)
        return CREATE_AGAIN;
    if (found != ZOK)
        return rc;
    me = zoo_client_id(l->zk.zh)->client_id;
    return st.ephemeralOwner == me && l->held != me ? ZOK : ZNODEEXISTS;
}

/* One attempt, with the handle's mutex held: OK when we created the node,
 * BUSY when it exists (with a watch on it when watch is set; *seen is the
 * count of notifications before it was set), AGAIN when it went away
 * meanwhile. */
static int try_acquire(dlock *l, void *arg, int watch, unsigned long *seen)
{
    char token[DLOCK_ZK_OWNER_LEN];
    struct Stat st;
    int rc;

    (void)arg;
    if (dlock_zk_session(&l->zk) != DLOCK_OK)
        return DLOCK_ERR;
    dlock_zk_owner(&l->zk, token, sizeof(token));
    rc = lost_create(l, create_node(l, token));
    if (rc == CREATE_AGAIN)
        return DLOCK_ZK_AGAIN;
    if (rc == ZOK) {
        l->held = zoo_client_id(l->zk.zh)->client_id;
        return DLOCK_OK;
    }
    if (rc != ZNODEEXISTS)
        return dlock_zk_fail(&l->zk, "create", rc);
    if (!watch)
        return DLOCK_BUSY;
    /* Every waiter watches this one node: a release wakes them all. */
    *seen = dlock_zk_events(&l->zk);
    rc = zoo_wexists(l->zk.zh, l->zk.path, dlock_zk_watcher, &l->zk, &st);
    if (rc == ZNONODE)
        return DLOCK_ZK_AGAIN;
    return rc == ZOK ? DLOCK_BUSY : dlock_zk_fail(&l->zk, "exists", rc);
}

/* Gives the lock back, with the handle's mutex held. By path: whoever's
 * node it is. */
static int release(dlock *l, void *arg)
{
    int rc;

    (void)arg;
    if (dlock_zk_session(&l->zk) != DLOCK_OK)
        return DLOCK_ERR;
    rc = zoo_delete(l->zk.zh, l->zk.path, -1);
    if (rc == ZOK || rc == ZNONODE)
        l->held = 0;
    if (rc == ZOK)
        return DLOCK_OK;
    return rc == ZNONODE ? DLOCK_NOT_OWNER : dlock_zk_fail(&l->zk, "delete", rc);
}

dlock *dlock_new(const char *name, const dlock_config *cfg)
{
    dlock *l = calloc(1, sizeof(*l));

    if (l != NULL)
        dlock_zk_init(&l->zk, name, cfg);
    return l;
}

/* No polling: the try sets a watch, and the wait sleeps until it fires. */
int dlock_acquire(dlock *l)
{
    return dlock_zk_wait(&l->zk, try_acquire, l, NULL, dlock_zk_now_ms());
}

int dlock_release(dlock *l)
{
    return dlock_zk_guarded(&l->zk, release, l, NULL);
}

/* This stage draws no fencing tokens. */
long long dlock_token(dlock *l)
{
    (void)l;
    return 0;
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
    free(l);
}
