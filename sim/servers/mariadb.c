/* mariadb: the MariaDB kind of servers (servers.h). The lock's node is one
 * mariadbd (mariadbd.h) with a data dir of its own; the stock stays on a
 * redis-server of its own. The clients log in with a password drawn for
 * the run, which they find in the control block.
 *
 *   failover  a replica follows the primary asynchronously, MariaDB's
 *             default; it is held (its SQL thread stopped) before the
 *             lock is taken, the primary is SIGKILLed, the replica
 *             promoted (STOP SLAVE; RESET SLAVE ALL; read_only=0) without
 *             what it had not applied, and clients follow it there
 *   down      the server is killed and stays down
 *   restart   the server is killed and started again on its own data dir
 *             and port: InnoDB keeps what was committed (a row), every
 *             session is gone (GET_LOCK's locks with them)
 *   clock     the server's wall clock jumps (the clock library preloaded
 *             into mariadbd): NOW() jumps with it
 *
 * No observer watches the lock's rows or sessions: the history has the
 * clients' own steps and the faults, and the checker judges mutual
 * exclusion, deadlock and lost updates from those. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "clockfile.h"
#include "mariadbd.h"
#include "servers.h"
#include "util.h"

typedef struct mariadb_kind {
    sim_mariadb node;          /* the primary, node 0 */
    sim_mariadb replica;       /* srv.pid 0 unless SIM_SERVERS_STANDBY */
    sim_server resource;       /* the stock's redis-server */
    char password[SIM_PASSWORD_LEN];
    char clock_file[SIM_CLOCKFILE_LEN]; /* "" unless SIM_SERVERS_CLOCK */
    sim_clock_env clock;       /* the primary's environment then */
} mariadb_kind;

static mariadb_kind *self(sim_servers *s)
{
    return s->impl;
}

static void record(sim_servers *s, long long port, const char *detail)
{
    sim_history_add(s->h, SIM_NO_CLIENT, 0, SIM_EV_FAILOVER, port, detail);
}

static int start(sim_servers *s, unsigned flags, char *errstr, size_t len)
{
    mariadb_kind *m = self(s);
    const char *const *env = NULL;

    if (s->nodes != 1)
        return sim_error(errstr, len, "a MariaDB lock talks to one server, not %d", s->nodes);
    if (sim_tempdir_create(s->dir, sizeof(s->dir), errstr, len) != 0 ||
        sim_server_start(&m->resource, s->dir, "resource", NULL, errstr, len) != 0)
        return -1;
    snprintf(m->password, sizeof(m->password), "%s", sim_password()); /* the run's */
    if (flags & SIM_SERVERS_CLOCK) {
        if (sim_clockfile_create(m->clock_file, s->dir, "mariadb0", errstr, len) != 0)
            return -1;
        sim_clockfile_env(&m->clock, s->clock_shim, m->clock_file);
        env = m->clock.env;
    }
    if (sim_mariadb_start(&m->node, s->dir, "mariadb0", 1, m->password, env, errstr, len) != 0)
        return -1;
    if ((flags & SIM_SERVERS_STANDBY) &&
        (sim_mariadb_start(&m->replica, s->dir, "replica", 2, m->password, NULL, errstr,
                           len) != 0 ||
         sim_mariadb_replicate(&m->replica, &m->node, errstr, len) != 0))
        return -1;
    s->port[0] = m->node.srv.port;
    s->resource_port = m->resource.port;
    s->lanes = 1;
    return 0;
}

static int attach(sim_servers *s, char *errstr, size_t len)
{
    (void)errstr;
    (void)len;
    s->ctl->observed = SIM_OBSERVED_NONE;
    return 0;
}

/* The replica reads the primary's binary log but applies none of it. */
static int prepare(sim_servers *s, char *errstr, size_t len)
{
    mariadb_kind *m = self(s);

    if (m->replica.srv.pid <= 0)
        return sim_error(errstr, len, "failover needs a replica: start the servers with "
                         "SIM_SERVERS_STANDBY");
    if (sim_mariadb_hold(&m->replica, errstr, len) != 0)
        return -1;
    record(s, m->replica.srv.port, "hold replica: its SQL thread stopped");
    return 0;
}

static int failover(sim_servers *s, char *errstr, size_t len)
{
    mariadb_kind *m = self(s);
    int port = m->replica.srv.port;

    if (m->replica.srv.pid <= 0)
        return sim_error(errstr, len, "failover: no replica was started");
    record(s, m->node.srv.port, "kill primary");
    sim_mariadb_kill(&m->node);
    if (sim_mariadb_promote(&m->replica, errstr, len) != 0)
        return -1;
    record(s, port, "promote replica: what it had not applied is gone");
    s->port[0] = port;
    atomic_store(&s->ctl->node_port[0], port);
    record(s, port, "clients follow");
    return 0;
}

static void down(sim_servers *s, int node)
{
    mariadb_kind *m = self(s);

    (void)node;
    record(s, m->node.srv.port, "kill mariadb0: it stays down");
    sim_mariadb_kill(&m->node);
}

static int restart(sim_servers *s, int node, char *errstr, size_t len)
{
    mariadb_kind *m = self(s);

    (void)node;
    record(s, m->node.srv.port, "kill mariadb0");
    if (sim_mariadb_restart(&m->node, errstr, len) != 0)
        return -1;
    record(s, m->node.srv.port, "mariadb0 starts again on its data dir: rows kept, "
           "sessions gone");
    s->port[0] = m->node.srv.port;
    atomic_store(&s->ctl->node_port[0], s->port[0]);
    return 0;
}

static int clock_jump(sim_servers *s, int node, long ms, char *errstr, size_t len)
{
    mariadb_kind *m = self(s);

    if (m->clock_file[0] == '\0')
        return sim_error(errstr, len, "the server's clock cannot jump: it was not started "
                         "under the clock library");
    if (sim_clockfile_jump(m->clock_file, ms, errstr, len) != 0)
        return -1;
    sim_history_add_node(s->h, node, SIM_EV_CLOCK_JUMP, ms, "forward");
    return 0;
}

/* No observer: every step is in the history as its client recorded it. */
static void drain(sim_servers *s)
{
    (void)s;
}

static void stop(sim_servers *s)
{
    mariadb_kind *m = self(s);

    if (m != NULL) {
        sim_mariadb_stop(&m->replica);
        sim_mariadb_stop(&m->node);
        sim_server_stop(&m->resource);
    }
    if (s->dir[0] != '\0')
        sim_tempdir_remove(s->dir);
}

const sim_servers_kind sim_servers_mariadb = {
    "mariadb", sizeof(mariadb_kind), start, attach, prepare, failover, down, restart, drain,
    stop, clock_jump, NULL, NULL,
};
