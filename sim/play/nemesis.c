/* nemesis: pauses, crashes and the failover that loses a lock. See
 * nemesis.h. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nemesis.h"
#include "observer.h"
#include "replica.h"
#include "sentinel.h"
#include "util.h"

#define HOLD_MS 600000       /* CLIENT PAUSE length: longer than any run */
#define REPLICA_TIMEOUT_MS 2000 /* for the replica to see its primary die */
#define BEHIND_TIMEOUT_MS 1000 /* for the lock's write to reach the replica */
#define RESUBSCRIBE_MS 3000  /* for the observer to follow the new primary */
#define SENTINEL_TIMEOUT_MS 10000 /* down-after, election, promotion, with room */

static void record(sim_nemesis *n, int client, sim_event_type type,
                   long long value, const char *detail)
{
    sim_history_add(n->h, client, 0, type, value, detail);
}

void sim_nemesis_init(sim_nemesis *n, sim_cluster *cl, sim_control *ctl,
                      sim_history *h, const pid_t *pids)
{
    memset(n, 0, sizeof(*n));
    n->cl = cl;
    n->ctl = ctl;
    n->h = h;
    n->pids = pids;
}

/* ---- processes ---------------------------------------------------------------- */

void sim_nemesis_pause(sim_nemesis *n, int client, long ms)
{
    if (n->pids[client] <= 0)
        return;
    record(n, client, SIM_EV_PAUSE_BEGIN, ms, "SIGSTOP");
    kill(n->pids[client], SIGSTOP);
    n->self_stop[client] = 0;
    n->resume_ns[client] = sim_now_ns() + (int64_t)ms * 1000000;
}

void sim_nemesis_crash(sim_nemesis *n, int client)
{
    if (n->pids[client] <= 0)
        return;
    record(n, client, SIM_EV_CRASH, 0, "SIGKILL");
    kill(n->pids[client], SIGKILL);
}

void sim_nemesis_stopped(sim_nemesis *n, int client)
{
    long ms = atomic_load(&n->ctl->client[client].stop_ms);

    /* A stop we sent ourselves is already scheduled. */
    if (ms <= 0 || n->resume_ns[client] != 0)
        return;
    n->self_stop[client] = 1;
    n->resume_ns[client] = sim_now_ns() + (int64_t)ms * 1000000;
}

void sim_nemesis_tick(sim_nemesis *n)
{
    int64_t now = sim_now_ns();
    int i;

    for (i = 0; i < SIM_CLIENTS_MAX; i++) {
        if (n->resume_ns[i] == 0 || now < n->resume_ns[i])
            continue;
        n->resume_ns[i] = 0;
        if (n->self_stop[i])
            atomic_store(&n->ctl->client[i].stop_ms, 0);
        if (n->pids[i] > 0)
            kill(n->pids[i], SIGCONT);
        record(n, i, SIM_EV_PAUSE_END, 0, n->self_stop[i] ? "failpoint" : "SIGCONT");
    }
}

int sim_nemesis_busy(const sim_nemesis *n)
{
    int i;

    for (i = 0; i < SIM_CLIENTS_MAX; i++) {
        if (n->resume_ns[i] != 0)
            return 1;
    }
    return 0;
}

/* ---- failover ---------------------------------------------------------------- */

int sim_nemesis_hold_replica(sim_nemesis *n, char *errstr, size_t len)
{
    if (n->cl->replica.pid <= 0)
        return sim_error(errstr, len, "failover needs a replica: start the cluster with SIM_CLUSTER_REPLICA");
    if ((n->replica = sim_replica_hold(&n->cl->replica, HOLD_MS, errstr, len)) == NULL)
        return -1;
    record(n, SIM_NO_CLIENT, SIM_EV_FAILOVER, n->cl->replica.port, "hold replica");
    return 0;
}

/* REPLICAOF NO ONE drops the held stream with the link, lock and all. */
static int promote(sim_nemesis *n, char *errstr, size_t len)
{
    if (sim_replica_command(n->replica, "REPLICAOF NO ONE", errstr, len) != 0)
        return -1;
    record(n, SIM_NO_CLIENT, SIM_EV_FAILOVER, n->cl->replica.port, "promote replica");
    if (sim_replica_command(n->replica, "CLIENT UNPAUSE", errstr, len) != 0)
        return -1;
    record(n, SIM_NO_CLIENT, SIM_EV_FAILOVER, n->cl->replica.port, "unpause replica");
    return 0;
}

/* Polls until done(n) says yes; -1 with errstr after timeout_ms. */
static int wait_for(sim_nemesis *n, int (*done)(sim_nemesis *), long timeout_ms,
                    const char *what, char *errstr, size_t len)
{
    int64_t start = sim_now_ns();

    while (!done(n)) {
        if ((sim_now_ns() - start) / 1000000 > timeout_ms)
            return sim_error(errstr, len, "failover: %s within %ld ms", what, timeout_ms);
        sim_sleep_ms(2);
    }
    return 0;
}

