/* tally: what the history of a contended window says about the lock's
 * service: the bench's checker.
 *
 * Like the checker it never talks to Redis and never prints: it replays
 * the events of a history (sorted by time) in which several clients took
 * the lock again and again, each doing a read-modify-write of a counter
 * inside, and returns:
 *
 *   lost updates  acquisitions the counter does not show: two clients
 *                 inside at once wrote the same value;
 *   handoffs      from a release call to another client's acquire-ok, and
 *                 how often the releaser took the lock back instead;
 *   waits         how long one acquire call took;
 *   fairness      the acquisitions of the least and the most served client.
 *
 * Rates and fairness count acquisitions inside the window [go, stop);
 * waits count the calls begun in it (the last may end after it); lost
 * updates count every acquisition, the tail after the window too, since
 * the counter shows them all. A figure without a sample is NAN. */
#ifndef SIM_TALLY_H
#define SIM_TALLY_H

#include <stddef.h>
#include <stdint.h>

#include "history.h"

#define SIM_TALLY_CLIENTS 26 /* clients are letters; events of others are skipped */

/* What the bench knows besides the history. */
typedef struct sim_tally_window {
    int64_t go_ns, stop_ns;  /* the window: go flags set, stop flag set */
    int clients;             /* clients A.. that took part */
    long long counted;       /* what the counter says they did: after - before */
} sim_tally_window;

typedef struct sim_tally {
    long long acquisitions;  /* acquire-oks, the window's tail included */
    long long lost;          /* acquisitions - counted: updates lost */
    long busy;               /* acquire calls that spent their wait budget */
    long errors;             /* acquire or release calls that failed, NOT_OWNER too */
    double rate;             /* acquisitions per second of the window */
    size_t handoffs;         /* the lock went to another client */
    long rewon;              /* the releaser took it back */
    double rewon_share;      /* rewon / (rewon + handoffs) */
    double handoff_p50_ms, handoff_p99_ms;
    size_t waits;            /* acquire calls begun in the window */
    double wait_p50_ms, wait_p99_ms, wait_max_ms;
    long least, most;        /* acquisitions in the window of the least and
                              * the most served client */
} sim_tally;

/* Tallies a history sorted by time. 0, or -1 with errstr when there is
 * no memory for the samples. */
int sim_tally_history(const sim_event *ev, size_t n, const sim_tally_window *w,
                      sim_tally *out, char *errstr, size_t len);

/* Nearest-rank percentile p (0..100] of n sorted samples; NAN when n = 0. */
double sim_tally_percentile(const double *sorted, size_t n, double p);

/* Sorts v and returns its median; NAN when n = 0. */
double sim_tally_median(double *v, size_t n);

/* Sorts n doubles in place, ascending. */
void sim_tally_sort(double *v, size_t n);

#endif
