/* test_lock_reentry: the holder's thread acquires the lock it holds. A
 * reentrant stage counts the holds, and others wait for as many releases;
 * any other deadlocks on itself: its second acquire waits for its own
 * key. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "lock_helpers.h"

/* v1-v5: the holder's own second acquire waits for itself. */
static void assert_not_reentrant(dlock *a)
{
    int rc = dlock_acquire(a);

    ck_assert_msg(rc == DLOCK_BUSY, "v%d is not reentrant: expected the holder's second "
                  "acquire to return BUSY (it waits for itself), got %s", CAPS.stage,
                  harness_result(rc));
    ck_assert_msg(exists("reentry") == 1, "the holder's second acquire removed the key");
}

/* Another thread of the same handle tries once (the handle's wait is 0). */
static int try_in_other_thread(dlock *a)
{
    attempt at = { a, -2, -2, 0 };
    pthread_t t;

    run_in_thread(&t, &at);
    pthread_join(t, NULL);
    return at.rc;
}

static void assert_busy(dlock *l, const char *who, const char *when)
{
    int rc = dlock_acquire(l);

    ck_assert_msg(rc == DLOCK_BUSY, "expected BUSY for %s %s, got %s (%s)", who, when,
                  harness_result(rc), dlock_errstr(l));
}

START_TEST(test_lock_reentry)
{
    char field[128], count[16];
    dlock *a, *c;

    harness_title(CAPS.reentrant ? "the holder's thread acquires twice, others wait for both releases"
                                 : "the holder's thread cannot acquire again (self-deadlock)");
    a = take("A", "reentry", LEASE_MS);
    if (!CAPS.reentrant) {
        assert_not_reentrant(a);
        release_ok(a, "A");
        dlock_free(a);
        return;
    }
    ck_assert_msg(dlock_acquire(a) == DLOCK_OK, "expected the holder's thread to take the lock "
                  "again (reentrant), got %s", dlock_errstr(a));
    lock_value("reentry", field, sizeof(field));
    snprintf(count, sizeof(count), "%s", strchr(field, '=') ? strchr(field, '=') + 1 : "");
    ck_assert_msg(strcmp(count, "2") == 0, "expected the hold count 2 after two acquires, the hash "
                  "holds '%s'", field);
    ck_assert_msg(try_in_other_thread(a) == DLOCK_BUSY,
                  "expected BUSY for another thread of the same handle while A's thread holds it");
    c = harness_lock(harness_server(), "reentry", LEASE_MS, 0);
    assert_busy(c, "client C", "while A holds the lock twice");
    release_ok(a, "A");
    assert_busy(c, "client C", "after A's first of two releases");
    release_ok(a, "A");
    ck_assert_msg(exists("reentry") == 0, "expected no key after A's second release");
    ck_assert_msg(dlock_acquire(c) == DLOCK_OK, "expected C to take the lock after A's second "
                  "release: %s", dlock_errstr(c));
    release_ok(c, "C");
    dlock_free(c);
    dlock_free(a);
}
END_TEST

void lock_reentry_tests(TCase *basics)
{
    tcase_add_test(basics, test_lock_reentry);
}
