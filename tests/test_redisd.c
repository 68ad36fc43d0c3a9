/* test_redisd: real Redis servers as the simulator and the Redis stages'
 * tests start them (sim/servers/server.c, cluster.c, sentinel.c): three
 * independent masters (Redlock's nodes, node 0 also the primary), a
 * replica of node 0, the resource server and a sentinel watching node 0.
 * Only a client with the run's password (password.h) gets in: one
 * without it cannot PING, write a key or FLUSHALL any of them, nor ask
 * the sentinel anything or order a failover.
 *
 * The tcase's fixture starts every server in the runner's process; the
 * tests run in processes of their own (Check's fork mode). */
#define _GNU_SOURCE
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cluster.h"
#include "history.h"
#include "password.h"
#include "rundir.h"
#include "sentinel.h"
#include "tcases.h"
#include "util.h"

#define TCASE_TIMEOUT_S 120  /* five servers and a sentinel on a loaded machine */
#define TIMEOUT_MS 5000
#define NODES 3              /* Redlock's independent masters, as v8 runs them */
#define MASTER "lockstep"    /* what the sentinel calls node 0 */
#define SENTINEL_WAIT_MS 20000 /* for the sentinel to find the replica */

static sim_cluster cl;
static sim_server sentinel;

static void servers_setup(void)
{
    char err[512];

    if (sim_cluster_start(&cl, NODES, SIM_CLUSTER_REPLICA | SIM_CLUSTER_RESOURCE, err,
                          sizeof(err)) != 0 ||
        sim_sentinel_start(&sentinel, cl.dir, MASTER, cl.node[0].port, 60000, 60000, err,
                           sizeof(err)) != 0) {
        fprintf(stderr, "tests: cannot start the Redis servers: %s\n", err);
        exit(EXIT_FAILURE);
    }
}

static void servers_teardown(void)
{
    sim_server_stop(&sentinel);
    sim_cluster_stop(&cl);
}

/* Every server of the run but the sentinel, with its name for messages. */
static const sim_server *server(int i, const char **name)
{
    static const char *const names[] = { "node 0 (the primary)", "node 1", "node 2",
                                          "the replica", "the resource server" };

    *name = names[i];
    return i < NODES ? &cl.node[i] : i == NODES ? &cl.replica : &cl.resource;
}
#define SERVERS (NODES + 2)

/* A connection that has not logged in: another local user's. */
static redisContext *stranger(int port)
{
    struct timeval tv = { TIMEOUT_MS / 1000, 0 };
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);

    ck_assert_msg(c != NULL && !c->err, "cannot connect to port %d: %s", port,
                  c != NULL ? c->errstr : "out of memory");
    redisSetTimeout(c, tv);
    return c;
}

/* command on c is refused with an error that starts with want. */
static void refused(redisContext *c, const char *command, const char *want, const char *name)
{
    redisReply *r = redisCommand(c, command);

    ck_assert_msg(r != NULL, "%s: %s on %s: %s", name, command, name, c->errstr);
    ck_assert_msg(r->type == REDIS_REPLY_ERROR && strncmp(r->str, want, strlen(want)) == 0,
                  "%s on %s without the run's password answered %s; expected %s...",
                  command, name, r->type == REDIS_REPLY_ERROR ? r->str : "no error", want);
    freeReplyObject(r);
}

static redisContext *ours(const sim_server *s)
{
    char err[256];
    redisContext *c = sim_server_connect(s, TIMEOUT_MS, err, sizeof(err));

    ck_assert_msg(c != NULL, "the run's own client was refused: %s", err);
    return c;
}

/* status of command on c is want. */
static void answers(redisContext *c, const char *command, const char *want, const char *name)
{
    redisReply *r = redisCommand(c, command);

    ck_assert_msg(r != NULL && (r->type == REDIS_REPLY_STATUS || r->type == REDIS_REPLY_STRING) &&
                  strcmp(r->str, want) == 0, "%s on %s with the run's password answered %s; "
                  "expected %s", command, name, r == NULL ? c->errstr : r->str != NULL ? r->str
                  : "no text", want);
    freeReplyObject(r);
}

/* Without the password: no PING, no write, no FLUSHALL, and a guess is
 * told wrong. With it: all of them work. */
