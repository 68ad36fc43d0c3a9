/* sale: a flash sale played on a Redis Cluster (make sale).
 *
 * S units of one product cut into K segments, segment k's stock at key
 * {Product:ID:k} and its lock at {Product:ID:k}:lock: one hash tag, so a
 * segment's lock and stock share a slot and a master, and the cluster
 * spreads the segments over its masters. B buyer processes of the
 * stage's program (build/vN/buyer, sim/sale_buyer.c) buy until each has
 * seen every segment empty; each writes its steps into the sale's
 * history (sim/history/history_sale.h), which sim_sale_judge reads.
 *
 * Faults:
 *   failover  segment 0's master loses its replica's link (the replica is
 *             stopped and the master drops it), sells on, is killed; the
 *             replica, resumed, is promoted by the cluster with the stock
 *             as it was at the cut: the sales in between are lost writes
 *   pause     buyer 0 sleeps inside the lock of its third sale
 *
 * Errors, hiredis-style: 0, or -1 with one line of reason in errstr. */
#ifndef SIM_SALE_H
#define SIM_SALE_H

#include <stddef.h>

#include "rcluster.h"
#include "sale_judge.h"

typedef struct sim_sale_opts {
    int stage;
    const char *buyer;   /* the stage's buyer program */
    const char *product; /* "10001" */
    long units;
    int segments;
    int buyers;
    long pause_ms;       /* inside the lock, per sale */
    int first;
    const char *fault;   /* "none", "failover", "pause" */
    unsigned seed;
    long lease_ms, wait_ms, retry_ms;
    long hold_ms;        /* fault=pause: how long the holder sleeps */
    const char *save;    /* the history's path; NULL: a temp file */
} sim_sale_opts;

/* The defaults: 1,000 units, 8 segments, 16 buyers, 2 ms inside, no
 * fault, lease 5 s, wait 100 ms, retry 1 ms (half the 2 ms inside: a
 * waiter that slept longer than a hold would leave a freed segment idle),
 * a pause of 1.5 s. */
void sim_sale_defaults(sim_sale_opts *o);

/* Plays one sale on the running cluster rc and judges it into v (place:
 * where each segment lives). */
int sim_sale_play(sim_rcluster *rc, const sim_sale_opts *o, sim_sale_verdict *v,
                  sim_sale_place *place, char *errstr, size_t len);

/* Whether stage n can lock a segment: one Redis key on one master (its
 * line in sim/stages.def says redis, 1). 0 with the path of its buyer
 * program, next to self (the sale program's path), in buyer; -1 with one
 * line that says which stages can. */
int sim_sale_stage_ok(int n, const char *self, char *buyer, size_t len, char *errstr,
                      size_t errlen);

#endif
