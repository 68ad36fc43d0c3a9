/* test_queue: a fair queue (v9) against a real redis-server: waiters get
 * the lock in the order they asked, a release wakes one of them, one that
 * gives up leaves the queue and no key behind, and a waiter that died at
 * the head holds up the one behind it until its place runs out.
 *
 * A stage without a queue runs none of these (its suite is empty): its
 * release wakes every waiter, or none. Re-entry and the watchdog are
 * v6's, and tests/test_lock.c asserts them for every stage that has
 * them. Times are multiples of SHORT_LEASE_MS. */
#define _GNU_SOURCE
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "lock.h"
#include "tcases.h"

#define LEASE_MS 10000     /* never runs out during a test */
#define SHORT_LEASE_MS 300 /* the unit of every margin below */
#define LONG_WAIT_MS 10000 /* a budget no waiter runs out of */
#define WAITERS 3

/* One waiter in a thread: acquire, note its turn, hold, release. */
typedef struct waiter {
    dlock *l;
    atomic_int *turns;   /* shared: the next turn to hand out */
    long hold_ms;
    int rc, release_rc;
    int turn;            /* the order it got the lock in, from 0 */
} waiter;

static void *wait_in_thread(void *arg)
{
    waiter *w = arg;

    w->rc = dlock_acquire(w->l);
    if (w->rc != DLOCK_OK)
        return NULL;
    w->turn = atomic_fetch_add(w->turns, 1);
    harness_sleep_ms(w->hold_ms);
    w->release_rc = dlock_release(w->l);
    return NULL;
}

static void start(pthread_t *t, waiter *w)
{
    ck_assert_msg(pthread_create(t, NULL, wait_in_thread, w) == 0, "cannot start a thread");
}

/* The queue's length; a name with its own '{' gets no braces added. */
static long long queue_length(const char *name)
{
    int tagged = strchr(name, '{') != NULL;

    return harness_int(harness_redis(), "LLEN redisson_lock_queue:%s%s%s", tagged ? "" : "{",
                       name, tagged ? "" : "}");
}

/* Until the queue of name has n waiters, or 4 short leases. */
static void await_queue(const char *name, long long n)
{
    int64_t deadline = harness_now_ms() + 4 * SHORT_LEASE_MS;

    while (queue_length(name) != n && harness_now_ms() < deadline)
        harness_sleep_ms(2);
    ck_assert_msg(queue_length(name) == n, "expected %lld waiters in the queue of '%s', "
                  "found %lld", n, name, queue_length(name));
}

/* Channels with a subscriber whose name begins with prefix. */
static long long listening(const char *prefix)
{
    redisReply *r = redisCommand(harness_redis(), "PUBSUB CHANNELS %s*", prefix);
    long long n;

    ck_assert_msg(r != NULL && r->type == REDIS_REPLY_ARRAY, "PUBSUB CHANNELS failed");
    n = (long long)r->elements;
    freeReplyObject(r);
    return n;
}

/* Until n waiters listen on their own channels of name, or 4 short leases. */
static void await_listening(const char *name, long long n)
{
    char prefix[128];
    int64_t deadline = harness_now_ms() + 4 * SHORT_LEASE_MS;

    snprintf(prefix, sizeof(prefix), "redisson_lock__channel:{%s}:", name);
    while (listening(prefix) != n && harness_now_ms() < deadline)
        harness_sleep_ms(2);
    ck_assert_msg(listening(prefix) == n, "expected %lld waiters listening on %s<field>, found "
                  "%lld", n, prefix, listening(prefix));
}

/* The scripts Redis ran since the last CONFIG RESETSTAT. */
static long long scripts_run(void)
{
    return harness_calls(harness_redis(), "evalsha") + harness_calls(harness_redis(), "eval");
}

/* Until Redis has run n scripts since the last CONFIG RESETSTAT, or 10
 * short leases: a waiter shows up on its channel before its last try
 * (listen first, then try once more), so listening alone does not say
 * that its tries are over. The test's assertions judge what came. */
static void await_scripts(long long n)
{
    int64_t deadline = harness_now_ms() + 10 * SHORT_LEASE_MS;

    while (scripts_run() < n && harness_now_ms() < deadline)
        harness_sleep_ms(2);
}

static dlock *take(const char *name)
{
    dlock *l = harness_lock(harness_server(), name, LEASE_MS, 0);
    int rc = dlock_acquire(l);

    ck_assert_msg(rc == DLOCK_OK, "expected A to take the free lock '%s', got %s (%s)", name,
                  harness_result(rc), dlock_errstr(l));
    return l;
}

