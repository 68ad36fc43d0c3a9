/* test_rcluster: a real Redis Cluster of six nodes (sim/servers/rcluster)
 * and the client's routing by slot (plumbing/redis_cluster.c), with v5's lock
 * on it.
 *
 * One cluster per tcase, started by its unchecked fixture in the
 * runner's process; the tests run in processes of their own. The
 * failover test kills a master with kill(2): the fixture's teardown,
 * in the runner, reaps it. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cluster.h"
#include "lock.h"
#include "rcluster.h"
#include "redis_cluster.h"
#include "rundir.h"
#include "tcases.h"

#define TCASE_TIMEOUT_S 120 /* a cluster forms in 2.5 s idle, a failover in ~4 s */
#define FAILOVER_MS 10000   /* a manual failover's own timeout is 5 s */
#define FAILOVER_ATTEMPTS 3
#define TIMEOUT_MS 2000

static sim_rcluster fixture;

static void rcluster_setup(void)
{
    char err[512];

    if (sim_rcluster_start(&fixture, err, sizeof(err)) != 0) {
        fprintf(stderr, "tests: cannot start a Redis Cluster: %s\n", err);
        exit(EXIT_FAILURE);
    }
}

static void rcluster_teardown(void)
{
    sim_rcluster_stop(&fixture);
}

/* A client's view of the fixture, seeded with every node. */
static void client(redis_cluster *c)
{
    redis_cluster_init(c, "127.0.0.1", fixture.port, SIM_RCLUSTER_NODES, fixture.password,
                       TIMEOUT_MS);
}

static redisContext *node(int i)
{
    char err[256];
    redisContext *c = sim_rcluster_connect(&fixture, i, err, sizeof(err));

    ck_assert_msg(c != NULL, "cannot reach node %d: %s", i, err);
    return c;
}

/* Three masters, three replicas: each master has a replica with its link up. */
START_TEST(test_rcluster_forms)
{
    char err[256];
    int i, masters = 0, r;

    for (i = 0; i < SIM_RCLUSTER_NODES; i++) {
        r = sim_rcluster_replica_of(&fixture, i, err, sizeof(err));
        if (r >= 0) {
            masters++;
            ck_assert_msg(r != i, "node %d names itself as its replica", i);
        }
    }
    ck_assert_msg(masters == 3, "%d nodes have a replica; expected 3 masters of 3 replicas",
                  masters);
}
END_TEST

/* Our CRC16 slot against the server's CLUSTER KEYSLOT, hash tags included. */
START_TEST(test_rcluster_keyslot)
{
    const char *keys[] = { "Product:10001:0", "{Product:10001:0}", "{Product:10001:0}:lock",
                           "a{b}c", "{}x", "{x", "x}{y}", "{{a}}", "", "123456789" };
    redisContext *c = node(0);
    redisReply *r;
    size_t i;

    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        r = redisCommand(c, "CLUSTER KEYSLOT %s", keys[i]);
        ck_assert_msg(r != NULL && r->type == REDIS_REPLY_INTEGER, "CLUSTER KEYSLOT failed");
        ck_assert_msg(r->integer == redis_cluster_keyslot(keys[i]),
                      "key '%s': the server says slot %lld, the client %d", keys[i],
                      r->integer, redis_cluster_keyslot(keys[i]));
        freeReplyObject(r);
    }
    ck_assert_uint_eq(redis_cluster_crc16("123456789", 9), 0x31C3); /* XMODEM's check value */
    ck_assert_int_eq(redis_cluster_keyslot("{Product:10001:0}"),
                     redis_cluster_keyslot("{Product:10001:0}:lock"));
    redisFree(c);
}
END_TEST

