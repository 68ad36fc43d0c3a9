/* test_lock_contention: many at once. Client processes, and threads that
 * share one handle, increment a counter under the lock: it ends at the sum
 * of their increments only if no two ever held the lock together. The
 * processes and threads are lock_helpers.c's, as the ZooKeeper stages'
 * are; here the counter is a Redis key. */
#include <stdlib.h>

#include "lock_helpers.h"

#define CLIENTS 8          /* the contention test: processes ... */
#define ROUNDS 50          /* ... times increments each */
#define THREADS 4          /* the shared-handle test: threads ... */
#define THREAD_ROUNDS 200  /* ... times increments each, all on one handle */

/* ---- threads on one handle: the counter is in memory ------------------------------- */

START_TEST(test_lock_shared_handle)
{
    dlock *l = harness_lock(harness_server(), "shared", LEASE_MS, 30000);

    count_in_threads(l, THREADS, THREAD_ROUNDS);
    ck_assert_msg(exists("shared") == 0, "the key is still there after the last release");
    dlock_free(l);
}
END_TEST

/* ---- client processes: the counter is a key on the tcase's server ----------------- */

static void *counter_open(void)
{
    char err[HARNESS_ERRSTR_LEN];

    return sim_server_connect(harness_server(), 2000, err, sizeof(err));
}

static void counter_close(void *conn)
{
    redisFree(conn);
}

static long long counter_get(void *conn)
{
    redisReply *r = redisCommand(conn, "GET counter");
    long long n = -1;

    if (r != NULL && r->type == REDIS_REPLY_STRING)
        n = atoll(r->str);
    else if (r != NULL && r->type == REDIS_REPLY_NIL)
        n = 0;
    freeReplyObject(r);
    return n;
}

static int counter_set(void *conn, long long n)
{
    redisReply *r = redisCommand(conn, "SET counter %lld", n);
    int ok = r != NULL && r->type == REDIS_REPLY_STATUS;

    freeReplyObject(r);
    return ok ? 0 : -1;
}

static const counter_store redis_counter = { counter_open, counter_get, counter_set,
                                             counter_close };

START_TEST(test_lock_counter_contention)
{
    count_in_processes(&redis_counter, CLIENTS, ROUNDS);
    ck_assert_msg(exists("counter-lock") == 0, "the lock's key is still there after the "
                  "clients' last release");
}
END_TEST

void lock_contention_tests(TCase *contention)
{
    tcase_add_test(contention, test_lock_counter_contention);
}

void lock_threads_tests(TCase *threads)
{
    tcase_add_test(threads, test_lock_shared_handle);
}
