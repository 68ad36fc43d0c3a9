/* control: the control block that the simulated clients share with the
 * simulator, and the connections a process makes from it.
 *
 * Each client is the program build/vN/client (sim/client/client_main.c linked
 * with one stage): the fleet (fleet.h) forks and execs it, so a crash is a real
 * SIGKILL and a pause (SIGSTOP) freezes every thread of it, v6's watchdog
 * too.
 *
 * The control block is a small file mapped MAP_SHARED by the simulator, its
 * clients and the observer: the run's settings, each client's plan, where
 * each node of the lock lives now (clients follow a failover or a restart
 * through it on their next reconnect), start flags, and the steps each
 * client has reached, which the scenario waits on to sequence its steps. Fields that change during a run
 * are atomics: lock-free atomics work across processes. */
#ifndef SIM_CONTROL_H
#define SIM_CONTROL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <hiredis/hiredis.h>

#include "stage.h"

#define SIM_CLIENTS_MAX 8       /* clients per run: baseline has 8 */
#define SIM_CONTROL_PATH_LEN 320 /* a temp dir (SIM_PATH_LEN) plus a file name */
#define SIM_LOCK_NAME_LEN 64    /* the lock's key */
#define SIM_ORCHESTRATOR SIM_CLIENTS_MAX /* the slot the simulator itself syncs with */

/* How the clients sync with the observer (observer.h). */
#define SIM_OBSERVED_NONE 0    /* no observer (the bench) */
#define SIM_OBSERVED_MARKERS 1 /* Redis: a marker published on each node */
#define SIM_OBSERVED_ASKED 2   /* ZooKeeper: asked through the control block */

/* Steps a client reaches; the control block keeps when each was first
 * reached, so a scenario can start the next client "0.5 L after A entered
 * its critical section" even when A has long left it. */
typedef enum sim_phase {
    SIM_PHASE_READY,     /* the process is up and waits for its start flag */
    SIM_PHASE_STARTED,   /* it got the flag and runs its plan */
    SIM_PHASE_WAITING,   /* it invoked acquire */
    SIM_PHASE_IN_CS,     /* it entered its critical section */
    SIM_PHASE_RELEASING, /* it invoked release */
    SIM_PHASE_STOPPED,   /* a failpoint stopped the whole process */
    SIM_PHASE_DONE,      /* it exited or was killed (set by the simulator) */
    SIM_PHASE_COUNT
} sim_phase;

/* What a client does with the lock. */
typedef enum sim_plan_kind {
    SIM_PLAN_ONCE,      /* acquire, critical section, release */
    SIM_PLAN_LOOP,      /* the same, again and again until the stock is sold */
    SIM_PLAN_REENTRANT, /* acquire again from inside the critical section */
    SIM_PLAN_STRANGER,  /* release a lock it never acquired */
    SIM_PLAN_BENCH_SOLO, /* bench: lock+unlock pairs in batches the bench
                          * hands out, timed in the slot, no history */
    SIM_PLAN_BENCH_RMW   /* bench: lock, counter + 1 on the resource server,
                          * unlock, until the run stops; recorded like ONCE */
} sim_plan_kind;

typedef struct sim_plan {
    int kind;      /* a sim_plan_kind */
    long hold_ms;  /* work in the critical section, between read and write */
    long wait_ms;  /* acquire's wait budget */
    long lease_ms; /* the lease this client asks for */
    int until;     /* after its hold, the section also waits for finish */
    unsigned seed; /* LOOP: varies each hold between hold/2 and hold */
} sim_plan;

typedef struct sim_client_slot {
    sim_plan plan;                            /* written before the spawn */
    atomic_int go;                            /* the simulator's start flag */
    atomic_int finish;                        /* ends a section that waits for it */
    atomic_llong reached_ns[SIM_PHASE_COUNT]; /* CLOCK_MONOTONIC; 0 = not yet */
    atomic_long stop_ms;  /* a failpoint's stop(ms) asks the simulator to resume it */
    atomic_llong synced[SIM_NODES_MAX]; /* the last sync marker the observer has
                                         * seen on each node */
    atomic_llong asked;        /* the last sync asked of an observer that reads
                                * the servers itself (SIM_OBSERVED_ASKED); it
                                * answers in synced[0] */
    atomic_int all_named;      /* its asks are answered once every end the
                                * observer saw is named too (zk_observer.h):
                                * the simulator's at the run's end, a
                                * client's whose session is about to close */
    atomic_llong bench_target; /* BENCH_SOLO: pairs to have done; the bench raises it */
    atomic_llong bench_done;   /* BENCH_SOLO: pairs done so far */
    atomic_llong bench_ns;     /* BENCH_SOLO: time spent doing them */
    atomic_int via_port[SIM_NODES_MAX]; /* the proxy's port for this client's
                                         * link to each node (proxy.h); 0: it
                                         * connects to the node directly */
    atomic_uint cut;           /* a bit per node: the proxy drops what this
                                * client and that node send each other */
} sim_client_slot;

