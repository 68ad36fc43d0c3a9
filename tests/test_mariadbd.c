/* test_mariadbd: real MariaDB servers as the simulator and the MariaDB
 * stages' tests start them (sim/servers/mariadbd): a primary and its
 * asynchronous replica, who gets in and who does not, a committed row
 * across a crash and a restart, a promotion, and nothing left behind,
 * also after Ctrl-C.
 *
 * The tcase's fixture starts both servers in the runner's process; the
 * tests run in processes of their own (Check's fork mode). */
#define _GNU_SOURCE
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clockfile.h"
#include "cluster.h"
#include "mariadbd.h"
#include "rundir.h"
#include "tcases.h"
#include "util.h"

#define TCASE_TIMEOUT_S 240 /* two install-db and two servers on a loaded machine */
#define TIMEOUT_MS 5000
#define REPLICA_WAIT_MS 10000 /* for a row to reach the replica */

static sim_mariadb primary, replica;

static void servers_setup(void)
{
    char err[512], password[SIM_PASSWORD_LEN];

    if (sim_password_draw(password, err, sizeof(err)) != 0 ||
        sim_mariadb_start(&primary, rundir_path(), "primary", 1, password, NULL, err,
                          sizeof(err)) != 0 ||
        sim_mariadb_start(&replica, rundir_path(), "replica", 2, password, NULL, err,
                          sizeof(err)) != 0 ||
        sim_mariadb_replicate(&replica, &primary, err, sizeof(err)) != 0) {
        fprintf(stderr, "tests: cannot start MariaDB: %s\n", err);
        exit(EXIT_FAILURE);
    }
}

static void servers_teardown(void)
{
    sim_mariadb_stop(&replica);
    sim_mariadb_stop(&primary);
}

static MYSQL *user(const sim_mariadb *m)
{
    char err[512];
    MYSQL *c = sim_mariadb_connect(m, TIMEOUT_MS, err, sizeof(err));

    ck_assert_msg(c != NULL, "the stages' user cannot connect: %s", err);
    return c;
}

static MYSQL *root(const sim_mariadb *m)
{
    char err[512];
    MYSQL *c = sim_mariadb_root(m, TIMEOUT_MS, err, sizeof(err));

    ck_assert_msg(c != NULL, "root cannot connect over the socket: %s", err);
    return c;
}

static void query_ok(MYSQL *c, const char *sql)
{
    char err[512];

    ck_assert_msg(sim_mariadb_query(c, err, sizeof(err), "%s", sql) == 0, "%s", err);
}

/* The error MariaDB gives for sql; fails the test when it works. */
static void query_refused(MYSQL *c, const char *sql, const char *why)
{
    ck_assert_msg(mysql_query(c, sql) != 0, "%s worked: %s", sql, why);
}

/* The count a query returns, polled until it is want or wait_ms pass. A
 * replica may not have applied the table's CREATE yet: an error is "not
 * yet" too, and fails the test only when it is still the answer at the
 * end. */
static long count_within(MYSQL *c, const char *sql, long want, long wait_ms)
{
    char out[32], err[512];
    long n = -1, waited;
    int failed = 0;

    for (waited = 0; waited <= wait_ms; waited += 20) {
        failed = sim_mariadb_value(c, out, sizeof(out), err, sizeof(err), "%s", sql) != 0;
        if (!failed && (n = atol(out)) == want)
            break;
        sim_sleep_ms(20);
    }
    ck_assert_msg(!failed, "%s", err);
    return n;
}

/* A client without the run's password is refused; so is root over TCP. */
START_TEST(test_mariadb_secret)
{
    MYSQL *c = mysql_init(NULL);
    unsigned int secs = 5;

    mysql_options(c, MYSQL_OPT_CONNECT_TIMEOUT, &secs);
    ck_assert_msg(mysql_real_connect(c, "127.0.0.1", SIM_MARIADB_USER, "guess",
                                     SIM_MARIADB_DB, (unsigned)primary.srv.port, NULL,
                                     0) == NULL,
                  "the stages' user got in with a wrong password");
    mysql_close(c);
    c = mysql_init(NULL);
    mysql_options(c, MYSQL_OPT_CONNECT_TIMEOUT, &secs);
    ck_assert_msg(mysql_real_connect(c, "127.0.0.1", "root", NULL, NULL,
                                     (unsigned)primary.srv.port, NULL, 0) == NULL,
                  "root got in over TCP without a password");
    mysql_close(c);
    mysql_close(user(&primary));
}
END_TEST

/* The stages' user writes no file and grants nothing; root writes files
 * only inside the server's own dir; the socket's dir is the owner's. */
