/* pool: independent jobs, each in a process of its own, some at a time.
 *
 * The cells of the fault matrix share nothing (each starts its own
 * servers on its own ports in its own temp dir) and spend most of their
 * time sleeping through leases, so they can run side by side. A job runs
 * in a forked child (sim_proc_fork: it dies with us, and Ctrl-C kills it)
 * and writes its result into a slot of shared memory; the parent starts
 * the next job as one ends and hands back every result in job order,
 * whatever order the jobs finished in.
 *
 * Errors, hiredis-style: 0, or -1 with one line of reason in errstr, the
 * failed job's own reason when it gave one. */
#ifndef SIM_POOL_H
#define SIM_POOL_H

#include <stddef.h>

#define SIM_POOL_JOBS_MAX 16  /* jobs at once: each a run's dozen processes */

/* One job, in the child: fills result (size bytes, zeroed) and returns 0,
 * or -1 with errstr. It must not print, and must leave no process and no
 * file behind but what it hands back. */
typedef int (*sim_pool_job)(size_t job, void *result, void *arg,
                            char *errstr, size_t len);

/* Told in the parent each time a job ends well: done of total. */
typedef void (*sim_pool_progress)(size_t done, size_t total, void *arg);

/* How many jobs to run at once when the user does not say: a few per CPU,
 * since a job mostly sleeps. */
int sim_pool_default_jobs(void);

/* Runs jobs 0..n-1, at most `jobs` at a time, and copies job i's result
 * into results + i * size. progress may be NULL. After a failure no new
 * job starts, the running ones are killed, *failed says which job failed,
 * and -1 is returned. */
int sim_pool_run(size_t n, int jobs, size_t size, sim_pool_job job,
                 sim_pool_progress progress, void *arg, void *results,
                 size_t *failed, char *errstr, size_t len);

#endif