/* A lock through the provider lands on the master of its key's slot. */
START_TEST(test_rcluster_lock_routed)
{
    const char *key = "{seg:3}:lock";
    redis_cluster c;
    redis_cluster_route route;
    struct dlock_provider p;
    dlock_config cfg;
    dlock *l;
    char err[256];
    redisContext *m;
    redisReply *r;
    int master;

    client(&c);
    route.cluster = &c;
    route.slot = redis_cluster_keyslot(key);
    route.connects = 0;
    p = redis_cluster_provider(&route);
    dlock_config_init(&cfg);
    cfg.provider = &p;
    l = dlock_new(key, &cfg);
    ck_assert_msg(dlock_acquire(l) == DLOCK_OK, "acquire on the cluster failed: %s",
                  dlock_errstr(l));
    master = sim_rcluster_master_of(&fixture, route.slot, err, sizeof(err));
    ck_assert_msg(master >= 0, "%s", err);
    m = node(master);
    r = redisCommand(m, "EXISTS %s", key);
    ck_assert_msg(r != NULL && r->integer == 1, "the lock key is not on node %d, the master of "
                  "slot %d", master, route.slot);
    freeReplyObject(r);
    redisFree(m);
    ck_assert_int_eq(dlock_release(l), DLOCK_OK);
    dlock_free(l);
    redis_cluster_destroy(&c);
}
END_TEST

/* Node i's id in the cluster (CLUSTER MYID), into out. */
static void node_id(int i, char *out, size_t len)
{
    redisContext *c = node(i);
    redisReply *r = redisCommand(c, "CLUSTER MYID");

    ck_assert_msg(r != NULL && r->type == REDIS_REPLY_STRING, "CLUSTER MYID on node %d failed", i);
    snprintf(out, len, "%s", r->str);
    freeReplyObject(r);
    redisFree(c);
}

static void run(int i, const char *cmd, const char *a, const char *b)
{
    redisContext *c = node(i);
    redisReply *r = redisCommand(c, cmd, a, b);

    ck_assert_msg(r != NULL && r->type != REDIS_REPLY_ERROR, "node %d: '%s' failed: %s", i, cmd,
                  r != NULL ? r->str : c->errstr);
    freeReplyObject(r);
    redisFree(c);
}

/* A slot half moved: its master answers ASK for a key it no longer
 * has, and the command goes on, after ASKING, to the node it moves to. */
START_TEST(test_rcluster_ask_followed)
{
    const char *key = "{ask}x";
    int slot = redis_cluster_keyslot(key), from, to, i;
    char err[256], from_id[64], to_id[64], s[16];
    redis_cluster c;
    redis_cluster_route route = { &c, slot, 0 };
    redisContext *conn = NULL;
    redisReply *r;

    from = sim_rcluster_master_of(&fixture, slot, err, sizeof(err));
    ck_assert_msg(from >= 0, "%s", err);
    for (to = 0, i = 0; i < SIM_RCLUSTER_NODES; i++)
        if (i != from && sim_rcluster_replica_of(&fixture, i, err, sizeof(err)) >= 0)
            to = i;
    node_id(from, from_id, sizeof(from_id));
    node_id(to, to_id, sizeof(to_id));
    snprintf(s, sizeof(s), "%d", slot);
    run(to, "CLUSTER SETSLOT %s IMPORTING %s", s, from_id);
    run(from, "CLUSTER SETSLOT %s MIGRATING %s", s, to_id);
    client(&c);
    r = redis_cluster_command(&route, &conn, err, sizeof(err), "SET %s moved", key);
    ck_assert_msg(r != NULL && r->type == REDIS_REPLY_STATUS, "SET through ASK: %s",
                  r != NULL ? r->str : err);
    freeReplyObject(r);
    ck_assert_msg(c.refreshes == 1, "ASK read the map again (%ld maps); it must not: the slot "
                  "has not moved yet", c.refreshes);
    redisFree(conn);
    conn = node(to);
    freeReplyObject(redisCommand(conn, "ASKING"));
    r = redisCommand(conn, "GET %s", key);
    ck_assert_msg(r != NULL && r->type == REDIS_REPLY_STRING && strcmp(r->str, "moved") == 0,
                  "the key is not on node %d, where the slot moves: ASK was not followed", to);
    freeReplyObject(r);
    redisFree(conn);
    redis_cluster_destroy(&c);
}
END_TEST

