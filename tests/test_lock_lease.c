/* test_lock_lease: the lease under a live holder. With a watchdog it is
 * renewed while held and not after the release, and the watchdog's own I/O
 * errors stay out of the handle's errstr; without one the key expires under
 * its holder, whose release then finds it gone; with no TTL (v1) the key
 * outlives any lease. */
#include "lock_helpers.h"

/* v6: the watchdog keeps the key alive while held, and stops at release. */
static void assert_watchdog(dlock *a)
{
    int64_t t0 = harness_now_ms(), t;

    while ((t = harness_now_ms() - t0) < 4 * SHORT_LEASE_MS) {
        ck_assert_msg(exists("lease") == 1, "the key expired %lld ms after acquire while A still "
                      "held it (lease %d ms); expected the watchdog to keep it alive",
                      (long long)t, SHORT_LEASE_MS);
        harness_sleep_ms(SHORT_LEASE_MS / 6);
    }
    release_ok(a, "A");
    ck_assert_msg(exists("lease") == 0, "expected no key right after A's release");
    harness_sleep_ms(2 * SHORT_LEASE_MS);
    ck_assert_msg(exists("lease") == 0, "the key came back within %d ms of the release: the "
                  "watchdog renewed a released lock", 2 * SHORT_LEASE_MS);
    ck_assert_msg(harness_calls(harness_redis(), "eval") <= 3, "after SCRIPT FLUSH the lock, "
                  "unlock and renew scripts were sent whole %ld times; expected at most once "
                  "each: is a built-in SHA wrong?", harness_calls(harness_redis(), "eval"));
}

/* v2-v5: nothing renews the lease; the key goes while the holder works. */
static void assert_lease_runs_out(dlock *a)
{
    int rc;

    harness_sleep_ms(2 * SHORT_LEASE_MS);
    ck_assert_msg(exists("lease") == 0, "v%d has no watchdog: expected the key to expire after its "
                  "%d ms lease while A still holds it, but it is there after %d ms", CAPS.stage,
                  SHORT_LEASE_MS, 2 * SHORT_LEASE_MS);
    rc = dlock_release(a);
    ck_assert_msg(rc == (CAPS.owner_check ? DLOCK_NOT_OWNER : DLOCK_OK),
                  "after the lease ran out, expected A's release to return %s, got %s (%s)",
                  CAPS.owner_check ? "NOT_OWNER (the lock was no longer ours)" : "OK (a bare DEL)",
                  harness_result(rc), dlock_errstr(a));
}

START_TEST(test_lock_lease_while_held)
{
    dlock *a;

    harness_title(CAPS.watchdog ? "the watchdog keeps a %d ms lease alive for 4 leases, not after"
                  : CAPS.has_ttl ? "a %d ms lease runs out under a live holder (no watchdog)"
                  : "with no TTL the key outlives any lease (%d ms)", SHORT_LEASE_MS);
    harness_status(harness_redis(), "SCRIPT FLUSH");
    harness_status(harness_redis(), "CONFIG RESETSTAT");
    a = take("A", "lease", SHORT_LEASE_MS);
    if (CAPS.watchdog) {
        assert_watchdog(a);
    } else if (CAPS.has_ttl) {
        assert_lease_runs_out(a);
    } else {
        harness_sleep_ms(2 * SHORT_LEASE_MS);
        ck_assert_msg(exists("lease") == 1, "v1 sets no TTL: expected the key to outlive any lease");
        release_ok(a, "A");
    }
    dlock_free(a);
}
END_TEST

START_TEST(test_lock_watchdog_error_hidden)
{
    const long lease = 10 * SHORT_LEASE_MS; /* a renewal every second */
    long long before;
    int64_t t0;
    dlock *a;

    harness_title("the watchdog's I/O error stays out of a later successful release's errstr");
    a = take("A", "wd-error", lease);
    before = connections_received();
    /* The handle's only connection; its last command ran a script. */
    ck_assert_msg(kill_clients_by_last_command("evalsha") + kill_clients_by_last_command("eval")
                  == 1, "expected to close exactly one connection of the handle");
    /* The watchdog's next renewal fails; the one after reconnects. */
    t0 = harness_now_ms();
    while (connections_received() == before && harness_now_ms() - t0 < 4 * lease)
        harness_sleep_ms(10);
    ck_assert_msg(connections_received() > before, "the watchdog did not reconnect within %ld ms "
                  "(4 leases) of losing its connection", 4 * lease);
    release_ok(a, "A");
    ck_assert_msg(dlock_errstr(a)[0] == '\0', "a successful release left dlock_errstr \"%s\"; "
                  "expected \"\": no call of A failed", dlock_errstr(a));
    dlock_free(a);
}
END_TEST

void lock_lease_tests(TCase *lease)
{
    tcase_add_test(lease, test_lock_lease_while_held);
}

void lock_watchdog_tests(TCase *lease)
{
    if (CAPS.watchdog)
        tcase_add_test(lease, test_lock_watchdog_error_hidden);
}
