/* test_ensemble: a real ZooKeeper ensemble of three servers, as the
 * simulator and the ZooKeeper stages' tests start it (sim/servers/ensemble).
 *
 * One ensemble per tcase, started by its unchecked fixture in the
 * runner's process (a JVM takes a second to start: the tests of a tcase
 * share it). The tests run in processes of their own (Check's fork mode):
 * a node they kill is reaped by the fixture's teardown. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cluster.h"
#include "ensemble.h"
#include "history.h"
#include "password.h"
#include "proc.h"
#include "rundir.h"
#include "servers.h"
#include "tcases.h"
#include "util.h"
#include "zk_client.h"

#define NODES 3
#define TCASE_TIMEOUT_S 240 /* three JVMs on a loaded 2-core machine, twice */
#define ZK_STAGE 10         /* a stage whose lock lives in an ensemble */
#define JUMP_MS 60000       /* far beyond the test's own time */
#define SESSION_MS 1000     /* the other run's session */
#define WOKEN_WAIT_MS 5000  /* a waker's new session on a restarted node: its old one ends
                             * within 3 s, and it looks every 0.5 s */

static sim_ensemble fixture;    /* the tcase's ensemble */

static void ensemble_setup(void)
{
    char err[512];

    if (sim_ensemble_start(&fixture, rundir_path(), NODES, err, sizeof(err)) != 0) {
        fprintf(stderr, "tests: cannot start a ZooKeeper ensemble: %s\n", err);
        exit(EXIT_FAILURE);
    }
}

static void ensemble_teardown(void)
{
    sim_ensemble_stop(&fixture);
}

static int count(sim_zk_mode want)
{
    int i, n = 0;

    for (i = 0; i < NODES; i++)
        n += sim_ensemble_mode(&fixture, i) == want;
    return n;
}

/* ---- a running ensemble ---------------------------------------------------- */

START_TEST(test_ensemble_one_leader)
{
    int i;

    ck_assert_msg(count(SIM_ZK_LEADER) == 1 && count(SIM_ZK_FOLLOWER) == NODES - 1,
                  "expected one leader and %d followers; srvr says %d leaders, %d followers",
                  NODES - 1, count(SIM_ZK_LEADER), count(SIM_ZK_FOLLOWER));
    for (i = 0; i < NODES; i++)
        ck_assert_msg(fixture.node[i].port == fixture.port + i,
                      "node %d listens on %d; a lock's config expects port + %d = %d",
                      i, fixture.node[i].port, i, fixture.port + i);
}
END_TEST

/* Each node has a session of the ensemble's waker, whose pings wake a
 * request that ZooKeeper 3.8.0 can leave waiting (zk_waker.c): srvr counts
 * it beside its own connection. */
static void assert_woken(const sim_ensemble *e)
{
    char out[1024], *c;
    int i, n;
    int64_t deadline = sim_now_ns() + (int64_t)WOKEN_WAIT_MS * 1000000;

    for (i = 0; i < NODES; i++) {
        for (;;) {
            ck_assert_msg(sim_ensemble_ask(e->port + i, "srvr", out, sizeof(out)) == 0,
                          "node %d did not answer srvr", i);
            c = strstr(out, "Connections: ");
            n = c != NULL ? atoi(c + strlen("Connections: ")) : 0;
            if (n >= 2 || sim_now_ns() >= deadline)
                break;
            sim_sleep_ms(50);
        }
        ck_assert_msg(n >= 2, "node %d has no session besides srvr's within %d ms; its "
                      "answer: %s", i, WOKEN_WAIT_MS, out);
    }
}

START_TEST(test_ensemble_woken)
{
    assert_woken(&fixture);
}
END_TEST

