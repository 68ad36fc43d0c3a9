/* nemesis: the faults, and only the faults.
 *
 *   pause     SIGSTOP a client process, SIGCONT it after a while: a GC
 *             pause, a VM migration; every thread stops, v6's watchdog too.
 *   crash     SIGKILL a client process.
 *   stop      a client stopped itself at a failpoint (failpoint.h): resume
 *             it after the time it asked for.
 *   failover  the replica's stream is held (CLIENT PAUSE WRITE on it)
 *             while a client takes the lock on the primary; the primary is
 *             SIGKILLed and the replica promoted (REPLICAOF NO ONE, CLIENT
 *             UNPAUSE) without the lock; clients follow to it. The
 *             mechanism of an asynchronous replication loss, made
 *             deterministic. With a sentinel, the sentinel promotes. Of a
 *             lock of several nodes, node 0 fails over.
 *   down      a node is SIGKILLed and stays down: clients cannot reach it.
 *   restart   a node comes back as a new, empty server (nothing persisted):
 *             the key it held is gone. Clients and the observer follow it
 *             to its new port.
 *
 * Every step goes into the history (pause begin/end, crash, failover
 * steps, a node down or restarted). The nemesis never touches the
 * resource server. */
#ifndef SIM_NEMESIS_H
#define SIM_NEMESIS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <hiredis/hiredis.h>

#include "control.h"
#include "cluster.h"
#include "history.h"

typedef struct sim_nemesis {
    sim_cluster *cl;           /* the servers of the run */
    sim_control *ctl;          /* where clients find the primary */
    sim_history *h;            /* where faults are recorded */
    const pid_t *pids;         /* the clients' processes, by index */
    int64_t resume_ns[SIM_CLIENTS_MAX]; /* a paused client's SIGCONT time; 0 = none */
    int self_stop[SIM_CLIENTS_MAX];     /* the pause came from its own failpoint */
    redisContext *replica;     /* open while the replica's stream is held */
    const sim_server *sentinel; /* NULL: we promote; else this sentinel does */
    const char *master_name;   /* the name the sentinel monitors */
} sim_nemesis;

void sim_nemesis_init(sim_nemesis *n, sim_cluster *cl, sim_control *ctl,
                      sim_history *h, const pid_t *pids);

/* Failovers are then done by this sentinel (already monitoring the
 * primary under master_name); we only kill the primary and watch. Waits
 * until the sentinel has found the replica. 0, or -1 with errstr. */
int sim_nemesis_use_sentinel(sim_nemesis *n, const sim_server *sentinel,
                             const char *master_name, char *errstr, size_t len);

/* SIGSTOP now; sim_nemesis_tick sends SIGCONT after ms. */
void sim_nemesis_pause(sim_nemesis *n, int client, long ms);

/* SIGKILL now (reaped by whoever polls the client). */
void sim_nemesis_crash(sim_nemesis *n, int client);

/* The client's process was seen stopped: when its own failpoint stopped
 * it, schedule its SIGCONT for the time it asked for. */
void sim_nemesis_stopped(sim_nemesis *n, int client);

/* Resumes the paused clients whose time has come. */
void sim_nemesis_tick(sim_nemesis *n);

/* 1 while some client waits for its SIGCONT. */
int sim_nemesis_busy(const sim_nemesis *n);

/* Failover, first half, before the lock is taken: CLIENT PAUSE WRITE on
 * the replica, so it reads the primary's stream but applies none of it.
 * 0, or -1 with errstr. */
int sim_nemesis_hold_replica(sim_nemesis *n, char *errstr, size_t len);

/* Failover, second half, while a client holds the lock on the primary:
 * asserts the replica really lacks the lock (a failover that keeps it
 * would pass by luck), kills the primary, promotes the replica, points the
 * clients at it and waits for the observer to subscribe there. 0, or -1
 * with errstr. */
int sim_nemesis_failover(sim_nemesis *n, char *errstr, size_t len);

/* Node goes down (SIGKILL) and stays down until it restarts. */
void sim_nemesis_down(sim_nemesis *n, int node);

/* Node restarts empty on a new port; clients are pointed at it and the
 * observer subscribes there before this returns. 0, or -1 with errstr. */
int sim_nemesis_restart(sim_nemesis *n, int node, char *errstr, size_t len);

/* Closes what the nemesis holds open; resumes nobody. */
void sim_nemesis_close(sim_nemesis *n);

#endif
