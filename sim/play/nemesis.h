/* nemesis: the faults, and only the faults.
 *
 *   pause     SIGSTOP a client process, SIGCONT it after a while: a GC
 *             pause, a VM migration; every thread stops, v6's watchdog too.
 *   crash     SIGKILL a client process.
 *   stop      a client stopped itself at a failpoint (failpoint.h): resume
 *             it after the time it asked for.
 *   failover  the lock's primary (or leader) is killed while a client
 *             holds the lock, and another server takes its place without
 *             it; clients follow. Of a lock of several nodes, node 0.
 *   down      a node is killed and stays down: clients cannot reach it.
 *   restart   a node comes back empty (nothing persisted): the lock it
 *             held is gone.
 *   cut       a client is cut off from some or all of the lock's nodes
 *             (proxy.h): what it sends them and what they answer is
 *             dropped, its calls time out; its process runs on, and its
 *             resource server stays reachable. Healed after a while, or
 *             when the scenario says.
 *   clock     a node's wall clock jumps forward: its keys run out early.
 *
 * The nemesis decides when; how a server fails is its kind's
 * (servers.h: Redis holds a replica's stream so that the promotion
 * loses the lock deterministically), and the kind records each step.
 * Pauses, crashes and cuts go into the history here. The nemesis never
 * touches the resource server. */
#ifndef SIM_NEMESIS_H
#define SIM_NEMESIS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "control.h"
#include "history.h"
#include "proxy.h"
#include "servers.h"

typedef struct sim_nemesis {
    sim_servers *srv;          /* the servers of the run */
    sim_control *ctl;          /* the clients' control block */
    sim_history *h;            /* where faults are recorded */
    const pid_t *pids;         /* the clients' processes, by index */
    int64_t resume_ns[SIM_CLIENTS_MAX]; /* a paused client's SIGCONT time; 0 = none */
    int self_stop[SIM_CLIENTS_MAX];     /* the pause came from its own failpoint */
    unsigned cut[SIM_CLIENTS_MAX];      /* the nodes a client is cut off from */
    int64_t heal_ns[SIM_CLIENTS_MAX];   /* when its cut heals; 0 = when told */
} sim_nemesis;

void sim_nemesis_init(sim_nemesis *n, sim_servers *srv, sim_control *ctl,
                      sim_history *h, const pid_t *pids);

/* SIGSTOP now; sim_nemesis_tick sends SIGCONT after ms. */
void sim_nemesis_pause(sim_nemesis *n, int client, long ms);

/* SIGKILL now (reaped by whoever polls the client). */
void sim_nemesis_crash(sim_nemesis *n, int client);

/* The client's process was seen stopped: when its own failpoint stopped
 * it, schedule its SIGCONT for the time it asked for. */
void sim_nemesis_stopped(sim_nemesis *n, int client);

/* Resumes the paused clients, and heals the cuts, whose time has come. */
void sim_nemesis_tick(sim_nemesis *n);

/* 1 while some client waits for its SIGCONT or its link. */
int sim_nemesis_busy(const sim_nemesis *n);

/* Cuts client off from the nodes of the set (a bit each) for ms, or
 * until sim_nemesis_heal (ms 0). The run's clients must go through the
 * proxy (proxy.h). */
void sim_nemesis_cut(sim_nemesis *n, int client, unsigned nodes, long ms);

/* Client's cut links carry bytes again. */
void sim_nemesis_heal(sim_nemesis *n, int client);

/* Node's wall clock jumps ms forward (servers.h). 0, or -1 with errstr. */
int sim_nemesis_clock_jump(sim_nemesis *n, int node, long ms, char *errstr, size_t len);

/* Failover (servers.h), while a client holds the lock: its first half
 * was prepared before the lock was taken. 0, or -1 with errstr. */
int sim_nemesis_failover(sim_nemesis *n, char *errstr, size_t len);

/* Node goes down (SIGKILL) and stays down until it restarts. */
void sim_nemesis_down(sim_nemesis *n, int node);

/* Node restarts empty; clients and the observer follow it before this
 * returns. 0, or -1 with errstr. */
int sim_nemesis_restart(sim_nemesis *n, int node, char *errstr, size_t len);

#endif
