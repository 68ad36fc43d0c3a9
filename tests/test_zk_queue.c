/* test_zk_queue: the queue and the token of a ZooKeeper lock that has
 * them (v11, Curator's InterProcessMutex): waiters served in the order
 * they came, a Curator client's node waited for, and the czxid as a
 * fencing token that grows from holder to holder, also across a leader
 * change; and in both stages, a create whose reply was lost adopted, not
 * made twice (the contract of tests/test_zk.c, continued). */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "harness.h"
#include "zk_tests.h"

#define LEASE_MS 10000     /* never runs out during a test */
#define SHORT_MS 300       /* a waiter's budget, and the steps between arrivals */
#define WAITERS 3          /* the order test's queue */
#define LOST_LEASE_MS 4500 /* the lost reply's session: its client gives the
                            * connection up after two thirds of it, and has
                            * the last third to come back before the
                            * ensemble ends the session with the node */
#define RELAY_POLL_MS 20   /* the relay looks at its stop flag this often */

/* The czxid of the only child of the lock name, read by the test. */
static long long czxid_of_holder(zhandle_t *zh, const char *name)
{
    struct String_vector kids = { 0, NULL };
    char path[256], child[512];
    struct Stat st;
    int rc;

    zk_path(path, sizeof(path), name);
    rc = zoo_get_children(zh, path, 0, &kids);
    ck_assert_msg(rc == ZOK && kids.count == 1, "'%s' has %d children (%s); expected the "
                  "holder's alone", name, kids.count, zerror(rc));
    snprintf(child, sizeof(child), "%s/%s", path, kids.data[0]);
    deallocate_String_vector(&kids);
    ck_assert_msg(zoo_exists(zh, child, 0, &st) == ZOK, "cannot read %s", child);
    return st.czxid;
}

START_TEST(test_zk_token_is_czxid)
{
    zhandle_t *zh = zk_open();
    long long first, again, second;
    dlock *a, *b;

    harness_title("the token is the holder's node's czxid, the same on re-entry, higher for "
                  "the next holder, 0 without a hold");
    a = harness_lock(harness_server(), "czxid", LEASE_MS, 0);
    ck_assert_msg(dlock_token(a) == 0, "a token before any acquire: %lld", dlock_token(a));
    ck_assert_msg(dlock_acquire(a) == DLOCK_OK, "A could not take the lock: %s", dlock_errstr(a));
    first = dlock_token(a);
    ck_assert_msg(first > 0 && first == czxid_of_holder(zh, "czxid"), "A's token %lld is not "
                  "its node's czxid %lld", first, czxid_of_holder(zh, "czxid"));
    ck_assert_msg(dlock_acquire(a) == DLOCK_OK, "A's re-entry failed: %s", dlock_errstr(a));
    again = dlock_token(a);
    ck_assert_msg(again == first, "re-entry changed the token from %lld to %lld", first, again);
    release_ok(a, "A");
    release_ok(a, "A");
    ck_assert_msg(dlock_token(a) == 0, "a token after the last release: %lld", dlock_token(a));
    b = take("B", "czxid", LEASE_MS);
    second = dlock_token(b);
    ck_assert_msg(second > first, "B's token %lld is not above A's %lld", second, first);
    release_ok(b, "B");
    dlock_free(b);
    dlock_free(a);
    zk_close(zh);
}
END_TEST

