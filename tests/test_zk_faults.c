/* test_zk_faults: a ZooKeeper lock under load and under faults: client
 * processes and threads counting under it, its leader killed while a
 * client holds it, and the errors a caller gets (the contract of
 * tests/test_zk.c, continued). */
#define _GNU_SOURCE
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "zk_client.h"
#include "zk_observer.h"
#include "zk_tests.h"

#define LEASE_MS 10000     /* never runs out during a test */
#define CLIENTS 4          /* the contention test: processes ... */
#define ROUNDS 25          /* ... times increments each */
#define THREADS 4          /* the shared-handle test: threads ... */
#define THREAD_ROUNDS 25   /* ... times increments each, all on one handle */
#define COUNTERS "/counters" /* where the contention test counts ... */
#define COUNTER COUNTERS "/contention" /* ... in this node */
#define RELEASE_TRIES 10   /* a release while the client finds the new leader */
#define CLOCK_SESSION_MS 1000 /* the clock test's session: a lease of the matrix's size */
#define CLOCK_JUMP_MS 60000   /* sixty such sessions */
#define CLOCK_TCASE_S 240     /* three JVMs of its own on a loaded 2-core machine */

/* ---- many at once: the counter is a node ------------------------------------------ */

/* The processes and threads are lock_helpers.c's, as the Redis stages'
 * are; the counter is the node COUNTER, written with a session of each
 * client's own. */
static void *counter_open(void)
{
    return zk_open();
}

/* A read of the counter syncs first: each client's session may be on a
 * follower that has not applied the last holder's write yet, which was
 * acknowledged by the leader and the other follower; an increment on
 * that stale value would lose an update with one holder at a time. */
static long long counter_get(void *conn)
{
    char buf[32];
    int len = sizeof(buf) - 1, rc = zk_sync(conn) == 0 ? zoo_get(conn, COUNTER, 0, buf, &len,
                                                                 NULL) : ZSYSTEMERROR;

    if (rc == ZNONODE)
        return 0;
    if (rc != ZOK || len < 0) {
        fprintf(stderr, "counter %s: %s\n", COUNTER, rc == ZSYSTEMERROR ? "no answer to a sync"
                                                                          : zerror(rc));
        return -1;
    }
    buf[len] = '\0';
    return atoll(buf);
}

static int counter_set(void *conn, long long n)
{
    char buf[32];
    int len = snprintf(buf, sizeof(buf), "%lld", n), rc;

    rc = zoo_set(conn, COUNTER, buf, len, -1);
    if (rc == ZNONODE) {
        zoo_create(conn, COUNTERS, NULL, -1, &ZOO_CREATOR_ALL_ACL, 0, NULL, 0);
        rc = zoo_create(conn, COUNTER, buf, len, &ZOO_CREATOR_ALL_ACL, 0, NULL, 0);
    }
    if (rc != ZOK)
        fprintf(stderr, "counter %s: %s\n", COUNTER, zerror(rc));
    return rc == ZOK ? 0 : -1;
}

static void counter_close(void *conn)
{
    zk_close(conn);
}

static const counter_store zk_counter = { counter_open, counter_get, counter_set,
                                          counter_close };

START_TEST(test_zk_counter_contention)
{
    count_in_processes(&zk_counter, CLIENTS, ROUNDS);
}
END_TEST

START_TEST(test_zk_shared_handle)
{
    dlock *l = harness_lock(harness_server(), "shared", LEASE_MS, 30000);

    count_in_threads(l, THREADS, THREAD_ROUNDS);
    dlock_free(l);
}
END_TEST

/* ---- the leader dies ----------------------------------------------------------------- */

/* A release tried again while the client reconnects to a server that
 * follows the new leader, as the simulator's clients do. */
static int release_retried(dlock *l)
{
    int rc = DLOCK_ERR, i;

    for (i = 0; i < RELEASE_TRIES && rc == DLOCK_ERR; i++) {
        if (i > 0)
            harness_sleep_ms(100);
        rc = dlock_release(l);
    }
    return rc;
}

