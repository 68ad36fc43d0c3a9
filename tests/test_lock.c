/* test_lock: the contract suite, compiled against every stage.
 *
 * Every test talks to a real redis-server. Expectations come from the
 * stage's row in stages.h: where a stage lacks a capability, the test
 * asserts the flaw it keeps (v1-v3's release deletes another's lock, v2-v5
 * lose the key under a live holder, v1-v5 deadlock on themselves). */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "harness.h"

#ifndef SRCDIR
#define SRCDIR "." /* the repository root; make passes its own */
#endif

#define LEASE_MS 10000     /* never runs out during a test */
#define SHORT_LEASE_MS 300 /* for tests about the lease: margins are multiples of it */
#define BUDGET_MS 300      /* a waiter's wait budget */
#define RETRY_MS 2         /* harness_config's retry */
#define CLIENTS 8          /* the contention test: processes ... */
#define ROUNDS 50          /* ... times increments each */
#define TOKEN_HEX 32       /* 128 random bits in hex */
#define THREADS 4          /* the shared-handle test: threads ... */
#define THREAD_ROUNDS 200  /* ... times increments each, all on one handle */

/* ---- verbs ---------------------------------------------------------------- */

/* Client who takes the free lock name; fails the test if it cannot. */
static dlock *take(const char *who, const char *name, long lease_ms)
{
    dlock *l = harness_lock(harness_server(), name, lease_ms, 0);
    int rc = dlock_acquire(l);

    ck_assert_msg(rc == DLOCK_OK, "expected client %s to take the free lock '%s', got %s (%s)",
                  who, name, harness_result(rc), dlock_errstr(l));
    return l;
}

static void release_ok(dlock *l, const char *who)
{
    int rc = dlock_release(l);

    ck_assert_msg(rc == DLOCK_OK, "expected client %s's release to return OK, got %s (%s)",
                  who, harness_result(rc), dlock_errstr(l));
}

/* On how many of the tcase's nodes key exists. */
static int nodes_with(const char *key)
{
    int i, n = 0;

    for (i = 0; i < harness_nodes(); i++)
        n += harness_int(harness_node_redis(i), "EXISTS %s", key) == 1;
    return n;
}

/* 1 when key exists on the tcase's nodes, 0 when it does not; a key on
 * some nodes only (v8) fails the test: a lock is on all or none. */
static long long exists(const char *key)
{
    int n = nodes_with(key);

    ck_assert_msg(n == 0 || n == harness_nodes(), "the key '%s' is on %d of the %d nodes; "
                  "expected all of them or none", key, n, harness_nodes());
    return n > 0;
}

/* What the lock key holds, as one string: the value of a string key,
 * "field=value" of a hash (v6), "" when there is no key. */
static void lock_value(const char *key, char *out, size_t len)
{
    redisContext *c = harness_redis();
    char type[16];
    redisReply *r;

    harness_str(c, type, sizeof(type), "TYPE %s", key);
    out[0] = '\0';
    if (strcmp(type, "string") == 0) {
        harness_str(c, out, len, "GET %s", key);
    } else if (strcmp(type, "hash") == 0) {
        r = redisCommand(c, "HGETALL %s", key);
        ck_assert_msg(r != NULL && r->type == REDIS_REPLY_ARRAY, "HGETALL %s failed", key);
        if (r->elements == 2)
            snprintf(out, len, "%s=%s", r->element[0]->str, r->element[1]->str);
        else
            snprintf(out, len, "(%zu hash fields)", r->elements / 2);
        freeReplyObject(r);
    }
}

/* An owner is 32 lowercase hex digits, ':' and a thread id. Copies the hex
 * part to id (33 bytes) and returns the thread id, or -1 if malformed. */
static long parse_owner(const char *owner, char *id)
{
    char *end;
    long tid;
    int i;

    for (i = 0; i < TOKEN_HEX; i++)
        if (!isxdigit((unsigned char)owner[i]) || isupper((unsigned char)owner[i]))
            return -1;
    if (owner[TOKEN_HEX] != ':' || !isdigit((unsigned char)owner[TOKEN_HEX + 1]))
        return -1;
    tid = strtol(owner + TOKEN_HEX + 1, &end, 10);
    if (*end != '\0' && *end != '=')
        return -1;
    memcpy(id, owner, TOKEN_HEX);
    id[TOKEN_HEX] = '\0';
    return tid;
}

