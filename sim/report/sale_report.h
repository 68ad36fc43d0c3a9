/* sale_report: a flash sale's verdict told on a terminal (make sale).
 *
 * The sale's line, the throughput, units sold against those on offer,
 * each anomaly with its evidence (the first few), the fault when there
 * was one, and a table of the segments: where each lives, its sales,
 * when it ran dry. Only this module prints a sale. */
#ifndef SIM_SALE_REPORT_H
#define SIM_SALE_REPORT_H

#include <stdio.h>

#include "sale_judge.h"

/* Prints the verdict; place may be NULL. */
void sim_sale_report(FILE *f, const sim_sale_verdict *v, const sim_sale_place *place,
                     const char *stage_name);

/* The bench's figures: sales per second for each stage and each count
 * of segments, the median of its runs (sim/bench/sale_bench.c). */
#define SIM_SALE_BENCH_STAGES 4
#define SIM_SALE_BENCH_KS 8

typedef struct sim_sale_bench {
    int stages, stage[SIM_SALE_BENCH_STAGES];
    int ks, k[SIM_SALE_BENCH_KS];
    double rate[SIM_SALE_BENCH_STAGES][SIM_SALE_BENCH_KS]; /* sales per second */
    double lo[SIM_SALE_BENCH_STAGES][SIM_SALE_BENCH_KS];   /* the slowest run's */
    double hi[SIM_SALE_BENCH_STAGES][SIM_SALE_BENCH_KS];   /* the fastest run's */
    int unclean[SIM_SALE_BENCH_STAGES][SIM_SALE_BENCH_KS];  /* runs not clean */
    int buyers, runs, cpus;
    long units, pause_ms;
    long retry_ms;         /* a polling lock's pause between tries */
    double load;           /* the 1-minute load average at the start */
} sim_sale_bench;

/* The bench as a table: a row per count of segments, a column per
 * stage, and each K's speed-up over K = 1. */
void sim_sale_bench_table(FILE *f, const sim_sale_bench *b);

#endif
