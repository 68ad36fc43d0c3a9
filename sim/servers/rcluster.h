/* rcluster: a Redis Cluster of six redis-servers, three masters and
 * three replicas, for a run or a test, and its faults.
 *
 * Each node is a server of server.c (a direct child on a free
 * 127.0.0.1 port, stopped by PID, dead with us, in the registry that
 * the cleanup empties on exit and on Ctrl-C), started with
 *
 *   --cluster-enabled yes --cluster-node-timeout 2000
 *   --cluster-port P (a free port of its own: port + 10000 may be taken)
 *   --cluster-require-full-coverage no (a dead master stops its slots
 *     only, not the whole cluster, until its replica takes over)
 *
 * with the run's password as requirepass and masterauth (password.h),
 * and joined by `redis-cli --cluster create ... --cluster-replicas 1
 * --cluster-yes` (its output goes to create.log in the temp dir). Start
 * returns once every node says cluster_state:ok, knows all six and every
 * replica's link to its master is up.
 *
 * Errors, hiredis-style: 0, or -1 with one line of reason in errstr. */
#ifndef SIM_RCLUSTER_H
#define SIM_RCLUSTER_H

#include <stddef.h>
#include <hiredis/hiredis.h>

#include "password.h"
#include "server.h"
#include "tempdir.h"

#define SIM_RCLUSTER_NODES 6
#define SIM_RCLUSTER_NODE_TIMEOUT_MS 2000 /* a master is failed after this */
#define SIM_RCLUSTER_READY_MS 30000       /* forming takes 2.5 s idle; a loaded
                                           * machine, many times that */

typedef struct sim_rcluster {
    char dir[SIM_PATH_LEN];               /* the temp dir; "" when stopped */
    sim_server node[SIM_RCLUSTER_NODES];  /* pid 0: killed or stopped */
    int port[SIM_RCLUSTER_NODES];         /* where node i listens */
    char password[SIM_PASSWORD_LEN];      /* the run's: requirepass, masterauth */
} sim_rcluster;

/* Starts and joins the six nodes. On error nothing is left running. */
int sim_rcluster_start(sim_rcluster *rc, char *errstr, size_t len);

/* Kills every node, removes the temp dir. Idempotent. */
void sim_rcluster_stop(sim_rcluster *rc);

/* A new connection to node i, authenticated. */
redisContext *sim_rcluster_connect(const sim_rcluster *rc, int i, char *errstr, size_t len);

/* The node listening on port, or -1. */
int sim_rcluster_node_at(const sim_rcluster *rc, int port);

/* The node that serves slot now (asked from a live node), or -1. */
int sim_rcluster_master_of(const sim_rcluster *rc, int slot, char *errstr, size_t len);

/* The replica of master m (from m's INFO replication), or -1. */
int sim_rcluster_replica_of(const sim_rcluster *rc, int m, char *errstr, size_t len);

/* Master m stops feeding its replicas (CLIENT KILL TYPE replica) while
 * replica r is stopped (SIGSTOP), so it cannot reconnect: what m
 * acknowledges from now on reaches no replica. */
int sim_rcluster_cut_replica(sim_rcluster *rc, int m, int r, char *errstr, size_t len);

/* SIGKILL node i (a crashed master); the cluster fails it over after
 * the node timeout. */
void sim_rcluster_kill(sim_rcluster *rc, int i);

/* SIGCONT node i after sim_rcluster_cut_replica. */
void sim_rcluster_resume(sim_rcluster *rc, int i);

/* Waits until a node other than old serves slot and the cluster says
 * cluster_state:ok, at most timeout_ms; the new master, or -1. */
int sim_rcluster_wait_failover(const sim_rcluster *rc, int slot, int old, long timeout_ms,
                               char *errstr, size_t len);

#endif
