/* cluster: the servers of one run, in one temp dir, and the cleanup of
 * everything this process started.
 *
 * A cluster is the nodes a stage talks to: one primary, or several
 * independent masters (no replication between them), node 0 being the
 * primary; as asked, a replica of node 0 (replication confirmed before any
 * fault: replica.h) and a separate resource server that faults never
 * touch. Each is a server process (server.h) in a dir of the cluster's
 * temp dir (tempdir.h). The header includes both, so a user of the cluster
 * needs only this one. A node can be killed and come back empty, on a new
 * port: a restart without persistence. Started with a clock library
 * (clockshim.c), each node's wall clock can jump forward: its keys then
 * run out early, as on a server whose clock was stepped.
 *
 * sim_cluster_cleanup() kills every child this process started (servers
 * and clients: proc.h) and removes every temp dir it made (for atexit); sim_cluster_cleanup_on_signal()
 * does the same on SIGINT, SIGTERM or SIGHUP, then lets the signal kill
 * the process, so Ctrl-C leaves no redis-server and no temp dir behind.
 *
 * Errors, hiredis-style: functions return 0 or -1, with one line of reason
 * in the caller's errstr. */
#ifndef SIM_CLUSTER_H
#define SIM_CLUSTER_H

#include <stddef.h>

#include "clockfile.h"
#include "server.h"
#include "stage.h"
#include "tempdir.h"

/* Flags of sim_cluster_start: which servers besides the nodes. */
#define SIM_CLUSTER_REPLICA 0x1  /* a replica of node 0, replication confirmed */
#define SIM_CLUSTER_RESOURCE 0x2 /* a separate server that faults never touch */

typedef struct sim_cluster {
    char dir[SIM_PATH_LEN];  /* the temp dir holding every server's dir; "" when stopped */
    unsigned flags;          /* what sim_cluster_start was asked for */
    int nodes;               /* node[0 .. nodes - 1] are the lock's masters */
    sim_server node[SIM_NODES_MAX]; /* node[0] is the primary a failover replaces */
    sim_server replica;      /* of node 0; pid 0 unless SIM_CLUSTER_REPLICA */
    sim_server resource;     /* pid 0 unless SIM_CLUSTER_RESOURCE */
    int restarts;            /* names each restarted node's dir */
    const char *clock_shim;  /* the clock library the nodes run under; NULL: none */
    char clock_file[SIM_NODES_MAX][SIM_CLOCKFILE_LEN]; /* each node's clock offset */
} sim_cluster;

/* A temp dir, nodes masters (1 to SIM_NODES_MAX), and the servers named
 * by flags, each waiting for PING; a replica is attached and confirmed
 * before this returns. On error everything started so far is stopped
 * again. */
int sim_cluster_start(sim_cluster *cl, int nodes, unsigned flags,
                      char *errstr, size_t len);

/* The same, every node run under the clock library at shim (a path
 * that outlives the cluster), with a clock that sim_cluster_clock_jump
 * moves; a restarted node keeps its clock. */
int sim_cluster_start_clock(sim_cluster *cl, int nodes, unsigned flags,
                            const char *shim, char *errstr, size_t len);

/* Node i's wall clock jumps ms forward, on top of its earlier jumps, at
 * the server's next reading of the time. 0, or -1 with errstr (the
 * cluster was started without the clock library). */
int sim_cluster_clock_jump(sim_cluster *cl, int i, long ms, char *errstr, size_t len);

/* Kills node i (SIGKILL, as a crash) and leaves it down. */
void sim_cluster_down(sim_cluster *cl, int i);

/* Node i, killed if it runs, comes back as a new empty server on a new
 * port (nothing is persisted: what it held is gone). 0, or -1 with
 * errstr. */
int sim_cluster_restart(sim_cluster *cl, int i, char *errstr, size_t len);

/* Kills and reaps every server and removes the temp dir. Idempotent. */
void sim_cluster_stop(sim_cluster *cl);

/* Kills and reaps every child this process started and removes every temp
 * dir it made. Safe to call from atexit and from a signal handler. */
void sim_cluster_cleanup(void);

/* Installs handlers for SIGINT, SIGTERM and SIGHUP that run
 * sim_cluster_cleanup() and then re-raise the signal with its default
 * action. */
void sim_cluster_cleanup_on_signal(void);

#endif
