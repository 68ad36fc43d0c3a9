/* harness: throwaway redis-servers (or a ZooKeeper ensemble) for the
 * Check suites, and the helpers the tests are written in. See harness.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define TEST_TIMEOUT_MS 2000 /* the tests' own connections: no hang, ever */
#define OWN_SERVERS_TIMEOUT_S 60 /* a suite whose tests start their own servers */

static int servers_started;        /* names servers uniquely in the run's temp dir */
_Static_assert(STAGE_COUNT > 0 && SIM_NODES_MAX >= 1, "a stage talks to one node at least");

static sim_server tcase_node[SIM_NODES_MAX];   /* the unchecked fixture's servers */
static sim_ensemble tcase_ensemble;            /* ... of a ZooKeeper stage */
static sim_ensemble suite_ensemble;            /* the one its sharing tcases use */
static const sim_ensemble *ensemble_now;       /* the running tcase's: one of those */
static int sharing_left;                       /* sharing tcases not yet torn down */
static sim_mariadb tcase_mariadb;              /* ... of a MariaDB stage */
static redisContext *test_redis[SIM_NODES_MAX]; /* the checked fixture's connections */
static int64_t title_ms;           /* when harness_title ran; 0 = no title */

/* ---- servers and fixtures ---------------------------------------------------- */

void harness_server_start(sim_server *s)
{
    char name[64], err[HARNESS_ERRSTR_LEN];
    int rc;

    snprintf(name, sizeof(name), "server-%ld-%d", (long)getpid(), ++servers_started);
    rc = sim_server_start(s, rundir_path(), name, NULL, err, sizeof(err));
    ck_assert_msg(rc == 0, "cannot start redis-server for the test: %s", err);
}

int harness_nodes(void)
{
    return CAPS.masters;
}

void harness_server_setup(void)
{
    int i;

    if (CAPS.masters > SIM_NODES_MAX) {
        fprintf(stderr, "tests: %s talks to %d masters; the harness starts at most %d\n",
                CAPS.dir, CAPS.masters, SIM_NODES_MAX);
        exit(EXIT_FAILURE);
    }
    if (STAGE_ZOOKEEPER) {
        char err[HARNESS_ERRSTR_LEN];
        int rc = sim_ensemble_start(&tcase_ensemble, rundir_path(), harness_nodes(), err, sizeof(err));

        ck_assert_msg(rc == 0, "cannot start the ZooKeeper ensemble for the tests: %s", err);
        ensemble_now = &tcase_ensemble;
        return;
    }
    if (STAGE_MARIADB) {
        char err[HARNESS_ERRSTR_LEN];
        int rc = sim_password_ready(err, sizeof(err));

        if (rc == 0)
            rc = sim_mariadb_start(&tcase_mariadb, rundir_path(), "mariadb", 1, sim_password(),
                                   NULL, err, sizeof(err));
        ck_assert_msg(rc == 0, "cannot start MariaDB for the tests: %s", err);
        return;
    }
    for (i = 0; i < harness_nodes(); i++)
        harness_server_start(&tcase_node[i]);
}

void harness_server_teardown(void)
{
    int i;

    sim_ensemble_stop(&tcase_ensemble);
    ensemble_now = NULL;
    sim_mariadb_stop(&tcase_mariadb);
    for (i = 0; i < harness_nodes(); i++)
        sim_server_stop(&tcase_node[i]);
}

/* The suite's ensemble is started by the first sharing tcase that runs
 * (CK_RUN_CASE may run any one alone), kept for the next, and stopped
 * after the last, before the tcases of ensembles of their own start
 * theirs; at exit, the runner's cleanup stops it in any case. */
static void shared_setup(void)
{
    if (suite_ensemble.nodes == 0) {
        char err[HARNESS_ERRSTR_LEN];
        int rc = sim_ensemble_start(&suite_ensemble, rundir_path(), harness_nodes(), err,
                                    sizeof(err));

        if (rc != 0)
            memset(&suite_ensemble, 0, sizeof(suite_ensemble));
        ck_assert_msg(rc == 0, "cannot start the ZooKeeper ensemble for the tests: %s", err);
    }
    ensemble_now = &suite_ensemble;
}

