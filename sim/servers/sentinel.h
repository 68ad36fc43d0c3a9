/* sentinel: a real redis-sentinel, for the failover done the way a
 * deployment does it (make sim sentinel=1).
 *
 * The sentinel monitors the primary under a name with quorum 1, finds the
 * replica through the primary's INFO, and promotes it when the primary
 * has been down for down-after milliseconds. Clients ask it where the
 * primary is (control.h). It is a server process like the others (server.h):
 * a child with PDEATHSIG, registered, stopped with sim_server_kill/stop.
 *
 * Errors, hiredis-style: 0 or -1 with one line of reason in errstr. */
#ifndef SIM_SENTINEL_H
#define SIM_SENTINEL_H

#include <stddef.h>

#include "server.h"

/* Starts a redis-sentinel (redis-server <conf> --sentinel) in
 * parent_dir/sentinel on a free port, monitoring the primary at
 * master_port under the name master, and waits until it answers PING. */
int sim_sentinel_start(sim_server *s, const char *parent_dir,
                       const char *master, int master_port,
                       long down_after_ms, long failover_timeout_ms,
                       char *errstr, size_t len);

/* The port the sentinel names as master's address now; -1 when it cannot
 * be asked or does not know. */
int sim_sentinel_master_port(const sim_server *s, const char *master);

/* 1 when the sentinel lists the replica on replica_port as a replica of
 * master in good standing: only then can it promote it. */
int sim_sentinel_knows_replica(const sim_server *s, const char *master,
                               int replica_port);

#endif