/* A new leader starts a new epoch: the high 32 bits of every zxid. */
START_TEST(test_zk_token_across_leader_change)
{
    sim_ensemble e = *harness_ensemble(); /* the fixture reaps what this kills */
    long long before, after;
    char err[256];
    int old, now;
    dlock *a, *b;

    harness_title("a token drawn after the leader died is above every token before it: a "
                  "new epoch");
    a = take("A", "epoch", LEASE_MS);
    before = dlock_token(a);
    release_ok(a, "A");
    ck_assert_msg((old = sim_ensemble_leader(&e)) >= 0, "no node says it leads");
    kill(e.node[old].pid, SIGKILL);
    e.node[old].pid = 0;
    now = sim_ensemble_wait(&e, SIM_ENSEMBLE_ELECTION_MS, err, sizeof(err));
    ck_assert_msg(now >= 0 && now != old, "no new leader after node %d died: %s", old, err);
    b = harness_lock(harness_server(), "epoch", LEASE_MS, 10 * SHORT_MS);
    ck_assert_msg(dlock_acquire(b) == DLOCK_OK, "B could not take the lock after the "
                  "failover: %s", dlock_errstr(b));
    after = dlock_token(b);
    ck_assert_msg(after > before && (after >> 32) > (before >> 32), "B's token %#llx after "
                  "the leader change is not in a later epoch than A's %#llx", after, before);
    release_ok(b, "B");
    dlock_free(b);
    dlock_free(a);
}
END_TEST

/* ---- the queue ------------------------------------------------------------------------ */

typedef struct waiter {
    dlock *l;
    int rc;
    int64_t got_ms; /* when its acquire returned */
} waiter;

/* Waits until the lock "line" has n nodes: a waiter's session and its
 * node take a while to make on a loaded machine. */
static void queued(zhandle_t *zh, int n)
{
    int64_t deadline = harness_now_ms() + 40 * SHORT_MS;

    while (zk_nodes(zh, "line") < n && harness_now_ms() < deadline)
        harness_sleep_ms(5);
    ck_assert_msg(zk_nodes(zh, "line") == n, "the lock 'line' has %d nodes; expected %d, the "
                  "holder's and each waiter's so far", zk_nodes(zh, "line"), n);
}

static void *wait_in_line(void *arg)
{
    waiter *w = arg;

    w->rc = dlock_acquire(w->l);
    w->got_ms = harness_now_ms();
    if (w->rc == DLOCK_OK) {
        harness_sleep_ms(SHORT_MS / 10);
        dlock_release(w->l);
    }
    return NULL;
}

START_TEST(test_zk_waiters_in_order)
{
    waiter w[WAITERS];
    pthread_t t[WAITERS];
    dlock *a = take("A", "line", LEASE_MS);
    zhandle_t *zh = zk_open();
    int i;

    harness_title("%d waiters that came one after the other get the lock in that order",
                  WAITERS);
    for (i = 0; i < WAITERS; i++) {
        w[i] = (waiter){ harness_lock(harness_server(), "line", LEASE_MS, 40 * SHORT_MS), -1, 0 };
        ck_assert_msg(pthread_create(&t[i], NULL, wait_in_line, &w[i]) == 0, "no thread");
        queued(zh, i + 2); /* its node is made before the next one comes */
    }
    release_ok(a, "A");
    for (i = 0; i < WAITERS; i++)
        pthread_join(t[i], NULL);
    for (i = 0; i < WAITERS; i++) {
        ck_assert_msg(w[i].rc == DLOCK_OK, "waiter %d got %s (%s)", i, harness_result(w[i].rc),
                      dlock_errstr(w[i].l));
        ck_assert_msg(i == 0 || w[i].got_ms >= w[i - 1].got_ms, "waiter %d got the lock "
                      "before waiter %d, who came first", i, i - 1);
    }
    for (i = 0; i < WAITERS; i++)
        dlock_free(w[i].l);
    dlock_free(a);
    zk_close(zh);
}
END_TEST

/* The node a Curator client makes: a container, then
 * _c_<uuid>-lock-<10 digits>, ephemeral and sequential. */
