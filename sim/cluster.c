/* cluster: the servers of a run in one temp dir, and the cleanup of all
 * that this process started. See cluster.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "cluster.h"
#include "proc.h"
#include "replica.h"

int sim_cluster_start(sim_cluster *cl, unsigned flags, char *errstr, size_t len)
{
    int rc;

    memset(cl, 0, sizeof(*cl));
    cl->flags = flags;
    if (sim_tempdir_create(cl->dir, sizeof(cl->dir), errstr, len) != 0)
        return -1;
    rc = sim_server_start(&cl->primary, cl->dir, "primary", NULL, errstr, len);
    if (rc == 0 && (flags & SIM_CLUSTER_REPLICA))
        rc = sim_server_start(&cl->replica, cl->dir, "replica", NULL, errstr, len);
    if (rc == 0 && (flags & SIM_CLUSTER_REPLICA))
        rc = sim_replica_attach(&cl->replica, &cl->primary, errstr, len);
    if (rc == 0 && (flags & SIM_CLUSTER_RESOURCE))
        rc = sim_server_start(&cl->resource, cl->dir, "resource", NULL, errstr, len);
    if (rc != 0)
        sim_cluster_stop(cl);
    return rc;
}

void sim_cluster_stop(sim_cluster *cl)
{
    sim_server_kill(&cl->primary);
    sim_server_kill(&cl->replica);
    sim_server_kill(&cl->resource);
    if (cl->dir[0] != '\0') {
        sim_tempdir_remove(cl->dir);
        cl->dir[0] = '\0';
    }
}

/* ---- cleanup ---------------------------------------------------------------
 * Only async-signal-safe calls from here on: both cleanups use system calls
 * and atomics only. */

void sim_cluster_cleanup(void)
{
    sim_proc_cleanup();
    sim_tempdir_cleanup();
}

static void on_signal(int sig)
{
    int saved = errno;

    sim_cluster_cleanup();
    errno = saved;
    /* SA_RESETHAND restored the default action; the signal is blocked
     * until we return, then it ends the process as it would have. */
    raise(sig);
}

void sim_cluster_cleanup_on_signal(void)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
    struct sigaction sa;
    size_t i;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaddset(&sa.sa_mask, sigs[i]);
    for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaction(sigs[i], &sa, NULL);
}
