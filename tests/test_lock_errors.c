/* test_lock_errors: when things go wrong, ERR with a reason, never a crash
 * or a hang. Nothing listens, the server dies under a holder, the server
 * turns into a replica, the name, the lease or the node count is bad, the
 * server refuses PEXPIRE: each is an error the caller can read, and none
 * leaves a key without its lease. A lease at either end of the range is
 * no error. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lock_helpers.h"

START_TEST(test_lock_connection_refused)
{
    sim_server nobody;
    dlock *l;
    int fd;

    harness_title("connection refused: ERR with a reason");
    memset(&nobody, 0, sizeof(nobody));
    fd = refusing_port(&nobody.port);
    l = harness_lock(&nobody, "refused", LEASE_MS, 0);
    assert_error(l, dlock_acquire(l), "acquire", "when nothing listens on the port");
    assert_error(l, dlock_release(l), "release", "when nothing listens on the port");
    dlock_free(l);
    close(fd);
}
END_TEST

START_TEST(test_lock_server_killed_while_held)
{
    sim_server own;
    int64_t t0, took;
    dlock *l;

    harness_title("the server is killed while the lock is held: release fails fast");
    harness_server_start(&own);
    l = harness_lock(&own, "killed", LEASE_MS, 0);
    ck_assert_msg(dlock_acquire(l) == DLOCK_OK, "could not take the lock: %s", dlock_errstr(l));
    sim_server_kill(&own);
    t0 = harness_now_ms();
    assert_error(l, dlock_release(l), "release", "after the server was killed");
    assert_error(l, dlock_acquire(l), "acquire", "after the server was killed");
    took = harness_now_ms() - t0;
    ck_assert_msg(took < 3000, "release and acquire took %lld ms to fail against a dead server; "
                  "expected about the 1000 ms timeout at most", (long long)took);
    dlock_free(l);
    sim_server_stop(&own);
}
END_TEST

/* The provider of the demotion test: a connection to whichever server
 * *arg points at now, as a provider that follows a failover would give. */
static redisContext *connect_current(void *arg, int node, char *errstr, size_t errlen)
{
    const sim_server *const *current = arg;

    (void)node; /* one node */

    return sim_server_connect(*current, 1000, errstr, errlen);
}

/* Until the replica on c has loaded its primary's data (link up), or 10 s:
 * while it loads, it answers LOADING instead of READONLY. */
static void await_replica_in_sync(redisContext *c)
{
    char status[16] = "", err[HARNESS_ERRSTR_LEN];
    int64_t deadline = harness_now_ms() + 10000;

    while (strcmp(status, "up") != 0 && harness_now_ms() < deadline) {
        harness_sleep_ms(5);
        ck_assert_msg(sim_server_info_field(c, "replication", "master_link_status", status,
                                             sizeof(status), err, sizeof(err)) == 0, "%s", err);
    }
    ck_assert_msg(strcmp(status, "up") == 0, "the demoted server's link to its new primary is "
                  "'%s' after 10 s; expected up", status);
}

START_TEST(test_lock_demoted_primary)
{
    const sim_server *current;
    sim_server old;
    dlock_config cfg;
    redisContext *c;
    dlock *l;
    int rc;

    harness_title("the server turns into a replica under a handle: READONLY, then the provider's "
                  "new primary");
    harness_server_start(&old);
    current = &old;
    harness_config(&cfg, &old, LEASE_MS, 0);
    cfg.provider = &(struct dlock_provider){ connect_current, &current };
    l = dlock_new("demoted", &cfg);
    ck_assert_msg(l != NULL, "dlock_new returned NULL");
    ck_assert_msg(dlock_acquire(l) == DLOCK_OK, "could not take the lock on the first primary: %s",
                  dlock_errstr(l));
    release_ok(l, "A");
    /* A failover: the handle's server becomes a replica of the tcase's
     * server, and the provider now returns the new primary. */
    c = harness_connect(&old);
    harness_status(c, "REPLICAOF 127.0.0.1 %d", harness_server()->port);
    await_replica_in_sync(c);
    redisFree(c);
    current = harness_server();
    rc = dlock_acquire(l);
    ck_assert_msg(rc == DLOCK_ERR && strstr(dlock_errstr(l), "READONLY") != NULL, "expected ERR "
                  "with READONLY from the demoted server, got %s (%s)", harness_result(rc),
                  dlock_errstr(l));
    printf("  acquire on the demoted server: \"%s\"\n", dlock_errstr(l));
    rc = dlock_acquire(l);
    ck_assert_msg(rc == DLOCK_OK, "expected the next acquire to reach the new primary through the "
                  "provider, got %s (%s): the handle kept the demoted server", harness_result(rc),
                  dlock_errstr(l));
    ck_assert_msg(harness_int(harness_redis(), "EXISTS demoted") == 1, "acquire returned OK but "
                  "the new primary has no key");
    release_ok(l, "A");
    dlock_free(l);
    sim_server_stop(&old);
}
END_TEST