static void shared_teardown(void)
{
    ensemble_now = NULL;
    if (--sharing_left == 0) {
        sim_ensemble_stop(&suite_ensemble);
        memset(&suite_ensemble, 0, sizeof(suite_ensemble));
    }
}

TCase *harness_shared_tcase(Suite *s, const char *name, int timeout_s)
{
    TCase *tc = tcase_create(name);

    tcase_add_unchecked_fixture(tc, shared_setup, shared_teardown);
    tcase_add_checked_fixture(tc, harness_test_setup, harness_test_teardown);
    tcase_set_timeout(tc, timeout_s);
    suite_add_tcase(s, tc);
    sharing_left++;
    return tc;
}

const sim_server *harness_node(int i)
{
    ck_assert_msg(i >= 0 && i < harness_nodes(), "node %d: the tcase has %d", i, harness_nodes());
    if (STAGE_MARIADB)
        return &tcase_mariadb.srv;
    if (STAGE_ZOOKEEPER)
        return &harness_ensemble()->node[i];
    return &tcase_node[i];
}

const sim_mariadb *harness_mariadb(void)
{
    ck_assert_msg(STAGE_MARIADB && tcase_mariadb.srv.port > 0, "this tcase has no MariaDB server");
    return &tcase_mariadb;
}

const sim_ensemble *harness_ensemble(void)
{
    ck_assert_msg(STAGE_ZOOKEEPER && ensemble_now != NULL && ensemble_now->nodes > 0,
                  "this tcase has no ZooKeeper ensemble");
    return ensemble_now;
}

redisContext *harness_node_redis(int i)
{
    ck_assert_msg(i >= 0 && i < harness_nodes() && test_redis[i] != NULL,
                  "this tcase has no server fixture for node %d", i);
    return test_redis[i];
}

const sim_server *harness_server(void)
{
    return harness_node(0);
}

redisContext *harness_redis(void)
{
    return harness_node_redis(0);
}

void harness_test_setup(void)
{
    int i;

    title_ms = 0;
    /* A ZooKeeper stage's tests name their locks apart: nothing to empty. */
    if (STAGE_ZOOKEEPER || tcase_node[0].pid == 0)
        return;
    /* Tests of one tcase share its servers: each starts from nothing. */
    for (i = 0; i < harness_nodes(); i++) {
        test_redis[i] = harness_connect(&tcase_node[i]);
        harness_status(test_redis[i], "FLUSHALL");
    }
}

void harness_test_teardown(void)
{
    int i;

    for (i = 0; i < SIM_NODES_MAX; i++) {
        redisFree(test_redis[i]);
        test_redis[i] = NULL;
    }
    if (title_ms != 0)
        printf("  ... Passed (%.2f s)\n", (harness_now_ms() - title_ms) / 1000.0);
}

static char tmpdir[SIM_PATH_LEN];   /* the tcase's tests' temp dirs live in here */
static char saved_tmpdir[SIM_PATH_LEN];

void harness_tmpdir_setup(void)
{
    char err[256];
    const char *old = getenv("TMPDIR");

    snprintf(saved_tmpdir, sizeof(saved_tmpdir), "%s", old != NULL ? old : "");
    if (sim_tempdir_create(tmpdir, sizeof(tmpdir), err, sizeof(err)) != 0) {
        fprintf(stderr, "harness: %s\n", err);
        exit(EXIT_FAILURE);
    }
    setenv("TMPDIR", tmpdir, 1);
}

void harness_tmpdir_teardown(void)
{
    if (saved_tmpdir[0] != '\0')
        setenv("TMPDIR", saved_tmpdir, 1);
    else
        unsetenv("TMPDIR");
    sim_tempdir_remove(tmpdir);
}

