/* sale: the flash sale's command line (build/sim/sale; make sale).
 *
 *   sale stage=N [segments=K] [units=S] [buyers=B] [pause=MS] [first=1]
 *        [fault=failover|pause] [seed=X] [lease=MS] [wait=MS] [retry=MS] [save=FILE]
 *   sale check FILE     judges a saved sale again
 *   sale bench out=DIR  sales per second for K = 1, 2, 4, 8, 16 (sale_bench.c)
 *
 * Starts a Redis Cluster of six (three masters, three replicas), plays
 * the sale with stage N's lock on each segment, prints the verdict read
 * from the sale's history, and stops the cluster: no server and no temp
 * dir is left behind, also after Ctrl-C. Exit 0 when the sale is clean,
 * 1 when it is not (oversold, a false sold-out...), 2 when it could not
 * be played. The buyers are build/vN/buyer, found next to this program. */
#define _GNU_SOURCE
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "proc.h"
#include "sale.h"
#include "sale_bench.h"
#include "sale_report.h"
#include "stage.h"
#include "util.h"

static char buyer_path[PATH_MAX];

/* name=value's value among argv, or NULL. */
static const char *arg(int argc, char **argv, const char *name)
{
    size_t n = strlen(name);
    int i;

    for (i = 1; i < argc; i++)
        if (strncmp(argv[i], name, n) == 0 && argv[i][n] == '=')
            return argv[i] + n + 1;
    return NULL;
}

static int number(int argc, char **argv, const char *name, long lo, long hi, const char *unit,
                  long *out)
{
    const char *v = arg(argc, argv, name);
    char err[256];

    if (v == NULL)
        return 0;
    if (sim_number(name, v, 1, lo, hi, unit, out, err, sizeof(err)) != 0) {
        fprintf(stderr, "sale: %s\n", err);
        return -1;
    }
    return 0;
}

static int options(int argc, char **argv, sim_sale_opts *o)
{
    long v[11] = { 0, o->segments, o->units, o->buyers, o->pause_ms, o->first, o->seed,
                   o->lease_ms, o->wait_ms, o->retry_ms, o->hold_ms };
    const char *fault = arg(argc, argv, "fault");

    if (arg(argc, argv, "stage") == NULL) {
        fprintf(stderr, "usage: sale stage=N [segments=K] [units=S] [buyers=B] [pause=MS] "
                "[first=1] [fault=failover|pause] [seed=X] [save=FILE]\n"
                "       sale check FILE\n       sale bench [out=DIR] [runs=N] [stages=5,6]\n");
        return -1;
    }
    if (number(argc, argv, "stage", 1, 99, "", &v[0]) ||
        number(argc, argv, "segments", 1, SIM_SALE_MAX_SEGMENTS, "", &v[1]) ||
        number(argc, argv, "units", 1, 1000000, "", &v[2]) ||
        number(argc, argv, "buyers", 1, SIM_SALE_MAX_BUYERS, "", &v[3]) ||
        number(argc, argv, "pause", 0, 1000, " ms", &v[4]) ||
        number(argc, argv, "first", 0, 1, "", &v[5]) ||
        number(argc, argv, "seed", 0, 1000000000, "", &v[6]) ||
        number(argc, argv, "lease", 100, 60000, " ms", &v[7]) ||
        number(argc, argv, "wait", 0, 60000, " ms", &v[8]) ||
        number(argc, argv, "retry", 1, 1000, " ms", &v[9]) ||
        number(argc, argv, "hold", 1, 60000, " ms", &v[10]))
        return -1;
    if (fault != NULL && fault[0] != '\0' && strcmp(fault, "failover") != 0 &&
        strcmp(fault, "pause") != 0 && strcmp(fault, "none") != 0) {
        fprintf(stderr, "sale: fault=%s is no fault: give fault=failover or fault=pause\n", fault);
        return -1;
    }
    o->stage = (int)v[0];
    o->segments = (int)v[1];
    o->units = v[2];
    o->buyers = (int)v[3];
    o->pause_ms = v[4];
    o->first = (int)v[5];
    o->seed = (unsigned)v[6];
    o->lease_ms = v[7];
    o->wait_ms = v[8];
    o->retry_ms = v[9];
    o->hold_ms = v[10];
    o->fault = fault != NULL && fault[0] != '\0' ? fault : "none";
    o->save = arg(argc, argv, "save");
    if (o->units < o->segments) {
        fprintf(stderr, "sale: units=%ld is fewer than segments=%d: give every segment a unit\n",
                o->units, o->segments);
        return -1;
    }
    return 0;
}

static int check(const char *path)
{
    sim_sale_log log;
    sim_sale_verdict v;
    char err[256];

    if (sim_sale_log_load(&log, path, err, sizeof(err)) != 0) {
        fprintf(stderr, "sale: %s\n", err);
        return 2;
    }
    sim_sale_judge(&log, &v);
    sim_sale_log_free(&log);
    sim_sale_report(stdout, &v, NULL, sim_stage_name(v.meta.stage));
    return sim_sale_clean(&v) ? 0 : 1;
}

static int play(int argc, char **argv)
{
    static sim_sale_verdict v;
    sim_sale_opts o;
    sim_sale_place place;
    sim_rcluster rc;
    char err[512];
    int res;

    sim_sale_defaults(&o);
    if (options(argc, argv, &o) != 0)
        return 2;
    if (sim_sale_stage_ok(o.stage, argv[0], buyer_path, sizeof(buyer_path), err, sizeof(err)) != 0) {
        fprintf(stderr, "sale: %s\n", err);
        return 2;
    }
    o.buyer = buyer_path;
    if (sim_rcluster_start(&rc, err, sizeof(err)) != 0) {
        fprintf(stderr, "sale: cannot start the Redis Cluster: %s\n", err);
        return 2;
    }
    res = sim_sale_play(&rc, &o, &v, &place, err, sizeof(err));
    sim_rcluster_stop(&rc);
    if (res != 0) {
        fprintf(stderr, "sale: %s\n", err);
        return 2;
    }
    sim_sale_report(stdout, &v, &place, sim_stage_name(o.stage));
    return sim_sale_clean(&v) ? 0 : 1;
}

int main(int argc, char **argv)
{
    atexit(sim_cluster_cleanup);
    sim_cluster_cleanup_on_signal();
    sim_proc_cleanup_on_signal();
    if (argc >= 3 && strcmp(argv[1], "check") == 0)
        return check(argv[2]);
    if (argc >= 2 && strcmp(argv[1], "bench") == 0)
        return sim_sale_bench_main(argc - 1, argv + 1, argv[0]);
    return play(argc, argv);
}
