/* test_zk: the contract suite of a lock kept by a ZooKeeper ensemble.
 *
 * Every test talks to a real ensemble of three servers, and reads the
 * lock's nodes with a session of its own (zk_tests.h), and what its
 * servers counted (their mntr answers, as the bench reads them). A JVM
 * takes a second of CPU to start, so the tcases whose tests kill no
 * server and move no clock share one ensemble (harness_shared_tcase); a
 * tcase whose tests do gets one of its own, started by its fixture.
 * Expectations come from the stage's row in stages.h, as in
 * tests/test_lock.c: where a stage lacks a capability, the test asserts
 * the flaw it keeps (v10 deletes the holder's node for anyone, wakes
 * every waiter at each release, and deadlocks on itself). Each test names
 * its locks apart, so the tests that share an ensemble need not empty it
 * between them. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "harness.h"
#include "mntr.h"
#include "proc.h"
#include "suites.h"
#include "zk_client.h"
#include "zk_tests.h"

#define LEASE_MS 10000     /* never runs out during a test */
#define SHORT_LEASE_MS 300 /* for tests about the session: margins are multiples of it */
#define LIVE_LEASE_MS 1000 /* a session that a live holder keeps on a loaded machine */
#define RECOVER_TRIES 3    /* acquires after a session expired, as a caller retries */
#define BUDGET_MS 300      /* a waiter's wait budget */
#define TCASE_TIMEOUT_S 180 /* an ensemble's start on a loaded machine, and the tests */
#define WAITERS 3          /* the herd test's waiters */
#define MNTR_LEN 65536     /* a 3.8 server's mntr answer is about 17 KB */
#define MNTR_TRIES 5       /* a busy JVM may miss a four-letter word */
#define REENTRIES 40       /* the quiet re-entry test's acquires, and as many releases */

/* ---- basics ---------------------------------------------------------------------- */

START_TEST(test_zk_acquire_release)
{
    zhandle_t *zh = zk_open();
    dlock *a;

    harness_title("acquire makes the lock's node, release deletes it");
    a = take("A", "basic", LEASE_MS);
    ck_assert_msg(zk_nodes(zh, "basic") == 1, "expected one node of the lock 'basic' while A "
                  "holds it, found %d", zk_nodes(zh, "basic"));
    release_ok(a, "A");
    ck_assert_msg(!zk_holds(zh, "basic"), "expected no node of 'basic' after A's release");
    dlock_free(a);
    zk_close(zh);
}
END_TEST

START_TEST(test_zk_busy_while_held)
{
    check_busy_while_held();
}
END_TEST

START_TEST(test_zk_wait_budget)
{
    zhandle_t *zh = zk_open();
    dlock *a, *b;

    harness_title("a waiter gives up after about its %d ms budget, and leaves no node", BUDGET_MS);
    /* The whole budget: the waiter's watch has a timeout, no retries. */
    b = wait_out_budget(&a, "budget", BUDGET_MS, BUDGET_MS);
    ck_assert_msg(zk_nodes(zh, "budget") == 1, "after B gave up, 'budget' has %d nodes; "
                  "expected A's alone", zk_nodes(zh, "budget"));
    release_ok(a, "A");
    dlock_free(b);
    dlock_free(a);
    zk_close(zh);
}
END_TEST

/* No polling: the watch wakes the waiter as the holder's node goes. */
START_TEST(test_zk_waiter_wakes)
{
    int64_t budget = 20 * SHORT_LEASE_MS, released;
    attempt w;
    pthread_t t;
    dlock *a;

    harness_title("a waiter takes the lock as the holder releases, woken by its watch");
    a = take("A", "wake", LEASE_MS);
    w = (attempt){ harness_lock(harness_server(), "wake", LEASE_MS, budget), -1, -1, 0 };
    run_in_thread(&t, &w);
    harness_sleep_ms(SHORT_LEASE_MS);
    released = harness_now_ms();
    release_ok(a, "A");
    pthread_join(t, NULL);
    ck_assert_msg(w.rc == DLOCK_OK, "the waiter got %s (%s); expected the lock",
                  harness_result(w.rc), dlock_errstr(w.l));
    ck_assert_msg(w.done_ms - released < budget / 2, "the waiter took the lock %lld ms after "
                  "the release, half its budget", (long long)(w.done_ms - released));
    dlock_free(w.l);
    dlock_free(a);
}
END_TEST