START_TEST(test_mariadb_no_escape)
{
    MYSQL *u = user(&primary), *r = root(&primary);
    char sql[SIM_PATH_LEN + 128];
    struct stat st;

    /* A file an earlier, broken run left would make the checks below lie. */
    unlink("/tmp/lockstep-outfile-user");
    unlink("/tmp/lockstep-outfile-root");
    query_refused(u, "SELECT 1 INTO OUTFILE '/tmp/lockstep-outfile-user'", "no FILE privilege");
    query_refused(u, "CREATE USER 'x'@'%'", "no CREATE USER privilege");
    query_refused(u, "SET GLOBAL read_only=1", "no SUPER privilege");
    query_refused(u, "SELECT * FROM mysql.user", "no access to mysql");
    query_refused(r, "SELECT 1 INTO OUTFILE '/tmp/lockstep-outfile-root'",
                  "secure_file_priv is the server's own dir");
    snprintf(sql, sizeof(sql), "SELECT 1 INTO OUTFILE '%s/files/inside'", primary.srv.dir);
    query_ok(r, sql); /* the one place it may write: the refusals above are no accident */
    ck_assert_int_eq(access("/tmp/lockstep-outfile-root", F_OK), -1);
    ck_assert_int_eq(access("/tmp/lockstep-outfile-user", F_OK), -1);
    ck_assert_msg(stat(primary.sock, &st) == 0, "no socket at %s", primary.sock);
    snprintf(sql, sizeof(sql), "%s/root", primary.srv.dir);
    ck_assert_msg(stat(sql, &st) == 0 && (st.st_mode & 0777) == 0700,
                  "the socket's dir %s is not mode 0700", sql);
    mysql_close(u);
    mysql_close(r);
}
END_TEST

/* A row reaches the replica; held, the replica lacks the next; promoted,
 * it takes writes without it. Runs last: it changes the servers' roles. */