START_TEST(test_zk_leader_killed_while_held)
{
    sim_ensemble e = *harness_ensemble(); /* the fixture reaps what this kills */
    char err[256];
    int old, now, rc;
    dlock *a, *b;

    harness_title("the leader dies while A holds: a new one leads, and A's node is still there");
    a = take("A", "failover", LEASE_MS);
    ck_assert_msg((old = sim_ensemble_leader(&e)) >= 0, "no node says it leads");
    kill(e.node[old].pid, SIGKILL);
    e.node[old].pid = 0;
    now = sim_ensemble_wait(&e, SIM_ENSEMBLE_ELECTION_MS, err, sizeof(err));
    ck_assert_msg(now >= 0 && now != old, "no new leader after node %d died: %s", old, err);
    b = harness_lock(harness_server(), "failover", LEASE_MS, 0);
    rc = dlock_acquire(b);
    ck_assert_msg(rc == DLOCK_BUSY, "B's try after the failover got %s (%s); expected BUSY: "
                  "A still holds", harness_result(rc), dlock_errstr(b));
    rc = release_retried(a);
    ck_assert_msg(rc == DLOCK_OK, "A's release after the failover got %s (%s)",
                  harness_result(rc), dlock_errstr(a));
    ck_assert_msg(dlock_acquire(b) == DLOCK_OK, "B could not take the lock A released: %s",
                  dlock_errstr(b));
    release_ok(b, "B");
    dlock_free(b);
    dlock_free(a);
}
END_TEST

/* ---- the wall clock jumps ----------------------------------------------------------------- */

/* An ensemble of its own, every server under the clock library: the
 * jump must show where ZooKeeper reads the wall clock (a node's ctime),
 * and a session must outlive many of its timeouts of wall clock. */
START_TEST(test_zk_clock_jump_keeps_sessions)
{
    char dir[SIM_PATH_LEN], shim[PATH_MAX], err[512];
    int64_t before, after, t0, took;
    sim_ensemble e;
    zhandle_t *zh;
    int i;

    harness_title("every server's wall clock jumps %d s: a node's ctime jumps with it, and a "
                  "%d ms session lives on", CLOCK_JUMP_MS / 1000, CLOCK_SESSION_MS);
    harness_clock_shim(shim, sizeof(shim));
    ck_assert_msg(sim_tempdir_create(dir, sizeof(dir), err, sizeof(err)) == 0, "%s", err);
    ck_assert_msg(sim_ensemble_start_clock(&e, dir, 3, shim, err, sizeof(err)) == 0,
                  "cannot start an ensemble under the clock library: %s", err);
    zh = zk_open_on(&e, CLOCK_SESSION_MS);
    t0 = harness_now_ms();
    before = zk_client_create_ctime(zh, "/before-the-jump");
    for (i = 0; i < e.nodes; i++)
        ck_assert_msg(sim_ensemble_clock_jump(&e, i, CLOCK_JUMP_MS, err, sizeof(err)) == 0,
                      "%s", err);
    harness_sleep_ms(3 * CLOCK_SESSION_MS);
    ck_assert_msg(zoo_state(zh) == ZOO_CONNECTED_STATE, "the session is not connected 3 "
                  "timeouts after the jump (state %d): its expiry followed the wall clock",
                  zoo_state(zh));
    after = zk_client_create_ctime(zh, "/after-the-jump");
    took = harness_now_ms() - t0;
    ck_assert_msg(after - before >= CLOCK_JUMP_MS && after - before <= CLOCK_JUMP_MS + took,
                  "the nodes' ctimes are %lld ms apart, %lld ms of real time; expected the "
                  "jump's %d ms more: the leader's wall clock did not move",
                  (long long)(after - before), (long long)took, CLOCK_JUMP_MS);
    zk_close(zh);
    sim_ensemble_stop(&e);
    sim_tempdir_remove(dir);
}
END_TEST

/* ---- errors ------------------------------------------------------------------------------ */

/* An error result with a reason in one line that names word (assert_error
 * of lock_helpers.h, and what the reason must say). */
static void assert_error_naming(dlock *l, int rc, const char *situation, const char *word)
{
    const char *why = dlock_errstr(l);

    ck_assert_msg(rc == DLOCK_ERR, "%s: expected ERR, got %s", situation, harness_result(rc));
    ck_assert_msg(why[0] != '\0' && strchr(why, '\n') == NULL && strstr(why, word) != NULL,
                  "%s: dlock_errstr is \"%s\"; expected one line that says \"%s\"", situation,
                  why, word);
}

