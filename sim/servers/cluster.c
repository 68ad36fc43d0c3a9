/* cluster: the servers of a run in one temp dir, and the cleanup of all
 * that this process started. See cluster.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "cluster.h"
#include "proc.h"
#include "replica.h"
#include "util.h"

/* "node0", or "primary" for a lone node: the name of its dir. */
static void node_name(const sim_cluster *cl, int i, char *out, size_t len)
{
    if (cl->nodes == 1)
        snprintf(out, len, "primary");
    else
        snprintf(out, len, "node%d", i);
}

/* Starts node i as name, under the clock library when the cluster has one. */
static int start_node(sim_cluster *cl, int i, const char *name, char *errstr, size_t len)
{
    sim_clock_env ce;

    if (cl->clock_shim == NULL)
        return sim_server_start(&cl->node[i], cl->dir, name, NULL, errstr, len);
    sim_clockfile_env(&ce, cl->clock_shim, cl->clock_file[i]);
    return sim_server_start_env(&cl->node[i], cl->dir, name, NULL, ce.env, errstr, len);
}

int sim_cluster_clock_jump(sim_cluster *cl, int i, long ms, char *errstr, size_t len)
{
    if (cl->clock_shim == NULL || i < 0 || i >= cl->nodes)
        return sim_error(errstr, len, "node %d's clock cannot jump: its servers were not "
                         "started under the clock library", i);
    return sim_clockfile_jump(cl->clock_file[i], ms, errstr, len);
}

int sim_cluster_start(sim_cluster *cl, int nodes, unsigned flags, char *errstr,
                      size_t len)
{
    return sim_cluster_start_clock(cl, nodes, flags, NULL, errstr, len);
}

int sim_cluster_start_clock(sim_cluster *cl, int nodes, unsigned flags,
                            const char *shim, char *errstr, size_t len)
{
    char name[32];
    int rc = 0, i;

    memset(cl, 0, sizeof(*cl));
    cl->flags = flags;
    cl->nodes = nodes;
    cl->clock_shim = shim;
    if (nodes < 1 || nodes > SIM_NODES_MAX)
        return sim_error(errstr, len, "a cluster of %d nodes: give 1 to %d", nodes,
                         SIM_NODES_MAX);
    if (sim_tempdir_create(cl->dir, sizeof(cl->dir), errstr, len) != 0)
        return -1;
    for (i = 0; i < nodes && rc == 0; i++) {
        node_name(cl, i, name, sizeof(name));
        if (shim != NULL)
            rc = sim_clockfile_create(cl->clock_file[i], cl->dir, name, errstr, len);
        if (rc == 0)
            rc = start_node(cl, i, name, errstr, len);
    }
    if (rc == 0 && (flags & SIM_CLUSTER_REPLICA))
        rc = sim_server_start(&cl->replica, cl->dir, "replica", NULL, errstr, len);
    if (rc == 0 && (flags & SIM_CLUSTER_REPLICA))
        rc = sim_replica_attach(&cl->replica, &cl->node[0], errstr, len);
    if (rc == 0 && (flags & SIM_CLUSTER_RESOURCE))
        rc = sim_server_start(&cl->resource, cl->dir, "resource", NULL, errstr, len);
    if (rc != 0)
        sim_cluster_stop(cl);
    return rc;
}

void sim_cluster_down(sim_cluster *cl, int i)
{
    sim_server_kill(&cl->node[i]);
}

int sim_cluster_restart(sim_cluster *cl, int i, char *errstr, size_t len)
{
    char first[16], name[48];

    sim_server_kill(&cl->node[i]);
    /* Its old dir stays, with the log of its first life. */
    node_name(cl, i, first, sizeof(first));
    snprintf(name, sizeof(name), "%s-restart%d", first, ++cl->restarts);
    return start_node(cl, i, name, errstr, len);
}

void sim_cluster_stop(sim_cluster *cl)
{
    int i;

    for (i = 0; i < SIM_NODES_MAX; i++)
        sim_server_kill(&cl->node[i]);
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
