/* replica: replication and promotion, the Redis side of a failover.
 *
 *   attach   REPLICAOF the primary, wait for the link, and prove it: a
 *            write on the primary + WAIT 1 must count the replica
 *   hold     CLIENT PAUSE <ms> WRITE on the replica: it keeps reading the
 *            primary's stream but applies none of it
 *   lag      the replica has read a write it has not applied, and lacks
 *            the lock: a promotion now loses the lock
 *   promote  REPLICAOF NO ONE drops the held stream with the link
 *
 * The nemesis decides when and records each step; this module only talks
 * to the servers. Errors, hiredis-style: 0 (or a value) or -1 with one line
 * of reason in errstr. */
#ifndef SIM_REPLICA_H
#define SIM_REPLICA_H

#include <stddef.h>
#include <hiredis/hiredis.h>

#include "server.h"

/* Makes replica a replica of primary and confirms that writes reach it. */
int sim_replica_attach(const sim_server *replica, const sim_server *primary,
                       char *errstr, size_t len);

/* A connection to the replica on which CLIENT PAUSE hold_ms WRITE was
 * sent: the replica's stream is held until CLIENT UNPAUSE on it. NULL with
 * errstr. */
redisContext *sim_replica_hold(const sim_server *replica, long hold_ms,
                               char *errstr, size_t len);

/* Sends cmd ("REPLICAOF NO ONE", "CLIENT UNPAUSE"), which must answer
 * with a status. */
int sim_replica_command(redisContext *c, const char *cmd, char *errstr,
                        size_t len);

/* Waits up to timeout_ms for the replica to have read more of the stream
 * than it applied, then checks that key is absent there. Returns the lag
 * in bytes, or -1 with errstr when the replica is not behind: a failover
 * would then keep the lock and show nothing. */
long long sim_replica_lag(redisContext *c, const char *key, long timeout_ms,
                          char *errstr, size_t len);

/* 1 when the replica says its link to the primary is down. */
int sim_replica_link_down(redisContext *c);

/* 1 when the server says it is a master (on a new connection: a
 * sentinel's promotion kills the normal clients). */
int sim_replica_is_master(const sim_server *s);

#endif
