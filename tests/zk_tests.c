/* zk_tests: a test's own ZooKeeper session, and the lock's nodes as it
 * reads them. See zk_tests.h. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "zk_client.h"
#include "zk_observer.h"
#include "zk_tests.h"

#define SESSION_MS 30000 /* the test's own session outlives any election */
#define SYNC_MS 10000    /* a loaded machine: a sync takes a while */

zhandle_t *zk_open(void)
{
    return zk_open_on(harness_ensemble(), SESSION_MS);
}

zhandle_t *zk_open_on(const sim_ensemble *e, int session_ms)
{
    return zk_client_open(e->port, e->nodes, session_ms, e->password);
}

void zk_close(zhandle_t *zh)
{
    zookeeper_close(zh);
}

void zk_path(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", SIM_ZK_ROOT, name);
}

/* Sync answers so far in this process: a counter, not a flag on the
 * caller's stack, which an answer later than the wait would write after
 * it returned. */
static atomic_int syncs;

static void synced(int rc, const char *value, const void *data)
{
    (void)rc;
    (void)value;
    atomic_fetch_add((atomic_int *)data, 1);
}

int zk_sync(zhandle_t *zh)
{
    int64_t deadline = harness_now_ms() + SYNC_MS;
    int seen = atomic_load(&syncs);

    int rc = zoo_async(zh, "/", synced, &syncs);

    if (rc != ZOK) {
        fprintf(stderr, "sync: %s (session state %d)\n", zerror(rc), zoo_state(zh));
        return -1;
    }
    while (atomic_load(&syncs) == seen && harness_now_ms() < deadline)
        harness_sleep_ms(1);
    if (atomic_load(&syncs) != seen)
        return 0;
    fprintf(stderr, "sync: no answer within %d ms (session state %d)\n", SYNC_MS, zoo_state(zh));
    return -1;
}

/* The test's server catches up with the leader (sync) before a read:
 * its session may be on a follower that has not yet applied a write
 * that the lock's client already saw acknowledged. */
static void catch_up(zhandle_t *zh)
{
    ck_assert_msg(zk_sync(zh) == 0, "sync: no answer within %d ms", SYNC_MS);
}

int zk_nodes(zhandle_t *zh, const char *name)
{
    struct String_vector kids = { 0, NULL };
    char path[256];
    int rc, n;

    catch_up(zh);
    zk_path(path, sizeof(path), name);
    if (!CAPS.queue) {
        rc = zoo_exists(zh, path, 0, NULL);
        ck_assert_msg(rc == ZOK || rc == ZNONODE, "exists %s: %s", path, zerror(rc));
        return rc == ZOK;
    }
    rc = zoo_get_children(zh, path, 0, &kids);
    ck_assert_msg(rc == ZOK || rc == ZNONODE, "children of %s: %s", path, zerror(rc));
    n = rc == ZOK ? kids.count : 0;
    deallocate_String_vector(&kids);
    return n;
}

int zk_holds(zhandle_t *zh, const char *name)
{
    return zk_nodes(zh, name) > 0;
}