static void curator_node(zhandle_t *zh, const char *name, char *out, size_t len)
{
    char dir[256], prefix[384];
    int rc;

    zk_path(dir, sizeof(dir), name);
    zoo_create(zh, "/lockstep", NULL, -1, &ZOO_CREATOR_ALL_ACL, ZOO_PERSISTENT, NULL, 0);
    zoo_create(zh, dir, NULL, -1, &ZOO_CREATOR_ALL_ACL, ZOO_CONTAINER, NULL, 0);
    snprintf(prefix, sizeof(prefix), "%s/_c_0f8e6a9c-3d2b-4c1a-9e7f-5b4a3c2d1e0f-lock-", dir);
    rc = zoo_create(zh, prefix, "127.0.0.1", 9, &ZOO_CREATOR_ALL_ACL,
                    ZOO_EPHEMERAL_SEQUENTIAL, out, (int)len);
    ck_assert_msg(rc == ZOK, "the Curator-named node was not made: %s", zerror(rc));
}

START_TEST(test_zk_curator_node_waited_for)
{
    zhandle_t *zh = zk_open();
    char node[512];
    waiter w;
    pthread_t t;
    dlock *b;
    int rc;

    harness_title("a node that a Curator client made holds the lock: B waits for it");
    curator_node(zh, "curator", node, sizeof(node));
    b = harness_lock(harness_server(), "curator", LEASE_MS, SHORT_MS);
    rc = dlock_acquire(b);
    ck_assert_msg(rc == DLOCK_BUSY, "B's acquire while Curator's node %s holds got %s (%s)",
                  node, harness_result(rc), dlock_errstr(b));
    ck_assert_msg(zk_nodes(zh, "curator") == 1, "B left %d nodes after it gave up; expected "
                  "Curator's alone", zk_nodes(zh, "curator"));
    w = (waiter){ harness_lock(harness_server(), "curator", LEASE_MS, 40 * SHORT_MS), -1, 0 };
    ck_assert_msg(pthread_create(&t, NULL, wait_in_line, &w) == 0, "no thread");
    harness_sleep_ms(SHORT_MS);
    ck_assert_msg(zoo_delete(zh, node, -1) == ZOK, "cannot delete %s", node);
    pthread_join(t, NULL);
    ck_assert_msg(w.rc == DLOCK_OK, "the waiter did not get the lock after Curator's node "
                  "went: %s (%s)", harness_result(w.rc), dlock_errstr(w.l));
    dlock_free(w.l);
    dlock_free(b);
    zk_close(zh);
}
END_TEST

/* ---- a lost reply: a relay that swallows the server's answers ------------------------ */

/* One client at a time, to one server: bytes go both ways, except that
 * while mute is set the server's are read and dropped (the client's
 * still arrive). A connection that ends clears mute: the client's next
 * one carries both ways, as after a lost reply. */
typedef struct relay {
    int listen_fd, port, server_port;
    atomic_int mute, stop;
    pthread_t thread;
} relay;

