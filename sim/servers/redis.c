/* redis: the Redis kind of servers (servers.h). The lock's nodes are
 * redis-server processes (cluster.h); a failover holds a replica's stream,
 * kills the primary and promotes the replica without the lock
 * (replica.h), or leaves the promotion to a real redis-sentinel
 * (sentinel.h); the observer subscribes to the lock key's keyspace
 * events on every node (observer.h); a node's clock jumps through the
 * preload library its server runs under (cluster.h, clockshim.c). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "observer.h"
#include "replica.h"
#include "sentinel.h"
#include "servers.h"
#include "util.h"

#define MASTER_NAME "lockstep"       /* what the sentinel calls the primary */
#define DOWN_AFTER_MS 200            /* the sentinel's down-after-milliseconds */
#define FAILOVER_TIMEOUT_MS 1000     /* the sentinel's failover-timeout */
#define OBSERVER_TIMEOUT_MS 3000     /* to subscribe, and to see a sync marker */
#define HOLD_MS 600000               /* CLIENT PAUSE length: longer than any run */
#define REPLICA_TIMEOUT_MS 2000      /* for the replica to see its primary die */
#define BEHIND_TIMEOUT_MS 1000       /* for the lock's write to reach the replica */
#define RESUBSCRIBE_MS 3000          /* for the observer to follow the new primary */
#define SENTINEL_TIMEOUT_MS 10000    /* down-after, election, promotion, with room */

typedef struct redis_kind {
    sim_cluster cl;
    unsigned flags;            /* SIM_SERVERS_* as started */
    sim_server sentinel;       /* pid 0 unless SIM_SERVERS_SENTINEL */
    redisContext *replica;     /* open while the replica's stream is held */
    pid_t observer;            /* 0 until attached */
} redis_kind;

static redis_kind *self(sim_servers *s)
{
    return s->impl;
}

static void record(sim_servers *s, long long value, const char *detail)
{
    sim_history_add(s->h, SIM_NO_CLIENT, 0, SIM_EV_FAILOVER, value, detail);
}

static int start(sim_servers *s, unsigned flags, char *errstr, size_t len)
{
    redis_kind *r = self(s);
    int i;

    r->flags = flags;
    if (sim_cluster_start_clock(&r->cl, s->nodes, SIM_CLUSTER_RESOURCE |
                                ((flags & SIM_SERVERS_STANDBY) ? SIM_CLUSTER_REPLICA : 0),
                                (flags & SIM_SERVERS_CLOCK) ? s->clock_shim : NULL,
                                errstr, len) != 0)
        return -1;
    snprintf(s->dir, sizeof(s->dir), "%s", r->cl.dir);
    for (i = 0; i < s->nodes; i++)
        s->port[i] = r->cl.node[i].port;
    s->resource_port = r->cl.resource.port;
    return 0;
}

/* Polls until done(s) says yes; -1 with errstr after timeout_ms. */
static int wait_for(sim_servers *s, int (*done)(sim_servers *), long timeout_ms,
                    const char *what, char *errstr, size_t len)
{
    int64_t began = sim_now_ns();

    while (!done(s)) {
        if ((sim_now_ns() - began) / 1000000 > timeout_ms)
            return sim_error(errstr, len, "failover: %s within %ld ms", what, timeout_ms);
        sim_sleep_ms(2);
    }
    return 0;
}

/* The sentinel has found the replica (through the primary's INFO): only
 * then can it promote it. */
static int sentinel_sees_replica(sim_servers *s)
{
    redis_kind *r = self(s);

    return sim_sentinel_knows_replica(&r->sentinel, MASTER_NAME, r->cl.replica.port);
}

/* A real sentinel watches the primary; clients ask it where the primary
 * is, and the failover leaves the promotion to it. */
static int start_sentinel(sim_servers *s, char *errstr, size_t len)
{
    redis_kind *r = self(s);

    if (sim_sentinel_start(&r->sentinel, r->cl.dir, MASTER_NAME, r->cl.node[0].port,
                           DOWN_AFTER_MS, FAILOVER_TIMEOUT_MS, errstr, len) != 0 ||
        wait_for(s, sentinel_sees_replica, SENTINEL_TIMEOUT_MS,
                 "the sentinel did not find the replica", errstr, len) != 0)
        return -1;
    s->ctl->sentinel_port = r->sentinel.port;
    snprintf(s->ctl->sentinel_master, sizeof(s->ctl->sentinel_master), "%s", MASTER_NAME);
    return 0;
}

static int attach(sim_servers *s, char *errstr, size_t len)
{
    redis_kind *r = self(s);
    pid_t pid;

    s->ctl->observed = SIM_OBSERVED_MARKERS;
    s->ctl->nodes_auth = 1;
    if ((pid = sim_observer_start(s->h, s->ctl, OBSERVER_TIMEOUT_MS, errstr, len)) < 0)
        return -1;
    r->observer = pid;
    if ((r->flags & SIM_SERVERS_SENTINEL) && (r->flags & SIM_SERVERS_STANDBY))
        return start_sentinel(s, errstr, len);
    return 0;
}

/* CLIENT PAUSE WRITE on the replica: it reads the primary's stream but
 * applies none of it. */
static int prepare(sim_servers *s, char *errstr, size_t len)
{
    redis_kind *r = self(s);

    if (r->cl.replica.pid <= 0)
        return sim_error(errstr, len, "failover needs a replica: start the servers with "
                         "SIM_SERVERS_STANDBY");
    if ((r->replica = sim_replica_hold(&r->cl.replica, HOLD_MS, errstr, len)) == NULL)
        return -1;
    record(s, r->cl.replica.port, "hold replica");
    return 0;
}

