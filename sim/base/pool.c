/* pool: jobs in processes of their own, some at a time. See pool.h. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "pool.h"
#include "proc.h"
#include "util.h"

#define POLL_US 2000      /* how often the parent looks at its children */
#define JOBS_PER_CPU 3    /* a cell sleeps through most of its leases */
#define ALIGN 16          /* results start aligned for any field */

/* A job's slot in shared memory: its state, its reason, then its result. */
typedef struct slot {
    int state;            /* 0: not done; 1: done; -1: failed */
    char errstr[512];
} slot;

typedef struct pool {
    size_t n, size, stride;
    char *shared;          /* n slots of stride bytes */
    int places;            /* jobs at once */
    pid_t pid[SIM_POOL_JOBS_MAX]; /* each place's child; 0 = free */
    size_t job[SIM_POOL_JOBS_MAX]; /* and its job */
} pool;

static size_t round_up(size_t x)
{
    return (x + ALIGN - 1) / ALIGN * ALIGN;
}

static slot *slot_of(const pool *p, size_t job)
{
    return (slot *)(p->shared + job * p->stride);
}

static void *result_of(const pool *p, size_t job)
{
    return p->shared + job * p->stride + round_up(sizeof(slot));
}

int sim_pool_default_jobs(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    long jobs = (cpus > 0 ? cpus : 1) * JOBS_PER_CPU;

    return jobs > SIM_POOL_JOBS_MAX ? SIM_POOL_JOBS_MAX : (int)jobs;
}

/* Job j in a new child at place k. In the child: the job, then _exit,
 * which leaves our stdio buffers and atexit handlers to us. */
static int start(pool *p, int k, size_t j, sim_pool_job fn, void *arg,
                 char *errstr, size_t len)
{
    slot *s = slot_of(p, j);
    pid_t pid;
    int rc;

    fflush(NULL);
    if ((pid = sim_proc_fork(errstr, len)) < 0)
        return -1;
    if (pid == 0) {
        rc = fn(j, result_of(p, j), arg, s->errstr, sizeof(s->errstr));
        s->state = rc == 0 ? 1 : -1;
        _exit(rc == 0 ? 0 : 1);
    }
    p->pid[k] = pid;
    p->job[k] = j;
    return 0;
}

/* Place k's child: 1 while it runs, 0 when it ended well, -1 with errstr
 * when it failed. */
static int check(pool *p, int k, char *errstr, size_t len)
{
    int status = 0;
    sim_proc_state st = sim_proc_poll(p->pid[k], &status);
    const slot *s = slot_of(p, p->job[k]);

    if (st == SIM_PROC_RUNNING || st == SIM_PROC_STOPPED)
        return 1;
    p->pid[k] = 0;
    if (st == SIM_PROC_EXITED && status == 0 && s->state == 1)
        return 0;
    if (s->state == -1)
        return sim_error(errstr, len, "%s", s->errstr);
    if (st == SIM_PROC_KILLED)
        return sim_error(errstr, len, "its process died of signal %d (%s)", status,
                         strsignal(status));
    return sim_error(errstr, len, "its process exited with status %d", status);
}

/* Starts jobs into the free places, then reaps what ended. The number of
 * jobs that ended well in this round, or -1 with *failed and errstr. */
static int round_of(pool *p, size_t *next, sim_pool_job fn, void *arg,
                    size_t *failed, char *errstr, size_t len)
{
    int k, r, done = 0;

    for (k = 0; k < p->places && *next < p->n; k++) {
        if (p->pid[k] != 0)
            continue;
        if (start(p, k, *next, fn, arg, errstr, len) != 0) {
            *failed = *next;
            return -1;
        }
        ++*next;
    }
    for (k = 0; k < p->places; k++) {
        if (p->pid[k] == 0)
            continue;
        *failed = p->job[k];
        if ((r = check(p, k, errstr, len)) < 0)
            return -1;
        done += r == 0;
    }
    return done;
}

static int play(pool *p, sim_pool_job fn, sim_pool_progress progress, void *arg,
                size_t *failed, char *errstr, size_t len)
{
    size_t next = 0, done = 0;
    int r;

    while (done < p->n) {
        if ((r = round_of(p, &next, fn, arg, failed, errstr, len)) < 0)
            return -1;
        done += (size_t)r;
        if (r > 0 && progress != NULL)
            progress(done, p->n, arg);
        if (done < p->n)
            sim_sleep_us(POLL_US);
    }
    return 0;
}

int sim_pool_run(size_t n, int jobs, size_t size, sim_pool_job fn,
                 sim_pool_progress progress, void *arg, void *results,
                 size_t *failed, char *errstr, size_t len)
{
    pool p;
    size_t i;
    int k, rc;

    memset(&p, 0, sizeof(p));
    p.n = n;
    p.size = size;
    p.stride = round_up(sizeof(slot)) + round_up(size);
    p.places = jobs < 1 ? 1 : jobs > SIM_POOL_JOBS_MAX ? SIM_POOL_JOBS_MAX : jobs;
    if (n == 0)
        return 0;
    p.shared = mmap(NULL, n * p.stride, PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p.shared == MAP_FAILED)
        return sim_error(errstr, len, "mmap for %zu results: out of memory", n);
    rc = play(&p, fn, progress, arg, failed, errstr, len);
    for (k = 0; k < p.places; k++)
        sim_proc_kill(p.pid[k]);
    for (i = 0; rc == 0 && i < n; i++)
        memcpy((char *)results + i * size, result_of(&p, i), size);
    munmap(p.shared, n * p.stride);
    return rc;
}
