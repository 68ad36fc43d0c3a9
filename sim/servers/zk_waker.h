/* zk_waker: the ensemble's waker, a process that pings every node (the
 * comment above its code in zk_waker.c says why). */
#ifndef SIM_ZK_WAKER_H
#define SIM_ZK_WAKER_H

#include <stddef.h>

#include "ensemble.h"

/* Forks the waker (e->waker) and waits until it holds an authenticated
 * session on each node. 0, or -1 with errstr. The ensemble's stop kills it
 * (sim_ensemble_waker_stop). */
int sim_zk_waker_start(sim_ensemble *e, char *errstr, size_t len);

#endif