static void release_ok(dlock *l)
{
    int rc = dlock_release(l);

    ck_assert_msg(rc == DLOCK_OK, "expected A's release to return OK, got %s (%s)",
                  harness_result(rc), dlock_errstr(l));
}

/* No lock, no queue, no places: nothing left behind. */
static void assert_no_keys(const char *name)
{
    long long n = harness_int(harness_redis(), "EXISTS %s redisson_lock_queue:{%s} "
                              "redisson_lock_timeout:{%s}", name, name, name);

    ck_assert_msg(n == 0, "expected no lock, queue or timeout key of '%s' left, found %lld",
                  name, n);
}

START_TEST(test_queue_order)
{
    atomic_int turns = 0;
    waiter w[WAITERS];
    pthread_t t[WAITERS];
    dlock *a;
    int i;

    harness_title("%d waiters get the lock in the order they asked", WAITERS);
    a = take("order");
    for (i = 0; i < WAITERS; i++) {
        w[i] = (waiter){ harness_lock(harness_server(), "order", LEASE_MS, LONG_WAIT_MS),
                         &turns, 10, -2, -2, -1 };
        start(&t[i], &w[i]);
        await_queue("order", i + 1);
    }
    release_ok(a);
    for (i = 0; i < WAITERS; i++)
        pthread_join(t[i], NULL);
    for (i = 0; i < WAITERS; i++) {
        ck_assert_msg(w[i].rc == DLOCK_OK && w[i].release_rc == DLOCK_OK, "waiter %d: acquire "
                      "and release returned %s and %s (%s)", i + 1, harness_result(w[i].rc),
                      harness_result(w[i].release_rc), dlock_errstr(w[i].l));
        ck_assert_msg(w[i].turn == i, "waiter %d, queued %s, got the lock in turn %d; expected "
                      "turn %d: the queue's order", i + 1, i == 0 ? "first" : "after the others",
                      w[i].turn + 1, i + 1);
        dlock_free(w[i].l);
    }
    assert_no_keys("order");
    dlock_free(a);
}
END_TEST

/* The messages a pattern subscriber got within ms; the last one's channel
 * goes to channel. */
static int messages_within(redisContext *sub, long ms, char *channel, size_t len)
{
    int64_t deadline = harness_now_ms() + ms;
    struct timeval tv = { 0, 10000 };
    redisReply *r;
    int n = 0;

    redisSetTimeout(sub, tv);
    while (harness_now_ms() < deadline) {
        r = NULL;
        if (redisGetReply(sub, (void **)&r) != REDIS_OK) {
            sub->err = 0; /* a read timeout: nothing yet */
            continue;
        }
        if (r->type == REDIS_REPLY_ARRAY && r->elements == 4 &&
            strcmp(r->element[0]->str, "pmessage") == 0) {
            n++;
            snprintf(channel, len, "%s", r->element[2]->str);
        }
        freeReplyObject(r);
    }
    return n;
}

START_TEST(test_queue_one_wakeup)
{
    char channel[160] = "", first[128];
    atomic_int turns = 0;
    waiter w[WAITERS];
    pthread_t t[WAITERS];
    redisContext *sub;
    redisReply *r;
    long long tries;
    dlock *a;
    int i, messages;

    harness_title("a release wakes one waiter: one message, one try, %d waiting", WAITERS);
    harness_status(harness_redis(), "CONFIG RESETSTAT");
    a = take("herd");
    for (i = 0; i < WAITERS; i++) {
        w[i] = (waiter){ harness_lock(harness_server(), "herd", LEASE_MS, LONG_WAIT_MS),
                         &turns, 4 * SHORT_LEASE_MS, -2, -2, -1 };
        start(&t[i], &w[i]);
        await_queue("herd", i + 1);
    }
    await_listening("herd", WAITERS);
    /* A's take, then each waiter's try and its try after it subscribed:
     * one that came late would count as a try the release woke. */
    await_scripts(1 + 2 * WAITERS);
    harness_str(harness_redis(), first, sizeof(first), "LINDEX redisson_lock_queue:{herd} 0");
    ck_assert_msg(first[0] != '\0', "no first waiter in the queue");
    sub = harness_connect(harness_server());
    r = redisCommand(sub, "PSUBSCRIBE redisson_lock__channel:{herd}*");
    ck_assert_msg(r != NULL && r->type == REDIS_REPLY_ARRAY, "PSUBSCRIBE failed");
    freeReplyObject(r);
    harness_status(harness_redis(), "CONFIG RESETSTAT");
    release_ok(a);
    /* The first waiter holds for 4 short leases: the first of them is
     * time enough for any other waiter a message woke to try. */
    messages = messages_within(sub, SHORT_LEASE_MS, channel, sizeof(channel));
    tries = scripts_run();
    ck_assert_msg(messages == 1, "A's release published %d messages; expected 1", messages);
    ck_assert_msg(strstr(channel, first) != NULL && strcmp(channel + strlen(channel) -
                  strlen(first), first) == 0, "the message went to %s; expected the first "
                  "waiter's channel, ending in %s", channel, first);
    ck_assert_msg(tries == 2, "after the release Redis ran %lld scripts; expected 2 (the "
                  "release, and the try of the one waiter it woke): every other try means a "
                  "waiter woke for nothing", tries);
    ck_assert_msg(queue_length("herd") == WAITERS - 1, "expected %d waiters still queued while "
                  "the first holds, found %lld", WAITERS - 1, queue_length("herd"));
    for (i = 0; i < WAITERS; i++)
        pthread_join(t[i], NULL);
    for (i = 0; i < WAITERS; i++) {
        ck_assert_msg(w[i].rc == DLOCK_OK && w[i].turn == i, "waiter %d: %s in turn %d; "
                      "expected OK in turn %d", i + 1, harness_result(w[i].rc), w[i].turn + 1,
                      i + 1);
        dlock_free(w[i].l);
    }
    printf("  one release: %d message, %lld scripts run\n", messages, tries);
    redisFree(sub);
    dlock_free(a);
}
END_TEST