/* Curator's re-entry: a count per thread, no second node. */
START_TEST(test_zk_reentry)
{
    zhandle_t *zh = zk_open();
    dlock *a, *b;
    int rc;

    harness_title("the holder's thread acquires twice on one node, others wait for both "
                  "releases");
    a = take("A", "again", LEASE_MS);
    b = harness_lock(harness_server(), "again", LEASE_MS, 0);
    rc = dlock_acquire(a);
    ck_assert_msg(rc == DLOCK_OK, "A's thread acquired again and got %s (%s)",
                  harness_result(rc), dlock_errstr(a));
    ck_assert_msg(zk_nodes(zh, "again") == 1, "re-entry made a node: %d", zk_nodes(zh, "again"));
    release_ok(a, "A");
    ck_assert_msg(dlock_acquire(b) == DLOCK_BUSY, "B got the lock after A's first release");
    release_ok(a, "A");
    ck_assert_msg(dlock_acquire(b) == DLOCK_OK, "B did not get the lock after both releases");
    release_ok(b, "B");
    dlock_free(b);
    dlock_free(a);
    zk_close(zh);
}
END_TEST

/* Of the same handle, the same thread: what lock.h's reentrant scenario does. */
START_TEST(test_zk_self_deadlock)
{
    dlock *a;
    int rc;

    harness_title(CAPS.reentrant ? "one handle, one thread: the second acquire is re-entry"
                  : "one handle, one thread: the second acquire waits for itself");
    a = harness_lock(harness_server(), "self", LEASE_MS, BUDGET_MS);
    ck_assert_msg(dlock_acquire(a) == DLOCK_OK, "A could not take the free lock: %s",
                  dlock_errstr(a));
    rc = dlock_acquire(a);
    ck_assert_msg(rc == (CAPS.reentrant ? DLOCK_OK : DLOCK_BUSY), "A's second acquire got %s "
                  "(%s); expected %s", harness_result(rc), dlock_errstr(a),
                  CAPS.reentrant ? "OK" : "BUSY");
    if (rc == DLOCK_OK)
        release_ok(a, "A");
    release_ok(a, "A");
    dlock_free(a);
}
END_TEST

START_TEST(test_zk_token_without_fence)
{
    dlock *a;

    harness_title("no fencing token: dlock_token is 0, held or not");
    a = harness_lock(harness_server(), "untokened", LEASE_MS, 0);
    ck_assert_msg(dlock_token(a) == 0, "a token before any acquire");
    ck_assert_msg(dlock_acquire(a) == DLOCK_OK, "A could not take the lock");
    ck_assert_msg(dlock_token(a) == 0, "this stage draws no tokens, yet gave %lld",
                  dlock_token(a));
    release_ok(a, "A");
    dlock_free(a);
}
END_TEST

/* ---- ownership ------------------------------------------------------------------------ */

START_TEST(test_zk_release_by_non_owner)
{
    dlock *a, *b;
    zhandle_t *zh;
    int rc;

    harness_title(CAPS.owner_check ? "a release by a client that holds nothing is NOT_OWNER, "
                  "the holder's node stays" : "a release by a client that never took the "
                  "lock deletes the holder's node (by path)");
    a = take("A", "theirs", LEASE_MS);
    b = harness_lock(harness_server(), "theirs", LEASE_MS, 0);
    rc = dlock_release(b);
    ck_assert_msg(rc == (CAPS.owner_check ? DLOCK_NOT_OWNER : DLOCK_OK), "B's release got %s "
                  "(%s)", harness_result(rc), dlock_errstr(b));
    zh = zk_open(); /* to read what B's release left */
    ck_assert_msg(zk_holds(zh, "theirs") == CAPS.owner_check, "after B's release A's node %s",
                  zk_holds(zh, "theirs") ? "is still there" : "is gone");
    ck_assert_msg(dlock_release(a) == (CAPS.owner_check ? DLOCK_OK : DLOCK_NOT_OWNER),
                  "A's own release got %s", dlock_errstr(a));
    dlock_free(b);
    dlock_free(a);
    zk_close(zh);
}
END_TEST

