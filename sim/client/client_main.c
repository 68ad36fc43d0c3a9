/* client_main: the main of build/vN/client, one simulated client process.
 *
 *   client <control-file> <index>
 *
 * Started by the simulator's fleet (sim_fleet_spawn), never by hand: it maps the
 * run's control block and history, arms its failpoints from
 * DLOCK_FAILPOINTS, says it is ready, waits for its start flag and runs its
 * plan through the stage it was linked with. Exit status 0 when the plan
 * ran (whatever the lock answered), 2 when the run itself is broken. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "control.h"
#include "failpoint.h"
#include "history.h"
#include "workload.h"

#define GO_POLL_US 2000 /* how often a ready client looks for its start flag: the
                        * runner sets it on its own 2 ms tick */
#define EXIT_BROKEN 2

static int broken(const char *what, const char *why)
{
    fprintf(stderr, "client: %s: %s\n", what, why);
    return EXIT_BROKEN;
}

/* Ready, then wait for the start flag (or the end of the run). */
static int wait_for_go(sim_control *ctl, int client)
{
    struct timespec ts = { 0, GO_POLL_US * 1000 };

    sim_control_reach(ctl, client, SIM_PHASE_READY);
    while (!atomic_load(&ctl->client[client].go)) {
        if (atomic_load(&ctl->stop))
            return -1;
        nanosleep(&ts, NULL);
    }
    sim_control_reach(ctl, client, SIM_PHASE_STARTED);
    return 0;
}

static int run(sim_control *ctl, sim_history *h, int client)
{
    sim_workload w;
    char why[256];
    int rc;

    if (sim_workload_init(&w, ctl, h, client, why, sizeof(why)) != 0) {
        sim_workload_close(&w);
        return broken("setup", why);
    }
    rc = wait_for_go(ctl, client) == 0 ? sim_workload_run(&w) : 0;
    if (rc != 0)
        rc = broken("workload", w.errstr);
    sim_workload_close(&w);
    return rc;
}

int main(int argc, char **argv)
{
    const char *failpoints = getenv(SIM_FAILPOINT_ENV);
    sim_control *ctl;
    sim_history *h;
    char why[256];
    int client, rc;

    if (argc != 3)
        return broken("usage", "client <control-file> <index> (started by sim)");
    client = atoi(argv[2]);
    if (failpoints != NULL && sim_failpoint_check(failpoints, why, sizeof(why)) != 0)
        return broken(SIM_FAILPOINT_ENV, why);
    if ((ctl = sim_control_open(argv[1], why, sizeof(why))) == NULL)
        return broken("control block", why);
    if (client < 0 || client >= ctl->nclients) {
        sim_control_close(ctl);
        return broken("index", "not a client of this run");
    }
    if ((h = sim_history_open(ctl->history_path, why, sizeof(why))) == NULL) {
        sim_control_close(ctl);
        return broken("history", why);
    }
    sim_failpoint_attach(h, ctl, client);
    rc = run(ctl, h, client);
    sim_history_close(h);
    sim_control_close(ctl);
    return rc;
}
