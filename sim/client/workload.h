/* workload: what a simulated client does with the lock, the classic stock
 * deduction.
 *
 * Under the lock: read "stock" from the resource server, work for the
 * plan's hold time, and when the stock is above 0 write stock - 1 (a sale).
 * Two clients inside at once read the same stock and one sale is lost:
 * lost mutual exclusion shows up in the numbers. Every step goes into the
 * history (acquire invoke/ok/busy/error, cs enter/exit, stock read/write,
 * release invoke/ok/not-owner/error), by client and thread.
 *
 * In a stage that draws fencing tokens, the read and the write carry the
 * holder's token (resource.h: the fenced stock), and so do their events;
 * a write the resource refuses is no sale but a stock-refused event, with
 * the highest token the resource had seen. acquire-ok carries the token
 * the hold drew.
 *
 * The bench's plans (make bench) use the same lock calls: uncontended
 * pairs in batches, timed and not recorded; and a contended read-modify-
 * write of the resource's counter, recorded like the scenarios' clients.
 *
 * An operation that fails with an error has an unknown outcome and is
 * recorded as an error. A release that fails (the primary died) is tried
 * again, as a real client would, so a late release reaches the new primary. */
#ifndef SIM_WORKLOAD_H
#define SIM_WORKLOAD_H

#include <stddef.h>
#include <hiredis/hiredis.h>

#include "control.h"
#include "history.h"
#include "lock.h"

#define SIM_RELEASE_TRIES 3     /* a release that errors is tried again */

typedef struct sim_workload {
    sim_control *ctl;
    sim_history *h;
    int client;             /* our index: A = 0 */
    const sim_plan *plan;   /* our slot's plan */
    dlock *lock;            /* the stage under test */
    long long token;        /* the fencing token of our hold; 0: none */
    redisContext *resource; /* the resource server: the stock, the counter */
    redisContext *sync[SIM_NODES_MAX]; /* each node, for sync markers; NULL until needed */
    long long sync_seq;     /* the last marker sent */
    unsigned rng;           /* LOOP's hold jitter, from the plan's seed */
    char errstr[128];       /* why the workload gave up */
} sim_workload;

/* Connects to the resource server and makes the lock handle, with the
 * provider that follows the primary, through this client's own route of
 * the proxy in a run that cuts links (control.h). 0, or -1 with errstr. */
int sim_workload_init(sim_workload *w, sim_control *ctl, sim_history *h,
                      int client, char *errstr, size_t len);

/* Runs the slot's plan to its end. 0, or -1 with w->errstr when the
 * resource server failed (faults never touch it: a bug, not a result). */
int sim_workload_run(sim_workload *w);

void sim_workload_close(sim_workload *w);

#endif