/* A thread of the holder's handle that never took the lock releases it. */
static void *release_in_thread(void *arg)
{
    attempt *a = arg;

    a->release_rc = dlock_release(a->l);
    return NULL;
}

START_TEST(test_zk_release_by_other_thread)
{
    zhandle_t *zh = zk_open();
    attempt other;
    pthread_t t;
    dlock *a;

    harness_title(CAPS.owner_check ? "another thread of the holder's handle releases: NOT_OWNER, "
                  "the holder's node stays" : "another thread of the holder's handle releases: "
                  "the holder's node is gone (by path)");
    a = take("A", "thread", LEASE_MS);
    other = (attempt){ a, -1, -1, 0 };
    ck_assert_msg(pthread_create(&t, NULL, release_in_thread, &other) == 0, "no thread");
    pthread_join(t, NULL);
    ck_assert_msg(other.release_rc == (CAPS.owner_check ? DLOCK_NOT_OWNER : DLOCK_OK),
                  "the other thread's release got %s (%s); expected %s",
                  harness_result(other.release_rc), dlock_errstr(a),
                  CAPS.owner_check ? "NOT_OWNER" : "OK");
    ck_assert_msg(zk_holds(zh, "thread") == CAPS.owner_check, "after the other thread's release "
                  "A's node %s", zk_holds(zh, "thread") ? "is still there" : "is gone");
    ck_assert_msg(dlock_release(a) == (CAPS.owner_check ? DLOCK_OK : DLOCK_NOT_OWNER),
                  "A's own release got %s", dlock_errstr(a));
    dlock_free(a);
    zk_close(zh);
}
END_TEST

/* ---- a release wakes whom ------------------------------------------------------------- */

/* What the ensemble's servers counted, summed over them, read as the
 * bench reads it (mntr.h): the packets and notifications so far in sum,
 * our mntr words in sum.asked; and the watches set now (zk_watch_count). */
typedef struct counts {
    sim_mntr sum;
    long long set;
} counts;

static long long words_asked; /* mntr words this test sent: each one a packet */

static counts counts_now(void)
{
    const sim_ensemble *e = harness_ensemble();
    char *text = malloc(MNTR_LEN), value[32], why[256];
    counts c = { { 0, 0, 0, 0 }, 0 };
    int i, tries, rc;

    ck_assert_msg(text != NULL, "out of memory for an mntr answer");
    for (i = 0; i < e->nodes; i++) {
        sim_mntr one = { 0, 0, 0, 0 }; /* the parse leaves asked as it is */

        for (tries = 0, rc = -1; tries < MNTR_TRIES && rc != 0; tries++, words_asked++)
            rc = sim_ensemble_ask(e->port + i, "mntr", text, MNTR_LEN);
        ck_assert_msg(rc == 0, "ZooKeeper node %d answered no mntr %d times", i, MNTR_TRIES);
        ck_assert_msg(sim_mntr_parse(text, &one, why, sizeof(why)) == 0, "node %d: %s", i, why);
        ck_assert_msg(sim_mntr_value(text, "zk_watch_count", value, sizeof(value)) == 0,
                      "node %d's mntr has no zk_watch_count", i);
        sim_mntr_add(&c.sum, &one);
        c.set += atoll(value);
    }
    c.sum.asked = words_asked;
    free(text);
    return c;
}

/* The clients' requests between two readings (no session opened or
 * closed in between): the packets, less our mntr words. */
static long long requests_between(const counts *before, const counts *after)
{
    sim_mntr_delta d;
    char why[256];

    ck_assert_msg(sim_mntr_delta_of(&before->sum, &after->sum, &d, why, sizeof(why)) == 0,
                  "%s", why);
    return d.requests;
}

/* Every server has applied what the leader committed so far, and so
 * sent the notifications it triggered: a sync on a session of each. */
