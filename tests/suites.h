/* suites.h: every Check suite of a stage's test binary.
 *
 * One function per suite; tests/run_stage.c runs each one that is linked
 * in. A new suite adds its prototype here and its name to the list in
 * run_stage.c. */
#ifndef LOCKSTEP_SUITES_H
#define LOCKSTEP_SUITES_H

#include <check.h>

Suite *lock_suite(void);   /* tests/test_lock*.c: the lock contract (on Redis), a file per part */
Suite *matrix_suite(void); /* tests/test_matrix.c: the stage's row of the fault matrix */
Suite *queue_suite(void);  /* tests/test_queue.c: a fair queue's order and wake-ups */
Suite *clock_suite(void);  /* tests/test_clock.c: a server's clock that jumps */
Suite *proxy_suite(void);  /* tests/test_proxy.c: a client cut off from a node */
Suite *zk_suite(void);     /* tests/test_zk.c: the contract on a ZooKeeper ensemble */
Suite *mariadb_suite(void); /* tests/test_mariadb.c: the contract on a MariaDB server */

#endif
