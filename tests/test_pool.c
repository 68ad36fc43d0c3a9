/* test_pool: jobs in processes of their own, some at a time (sim/pool).
 * No Redis: the jobs are small functions, and the tests check what the
 * parent gets back, in which order, and what a failure looks like. */
#define _GNU_SOURCE
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pool.h"
#include "tcases.h"

#define JOBS 10

typedef struct result {
    long square;      /* the job's number, squared */
    pid_t pid;        /* the process that ran it */
} result;

static size_t told;   /* the last "done" the progress callback heard */

static void heard(size_t done, size_t total, void *arg)
{
    (void)arg;
    ck_assert_msg(done > told && done <= total,
                  "progress said %zu of %zu after %zu", done, total, told);
    told = done;
}

/* Job i squares i; the later jobs are quicker, so they finish first. */
static int square(size_t i, void *out, void *arg, char *errstr, size_t len)
{
    result *r = out;

    (void)arg;
    (void)errstr;
    (void)len;
    usleep((useconds_t)(JOBS - i) * 2000);
    r->square = (long)(i * i);
    r->pid = getpid();
    return 0;
}

/* Job 3 fails with a reason; job 5 dies of a signal. */
static int breaks(size_t i, void *out, void *arg, char *errstr, size_t len)
{
    const int *which = arg;

    if ((int)i == *which && i == 3) {
        snprintf(errstr, len, "job 3 says no");
        return -1;
    }
    if ((int)i == *which && i == 5)
        raise(SIGKILL);
    return square(i, out, NULL, errstr, len);
}

START_TEST(test_pool_results_in_job_order)
{
    result r[JOBS];
    char why[256] = "";
    size_t failed = 0, i, j;

    told = 0;
    memset(r, 0, sizeof(r));
    ck_assert_msg(sim_pool_run(JOBS, 3, sizeof(r[0]), square, heard, NULL, r, &failed,
                               why, sizeof(why)) == 0,
                  "10 jobs that cannot fail failed: %s", why);
    ck_assert_msg(told == JOBS, "progress heard of %zu jobs done; expected %d", told, JOBS);
    for (i = 0; i < JOBS; i++) {
        ck_assert_msg(r[i].square == (long)(i * i),
                      "result %zu holds %ld; expected job %zu's own, %zu", i, r[i].square,
                      i, i * i);
        ck_assert_msg(r[i].pid != getpid(), "job %zu ran in the parent", i);
        for (j = 0; j < i; j++)
            ck_assert_msg(r[i].pid != r[j].pid, "jobs %zu and %zu shared a process", j, i);
    }
}
END_TEST

START_TEST(test_pool_failure_says_which_and_why)
{
    result r[JOBS];
    char why[256] = "";
    size_t failed = 0;
    int which = _i;

    ck_assert_msg(sim_pool_run(JOBS, 4, sizeof(r[0]), breaks, NULL, &which, r, &failed,
                               why, sizeof(why)) == -1,
                  "job %d broke, yet the pool returned success", which);
    ck_assert_msg(failed == (size_t)which, "job %d broke; the pool blamed job %zu", which,
                  failed);
    ck_assert_msg(strstr(why, which == 3 ? "job 3 says no" : "died of signal 9") != NULL,
                  "job %d broke; the pool's reason is \"%s\"", which, why);
}
END_TEST

START_TEST(test_pool_default_jobs)
{
    int jobs = sim_pool_default_jobs();

    ck_assert_msg(jobs >= 1 && jobs <= SIM_POOL_JOBS_MAX,
                  "the default is %d jobs at once; expected 1 to %d", jobs, SIM_POOL_JOBS_MAX);
}
END_TEST

Suite *pool_suite(void)
{
    const TTest *tests[] = { test_pool_results_in_job_order, test_pool_default_jobs };
    Suite *suite = suite_create("pool");
    TCase *tc = ADD_TCASE(suite, "jobs", tests);

    tcase_set_timeout(tc, 20);
    /* The failures, once for each job that breaks: 3 and 5. */
    tcase_add_loop_test(tc, test_pool_failure_says_which_and_why, 3, 4);
    tcase_add_loop_test(tc, test_pool_failure_says_which_and_why, 5, 6);
    return suite;
}