static double place_of(const char *name, const char *field)
{
    char score[64] = "";

    harness_str(harness_redis(), score, sizeof(score), "ZSCORE redisson_lock_timeout:{%s} %s",
                name, field);
    return atof(score);
}

START_TEST(test_queue_give_up_leaves)
{
    char mid[128], last[128];
    atomic_int turns = 0;
    waiter w[WAITERS];
    pthread_t t[WAITERS];
    long budget[WAITERS] = { LONG_WAIT_MS, 2 * SHORT_LEASE_MS, LONG_WAIT_MS };
    double before, after;
    dlock *a;
    int i;

    harness_title("a waiter that gives up leaves the queue; those behind move up; no key stays");
    a = take("leave");
    for (i = 0; i < WAITERS; i++) {
        w[i] = (waiter){ harness_lock(harness_server(), "leave", LEASE_MS, budget[i]),
                         &turns, 10, -2, -2, -1 };
        start(&t[i], &w[i]);
        await_queue("leave", i + 1);
    }
    harness_str(harness_redis(), mid, sizeof(mid), "LINDEX redisson_lock_queue:{leave} 1");
    harness_str(harness_redis(), last, sizeof(last), "LINDEX redisson_lock_queue:{leave} 2");
    before = place_of("leave", last);
    pthread_join(t[1], NULL);
    ck_assert_msg(w[1].rc == DLOCK_BUSY, "the waiter with a %ld ms budget returned %s; expected "
                  "BUSY (A holds)", budget[1], harness_result(w[1].rc));
    await_queue("leave", WAITERS - 1);
    after = place_of("leave", last);
    ck_assert_msg(place_of("leave", mid) == 0, "the waiter that gave up still has a place");
    ck_assert_msg(before - after == (double)budget[1], "the place of the waiter behind moved by "
                  "%.0f ms; expected %ld, the budget of the one that left", before - after,
                  budget[1]);
    release_ok(a);
    pthread_join(t[0], NULL);
    pthread_join(t[2], NULL);
    ck_assert_msg(w[0].rc == DLOCK_OK && w[2].rc == DLOCK_OK && w[0].turn == 0 &&
                  w[2].turn == 1, "the two that stayed: %s in turn %d, %s in turn %d; expected "
                  "both OK in their order", harness_result(w[0].rc), w[0].turn + 1,
                  harness_result(w[2].rc), w[2].turn + 1);
    assert_no_keys("leave");
    for (i = 0; i < WAITERS; i++)
        dlock_free(w[i].l);
    dlock_free(a);
}
END_TEST

START_TEST(test_queue_try_once_keeps_no_place)
{
    dlock *a, *b;
    int rc;

    harness_title("a try with no budget keeps no place in the queue");
    a = take("once");
    b = harness_lock(harness_server(), "once", LEASE_MS, 0);
    rc = dlock_acquire(b);
    ck_assert_msg(rc == DLOCK_BUSY, "expected BUSY while A holds, got %s", harness_result(rc));
    ck_assert_msg(queue_length("once") == 0, "a try with no budget left %lld waiters queued",
                  queue_length("once"));
    release_ok(a);
    assert_no_keys("once");
    dlock_free(b);
    dlock_free(a);
}
END_TEST

