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

#endif