START_TEST(test_lock_bad_name)
{
    const char *names[] = { "", NULL };
    dlock_config cfg;
    dlock *l;
    int i;

    harness_title("an empty or NULL name, or a NULL config: ERR with a reason");
    harness_config(&cfg, harness_server(), LEASE_MS, 0);
    for (i = 0; i < 2; i++) {
        l = dlock_new(names[i], &cfg);
        ck_assert_msg(l != NULL, "dlock_new returned NULL for a bad name; expected a handle "
                      "whose calls fail");
        assert_error(l, dlock_acquire(l), "acquire", names[i] ? "for an empty name" : "for a NULL name");
        assert_error(l, dlock_release(l), "release", names[i] ? "for an empty name" : "for a NULL name");
        dlock_free(l);
    }
    l = dlock_new("no-config", NULL);
    ck_assert_msg(l != NULL, "dlock_new returned NULL for a NULL config");
    assert_error(l, dlock_acquire(l), "acquire", "for a NULL config");
    dlock_free(l);
    ck_assert_msg(harness_int(harness_redis(), "DBSIZE") == 0, "a failed acquire created a key");
}
END_TEST

START_TEST(test_lock_bad_lease)
{
    const long leases[] = { 0, -1, DLOCK_MIN_LEASE_MS - 1, DLOCK_MAX_LEASE_MS + 1, LONG_MAX };
    char range[64];
    dlock *l;
    int i;

    harness_title("a lease out of %ld..%ld ms (0, -1, one off each end, LONG_MAX): ERR naming "
                  "the range, no key", DLOCK_MIN_LEASE_MS, DLOCK_MAX_LEASE_MS);
    snprintf(range, sizeof(range), "%ld to %ld ms", DLOCK_MIN_LEASE_MS, DLOCK_MAX_LEASE_MS);
    for (i = 0; i < (int)(sizeof(leases) / sizeof(leases[0])); i++) {
        l = harness_lock(harness_server(), "lease-check", leases[i], 0);
        assert_error(l, dlock_acquire(l), "acquire", "for a lease out of range");
        ck_assert_msg(strstr(dlock_errstr(l), range) != NULL, "the error for lease %ld is \"%s\"; "
                      "expected it to name the valid range \"%s\"", leases[i], dlock_errstr(l),
                      range);
        ck_assert_msg(exists("lease-check") == 0, "an acquire with lease %ld created the key",
                      leases[i]);
        dlock_free(l);
    }
}
END_TEST

START_TEST(test_lock_several_nodes_refused)
{
    dlock_config cfg;
    dlock *l;

    harness_title("a config of several nodes: ERR naming the stage that takes a majority, no key");
    harness_config(&cfg, harness_server(), LEASE_MS, 0);
    cfg.nodes = 5;
    l = dlock_new("nodes-check", &cfg);
    ck_assert_msg(l != NULL, "dlock_new returned NULL for a config of 5 nodes");
    assert_error(l, dlock_acquire(l), "acquire", "for a config of 5 nodes");
    ck_assert_msg(strstr(dlock_errstr(l), "v8-redlock") != NULL, "the error for 5 nodes is "
                  "\"%s\"; expected it to name v8-redlock, the stage for several", dlock_errstr(l));
    ck_assert_msg(exists("nodes-check") == 0, "an acquire refused for its 5 nodes created the key "
                  "on node 0");
    dlock_free(l);
}
END_TEST

