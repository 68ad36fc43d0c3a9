/* sale_bench: the segmented sale's throughput (see sale_bench.h). */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sale.h"
#include "sale_bench.h"
#include "sale_page.h"
#include "sale_report.h"
#include "util.h"

#define MAX_RUNS 9

static const int ks[] = { 1, 2, 4, 8, 16 };

static const char *arg(int argc, char **argv, const char *name, const char *dflt)
{
    size_t n = strlen(name);
    int i;

    for (i = 1; i < argc; i++)
        if (strncmp(argv[i], name, n) == 0 && argv[i][n] == '=')
            return argv[i] + n + 1;
    return dflt;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* The bench's stages from "5,6", each one that can lock a segment. */
static int parse_stages(const char *list, sim_sale_bench *b, const char *self,
                        char buyer[][PATH_MAX], char *errstr, size_t len)
{
    const char *p = list;

    while (p != NULL && *p != '\0' && b->stages < SIM_SALE_BENCH_STAGES) {
        int n = atoi(p);

        if (sim_sale_stage_ok(n, self, buyer[b->stages], PATH_MAX, errstr, len) != 0)
            return -1;
        b->stage[b->stages++] = n;
        p = strchr(p, ',');
        p = p != NULL ? p + 1 : NULL;
    }
    return b->stages > 0 ? 0 : sim_error(errstr, len, "stages=%s names no stage", list);
}

/* The median of runs sales of stage s at K = ks[i]. */
static int measure(sim_rcluster *rc, sim_sale_bench *b, int s, int i, const char *buyer,
                   char *errstr, size_t len)
{
    static sim_sale_verdict v;
    double rate[MAX_RUNS];
    char product[32];
    sim_sale_opts o;
    sim_sale_place place;
    int r;

    for (r = 0; r < b->runs; r++) {
        sim_sale_defaults(&o);
        snprintf(product, sizeof(product), "%d%02d%d", 30000 + b->stage[s], ks[i], r);
        o.stage = b->stage[s];
        o.buyer = buyer;
        o.product = product;
        o.segments = ks[i];
        o.units = b->units;
        o.buyers = b->buyers;
        o.retry_ms = b->retry_ms;
        if (sim_sale_play(rc, &o, &v, &place, errstr, len) != 0)
            return -1;
        rate[r] = v.rate;
        b->unclean[s][i] += !sim_sale_clean(&v);
    }
    qsort(rate, (size_t)b->runs, sizeof(rate[0]), by_value);
    b->rate[s][i] = rate[b->runs / 2];
    b->lo[s][i] = rate[0];
    b->hi[s][i] = rate[b->runs - 1];
    return 0;
}

static int setup(int argc, char **argv, sim_sale_bench *b, const char *self,
                 char buyer[][PATH_MAX], char *err, size_t len)
{
    double load[1] = { 0 };

    memset(b, 0, sizeof(*b));
    b->runs = atoi(arg(argc, argv, "runs", "3"));
    b->units = atol(arg(argc, argv, "units", "1000"));
    b->buyers = atoi(arg(argc, argv, "buyers", "16"));
    b->pause_ms = 2;
    b->retry_ms = atol(arg(argc, argv, "retry", "1"));
    b->ks = (int)(sizeof(ks) / sizeof(ks[0]));
    memcpy(b->k, ks, sizeof(ks));
    b->cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (getloadavg(load, 1) == 1)
        b->load = load[0];
    if (b->runs < 1 || b->runs > MAX_RUNS || b->units < 16 || b->buyers < 1 ||
        b->buyers > SIM_SALE_MAX_BUYERS || b->retry_ms < 1 || b->retry_ms > 1000)
        return sim_error(err, len, "give runs=1..%d, units=16 or more, buyers=1..%d, "
                         "retry=1..1000", MAX_RUNS, SIM_SALE_MAX_BUYERS);
    return parse_stages(arg(argc, argv, "stages", "5,6"), b, self, buyer, err, len);
}

int sim_sale_bench_main(int argc, char **argv, const char *self)
{
    static char buyer[SIM_SALE_BENCH_STAGES][PATH_MAX];
    static sim_sale_bench b;
    sim_rcluster rc;
    char err[512];
    int s, i, res = 0, unclean = 0;

    if (setup(argc, argv, &b, self, buyer, err, sizeof(err)) != 0) {
        fprintf(stderr, "sale bench: %s\n", err);
        return 2;
    }
    if (sim_rcluster_start(&rc, err, sizeof(err)) != 0) {
        fprintf(stderr, "sale bench: cannot start the Redis Cluster: %s\n", err);
        return 2;
    }
    for (s = 0; s < b.stages && res == 0; s++)
        for (i = 0; i < b.ks && res == 0; i++)
            res = measure(&rc, &b, s, i, buyer[s], err, sizeof(err));
    sim_rcluster_stop(&rc);
    if (res == 0)
        res = sim_sale_page(arg(argc, argv, "out", "build/sale"), &b, err, sizeof(err));
    if (res != 0) {
        fprintf(stderr, "sale bench: %s\n", err);
        return 2;
    }
    sim_sale_bench_table(stdout, &b);
    for (s = 0; s < b.stages; s++)
        for (i = 0; i < b.ks; i++)
            unclean += b.unclean[s][i];
    return unclean ? 1 : 0;
}
