/* bench_queue: the targets of a stage that queues its waiters (v9 on
 * Redis, v11 on ZooKeeper), the figures that show its base's herd gone
 * (v6's, v10's: every waiter wakes on each release), on the medians of
 * the runs. Each queue is compared with the stages on its own kind of
 * server only. See bench.h. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

#define MAX_ROUND_TRIPS 4.0 /* v9: try, subscribe, try, and the try it was woken for */
#define MAX_REQUESTS 5.0    /* v11: create, list, watch the one before, the list it
                             * was woken for, delete */
#define MAX_REWON 0.01      /* the releaser queues behind everyone else */
#define MIN_SERVED 0.9      /* the least served client against the most */

static int is_queue(int s)
{
    const sim_stage *st = sim_stage_get(s);

    return st != NULL && (st->caps & SIM_CAP_QUEUE) != 0;
}

/* Stage s runs on the same kind of server as stage q. */
static int same_server(int s, int q)
{
    const sim_stage *a = sim_stage_get(s), *c = sim_stage_get(q);

    return a != NULL && c != NULL && strcmp(a->server, c->server) == 0;
}

/* The stages that poll, on q's kind of server: no message or watch wakes
 * their waiters (a ZooKeeper stage always waits on a watch). */
static int is_polling(int s, int q)
{
    const sim_stage *st = sim_stage_get(s);

    return st != NULL && same_server(s, q) && !sim_bench_zookeeper(s) &&
           (st->caps & SIM_CAP_PUBSUB) == 0;
}

static const char *verdict(int met)
{
    return met ? "met" : "MISSED";
}

/* The highest (most = 1) or lowest median of a figure among the polling
 * stages measured on q's server; *at gets the stage, 0 when none. */
static double polling_best(const sim_bench *b, int q, int f, int most, int *at)
{
    double best = NAN;
    int s;

    *at = 0;
    for (s = 1; s <= SIM_STAGES; s++) {
        double x = sim_bench_median(b, s, f);

        if (!is_polling(s, q) || !sim_bench_wanted(b, s) || isnan(x))
            continue;
        if (isnan(best) || (most ? x > best : x < best)) {
            best = x;
            *at = s;
        }
    }
    return best;
}

/* The stage whose herd the queue ends: the one it is built on. */
static int herd_of(int q)
{
    return sim_stage_get(q)->base;
}

/* The herd's cost, and the queue's, per acquisition and per wake-up:
 * an unlock message (Redis) or a release (ZooKeeper). */
static void target_herd(const sim_bench *b, int q, FILE *f)
{
    int herd = herd_of(q), zk = sim_bench_zookeeper(q), seen = sim_bench_wanted(b, herd);
    double bound = zk ? MAX_REQUESTS : MAX_ROUND_TRIPS;
    double rt = sim_bench_median(b, q, SIM_BENCH_RTT_ACQ);
    double woken = sim_bench_median(b, q, SIM_BENCH_DELIVERED);

    fprintf(f, "  %s %s/acq <= %.0f: %s (%.2f", sim_stage_name(q),
            zk ? "requests" : "round trips", bound, verdict(rt <= bound), rt);
    if (seen)
        fprintf(f, "; v%d %.2f", herd, sim_bench_median(b, herd, SIM_BENCH_RTT_ACQ));
    if (seen && !zk)
        fprintf(f, ", %.1f commands against %.1f", sim_bench_median(b, q, SIM_BENCH_CMDS_ACQ),
                sim_bench_median(b, herd, SIM_BENCH_CMDS_ACQ));
    fprintf(f, ")\n  %s woken per %s <= 1: %s (%.2f", sim_stage_name(q),
            zk ? "release" : "unlock message", verdict(woken <= 1.0), woken);
    if (seen)
        fprintf(f, "; v%d %.2f", herd, sim_bench_median(b, herd, SIM_BENCH_DELIVERED));
    fprintf(f, ")\n");
}

/* Throughput and fairness: no polling stage hands the lock on faster,
 * the releaser waits its turn, every client is served alike. */
static void target_share(const sim_bench *b, int q, FILE *f)
{
    double rate = sim_bench_median(b, q, SIM_BENCH_ACQ_RATE);
    double rewon = sim_bench_median(b, q, SIM_BENCH_REWON);
    double least = sim_bench_median(b, q, SIM_BENCH_LEAST);
    double most = sim_bench_median(b, q, SIM_BENCH_MOST);
    int at;
    double best = polling_best(b, q, SIM_BENCH_ACQ_RATE, 1, &at);

    if (at > 0)
        fprintf(f, "  %s acquisitions/s >= the best polling stage's (%s, %.0f): %s (%.0f)\n",
                sim_stage_name(q), sim_stage_name(at), best, verdict(rate >= best), rate);
    fprintf(f, "  %s releaser re-won < %.0f%%: %s (%.2f%%)\n", sim_stage_name(q),
            MAX_REWON * 100, verdict(rewon < MAX_REWON), rewon * 100);
    fprintf(f, "  %s least served >= %.0f%% of the most: %s (%.0f against %.0f)\n",
            sim_stage_name(q), MIN_SERVED * 100, verdict(least >= MIN_SERVED * most), least,
            most);
}

/* The wait tail, p99 and max, below the herd's and every polling stage's
 * on the same server. */
static void target_tail(const sim_bench *b, int q, FILE *f, int fig, const char *name)
{
    double mine = sim_bench_median(b, q, fig), other;
    int s, worst = 0, herd = herd_of(q), seen = 0;

    for (s = 1; s <= SIM_STAGES; s++) {
        if (s == q || !sim_bench_wanted(b, s) || !(is_polling(s, q) || s == herd))
            continue;
        other = sim_bench_median(b, s, fig);
        seen += !isnan(other);
        if (!isnan(other) && other <= mine && worst == 0)
            worst = s;
    }
    if (seen == 0)
        return; /* nothing measured to be below: stage=N alone */
    fprintf(f, "  %s %s below v%d's%s: %s (%.1f ms", sim_stage_name(q), name, herd,
            sim_bench_zookeeper(q) ? "" : " and every polling stage's",
            verdict(worst == 0 && !isnan(mine)), mine);
    if (worst > 0)
        fprintf(f, "; %s %.1f ms", sim_stage_name(worst), sim_bench_median(b, worst, fig));
    fprintf(f, ")\n");
}

void sim_bench_queue_targets(const sim_bench *b, FILE *f)
{
    int q;

    for (q = 1; q <= SIM_STAGES; q++) {
        if (!is_queue(q) || !sim_bench_wanted(b, q))
            continue;
        target_herd(b, q, f);
        target_share(b, q, f);
        target_tail(b, q, f, SIM_BENCH_WAIT_P99, "wait p99");
        target_tail(b, q, f, SIM_BENCH_WAIT_MAX, "wait max");
    }
}
