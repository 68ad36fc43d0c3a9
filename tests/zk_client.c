/* zk_client: a test's own session, and a node's ctime. See zk_client.h. */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>

#include "ensemble.h"
#include "history.h"
#include "stage.h"
#include "util.h"
#include "zk_client.h"

#define CONNECT_MS 10000 /* a loaded machine: a session takes a while */

static void quiet(const char *message)
{
    (void)message;
}

zhandle_t *zk_client_open(int port, int nodes, int session_ms, const char *password)
{
    char hosts[SIM_NODES_MAX * 24];
    int64_t deadline = sim_now_ns() + (int64_t)CONNECT_MS * 1000000;
    size_t used = 0;
    zhandle_t *zh;

    for (int i = 0; i < nodes && i < SIM_NODES_MAX; i++)
        used += (size_t)snprintf(hosts + used, sizeof(hosts) - used, "%s127.0.0.1:%d",
                                 i ? "," : "", port + i);
    zh = zookeeper_init2(hosts, NULL, session_ms, NULL, NULL, 0, quiet);
    ck_assert_msg(zh != NULL, "cannot open a ZooKeeper session to %s", hosts);
    if (password != NULL)
        ck_assert_msg(sim_ensemble_add_auth(zh, password) == ZOK, "cannot add the digest "
                      "credential to the session to %s", hosts);
    while (zoo_state(zh) != ZOO_CONNECTED_STATE && sim_now_ns() < deadline)
        sim_sleep_ms(5);
    ck_assert_msg(zoo_state(zh) == ZOO_CONNECTED_STATE, "no server of %s answered the test's "
                  "session within %d ms", hosts, CONNECT_MS);
    return zh;
}

int64_t zk_client_create_ctime(zhandle_t *zh, const char *path)
{
    struct Stat st;
    int rc = zoo_create(zh, path, NULL, -1, &ZOO_CREATOR_ALL_ACL, 0, NULL, 0);

    ck_assert_msg(rc == ZOK, "create %s: %s (a session the jump expired says so)", path,
                  zerror(rc));
    rc = zoo_exists(zh, path, 0, &st);
    ck_assert_msg(rc == ZOK, "exists %s: %s", path, zerror(rc));
    return st.ctime;
}
