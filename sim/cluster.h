/* cluster: the servers of one run, in one temp dir, and the cleanup of
 * everything this process started.
 *
 * A cluster is a primary, and as asked a replica of it (replication
 * confirmed before any fault: replica.h) and a separate resource server
 * that faults never touch, each a server process (server.h) in a dir of
 * the cluster's temp dir (tempdir.h). The header includes both, so a user
 * of the cluster needs only this one.
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

#include "server.h"
#include "tempdir.h"

#define SIM_NODES_MAX 5 /* independent masters of one run or test: v8's five */

/* Flags of sim_cluster_start: which servers besides the primary. */
#define SIM_CLUSTER_REPLICA 0x1  /* a replica of the primary, replication confirmed */
#define SIM_CLUSTER_RESOURCE 0x2 /* a separate server that faults never touch */

typedef struct sim_cluster {
    char dir[SIM_PATH_LEN];  /* the temp dir holding every server's dir; "" when stopped */
    unsigned flags;          /* what sim_cluster_start was asked for */
    sim_server primary;      /* always started */
    sim_server replica;      /* pid 0 unless SIM_CLUSTER_REPLICA */
    sim_server resource;     /* pid 0 unless SIM_CLUSTER_RESOURCE */
} sim_cluster;

/* A temp dir, the primary, and the servers named by flags, each waiting
 * for PING; a replica is attached and confirmed before this returns. On
 * error everything started so far is stopped again. */
int sim_cluster_start(sim_cluster *cl, unsigned flags, char *errstr,
                      size_t len);

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