/* Each node in its own dir, with the settings the README promises. */
START_TEST(test_ensemble_config)
{
    const char *want[] = { "tickTime=50\n", "forceSync=no\n", "admin.enableServer=false\n",
                           "4lw.commands.whitelist=srvr,ruok,mntr,dump\n",
                           "minSessionTimeout=100\n", "clientPortAddress=127.0.0.1\n" };
    char path[SIM_PATH_LEN + 16], text[2048];
    size_t n, k;
    FILE *f;
    int i;

    for (i = 0; i < NODES; i++) {
        ck_assert_msg(i == 0 || strcmp(fixture.node[i].dir, fixture.node[0].dir) != 0,
                      "nodes 0 and %d share the dir %s", i, fixture.node[i].dir);
        snprintf(path, sizeof(path), "%s/zoo.cfg", fixture.node[i].dir);
        ck_assert_msg((f = fopen(path, "r")) != NULL, "node %d has no %s", i, path);
        n = fread(text, 1, sizeof(text) - 1, f);
        fclose(f);
        text[n] = '\0';
        for (k = 0; k < sizeof(want) / sizeof(want[0]); k++)
            ck_assert_msg(strstr(text, want[k]) != NULL, "%s lacks the line %.*s", path,
                          (int)strlen(want[k]) - 1, want[k]);
    }
}
END_TEST

/* Whether pid maps a file whose path ends in name. */
static int maps_file(pid_t pid, const char *name)
{
    char path[64], line[1024];
    size_t len = strlen(name), n;
    int found = 0;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%ld/maps", (long)pid);
    if ((f = fopen(path, "r")) == NULL)
        return 0;
    while (!found && fgets(line, sizeof(line), f) != NULL) {
        n = strcspn(line, "\n");
        found = n >= len && strncmp(line + n - len, name, len) == 0;
    }
    fclose(f);
    return found;
}

/* Every server maps make's archive of its classes: a JVM whose options
 * or class path differ from the dump's starts without it, and says so
 * only in its log. */
START_TEST(test_ensemble_class_data)
{
    for (int i = 0; i < NODES; i++)
        ck_assert_msg(maps_file(fixture.node[i].pid, "/zookeeper.jsa"),
                      "node %d's java (pid %ld) does not map zookeeper.jsa: its options or "
                      "class path are not the ones make dumped the classes with (see "
                      "ZK_JAVA_OPTS in the Makefile and %s/zookeeper.log)", i,
                      (long)fixture.node[i].pid, fixture.node[i].dir);
}
END_TEST

/* The leader dies; the two left elect one of themselves. */
START_TEST(test_ensemble_leader_killed)
{
    sim_ensemble e = fixture; /* this test's copy: the fixture reaps what it kills */
    char err[256];
    int old = sim_ensemble_leader(&e), now;
    pid_t pid;

    ck_assert_msg(old >= 0, "no node says it leads before the kill");
    pid = e.node[old].pid;
    kill(pid, SIGKILL);
    e.node[old].pid = 0;
    now = sim_ensemble_wait(&e, SIM_ENSEMBLE_ELECTION_MS, err, sizeof(err));
    ck_assert_msg(now >= 0, "after the leader (node %d) was killed: %s", old, err);
    ck_assert_msg(now != old && sim_ensemble_mode(&e, now) == SIM_ZK_LEADER,
                  "expected a new leader other than node %d, got node %d", old, now);
    ck_assert_msg(sim_ensemble_mode(&fixture, old) == SIM_ZK_DOWN,
                  "the killed leader, node %d, still answers srvr", old);
}
END_TEST

/* A node restarts with an empty data dir and joins again. */
START_TEST(test_ensemble_restart_empty)
{
    sim_ensemble e = fixture;
    char err[512], old_dir[SIM_PATH_LEN];
    int i = (sim_ensemble_leader(&e) + 1) % NODES;
    struct stat st;

    snprintf(old_dir, sizeof(old_dir), "%s", e.node[i].dir);
    /* Its pid is the fixture's child: this process cannot reap it. */
    kill(e.node[i].pid, SIGKILL);
    e.node[i].pid = 0;
    ck_assert_msg(sim_ensemble_restart(&e, i, SIM_ENSEMBLE_START_MS, err, sizeof(err)) == 0,
                  "node %d did not come back: %s", i, err);
    ck_assert_msg(strcmp(e.node[i].dir, old_dir) != 0 && stat(e.node[i].dir, &st) == 0,
                  "the restarted node %d should have a new dir, not %s", i, old_dir);
    ck_assert_msg(e.node[i].port == e.port + i, "node %d came back on port %d, not %d",
                  i, e.node[i].port, e.port + i);
    ck_assert_msg(count(SIM_ZK_LEADER) == 1, "after the restart %d nodes lead",
                  count(SIM_ZK_LEADER));
    assert_woken(&e); /* the waker has a session on the new node too */
    sim_server_kill(&e.node[i]); /* ours: reap it here */
}
END_TEST

