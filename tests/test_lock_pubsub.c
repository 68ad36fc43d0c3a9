/* test_lock_pubsub: waking a waiter. A blocked waiter gets the lock soon
 * after the release, by the unlock message where the stage publishes one
 * and by polling where it does not; the message and the channel follow
 * Redisson's layout; a waiter keeps its pub/sub connection between waits,
 * and opens a new one when the server closed it. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lock_helpers.h"

/* How many clients subscribe to channel now. */
static long long subscribers(const char *channel)
{
    redisReply *r;
    long long n;

    /* A queue (v9): each waiter listens on its own "<channel>:<field>". */
    if (CAPS.queue) {
        r = redisCommand(harness_redis(), "PUBSUB CHANNELS %s:*", channel);
        ck_assert_msg(r != NULL && r->type == REDIS_REPLY_ARRAY, "PUBSUB CHANNELS failed");
        n = (long long)r->elements;
        freeReplyObject(r);
        return n;
    }
    r = redisCommand(harness_redis(), "PUBSUB NUMSUB %s", channel);
    ck_assert_msg(r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2,
                  "PUBSUB NUMSUB failed");
    n = r->element[1]->integer;
    freeReplyObject(r);
    return n;
}

/* Polls until channel has subscribers (listening = 1) or none (0), or
 * until ms have passed. Returns how many it has then. */
static long long await_subscribers(const char *channel, int listening, long ms)
{
    int64_t deadline = harness_now_ms() + ms;
    long long n;

    while (((n = subscribers(channel)) > 0) != listening && harness_now_ms() < deadline)
        harness_sleep_ms(2);
    return n;
}

/* Until the waiter listens on the unlock channel (v6), or 2 s. */
static void wait_for_subscriber(const char *channel)
{
    ck_assert_msg(await_subscribers(channel, 1, 2000) >= 1, "the waiter never subscribed to %s",
                  channel);
}

START_TEST(test_lock_waiter_wakes)
{
    attempt w = { NULL, -2, -2, 0 };
    int64_t released;
    pthread_t t;
    dlock *a;

    harness_title("a blocked waiter gets the lock soon after the release, long before the TTL");
    a = take("A", "wake", LEASE_MS);
    w.l = harness_lock(harness_server(), "wake", LEASE_MS, 5000);
    run_in_thread(&t, &w);
    if (CAPS.pubsub)
        wait_for_subscriber("redisson_lock__channel:{wake}");
    else
        harness_sleep_ms(100); /* the waiter is polling by now */
    released = harness_now_ms();
    release_ok(a, "A");
    pthread_join(t, NULL);
    ck_assert_msg(w.rc == DLOCK_OK, "expected the waiter to get the lock after A's release, got %s "
                  "(%s)", harness_result(w.rc), dlock_errstr(w.l));
    ck_assert_msg(w.done_ms - released < 1000, "the waiter got the lock %lld ms after the release; "
                  "expected well under the %d ms TTL (< 1000 ms)",
                  (long long)(w.done_ms - released), LEASE_MS);
    ck_assert_msg(w.release_rc == DLOCK_OK, "the waiter's release returned %s",
                  harness_result(w.release_rc));
    printf("  waiter woke %lld ms after the release (%s)\n", (long long)(w.done_ms - released),
           CAPS.pubsub ? "unlock message" : "polling");
    dlock_free(w.l);
    dlock_free(a);
}
END_TEST

/* Reads one pub/sub message; fails unless it is "0" on channel. */
static void expect_unlock_message(redisContext *sub, const char *channel)
{
    redisReply *r = NULL;

    ck_assert_msg(redisGetReply(sub, (void **)&r) == REDIS_OK && r != NULL,
                  "expected the unlock message on %s after the release, got none: %s",
                  channel, sub->errstr);
    ck_assert_msg(r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
                  strcmp(r->element[0]->str, "message") == 0 &&
                  strcmp(r->element[1]->str, channel) == 0 &&
                  strcmp(r->element[2]->str, "0") == 0,
                  "expected the message \"0\" on %s after the release", channel);
    freeReplyObject(r);
}

/* Releases a, and expects the unlock message on channel. */
static void release_publishes(dlock *a, const char *channel)
{
    redisContext *sub = harness_connect(harness_server());
    redisReply *r = redisCommand(sub, "SUBSCRIBE %s", channel);

    ck_assert_msg(r != NULL && r->type == REDIS_REPLY_ARRAY, "SUBSCRIBE %s failed", channel);
    freeReplyObject(r);
    release_ok(a, "A");
    expect_unlock_message(sub, channel);
    redisFree(sub);
}

START_TEST(test_lock_redisson_layout)
{
    const char *channel = "redisson_lock__channel:{orders}";
    char value[128], id[TOKEN_HEX + 1];
    dlock *a;

    harness_title("Redisson's layout: hash field <uuid>:<thread> = 1, \"0\" published on release");
    a = take("A", "orders", LEASE_MS);
    lock_value("orders", value, sizeof(value));
    ck_assert_msg(parse_owner(value, id) == (long)gettid() && strchr(value, '=') != NULL &&
                  strcmp(strchr(value, '=') + 1, "1") == 0,
                  "expected one hash field '<32 hex>:%ld' with value 1, HGETALL gives '%s'",
                  (long)gettid(), value);
    release_publishes(a, channel);
    dlock_free(a);
}
END_TEST