/* A thread that calls dlock_acquire on a handle, and releases when asked. */
typedef struct attempt {
    dlock *l;
    int rc;              /* acquire's result */
    int release_rc;      /* release's result, when rc was OK */
    int64_t done_ms;     /* when acquire returned */
} attempt;

static void *acquire_in_thread(void *arg)
{
    attempt *a = arg;

    a->rc = dlock_acquire(a->l);
    a->done_ms = harness_now_ms();
    if (a->rc == DLOCK_OK)
        a->release_rc = dlock_release(a->l);
    return NULL;
}

static void run_in_thread(pthread_t *t, attempt *a)
{
    ck_assert_msg(pthread_create(t, NULL, acquire_in_thread, a) == 0,
                  "cannot start a thread");
}

/* ---- basics ---------------------------------------------------------------- */

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
    dlock *a, *b;
    int rc;

    harness_title("a second client's try returns BUSY while the lock is held");
    a = take("A", "held", LEASE_MS);
    b = harness_lock(harness_server(), "held", LEASE_MS, 0);
    rc = dlock_acquire(b);
    ck_assert_msg(rc == DLOCK_BUSY, "expected BUSY while A holds the lock, got %s (%s)",
                  harness_result(rc), dlock_errstr(b));
    release_ok(a, "A");
    dlock_free(b);
    dlock_free(a);
}
END_TEST