static void every_server_caught_up(void)
{
    const sim_ensemble *e = harness_ensemble();
    zhandle_t *zh;
    int i;

    for (i = 0; i < e->nodes; i++) {
        zh = zk_client_open(e->port + i, 1, LIVE_LEASE_MS * 30, e->password);
        ck_assert_msg(zk_sync(zh) == 0, "node %d did not answer a sync", i);
        zookeeper_close(zh);
    }
}

static atomic_int herd_go;     /* set: a waiter that holds may release */
static atomic_int herd_held;   /* waiters whose acquire returned OK */

/* A waiter: takes the lock, holds it until herd_go, gives it back. */
static void *wait_and_hold(void *arg)
{
    attempt *a = arg;

    a->rc = dlock_acquire(a->l);
    if (a->rc != DLOCK_OK)
        return NULL;
    atomic_fetch_add(&herd_held, 1);
    while (!atomic_load(&herd_go))
        harness_sleep_ms(5);
    a->release_rc = dlock_release(a->l);
    return NULL;
}

START_TEST(test_zk_release_wakes)
{
    int64_t deadline = harness_now_ms() + 40 * BUDGET_MS;
    long long want = CAPS.queue ? 1 : WAITERS, sent;
    attempt w[WAITERS];
    pthread_t t[WAITERS];
    counts before, after;
    dlock *a;
    int i;

    harness_title(CAPS.queue ? "%d waiters send nothing while they wait; a release wakes one: "
                  "one watch notification" : "%d waiters send nothing while they wait; a "
                  "release wakes them all: a notification each (a herd)", WAITERS);
    a = take("A", "herd", LEASE_MS);
    before = counts_now();
    for (i = 0; i < WAITERS; i++) {
        w[i] = (attempt){ harness_lock(harness_server(), "herd", LEASE_MS, 40 * BUDGET_MS),
                          -1, -1, 0 };
        ck_assert_msg(pthread_create(&t[i], NULL, wait_and_hold, &w[i]) == 0, "no thread");
    }
    /* Every waiter has set its watch before A releases. */
    while ((after = counts_now()).set < before.set + WAITERS && harness_now_ms() < deadline)
        harness_sleep_ms(20);
    ck_assert_msg(after.set >= before.set + WAITERS, "%lld watches set by %d waiters",
                  after.set - before.set, WAITERS);
    /* No polling: a waiter sleeps on its watch; a session pings a few
     * times a lease (10 s), at most once each in this wait. */
    before = counts_now();
    harness_sleep_ms(BUDGET_MS);
    after = counts_now();
    sent = requests_between(&before, &after);
    ck_assert_msg(sent <= WAITERS + 1, "%d waiters and the holder sent %lld requests in %d ms "
                  "of waiting; expected at most a ping each: a waiter polls", WAITERS, sent,
                  BUDGET_MS);
    release_ok(a, "A");
    while (atomic_load(&herd_held) == 0 && harness_now_ms() < deadline)
        harness_sleep_ms(5);
    ck_assert_msg(atomic_load(&herd_held) == 1, "%d waiters hold the lock after A's release; "
                  "expected one", atomic_load(&herd_held));
    every_server_caught_up();
    before = after;
    after = counts_now();
    ck_assert_msg(after.sum.watches - before.sum.watches == want, "A's release sent %lld watch "
                  "notifications to %d waiters; expected %lld",
                  after.sum.watches - before.sum.watches, WAITERS, want);
    printf("  %d waiters: %lld requests in %d ms of waiting; one release: %lld notification(s)\n",
           WAITERS, sent, BUDGET_MS, after.sum.watches - before.sum.watches);
    atomic_store(&herd_go, 1);
    for (i = 0; i < WAITERS; i++) {
        pthread_join(t[i], NULL);
        ck_assert_msg(w[i].rc == DLOCK_OK && w[i].release_rc == DLOCK_OK, "waiter %d got %s, "
                      "then %s (%s)", i, harness_result(w[i].rc), harness_result(w[i].release_rc),
                      dlock_errstr(w[i].l));
        dlock_free(w[i].l);
    }
    dlock_free(a);
}
END_TEST

/* ---- the session is the lease ------------------------------------------------------ */

