/* rundir: the temp dir of a test binary that starts servers, with a
 * stage (build/vN/tests, through tests/harness.c) or without one
 * (build/test_servers).
 *
 * Every server the tests start lives in it. The cleanup of sim/servers'
 * cluster module kills them and removes it at exit and on Ctrl-C, as it
 * does for the simulator; it only acts on what the process that set it
 * up started, so a test process that exits leaves the runner's servers
 * alone. */
#ifndef LOCKSTEP_RUNDIR_H
#define LOCKSTEP_RUNDIR_H

/* Makes the run's temp dir and arranges its removal, with every server,
 * at exit and on SIGINT/SIGTERM; stdout goes out a line at a time. Call
 * first in main; exits on failure. */
void rundir_init(void);

/* The run's temp dir. */
const char *rundir_path(void);

/* ---- Ctrl-C leaves nothing behind ----------------------------------------- */

#include <sys/types.h>

#include "tempdir.h"

#define RUNDIR_MAX_PIDS 8 /* the most servers such a test starts: a cluster's six */

/* What a test's child started: its servers' pids (0 past the last) and
 * the temp dir they live in. */
typedef struct rundir_started {
    pid_t pid[RUNDIR_MAX_PIDS];
    char dir[SIM_PATH_LEN];
} rundir_started;

/* Whether a process with this pid runs. A zombie does not: it holds no
 * port, no file and no memory, and when it is reaped is up to init. */
int rundir_alive(pid_t pid);

/* Forks a child that runs start(fd): start starts servers, writes what it
 * started (a rundir_started) to fd and waits for a signal, which the
 * simulator's own handler gets (as in build/sim/sim), not Check's.
 * Returns the child once it told; fails the test, naming what (its
 * servers), when it could not. */
pid_t rundir_start_child(void (*start)(int fd), rundir_started *st, const char *what);

/* Sends the child SIGINT and reaps it: it must die of it, and the
 * signal's cleanup must leave none of its servers (each named what) and
 * not its temp dir. */
void rundir_interrupt(pid_t child, const rundir_started *st, const char *what);

#endif
