/* test_mariadb: the contract suite of a lock kept by MariaDB.
 *
 * Every test talks to a real mariadbd that its tcase's fixture starts
 * (harness.h), and reads what the lock left there as root, over the
 * server's socket. Expectations come from the stage's row in stages.h:
 * v12's row under a unique key holds for a lease by the server's clock
 * and is not reentrant; v13's GET_LOCK lives as long as the session that
 * took it, and its holder may take it again (reentrant). Each test names
 * its locks apart, so the tests of a tcase share the server as it is. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lock_helpers.h"
#include "suites.h"

#define BUDGET_MS 300       /* a waiter's wait budget */
#define TCASE_TIMEOUT_S 20  /* a test: 1 s at most here, on a loaded machine more */

/* ---- reading the server as root ------------------------------------------------ */

static MYSQL *root(void)
{
    char err[HARNESS_ERRSTR_LEN];
    MYSQL *c = sim_mariadb_root(harness_mariadb(), 5000, err, sizeof(err));

    ck_assert_msg(c != NULL, "%s", err);
    return c;
}

/* One number a query answers; -1 for NULL. */
static long long number(const char *fmt, const char *name)
{
    char sql[512], out[64], err[HARNESS_ERRSTR_LEN];
    MYSQL *c = root();

    snprintf(sql, sizeof(sql), fmt, name);
    ck_assert_msg(sim_mariadb_value(c, out, sizeof(out), err, sizeof(err), "%s", sql) == 0,
                  "%s", err);
    mysql_close(c);
    return out[0] == '\0' ? -1 : atoll(out);
}

/* Whether the lock name is held now, as the server sees it: v12's row
 * runs until a time still to come, v13's name is used by a session. */
static int held(const char *name)
{
    if (CAPS.reentrant)
        return number("SELECT IS_USED_LOCK('%s')", name) > 0;
    return number("SELECT COUNT(*) FROM " SIM_MARIADB_DB ".dlock WHERE name='%s' AND "
                  "lock_until > NOW(3)", name) == 1;
}

/* Until the session that held v13's name has ended, as the server sees
 * it, or 10 short leases: KILL CONNECTION and a client's quit return
 * before the server has ended the session, and the name is used until
 * it has. Then asserts that it ended. */
static void await_session_end(const char *name)
{
    int64_t deadline = harness_now_ms() + 10 * SHORT_LEASE_MS;

    while (number("SELECT IS_USED_LOCK('%s')", name) > 0 && harness_now_ms() < deadline)
        harness_sleep_ms(5);
    ck_assert_msg(number("SELECT IS_USED_LOCK('%s')", name) <= 0, "the session that held '%s' "
                  "still held it %d ms after it was ended", name, 10 * SHORT_LEASE_MS);
}

static int try_once(const char *name)
{
    dlock *b = harness_lock(harness_server(), name, LEASE_MS, 0);
    int rc = dlock_acquire(b);

    ck_assert_msg(rc != DLOCK_ERR, "B's try failed: %s", dlock_errstr(b));
    dlock_free(b);
    return rc;
}

/* ---- both stages ------------------------------------------------------------------ */

START_TEST(test_mariadb_acquire_release)
{
    dlock *a;

    harness_title("acquire takes the lock on the server, release gives it up");
    a = take("A", "basic", LEASE_MS);
    ck_assert_msg(held("basic"), "the server does not see 'basic' held while A holds it");
    release_ok(a, "A");
    ck_assert_msg(!held("basic"), "the server still sees 'basic' held after A's release");
    ck_assert_int_eq(try_once("basic"), DLOCK_OK);
    dlock_free(a);
}
END_TEST

START_TEST(test_mariadb_busy_while_held)
{
    check_busy_while_held();
}
END_TEST

START_TEST(test_mariadb_wait_budget)
{
    dlock *a, *b;

    harness_title("a waiter returns BUSY once its %d ms budget is spent", BUDGET_MS);
    /* Less the harness's retry pause (2 ms): the test's clock counts whole
     * milliseconds at both ends, and a poll returns on its own clock. */
    b = wait_out_budget(&a, "budget", BUDGET_MS, BUDGET_MS - 2);
    release_ok(a, "A");
    dlock_free(b);
    dlock_free(a);
}
END_TEST