/* CLUSTER FAILOVER on replica rep of old, the master of slot; the new
 * master, or -1. A manual failover that the master does not answer
 * within 5 s is given up by the replica without a word (seen here under
 * load, one run in three): it is asked again. */
static int failover(int slot, int old, int rep, char *err, size_t len)
{
    int attempt, now = -1;

    for (attempt = 0; attempt < FAILOVER_ATTEMPTS && now < 0; attempt++) {
        run(rep, "CLUSTER FAILOVER", "", "");
        now = sim_rcluster_wait_failover(&fixture, slot, old, FAILOVER_MS, err, len);
    }
    return now;
}

/* CLUSTER FAILOVER: the slot's replica takes over, the old master
 * answers MOVED, and both the routed command and the lock follow it. */
START_TEST(test_rcluster_moved_after_failover)
{
    const char *key = "{moved}:lock";
    int slot = redis_cluster_keyslot(key), old, rep, now;
    char err[256];
    redis_cluster c;
    redis_cluster_route route = { &c, slot, 0 }, lock_route = { &c, slot, 0 };
    struct dlock_provider p = redis_cluster_provider(&lock_route);
    redisContext *conn = NULL;
    redisReply *r;
    dlock_config cfg;
    dlock *l;
    long maps;

    client(&c);
    dlock_config_init(&cfg);
    cfg.provider = &p;
    l = dlock_new(key, &cfg);
    r = redis_cluster_command(&route, &conn, err, sizeof(err), "SET {moved}:v 1");
    ck_assert_msg(r != NULL && r->type == REDIS_REPLY_STATUS, "SET: %s", err);
    freeReplyObject(r);
    ck_assert_int_eq(dlock_acquire(l), DLOCK_OK);
    ck_assert_int_eq(dlock_release(l), DLOCK_OK);
    old = sim_rcluster_master_of(&fixture, slot, err, sizeof(err));
    rep = sim_rcluster_replica_of(&fixture, old, err, sizeof(err));
    ck_assert_msg(old >= 0 && rep >= 0, "%s", err);
    now = failover(slot, old, rep, err, sizeof(err));
    ck_assert_msg(now == rep, "slot %d: expected replica %d to take over, got %d: %s", slot,
                  rep, now, err);
    maps = c.refreshes;
    r = redis_cluster_command(&route, &conn, err, sizeof(err), "INCR {moved}:v");
    ck_assert_msg(r != NULL && r->type == REDIS_REPLY_INTEGER && r->integer == 2,
                  "INCR after the failover: %s", r != NULL ? r->str : err);
    freeReplyObject(r);
    ck_assert_msg(c.refreshes > maps, "the old master's MOVED did not make the client read "
                  "the map again");
    ck_assert_int_eq(conn->tcp.port, fixture.port[rep]);
    /* The lock's connection still goes to the old master: its MOVED costs
     * one call, and the next one reaches the new master. */
    if (dlock_acquire(l) != DLOCK_OK)
        ck_assert_msg(strstr(dlock_errstr(l), "MOVED") != NULL, "acquire after the failover: "
                      "%s; expected MOVED, then a success", dlock_errstr(l));
    else
        ck_abort_msg("acquire on the old master, now a replica, succeeded: no MOVED came");
    ck_assert_msg(dlock_acquire(l) == DLOCK_OK, "the lock did not follow the MOVED: %s",
                  dlock_errstr(l));
    ck_assert_int_eq(dlock_release(l), DLOCK_OK);
    dlock_free(l);
    redisFree(conn);
    redis_cluster_destroy(&c);
}
END_TEST