/* REPLICAOF NO ONE drops the held stream with the link, lock and all. */
static int promote(sim_servers *s, char *errstr, size_t len)
{
    redis_kind *r = self(s);

    if (sim_replica_command(r->replica, "REPLICAOF NO ONE", errstr, len) != 0)
        return -1;
    record(s, r->cl.replica.port, "promote replica");
    if (sim_replica_command(r->replica, "CLIENT UNPAUSE", errstr, len) != 0)
        return -1;
    record(s, r->cl.replica.port, "unpause replica");
    return 0;
}

static int link_down(sim_servers *s)
{
    return sim_replica_link_down(self(s)->replica);
}

/* The sentinel names the replica as the master, and the replica agrees. */
static int sentinel_promoted(sim_servers *s)
{
    redis_kind *r = self(s);

    return sim_sentinel_master_port(&r->sentinel, MASTER_NAME) == r->cl.replica.port &&
           sim_replica_is_master(&r->cl.replica);
}

/* With a sentinel: once the dead primary's link is down, the held write
 * is gone with it and the replica can be let go; then the sentinel sees
 * the primary down (down-after) and promotes the replica. */
static int sentinel_promote(sim_servers *s, char *errstr, size_t len)
{
    redis_kind *r = self(s);

    if (wait_for(s, link_down, REPLICA_TIMEOUT_MS,
                 "the replica did not see its primary die", errstr, len) != 0 ||
        sim_replica_command(r->replica, "CLIENT UNPAUSE", errstr, len) != 0)
        return -1;
    record(s, r->cl.replica.port, "unpause replica");
    if (wait_for(s, sentinel_promoted, SENTINEL_TIMEOUT_MS,
                 "the sentinel did not promote the replica", errstr, len) != 0)
        return -1;
    record(s, r->cl.replica.port, "promote replica: by the sentinel");
    return 0;
}

/* Node moved to port: clients follow it there, and so does the
 * observer before the scenario goes on. */
static int follow(sim_servers *s, int node, int port, char *errstr, size_t len)
{
    s->port[node] = port;
    atomic_store(&s->ctl->node_port[node], port);
    if (sim_observer_wait(s->ctl, node, port, RESUBSCRIBE_MS) != 0)
        return sim_error(errstr, len, "the observer did not subscribe to node %d, now on "
                         "port %d, within %d ms", node, port, RESUBSCRIBE_MS);
    return 0;
}

/* The lock must be missing on the replica, and the write that made it
 * read but not applied: otherwise the promotion would keep the lock and
 * the scenario would show nothing, or pass by luck. */
static int failover(sim_servers *s, char *errstr, size_t len)
{
    redis_kind *r = self(s);
    long long lag;
    int port = r->cl.replica.port;

    if (r->replica == NULL)
        return sim_error(errstr, len, "failover: the replica was not held first");
    if ((lag = sim_replica_lag(r->replica, s->ctl->lock_name, BEHIND_TIMEOUT_MS,
                               errstr, len)) < 0)
        return -1;
    record(s, lag, "replica lacks lock");
    record(s, r->cl.node[0].port, "kill primary");
    sim_server_kill(&r->cl.node[0]);
    if ((r->sentinel.pid > 0 ? sentinel_promote(s, errstr, len) : promote(s, errstr, len)) != 0)
        return -1;
    record(s, port, "clients follow");
    return follow(s, 0, port, errstr, len);
}

static void down(sim_servers *s, int node)
{
    redis_kind *r = self(s);

    sim_history_add_node(s->h, node, SIM_EV_NODE_DOWN, r->cl.node[node].port, "SIGKILL");
    sim_cluster_down(&r->cl, node);
}

static int restart(sim_servers *s, int node, char *errstr, size_t len)
{
    redis_kind *r = self(s);

    if (sim_cluster_restart(&r->cl, node, errstr, len) != 0)
        return -1;
    sim_history_add_node(s->h, node, SIM_EV_RESTART, r->cl.node[node].port, "empty");
    return follow(s, node, r->cl.node[node].port, errstr, len);
}

/* The node's redis-server runs under the clock library: its offset
 * grows, and the server's next reading of the time is ms later. */
static int clock_jump(sim_servers *s, int node, long ms, char *errstr, size_t len)
{
    redis_kind *r = self(s);

    if (sim_cluster_clock_jump(&r->cl, node, ms, errstr, len) != 0)
        return -1;
    sim_history_add_node(s->h, node, SIM_EV_CLOCK_JUMP, ms, "forward");
    return 0;
}

/* One last sync marker on each node: every key event the clients caused
 * is recorded. */
static void drain(sim_servers *s)
{
    char why[128];
    redisContext *c;
    int i;

    for (i = 0; i < s->ctl->nodes; i++) {
        if ((c = sim_control_connect_node(s->ctl, i, why, sizeof(why))) == NULL)
            continue;
        sim_observer_sync(c, s->ctl, SIM_ORCHESTRATOR, i, 1, OBSERVER_TIMEOUT_MS);
        redisFree(c);
    }
}

static void stop(sim_servers *s)
{
    redis_kind *r = self(s);

    if (r == NULL)
        return;
    sim_observer_stop(r->observer);
    redisFree(r->replica);
    sim_server_kill(&r->sentinel);
    sim_cluster_stop(&r->cl);
}

const sim_servers_kind sim_servers_redis = {
    "redis", sizeof(redis_kind), start, attach, prepare, failover, down, restart, drain, stop,
    clock_jump, NULL, NULL,
};