START_TEST(test_mariadb_waiter_gets_it)
{
    attempt w = { 0 };
    pthread_t t;
    dlock *a;

    harness_title("a waiter takes the lock once its holder releases, within its budget");
    a = take("A", "handover", LEASE_MS);
    w.l = harness_lock(harness_server(), "handover", LEASE_MS, 10 * BUDGET_MS);
    run_in_thread(&t, &w);
    harness_sleep_ms(BUDGET_MS);
    release_ok(a, "A");
    pthread_join(t, NULL);
    ck_assert_msg(w.rc == DLOCK_OK, "B got %s (%s), expected OK once A released",
                  harness_result(w.rc), dlock_errstr(w.l));
    ck_assert_int_eq(w.release_rc, DLOCK_OK);
    dlock_free(w.l);
    dlock_free(a);
}
END_TEST

START_TEST(test_mariadb_not_owner)
{
    dlock *a, *b;
    int rc;

    harness_title("another client's release returns NOT_OWNER and leaves the lock held");
    a = take("A", "owned", LEASE_MS);
    b = harness_lock(harness_server(), "owned", LEASE_MS, 0);
    rc = dlock_release(b);
    ck_assert_msg(rc == DLOCK_NOT_OWNER, "B's release of A's lock returned %s (%s)",
                  harness_result(rc), dlock_errstr(b));
    ck_assert_msg(held("owned"), "B's release gave up A's lock");
    ck_assert_int_eq(try_once("owned"), DLOCK_BUSY);
    release_ok(a, "A");
    rc = dlock_release(a);
    ck_assert_msg(rc == DLOCK_NOT_OWNER, "a second release returned %s", harness_result(rc));
    ck_assert_str_eq(dlock_errstr(a), "");
    dlock_free(b);
    dlock_free(a);
}
END_TEST

