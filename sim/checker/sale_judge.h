/* sale_judge: the verdict on one flash sale, read from its history
 * (sim/history/history_sale.h) alone; it never talks to Redis and never
 * prints (sim/report/sale_report.c tells the verdict).
 *
 * It follows each segment's stock as the history says it stood: the
 * initial stock, then each acknowledged write (S). From that:
 *
 *   oversold     units two buyers were sold: the lost updates, or the
 *                units sold beyond the S on offer, whichever is more
 *   lost update  two sales that wrote the same stock value on one
 *                segment: one unit sold twice (each is an oversold unit)
 *   stale read   a read that found more stock than the last acknowledged
 *                write left: the store lost that write (a failover's
 *                replica that lagged)
 *   double hold  a buyer took a segment's lock while another held it:
 *                the lock failed, not the store
 *   false sold-out  a buyer said "sold out" while, by the history, some
 *                segment still had stock
 *
 * and per segment its sales and when it ran dry. */
#ifndef SIM_SALE_JUDGE_H
#define SIM_SALE_JUDGE_H

#include <stdint.h>

#include "history_sale.h"

#define SIM_SALE_EVIDENCE 6 /* examples kept of each anomaly */

typedef struct sim_sale_segment {
    long initial;          /* its stock at the start */
    long sold;             /* acknowledged sales */
    long left;             /* the stock by the last write the history saw */
    int64_t dry_ns;        /* when a sale took it to 0; -1: never */
    long paused_sales;     /* fault=pause: its sales while the holder slept */
} sim_sale_segment;

/* Two sales that wrote one value, or a write and the read that undid it. */
typedef struct sim_sale_pair {
    int seg;
    long long value;       /* the value written twice; or the stale value read */
    long long acked;       /* stale read: the last acknowledged write before it */
    int buyer[2];
    int64_t t_ns[2];
} sim_sale_pair;

/* A buyer told "sold out" while some segment held stock. */
typedef struct sim_sale_false_out {
    int buyer;
    int seg;               /* the segment it found empty last */
    int64_t t_ns;
    long held[SIM_SALE_MAX_SEGMENTS]; /* each segment's stock then */
} sim_sale_false_out;

typedef struct sim_sale_verdict {
    sim_sale_meta meta;
    long sold, oversold, lost_updates, stale_reads, double_holds;
    long busy, errors, gave_up;
    int died;                  /* buyers whose process ended before "sold out" */
    int died_buyer, died_status; /* the first of them, and its exit status */
    int64_t start_ns, end_ns;  /* the first lock taken, the last sale */
    double rate;               /* sales per second between them */
    long holds;                /* locks taken and released */
    int64_t held_ns;           /* their summed length, [L, U] */
    int soldouts, false_soldouts;
    sim_sale_pair dup[SIM_SALE_EVIDENCE], stale[SIM_SALE_EVIDENCE], dbl[SIM_SALE_EVIDENCE];
    sim_sale_false_out false_out[SIM_SALE_EVIDENCE];
    sim_sale_segment seg[SIM_SALE_MAX_SEGMENTS];
    int fault_seg;             /* failover: a segment of the master it hit;
                                * pause: the paused holder's; -1: none */
    int64_t cut_ns, kill_ns, promoted_ns, pause_ns; /* -1: did not happen */
    long pause_ms;
} sim_sale_verdict;

/* Judges the loaded sale into v. */
void sim_sale_judge(const sim_sale_log *log, sim_sale_verdict *v);

/* 1 when the sale is clean: no unit oversold, no lost update or stale
 * read, no double hold, no false sold-out, every unit sold. */
int sim_sale_clean(const sim_sale_verdict *v);

#endif
