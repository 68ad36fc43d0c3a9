/* zk_observer: the history's eyes on a lock kept by a ZooKeeper ensemble.
 *
 * A process of its own, with a ZooKeeper session on the ensemble, that
 * reads who holds the lock from ZooKeeper's own view. Both ZooKeeper
 * stages keep a lock under the node /lockstep/<lock name>: v10's lock IS
 * that node (ephemeral); v11's is its lowest child named
 * "..lock-<10 digits>", the others being the queue. The observer sets a
 * watch on the node and on its children, reads both again on every
 * notification, and writes into the history, on the lock's one lane,
 * stamped when it read it:
 *
 *   create   a node holds the lock as it appears
 *   first    a waiting node became the lowest: its turn came
 *   delete   the holder's node was deleted by a client (its session is open)
 *   expired  it went with its session (expired, or closed by its client)
 *
 * and of v11's queue, the nodes that wait:
 *
 *   queued   a node that is not the lowest appeared: a waiter
 *   left     a waiter's node went while a lower node stayed: it never
 *            held (its client gave up, or died, or lost its session)
 *   gone     a waiter's node went, and so did every node before it: it
 *            may have held the lock between two looks, unseen
 *
 * Each v11 event carries its node's sequence number as its token, which
 * ties a waiter's "queued" to the "first" of the same node.
 *
 * The last two differ in whether the node's session (its ephemeralOwner)
 * is still open right after the deletion, which the server the observer
 * is connected to says (`dump`, read by zk_dump.h, asked again while a
 * leader's dump is torn): a server closes a session before it deletes
 * the session's nodes and fires their watches. That costs a
 * request, so an end is named just after the next holder's client has
 * its answer, and stamped when it was seen. A client's session also
 * closes when it leaves, right after its last release: its last ask
 * (all_named, as the simulator's at the run's end) is answered once every
 * end seen is named, so that its node is not told "expired" for a
 * session that was still open when it went.
 *
 * Sync: a client that took the lock asks (sim_observer_ask, through the
 * control block); the observer makes its server catch up with the leader
 * (sync), reads again, records, and answers. Every change the client's
 * acquire saw is in the history before its acquire-ok.
 *
 * Errors, hiredis-style. */
#ifndef SIM_ZK_OBSERVER_H
#define SIM_ZK_OBSERVER_H

#include <stddef.h>
#include <sys/types.h>

#include "control.h"
#include "history.h"

#define SIM_ZK_ROOT "/lockstep" /* the parent of every lock's node */

/* Forks the observer and waits until it has a session and has read the
 * lock once (observer_port[0] then names node 0's port). Its pid, or -1
 * with errstr. Stop it with sim_observer_stop. */
pid_t sim_zk_observer_start(sim_history *h, sim_control *ctl, long timeout_ms,
                            char *errstr, size_t len);

#endif