/* Errors carry the server's or the client library's own words. */
START_TEST(test_mariadb_errors)
{
    char name[80];
    dlock_config cfg;
    dlock *l;
    int port, fd = refusing_port(&port);

    harness_title("errors: no server, a wrong password, a bad name, say why in one line");
    harness_config(&cfg, harness_server(), LEASE_MS, 0);
    cfg.port = port;
    l = dlock_new("errors", &cfg);
    assert_error(l, dlock_acquire(l), "acquire", "with no server");
    ck_assert_msg(strstr(dlock_errstr(l), "connect to 127.0.0.1") != NULL, "%s", dlock_errstr(l));
    dlock_free(l);
    close(fd);
    harness_config(&cfg, harness_server(), LEASE_MS, 0);
    cfg.password = "not the run's";
    l = dlock_new("errors", &cfg);
    assert_error(l, dlock_acquire(l), "acquire", "with a wrong password");
    ck_assert_msg(strstr(dlock_errstr(l), "Access denied") != NULL, "%s", dlock_errstr(l));
    dlock_free(l);
    memset(name, 'n', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    harness_config(&cfg, harness_server(), LEASE_MS, 0);
    l = dlock_new(name, &cfg);
    assert_error(l, dlock_acquire(l), "acquire", "of a name of 79 bytes");
    dlock_free(l);
}
END_TEST

/* A name that would end an SQL string early is one more name. */
START_TEST(test_mariadb_quoted_name)
{
    dlock *a;

    harness_title("a name with quotes and backslashes is a name, not SQL");
    a = take("A", "it's\\", LEASE_MS);
    ck_assert_int_eq(try_once("it's\\"), DLOCK_BUSY);
    ck_assert_int_eq(try_once("it"), DLOCK_OK);
    release_ok(a, "A");
    dlock_free(a);
}
END_TEST

/* ---- client processes: the counter is a row beside the lock ----------------------- */

#define CLIENTS 8 /* processes ... */
#define ROUNDS 50 /* ... times locked increments each */

static void *counter_open(void)
{
    char err[HARNESS_ERRSTR_LEN];
    MYSQL *c = sim_mariadb_connect(harness_mariadb(), 5000, err, sizeof(err));

    if (c != NULL && sim_mariadb_query(c, err, sizeof(err), "CREATE TABLE IF NOT EXISTS "
                                       "counter (id INT PRIMARY KEY, n BIGINT NOT NULL)") != 0) {
        mysql_close(c);
        return NULL;
    }
    return c;
}

static long long counter_get(void *conn)
{
    char out[32], err[HARNESS_ERRSTR_LEN];

    if (sim_mariadb_value(conn, out, sizeof(out), err, sizeof(err),
                          "SELECT COALESCE((SELECT n FROM counter WHERE id = 1), 0)") != 0)
        return -1;
    return atoll(out);
}

static int counter_set(void *conn, long long n)
{
    char err[HARNESS_ERRSTR_LEN];

    return sim_mariadb_query(conn, err, sizeof(err), "INSERT INTO counter VALUES (1, %lld) "
                             "ON DUPLICATE KEY UPDATE n = VALUES(n)", n);
}

static void counter_close(void *conn)
{
    mysql_close(conn);
}

static const counter_store mariadb_counter = { counter_open, counter_get, counter_set,
                                               counter_close };

START_TEST(test_mariadb_counter_contention)
{
    count_in_processes(&mariadb_counter, CLIENTS, ROUNDS);
    ck_assert_msg(!held("counter-lock"), "the lock is still held after the clients' last "
                  "release");
}
END_TEST

/* A second thread on the holder's handle: v12's owner token names the
 * thread, so it waits; v13's lock is the session's, and the threads of a
 * handle share its session: the server counts the second as the holder
 * taking it again (the flaw v13's README names). */
static void *second_thread(void *arg)
{
    attempt *a = arg;

    a->rc = dlock_acquire(a->l);
    if (a->rc == DLOCK_OK)
        a->release_rc = dlock_release(a->l);
    return NULL;
}

START_TEST(test_mariadb_threads_of_a_handle)
{
    attempt second = { 0 };
    pthread_t t;
    dlock *a;

    harness_title("a second thread on the holder's handle: %s",
                  CAPS.reentrant ? "it shares the session, and so the lock"
                                 : "it waits, as another client would");
    a = take("A", "threads", LEASE_MS);
    second.l = a;
    pthread_create(&t, NULL, second_thread, &second);
    pthread_join(t, NULL);
    ck_assert_msg(second.rc == (CAPS.reentrant ? DLOCK_OK : DLOCK_BUSY), "the second thread's "
                  "acquire returned %s (%s)", harness_result(second.rc), dlock_errstr(a));
    release_ok(a, "A");
    ck_assert_msg(!held("threads"), "the lock is still held after A's release");
    dlock_free(a);
}
END_TEST

/* ---- v12: a row under a unique key, a lease by the server's clock ---------------- */

START_TEST(test_mariadb_server_clock_lease)
{
    dlock *a, *b;
    int rc;

    harness_title("the row holds for the lease by the server's clock, then the next takes it");
    a = take("A", "lease", SHORT_LEASE_MS);
    ck_assert_int_eq(number("SELECT TIMESTAMPDIFF(MICROSECOND, locked_at, lock_until) FROM "
                            SIM_MARIADB_DB ".dlock WHERE name='%s'", "lease"),
                     SHORT_LEASE_MS * 1000LL);
    ck_assert_int_eq(number("SELECT ABS(TIMESTAMPDIFF(MICROSECOND, locked_at, NOW(3))) < 1000000 "
                            "FROM " SIM_MARIADB_DB ".dlock WHERE name='%s'", "lease"), 1);
    ck_assert_int_eq(try_once("lease"), DLOCK_BUSY);
    harness_sleep_ms(2 * SHORT_LEASE_MS);
    b = take("B", "lease", LEASE_MS);
    rc = dlock_release(a);
    ck_assert_msg(rc == DLOCK_NOT_OWNER, "A's late release returned %s; B holds it",
                  harness_result(rc));
    ck_assert_msg(held("lease"), "A's late release gave up B's lock");
    release_ok(b, "B");
    dlock_free(b);
    dlock_free(a);
}
END_TEST

START_TEST(test_mariadb_self_deadlock)
{
    dlock *a;
    int rc;

    harness_title("not reentrant: the holder's own thread asking again waits out its budget");
    a = take("A", "again", LEASE_MS);
    rc = dlock_acquire(a);
    ck_assert_msg(rc == DLOCK_BUSY, "A's second acquire returned %s (%s); v12 is not reentrant",
                  harness_result(rc), dlock_errstr(a));
    release_ok(a, "A");
    dlock_free(a);
}
END_TEST

/* ---- v13: GET_LOCK, held by the session ------------------------------------------ */

START_TEST(test_mariadb_reentry)
{
    dlock *a;
    int rc;

    harness_title("the holder takes it again; it stays held until as many releases");
    a = take("A", "reentry", LEASE_MS);
    rc = dlock_acquire(a);
    ck_assert_msg(rc == DLOCK_OK, "A's second acquire returned %s (%s)", harness_result(rc),
                  dlock_errstr(a));
    release_ok(a, "A");
    ck_assert_msg(held("reentry"), "one release of two gave the lock up");
    ck_assert_int_eq(try_once("reentry"), DLOCK_BUSY);
    release_ok(a, "A");
    ck_assert_int_eq(try_once("reentry"), DLOCK_OK);
    dlock_free(a);
}
END_TEST

START_TEST(test_mariadb_no_lease)
{
    dlock *a;

    harness_title("no lease: the lock outlives lease_ms while its session lives");
    a = take("A", "nolease", SHORT_LEASE_MS);
    harness_sleep_ms(3 * SHORT_LEASE_MS);
    ck_assert_int_eq(try_once("nolease"), DLOCK_BUSY);
    release_ok(a, "A");
    dlock_free(a);
}
END_TEST

START_TEST(test_mariadb_lost_connection)
{
    char err[HARNESS_ERRSTR_LEN];
    long long id;
    dlock *a, *b;
    MYSQL *c;
    int rc;

    harness_title("a lost connection is a lost lock: the next takes it, the holder is told");
    a = take("A", "lost", LEASE_MS);
    id = number("SELECT IS_USED_LOCK('%s')", "lost");
    c = root();
    ck_assert_msg(sim_mariadb_query(c, err, sizeof(err), "KILL CONNECTION %lld", id) == 0,
                  "%s", err);
    mysql_close(c);
    await_session_end("lost");
    b = take("B", "lost", LEASE_MS);
    rc = dlock_release(a);
    assert_error(a, rc, "A's release", "after its session was killed");
    ck_assert_msg(held("lost"), "A's release after the loss gave up B's lock");
    rc = dlock_release(a);
    ck_assert_msg(rc == DLOCK_NOT_OWNER, "A's next release returned %s (%s): A holds nothing",
                  harness_result(rc), dlock_errstr(a));
    release_ok(b, "B");
    dlock_free(b);
    dlock_free(a);
}
END_TEST

START_TEST(test_mariadb_session_end_frees)
{
    dlock *a;

    harness_title("the lock is free the moment its holder's session ends");
    a = take("A", "ends", LEASE_MS);
    dlock_free(a);
    await_session_end("ends");
    ck_assert_int_eq(try_once("ends"), DLOCK_OK);
}
END_TEST

/* ---- the suite -------------------------------------------------------------------- */

Suite *mariadb_suite(void)
{
    const TTest *both[] = {
        test_mariadb_acquire_release, test_mariadb_busy_while_held, test_mariadb_wait_budget,
        test_mariadb_waiter_gets_it, test_mariadb_not_owner, test_mariadb_errors,
        test_mariadb_quoted_name, test_mariadb_counter_contention,
        test_mariadb_threads_of_a_handle,
    };
    const TTest *row[] = { test_mariadb_server_clock_lease, test_mariadb_self_deadlock };
    const TTest *session[] = {
        test_mariadb_reentry, test_mariadb_no_lease, test_mariadb_lost_connection,
        test_mariadb_session_end_frees,
    };
    Suite *s = suite_create("mariadb");
    TCase *tc;

    if (!STAGE_MARIADB)
        return s;
    /* "basics", as every kind names the tcase of its first checks
     * (CK_RUN_CASE=basics runs them on any stage). */
    tc = harness_servers_tcase(s, "basics", TCASE_TIMEOUT_S);
    ADD_TESTS(tc, both);
    if (CAPS.reentrant)
        ADD_TESTS(tc, session);
    else
        ADD_TESTS(tc, row);
    return s;
}
