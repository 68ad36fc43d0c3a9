/* servers: the lock's servers of one run, whatever their kind, behind one
 * interface (Jepsen's db protocol).
 *
 * A stage's line in sim/stages.def names the kind of server its lock
 * talks to ("redis", "zookeeper", "mariadb"); the runner looks the kind up once per run and then
 * only calls the functions below, so neither the runner nor the nemesis
 * asks which server it talks to. A kind implements, once:
 *
 *   start     the lock's nodes and the resource server (a Redis server of
 *             its own, for every kind), in one temp dir, each proven ready;
 *             a standby for the failover when asked
 *   attach    clients and the observer: where each node listens goes into
 *             the control block, and an observer records who holds the
 *             lock into the history, stamped as it happens
 *   prepare   the failover's first half, before the lock is taken (Redis:
 *             the replica's stream is held)
 *   failover  the primary or leader is killed; another takes its place
 *             without the lock; clients follow
 *   down      a node is killed and stays down
 *   restart   a node comes back empty (nothing persisted)
 *   clock     a node's wall clock jumps forward (optional: a kind that
 *             cannot leaves it NULL, and the call says so)
 *   drain     every event the clients caused is in the history
 *   stop      every process killed and reaped, the temp dir removed
 *
 * Each server fault is recorded in the history by the kind that performs
 * it: the nemesis decides when, the kind knows how.
 *
 * Adding a kind: a file in this folder that defines a const
 * sim_servers_kind, and its line in the table of servers.c.
 *
 * Errors, hiredis-style: 0, or -1 with one line of reason in errstr. */
#ifndef SIM_SERVERS_H
#define SIM_SERVERS_H

#include <stddef.h>

#include "control.h"
#include "history.h"
#include "stage.h"
#include "tempdir.h"

/* Flags of sim_servers_start. */
#define SIM_SERVERS_STANDBY 0x1  /* what a failover promotes (Redis: a replica of node 0) */
#define SIM_SERVERS_SENTINEL 0x2 /* Redis: a real redis-sentinel promotes it */
#define SIM_SERVERS_CLOCK 0x4    /* each node's wall clock can jump (clock_jump):
                                  * Redis runs it under a preload library */
#define SIM_SERVERS_SHARED 0x8   /* the run kills and restarts no server: it
                                  * may use the servers sim_servers_share
                                  * started, with a lock name of its own */

typedef struct sim_servers sim_servers;

typedef struct sim_servers_kind {
    const char *name; /* as sim/stages.def names it */
    size_t state;     /* the size of its own state (impl): allocated zeroed
                       * before start, freed after stop */
    int (*start)(sim_servers *s, unsigned flags, char *errstr, size_t len);
    int (*attach)(sim_servers *s, char *errstr, size_t len);
    int (*prepare)(sim_servers *s, char *errstr, size_t len);
    int (*failover)(sim_servers *s, char *errstr, size_t len);
    void (*down)(sim_servers *s, int node);
    int (*restart)(sim_servers *s, int node, char *errstr, size_t len);
    void (*drain)(sim_servers *s);
    void (*stop)(sim_servers *s);
    int (*clock_jump)(sim_servers *s, int node, long ms, char *errstr, size_t len);
    /* Optional (NULL: each run starts its own): servers that the runs of
     * one matrix share when their fault kills and restarts none; started
     * in the process that forks the runs, before it does, under the clock
     * library. A run whose fault moves a clock (SIM_SERVERS_CLOCK) shares
     * them only where the kind knows that no other run's lock is timed by
     * that clock. */
    int (*share)(const char *clock_shim, char *errstr, size_t len);
    void (*unshare)(void);
} sim_servers_kind;

struct sim_servers {
    const sim_servers_kind *kind;
    char dir[SIM_PATH_LEN];      /* the run's temp dir; "" when stopped */
    int nodes;                   /* node 0 .. nodes - 1 hold the lock */
    int lanes;                   /* the lock's lanes in the history: a lane
                                  * per node that keeps a lock of its own
                                  * (Redis), or 1 for nodes that keep one
                                  * together (a ZooKeeper ensemble) */
    int port[SIM_NODES_MAX];     /* where node i listens now */
    int resource_port;           /* the stock's server, which faults never touch */
    sim_history *h;              /* where server faults and lock events go */
    sim_control *ctl;            /* where clients find the nodes */
    void *impl;                  /* the kind's own state */
    const char *clock_shim;      /* SIM_SERVERS_CLOCK: the preload library that
                                  * moves a node's clock (clockshim.c) */
};

/* The kind named so in sim/stages.def, or NULL when no file here
 * implements it. */
const sim_servers_kind *sim_servers_kind_get(const char *name);

/* Starts nodes of stage's kind (flags: SIM_SERVERS_*). On error nothing
 * is left running. */
int sim_servers_start(sim_servers *s, const sim_stage *stage, unsigned flags,
                      char *errstr, size_t len);

/* The same, with SIM_SERVERS_CLOCK among the flags: the nodes' clocks
 * can jump, through the preload library at clock_shim (a path that
 * outlives the servers). */
int sim_servers_start_clock(sim_servers *s, const sim_stage *stage, unsigned flags,
                            const char *clock_shim, char *errstr, size_t len);

/* The clients' control block (its node ports filled in here) and the
 * history; starts the observer. */
int sim_servers_attach(sim_servers *s, sim_history *h, sim_control *ctl,
                       char *errstr, size_t len);

int sim_servers_prepare_failover(sim_servers *s, char *errstr, size_t len);
int sim_servers_failover(sim_servers *s, char *errstr, size_t len);
void sim_servers_down(sim_servers *s, int node);
int sim_servers_restart(sim_servers *s, int node, char *errstr, size_t len);
void sim_servers_drain(sim_servers *s);

/* Node's wall clock jumps ms forward: the kind records it in the
 * history. 0, or -1 with errstr (a kind that cannot, or servers started
 * without SIM_SERVERS_CLOCK). */
int sim_servers_clock_jump(sim_servers *s, int node, long ms, char *errstr, size_t len);

/* Idempotent; safe after a failed start. */
void sim_servers_stop(sim_servers *s);

/* Before a matrix forks its runs: the servers that the runs of stage's
 * kind started with SIM_SERVERS_SHARED use (a ZooKeeper ensemble takes
 * seconds of CPU to start; a run that kills no server need not start its
 * own), each node under the clock library at clock_shim (a path that
 * outlives them). Once per kind; nothing for a kind that shares none. 0,
 * or -1 with errstr. */
int sim_servers_share(const sim_stage *stage, const char *clock_shim, char *errstr,
                      size_t len);

/* Stops every kind's shared servers. Idempotent. */
void sim_servers_unshare(void);

#endif
