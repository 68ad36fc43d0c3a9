/* fleet: the client processes of one run, with the control block and the
 * history they share. The one owner of their lives, for the scenario
 * runner and the bench alike:
 *
 *   create  the control block and the history, as files in a directory
 *   spawn   one process of the stage's client program per client
 *   ready   wait until every client is up and waits for its start flag
 *   go      a client's start flag (or all of them)
 *   poll    reap the clients that ended, report the ones that stopped
 *   stop    the stop flag, then wait until every client has exited
 *   end     kill and reap what still runs, unmap, remove the files
 *
 * The caller fills the control block between create and spawn (the lock,
 * the lease, the ports, each client's plan): the clients read it at
 * start-up. A client that exits with a status other than 0, or dies of a
 * signal other than SIGKILL (a crash is a fault the scenario may inject),
 * breaks the run.
 *
 * Errors, hiredis-style: 0 (or a count) or -1 with one line of reason in
 * errstr. */
#ifndef SIM_FLEET_H
#define SIM_FLEET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "control.h"
#include "history.h"

typedef struct sim_fleet {
    sim_control *ctl;                      /* shared with the clients */
    sim_history *h;                        /* the run's journal, shared too */
    char ctl_path[SIM_CONTROL_PATH_LEN];   /* removed by sim_fleet_end */
    char h_path[SIM_CONTROL_PATH_LEN];
    int n;                                 /* clients A.. */
    pid_t pid[SIM_CLIENTS_MAX];            /* 0 before the spawn and once reaped */
} sim_fleet;

/* Makes dir/<name>.control and dir/<name>.history, zeroed and mapped,
 * for n clients; the control block names the history. 0, or -1 with
 * errstr (sim_fleet_end cleans up either way). */
int sim_fleet_create(sim_fleet *f, const char *dir, const char *name, int n,
                     char *errstr, size_t len);

/* Starts program (a stage's build/vN/client) once per client; client i
 * gets failpoints[i] as its DLOCK_FAILPOINTS (failpoints or an entry
 * NULL: none). 0, or -1 with errstr. */
int sim_fleet_spawn(sim_fleet *f, const char *program,
                    const char *const *failpoints, char *errstr, size_t len);

/* Waits until every client is ready: program start-up (slow under the
 * sanitizers) never eats into a scenario's margins or a bench's window.
 * 0, or -1 with errstr (a client ended first, or timeout_ms passed). */
int sim_fleet_ready(sim_fleet *f, long timeout_ms, char *errstr, size_t len);

/* Sets client's start flag. */
void sim_fleet_go(sim_fleet *f, int client);

/* Sets every start flag; returns when (CLOCK_MONOTONIC ns). */
int64_t sim_fleet_go_all(sim_fleet *f);

/* Checks every live client without blocking and reaps the ones that
 * ended (their phase DONE). stopped (SIM_CLIENTS_MAX entries, or NULL)
 * gets 1 for each client just seen stopped. Returns how many clients
 * still run, or -1 with errstr when one broke the run. */
int sim_fleet_poll(sim_fleet *f, int *stopped, char *errstr, size_t len);

/* Sets the stop flag and waits until every client has exited on its own.
 * 0, or -1 with errstr (a client broke, or timeout_ms passed). */
int sim_fleet_stop(sim_fleet *f, long timeout_ms, char *errstr, size_t len);

/* Kills and reaps what still runs, unmaps, removes the files.
 * Idempotent; safe on a zeroed fleet. */
void sim_fleet_end(sim_fleet *f);

#endif
