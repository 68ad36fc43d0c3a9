/* zookeeper: the ZooKeeper kind of servers (servers.h). The lock's nodes
 * are an ensemble (ensemble.h), node i on port + i; the stock stays on a
 * redis-server of its own. The lock lives in the ensemble as a whole, not
 * on one node: a server that dies or comes back empty takes nothing with
 * it while a majority keeps the data. So the history has one lane for the
 * lock (lanes = 1), and the faults on single servers are recorded as
 * failover steps that end no key ("kill leader zk1", "zk0 restarts
 * empty"), not as a node losing its keys.
 *
 *   failover  the leader is killed (SIGKILL); the others elect a new one;
 *             clients reconnect to any server within their session
 *   down      a server is killed and stays down
 *   restart   a server comes back on its ports with an empty data dir,
 *             and syncs from the leader
 *   clock     every server's wall clock jumps forward (the clock library
 *             preloaded into each java): sessions are timed by the
 *             monotonic clock, so only the nodes' ctime and mtime move
 *
 * Its observer (zk_observer.h) reads who holds the lock from the
 * ensemble; clients sync with it through the control block.
 *
 * Starting three JVMs takes seconds of CPU: a matrix starts one ensemble
 * for all its runs that kill and restart no server (share), and each of
 * those runs keeps its lock under a name of its own there. Its servers
 * run under the clock library, and a run's clock jump moves them all:
 * ZooKeeper times sessions by the monotonic clock, so the other runs'
 * locks do not see it. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ensemble.h"
#include "observer.h"
#include "servers.h"
#include "util.h"
#include "zk_observer.h"

#define OBSERVER_TIMEOUT_MS 10000 /* to open its session and read the lock */
#define SHARED_NODES 3            /* the shared ensemble: what the stages' lines ask */
#define SESSION_OPEN_MS 10000     /* a session is a write through the leader: on a
                                   * loaded machine it takes seconds to open */

typedef struct zk_kind {
    sim_ensemble ens;    /* the run's own; unused when it shares one */
    sim_ensemble *on;    /* the ensemble the lock lives in */
    sim_server resource; /* the stock's redis-server */
    pid_t observer;      /* 0 until attached */
    long long drained;   /* the orchestrator's last sync with the observer */
} zk_kind;

/* The ensemble that runs started with SIM_SERVERS_SHARED use, each under
 * a lock name of its own (share, unshare). */
static sim_ensemble shared;
static char shared_dir[SIM_PATH_LEN];

static zk_kind *self(sim_servers *s)
{
    return s->impl;
}

/* A step of a server fault, on the lock's one lane. */
static void record(sim_servers *s, long long port, const char *fmt, int node)
{
    char detail[64];

    snprintf(detail, sizeof(detail), fmt, node);
    sim_history_add(s->h, SIM_NO_CLIENT, 0, SIM_EV_FAILOVER, port, detail);
}

static int start(sim_servers *s, unsigned flags, char *errstr, size_t len)
{
    zk_kind *z = self(s);
    int i;

    if (sim_tempdir_create(s->dir, sizeof(s->dir), errstr, len) != 0)
        return -1;
    if (sim_server_start(&z->resource, s->dir, "resource", NULL, errstr, len) != 0)
        return -1;
    z->on = &z->ens;
    if ((flags & SIM_SERVERS_SHARED) && shared.nodes == s->nodes &&
        (!(flags & SIM_SERVERS_CLOCK) || shared.clock_shim != NULL))
        z->on = &shared;
    else if (sim_ensemble_start_clock(&z->ens, s->dir, s->nodes,
                                      (flags & SIM_SERVERS_CLOCK) ? s->clock_shim : NULL,
                                      errstr, len) != 0)
        return -1;
    for (i = 0; i < s->nodes; i++)
        s->port[i] = z->on->port + i;
    s->resource_port = z->resource.port;
    s->lanes = 1;
    return 0;
}

static int attach(sim_servers *s, char *errstr, size_t len)
{
    zk_kind *z = self(s);
    pid_t pid;

    s->ctl->observed = SIM_OBSERVED_ASKED;
    if (s->ctl->timeout_ms < SESSION_OPEN_MS)
        s->ctl->timeout_ms = SESSION_OPEN_MS;
    /* Other runs use the shared ensemble at the same time, and before:
     * a name apart (a pid comes back soon where pid_max is small). */
    if (z->on == &shared)
        snprintf(s->ctl->lock_name + strlen(s->ctl->lock_name),
                 sizeof(s->ctl->lock_name) - strlen(s->ctl->lock_name), "-%ld.%lld",
                 (long)getpid(), (long long)(sim_now_ns() % 1000000000));
    if ((pid = sim_zk_observer_start(s->h, s->ctl, OBSERVER_TIMEOUT_MS, errstr, len)) < 0)
        return -1;
    z->observer = pid;
    return 0;
}