START_TEST(test_zk_no_ensemble)
{
    char err[128];
    int port = sim_server_free_ports(3, err, sizeof(err)), rc;
    int64_t t0;
    dlock_config cfg;
    dlock *l;

    harness_title("no server listens: acquire returns ERR within its connect timeout");
    ck_assert_msg(port > 0, "%s", err);
    harness_config(&cfg, harness_server(), LEASE_MS, 0);
    cfg.port = port;
    cfg.timeout_ms = 300;
    l = dlock_new("nowhere", &cfg);
    t0 = harness_now_ms();
    rc = dlock_acquire(l);
    assert_error_naming(l, rc, "an ensemble that is not there", "answered");
    ck_assert_msg(harness_now_ms() - t0 < cfg.timeout_ms + 2000, "acquire took %lld ms",
                  (long long)(harness_now_ms() - t0));
    if (!CAPS.owner_check) /* else it holds nothing: NOT_OWNER, no call */
        assert_error_naming(l, dlock_release(l), "a release with no ensemble", "answered");
    dlock_free(l);
}
END_TEST

/* dlock_config_init's ensemble: one server at 127.0.0.1:2181, ZooKeeper's
 * port, and no password. */
START_TEST(test_zk_defaults)
{
    dlock_config cfg;

    harness_title("the default config names one server at 127.0.0.1:2181, no password");
    dlock_config_init(&cfg);
    ck_assert_msg(cfg.host != NULL && strcmp(cfg.host, "127.0.0.1") == 0 && cfg.port == 2181 &&
                  cfg.nodes == 1 && cfg.password == NULL, "the default config names %s:%d, "
                  "%d nodes, password %s; expected 127.0.0.1:2181, 1 node, none",
                  cfg.host ? cfg.host : "(null)", cfg.port, cfg.nodes,
                  cfg.password ? "set" : "none");
}
END_TEST

/* What dlock_new refuses, each in its own words; the handle's calls say so. */
START_TEST(test_zk_bad_config)
{
    static const struct {
        const char *name, *word;
        long lease_ms;
        int nodes;
        const char *password;
    } bad[] = {
        { "a/b", "'/'", LEASE_MS, 3, NULL },
        { "lease", "lease_ms", 10, 3, NULL },
        { "nodes", "ensemble's size", LEASE_MS, 0, NULL },
        { "secret", "password", LEASE_MS, 3, "" },
        /* lock.h allows 50 ms; the ensemble's shortest session is 100 */
        { "short", "granted a session", 50, 3, NULL },
    };
    dlock_config cfg;
    size_t i;
    dlock *l;

    harness_title("a bad name, lease, size or password, and a lease the ensemble refuses");
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        harness_config(&cfg, harness_server(), bad[i].lease_ms, 0);
        cfg.nodes = bad[i].nodes;
        cfg.password = bad[i].password;
        l = dlock_new(bad[i].name, &cfg);
        ck_assert_msg(l != NULL, "dlock_new returned NULL");
        assert_error_naming(l, dlock_acquire(l), bad[i].name, bad[i].word);
        dlock_free(l);
    }
}
END_TEST

/* ---- strangers: only the run's clients get in -------------------------------------- */

/* The lock's node as the holder's session sees it: v10's, or the first
 * of v11's children. */
static void held_node(zhandle_t *zh, const char *name, char *out, size_t len)
{
    struct String_vector kids = { 0, NULL };
    int rc;

    zk_path(out, len, name);
    if (zoo_exists(zh, out, 0, NULL) == ZOK && zoo_get_children(zh, out, 0, &kids) == ZOK &&
        kids.count > 0)
        snprintf(out + strlen(out), len - strlen(out), "/%s", kids.data[0]);
    deallocate_String_vector(&kids);
    rc = zoo_exists(zh, out, 0, NULL);
    ck_assert_msg(rc == ZOK, "the holder's node %s: %s", out, zerror(rc));
}

/* Each call a stranger could make on the lock, refused: the first with
 * first, every one with expect when it is not ZOK. */
