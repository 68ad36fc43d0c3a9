/* harness: real redis-server processes for the Check suites, and the small
 * helpers the tests are written in.
 *
 * Servers come from sim/cluster (the repository's one way of starting
 * Redis), in one temp dir per run (rundir.h) that the runner removes at
 * exit or on Ctrl-C. Check's fork mode stays on: each test runs in its
 * own process, and a server started there dies with it, even when
 * Check's timeout kills it (PR_SET_PDEATHSIG).
 *
 *   tcase_add_unchecked_fixture(tc, harness_server_setup, harness_server_teardown);
 *   tcase_add_checked_fixture(tc, harness_test_setup, harness_test_teardown);
 *
 * The unchecked pair starts the tcase's servers (in the runner's process):
 * one per independent master the stage talks to, its nodes, or for a
 * ZooKeeper stage an ensemble of that many servers (or the suite's one
 * ensemble, harness_shared_tcase); the checked
 * pair empties them and opens a connection to each before each test, then
 * prints the test's "... Passed" line. A test that needs a server of its
 * own (to kill it) starts it with harness_server_start.
 *
 * Helpers that talk to Redis fail the test with a sentence when the reply
 * is not what they expect, so tests read as the protocol. */
#ifndef LOCKSTEP_HARNESS_H
#define LOCKSTEP_HARNESS_H

#include <stdint.h>
#include <check.h>
#include <hiredis/hiredis.h>

#include "cluster.h"
#include "ensemble.h"
#include "lock.h"
#include "mariadbd.h"
#include "password.h" /* the run's, for the stages and the tests' own connections */
#include "redis.h" /* a Redis stage's connection provider */
#include "rundir.h"
#include "stages.h"
#include "tcases.h"

#define HARNESS_ERRSTR_LEN 512 /* room for a server's log tail */

/* ---- the runner's side ---------------------------------------------------- */

/* main calls rundir_init first (the run's temp dir, which holds every
 * server, and its cleanup), then run_suites of tcases.h. */

/* ---- fixtures --------------------------------------------------------------- */

void harness_server_setup(void);    /* unchecked: start the tcase's nodes */
void harness_server_teardown(void); /* unchecked: stop and reap them */
void harness_test_setup(void);      /* checked: FLUSHALL, connect to each node */
void harness_test_teardown(void);   /* checked: disconnect, print "... Passed" */
/* Unchecked: the temp dirs a tcase's tests make go inside one that the
 * runner process makes (TMPDIR) and removes, even when a test failed or
 * Check's timeout killed it before it could clean up. */
void harness_tmpdir_setup(void);
void harness_tmpdir_teardown(void);

/* A tcase called name, added to s, on servers of its own: the unchecked
 * pair starts them (the tests of a tcase share them), the checked pair
 * empties them before each test; Check kills a test after timeout_s. */
TCase *harness_servers_tcase(Suite *s, const char *name, int timeout_s);

/* The same for a ZooKeeper stage's tcase whose tests kill no server and
 * move no clock, each naming its locks apart: the suite's tcases made so
 * share one ensemble (three JVMs take seconds of CPU to start), started
 * by the first of them and stopped after the last. */
TCase *harness_shared_tcase(Suite *s, const char *name, int timeout_s);

/* A suite called name of one tcase, called tcase, of n tests that start
 * servers of their own: the tmpdir pair, and the checked fixture's
 * title and "... Passed" line. */
Suite *harness_own_servers_suite(const char *name, const char *tcase,
                                 const TTest *const *tests, size_t n);
#define OWN_SERVERS_SUITE(name, tcase, tests) \
    harness_own_servers_suite((name), (tcase), (tests), sizeof(tests) / sizeof((tests)[0]))

/* The tcase's nodes: CAPS.masters of them (one but for v8). */
int harness_nodes(void);

/* The tcase's node i, and the test's own connection to it. */
const sim_server *harness_node(int i);
redisContext *harness_node_redis(int i);

/* A ZooKeeper stage's tcase: its ensemble, node i serving clients on
 * port + i (harness_node(i) is node i's process). */
const sim_ensemble *harness_ensemble(void);

/* A MariaDB stage's tcase: its server (harness_node(0) is its process). */
const sim_mariadb *harness_mariadb(void);

/* Node 0, the tcase's server, and the connection to it. */
const sim_server *harness_server(void);
redisContext *harness_redis(void);

/* A server of the test's own in the run's temp dir; fails the test when it
 * does not start. Stop it with sim_server_stop. */
void harness_server_start(sim_server *s);

/* ---- talking to Redis ---------------------------------------------------- */

redisContext *harness_connect(const sim_server *s);

/* Sends a command and returns its integer reply. */
long long harness_int(redisContext *c, const char *fmt, ...);

/* Sends a command and copies its string reply into out. Returns 1, or 0
 * when the reply is nil (out is then ""). */
int harness_str(redisContext *c, char *out, size_t len, const char *fmt, ...);

/* Sends a command that must answer with a status (OK). */
void harness_status(redisContext *c, const char *fmt, ...);

/* The calls= count of one command in INFO commandstats ("eval"); 0 when
 * the command has not run since the last CONFIG RESETSTAT. */
long harness_calls(redisContext *c, const char *command);

/* ---- locks ------------------------------------------------------------------ */

/* A connection (struct dlock_provider's connect, arg unused): node i is
 * the tcase's node i, with a 1 s timeout on connect and on every command. */
redisContext *harness_connect_node(void *arg, int node, char *errstr, size_t errlen);

/* A config for the server s with the given lease and wait budget, a
 * retry of 2 ms and a 1 s timeout (10 s to open a ZooKeeper session). The tcase's server stands for all the
 * tcase's nodes (through harness_connect_node; of a ZooKeeper stage, as
 * node 0's port and the ensemble's size); any other server is the
 * config's one node. */
void harness_config(dlock_config *cfg, const sim_server *s, long lease_ms,
                    long wait_ms);

/* dlock_new on a config from harness_config; fails the test on NULL. */
dlock *harness_lock(const sim_server *s, const char *name, long lease_ms,
                    long wait_ms);

/* "OK", "ERR", "BUSY", "NOT_OWNER": for failure messages. */
const char *harness_result(int rc);

/* ---- time and words --------------------------------------------------------- */

int64_t harness_now_ms(void);
/* The clock library, build/clockshim.so for build/vN/tests, into out;
 * fails the test when it is not built. */
void harness_clock_shim(char *out, size_t len);
void harness_sleep_ms(long ms);

/* Prints "Test (vN): <what> ..." and starts the clock of the Passed line. */
void harness_title(const char *fmt, ...);

#endif
