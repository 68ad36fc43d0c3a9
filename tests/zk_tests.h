/* zk_tests: what the ZooKeeper stages' tests share (tests/test_zk*.c).
 *
 * A test reads the lock's nodes with a ZooKeeper session of its own on
 * the tcase's ensemble (harness_ensemble). Both ZooKeeper stages keep a
 * lock under /lockstep/<name>: v10's is that node, v11's are its
 * children, the lowest holding. Helpers fail the test with a sentence. */
#ifndef LOCKSTEP_ZK_TESTS_H
#define LOCKSTEP_ZK_TESTS_H

#include <stddef.h>
#include <check.h>
#include <zookeeper/zookeeper.h>

#include "ensemble.h"
#include "lock.h"
#include "lock_helpers.h" /* take, release_ok */

/* A tcase called name, added to s, on the suite's shared ensemble
 * (harness_shared_tcase: its tests kill no server and move no clock),
 * with a generous timeout (tests/test_zk.c); zk_own_tcase: on an
 * ensemble of the tcase's own, for tests that kill one of its servers. */
TCase *zk_tcase(Suite *s, const char *name);
TCase *zk_own_tcase(Suite *s, const char *name);

/* Adds the tcases of tests/test_zk_faults.c: contention, threads and
 * errors on the shared ensemble (own 0); a leader's death and a clock
 * jump on ensembles of their own (own 1). */
void zk_add_fault_tcases(Suite *s, int own);

/* Adds the tcases of tests/test_zk_queue.c, for a stage with a queue or
 * a token: the order of the waiters and a Curator client's node on the
 * shared ensemble (own 0); the czxid, then across a leader's death, on
 * an ensemble of its own (own 1). And for every ZooKeeper stage, on the
 * shared ensemble: a create whose reply was lost. */
void zk_add_queue_tcases(Suite *s, int own);

/* A connected session on the tcase's ensemble; zk_close ends it. */
zhandle_t *zk_open(void);
void zk_close(zhandle_t *zh);

/* The same on ensemble e, with a session of session_ms. */
zhandle_t *zk_open_on(const sim_ensemble *e, int session_ms);

/* "/lockstep/<name>", the lock's node. */
void zk_path(char *out, size_t len, const char *name);

/* The lock's nodes: v10's node (0 or 1), or v11's children, as the
 * leader has them (the test's server syncs first). */
int zk_nodes(zhandle_t *zh, const char *name);

/* The session's server catches up with the leader: a read after it sees
 * every write acknowledged before it. 0, or -1 when no answer came in
 * time (it never asserts: a forked client calls it too). */
int zk_sync(zhandle_t *zh);

/* Someone holds the lock name (it has a node). */
int zk_holds(zhandle_t *zh, const char *name);


#endif
