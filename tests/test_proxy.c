/* test_proxy: the partition fault's relay (sim/servers/proxy.c) between
 * clients and a node, as a partition run puts it there.
 *
 * Through its route a client talks to the node as if directly. Cut off,
 * its calls time out (an I/O error on a connection that stays open, not
 * a refusal, not a closed connection), a new connection is accepted and
 * gets no answer either, and what it sent never reaches the server;
 * another client's route goes on working. Healed, the route carries
 * bytes again. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "proxy.h"
#include "suites.h"

#define TIMEOUT_MS 300  /* the clients' command timeout here: one lease */

typedef struct fixture {
    char dir[SIM_PATH_LEN];
    char path[SIM_CONTROL_PATH_LEN];
    sim_control *ctl;
    sim_server server;
    sim_proxy proxy;
} fixture;

static void set_up(fixture *f)
{
    char err[HARNESS_ERRSTR_LEN];

    memset(f, 0, sizeof(*f));
    harness_server_start(&f->server);
    ck_assert_msg(sim_tempdir_create(f->dir, sizeof(f->dir), err, sizeof(err)) == 0, "%s", err);
    snprintf(f->path, sizeof(f->path), "%s/run.control", f->dir);
    f->ctl = sim_control_create(f->path, err, sizeof(err));
    ck_assert_msg(f->ctl != NULL, "%s", err);
    f->ctl->nodes = 1;
    f->ctl->timeout_ms = TIMEOUT_MS;
    snprintf(f->ctl->password, sizeof(f->ctl->password), "%s", sim_password());
    f->ctl->nodes_auth = 1;
    atomic_store(&f->ctl->node_port[0], f->server.port);
    ck_assert_msg(sim_proxy_start(&f->proxy, f->ctl, 2, err, sizeof(err)) == 0, "%s", err);
}

static void tear_down(fixture *f)
{
    sim_proxy_stop(&f->proxy);
    sim_control_close(f->ctl);
    sim_tempdir_remove(f->dir);
    sim_server_stop(&f->server);
}

/* Client's connection to node 0 through its route. */
static redisContext *route(fixture *f, int client)
{
    char err[HARNESS_ERRSTR_LEN];
    redisContext *c = sim_control_connect_via(f->ctl, client, 0, err, sizeof(err));

    ck_assert_msg(c != NULL, "client %d cannot connect through its route: %s", client, err);
    return c;
}

static void assert_answers(redisContext *c, const char *who)
{
    redisReply *r = redisCommand(c, "PING");

    ck_assert_msg(r != NULL && r->type == REDIS_REPLY_STATUS && strcmp(r->str, "PONG") == 0,
                  "%s: PING got no PONG: %s", who, r == NULL ? c->errstr : "another reply");
    freeReplyObject(r);
}

/* The command gets no reply: its connection timed out, open, as behind
 * a cut link; neither refused nor closed. */
static void assert_times_out(redisContext *c, const char *cmd, const char *who)
{
    redisReply *r = redisCommand(c, cmd);

    ck_assert_msg(r == NULL, "%s: %s was answered through a cut link", who, cmd);
    ck_assert_msg(c->err == REDIS_ERR_IO, "%s: %s failed with \"%s\" (error %d), not a "
                  "timeout (an I/O error, %d): a cut link closes nothing", who, cmd,
                  c->errstr, c->err, REDIS_ERR_IO);
}