static int relay_socket(int port, int listening)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    socklen_t len = sizeof(a);

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (listening ? bind(fd, (struct sockaddr *)&a, len) != 0 || listen(fd, 4) != 0
                  : connect(fd, (struct sockaddr *)&a, len) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Carries one connection until either side ends it, or stop. */
static void relay_pair(relay *r, int client, int server)
{
    struct pollfd p[2] = { { client, POLLIN, 0 }, { server, POLLIN, 0 } };
    char buf[4096];
    ssize_t n;

    while (!atomic_load(&r->stop)) {
        if (poll(p, 2, RELAY_POLL_MS) <= 0)
            continue;
        if (p[0].revents && ((n = read(client, buf, sizeof(buf))) <= 0 ||
                             write(server, buf, (size_t)n) != n))
            break;
        if (p[1].revents && (n = read(server, buf, sizeof(buf))) <= 0)
            break;
        if (p[1].revents && !atomic_load(&r->mute) && write(client, buf, (size_t)n) != n)
            break;
    }
    atomic_store(&r->mute, 0);
}

static void *relay_run(void *arg)
{
    relay *r = arg;
    struct pollfd p = { r->listen_fd, POLLIN, 0 };
    int client, server;

    while (!atomic_load(&r->stop)) {
        if (poll(&p, 1, RELAY_POLL_MS) <= 0 || (client = accept(r->listen_fd, NULL, NULL)) < 0)
            continue;
        if ((server = relay_socket(r->server_port, 0)) >= 0) {
            relay_pair(r, client, server);
            close(server);
        }
        close(client);
    }
    return NULL;
}

static void relay_start(relay *r, int server_port)
{
    char err[128];

    memset(r, 0, sizeof(*r));
    r->server_port = server_port;
    r->port = sim_server_free_ports(1, err, sizeof(err));
    ck_assert_msg(r->port > 0, "%s", err);
    r->listen_fd = relay_socket(r->port, 1);
    ck_assert_msg(r->listen_fd >= 0, "the relay cannot listen on port %d", r->port);
    ck_assert_msg(pthread_create(&r->thread, NULL, relay_run, r) == 0, "no relay thread");
}

static void relay_stop(relay *r)
{
    atomic_store(&r->stop, 1);
    pthread_join(r->thread, NULL);
    close(r->listen_fd);
}

/* The lock's node as the test's session finds it: v10's node, or the
 * first of v11's children, into out ("" when there is none); its czxid,
 * or 0. */
static long long lock_node(zhandle_t *zh, const char *name, char *out, size_t len)
{
    struct String_vector kids = { 0, NULL };
    struct Stat st;

    zk_path(out, len, name);
    if (CAPS.queue && zoo_get_children(zh, out, 0, &kids) == ZOK && kids.count > 0)
        snprintf(out + strlen(out), len - strlen(out), "/%s", kids.data[0]);
    else if (CAPS.queue)
        out[0] = '\0';
    deallocate_String_vector(&kids);
    if (out[0] == '\0' || zoo_exists(zh, out, 0, &st) != ZOK) {
        out[0] = '\0';
        return 0;
    }
    return st.czxid;
}

static atomic_int lost_returned; /* set: the lost-reply test's acquire returned */
static atomic_int lost_release;  /* set: its holder may release */
static int lost_release_rc;      /* what that release returned */

/* The holding thread's: acquires, and once told, releases. */
static void *acquire_in_thread(void *arg)
{
    waiter *w = arg;

    w->rc = dlock_acquire(w->l);
    atomic_store(&lost_returned, 1);
    while (w->rc == DLOCK_OK && !atomic_load(&lost_release))
        harness_sleep_ms(5);
    lost_release_rc = w->rc == DLOCK_OK ? dlock_release(w->l) : DLOCK_OK;
    return NULL;
}

/* A's create goes through but its reply is lost; A's client gives the
 * connection up, reconnects within its session, and holds the lock with
 * the node it made: v10 finds it its session's (ephemeralOwner), v11 by
 * its uuid (Curator's protected mode). A v10 that did not look would
 * wait for its own node or fail; a v11 that created again would hold
 * with a second node. */
START_TEST(test_zk_lost_create_adopted)
{
    zhandle_t *zh = zk_open();
    char made[512], held[512];
    long long made_czxid = 0, held_czxid;
    dlock_config cfg;
    relay r;
    waiter w;
    pthread_t t;
    int64_t deadline;

    harness_title("a create whose reply was lost: A finds the node it made and holds with it, "
                  "no second node");
    relay_start(&r, harness_ensemble()->port);
    harness_config(&cfg, harness_server(), LOST_LEASE_MS, 0);
    cfg.port = r.port;
    cfg.nodes = 1;
    w = (waiter){ dlock_new("lost", &cfg), -1, 0 };
    /* A's session first, through the relay, with both ways open. */
    ck_assert_msg(dlock_acquire(w.l) == DLOCK_OK, "A could not take the free lock through the "
                  "relay: %s", dlock_errstr(w.l));
    release_ok(w.l, "A");
    atomic_store(&r.mute, 1);
    atomic_store(&lost_release, 0);
    atomic_store(&lost_returned, 0);
    ck_assert_msg(pthread_create(&t, NULL, acquire_in_thread, &w) == 0, "no thread");
    /* Until the node is there, or A's acquire returned without one (a
     * lock that lays its node out elsewhere: no need to wait it out). */
    deadline = harness_now_ms() + 20 * LOST_LEASE_MS;
    while ((made_czxid = lock_node(zh, "lost", made, sizeof(made))) == 0 &&
           !atomic_load(&lost_returned) && harness_now_ms() < deadline)
        harness_sleep_ms(5);
    if (made_czxid == 0)
        made_czxid = lock_node(zh, "lost", made, sizeof(made));
    /* A holds, or gave up: its acquire has returned. */
    deadline = harness_now_ms() + 20 * LOST_LEASE_MS;
    while (!atomic_load(&lost_returned) && harness_now_ms() < deadline)
        harness_sleep_ms(5);
    held_czxid = lock_node(zh, "lost", held, sizeof(held));
    atomic_store(&lost_release, 1);
    pthread_join(t, NULL);
    ck_assert_msg(made[0] != '\0', "A's create made no node within %d ms", 20 * LOST_LEASE_MS);
    ck_assert_msg(w.rc == DLOCK_OK, "A's acquire after its create's reply was lost got %s (%s)",
                  harness_result(w.rc), dlock_errstr(w.l));
    ck_assert_msg(strcmp(held, made) == 0 && held_czxid == made_czxid, "A held the lock with "
                  "node %s (czxid %lld); expected the node its lost create made, %s (czxid %lld)",
                  held, held_czxid, made, made_czxid);
    ck_assert_msg(lost_release_rc == DLOCK_OK, "A's release got %s (%s)",
                  harness_result(lost_release_rc), dlock_errstr(w.l));
    dlock_free(w.l);
    relay_stop(&r);
    zk_close(zh);
}
END_TEST

/* Curator's layout, node for node: the holder's node an ephemeral
 * sequential child of the lock's node, named _c_<uuid>-lock-<10 digits>.
 * (That the lock's node is a container a client cannot see: the server
 * reports its ephemeralOwner as 0.) */
START_TEST(test_zk_curator_layout)
{
    zhandle_t *zh = zk_open();
    char path[512];
    struct Stat st;
    const char *name;
    dlock *a;
    size_t n;

    harness_title("the holder's node is _c_<uuid>-lock-<10 digits>, ephemeral, as Curator "
                  "names it");
    a = take("A", "layout", LEASE_MS);
    ck_assert_msg(lock_node(zh, "layout", path, sizeof(path)) != 0, "A's node is not there");
    name = strrchr(path, '/') + 1;
    n = strlen(name);
    ck_assert_msg(strncmp(name, "_c_", 3) == 0 && n == 3 + 36 + 6 + 10 &&
                  strncmp(name + 3 + 36, "-lock-", 6) == 0 &&
                  strspn(name + n - 10, "0123456789") == 10 &&
                  strspn(name + 3, "0123456789abcdef-") == 36 + 1 /* and "-lock" */,
                  "A's node %s is not named "
                  "_c_<uuid>-lock-<10 digits>", name);
    ck_assert_msg(zoo_exists(zh, path, 0, &st) == ZOK && st.ephemeralOwner != 0,
                  "A's node %s is not ephemeral", path);
    release_ok(a, "A");
    dlock_free(a);
    zk_close(zh);
}
END_TEST

void zk_add_queue_tcases(Suite *s, int own)
{
    const TTest *queue[] = { test_zk_waiters_in_order, test_zk_curator_node_waited_for,
                             test_zk_curator_layout };
    /* The last kills the leader. */
    const TTest *token[] = { test_zk_token_is_czxid, test_zk_token_across_leader_change };

    if (CAPS.queue && !own)
        ADD_TESTS(zk_tcase(s, "queue"), queue);
    if (!own)
        tcase_add_test(zk_tcase(s, "lost-reply"), test_zk_lost_create_adopted);
    if (CAPS.token && own)
        ADD_TESTS(zk_own_tcase(s, "token"), token);
}
