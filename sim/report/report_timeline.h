/* report_timeline.h: the ASCII timeline's drawing, shared by the file
 * that paints its lanes (report_timeline.c) and the one that prints the
 * legend under them (report_legend.c); nothing else includes it. */
#ifndef SIM_REPORT_TIMELINE_H
#define SIM_REPORT_TIMELINE_H

#include <stdint.h>
#include <stdio.h>

#include "report_internal.h"

#define LABEL 12                        /* "client A    " */
#define COLS (SIM_REPORT_WIDTH - LABEL) /* columns of a row */
#define PER_LEASE 8                     /* columns per lease: a tick each */
#define FIT_TICK 10                     /* columns per tick, lease unknown */
#define MAX_ROWS 3                      /* more: two leases a tick, ... */
#define MAX_LANES 52                    /* A..AZ: more would not fit a page */
#define QUEUE_ROWS 3                    /* places of a queue drawn: more show '$' */
#define SLACK 8                         /* columns for marks pushed past the end */
#define RULE_GAP '\1'                   /* faults row: the rule is blank here,
                                         * but for its ticks (a cut link) */

typedef struct timeline {
    int64_t t0;       /* column 0 starts here */
    int64_t per_col;  /* ns of run per column */
    int64_t end;      /* the last event: the lanes stop there */
    long lease_ms;    /* 0: unknown */
    int leases;       /* leases per tick (lease known) */
    int tick;         /* columns per tick */
    int width;        /* columns drawn: the run and SLACK */
    int lanes;        /* client lanes drawn */
    int clients;      /* clients in the run: lanes past MAX_LANES are not */
    int nodes;        /* key lanes: one per node of the lock */
    int sessions;     /* the keys are ZooKeeper nodes, bound to sessions */
    char *cells;      /* rows of width + 1: the lanes, the keys, the marks,
                       * then each lane's marks of one moment */
    int *next_mark;   /* per lane: the first column a mark of it may take */
    char *key;        /* node k's lane: key + k * (width + 1) */
    char *marks;
    int queue_rows;   /* rows of a ZooKeeper lock's queue drawn (v11) */
    char *queue;      /* place p's row (the first: next to hold):
                       * queue + p * (width + 1) */
    char *faults;     /* laid over the time axis's rule: a cut ('[', ']',
                       * and RULE_GAP between), a clock jump ('}') */
    int pushed;       /* a mark took a later column than its moment's */
    /* The clients whose own lease is not the run's, in words; "" none. */
    char own_leases[SIM_REPORT_SENTENCE];
} timeline;

static inline char *lane(const timeline *tl, int c)
{
    return tl->cells + (size_t)c * (size_t)(tl->width + 1);
}

/* The legend right under the lanes: every symbol drawn, what a column is
 * worth; marks: the anomaly lane is drawn. */
void sim_report_legend(FILE *out, const timeline *tl, int marks);

#endif
