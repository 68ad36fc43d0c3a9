/* zk_client: a test's own ZooKeeper session on an ensemble, and a node it
 * creates to read the leader's wall clock, for the stages' ZooKeeper
 * suites (zk_tests.c) and the servers' own (test_ensemble.c). A failure
 * is a Check assertion. Compiled with -DTHREADED: the calls are the
 * synchronous ones. */
#ifndef LOCKSTEP_ZK_CLIENT_H
#define LOCKSTEP_ZK_CLIENT_H

#include <stdint.h>
#include <zookeeper/zookeeper.h>

/* A session with servers 127.0.0.1:port .. port + nodes - 1, connected,
 * authenticated with the ensemble's password (NULL: a stranger's session,
 * with no credential); zookeeper_close ends it. */
zhandle_t *zk_client_open(int port, int nodes, int session_ms, const char *password);

/* Creates path (persistent, empty) and returns its ctime: the leader's
 * wall clock when it created it, in ms. */
int64_t zk_client_create_ctime(zhandle_t *zh, const char *path);

#endif
