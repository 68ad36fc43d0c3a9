/* nemesis: pauses, crashes and the failover that loses a lock. See
 * nemesis.h. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nemesis.h"
#include "observer.h"

#define HOLD_MS 600000       /* CLIENT PAUSE length: longer than any run */
#define REPLICA_TIMEOUT_MS 2000
#define BEHIND_TIMEOUT_MS 1000 /* for the lock's write to reach the replica */
#define RESUBSCRIBE_MS 3000  /* for the observer to follow the new primary */

static int error(char *errstr, size_t len, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(errstr, len, fmt, ap);
    va_end(ap);
    return -1;
}

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

    nanosleep(&ts, NULL);
}

static void record(sim_nemesis *n, int client, sim_event_type type,
                   long long value, const char *detail)
{
    sim_history_add(n->h, client, 0, type, value, detail);
}

void sim_nemesis_init(sim_nemesis *n, sim_cluster *cl, sim_control *ctl,
                      sim_history *h, const pid_t *pids)
{
    memset(n, 0, sizeof(*n));
    n->cl = cl;
    n->ctl = ctl;
    n->h = h;
    n->pids = pids;
}

/* ---- processes ---------------------------------------------------------------- */

void sim_nemesis_pause(sim_nemesis *n, int client, long ms)
{
    if (n->pids[client] <= 0)
        return;
    record(n, client, SIM_EV_PAUSE_BEGIN, ms, "SIGSTOP");
    kill(n->pids[client], SIGSTOP);
    n->self_stop[client] = 0;
    n->resume_ns[client] = sim_now_ns() + (int64_t)ms * 1000000;
}

void sim_nemesis_crash(sim_nemesis *n, int client)
{
    if (n->pids[client] <= 0)
        return;
    record(n, client, SIM_EV_CRASH, 0, "SIGKILL");
    kill(n->pids[client], SIGKILL);
}

void sim_nemesis_stopped(sim_nemesis *n, int client)
{
    long ms = atomic_load(&n->ctl->client[client].stop_ms);

    /* A stop we sent ourselves is already scheduled. */
    if (ms <= 0 || n->resume_ns[client] != 0)
        return;
    n->self_stop[client] = 1;
    n->resume_ns[client] = sim_now_ns() + (int64_t)ms * 1000000;
}

void sim_nemesis_tick(sim_nemesis *n)
{
    int64_t now = sim_now_ns();
    int i;

    for (i = 0; i < SIM_CLIENTS_MAX; i++) {
        if (n->resume_ns[i] == 0 || now < n->resume_ns[i])
            continue;
        n->resume_ns[i] = 0;
        if (n->self_stop[i])
            atomic_store(&n->ctl->client[i].stop_ms, 0);
        if (n->pids[i] > 0)
            kill(n->pids[i], SIGCONT);
        record(n, i, SIM_EV_PAUSE_END, 0, n->self_stop[i] ? "failpoint" : "SIGCONT");
    }
}

int sim_nemesis_busy(const sim_nemesis *n)
{
    int i;

    for (i = 0; i < SIM_CLIENTS_MAX; i++) {
        if (n->resume_ns[i] != 0)
            return 1;
    }
    return 0;
}

/* ---- failover ---------------------------------------------------------------- */

