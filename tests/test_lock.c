/* test_lock: the contract suite, compiled against every stage.
 *
 * Every test talks to a real redis-server. Expectations come from the
 * stage's row in stages.h: where a stage lacks a capability, the test
 * asserts the flaw it keeps (v1-v3's release deletes another's lock, v2-v5
 * lose the key under a live holder, v1-v5 deadlock on themselves).
 *
 * The contract is read in parts, a file each, written in the verbs of
 * lock_helpers.h. This file holds the part every stage shares by
 * construction, one lock.h, and puts the parts together into the suite's
 * tcases, each with a redis-server of its own (CK_RUN_CASE=<tcase> runs
 * one):
 *
 *   basics       test_lock_basics.c      acquire, release, BUSY, the wait budget, the TTL
 *                test_lock_reentry.c     the holder's thread acquires again
 *   ownership    test_lock_owner.c       NOT_OWNER, the owner's id; the release script
 *                test_lock_tokens.c      fencing tokens
 *   lease        test_lock_lease.c       the lease under a live holder, the watchdog
 *                test_lock_pubsub.c      a waiter woken by the release
 *   contention   test_lock_contention.c  client processes on one counter
 *   threads      test_lock_contention.c  threads that share one handle
 *   errors       test_lock_errors.c      ERR with a reason: I/O, failover, bad arguments
 *   quorum       test_lock_quorum.c      a majority of independent nodes (v8 only)
 *   contract     test_lock.c             lock.h is byte-identical in every stage */
#define _GNU_SOURCE
#include <stdio.h>

#include "lock_helpers.h"

#ifndef SRCDIR
#define SRCDIR "." /* the repository root; make passes its own */
#endif

/* ---- the contract ---------------------------------------------------------------- */

/* Reads a whole small file into buf; returns its length, or -1. */
static long read_file(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "rb");
    size_t n;

    if (f == NULL)
        return -1;
    n = fread(buf, 1, len, f);
    fclose(f);
    return n == len ? -1 : (long)n; /* too big for buf: not a header */
}

/* The line number of byte offset in buf. */
static int line_at(const char *buf, long offset)
{
    int line = 1;
    long i;

    for (i = 0; i < offset; i++)
        line += buf[i] == '\n';
    return line;
}

START_TEST(test_lock_header_identical)
{
    static char first[65536], other[65536];
    char path[512];
    long n0, n, i;
    int s;

    harness_title("lock.h is byte-identical in every stage folder");
    snprintf(path, sizeof(path), "%s/%s/lock.h", SRCDIR, stage_table[0].dir);
    n0 = read_file(path, first, sizeof(first));
    ck_assert_msg(n0 > 0, "cannot read %s (run from the repository root, or build with -DSRCDIR)",
                  path);
    for (s = 1; s < STAGE_COUNT; s++) {
        if (stage_table[s].dir == NULL)
            continue; /* a number the stage list skips */
        snprintf(path, sizeof(path), "%s/%s/lock.h", SRCDIR, stage_table[s].dir);
        n = read_file(path, other, sizeof(other));
        ck_assert_msg(n >= 0, "cannot read %s", path);
        for (i = 0; i < n && i < n0 && first[i] == other[i]; i++)
            ;
        ck_assert_msg(i == n && n == n0, "%s/lock.h differs from %s/lock.h at line %d; "
                      "expected the same bytes (the contract)", stage_table[s].dir,
                      stage_table[0].dir, line_at(first, i));
    }
}
END_TEST

/* ---- the suite ---------------------------------------------------------------------- */

/* The majority's own tests, in a stage that takes one. */
static void add_quorum(Suite *s)
{
    if (CAPS.quorum)
        lock_quorum_tests(harness_servers_tcase(s, "quorum", 30));
}

/* The tests of a lock kept in Redis, each tcase with a redis-server of
 * its own: a ZooKeeper stage's are in tests/test_zk.c. */
static void add_redis(Suite *s)
{
    static const struct {
        const char *name;
        int timeout_s;
        lock_part *parts[3]; /* in the order of the contract */
    } tcases[] = {
        { "basics", 10, { lock_basics_tests, lock_reentry_tests } },
        { "ownership", 10, { lock_owner_tests, lock_token_tests, lock_script_tests } },
        { "lease", 20, { lock_lease_tests, lock_pubsub_tests, lock_watchdog_tests } },
        { "contention", 60, { lock_contention_tests } },
        { "threads", 60, { lock_threads_tests } },
        { "errors", 20, { lock_errors_tests } },
    };

    for (size_t i = 0; i < sizeof(tcases) / sizeof(tcases[0]); i++) {
        TCase *tc = harness_servers_tcase(s, tcases[i].name, tcases[i].timeout_s);

        for (size_t p = 0; p < 3 && tcases[i].parts[p] != NULL; p++)
            tcases[i].parts[p](tc);
    }
    add_quorum(s);
}

Suite *lock_suite(void)
{
    Suite *s = suite_create("lock");
    TCase *contract = tcase_create("contract");

    if (!STAGE_ZOOKEEPER && !STAGE_MARIADB)
        add_redis(s);
    tcase_add_checked_fixture(contract, harness_test_setup, harness_test_teardown);
    tcase_add_test(contract, test_lock_header_identical);
    suite_add_tcase(s, contract);
    return s;
}
