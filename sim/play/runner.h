/* runner: plays a scenario against a stage, the way Jepsen runs a test.
 *
 * sim_runner_play starts the servers (servers.h: the kind the stage names), the observer and the
 * fleet of client processes (and, in a run that cuts a client's link, the proxy between them
 * and the servers: proxy.h), starts each client when its trigger fires,
 * lets the nemesis inject the fault when its time comes, and returns the
 * history. It never judges: the checker does that. One thread, one loop:
 * every tick it reaps or notices stopped clients, lets the nemesis resume
 * the pauses that are due, starts the clients whose trigger fired and
 * strikes. Whatever happens, every process it started is killed and
 * reaped and its temp dir removed.
 *
 * sim_runner_play_cells plays many such runs side by side: the fault
 * matrix in a fraction of the time it takes one after another. */
#ifndef SIM_RUNNER_H
#define SIM_RUNNER_H

#include <stddef.h>
#include <stdint.h>

#include "history.h"
#include "pool.h"
#include "scenarios.h"

/* How to run: which client program (so which stage), and the lease. */
typedef struct sim_run_config {
    int stage;                  /* 1..SIM_STAGES */
    const char *client_program; /* build/vN/client of that stage */
    long lease_ms;              /* L */
    unsigned seed;              /* varies the crowd's hold times */
    int sentinel;               /* failover by a real redis-sentinel */
    int proxy;                  /* every run through the proxy: a library's
                                 * driver is given one address per node, which
                                 * the proxy keeps pointing at the node where it
                                 * lives now (a failover, a restart) */
} sim_run_config;

/* What a run leaves: its history, sorted by time. */
typedef struct sim_run {
    const sim_scenario *scenario;
    sim_run_config cfg;
    sim_run_info info;      /* stage, scenario, failpoint... for a saved file */
    sim_event *ev;          /* the events; sim_runner_free frees them */
    size_t n;
    int64_t t0_ns;          /* the history's start */
    int nclients;           /* clients A.. in the run */
    int failpoint_armed;    /* the scenario arms a failpoint */
    int failpoint_fired;    /* and the stage reached its step */
    int64_t elapsed_ms;     /* wall time of the run, setup included */
} sim_run;

/* Plays s with cfg. 0 with run filled (free it with sim_runner_free), or
 * -1 with errstr when the run itself broke (a server, a client process,
 * the failover's precondition); every process it started is gone either
 * way. */
int sim_runner_play(const sim_scenario *s, const sim_run_config *cfg,
                    sim_run *run, char *errstr, size_t len);

void sim_runner_free(sim_run *run);

/* Whether s's fault kills or restarts a server: a run whose fault does
 * neither may share its servers with other runs (a clock jump on shared
 * servers is the kind's to allow, servers.h). */
int sim_runner_kills_servers(const sim_scenario *s);

/* The clock library, built next to the stages' folders of the client
 * program's build: build/clockshim.so for build/v3/client. Its whole
 * path into shim (PATH_MAX bytes), 0; or -1 with errstr. */
int sim_runner_clock_shim(const char *client_program, char *shim, char *errstr,
                          size_t len);

/* One cell of a matrix: a scenario against a stage. */
typedef struct sim_cell {
    const sim_scenario *s;
    int stage;
    const char *program;   /* build/vN/client of that stage */
} sim_cell;

/* Plays each cell with cfg (its stage and program taken from the cell),
 * each in a process of its own, `jobs` at a time (pool.h): runs[i] is
 * what sim_runner_play returns for cells[i], in the order of cells. Each
 * cell starts its own servers on its own ports in its own temp dir, so
 * the cells cannot meet; but where a kind shares servers (a ZooKeeper
 * ensemble, servers.h), the cells whose fault kills or restarts no server
 * use one started here, each under a lock name of its own. progress (may be NULL) is told of each cell
 * played. 0, or -1 with errstr naming the cell that broke; runs hold
 * nothing then. */
int sim_runner_play_cells(const sim_cell *cells, size_t n,
                          const sim_run_config *cfg, int jobs,
                          sim_pool_progress progress, void *progress_arg,
                          sim_run *runs, char *errstr, size_t len);

#endif