/* ---- nothing left behind ---------------------------------------------------- */

/* In a child: a cluster, told to the parent, then a wait for the
 * parent's SIGINT, which the simulator's own handler gets. */
static void start_and_wait(int fd)
{
    char err[512];
    sim_rcluster rc;
    rundir_started st;
    int i;

    sim_cluster_cleanup_on_signal();
    setenv("TMPDIR", rundir_path(), 1);
    if (sim_rcluster_start(&rc, err, sizeof(err)) != 0)
        _exit(3);
    memset(&st, 0, sizeof(st));
    for (i = 0; i < SIM_RCLUSTER_NODES; i++)
        st.pid[i] = rc.node[i].pid;
    snprintf(st.dir, sizeof(st.dir), "%s", rc.dir);
    if (write(fd, &st, sizeof(st)) != (ssize_t)sizeof(st))
        _exit(4);
    for (;;)
        pause();
}

/* Only the run's clients get in: on every node a connection without
 * the run's password is told NOAUTH, for a read, a write and FLUSHALL
 * alike, and a wrong password is refused (WRONGPASS). */
START_TEST(test_rcluster_strangers_refused)
{
    static const char *const asks[] = { "PING", "GET {Product:10001:0}",
                                        "SET {Product:10001:0} 999", "FLUSHALL" };
    redisContext *c;
    redisReply *r;
    size_t a;
    int i;

    for (i = 0; i < SIM_RCLUSTER_NODES; i++) {
        c = redisConnect("127.0.0.1", fixture.port[i]);
        ck_assert_msg(c != NULL && c->err == 0, "cannot reach node %d", i);
        for (a = 0; a < sizeof(asks) / sizeof(asks[0]); a++) {
            r = redisCommand(c, asks[a]);
            ck_assert_msg(r != NULL, "%s on node %d: no answer", asks[a], i);
            ck_assert_msg(r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOAUTH", 6) == 0,
                          "%s on node %d without the run's password answered %s; expected "
                          "NOAUTH", asks[a], i, r->type == REDIS_REPLY_ERROR ? r->str : "no error");
            freeReplyObject(r);
        }
        r = redisCommand(c, "AUTH %s", "not-the-run-s-password");
        ck_assert_msg(r != NULL && r->type == REDIS_REPLY_ERROR &&
                      strncmp(r->str, "WRONGPASS", 9) == 0, "a wrong password on node %d "
                      "was not refused with WRONGPASS", i);
        freeReplyObject(r);
        redisFree(c);
    }
}
END_TEST

/* Ctrl-C while a cluster runs: every node killed, the temp dir gone. */
START_TEST(test_rcluster_interrupt_leaves_nothing)
{
    rundir_started st;
    pid_t child = rundir_start_child(start_and_wait, &st, "cluster");
    int i;

    for (i = 0; i < SIM_RCLUSTER_NODES; i++)
        ck_assert_msg(rundir_alive(st.pid[i]), "node %d (pid %ld) is not running", i,
                      (long)st.pid[i]);
    rundir_interrupt(child, &st, "node");
}
END_TEST

Suite *rcluster_suite(void)
{
    const TTest *const tests[] = {
        test_rcluster_forms, test_rcluster_strangers_refused, test_rcluster_keyslot,
        test_rcluster_lock_routed, test_rcluster_moved_after_failover, test_rcluster_ask_followed,
    };
    const TTest *const left[] = { test_rcluster_interrupt_leaves_nothing };
    TCase *tc;
    Suite *s = ONE_TCASE_SUITE("rcluster", "routing", tests, &tc);

    tcase_add_unchecked_fixture(tc, rcluster_setup, rcluster_teardown);
    tcase_set_timeout(tc, TCASE_TIMEOUT_S);
    tc = ADD_TCASE(s, "nothing left", left);
    tcase_set_timeout(tc, TCASE_TIMEOUT_S);
    return s;
}
