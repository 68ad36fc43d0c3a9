/* rcluster: a Redis Cluster of six redis-servers (see rcluster.h). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "password.h"
#include "proc.h"
#include "rcluster.h"
#include "util.h"

#define CONNECT_TIMEOUT_MS 2000
#define POLL_MS 50

static long now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

redisContext *sim_rcluster_connect(const sim_rcluster *rc, int i, char *errstr, size_t len)
{
    return sim_server_connect(&rc->node[i], CONNECT_TIMEOUT_MS, errstr, len);
}

static int start_node(sim_rcluster *rc, int i, char *errstr, size_t len)
{
    char name[16], bus[16];
    const char *args[] = {
        "--cluster-enabled", "yes", "--cluster-node-timeout", "2000",
        "--cluster-config-file", "nodes.conf", "--cluster-require-full-coverage", "no",
        "--cluster-port", bus, NULL,
    };
    int port = sim_server_free_ports(1, errstr, len);

    if (port < 0)
        return -1;
    snprintf(bus, sizeof(bus), "%d", port);
    snprintf(name, sizeof(name), "node%d", i);
    if (sim_server_start(&rc->node[i], rc->dir, name, args, errstr, len) != 0)
        return -1;
    rc->port[i] = rc->node[i].port;
    return 0;
}

/* redis-cli --cluster create, its output in create.log; waits for it. */
static int create(sim_rcluster *rc, char *errstr, size_t len)
{
    char addr[SIM_RCLUSTER_NODES][32], auth[64], tail[256];
    const char *args[SIM_RCLUSTER_NODES + 6] = { "--cluster", "create" };
    const char *env[] = { auth, NULL };
    sim_server cli;
    int i, n = 2, status = 0;
    sim_proc_state st;

    for (i = 0; i < SIM_RCLUSTER_NODES; i++) {
        snprintf(addr[i], sizeof(addr[i]), "127.0.0.1:%d", rc->port[i]);
        args[n++] = addr[i];
    }
    args[n++] = "--cluster-replicas";
    args[n++] = "1";
    args[n++] = "--cluster-yes";
    args[n] = NULL;
    snprintf(auth, sizeof(auth), "REDISCLI_AUTH=%s", rc->password);
    if (sim_server_make_dir(&cli, rc->dir, "create", errstr, len) != 0 ||
        sim_server_exec(&cli, "redis-cli", args, env, "create.log", errstr, len) != 0)
        return -1;
    while ((st = sim_proc_poll(cli.pid, &status)) == SIM_PROC_RUNNING)
        sim_sleep_ms(POLL_MS);
    if (st == SIM_PROC_EXITED && status == 0)
        return 0;
    sim_server_log_tail(&cli, "create.log", tail, sizeof(tail));
    return sim_error(errstr, len, "redis-cli --cluster create failed (status %d): %s",
                     status, tail);
}

/* One field of INFO section or of CLUSTER INFO (section NULL) on node i. */
static int field(const sim_rcluster *rc, int i, const char *section, const char *name,
                 char *out, size_t outlen, char *errstr, size_t len)
{
    redisContext *c = sim_rcluster_connect(rc, i, errstr, len);
    redisReply *r;
    const char *p;
    int found = -1;

    if (c == NULL)
        return -1;
    r = section != NULL ? redisCommand(c, "INFO %s", section) : redisCommand(c, "CLUSTER INFO");
    if (r != NULL && r->type == REDIS_REPLY_STRING && (p = strstr(r->str, name)) != NULL &&
        p[strlen(name)] == ':') {
        p += strlen(name) + 1;
        snprintf(out, outlen, "%.*s", (int)strcspn(p, "\r\n"), p);
        found = 0;
    } else {
        sim_error(errstr, len, "node %d has no %s yet", i, name);
    }
    freeReplyObject(r);
    redisFree(c);
    return found;
}

/* Every live node: cluster_state:ok, six known; every replica's link up. */
static int formed(const sim_rcluster *rc, char *errstr, size_t len)
{
    char v[64];
    int i;

    for (i = 0; i < SIM_RCLUSTER_NODES; i++) {
        if (rc->node[i].pid == 0)
            continue;
        if (field(rc, i, NULL, "cluster_state", v, sizeof(v), errstr, len) != 0 ||
            strcmp(v, "ok") != 0)
            return sim_error(errstr, len, "node %d: cluster_state is not ok yet", i);
        if (field(rc, i, "replication", "role", v, sizeof(v), errstr, len) != 0)
            return -1;
        if (strcmp(v, "slave") == 0 &&
            (field(rc, i, "replication", "master_link_status", v, sizeof(v), errstr, len) != 0 ||
             strcmp(v, "up") != 0))
            return sim_error(errstr, len, "replica %d: its link to its master is not up yet", i);
    }
    return 0;
}

static int wait_formed(sim_rcluster *rc, char *errstr, size_t len)
{
    long deadline = now_ms() + SIM_RCLUSTER_READY_MS;

    while (formed(rc, errstr, len) != 0) {
        if (now_ms() > deadline)
            return sim_error(errstr, len, "the cluster did not form within %d ms: %s",
                             SIM_RCLUSTER_READY_MS, errstr);
        sim_sleep_ms(POLL_MS);
    }
    return 0;
}