START_TEST(test_mariadb_replica_promoted)
{
    MYSQL *p = user(&primary), *q;
    char err[512];

    query_ok(p, "CREATE TABLE IF NOT EXISTS t (k VARCHAR(64) PRIMARY KEY)");
    query_ok(p, "INSERT INTO t VALUES ('before')");
    q = user(&replica);
    ck_assert_int_eq(count_within(q, "SELECT COUNT(*) FROM t WHERE k='before'", 1,
                                  REPLICA_WAIT_MS), 1);
    query_refused(q, "INSERT INTO t VALUES ('on the replica')", "the replica is read-only");
    ck_assert_msg(sim_mariadb_hold(&replica, err, sizeof(err)) == 0, "%s", err);
    query_ok(p, "INSERT INTO t VALUES ('held')");
    sim_sleep_ms(500);
    ck_assert_int_eq(count_within(q, "SELECT COUNT(*) FROM t WHERE k='held'", 0, 0), 0);
    sim_mariadb_kill(&primary);
    ck_assert_msg(sim_mariadb_promote(&replica, err, sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(count_within(q, "SELECT COUNT(*) FROM t WHERE k='held'", 0, 0), 0);
    query_ok(q, "INSERT INTO t VALUES ('promoted')");
    mysql_close(p);
    mysql_close(q);
}
END_TEST

/* A committed row survives SIGKILL and a start on the same data dir and
 * port; the killed process is gone, and stop removes the dir. */
START_TEST(test_mariadb_restart_keeps_rows)
{
    char err[512], password[SIM_PASSWORD_LEN];
    sim_mariadb m;
    MYSQL *c;
    pid_t first;
    int port;

    memset(&m, 0, sizeof(m));
    ck_assert(sim_password_draw(password, err, sizeof(err)) == 0);
    ck_assert_msg(sim_mariadb_start(&m, rundir_path(), "restarted", 3, password, NULL, err,
                                    sizeof(err)) == 0, "%s", err);
    c = user(&m);
    query_ok(c, "CREATE TABLE t (k VARCHAR(64) PRIMARY KEY)");
    query_ok(c, "INSERT INTO t VALUES ('committed')");
    mysql_close(c);
    first = m.srv.pid;
    port = m.srv.port;
    ck_assert_msg(sim_mariadb_restart(&m, err, sizeof(err)) == 0, "%s", err);
    ck_assert_msg(kill(first, 0) != 0, "the killed mariadbd %d still runs", (int)first);
    ck_assert_int_eq(m.srv.port, port);
    c = user(&m);
    ck_assert_int_eq(count_within(c, "SELECT COUNT(*) FROM t WHERE k='committed'", 1, 0), 1);
    mysql_close(c);
    first = m.srv.pid;
    sim_mariadb_stop(&m);
    ck_assert_msg(kill(first, 0) != 0, "the stopped mariadbd %d still runs", (int)first);
    ck_assert_msg(access(m.sock, F_OK) != 0, "the stopped server's dir is still there");
}
END_TEST

/* The server's wall clock, in ms since the epoch, as NOW(3) reads it. */
static long long server_ms(MYSQL *c)
{
    char out[64], err[512];

    ck_assert_msg(sim_mariadb_value(c, out, sizeof(out), err, sizeof(err),
                                    "SELECT ROUND(UNIX_TIMESTAMP(NOW(3)) * 1000)") == 0, "%s", err);
    return atoll(out);
}

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

/* A server started under the clock library: a jump moves NOW(3) by as
 * much, at once (v12's leases run by it). */
START_TEST(test_mariadb_clock_jumps)
{
    char err[512], password[SIM_PASSWORD_LEN], shim[PATH_MAX];
    char file[SIM_CLOCKFILE_LEN];
    long long before, after;
    sim_clock_env env;
    sim_mariadb m;
    MYSQL *c;

    memset(&m, 0, sizeof(m));
    clock_shim(shim, sizeof(shim));
    ck_assert_msg(sim_clockfile_create(file, rundir_path(), "jumping", err, sizeof(err)) == 0,
                  "%s", err);
    sim_clockfile_env(&env, shim, file);
    ck_assert(sim_password_draw(password, err, sizeof(err)) == 0);
    ck_assert_msg(sim_mariadb_start(&m, rundir_path(), "jumping", 4, password, env.env, err,
                                    sizeof(err)) == 0, "%s", err);
    c = user(&m);
    before = server_ms(c);
    ck_assert_msg(sim_clockfile_jump(file, 3600000, err, sizeof(err)) == 0, "%s", err);
    after = server_ms(c);
    ck_assert_msg(after - before >= 3600000 && after - before < 3600000 + 60000,
                  "NOW(3) moved %lld ms after a jump of an hour", after - before);
    mysql_close(c);
    sim_mariadb_stop(&m);
}
END_TEST

/* In a child: a primary and its replica in a temp dir of their own, told
 * to the parent, then a wait for the parent's SIGINT, which the
 * simulator's own handler gets (as in build/sim/sim). */
static void start_and_wait(int fd)
{
    char err[512], password[SIM_PASSWORD_LEN];
    sim_mariadb p, r;
    rundir_started st;

    sim_cluster_cleanup_on_signal();
    memset(&st, 0, sizeof(st));
    setenv("TMPDIR", rundir_path(), 1);
    if (sim_tempdir_create(st.dir, sizeof(st.dir), err, sizeof(err)) != 0 ||
        sim_password_draw(password, err, sizeof(err)) != 0 ||
        sim_mariadb_start(&p, st.dir, "p", 1, password, NULL, err, sizeof(err)) != 0 ||
        sim_mariadb_start(&r, st.dir, "r", 2, password, NULL, err, sizeof(err)) != 0 ||
        sim_mariadb_replicate(&r, &p, err, sizeof(err)) != 0)
        _exit(3);
    st.pid[0] = p.srv.pid;
    st.pid[1] = r.srv.pid;
    if (write(fd, &st, sizeof(st)) != (ssize_t)sizeof(st))
        _exit(4);
    for (;;)
        pause();
}

/* Ctrl-C while they run: the signal's cleanup kills both servers and
 * removes the temp dir, data dirs and all. */
START_TEST(test_mariadb_interrupt_leaves_nothing)
{
    rundir_started st;
    pid_t child = rundir_start_child(start_and_wait, &st, "MariaDB servers");

    rundir_interrupt(child, &st, "mariadbd");
}
END_TEST

Suite *mariadb_servers_suite(void)
{
    Suite *s = suite_create("mariadb");
    TCase *tc = tcase_create("mariadb");

    tcase_set_timeout(tc, TCASE_TIMEOUT_S);
    tcase_add_unchecked_fixture(tc, servers_setup, servers_teardown);
    tcase_add_test(tc, test_mariadb_secret);
    tcase_add_test(tc, test_mariadb_no_escape);
    tcase_add_test(tc, test_mariadb_restart_keeps_rows);
    tcase_add_test(tc, test_mariadb_replica_promoted);
    tcase_add_test(tc, test_mariadb_interrupt_leaves_nothing);
    tcase_add_test(tc, test_mariadb_clock_jumps);
    suite_add_tcase(s, tc);
    return s;
}