/* What the continued holder says: its release's and next acquire's
 * results, and the acquire's reason when it failed. */
/* Another thread of the holder's handle releases REENTRIES times: the
 * count of those that were not NOT_OWNER. */
static void *release_many(void *arg)
{
    attempt *a = arg;

    a->release_rc = 0;
    for (int i = 0; i < REENTRIES; i++)
        a->release_rc += dlock_release(a->l) != DLOCK_NOT_OWNER;
    return NULL;
}

/* Curator's re-entry costs nothing: the holding thread's acquires, and
 * its releases but the last, are a count in the handle, and another
 * thread's release is NOT_OWNER with no call. 3 x REENTRIES calls of
 * ours; the servers may count a few pings meanwhile, not one request
 * per call. */
START_TEST(test_zk_reentry_quiet)
{
    long long requests;
    counts before, after;
    attempt other;
    pthread_t t;
    dlock *a;
    int i, rc;

    harness_title("%d re-entries, as many releases but the last, and as many releases by "
                  "another thread send nothing to the ensemble", REENTRIES);
    a = take("A", "quiet", LEASE_MS);
    other = (attempt){ a, -1, -1, 0 };
    before = counts_now();
    ck_assert_msg(pthread_create(&t, NULL, release_many, &other) == 0, "no thread");
    pthread_join(t, NULL);
    ck_assert_msg(other.release_rc == 0, "%d of another thread's %d releases were not NOT_OWNER",
                  other.release_rc, REENTRIES);
    for (i = 0; i < REENTRIES; i++) {
        rc = dlock_acquire(a);
        ck_assert_msg(rc == DLOCK_OK, "A's re-entry %d got %s (%s)", i + 1, harness_result(rc),
                      dlock_errstr(a));
    }
    for (i = 0; i < REENTRIES; i++)
        release_ok(a, "A");
    after = counts_now();
    requests = requests_between(&before, &after);
    ck_assert_msg(requests < REENTRIES / 2, "the servers counted %lld requests during A's %d "
                  "re-entries and as many releases of two threads; expected none but a few "
                  "pings", requests, REENTRIES);
    release_ok(a, "A");
    dlock_free(a);
}
END_TEST

typedef struct continued {
    int rc[2];
    char why[DLOCK_ERRSTR_LEN];
} continued;

/* In a child: takes the lock, says so, stops itself; once continued,
 * says what its release and its next acquire returned. */
static void stopped_holder(int fd)
{
    dlock *l = harness_lock(harness_server(), "stopped", SHORT_LEASE_MS, 4 * SHORT_LEASE_MS);
    continued c = { { dlock_acquire(l), -1 }, "" };

    if (write(fd, c.rc, sizeof(c.rc[0])) != (ssize_t)sizeof(c.rc[0]))
        _exit(3);
    raise(SIGSTOP);
    c.rc[0] = dlock_release(l);
    /* A caller tries again after an error: a session of 300 ms on a
     * loaded machine may lose its server once more while it opens. */
    for (int i = 0; i < RECOVER_TRIES && c.rc[1] != DLOCK_OK; i++) {
        c.rc[1] = dlock_acquire(l);
        snprintf(c.why, sizeof(c.why), "%s", dlock_errstr(l));
    }
    if (c.rc[1] == DLOCK_OK)
        dlock_release(l);
    if (write(fd, &c, sizeof(c)) != (ssize_t)sizeof(c))
        _exit(3);
    dlock_free(l);
    _exit(0);
}