/* Nothing to hold back: the failover kills whoever leads when it strikes. */
static int prepare(sim_servers *s, char *errstr, size_t len)
{
    (void)s;
    (void)errstr;
    (void)len;
    return 0;
}

/* The leader is killed; the failover is over when another leads and the
 * rest follow it. */
static int failover(sim_servers *s, char *errstr, size_t len)
{
    zk_kind *z = self(s);
    int leader = sim_ensemble_leader(&z->ens);

    if (z->on != &z->ens)
        return sim_error(errstr, len, "failover: the run shares its ensemble; start it "
                         "without SIM_SERVERS_SHARED");
    if (leader < 0)
        return sim_error(errstr, len, "failover: no ZooKeeper node says it leads");
    record(s, z->ens.port + leader, "kill leader zk%d", leader);
    sim_ensemble_down(&z->ens, leader);
    if ((leader = sim_ensemble_wait(&z->ens, SIM_ENSEMBLE_ELECTION_MS, errstr, len)) < 0)
        return -1;
    record(s, z->ens.port + leader, "zk%d leads", leader);
    return 0;
}

/* A leader that goes down is replaced before the scenario goes on, when
 * a majority is left to elect one. A server that is down before any
 * client runs (a restart's third) is started with the others and killed
 * here, not left unstarted: two servers that start apart, with the third
 * absent, back off between their election messages (up to a minute), and
 * on a busy machine elected no leader in 60 s. */
static void down(sim_servers *s, int node)
{
    zk_kind *z = self(s);
    char why[256];
    int leader = sim_ensemble_leader(&z->ens), left;

    if (z->on != &z->ens)
        return; /* never another run's servers */
    record(s, z->ens.port + node, "kill zk%d: it stays down", node);
    sim_ensemble_down(&z->ens, node);
    if (leader != node)
        return;
    if ((left = sim_ensemble_wait(&z->ens, SIM_ENSEMBLE_ELECTION_MS, why, sizeof(why))) >= 0)
        record(s, z->ens.port + left, "zk%d leads", left);
}

static int restart(sim_servers *s, int node, char *errstr, size_t len)
{
    zk_kind *z = self(s);

    if (z->on != &z->ens)
        return sim_error(errstr, len, "restart: the run shares its ensemble; start it "
                         "without SIM_SERVERS_SHARED");
    record(s, z->ens.port + node, "kill zk%d", node);
    if (sim_ensemble_restart(&z->ens, node, SIM_ENSEMBLE_START_MS, errstr, len) != 0)
        return -1;
    record(s, z->ens.port + node, "zk%d restarts empty and syncs", node);
    return 0;
}

/* Every server's wall clock jumps, so the leader's does, whichever leads:
 * it stamps each node's ctime and mtime, and it expires the sessions.
 * The lock has one lane, so the jump is recorded there, once. */
static int clock_jump(sim_servers *s, int node, long ms, char *errstr, size_t len)
{
    zk_kind *z = self(s);

    (void)node;
    for (int i = 0; i < z->on->nodes; i++)
        if (sim_ensemble_clock_jump(z->on, i, ms, errstr, len) != 0)
            return -1;
    sim_history_add_node(s->h, 0, SIM_EV_CLOCK_JUMP, ms, "every server");
    return 0;
}

/* The observer reads the ensemble once more: every change the clients
 * made is recorded, and every node's end named. */
static void drain(sim_servers *s)
{
    zk_kind *z = self(s);

    atomic_store(&s->ctl->client[SIM_ORCHESTRATOR].all_named, 1);
    sim_observer_ask(s->ctl, SIM_ORCHESTRATOR, ++z->drained, OBSERVER_TIMEOUT_MS);
}

static void stop(sim_servers *s)
{
    zk_kind *z = self(s);

    if (z != NULL) {
        sim_observer_stop(z->observer);
        sim_ensemble_stop(&z->ens);
        sim_server_stop(&z->resource);
    }
    if (s->dir[0] != '\0')
        sim_tempdir_remove(s->dir);
}

static int share(const char *clock_shim, char *errstr, size_t len)
{
    if (shared.nodes > 0)
        return 0;
    if (sim_tempdir_create(shared_dir, sizeof(shared_dir), errstr, len) != 0)
        return -1;
    if (sim_ensemble_start_clock(&shared, shared_dir, SHARED_NODES, clock_shim, errstr,
                                 len) == 0)
        return 0;
    sim_tempdir_remove(shared_dir);
    shared_dir[0] = '\0';
    return -1;
}

static void unshare(void)
{
    sim_ensemble_stop(&shared);
    if (shared_dir[0] != '\0')
        sim_tempdir_remove(shared_dir);
    shared_dir[0] = '\0';
}

const sim_servers_kind sim_servers_zookeeper = {
    "zookeeper", sizeof(zk_kind), start, attach, prepare, failover, down, restart, drain, stop, clock_jump,
    share, unshare,
};
