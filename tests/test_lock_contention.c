/* test_lock_contention: many at once. Client processes, and threads that
 * share one handle, increment a counter under the lock: it ends at the sum
 * of their increments only if no two ever held the lock together. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "lock_helpers.h"

#define CLIENTS 8          /* the contention test: processes ... */
#define ROUNDS 50          /* ... times increments each */
#define THREADS 4          /* the shared-handle test: threads ... */
#define THREAD_ROUNDS 200  /* ... times increments each, all on one handle */

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

void lock_contention_tests(TCase *contention)
{
    tcase_add_test(contention, test_lock_counter_contention);
}

void lock_threads_tests(TCase *threads)
{
    tcase_add_test(threads, test_lock_shared_handle);
}