START_TEST(test_zk_session_expiry_frees)
{
    int fds[2], rc[2] = { -1, -1 }, status;
    int64_t t0, waited;
    char why[256];
    continued c;
    dlock *b;
    pid_t child;

    harness_title("a holder stopped longer than its %d ms session loses the lock; its next "
                  "call opens a new session", SHORT_LEASE_MS);
    ck_assert_msg(pipe(fds) == 0, "pipe: %s", strerror(errno));
    fflush(stdout);
    child = sim_proc_fork(why, sizeof(why));
    ck_assert_msg(child >= 0, "%s", why);
    if (child == 0)
        stopped_holder(fds[1]);
    ck_assert_msg(read(fds[0], rc, sizeof(rc[0])) == sizeof(rc[0]) && rc[0] == DLOCK_OK,
                  "the child did not take the lock");
    b = harness_lock(harness_server(), "stopped", LEASE_MS, 10 * SHORT_LEASE_MS);
    t0 = harness_now_ms();
    rc[0] = dlock_acquire(b);
    waited = harness_now_ms() - t0;
    ck_assert_msg(rc[0] == DLOCK_OK, "B got %s (%s) while A was stopped; expected the lock "
                  "once A's session expired", harness_result(rc[0]), dlock_errstr(b));
    ck_assert_msg(waited >= SHORT_LEASE_MS / 3, "B took A's lock after %lld ms, before A's "
                  "%d ms session could expire", (long long)waited, SHORT_LEASE_MS);
    release_ok(b, "B");
    kill(child, SIGCONT);
    ck_assert_msg(read(fds[0], &c, sizeof(c)) == sizeof(c), "the continued child said nothing");
    waitpid(child, &status, 0);
    ck_assert_msg(c.rc[0] != DLOCK_OK, "A's release after its session expired returned OK");
    ck_assert_msg(c.rc[1] == DLOCK_OK, "A's next %d acquires got %s (%s); expected a new "
                  "session and the lock", RECOVER_TRIES, harness_result(c.rc[1]), c.why);
    dlock_free(b);
    close(fds[0]);
    close(fds[1]);
}
END_TEST

/* The library pings every third of the session: a live holder keeps its
 * node however long it works, as v6's watchdog keeps a key. A session of
 * a second: one of 300 ms is lost to a machine that stalls the client
 * for 200 ms, live or not. */
START_TEST(test_zk_live_holder_keeps)
{
    dlock *a = take("A", "live", LIVE_LEASE_MS), *b;

    harness_title("a live holder keeps its lock for 4 sessions of %d ms", LIVE_LEASE_MS);
    harness_sleep_ms(4 * LIVE_LEASE_MS);
    b = harness_lock(harness_server(), "live", LEASE_MS, 0);
    ck_assert_msg(dlock_acquire(b) == DLOCK_BUSY, "B took the lock of a live holder");
    release_ok(a, "A");
    dlock_free(b);
    dlock_free(a);
}
END_TEST

/* ---- the suite -------------------------------------------------------------------------- */

TCase *zk_tcase(Suite *s, const char *name)
{
    return harness_shared_tcase(s, name, TCASE_TIMEOUT_S);
}

TCase *zk_own_tcase(Suite *s, const char *name)
{
    return harness_servers_tcase(s, name, TCASE_TIMEOUT_S);
}

Suite *zk_suite(void)
{
    const TTest *first[] = {
        test_zk_acquire_release, test_zk_busy_while_held, test_zk_wait_budget,
        test_zk_waiter_wakes,
    };
    const TTest *session[] = { test_zk_session_expiry_frees, test_zk_live_holder_keeps };
    Suite *s = suite_create("zookeeper");
    TCase *basics;

    if (!STAGE_ZOOKEEPER)
        return s;
    basics = zk_tcase(s, "basics");
    ADD_TESTS(basics, first);
    if (CAPS.reentrant)
        tcase_add_test(basics, test_zk_reentry);
    if (CAPS.reentrant)
        tcase_add_test(basics, test_zk_reentry_quiet);
    tcase_add_test(basics, test_zk_self_deadlock);
    tcase_add_test(basics, test_zk_release_by_non_owner);
    tcase_add_test(basics, test_zk_release_by_other_thread);
    tcase_add_test(basics, test_zk_release_wakes);
    if (!CAPS.token)
        tcase_add_test(basics, test_zk_token_without_fence);
    ADD_TESTS(zk_tcase(s, "session"), session);
    /* The shared ensemble's tcases first: it stops after the last of
     * them, before the others start theirs. */
    zk_add_fault_tcases(s, 0);
    zk_add_queue_tcases(s, 0);
    zk_add_fault_tcases(s, 1);
    zk_add_queue_tcases(s, 1);
    return s;
}