/* ---- nothing left behind ------------------------------------------------------ */

/* Stopped: no process, no dir. */
START_TEST(test_ensemble_stop_leaves_nothing)
{
    sim_ensemble e;
    char err[512], dir[NODES][SIM_PATH_LEN];
    pid_t pid[NODES];
    struct stat st;
    int i;

    ck_assert_msg(sim_ensemble_start(&e, rundir_path(), NODES, err, sizeof(err)) == 0, "%s",
                  err);
    for (i = 0; i < NODES; i++) {
        pid[i] = e.node[i].pid;
        snprintf(dir[i], sizeof(dir[i]), "%s", e.node[i].dir);
    }
    sim_ensemble_stop(&e);
    for (i = 0; i < NODES; i++) {
        ck_assert_msg(!rundir_alive(pid[i]), "node %d's java (pid %ld) outlived the stop", i,
                      (long)pid[i]);
        ck_assert_msg(stat(dir[i], &st) != 0, "node %d's dir %s outlived the stop", i, dir[i]);
    }
}
END_TEST

/* In a child: an ensemble in a temp dir of its own, told to the parent,
 * then a wait for the parent's SIGINT, which the simulator's own handler
 * gets (as in build/sim/sim), not Check's. */
static void start_and_wait(int fd)
{
    char err[512];
    rundir_started st;
    sim_ensemble e;
    int i;

    sim_cluster_cleanup_on_signal();
    memset(&st, 0, sizeof(st));
    setenv("TMPDIR", rundir_path(), 1);
    if (sim_tempdir_create(st.dir, sizeof(st.dir), err, sizeof(err)) != 0 ||
        sim_ensemble_start(&e, st.dir, NODES, err, sizeof(err)) != 0)
        _exit(3);
    for (i = 0; i < NODES; i++)
        st.pid[i] = e.node[i].pid;
    if (write(fd, &st, sizeof(st)) != (ssize_t)sizeof(st))
        _exit(4);
    for (;;)
        pause();
}

/* Ctrl-C in the middle of a run: the signal's cleanup kills every node
 * and removes the temp dir. */
START_TEST(test_ensemble_interrupt_leaves_nothing)
{
    rundir_started st;
    pid_t child = rundir_start_child(start_and_wait, &st, "ensemble");

    rundir_interrupt(child, &st, "node");
}
END_TEST

/* ---- ports ------------------------------------------------------------------ */

/* A server's ports lie below the kernel's range for the local ends of
 * outgoing connections: a client's connect cannot take one between the
 * moment it is found free and the moment a slow JVM binds it. */
START_TEST(test_ports_below_the_ephemeral_range)
{
    int low = 0, port, i;
    char err[256];
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");

    ck_assert_msg(f != NULL && fscanf(f, "%d", &low) == 1, "cannot read the kernel's range");
    fclose(f);
    for (i = 0; i < 50; i++) {
        ck_assert_msg((port = sim_server_free_ports(6, err, sizeof(err))) > 0, "%s", err);
        ck_assert_msg(port >= 1024 && port + 5 < low, "ports %d-%d: the kernel hands out "
                      "%d and up to outgoing connections", port, port + 5, low);
    }
}
END_TEST

/* ---- a matrix's shared ensemble ----------------------------------------------- */

/* The clock library, next to this program: build/clockshim.so. */
static void clock_shim(char *out, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

    ck_assert_msg(n > 0, "readlink /proc/self/exe: %s", strerror(errno));
    self[n] = '\0';
    snprintf(out, len, "%s/clockshim.so", dirname(self));
    ck_assert_msg(access(out, R_OK) == 0, "the clock library %s is missing: build it with "
                  "make", out);
}

/* A matrix starts one ensemble for its runs that kill and restart no
 * server. A clock-jump run is one of them: it moves every server's wall
 * clock, which a node that another run creates shows in its ctime, while
 * that run's session, timed by the monotonic clock, lives on. */