TCase *harness_servers_tcase(Suite *s, const char *name, int timeout_s)
{
    TCase *tc = tcase_create(name);

    tcase_add_unchecked_fixture(tc, harness_server_setup, harness_server_teardown);
    tcase_add_checked_fixture(tc, harness_test_setup, harness_test_teardown);
    tcase_set_timeout(tc, timeout_s);
    suite_add_tcase(s, tc);
    return tc;
}

Suite *harness_own_servers_suite(const char *name, const char *tcase,
                                 const TTest *const *tests, size_t n)
{
    TCase *tc;
    Suite *s = one_tcase_suite(name, tcase, tests, n, &tc);

    tcase_add_unchecked_fixture(tc, harness_tmpdir_setup, harness_tmpdir_teardown);
    tcase_add_checked_fixture(tc, harness_test_setup, harness_test_teardown);
    /* Not Check's default 4 s: a test here starts its own redis-server
     * and proxy and waits out a few 300 ms timeouts, 1 to 2 s idle, and
     * make test runs suites side by side on two CPUs. */
    tcase_set_timeout(tc, OWN_SERVERS_TIMEOUT_S);
    return s;
}

/* ---- talking to Redis -------------------------------------------------------- */

redisContext *harness_connect(const sim_server *s)
{
    char err[HARNESS_ERRSTR_LEN];
    redisContext *c = sim_server_connect(s, TEST_TIMEOUT_MS, err, sizeof(err));

    ck_assert_msg(c != NULL, "cannot connect to the test's redis-server: %s", err);
    return c;
}

/* A reply in words, for failure messages. */
static const char *describe(const redisReply *r)
{
    switch (r->type) {
    case REDIS_REPLY_ERROR: return r->str;
    case REDIS_REPLY_STRING: return "a string";
    case REDIS_REPLY_STATUS: return "a status";
    case REDIS_REPLY_INTEGER: return "an integer";
    case REDIS_REPLY_ARRAY: return "an array";
    case REDIS_REPLY_NIL: return "nil";
    default: return "an unknown reply";
    }
}

/* Sends a command; fails the test when the connection breaks. */
static redisReply *vcommand(redisContext *c, const char *fmt, va_list ap)
{
    redisReply *r = redisvCommand(c, fmt, ap);

    ck_assert_msg(r != NULL, "the connection to Redis broke during '%s': %s",
                  fmt, c->errstr);
    return r;
}

/* Sends a command whose reply must be of the type want (what: that type
 * in words); fails the test when it is not. */
static redisReply *vexpect(redisContext *c, int want, const char *what, const char *fmt,
                           va_list ap)
{
    redisReply *r = vcommand(c, fmt, ap);

    if (r->type != want)
        ck_abort_msg("'%s' answered %s; expected %s", fmt, describe(r), what);
    return r;
}

long long harness_int(redisContext *c, const char *fmt, ...)
{
    redisReply *r;
    long long v;
    va_list ap;

    va_start(ap, fmt);
    r = vexpect(c, REDIS_REPLY_INTEGER, "an integer", fmt, ap);
    va_end(ap);
    v = r->integer;
    freeReplyObject(r);
    return v;
}

int harness_str(redisContext *c, char *out, size_t len, const char *fmt, ...)
{
    redisReply *r;
    int found;
    va_list ap;

    va_start(ap, fmt);
    r = vcommand(c, fmt, ap);
    va_end(ap);
    found = r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS;
    if (!found && r->type != REDIS_REPLY_NIL)
        ck_abort_msg("'%s' answered %s; expected a string or nil", fmt, describe(r));
    snprintf(out, len, "%s", found ? r->str : "");
    freeReplyObject(r);
    return found;
}

void harness_status(redisContext *c, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    freeReplyObject(vexpect(c, REDIS_REPLY_STATUS, "OK", fmt, ap));
    va_end(ap);
}

/* Adds up calls= of the lines "cmdstat_<command>:calls=N,..." that match
 * command; NULL matches every command but INFO and CONFIG (the test's own).
 * A subcommand counts as its command. */
