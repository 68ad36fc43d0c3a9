/* failpoint: the simulator's strong dlock_failpoint, the nemesis's hand
 * inside a client.
 *
 * Each stage calls dlock_failpoint("<step>") at named protocol steps and
 * defines it as a weak no-op. Linking failpoint.c replaces it with one that
 * performs the action armed for that step in the environment:
 *
 *   DLOCK_FAILPOINTS='release.after_get=stop(900),acquire.after_setnx=crash'
 *
 * Actions: stop(ms) stops the whole process (every thread, like a GC pause
 * or SIGSTOP) for ms; sleep(ms) delays only the calling thread; crash is
 * SIGKILL of the process itself. A step fires its action every time it is
 * reached. Inside the simulator the failpoint records what it does in the
 * history and the nemesis resumes a stopped client; any other program
 * linked with a stage and this file is resumed by a small forked helper. */
#ifndef SIM_FAILPOINT_H
#define SIM_FAILPOINT_H

#include <stddef.h>

#include "control.h"
#include "history.h"

#define SIM_FAILPOINT_ENV "DLOCK_FAILPOINTS"
#define SIM_FAILPOINT_MAX 8 /* armed steps at once */

/* Checks an arming string; 0, or -1 with errstr naming what is wrong.
 * dlock_failpoint ignores an arming this rejects. */
int sim_failpoint_check(const char *spec, char *errstr, size_t len);

/* Inside the simulator: where the failpoint records, and the control
 * block through which the nemesis resumes a stop. Call before the stage
 * runs; ctl and h outlive every later failpoint. */
void sim_failpoint_attach(sim_history *h, sim_control *ctl, int client);

/* The strong definition of the stages' hook (lock.h). */
void dlock_failpoint(const char *name);

#endif
