/* scenarios: what happens when, Jepsen's generator.
 *
 * One table (scenarios.c) of short definitions: the clients and their
 * plans, when each starts, the fault, the budgets, every time in leases L
 * (default 300 ms), a one-line statement of what the scenario shows, and
 * the cell the answer key expects for each stage: its row of the fault
 * matrix. The tests and the demo are driven by that table; the runner
 * (runner.h) plays a scenario against a stage. */
#ifndef SIM_SCENARIOS_H
#define SIM_SCENARIOS_H

#include <stddef.h>
#include <stdint.h>

#include "control.h"
#include "stage.h"

#define SIM_DEFAULT_LEASE_MS 300   /* L */
#define SIM_AFTER_START 0          /* trigger: the run's start */
#define SIM_AFTER_FAULT '!'        /* trigger: the fault has been injected */

/* When something happens: delay leases after client `after` first
 * reached `phase` (or ended without reaching it). */
typedef struct sim_trigger {
    char after;   /* a client letter, SIM_AFTER_START or SIM_AFTER_FAULT */
    int phase;    /* a sim_phase of that client */
    double delay; /* in leases */
} sim_trigger;

typedef struct sim_actor {
    char name;             /* 'A', 'B', ... in order; 0 ends the list */
    int plan;              /* a sim_plan_kind */
    double hold;           /* critical section, in leases */
    double wait;           /* acquire's wait budget, in leases */
    double lease;          /* its own lease in leases L; 0 = L */
    sim_trigger start;     /* when it starts */
    sim_trigger until;     /* its critical section lasts its hold and until
                            * this fires; .after 0 = just its hold */
    const char *failpoint; /* armed in its environment, times in leases:
                            * "release.after_get=stop(3L)"; NULL = none */
    int copies;            /* LOOP crowds: this many clients, A, B, ... */
} sim_actor;

typedef enum sim_fault_kind {
    SIM_FAULT_NONE,
    SIM_FAULT_PAUSE,    /* SIGSTOP the target for len leases */
    SIM_FAULT_CRASH,    /* SIGKILL the target */
    SIM_FAULT_FAILOVER, /* promote node 0's replica, which lacks the lock */
    SIM_FAULT_RESTART,  /* node 0 restarts empty (no persistence), and the
                         * nodes that were down come back, empty too */
    SIM_FAULT_PARTITION, /* the target is cut off from every node of the
                          * lock for len leases (a black hole: its calls
                          * time out); its process and its resource
                          * server run on */
    SIM_FAULT_CLOCK_JUMP /* a node's wall clock jumps len leases forward:
                          * node 0, or, of a lock of several with `down`
                          * nodes, the last node of the target's bare
                          * majority */
} sim_fault_kind;

typedef struct sim_fault {
    int kind;          /* a sim_fault_kind */
    char target;       /* the client paused or crashed */
    sim_trigger when;  /* when the nemesis strikes */
    double len;        /* pause, partition: how long; clock jump: how
                        * far; in leases */
    int down;          /* restart: the last `down` nodes of a lock of
                        * several are down from the start until it
                        * strikes; clock jump: the target is cut off
                        * from them until then (a lock of one node has
                        * none to spare) */
    double timeout;    /* the clients' connect and command timeout, in
                        * leases, where the fault makes calls time out;
                        * 0: the runner's, far above any reply's delay */
} sim_fault;

typedef struct sim_scenario {
    const char *name;                 /* "slow-holder" */
    const char *shows;                /* one line: what it shows */
    long stock;                       /* the resource's initial stock */
    sim_actor actors[SIM_CLIENTS_MAX + 1];
    sim_fault fault;
    const char *expect[SIM_STAGES];   /* the answer key, one cell per stage in
                                       * order: "ME MD", "-", ...; a stage
                                       * without a cell answers like its base */
} sim_scenario;

/* The table. */
size_t sim_scenario_count(void);
const sim_scenario *sim_scenario_at(size_t i);
const sim_scenario *sim_scenario_find(const char *name); /* NULL if unknown */

/* The answer key's cell for a stage, as anomaly bits (checker.h): its
 * own cell, or else its base's (sim/stages.def), and so on. */
unsigned sim_scenario_expected(const sim_scenario *s, int stage);

/* The text of that cell ("ME MD"), "?" when no stage on the way has one. */
const char *sim_scenario_key(const sim_scenario *s, int stage);

/* The clients the scenario runs, counting copies. */
int sim_scenario_clients(const sim_scenario *s);

#endif