static int link_down(sim_nemesis *n)
{
    return sim_replica_link_down(n->replica);
}

/* The sentinel names the replica as the master, and the replica agrees. */
static int sentinel_promoted(sim_nemesis *n)
{
    return sim_sentinel_master_port(n->sentinel, n->master_name) == n->cl->replica.port &&
           sim_replica_is_master(&n->cl->replica);
}

/* The sentinel has found the replica (through the primary's INFO): only
 * then can it promote it. */
static int sentinel_sees_replica(sim_nemesis *n)
{
    return sim_sentinel_knows_replica(n->sentinel, n->master_name, n->cl->replica.port);
}

int sim_nemesis_use_sentinel(sim_nemesis *n, const sim_server *sentinel,
                             const char *master_name, char *errstr, size_t len)
{
    n->sentinel = sentinel;
    n->master_name = master_name;
    return wait_for(n, sentinel_sees_replica, SENTINEL_TIMEOUT_MS,
                    "the sentinel did not find the replica", errstr, len);
}

/* With a sentinel: once the dead primary's link is down, the held write
 * is gone with it and the replica can be let go; then the sentinel sees
 * the primary down (down-after) and promotes the replica. */
static int sentinel_promote(sim_nemesis *n, char *errstr, size_t len)
{
    if (wait_for(n, link_down, REPLICA_TIMEOUT_MS,
                 "the replica did not see its primary die", errstr, len) != 0 ||
        sim_replica_command(n->replica, "CLIENT UNPAUSE", errstr, len) != 0)
        return -1;
    record(n, SIM_NO_CLIENT, SIM_EV_FAILOVER, n->cl->replica.port, "unpause replica");
    if (wait_for(n, sentinel_promoted, SENTINEL_TIMEOUT_MS,
                 "the sentinel did not promote the replica", errstr, len) != 0)
        return -1;
    record(n, SIM_NO_CLIENT, SIM_EV_FAILOVER, n->cl->replica.port,
           "promote replica: by the sentinel");
    return 0;
}

/* The lock must be missing on the replica, and the write that made it
 * read but not applied: otherwise the promotion would keep the lock and
 * the scenario would show nothing, or pass by luck. */
int sim_nemesis_failover(sim_nemesis *n, char *errstr, size_t len)
{
    long long lag;
    int port = n->cl->replica.port;

    if (n->replica == NULL)
        return sim_error(errstr, len, "failover: the replica was not held first");
    if ((lag = sim_replica_lag(n->replica, n->ctl->lock_name, BEHIND_TIMEOUT_MS,
                               errstr, len)) < 0)
        return -1;
    record(n, SIM_NO_CLIENT, SIM_EV_FAILOVER, lag, "replica lacks lock");
    record(n, SIM_NO_CLIENT, SIM_EV_FAILOVER, n->cl->node[0].port, "kill primary");
    sim_server_kill(&n->cl->node[0]);
    if ((n->sentinel != NULL ? sentinel_promote(n, errstr, len)
                             : promote(n, errstr, len)) != 0)
        return -1;
    atomic_store(&n->ctl->node_port[0], port);
    record(n, SIM_NO_CLIENT, SIM_EV_FAILOVER, port, "clients follow");
    if (sim_observer_wait(n->ctl, 0, port, RESUBSCRIBE_MS) != 0)
        return sim_error(errstr, len, "the observer did not subscribe to the new primary (port %d) within %d ms",
                     port, RESUBSCRIBE_MS);
    return 0;
}

/* ---- a node's death and restart ------------------------------------------ */

void sim_nemesis_down(sim_nemesis *n, int node)
{
    sim_history_add_node(n->h, node, SIM_EV_NODE_DOWN, n->cl->node[node].port, "SIGKILL");
    sim_cluster_down(n->cl, node);
}

int sim_nemesis_restart(sim_nemesis *n, int node, char *errstr, size_t len)
{
    int port;

    if (sim_cluster_restart(n->cl, node, errstr, len) != 0)
        return -1;
    port = n->cl->node[node].port;
    sim_history_add_node(n->h, node, SIM_EV_RESTART, port, "empty");
    atomic_store(&n->ctl->node_port[node], port);
    if (sim_observer_wait(n->ctl, node, port, RESUBSCRIBE_MS) != 0)
        return sim_error(errstr, len, "the observer did not subscribe to node %d, "
                         "restarted on port %d, within %d ms", node, port, RESUBSCRIBE_MS);
    return 0;
}

void sim_nemesis_close(sim_nemesis *n)
{
    redisFree(n->replica);
    n->replica = NULL;
}
