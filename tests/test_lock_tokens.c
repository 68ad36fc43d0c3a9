/* test_lock_tokens: fencing tokens. Each acquisition draws a higher number
 * from the lock's counter, re-entry included, kept until the last release;
 * dlock_token is 0 for a thread that holds nothing, and in a stage without
 * tokens; a counter that holds no number fails the acquire, which then
 * takes no lock. */
#define _GNU_SOURCE
#include <stdlib.h>

#include "lock_helpers.h"

/* dlock_token of a handle, asserted: what the calling thread's hold has. */
static void assert_token(dlock *l, long long want, const char *when)
{
    long long got = dlock_token(l);

    ck_assert_msg(got == want, "dlock_token %s returned %lld; expected %lld", when, got, want);
}

START_TEST(test_lock_token_without_hold)
{
    dlock *a;

    harness_title("dlock_token is 0 before the first acquire and after the release");
    a = harness_lock(harness_server(), "fence", LEASE_MS, 0);
    assert_token(a, 0, "before any acquire");
    ck_assert_msg(dlock_acquire(a) == DLOCK_OK, "A could not take the free lock: %s",
                  dlock_errstr(a));
    release_ok(a, "A");
    assert_token(a, 0, "after the release");
    dlock_free(a);
}
END_TEST

/* The counter a lock's tokens come from, as a number; 0 when absent. */
static long long counter(const char *key)
{
    char value[32];

    harness_str(harness_redis(), value, sizeof(value), "GET %s", key);
    return atoll(value);
}

START_TEST(test_lock_token_increases)
{
    const char *key = "redisson_lock_token:{fence}";
    long long last = 0, token;
    const char *who[] = { "A", "B", "A" };
    dlock *l[2];
    int i;

    harness_title("each holder draws a higher token from %s than the holder before", key);
    l[0] = harness_lock(harness_server(), "fence", LEASE_MS, 0);
    l[1] = harness_lock(harness_server(), "fence", LEASE_MS, 0);
    for (i = 0; i < 3; i++) {
        dlock *h = l[i % 2];

        ck_assert_msg(dlock_acquire(h) == DLOCK_OK, "client %s could not take the free lock: "
                      "%s", who[i], dlock_errstr(h));
        token = dlock_token(h);
        ck_assert_msg(token > last, "hold %d (client %s) has token %lld; expected more than "
                      "the last holder's %lld", i + 1, who[i], token, last);
        ck_assert_msg(counter(key) == token, "%s holds %lld while client %s's token is %lld; "
                      "expected the token to be the counter's new value", key, counter(key),
                      who[i], token);
        release_ok(h, who[i]);
        assert_token(h, 0, "after the release");
        last = token;
    }
    dlock_free(l[1]);
    dlock_free(l[0]);
}
END_TEST

/* dlock_token asked by another thread of the same handle. */
typedef struct token_ask {
    dlock *l;
    long long token;
} token_ask;

static void *token_in_thread(void *arg)
{
    token_ask *a = arg;

    a->token = dlock_token(a->l);
    return NULL;
}

START_TEST(test_lock_token_reentry)
{
    token_ask other = { NULL, -1 };
    long long first, second;
    pthread_t t;
    dlock *a;

    harness_title("re-entry draws a new token, kept until the last release; another thread of "
                  "the handle holds none");
    a = take("A", "fence", LEASE_MS);
    first = dlock_token(a);
    ck_assert_msg(dlock_acquire(a) == DLOCK_OK, "A's thread could not take its lock again: %s",
                  dlock_errstr(a));
    second = dlock_token(a);
    ck_assert_msg(second == first + 1, "A's re-entry has token %lld after %lld; expected %lld: "
                  "every acquisition draws one, re-entry included", second, first, first + 1);
    other.l = a;
    ck_assert_msg(pthread_create(&t, NULL, token_in_thread, &other) == 0, "cannot start a thread");
    pthread_join(t, NULL);
    ck_assert_msg(other.token == 0, "another thread of A's handle, which holds nothing, got "
                  "token %lld; expected 0", other.token);
    release_ok(a, "A");
    assert_token(a, second, "after the inner release (the resource may have seen the newer "
                 "token: the hold keeps it)");
    release_ok(a, "A");
    assert_token(a, 0, "after the outer release");
    dlock_free(a);
}
END_TEST

START_TEST(test_lock_token_counter_name)
{
    dlock *a;

    harness_title("a name with its own hash tag keeps it: {shop}:stock draws from "
                  "redisson_lock_token:{shop}:stock");
    a = take("A", "{shop}:stock", LEASE_MS);
    ck_assert_msg(counter("redisson_lock_token:{shop}:stock") == dlock_token(a),
                  "expected redisson_lock_token:{shop}:stock to hold A's token %lld, it holds "
                  "%lld", dlock_token(a), counter("redisson_lock_token:{shop}:stock"));
    ck_assert_msg(exists("redisson_lock_token:{{shop}:stock}") == 0, "the counter's name got "
                  "braces around a name that has its own hash tag");
    release_ok(a, "A");
    dlock_free(a);
}
END_TEST

START_TEST(test_lock_token_counter_broken)
{
    dlock *a;

    harness_title("a counter that is no number: acquire fails with a reason and takes no lock");
    harness_status(harness_redis(), "SET redisson_lock_token:{fence} not-a-number");
    a = harness_lock(harness_server(), "fence", LEASE_MS, 0);
    assert_error(a, dlock_acquire(a), "acquire", "when the counter holds no number");
    ck_assert_msg(exists("fence") == 0, "the failed acquire left the lock's hash behind: "
                  "the counter must be drawn before the hold is written");
    assert_token(a, 0, "after the failed acquire");
    dlock_free(a);
}
END_TEST

START_TEST(test_lock_token_none)
{
    dlock *a;

    harness_title("v%d draws no fencing tokens: dlock_token is 0 while held", CAPS.stage);
    a = take("A", "fence", LEASE_MS);
    assert_token(a, 0, "while A holds a lock of a stage without tokens");
    release_ok(a, "A");
    dlock_free(a);
}
END_TEST

void lock_token_tests(TCase *owner)
{
    tcase_add_test(owner, test_lock_token_without_hold);
    if (CAPS.token) {
        tcase_add_test(owner, test_lock_token_increases);
        tcase_add_test(owner, test_lock_token_counter_name);
        tcase_add_test(owner, test_lock_token_counter_broken);
    } else {
        tcase_add_test(owner, test_lock_token_none);
    }
    if (CAPS.token && CAPS.reentrant)
        tcase_add_test(owner, test_lock_token_reentry);
}
