/* proc: the life of the simulator's child processes, and the registry of
 * every child it has not reaped yet.
 *
 * A child is forked with PR_SET_PDEATHSIG, so it dies with the process
 * that forked it even when that one is SIGKILLed, and it joins a registry
 * that sim_proc_cleanup empties: kill and reap. sim_proc_cleanup_on_signal
 * runs that cleanup on SIGINT, SIGTERM and SIGHUP, before the handler
 * already installed (the cluster's, which also removes the temp dirs), so
 * Ctrl-C leaves nothing behind. A registry entry belongs to the process
 * that made it: a forked child never kills its parent's children.
 *
 * Users: the fleet (client processes), the observer (a fork of the
 * simulator), the pool (one process per cell of the matrix), and the
 * servers (server.c forks and execs them itself, and registers them here).
 *
 * Errors, hiredis-style: -1 with one line of reason in the caller's
 * errstr. */
#ifndef SIM_PROC_H
#define SIM_PROC_H

#include <stddef.h>
#include <sys/types.h>

/* How a child is doing, from sim_proc_poll. */
typedef enum sim_proc_state {
    SIM_PROC_RUNNING,
    SIM_PROC_STOPPED, /* just stopped (SIGSTOP); reported once per stop */
    SIM_PROC_EXITED,  /* exited by itself; *status has the exit code */
    SIM_PROC_KILLED   /* killed by a signal; *status has the signal */
} sim_proc_state;

/* Forks a tracked child that dies with us. Returns 0 in the child, the
 * child's pid in the parent, or -1 with errstr. */
pid_t sim_proc_fork(char *errstr, size_t len);

/* Forks and execs program with argv and envp. Returns the pid, or -1
 * with errstr (also when program is not executable). */
pid_t sim_proc_spawn(const char *program, char *const argv[],
                     char *const envp[], char *errstr, size_t len);

/* Checks on a child without blocking, and reaps it when it has ended. */
sim_proc_state sim_proc_poll(pid_t pid, int *status);

/* SIGKILL and reap; for the end of a run and its error paths. pid <= 0:
 * nothing to do. */
void sim_proc_kill(pid_t pid);

/* Registers a child forked elsewhere (a server), so the cleanup kills it;
 * -1 when the registry is full. Untrack it before killing and reaping it
 * yourself. */
int sim_proc_track(pid_t pid);
void sim_proc_untrack(pid_t pid);

/* Kills and reaps every child this process started and has not reaped.
 * Async-signal-safe. */
void sim_proc_cleanup(void);

/* Puts a handler for SIGINT, SIGTERM and SIGHUP in front of the one
 * installed now: it kills and reaps our children first, then runs that
 * one. Call after sim_cluster_cleanup_on_signal. */
void sim_proc_cleanup_on_signal(void);

#endif