typedef struct sim_control {
    char history_path[SIM_CONTROL_PATH_LEN]; /* the run's history file */
    char lock_name[SIM_LOCK_NAME_LEN];       /* the lock every client contends for */
    long lease_ms;             /* L, the run's lease */
    long retry_ms;             /* between tries, in stages that poll */
    long timeout_ms;           /* connect and command timeout of the clients */
    int nodes;                 /* the lock's independent masters, node 0.. */
    long node_timeout_ms;      /* the clients' wait for one node's reply;
                                * 0: the stage's default */
    int resource_port;         /* the stock lives here; faults never touch it */
    int sentinel_port;         /* > 0: clients ask this sentinel for node 0 */
    char sentinel_master[SIM_LOCK_NAME_LEN]; /* the name the sentinel monitors */
    atomic_int node_port[SIM_NODES_MAX]; /* where each node lives now */
    char password[SIM_LOCK_NAME_LEN]; /* the run's password (password.h):
                                 * every connection of the provider, the
                                 * observer's and the sentinel's sends
                                 * AUTH, a ZooKeeper session its digest */
    int nodes_auth;            /* the lock's nodes ask for the password
                                * (Redis): the proxy answers a client's AUTH */
    int observed;              /* SIM_OBSERVED_*: whether an observer records
                                * the lock's events, and how clients sync with
                                * it before recording an acquire */
    atomic_int observer_port[SIM_NODES_MAX]; /* where the observer is subscribed
                                              * to each node, 0 = not yet */
    atomic_int stop;           /* the run is over: loops end, the observer exits */
    int nclients;              /* slots in use */
    sim_client_slot client[SIM_CLIENTS_MAX + 1]; /* + SIM_ORCHESTRATOR */
} sim_control;

/* ---- the control block (simulator and clients) ---- */

/* Creates the file at path, zeroed, and maps it. NULL with errstr. */
sim_control *sim_control_create(const char *path, char *errstr,
                                       size_t len);

/* Maps an existing control block (in a client process). NULL with errstr. */
sim_control *sim_control_open(const char *path, char *errstr,
                                     size_t len);

void sim_control_close(sim_control *ctl);

/* Notes that client reached phase now, the first time only. */
void sim_control_reach(sim_control *ctl, int client, sim_phase phase);

/* When client first reached phase (CLOCK_MONOTONIC ns), 0 if not yet. */
int64_t sim_control_reached(const sim_control *ctl, int client, sim_phase phase);

/* A connection for a Redis stage's provider (arg = the control
 * block): a new connection to where node lives now; node 0's primary is
 * asked from the sentinel when there is one. NULL with one line in
 * errstr. */
redisContext *sim_control_connect_node(void *arg, int node, char *errstr, size_t len);

/* Where node lives now (the sentinel asked for node 0 when there is
 * one): its port, or -1 with errstr. */
int sim_control_node_port(const sim_control *ctl, int node, char *errstr, size_t len);

/* A new connection from client to node for its lock: through the proxy
 * when the client's slot names a port there (a run that cuts links),
 * else as sim_control_connect_node. NULL with errstr. */
redisContext *sim_control_connect_via(const sim_control *ctl, int client, int node,
                                      char *errstr, size_t len);

/* The port a sentinel (on connection c) names as master's address now;
 * -1 when it does not know. */
int sim_control_sentinel_master(redisContext *c, const char *master);

/* A new connection to the resource server. NULL with errstr. */
redisContext *sim_control_connect_resource(const sim_control *ctl, char *errstr,
                                          size_t len);

#endif
