/* observer: the history's eyes on the lock key.
 *
 * A process of its own, subscribed on every node of the lock to the
 * keyspace events of the lock key (__keyspace@0__:<key>), that appends
 * each event (set, expire, del, expired, hincrby, ...) to the history,
 * stamped when it arrives, with its node and the port it came from. When the control
 * block moves a node (a failover, a restart), it subscribes there and
 * says so in that node's observer_port; a node that is down is tried
 * again until it is back.
 *
 * Stamped on arrival, a key event comes a little late: a client that takes
 * the lock right after a DEL could record its acquire before the observer
 * records that DEL, and the DEL would seem to hit the new holder. A sync
 * marker closes that gap: the client publishes a marker on each node and
 * waits until the observer has seen it there before it records the
 * acquire. Redis delivers a subscriber's messages in the order it ran the
 * commands, so every key event before the acquire is in the history by
 * then. */
#ifndef SIM_OBSERVER_H
#define SIM_OBSERVER_H

#include <stddef.h>
#include <sys/types.h>
#include <hiredis/hiredis.h>

#include "control.h"
#include "history.h"

#define SIM_OBSERVER_SYNC_CHANNEL "lockstep:sync" /* where sync markers go */

/* Forks the observer and waits until it is subscribed on every node (its
 * subscribe replies confirmed). Returns its pid, or -1 with errstr. The
 * observer dies with the simulator (PR_SET_PDEATHSIG). */
pid_t sim_observer_start(sim_history *h, sim_control *ctl,
                         long timeout_ms, char *errstr, size_t len);

/* Waits until the observer is subscribed to node on port: after a
 * failover or a restart, before the scenario goes on. 0, or -1 when
 * timeout_ms passed. */
int sim_observer_wait(const sim_control *ctl, int node, int port,
                      long timeout_ms);

/* Publishes marker seq for slot on node, the server c is connected to,
 * and waits until the observer has seen it there. 0 when synced; 1 when
 * no observer listens there or it did not answer in timeout_ms; -1 on an
 * I/O error (c is then unusable). */
int sim_observer_sync(redisContext *c, sim_control *ctl, int slot, int node,
                      long long seq, long timeout_ms);

/* Kills and reaps the observer. */
void sim_observer_stop(pid_t pid);

/* The sync of an observer that reads the servers itself (a ZooKeeper
 * ensemble's, zk_observer.h), for any process: asks it through the
 * control block to record every change made before now, and waits until
 * it has (synced[0] reaches seq). 0 when synced; 1 when it did not answer
 * in timeout_ms. */
int sim_observer_ask(sim_control *ctl, int slot, long long seq, long timeout_ms);

#endif