static void assert_refused(zhandle_t *zh, const char *who, const char *node, int first,
                           int expect)
{
    char buf[64], root[128];
    struct String_vector kids = { 0, NULL };
    const char *what[] = { "list /", "list " SIM_ZK_ROOT, "read the lock's node",
                           "delete the lock's node", "create /stranger",
                           "create under " SIM_ZK_ROOT, "create under /zookeeper" };
    int rc[7], len = sizeof(buf), i;

    snprintf(root, sizeof(root), "%s/stranger", SIM_ZK_ROOT);
    rc[0] = zoo_get_children(zh, "/", 0, &kids);
    deallocate_String_vector(&kids);
    rc[1] = zoo_get_children(zh, SIM_ZK_ROOT, 0, &kids);
    deallocate_String_vector(&kids);
    rc[2] = zoo_get(zh, node, 0, buf, &len, NULL);
    rc[3] = zoo_delete(zh, node, -1);
    rc[4] = zoo_create(zh, "/stranger", NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
    rc[5] = zoo_create(zh, root, NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
    rc[6] = zoo_create(zh, "/zookeeper/quota/stranger", NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0,
                       NULL, 0);
    ck_assert_msg(rc[0] == first, "%s tried to %s: %s; expected %s", who, what[0],
                  zerror(rc[0]), zerror(first));
    for (i = 1; i < 7; i++)
        ck_assert_msg(expect == ZOK ? rc[i] != ZOK : rc[i] == expect,
                      "%s could %s (%s); expected %s", who, what[i], zerror(rc[i]),
                      expect == ZOK ? "a refusal" : zerror(expect));
}

/* The ensemble lets in only sessions that authenticated by digest, and
 * the root, ROOT and the lock's nodes only the run's id: a client
 * without the run's password can neither read, delete nor create. */
START_TEST(test_zk_strangers_refused)
{
    const sim_ensemble *e = harness_ensemble();
    zhandle_t *ours = zk_open(), *guess, *anon;
    char node[256];
    dlock *a;

    harness_title("a client without the run's password can neither read, delete nor create");
    a = take("A", "guarded", LEASE_MS);
    held_node(ours, "guarded", node, sizeof(node));
    /* A digest of its own making: digest accepts any user:password. */
    guess = zk_client_open(e->port, e->nodes, LEASE_MS, "not-the-run-s-password");
    assert_refused(guess, "a client with another password", node, ZNOAUTH, ZNOAUTH);
    zookeeper_close(guess);
    /* No credential at all: the ensemble closes its session at its
     * first request, and serves it none. */
    anon = zk_client_open(e->port, e->nodes, LEASE_MS, NULL);
    assert_refused(anon, "a client with no credential", node, ZSESSIONCLOSEDREQUIRESASLAUTH,
                   ZOK);
    zookeeper_close(anon);
    ck_assert_msg(zoo_exists(ours, node, 0, NULL) == ZOK, "A's node %s went while strangers "
                  "tried it", node);
    release_ok(a, "A");
    dlock_free(a);
    zk_close(ours);
}
END_TEST

void zk_add_fault_tcases(Suite *s, int own)
{
    const TTest *load[] = { test_zk_counter_contention, test_zk_shared_handle };
    const TTest *errors[] = { test_zk_no_ensemble, test_zk_bad_config,
                              test_zk_strangers_refused, test_zk_defaults };
    TCase *clock;

    if (!own) {
        ADD_TESTS(zk_tcase(s, "load"), load);
        ADD_TESTS(zk_tcase(s, "errors"), errors);
        return;
    }
    tcase_add_test(zk_own_tcase(s, "failover"), test_zk_leader_killed_while_held);
    /* An ensemble of its own, under the clock library. */
    clock = tcase_create("clock");
    /* Its dir goes where the runner removes it, even when the test fails
     * or times out before its own cleanup. */
    tcase_add_unchecked_fixture(clock, harness_tmpdir_setup, harness_tmpdir_teardown);
    tcase_add_checked_fixture(clock, harness_test_setup, harness_test_teardown);
    tcase_set_timeout(clock, CLOCK_TCASE_S);
    tcase_add_test(clock, test_zk_clock_jump_keeps_sessions);
    suite_add_tcase(s, clock);
}