START_TEST(test_lock_lease_bounds)
{
    const long leases[] = { DLOCK_MIN_LEASE_MS, DLOCK_MAX_LEASE_MS };
    long long pttl;
    dlock *l;
    int i, rc;

    harness_title("the leases at both ends of the range are taken (%ld and %ld ms)",
                  DLOCK_MIN_LEASE_MS, DLOCK_MAX_LEASE_MS);
    for (i = 0; i < 2; i++) {
        l = harness_lock(harness_server(), "lease-edge", leases[i], 0);
        rc = dlock_acquire(l);
        pttl = harness_int(harness_redis(), "PTTL lease-edge");
        /* A majority must come within the lease less its drift: on a slow
         * moment of the machine, 30 ms may be spent before it does. */
        if (CAPS.quorum && rc == DLOCK_ERR && strstr(dlock_errstr(l), "past the") != NULL) {
            printf("  lease %ld: \"%s\"\n", leases[i], dlock_errstr(l));
            dlock_free(l);
            continue;
        }
        ck_assert_msg(rc == DLOCK_OK, "expected acquire with lease %ld to work, got %s (%s)",
                      leases[i], harness_result(rc), dlock_errstr(l));
        /* The short lease may have run out already (-2); the key never
         * lives longer than its lease. */
        if (CAPS.has_ttl)
            ck_assert_msg(pttl == -2 || (pttl > 0 && pttl <= leases[i]), "lease %ld left PTTL "
                          "%lld; expected 0 < PTTL <= the lease", leases[i], pttl);
        rc = dlock_release(l);
        ck_assert_msg(rc != DLOCK_ERR, "release with lease %ld failed: %s", leases[i],
                      dlock_errstr(l));
        dlock_free(l);
    }
}
END_TEST

/* A provider that logs in as "nopexpire", a user who may run every command
 * but PEXPIRE (also not from a script). */
static redisContext *connect_no_pexpire(void *arg, int node, char *errstr, size_t errlen)
{
    redisContext *c = sim_server_connect(arg, 1000, errstr, errlen);
    redisReply *r;
    int ok;

    (void)node; /* one node */

    if (c == NULL)
        return NULL;
    r = redisCommand(c, "AUTH nopexpire pw");
    ok = r != NULL && r->type == REDIS_REPLY_STATUS;
    snprintf(errstr, errlen, "AUTH nopexpire failed");
    freeReplyObject(r);
    if (!ok) {
        redisFree(c);
        return NULL;
    }
    return c;
}

START_TEST(test_lock_pexpire_refused)
{
    dlock_config cfg;
    long long pttl;
    dlock *l;
    int rc;

    harness_title("the server refuses PEXPIRE: acquire fails or sets a TTL, never leaves a key "
                  "without one");
    harness_status(harness_redis(), "ACL SETUSER nopexpire on >pw ~* &* +@all -pexpire");
    harness_config(&cfg, harness_server(), LEASE_MS, 0);
    cfg.nodes = 1; /* the provider's user is on node 0 */
    cfg.provider = &(struct dlock_provider){ connect_no_pexpire, (void *)harness_server() };
    l = dlock_new("refused", &cfg);
    ck_assert_msg(l != NULL, "dlock_new returned NULL");
    rc = dlock_acquire(l);
    pttl = harness_int(harness_redis(), "PTTL refused");
    printf("  acquire returned %s%s%s; PTTL %lld\n", harness_result(rc), rc == DLOCK_ERR ? ": " : "",
           rc == DLOCK_ERR ? dlock_errstr(l) : "", pttl);
    ck_assert_msg(pttl != -1, "acquire returned %s (%s) and left the key with no TTL: it would "
                  "never expire", harness_result(rc), dlock_errstr(l));
    ck_assert_msg((rc == DLOCK_OK && pttl > 0) || (rc == DLOCK_ERR && pttl == -2), "acquire "
                  "returned %s with PTTL %lld; expected OK with a TTL or ERR with no key",
                  harness_result(rc), pttl);
    if (rc == DLOCK_OK)
        release_ok(l, "A");
    dlock_free(l);
    harness_int(harness_redis(), "ACL DELUSER nopexpire");
}
END_TEST

void lock_errors_tests(TCase *errors)
{
    tcase_add_test(errors, test_lock_connection_refused);
    tcase_add_test(errors, test_lock_server_killed_while_held);
    tcase_add_test(errors, test_lock_demoted_primary);
    tcase_add_test(errors, test_lock_bad_name);
    tcase_add_test(errors, test_lock_bad_lease);
    tcase_add_test(errors, test_lock_lease_bounds);
    if (!CAPS.quorum)
        tcase_add_test(errors, test_lock_several_nodes_refused);
    if (CAPS.has_ttl)
        tcase_add_test(errors, test_lock_pexpire_refused);
}