START_TEST(test_lock_wait_budget)
{
    dlock *a, *b;
    int64_t t0, waited;
    int rc;

    harness_title("a waiter gives up after about its %d ms budget", BUDGET_MS);
    a = take("A", "budget", LEASE_MS);
    b = harness_lock(harness_server(), "budget", LEASE_MS, BUDGET_MS);
    t0 = harness_now_ms();
    rc = dlock_acquire(b);
    waited = harness_now_ms() - t0;
    ck_assert_msg(rc == DLOCK_BUSY, "expected BUSY once the %d ms budget ran out, got %s (%s)",
                  BUDGET_MS, harness_result(rc), dlock_errstr(b));
    /* Loose on purpose: at least the budget less one retry, and nowhere
     * near "forever". */
    ck_assert_msg(waited >= BUDGET_MS - RETRY_MS && waited < BUDGET_MS + 2000,
                  "acquire with a %d ms budget returned BUSY after %lld ms; expected about %d ms",
                  BUDGET_MS, (long long)waited, BUDGET_MS);
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

/* ---- reentrancy ---------------------------------------------------------------- */

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

/* ---- ownership ---------------------------------------------------------------- */

START_TEST(test_lock_release_by_non_owner)
{
    char before[128], after[128];
    dlock *a, *b;
    int rc;

    harness_title(CAPS.owner_check ? "release by a non-owner returns NOT_OWNER, the key untouched"
                                   : "release by a non-owner deletes the holder's lock (the flaw)");
    a = take("A", "owned", LEASE_MS);
    lock_value("owned", before, sizeof(before));
    b = harness_lock(harness_server(), "owned", LEASE_MS, 0);
    rc = dlock_release(b); /* B never acquired */
    lock_value("owned", after, sizeof(after));
    if (CAPS.owner_check) {
        ck_assert_msg(rc == DLOCK_NOT_OWNER, "expected NOT_OWNER for B's release of A's lock, "
                      "got %s (%s)", harness_result(rc), dlock_errstr(b));
        ck_assert_msg(strcmp(before, after) == 0, "B's release changed A's key from '%s' to '%s'; "
                      "expected it untouched", before, after);
        release_ok(a, "A");
    } else {
        ck_assert_msg(rc == DLOCK_OK, "expected B's bare DEL to return OK, got %s (%s)",
                      harness_result(rc), dlock_errstr(b));
        ck_assert_msg(after[0] == '\0', "v%d's release is a bare DEL: expected it to delete A's "
                      "lock (the flaw), but the key still holds '%s'", CAPS.stage, after);
    }
    dlock_free(b);
    dlock_free(a);
}
END_TEST

/* The owner stored by a handle that holds lock name, parsed. */
static long owner_of(const char *name, char *id)
{
    char value[128];
    long tid;

    lock_value(name, value, sizeof(value));
    tid = parse_owner(value, id);
    ck_assert_msg(tid >= 0, "expected the owner '<32 hex digits>:<thread id>' in '%s', got '%s'",
                  name, value);
    return tid;
}

START_TEST(test_lock_owner_token)
{
    char value[128], id_a[TOKEN_HEX + 1], id_b[TOKEN_HEX + 1];
    dlock *a, *b;

    harness_title(CAPS.owner_check ? "the key names its owner: 128 random bits and the thread"
                                   : "the key stores \"1\": it cannot tell whose lock it is");
    a = take("A", "token-a", LEASE_MS);
    if (!CAPS.owner_check) {
        lock_value("token-a", value, sizeof(value));
        ck_assert_msg(strcmp(value, "1") == 0, "v%d stores no owner: expected the value \"1\", "
                      "got \"%s\"", CAPS.stage, value);
    } else {
        b = take("B", "token-b", LEASE_MS);
        ck_assert_msg(owner_of("token-a", id_a) == (long)gettid(),
                      "expected the thread id after ':' to be the acquiring thread's (%ld)",
                      (long)gettid());
        owner_of("token-b", id_b);
        ck_assert_msg(strcmp(id_a, id_b) != 0, "two handles drew the same id %s; expected 128 "
                      "fresh random bits each", id_a);
        release_ok(b, "B");
        dlock_free(b);
    }
    release_ok(a, "A");
    dlock_free(a);
}
END_TEST

START_TEST(test_lock_noscript_fallback)
{
    dlock *a;
    int i;

    harness_title("release still works after SCRIPT FLUSH (EVALSHA, then EVAL on NOSCRIPT)");
    a = take("A", "flush", LEASE_MS);
    release_ok(a, "A"); /* the script is now cached */
    ck_assert_msg(dlock_acquire(a) == DLOCK_OK, "A could not take the lock again: %s",
                  dlock_errstr(a));
    for (i = 0; i < harness_nodes(); i++)
        harness_status(harness_node_redis(i), "SCRIPT FLUSH");
    release_ok(a, "A");
    ck_assert_msg(exists("flush") == 0, "expected no key after the release that followed SCRIPT FLUSH");
    dlock_free(a);
}
END_TEST

START_TEST(test_lock_script_sha)
{
    int scripts = CAPS.reentrant ? 3 : 1; /* v6: lock, unlock, renew */
    long evals, shas;
    dlock *a;
    int i;

    harness_title("after SCRIPT FLUSH each script is sent whole at most once (its SHA is right)");
    harness_status(harness_redis(), "SCRIPT FLUSH");
    harness_status(harness_redis(), "CONFIG RESETSTAT");
    a = harness_lock(harness_server(), "sha", LEASE_MS, 0);
    for (i = 0; i < 6; i++) {
        ck_assert_msg(dlock_acquire(a) == DLOCK_OK, "acquire %d failed: %s", i + 1, dlock_errstr(a));
        release_ok(a, "A");
    }
    evals = harness_calls(harness_redis(), "eval");
    shas = harness_calls(harness_redis(), "evalsha");
    ck_assert_msg(evals <= scripts, "6 acquire/release pairs sent EVAL %ld times; expected at most "
                  "%d (one NOSCRIPT fallback per script): is the built-in SHA the SHA1 of the "
                  "script's text?", evals, scripts);
    ck_assert_msg(shas >= 6, "expected at least 6 EVALSHA calls for 6 releases, Redis counted %ld",
                  shas);
    dlock_free(a);
}
END_TEST

/* ---- the lease ------------------------------------------------------------------ */

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

/* How many clients subscribe to channel now. */
static long long subscribers(const char *channel)
{
    redisReply *r = redisCommand(harness_redis(), "PUBSUB NUMSUB %s", channel);
    long long n;

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

/* Connections the server has accepted since it started. */
static long long connections_received(void)
{
    char value[32], err[HARNESS_ERRSTR_LEN];

    ck_assert_msg(sim_server_info_field(harness_redis(), "stats", "total_connections_received",
                                        value, sizeof(value), err, sizeof(err)) == 0, "%s", err);
    return atoll(value);
}

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
        /* Unsubscribed once done: an idle handle gets no unlock messages. */
        ck_assert_msg(await_subscribers(channel, 0, 1000) == 0, "round %d: the waiter got the "
                      "lock but is still subscribed to %s a second later", round, channel);
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

/* Closes, from the server's side (CLIENT KILL), every connection whose
 * last command was cmd. Returns how many it closed. */
static int kill_clients_by_last_command(const char *cmd)
{
    char want[64];
    const char *line;
    redisReply *r;
    int killed = 0;
    long long id;

    snprintf(want, sizeof(want), " cmd=%s ", cmd);
    r = redisCommand(harness_redis(), "CLIENT LIST");
    ck_assert_msg(r != NULL && r->type == REDIS_REPLY_STRING, "CLIENT LIST failed");
    for (line = r->str; line != NULL && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        const char *end = strchr(line, '\n');
        const char *hit = strstr(line, want);

        if (hit == NULL || (end != NULL && hit > end) || sscanf(line, "id=%lld", &id) != 1)
            continue;
        killed += harness_int(harness_redis(), "CLIENT KILL ID %lld", id) == 1;
    }
    freeReplyObject(r);
    return killed;
}

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
    ck_assert_msg(await_subscribers(channel, 0, 1000) == 0, "the waiter is still subscribed");
    ck_assert_msg(dlock_acquire(a) == DLOCK_OK, "A could not take the free lock again (%s)",
                  dlock_errstr(a));
    /* The kept connection is the one whose last command was UNSUBSCRIBE. */
    ck_assert_msg(kill_clients_by_last_command("unsubscribe") == 1, "expected to close exactly "
                  "one kept pub/sub connection");
    wait_for_release(&w, a, channel, "the wait after CLIENT KILL");
    dlock_free(w.l);
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

/* ---- contention -------------------------------------------------------------- */

/* One client process: rounds read-modify-writes of the counter under the
 * lock. Returns an exit status: 0, or which step failed. */
static int contend(const sim_server *s, int rounds)
{
    char err[HARNESS_ERRSTR_LEN];
    redisContext *c = sim_server_connect(s, 2000, err, sizeof(err));
    dlock_config cfg;
    redisReply *r;
    dlock *l;
    int i, status = 0;

    harness_config(&cfg, s, 30000, 30000);
    l = dlock_new("counter-lock", &cfg);
    if (c == NULL || l == NULL)
        return 2;
    for (i = 0; i < rounds && status == 0; i++) {
        long long n = 0;

        if (dlock_acquire(l) != DLOCK_OK) {
            status = 3;
            break;
        }
        r = redisCommand(c, "GET counter");
        if (r != NULL && r->type == REDIS_REPLY_STRING)
            n = atoll(r->str);
        freeReplyObject(r);
        r = redisCommand(c, "SET counter %lld", n + 1);
        freeReplyObject(r);
        if (dlock_release(l) != DLOCK_OK)
            status = 4;
    }
    dlock_free(l);
    redisFree(c);
    return status;
}

START_TEST(test_lock_counter_contention)
{
    static const char *const why[] = { "", "", "could not connect", "acquire failed",
                                       "release failed" };
    pid_t pids[CLIENTS];
    long long counter;
    char value[32];
    int i, status;

    harness_title("%d client processes x %d locked increments: the counter ends at %d",
                  CLIENTS, ROUNDS, CLIENTS * ROUNDS);
    fflush(stdout);
    for (i = 0; i < CLIENTS; i++) {
        pids[i] = fork();
        ck_assert_msg(pids[i] >= 0, "fork: %s", strerror(errno));
        if (pids[i] == 0)
            _exit(contend(harness_server(), ROUNDS));
    }
    for (i = 0; i < CLIENTS; i++) {
        ck_assert_msg(waitpid(pids[i], &status, 0) == pids[i], "waitpid failed");
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                      "client %d ended with status %d (%s)", i, status,
                      WIFEXITED(status) && WEXITSTATUS(status) < 5 ? why[WEXITSTATUS(status)]
                                                                   : "killed");
    }
    harness_str(harness_redis(), value, sizeof(value), "GET counter");
    counter = atoll(value);
    ck_assert_msg(counter == CLIENTS * ROUNDS, "%d clients x %d increments under the lock left the "
                  "counter at %lld; expected %d (an update was lost: two holders at once)",
                  CLIENTS, ROUNDS, counter, CLIENTS * ROUNDS);
}
END_TEST

/* ---- threads sharing one handle ------------------------------------------------ */

/* What the threads of test_lock_shared_handle share: the handle, and a
 * counter they increment under the lock by a read, a yield and a write,
 * so that two holders at once lose an update. */
typedef struct shared {
    dlock *l;
    atomic_long counter;
    atomic_int inside;       /* threads inside the critical section now */
    atomic_int overlaps;     /* entries that found another thread inside */
    atomic_int errors;       /* acquires or releases that did not return OK */
    pthread_mutex_t mu;      /* guards first_error */
    char first_error[256];   /* the first failed call, in words */
} shared;

static void shared_failed(shared *sh, const char *call, int rc)
{
    pthread_mutex_lock(&sh->mu);
    if (atomic_fetch_add(&sh->errors, 1) == 0)
        snprintf(sh->first_error, sizeof(sh->first_error), "%s returned %s (%s)", call,
                 harness_result(rc), dlock_errstr(sh->l));
    pthread_mutex_unlock(&sh->mu);
}

static void *increment_rounds(void *arg)
{
    shared *sh = arg;
    long n;
    int i, rc;

    for (i = 0; i < THREAD_ROUNDS; i++) {
        if ((rc = dlock_acquire(sh->l)) != DLOCK_OK) {
            shared_failed(sh, "acquire", rc);
            return NULL;
        }
        if (atomic_fetch_add(&sh->inside, 1) != 0)
            atomic_fetch_add(&sh->overlaps, 1);
        n = atomic_load(&sh->counter);
        sched_yield(); /* a second holder now would read the same n */
        atomic_store(&sh->counter, n + 1);
        atomic_fetch_sub(&sh->inside, 1);
        if ((rc = dlock_release(sh->l)) != DLOCK_OK) {
            shared_failed(sh, "release", rc);
            return NULL;
        }
    }
    return NULL;
}

START_TEST(test_lock_shared_handle)
{
    pthread_t t[THREADS];
    shared sh;
    int i;

    harness_title("%d threads share one handle, %d locked increments each: the counter ends "
                  "at %d", THREADS, THREAD_ROUNDS, THREADS * THREAD_ROUNDS);
    memset(&sh, 0, sizeof(sh));
    pthread_mutex_init(&sh.mu, NULL);
    sh.l = harness_lock(harness_server(), "shared", LEASE_MS, 30000);
    for (i = 0; i < THREADS; i++)
        ck_assert_msg(pthread_create(&t[i], NULL, increment_rounds, &sh) == 0,
                      "cannot start a thread");
    for (i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    ck_assert_msg(atomic_load(&sh.errors) == 0, "%d of the threads' calls on the shared handle "
                  "failed, the first: %s; expected none", atomic_load(&sh.errors), sh.first_error);
    ck_assert_msg(atomic_load(&sh.overlaps) == 0, "two threads of the shared handle were inside "
                  "at once %d times; expected at most one holder", atomic_load(&sh.overlaps));
    ck_assert_msg(atomic_load(&sh.counter) == THREADS * THREAD_ROUNDS, "%d threads x %d locked "
                  "increments left the counter at %ld; expected %d", THREADS, THREAD_ROUNDS,
                  atomic_load(&sh.counter), THREADS * THREAD_ROUNDS);
    ck_assert_msg(exists("shared") == 0, "the key is still there after the last release");
    pthread_mutex_destroy(&sh.mu);
    dlock_free(sh.l);
}
END_TEST

/* ---- errors --------------------------------------------------------------------- */

/* An error result with a reason, not a crash or a hang. */
static void assert_error(dlock *l, int rc, const char *call, const char *situation)
{
    ck_assert_msg(rc == DLOCK_ERR, "expected %s to return ERR %s, got %s", call, situation,
                  harness_result(rc));
    ck_assert_msg(dlock_errstr(l)[0] != '\0', "%s returned ERR %s with an empty errstr; expected "
                  "a reason", call, situation);
    printf("  %s %s: \"%s\"\n", call, situation, dlock_errstr(l));
}

/* A port where connections are refused: bound by us, so nobody else can
 * listen there, but not listening. Returns the socket; *port gets it. */
static int refusing_port(int *port)
{
    struct sockaddr_in a;
    socklen_t alen = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_msg(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
                  getsockname(fd, (struct sockaddr *)&a, &alen) == 0,
                  "cannot reserve a port: %s", strerror(errno));
    *port = ntohs(a.sin_port);
    return fd;
}

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
    cfg.connect = connect_current;
    cfg.connect_arg = &current;
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
    cfg.connect = connect_no_pexpire;
    cfg.connect_arg = (void *)harness_server();
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

/* ---- a majority of independent nodes (v8) ------------------------------------- */

/* The tcase's nodes as a config sees them: the ones marked down are an
 * address where nothing listens (a crashed server), and every connection
 * has timeout_ms on connect and on each command. */
typedef struct view {
    int down[SIM_NODES_MAX];
    sim_server nobody;      /* the address of every node that is down */
    int fd;                 /* holds nobody's port */
    long timeout_ms;
} view;

static redisContext *connect_view(void *arg, int node, char *errstr, size_t errlen)
{
    const view *v = arg;

    return sim_server_connect(v->down[node] ? &v->nobody : harness_node(node), v->timeout_ms,
                              errstr, errlen);
}

/* A handle on the view, with a lease and a node timeout of its own. */
static dlock *view_lock(view *v, const char *name, long lease_ms, long node_timeout_ms)
{
    dlock_config cfg;
    dlock *l;

    harness_config(&cfg, harness_server(), lease_ms, 0);
    cfg.connect = connect_view;
    cfg.connect_arg = v;
    cfg.node_timeout_ms = node_timeout_ms;
    l = dlock_new(name, &cfg);
    ck_assert_msg(l != NULL, "dlock_new returned NULL");
    return l;
}

static void view_init(view *v, long timeout_ms)
{
    memset(v, 0, sizeof(*v));
    v->fd = refusing_port(&v->nobody.port);
    v->timeout_ms = timeout_ms;
}

static void view_done(view *v, dlock *l)
{
    dlock_free(l);
    close(v->fd);
}

/* acquire returned ERR saying why (word is in its reason), and left no
 * key on any node: a try that failed gives back what it took. */
static void assert_refused(dlock *l, int rc, const char *key, const char *word,
                           const char *why)
{
    ck_assert_msg(rc == DLOCK_ERR && strstr(dlock_errstr(l), word) != NULL, "expected ERR %s, "
                  "got %s (%s)", why, harness_result(rc), dlock_errstr(l));
    printf("  acquire: \"%s\"\n", dlock_errstr(l));
    ck_assert_msg(nodes_with(key) == 0, "the refused acquire left the key '%s' on %d nodes; "
                  "expected it deleted again wherever it was set", key, nodes_with(key));
}

/* SIGSTOP or SIGCONT to node i's redis-server: a stalled node, alive but
 * silent, its socket still accepting what we send. */
static void signal_node(int i, int sig)
{
    ck_assert_msg(kill(harness_node(i)->pid, sig) == 0, "cannot signal node %d: %s", i,
                  strerror(errno));
}

START_TEST(test_lock_quorum_two_down)
{
    view v;
    dlock *l;
    int rc;

    harness_title("two of five nodes down: three still make a majority, and take the lock");
    view_init(&v, 1000);
    v.down[3] = v.down[4] = 1;
    l = view_lock(&v, "q-two", LEASE_MS, 1000);
    rc = dlock_acquire(l);
    ck_assert_msg(rc == DLOCK_OK, "expected OK from nodes 0, 1 and 2 with 3 and 4 down, got %s "
                  "(%s)", harness_result(rc), dlock_errstr(l));
    ck_assert_msg(nodes_with("q-two") == 3, "the key is on %d nodes; expected the 3 that are up",
                  nodes_with("q-two"));
    release_ok(l, "A");
    ck_assert_msg(nodes_with("q-two") == 0, "the key is left on %d nodes after the release",
                  nodes_with("q-two"));
    view_done(&v, l);
}
END_TEST

START_TEST(test_lock_quorum_three_down)
{
    view v;
    dlock *l;
    int rc;

    harness_title("three of five nodes down: two are no majority; ERR, and no key left behind");
    view_init(&v, 1000);
    v.down[2] = v.down[3] = v.down[4] = 1;
    l = view_lock(&v, "q-three", LEASE_MS, 1000);
    rc = dlock_acquire(l);
    assert_refused(l, rc, "q-three", "majority", "naming the majority with 3 of 5 nodes down");
    view_done(&v, l);
}
END_TEST

/* Sends SIGCONT to a node after a while, from a thread. */
typedef struct wake {
    int node;
    long after_ms;
} wake;

static void *wake_node(void *arg)
{
    const wake *w = arg;

    harness_sleep_ms(w->after_ms);
    kill(harness_node(w->node)->pid, SIGCONT);
    return NULL;
}

START_TEST(test_lock_validity_spent)
{
    wake w = { 2, 2 * SHORT_LEASE_MS };
    pthread_t t;
    view v;
    dlock *l;
    int rc;

    harness_title("the majority's last vote comes after the %d ms lease: ERR, no key on any "
                  "node", SHORT_LEASE_MS);
    view_init(&v, 10000);
    v.down[3] = v.down[4] = 1;
    /* Node 2 holds the third vote and answers 2 leases late: the node
     * timeout (10 leases) waits for it, the lease does not. */
    l = view_lock(&v, "q-late", SHORT_LEASE_MS, 10 * SHORT_LEASE_MS);
    signal_node(2, SIGSTOP);
    ck_assert_msg(pthread_create(&t, NULL, wake_node, &w) == 0, "cannot start a thread");
    rc = dlock_acquire(l);
    pthread_join(t, NULL);
    assert_refused(l, rc, "q-late", "lease", "saying the majority came after the lease");
    view_done(&v, l);
}
END_TEST

/* Until node i holds key, or 5 s. */
static int await_key(int i, const char *key)
{
    int64_t deadline = harness_now_ms() + 5000;

    while (harness_int(harness_node_redis(i), "EXISTS %s", key) == 0) {
        if (harness_now_ms() > deadline)
            return 0;
        harness_sleep_ms(5);
    }
    return 1;
}

START_TEST(test_lock_release_every_node)
{
    view v;
    dlock *l;
    int rc;

    harness_title("node 4 stalls through the acquire and sets the key late; the release "
                  "deletes it there too");
    view_init(&v, 1000);
    l = view_lock(&v, "q-every", LEASE_MS, 100);
    signal_node(4, SIGSTOP);
    rc = dlock_acquire(l);
    signal_node(4, SIGCONT);
    ck_assert_msg(rc == DLOCK_OK, "expected OK from 4 of 5 nodes, got %s (%s)",
                  harness_result(rc), dlock_errstr(l));
    /* Node 4 reads the SET it was sent while stopped, from the socket the
     * handle has closed: the key appears after acquire gave up on it. */
    ck_assert_msg(await_key(4, "q-every"), "node 4 never ran the SET it got while stopped");
    release_ok(l, "A");
    ck_assert_msg(nodes_with("q-every") == 0, "the release left the key on %d nodes; expected "
                  "it deleted on all 5, node 4 too", nodes_with("q-every"));
    view_done(&v, l);
}
END_TEST

START_TEST(test_lock_node_timeout)
{
    int64_t t0, took;
    view v;
    dlock *l;
    int rc;

    harness_title("a stopped node costs the 100 ms node timeout, not the 10 s command timeout");
    view_init(&v, 10000);
    l = view_lock(&v, "q-stalled", LEASE_MS, 100);
    signal_node(1, SIGSTOP);
    t0 = harness_now_ms();
    rc = dlock_acquire(l);
    took = harness_now_ms() - t0;
    signal_node(1, SIGCONT);
    ck_assert_msg(rc == DLOCK_OK, "expected OK from the 4 nodes that answer, got %s (%s)",
                  harness_result(rc), dlock_errstr(l));
    /* Loose on purpose: far above 100 ms, far below 10 s. */
    ck_assert_msg(took < 5000, "acquire took %lld ms with node 1 stopped; expected about the "
                  "100 ms node timeout, well below the 10 s command timeout", (long long)took);
    printf("  acquire returned OK after %lld ms\n", (long long)took);
    release_ok(l, "A");
    view_done(&v, l);
}
END_TEST

START_TEST(test_lock_bad_nodes)
{
    const int counts[] = { 0, -1, 16 };
    dlock_config cfg;
    dlock *l;
    int i;

    harness_title("a config of 0, -1 or 16 nodes: ERR naming the range");
    for (i = 0; i < 3; i++) {
        harness_config(&cfg, harness_server(), LEASE_MS, 0);
        cfg.nodes = counts[i];
        l = dlock_new("nodes-check", &cfg);
        ck_assert_msg(l != NULL, "dlock_new returned NULL");
        assert_error(l, dlock_acquire(l), "acquire", "for a bad node count");
        ck_assert_msg(strstr(dlock_errstr(l), "give 1 to") != NULL, "the error for %d nodes is "
                      "\"%s\"; expected it to name the range", counts[i], dlock_errstr(l));
        dlock_free(l);
    }
}
END_TEST

/* ---- fencing tokens --------------------------------------------------------- */

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

/* A tcase with its own redis-server, emptied before each test. */
static TCase *server_tcase(const char *name, int timeout_s)
{
    TCase *tc = tcase_create(name);

    tcase_add_unchecked_fixture(tc, harness_server_setup, harness_server_teardown);
    tcase_add_checked_fixture(tc, harness_test_setup, harness_test_teardown);
    tcase_set_timeout(tc, timeout_s);
    return tc;
}

/* The majority's own tests, in a stage that takes one: a tcase made
 * and not added to the suite would be leaked. */
static void add_quorum(Suite *s)
{
    TCase *quorum;

    if (!CAPS.quorum)
        return;
    quorum = server_tcase("quorum", 30);
    tcase_add_test(quorum, test_lock_quorum_two_down);
    tcase_add_test(quorum, test_lock_quorum_three_down);
    tcase_add_test(quorum, test_lock_validity_spent);
    tcase_add_test(quorum, test_lock_release_every_node);
    tcase_add_test(quorum, test_lock_node_timeout);
    tcase_add_test(quorum, test_lock_bad_nodes);
    suite_add_tcase(s, quorum);
}

/* The tests of a lock kept in Redis: a ZooKeeper stage's are in
 * tests/test_zk.c. */
static void add_redis(Suite *s)
{
    TCase *basics = server_tcase("basics", 10);
    TCase *owner = server_tcase("ownership", 10);
    TCase *lease = server_tcase("lease", 20);
    TCase *contention = server_tcase("contention", 60);
    TCase *threads = server_tcase("threads", 60);
    TCase *errors = server_tcase("errors", 20);

    tcase_add_test(basics, test_lock_acquire_release);
    tcase_add_test(basics, test_lock_busy_while_held);
    tcase_add_test(basics, test_lock_wait_budget);
    tcase_add_test(basics, test_lock_acquire_after_release);
    tcase_add_test(basics, test_lock_ttl);
    tcase_add_test(basics, test_lock_acquire_commands);
    tcase_add_test(basics, test_lock_reentry);
    tcase_add_test(owner, test_lock_release_by_non_owner);
    tcase_add_test(owner, test_lock_owner_token);
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
    if (CAPS.script_release) {
        tcase_add_test(owner, test_lock_noscript_fallback);
        tcase_add_test(owner, test_lock_script_sha);
    }
    tcase_add_test(lease, test_lock_lease_while_held);
    tcase_add_test(lease, test_lock_waiter_wakes);
    if (CAPS.reentrant) {
        tcase_add_test(lease, test_lock_redisson_layout);
        tcase_add_test(lease, test_lock_channel_hash_tag);
    }
    if (CAPS.pubsub) {
        tcase_add_test(lease, test_lock_waiter_keeps_connection);
        tcase_add_test(lease, test_lock_waiter_resubscribes);
    }
    if (CAPS.watchdog)
        tcase_add_test(lease, test_lock_watchdog_error_hidden);
    tcase_add_test(contention, test_lock_counter_contention);
    tcase_add_test(threads, test_lock_shared_handle);
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
    suite_add_tcase(s, basics);
    suite_add_tcase(s, owner);
    suite_add_tcase(s, lease);
    suite_add_tcase(s, contention);
    suite_add_tcase(s, threads);
    suite_add_tcase(s, errors);
    add_quorum(s);
}

Suite *lock_suite(void)
{
    Suite *s = suite_create("lock");
    TCase *contract = tcase_create("contract");

    if (!STAGE_ZOOKEEPER)
        add_redis(s);
    tcase_add_checked_fixture(contract, harness_test_setup, harness_test_teardown);
    tcase_add_test(contract, test_lock_header_identical);
    suite_add_tcase(s, contract);
    return s;
}
