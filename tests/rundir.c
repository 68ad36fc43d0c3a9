/* rundir: the run's temp dir and its cleanup. See rundir.h. */
#include <stdio.h>
#include <stdlib.h>

#include "cluster.h"
#include "rundir.h"
#include "tempdir.h"

static char root[SIM_PATH_LEN]; /* the run's temp dir */

void rundir_init(void)
{
    char err[256];

    /* Check forks a process per test: flush each line before it does, or
     * the children repeat what the parent had buffered. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (sim_tempdir_create(root, sizeof(root), err, sizeof(err)) != 0) {
        fprintf(stderr, "tests: %s\n", err);
        exit(EXIT_FAILURE);
    }
    atexit(sim_cluster_cleanup);
    sim_cluster_cleanup_on_signal();
}

const char *rundir_path(void)
{
    return root;
}