START_TEST(test_queue_layout)
{
    atomic_int turns = 0;
    waiter w = { NULL, &turns, 10, -2, -2, -1 };
    char first[128];
    pthread_t t;
    dlock *a;

    harness_title("Redisson's fair layout: {shop}:stock queues in "
                  "redisson_lock_queue:{shop}:stock");
    a = take("{shop}:stock");
    w.l = harness_lock(harness_server(), "{shop}:stock", LEASE_MS, LONG_WAIT_MS);
    start(&t, &w);
    await_queue("{shop}:stock", 1);
    harness_str(harness_redis(), first, sizeof(first), "LINDEX redisson_lock_queue:{shop}:stock 0");
    ck_assert_msg(harness_int(harness_redis(), "ZCARD redisson_lock_timeout:{shop}:stock") == 1,
                  "expected the waiter's place in redisson_lock_timeout:{shop}:stock");
    ck_assert_msg(strchr(first, ':') != NULL && strlen(first) > 33, "the queued field is '%s'; "
                  "expected '<32 hex>:<thread id>'", first);
    release_ok(a);
    pthread_join(t, NULL);
    ck_assert_msg(w.rc == DLOCK_OK, "the waiter returned %s", harness_result(w.rc));
    ck_assert_msg(harness_int(harness_redis(), "EXISTS {shop}:stock "
                              "redisson_lock_queue:{shop}:stock "
                              "redisson_lock_timeout:{shop}:stock") == 0, "keys stayed behind");
    dlock_free(w.l);
    dlock_free(a);
}
END_TEST

/* The server's clock in ms, as the scripts read it. */
static long long server_ms(void)
{
    redisReply *r = redisCommand(harness_redis(), "TIME");
    long long ms;

    ck_assert_msg(r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2, "TIME failed");
    ms = atoll(r->element[0]->str) * 1000 + atoll(r->element[1]->str) / 1000;
    freeReplyObject(r);
    return ms;
}

START_TEST(test_queue_dead_waiter_stalls)
{
    const long place = 4 * SHORT_LEASE_MS;
    atomic_int turns = 0;
    waiter w = { NULL, &turns, 10, -2, -2, -1 };
    int64_t released;
    long waited;
    pthread_t t;
    dlock *a;

    harness_title("a dead waiter first in the queue holds up the next until its place ends "
                  "(the flaw)");
    /* A short lease: a waiter also wakes when the TTL it was told ends. */
    a = harness_lock(harness_server(), "dead", SHORT_LEASE_MS, 0);
    ck_assert_msg(dlock_acquire(a) == DLOCK_OK, "A could not take the free lock: %s",
                  dlock_errstr(a));
    /* A waiter that queued and died: a place, and nobody to use it. */
    harness_int(harness_redis(), "ZADD redisson_lock_timeout:{dead} %lld dead:1",
                server_ms() + place);
    harness_int(harness_redis(), "RPUSH redisson_lock_queue:{dead} dead:1");
    w.l = harness_lock(harness_server(), "dead", LEASE_MS, LONG_WAIT_MS);
    start(&t, &w);
    await_queue("dead", 2);
    released = harness_now_ms();
    release_ok(a);
    pthread_join(t, NULL);
    waited = (long)(harness_now_ms() - released);
    ck_assert_msg(w.rc == DLOCK_OK, "the live waiter returned %s; expected OK once the dead "
                  "one's place ran out", harness_result(w.rc));
    ck_assert_msg(waited >= place - 2 * SHORT_LEASE_MS, "the live waiter got the free lock %ld "
                  "ms after the release; expected it to wait for the dead waiter's place "
                  "(%ld ms from its queueing)", waited, place);
    ck_assert_msg(waited < place + 2 * SHORT_LEASE_MS, "the live waiter got the lock %ld ms "
                  "after the release; expected it soon after the dead waiter's place (%ld ms) "
                  "ran out", waited, place);
    printf("  the live waiter waited %ld ms for a dead one's place of %ld ms\n", waited, place);
    assert_no_keys("dead");
    dlock_free(w.l);
    dlock_free(a);
}
END_TEST

Suite *queue_suite(void)
{
    const TTest *tests[] = {
        test_queue_order, test_queue_one_wakeup, test_queue_give_up_leaves,
        test_queue_try_once_keeps_no_place, test_queue_layout, test_queue_dead_waiter_stalls,
    };
    Suite *s = suite_create("queue");

    /* v11's queue is ZooKeeper's, with tests of its own (test_zk_queue.c). */
    if (CAPS.queue && !STAGE_ZOOKEEPER)
        ADD_TESTS(harness_servers_tcase(s, "fair queue", 30), tests);
    return s;
}