/* Sends a command to the replica that must answer with a status. */
static int replica_status(sim_nemesis *n, char *errstr, size_t len,
                          const char *cmd)
{
    redisReply *r = redisCommand(n->replica, cmd);
    int ok = r != NULL && r->type == REDIS_REPLY_STATUS;

    if (!ok)
        error(errstr, len, "%s on the replica: %s", cmd,
              r == NULL ? n->replica->errstr : r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
    freeReplyObject(r);
    return ok ? 0 : -1;
}

int sim_nemesis_hold_replica(sim_nemesis *n, char *errstr, size_t len)
{
    char cmd[64];

    if (n->cl->replica.pid <= 0)
        return error(errstr, len, "failover needs a replica: start the cluster with SIM_CLUSTER_REPLICA");
    n->replica = sim_server_connect(&n->cl->replica, REPLICA_TIMEOUT_MS, errstr, len);
    if (n->replica == NULL)
        return -1;
    /* WRITE: the replica keeps reading its primary's stream (its read
     * offset moves) but applies none of the writes in it. */
    snprintf(cmd, sizeof(cmd), "CLIENT PAUSE %d WRITE", HOLD_MS);
    if (replica_status(n, errstr, len, cmd) != 0)
        return -1;
    record(n, SIM_NO_CLIENT, SIM_EV_FAILOVER, n->cl->replica.port, "hold replica");
    return 0;
}

static long long info_number(redisContext *c, const char *field, char *errstr,
                             size_t len)
{
    char value[32];

    if (sim_cluster_info_field(c, "replication", field, value, sizeof(value),
                               errstr, len) != 0)
        return -1;
    return atoll(value);
}

/* The lock must be missing on the replica, and the write that made it
 * read but not applied: otherwise the promotion would keep the lock and
 * the scenario would show nothing, or pass by luck. Returns the lag. */
static long long replica_behind(sim_nemesis *n, char *errstr, size_t len)
{
    long long read = 0, applied = 0, exists = 1;
    int waited;
    redisReply *r;

    for (waited = 0; waited <= BEHIND_TIMEOUT_MS; waited++) {
        read = info_number(n->replica, "slave_read_repl_offset", errstr, len);
        applied = info_number(n->replica, "slave_repl_offset", errstr, len);
        if (read < 0 || applied < 0)
            return -1;
        if (read > applied)
            break;
        sleep_ms(1);
    }
    r = redisCommand(n->replica, "EXISTS %s", n->ctl->lock_name);
    if (r != NULL && r->type == REDIS_REPLY_INTEGER)
        exists = r->integer;
    freeReplyObject(r);
    if (read <= applied || exists != 0)
        return error(errstr, len, "the replica is not behind its primary (read offset %lld, applied %lld, lock key %s): the failover would not lose the lock",
                     read, applied, exists ? "present" : "absent");
    return read - applied;
}

/* REPLICAOF NO ONE drops the held stream with the link, lock and all. */
static int promote(sim_nemesis *n, char *errstr, size_t len)
{
    if (replica_status(n, errstr, len, "REPLICAOF NO ONE") != 0)
        return -1;
    record(n, SIM_NO_CLIENT, SIM_EV_FAILOVER, n->cl->replica.port, "promote replica");
    if (replica_status(n, errstr, len, "CLIENT UNPAUSE") != 0)
        return -1;
    record(n, SIM_NO_CLIENT, SIM_EV_FAILOVER, n->cl->replica.port, "unpause replica");
    return 0;
}

int sim_nemesis_failover(sim_nemesis *n, char *errstr, size_t len)
{
    long long lag;
    int port = n->cl->replica.port;

    if (n->replica == NULL)
        return error(errstr, len, "failover: the replica was not held first");
    if ((lag = replica_behind(n, errstr, len)) < 0)
        return -1;
    record(n, SIM_NO_CLIENT, SIM_EV_FAILOVER, lag, "replica lacks lock");
    record(n, SIM_NO_CLIENT, SIM_EV_FAILOVER, n->cl->primary.port, "kill primary");
    sim_server_kill(&n->cl->primary);
    if (promote(n, errstr, len) != 0)
        return -1;
    atomic_store(&n->ctl->primary_port, port);
    record(n, SIM_NO_CLIENT, SIM_EV_FAILOVER, port, "clients follow");
    if (sim_history_observer_wait(n->ctl, port, RESUBSCRIBE_MS) != 0)
        return error(errstr, len, "the observer did not subscribe to the new primary (port %d) within %d ms",
                     port, RESUBSCRIBE_MS);
    return 0;
}

void sim_nemesis_close(sim_nemesis *n)
{
    redisFree(n->replica);
    n->replica = NULL;
}