START_TEST(test_proxy_cuts_one_client_off)
{
    fixture f;
    redisContext *a, *b, *late, *direct;
    char value[16];

    harness_title("the proxy carries a client's commands, and drops them while it is cut off");
    set_up(&f);
    ck_assert_msg(atomic_load(&f.ctl->client[0].via_port[0]) > 0 &&
                  atomic_load(&f.ctl->client[0].via_port[0]) != f.server.port,
                  "client A's route is not the proxy's port");
    a = route(&f, 0);
    b = route(&f, 1);
    assert_answers(a, "A before the cut");
    sim_proxy_cut(f.ctl, 0, 1u);
    assert_times_out(a, "SET cut 1", "A cut off");
    late = route(&f, 0);
    assert_times_out(late, "PING", "A's new connection while cut off");
    assert_answers(b, "B while A is cut off");
    direct = harness_connect(&f.server);
    ck_assert_msg(!harness_str(direct, value, sizeof(value), "GET cut"),
                  "A's SET reached the server through a cut link");
    sim_proxy_heal(f.ctl, 0, 1u);
    redisFree(a);
    a = route(&f, 0);
    assert_answers(a, "A after the link came back");
    redisFree(a);
    redisFree(b);
    redisFree(late);
    redisFree(direct);
    tear_down(&f);
}
END_TEST

/* Without a proxy the route is the node itself: a run that cuts nothing
 * pays no hop. */
START_TEST(test_proxy_absent_means_direct)
{
    char err[HARNESS_ERRSTR_LEN], dir[SIM_PATH_LEN], path[SIM_CONTROL_PATH_LEN];
    sim_server server;
    sim_control *ctl;
    redisContext *c;

    harness_title("a client whose slot names no proxy port connects to the node itself");
    harness_server_start(&server);
    ck_assert_msg(sim_tempdir_create(dir, sizeof(dir), err, sizeof(err)) == 0, "%s", err);
    snprintf(path, sizeof(path), "%s/run.control", dir);
    ck_assert_msg((ctl = sim_control_create(path, err, sizeof(err))) != NULL, "%s", err);
    ctl->nodes = 1;
    ctl->timeout_ms = TIMEOUT_MS;
    snprintf(ctl->password, sizeof(ctl->password), "%s", sim_password());
    ctl->nodes_auth = 1;
    atomic_store(&ctl->node_port[0], server.port);
    c = sim_control_connect_via(ctl, 0, 0, err, sizeof(err));
    ck_assert_msg(c != NULL, "%s", err);
    assert_answers(c, "A without a proxy");
    ck_assert_msg(c->tcp.port == server.port, "A connected to port %d, not to the node's %d",
                  c->tcp.port, server.port);
    redisFree(c);
    sim_control_close(ctl);
    sim_tempdir_remove(dir);
    sim_server_stop(&server);
}
END_TEST

/* The proxy's ports are as closed as the node: a client that does not
 * open with the run's AUTH is refused, even while its route is cut. */
START_TEST(test_proxy_wants_the_password)
{
    struct timeval tv = { TIMEOUT_MS / 1000, (TIMEOUT_MS % 1000) * 1000 };
    fixture f;
    redisContext *c;
    redisReply *r;

    harness_title("a client without the run's password gets nothing through the proxy");
    set_up(&f);
    for (int cut = 0; cut < 2; cut++) {
        if (cut)
            sim_proxy_cut(f.ctl, 0, 1u);
        c = redisConnectWithTimeout("127.0.0.1", atomic_load(&f.ctl->client[0].via_port[0]), tv);
        ck_assert_msg(c != NULL && !c->err, "cannot connect to the proxy");
        r = redisCommand(c, "FLUSHALL");
        ck_assert_msg(r != NULL && r->type == REDIS_REPLY_ERROR && strncmp(r->str, "NOAUTH", 6) == 0,
                      "FLUSHALL without the password through the proxy%s answered %s; expected "
                      "NOAUTH", cut ? " (route cut)" : "",
                      r == NULL ? c->errstr : r->type == REDIS_REPLY_ERROR ? r->str : "no error");
        freeReplyObject(r);
        redisFree(c);
    }
    tear_down(&f);
}
END_TEST

Suite *proxy_suite(void)
{
    const TTest *tests[] = { test_proxy_cuts_one_client_off, test_proxy_absent_means_direct,
                             test_proxy_wants_the_password };

    return OWN_SERVERS_SUITE("proxy", "partition", tests);
}
