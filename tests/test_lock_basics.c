/* test_lock_basics: what every stage promises, flawed or not. A free lock
 * is taken and given back; a held one answers BUSY; a waiter gives up after
 * its wait budget; the key's TTL is the lease (none in v1); and how many
 * commands an acquire sends (two where key and lease are set apart: the
 * crash window between them). */
#include "lock_helpers.h"

#define BUDGET_MS 300      /* a waiter's wait budget */
#define RETRY_MS 2         /* harness_config's retry */

START_TEST(test_lock_acquire_release)
{
    dlock *a;

    harness_title("acquire, then release");
    a = take("A", "basic", LEASE_MS);
    ck_assert_msg(exists("basic") == 1, "expected the key 'basic' while A holds the lock, found none");
    release_ok(a, "A");
    ck_assert_msg(exists("basic") == 0, "expected no key 'basic' after A's release, found one");
    dlock_free(a);
}
END_TEST

START_TEST(test_lock_busy_while_held)
{
    check_busy_while_held();
}
END_TEST

START_TEST(test_lock_wait_budget)
{
    dlock *a, *b;

    harness_title("a waiter gives up after about its %d ms budget", BUDGET_MS);
    /* At least the budget less one retry: a stage polls. */
    b = wait_out_budget(&a, "budget", BUDGET_MS, BUDGET_MS - RETRY_MS);
    release_ok(a, "A");
    dlock_free(b);
    dlock_free(a);
}
END_TEST

START_TEST(test_lock_acquire_after_release)
{
    dlock *a, *b;

    harness_title("after a release another client acquires");
    a = take("A", "handover", LEASE_MS);
    release_ok(a, "A");
    b = take("B", "handover", LEASE_MS);
    release_ok(b, "B");
    dlock_free(b);
    dlock_free(a);
}
END_TEST

START_TEST(test_lock_ttl)
{
    dlock *a;
    long long pttl;
    int i;

    harness_title(CAPS.has_ttl ? "the key's TTL is the lease" : "the key has no TTL");
    a = take("A", "ttl", LEASE_MS);
    for (i = 0; i < harness_nodes(); i++) {
        pttl = harness_int(harness_node_redis(i), "PTTL ttl");
        if (CAPS.has_ttl)
            ck_assert_msg(pttl > 0 && pttl <= LEASE_MS, "expected 0 < PTTL <= the %d ms lease "
                          "on node %d, got %lld", LEASE_MS, i, pttl);
        else
            ck_assert_msg(pttl == -1,
                          "v%d sets no lease: expected PTTL -1 (the key lives forever), got %lld",
                          CAPS.stage, pttl);
    }
    release_ok(a, "A");
    dlock_free(a);
}
END_TEST

START_TEST(test_lock_acquire_commands)
{
    long want = CAPS.has_ttl && !CAPS.atomic_acquire ? 2 : 1;
    dlock *a;
    long sent;
    int i;

    harness_title("acquire sends %ld command%s%s", want, want == 1 ? "" : "s (the crash window)",
                  CAPS.quorum ? " to each node" : "");
    a = take("A", "commands", LEASE_MS); /* connects, caches any script */
    release_ok(a, "A");
    for (i = 0; i < harness_nodes(); i++)
        harness_status(harness_node_redis(i), "CONFIG RESETSTAT");
    ck_assert_msg(dlock_acquire(a) == DLOCK_OK, "A could not take the lock again: %s",
                  dlock_errstr(a));
    for (i = 0; i < harness_nodes(); i++) {
        redisContext *c = harness_node_redis(i);

        /* v6 acquires by a script: the commands it runs inside count too. */
        sent = CAPS.reentrant ? harness_calls(c, "evalsha") + harness_calls(c, "eval")
                              : harness_calls(c, NULL);
        if (want == 2)
            ck_assert_msg(sent == 2, "v%d sets the lease by a second command (SETNX, then "
                          "PEXPIRE): expected 2 commands for one acquire, Redis counted %ld",
                          CAPS.stage, sent);
        else
            ck_assert_msg(sent == 1, "expected acquire to be one command%s on node %d, Redis "
                          "counted %ld", CAPS.has_ttl ? " (the key never exists without its "
                          "lease)" : "", i, sent);
    }
    release_ok(a, "A");
    dlock_free(a);
}
END_TEST

void lock_basics_tests(TCase *basics)
{
    tcase_add_test(basics, test_lock_acquire_release);
    tcase_add_test(basics, test_lock_busy_while_held);
    tcase_add_test(basics, test_lock_wait_budget);
    tcase_add_test(basics, test_lock_acquire_after_release);
    tcase_add_test(basics, test_lock_ttl);
    tcase_add_test(basics, test_lock_acquire_commands);
}