int sim_rcluster_start(sim_rcluster *rc, char *errstr, size_t len)
{
    int i;

    memset(rc, 0, sizeof(*rc));
    if (sim_password_ready(errstr, len) != 0 ||
        sim_tempdir_create(rc->dir, sizeof(rc->dir), errstr, len) != 0)
        return -1;
    snprintf(rc->password, sizeof(rc->password), "%s", sim_password());
    for (i = 0; i < SIM_RCLUSTER_NODES; i++)
        if (start_node(rc, i, errstr, len) != 0)
            break;
    if (i == SIM_RCLUSTER_NODES && create(rc, errstr, len) == 0 &&
        wait_formed(rc, errstr, len) == 0)
        return 0;
    sim_rcluster_stop(rc);
    return -1;
}

void sim_rcluster_stop(sim_rcluster *rc)
{
    int i;

    for (i = 0; i < SIM_RCLUSTER_NODES; i++) {
        if (rc->node[i].pid != 0)
            kill(rc->node[i].pid, SIGCONT);
        sim_server_stop(&rc->node[i]);
    }
    if (rc->dir[0] != '\0') {
        sim_tempdir_remove(rc->dir);
        rc->dir[0] = '\0';
    }
}

int sim_rcluster_node_at(const sim_rcluster *rc, int port)
{
    int i;

    for (i = 0; i < SIM_RCLUSTER_NODES; i++)
        if (rc->port[i] == port)
            return i;
    return -1;
}

/* CLUSTER SLOTS from node i: the port that serves slot, or -1. */
static int slot_port(const sim_rcluster *rc, int i, int slot, char *errstr, size_t len)
{
    redisContext *c = sim_rcluster_connect(rc, i, errstr, len);
    redisReply *r, *e;
    int port = -1;
    size_t k;

    if (c == NULL)
        return -1;
    r = redisCommand(c, "CLUSTER SLOTS");
    for (k = 0; r != NULL && r->type == REDIS_REPLY_ARRAY && k < r->elements; k++) {
        e = r->element[k];
        if (e->elements >= 3 && slot >= e->element[0]->integer && slot <= e->element[1]->integer)
            port = (int)e->element[2]->element[1]->integer;
    }
    if (port < 0)
        sim_error(errstr, len, "node %d names no master for slot %d", i, slot);
    freeReplyObject(r);
    redisFree(c);
    return port;
}

int sim_rcluster_master_of(const sim_rcluster *rc, int slot, char *errstr, size_t len)
{
    int i, port;

    for (i = 0; i < SIM_RCLUSTER_NODES; i++)
        if (rc->node[i].pid != 0 && (port = slot_port(rc, i, slot, errstr, len)) > 0)
            return sim_rcluster_node_at(rc, port);
    return -1;
}

int sim_rcluster_replica_of(const sim_rcluster *rc, int m, char *errstr, size_t len)
{
    char v[128];
    const char *p;

    if (field(rc, m, "replication", "slave0", v, sizeof(v), errstr, len) != 0)
        return -1;
    if ((p = strstr(v, "port=")) == NULL)
        return sim_error(errstr, len, "node %d's slave0 names no port: %s", m, v);
    return sim_rcluster_node_at(rc, atoi(p + 5));
}

int sim_rcluster_cut_replica(sim_rcluster *rc, int m, int r, char *errstr, size_t len)
{
    redisContext *c = sim_rcluster_connect(rc, m, errstr, len);
    redisReply *rep;
    int ok;

    if (c == NULL)
        return -1;
    /* Stopped first: a running replica would reconnect at once and take
     * the missed writes from the master's backlog (PSYNC). */
    kill(rc->node[r].pid, SIGSTOP);
    rep = redisCommand(c, "CLIENT KILL TYPE replica");
    ok = rep != NULL && rep->type == REDIS_REPLY_INTEGER && rep->integer >= 1;
    if (!ok)
        sim_error(errstr, len, "CLIENT KILL TYPE replica on node %d: %s", m,
                  rep == NULL ? c->errstr : rep->type == REDIS_REPLY_ERROR ? rep->str
                                                                         : "no replica was connected");
    freeReplyObject(rep);
    redisFree(c);
    if (!ok)
        kill(rc->node[r].pid, SIGCONT);
    return ok ? 0 : -1;
}

void sim_rcluster_kill(sim_rcluster *rc, int i)
{
    sim_server_kill(&rc->node[i]);
}

void sim_rcluster_resume(sim_rcluster *rc, int i)
{
    if (rc->node[i].pid != 0)
        kill(rc->node[i].pid, SIGCONT);
}

int sim_rcluster_wait_failover(const sim_rcluster *rc, int slot, int old, long timeout_ms,
                               char *errstr, size_t len)
{
    long deadline = now_ms() + timeout_ms;
    char v[32];
    int m;

    for (;;) {
        m = sim_rcluster_master_of(rc, slot, errstr, len);
        if (m >= 0 && m != old && field(rc, m, NULL, "cluster_state", v, sizeof(v), errstr, len) == 0 &&
            strcmp(v, "ok") == 0)
            return m;
        if (now_ms() > deadline)
            return sim_error(errstr, len, "slot %d had no new master %ld ms after its master's "
                             "death", slot, timeout_ms);
        sim_sleep_ms(POLL_MS);
    }
}