START_TEST(test_redisd_only_the_run_gets_in)
{
    const char *name;
    const sim_server *s = server(_i, &name);
    redisContext *c = stranger(s->port);

    refused(c, "PING", "NOAUTH", name);
    refused(c, "SET lockstep:forged stranger", "NOAUTH", name);
    refused(c, "FLUSHALL", "NOAUTH", name);
    refused(c, "AUTH guess", "WRONGPASS", name);
    refused(c, "GET lockstep:forged", "NOAUTH", name);
    redisFree(c);
    c = ours(s);
    answers(c, "PING", "PONG", name);
    if (s != &cl.replica)
        answers(c, "SET lockstep:ours 1", "OK", name);
    redisFree(c);
}
END_TEST

/* The replica logs in to the primary (masterauth): a key written on the
 * primary reaches it. */
START_TEST(test_redisd_replica_follows)
{
    redisContext *p = ours(&cl.node[0]), *r = ours(&cl.replica);
    redisReply *got = NULL;
    int64_t began = sim_now_ns();

    answers(p, "SET lockstep:replicated yes", "OK", "node 0 (the primary)");
    while ((sim_now_ns() - began) / 1000000 < TIMEOUT_MS) {
        freeReplyObject(got);
        got = redisCommand(r, "GET lockstep:replicated");
        if (got != NULL && got->type == REDIS_REPLY_STRING)
            break;
        sim_sleep_ms(20);
    }
    ck_assert_msg(got != NULL && got->type == REDIS_REPLY_STRING && strcmp(got->str, "yes") == 0,
                  "the primary's key did not reach the replica within %d ms: it cannot log in "
                  "to its primary", TIMEOUT_MS);
    freeReplyObject(got);
    redisFree(p);
    redisFree(r);
}
END_TEST

/* The sentinel asks for the password too: a stranger can neither learn
 * the primary nor order a failover; the run's client can, and the
 * sentinel, logged in to the primary (auth-pass), found the replica. */
START_TEST(test_redisd_sentinel)
{
    redisContext *c = stranger(sentinel.port);
    int64_t began = sim_now_ns();

    refused(c, "PING", "NOAUTH", "the sentinel");
    refused(c, "SENTINEL get-master-addr-by-name " MASTER, "NOAUTH", "the sentinel");
    refused(c, "SENTINEL failover " MASTER, "NOAUTH", "the sentinel");
    redisFree(c);
    ck_assert_msg(sim_sentinel_master_port(&sentinel, MASTER) == cl.node[0].port,
                  "the run's client did not learn the primary (port %d) from the sentinel",
                  cl.node[0].port);
    while (!sim_sentinel_knows_replica(&sentinel, MASTER, cl.replica.port) &&
           (sim_now_ns() - began) / 1000000 < SENTINEL_WAIT_MS)
        sim_sleep_ms(50);
    ck_assert_msg(sim_sentinel_knows_replica(&sentinel, MASTER, cl.replica.port),
                  "the sentinel did not find the replica within %d ms: it cannot log in to "
                  "the primary", SENTINEL_WAIT_MS);
}
END_TEST

/* The password is in no server's command line, which every local user
 * can read, and in files only the run's user can read. */
START_TEST(test_redisd_password_kept)
{
    char path[64], args[4096], conf[SIM_PATH_LEN + 16];
    const char *name;
    const sim_server *s = server(_i, &name);
    struct stat st;
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)s->pid);
    ck_assert_msg((fd = open(path, O_RDONLY)) >= 0, "cannot read %s", path);
    n = read(fd, args, sizeof(args) - 1);
    close(fd);
    for (ssize_t k = 0; k < n; k++)
        args[k] = args[k] == '\0' ? ' ' : args[k];
    args[n > 0 ? n : 0] = '\0';
    ck_assert_msg(strstr(args, sim_password()) == NULL,
                  "the password is on %s's command line: %s", name, args);
    snprintf(conf, sizeof(conf), "%s/auth.conf", s->dir);
    ck_assert_msg(stat(conf, &st) == 0 && (st.st_mode & 077) == 0,
                  "%s, which holds the password, is readable by others", conf);
}
END_TEST

Suite *redis_servers_suite(void)
{
    Suite *s = suite_create("redis");
    TCase *tc = tcase_create("redis");

    tcase_set_timeout(tc, TCASE_TIMEOUT_S);
    tcase_add_unchecked_fixture(tc, servers_setup, servers_teardown);
    tcase_add_loop_test(tc, test_redisd_only_the_run_gets_in, 0, SERVERS);
    tcase_add_test(tc, test_redisd_replica_follows);
    tcase_add_test(tc, test_redisd_sentinel);
    tcase_add_loop_test(tc, test_redisd_password_kept, 0, SERVERS);
    suite_add_tcase(s, tc);
    return s;
}
