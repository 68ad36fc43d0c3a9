/* scenarios: what happens when, Jepsen's generator.
 *
 * One table (scenarios.c) of short definitions: the clients and their
 * plans, when each starts, the fault, the budgets, every time in leases L
 * (default 300 ms), a one-line statement of what the scenario shows, and
 * the cell the answer key expects for each stage: its column of the fault
 * matrix. The tests and the demo are driven by that table.
 *
 * sim_scenario_run plays one scenario against one stage: it starts the
 * servers, the observer and one process per client, starts each client
 * when its trigger fires, lets the nemesis inject the fault, and returns
 * the history. It never judges: the checker does that. */
#ifndef SIM_SCENARIOS_H
#define SIM_SCENARIOS_H

#include <stddef.h>
#include <stdint.h>

#include "client.h"
#include "history.h"
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
    SIM_FAULT_FAILOVER  /* promote a replica that lacks the lock */
} sim_fault_kind;

typedef struct sim_fault {
    int kind;          /* a sim_fault_kind */
    char target;       /* the client paused or crashed */
    sim_trigger when;  /* when the nemesis strikes */
    double len;        /* pause: how long, in leases */
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

/* How to run: which client program (so which stage), and the lease. */
typedef struct sim_run_config {
    int stage;                  /* 1..SIM_STAGES */
    const char *client_program; /* build/vN/client of that stage */
    long lease_ms;              /* L */
    unsigned seed;              /* varies the crowd's hold times */
    int sentinel;               /* failover by a real redis-sentinel */
} sim_run_config;

/* What a run leaves: its history, sorted by time. */
typedef struct sim_run {
    const sim_scenario *scenario;
    sim_run_config cfg;
    sim_run_info info;      /* stage, scenario, failpoint... for a saved file */
    sim_event *ev;          /* the events; sim_run_free frees them */
    size_t n;
    int64_t t0_ns;          /* the history's start */
    int nclients;           /* clients A.. in the run */
    int failpoint_armed;    /* the scenario arms a failpoint */
    int failpoint_fired;    /* and the stage reached its step */
    int64_t elapsed_ms;     /* wall time of the run, setup included */
} sim_run;

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

/* Plays s with cfg. 0 with run filled (free it with sim_run_free), or -1
 * with errstr when the run itself broke (a server, a client process, the
 * failover's precondition); every process it started is gone either way. */
int sim_scenario_run(const sim_scenario *s, const sim_run_config *cfg,
                     sim_run *run, char *errstr, size_t len);

void sim_run_free(sim_run *run);

#endif