START_TEST(test_shared_ensemble_clock_jump)
{
    const sim_stage *stage = sim_stage_get(ZK_STAGE);
    char shim[PATH_MAX], path[SIM_PATH_LEN + 16], err[512];
    sim_servers jumper, other;
    int64_t before, after, t0, took;
    sim_history *h;
    zhandle_t *zh;

    setenv("TMPDIR", rundir_path(), 1); /* its dirs go with the run's, failed or not */
    clock_shim(shim, sizeof(shim));
    ck_assert_msg(sim_servers_share(stage, shim, err, sizeof(err)) == 0, "%s", err);
    ck_assert_msg(sim_servers_start_clock(&jumper, stage, SIM_SERVERS_SHARED | SIM_SERVERS_CLOCK,
                                          shim, err, sizeof(err)) == 0, "%s", err);
    ck_assert_msg(sim_servers_start(&other, stage, SIM_SERVERS_SHARED, err, sizeof(err)) == 0,
                  "%s", err);
    ck_assert_msg(jumper.port[0] == other.port[0], "the clock-jump run has an ensemble of its "
                  "own (port %d), not the shared one (port %d)", jumper.port[0], other.port[0]);
    snprintf(path, sizeof(path), "%s/shared.history", rundir_path());
    ck_assert_msg((h = sim_history_create(path, err, sizeof(err))) != NULL, "%s", err);
    jumper.h = h;
    zh = zk_client_open(other.port[0], other.nodes, SESSION_MS, sim_password());
    t0 = sim_now_ns();
    before = zk_client_create_ctime(zh, "/shared-before-the-jump");
    ck_assert_msg(sim_servers_clock_jump(&jumper, 0, JUMP_MS, err, sizeof(err)) == 0, "%s",
                  err);
    sim_sleep_ms(3 * SESSION_MS);
    ck_assert_msg(zoo_state(zh) == ZOO_CONNECTED_STATE, "the other run's session is not "
                  "connected 3 timeouts after the jump (state %d)", zoo_state(zh));
    after = zk_client_create_ctime(zh, "/shared-after-the-jump");
    took = (sim_now_ns() - t0) / 1000000;
    ck_assert_msg(after - before >= JUMP_MS && after - before <= JUMP_MS + took,
                  "the nodes' ctimes are %lld ms apart, %lld ms of real time: the shared "
                  "servers' clocks did not jump %d ms", (long long)(after - before),
                  (long long)took, JUMP_MS);
    zookeeper_close(zh);
    sim_history_close(h);
    sim_servers_stop(&jumper);
    sim_servers_stop(&other);
    sim_servers_unshare();
}
END_TEST

/* A tcase of the tests, added to s, on an ensemble of its own. */
static void ensemble_tcase(Suite *s, const char *name, const TTest *const *tests, size_t n)
{
    TCase *tc = add_tcase(s, name, tests, n);

    tcase_add_unchecked_fixture(tc, ensemble_setup, ensemble_teardown);
    tcase_set_timeout(tc, TCASE_TIMEOUT_S);
}
#define ENSEMBLE_TCASE(s, name, tests) \
    ensemble_tcase((s), (name), (tests), sizeof(tests) / sizeof((tests)[0]))

Suite *ensemble_suite(void)
{
    const TTest *running[] = {
        test_ensemble_one_leader, test_ensemble_woken, test_ensemble_config,
        test_ensemble_class_data,
    };
    const TTest *failover[] = { test_ensemble_leader_killed };
    const TTest *restart[] = { test_ensemble_restart_empty };
    const TTest *ports[] = { test_ports_below_the_ephemeral_range };
    const TTest *shared[] = { test_shared_ensemble_clock_jump };
    /* These start ensembles of their own. */
    const TTest *cleanup[] = {
        test_ensemble_stop_leaves_nothing, test_ensemble_interrupt_leaves_nothing,
    };
    Suite *s = suite_create("ensemble");

    ENSEMBLE_TCASE(s, "running", running);
    ENSEMBLE_TCASE(s, "failover", failover);
    ENSEMBLE_TCASE(s, "restart", restart);
    tcase_set_timeout(ADD_TCASE(s, "cleanup", cleanup), TCASE_TIMEOUT_S);
    ADD_TCASE(s, "ports", ports);
    tcase_set_timeout(ADD_TCASE(s, "shared", shared), TCASE_TIMEOUT_S);
    return s;
}