static long count_calls(const char *info, const char *command)
{
    const char *p;
    char name[64];
    long calls, total = 0;

    for (p = info; p != NULL; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (sscanf(p, "cmdstat_%63[^:]:calls=%ld", name, &calls) != 2)
            continue;
        /* Redis 7 counts subcommands apart: "config|resetstat". */
        name[strcspn(name, "|")] = '\0';
        if (command != NULL ? strcmp(name, command) == 0
                            : strcmp(name, "info") != 0 && strcmp(name, "config") != 0)
            total += calls;
    }
    return total;
}

long harness_calls(redisContext *c, const char *command)
{
    redisReply *r = redisCommand(c, "INFO commandstats");
    long total;

    ck_assert_msg(r != NULL, "INFO commandstats: %s", c->errstr);
    if (r->type != REDIS_REPLY_STRING)
        ck_abort_msg("INFO commandstats answered %s", describe(r));
    total = count_calls(r->str, command);
    freeReplyObject(r);
    return total;
}

/* ---- locks --------------------------------------------------------------------- */

redisContext *harness_connect_node(void *arg, int node, char *errstr, size_t errlen)
{
    (void)arg;
    if (node < 0 || node >= harness_nodes()) {
        snprintf(errstr, errlen, "node %d: the tcase has %d", node, harness_nodes());
        return NULL;
    }
    return sim_server_connect(&tcase_node[node], 1000, errstr, errlen);
}

/* The tcase's nodes, as a Redis stage's provider. */
static const struct dlock_provider tcase_provider = { harness_connect_node, NULL };

void harness_config(dlock_config *cfg, const sim_server *s, long lease_ms,
                    long wait_ms)
{
    dlock_config_init(cfg);
    if (STAGE_ZOOKEEPER)
        cfg->nodes = harness_nodes(); /* node i at port + i: the whole ensemble */
    else if (s == harness_server() && harness_nodes() > 1) {
        cfg->nodes = harness_nodes();
        cfg->provider = &tcase_provider;
    }
    if (sim_password()[0] != '\0')
        cfg->password = sim_password(); /* the run's (password.h), drawn at its start */
    cfg->host = "127.0.0.1";
    cfg->port = s->port;
    cfg->lease_ms = lease_ms;
    cfg->wait_ms = wait_ms;
    cfg->retry_ms = 2;   /* polling stages: waiters notice a release quickly */
    /* A ZooKeeper session is a write through the leader: on a loaded
     * machine it takes seconds to open. */
    cfg->timeout_ms = STAGE_ZOOKEEPER ? 10000 : 1000;
    /* The machine is shared and slow at times: no node counts as failed
     * for a reply that is late by less than the command timeout. */
    cfg->node_timeout_ms = 1000;
}

dlock *harness_lock(const sim_server *s, const char *name, long lease_ms,
                    long wait_ms)
{
    dlock_config cfg;
    dlock *l;

    harness_config(&cfg, s, lease_ms, wait_ms);
    l = dlock_new(name, &cfg);
    ck_assert_msg(l != NULL, "dlock_new(\"%s\") returned NULL: out of memory", name);
    return l;
}

const char *harness_result(int rc)
{
    switch (rc) {
    case DLOCK_OK: return "OK";
    case DLOCK_ERR: return "ERR";
    case DLOCK_BUSY: return "BUSY";
    case DLOCK_NOT_OWNER: return "NOT_OWNER";
    default: return "an unknown result";
    }
}

/* ---- time and words ---------------------------------------------------------- */

int64_t harness_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void harness_clock_shim(char *out, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

    ck_assert_msg(n > 0, "cannot read /proc/self/exe");
    self[n] = '\0';
    snprintf(out, len, "%s/../clockshim.so", dirname(self));
    ck_assert_msg(access(out, R_OK) == 0, "the clock library %s is missing: build it "
                  "with make", out);
}

void harness_sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

void harness_title(const char *fmt, ...)
{
    va_list ap;

    printf("Test (v%d): ", CAPS.stage);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf(" ...\n");
    title_ms = harness_now_ms();
}