START_TEST(test_lock_channel_hash_tag)
{
    const char *channel = "redisson_lock__channel:{shop}:stock";
    dlock *a;

    harness_title("a name with its own hash tag keeps it: {shop}:stock publishes on %s", channel);
    a = take("A", "{shop}:stock", LEASE_MS);
    release_publishes(a, channel);
    dlock_free(a);
}
END_TEST

START_TEST(test_lock_waiter_keeps_connection)
{
    const char *channel = "redisson_lock__channel:{kept}";
    attempt w = { NULL, -2, -2, 0 };
    long long before = 0;
    pthread_t t;
    dlock *a;
    int round;

    harness_title("a waiter keeps its pub/sub connection between waits, unsubscribed");
    a = take("A", "kept", LEASE_MS);
    w.l = harness_lock(harness_server(), "kept", LEASE_MS, 5000);
    for (round = 0; round < 3; round++) {
        if (round == 1)
            before = connections_received(); /* both handles are connected */
        run_in_thread(&t, &w);
        wait_for_subscriber(channel);
        release_ok(a, "A");
        pthread_join(t, NULL);
        ck_assert_msg(w.rc == DLOCK_OK && w.release_rc == DLOCK_OK, "round %d: the waiter's "
                      "acquire and release returned %s and %s (%s)", round, harness_result(w.rc),
                      harness_result(w.release_rc), dlock_errstr(w.l));
        /* Unsubscribed once done: an idle handle gets no unlock messages.
         * A queue's waiter stays on its own channel, which only a release
         * that finds it first in the queue publishes on. */
        if (CAPS.queue)
            ck_assert_msg(subscribers(channel) == 1, "round %d: expected the waiter to stay "
                          "on its own channel of %s, found %lld", round, channel,
                          subscribers(channel));
        else
            ck_assert_msg(await_subscribers(channel, 0, 1000) == 0, "round %d: the waiter got "
                          "the lock but is still subscribed to %s a second later", round,
                          channel);
        ck_assert_msg(dlock_acquire(a) == DLOCK_OK, "round %d: A could not take the free lock "
                      "again (%s)", round, dlock_errstr(a));
    }
    ck_assert_msg(connections_received() == before, "the server accepted %lld new connections "
                  "in 2 more waits; expected 0: each wait should reuse the kept connection",
                  connections_received() - before);
    release_ok(a, "A");
    dlock_free(w.l);
    dlock_free(a);
}
END_TEST

/* One contended acquire of w, released by a; w's results must be OK. */
static void wait_for_release(attempt *w, dlock *a, const char *channel, const char *when)
{
    int subscribed;
    pthread_t t;

    run_in_thread(&t, w);
    subscribed = await_subscribers(channel, 1, 2000) > 0;
    release_ok(a, "A");
    pthread_join(t, NULL);
    ck_assert_msg(w->rc == DLOCK_OK && w->release_rc == DLOCK_OK, "%s: the waiter's acquire and "
                  "release returned %s and %s (%s); expected OK", when, harness_result(w->rc),
                  harness_result(w->release_rc), dlock_errstr(w->l));
    ck_assert_msg(subscribed, "%s: the waiter got the lock but never subscribed to %s", when,
                  channel);
}

START_TEST(test_lock_waiter_resubscribes)
{
    const char *channel = "redisson_lock__channel:{resub}";
    attempt w = { NULL, -2, -2, 0 };
    dlock *a;

    harness_title("the server closes the waiter's kept pub/sub connection: the next wait opens "
                  "a new one");
    a = take("A", "resub", LEASE_MS);
    w.l = harness_lock(harness_server(), "resub", LEASE_MS, 5000);
    wait_for_release(&w, a, channel, "the first wait");
    ck_assert_msg(await_subscribers(channel, !!CAPS.queue, 1000) == !!CAPS.queue,
                  CAPS.queue ? "the waiter left its own channel" : "the waiter is still subscribed");
    ck_assert_msg(dlock_acquire(a) == DLOCK_OK, "A could not take the free lock again (%s)",
                  dlock_errstr(a));
    /* The kept connection is the one whose last command was UNSUBSCRIBE
     * (a queue's waiter stays subscribed: SUBSCRIBE). */
    ck_assert_msg(kill_clients_by_last_command(CAPS.queue ? "subscribe" : "unsubscribe") == 1,
                  "expected to close exactly one kept pub/sub connection");
    wait_for_release(&w, a, channel, "the wait after CLIENT KILL");
    dlock_free(w.l);
    dlock_free(a);
}
END_TEST

void lock_pubsub_tests(TCase *lease)
{
    tcase_add_test(lease, test_lock_waiter_wakes);
    /* A queue publishes to its first waiter only: tests/test_queue.c. */
    if (CAPS.reentrant && !CAPS.queue) {
        tcase_add_test(lease, test_lock_redisson_layout);
        tcase_add_test(lease, test_lock_channel_hash_tag);
    }
    if (CAPS.pubsub) {
        tcase_add_test(lease, test_lock_waiter_keeps_connection);
        tcase_add_test(lease, test_lock_waiter_resubscribes);
    }
}
