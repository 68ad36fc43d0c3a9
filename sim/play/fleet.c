/* fleet: the client processes of a run and what they share. See fleet.h. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fleet.h"
#include "proc.h"
#include "util.h"

#define ENV_FAILPOINTS "DLOCK_FAILPOINTS"
#define ENV_MAX 256      /* environment entries passed on to a client */
#define FP_ENTRY_LEN 256 /* "DLOCK_FAILPOINTS=..." */
#define POLL_US 2000     /* how often ready and stop look at the clients */

extern char **environ;

/* "A", "B", ... for error messages. */
static const char *letter(int client, char buf[2])
{
    buf[0] = (char)('A' + client);
    buf[1] = '\0';
    return buf;
}

int sim_fleet_create(sim_fleet *f, const char *dir, const char *name, int n,
                     char *errstr, size_t len)
{
    memset(f, 0, sizeof(*f));
    if (n < 1 || n > SIM_CLIENTS_MAX)
        return sim_error(errstr, len, "a fleet has 1 to %d clients, not %d",
                         SIM_CLIENTS_MAX, n);
    f->n = n;
    if ((size_t)snprintf(f->h_path, sizeof(f->h_path), "%s/%s.history", dir, name) >=
            sizeof(f->h_path) ||
        (size_t)snprintf(f->ctl_path, sizeof(f->ctl_path), "%s/%s.control", dir, name) >=
            sizeof(f->ctl_path))
        return sim_error(errstr, len, "dir name too long: %s", dir);
    if ((f->h = sim_history_create(f->h_path, errstr, len)) == NULL ||
        (f->ctl = sim_control_create(f->ctl_path, errstr, len)) == NULL)
        return -1;
    snprintf(f->ctl->history_path, sizeof(f->ctl->history_path), "%s", f->h_path);
    f->ctl->nclients = n;
    return 0;
}

/* ---- spawning -------------------------------------------------------------------- */

/* The simulator's environment, with DLOCK_FAILPOINTS replaced by this
 * client's own arming (or removed), so one client's fault never leaks into
 * another. Built before the fork: the child only execs. */
static int client_env(char **env, size_t max, char *fp_entry, size_t fp_len,
                      const char *failpoints)
{
    size_t n = 0, i;
    size_t name_len = strlen(ENV_FAILPOINTS);

    for (i = 0; environ[i] != NULL && n + 2 < max; i++) {
        if (strncmp(environ[i], ENV_FAILPOINTS, name_len) == 0 &&
            environ[i][name_len] == '=')
            continue;
        env[n++] = environ[i];
    }
    if (failpoints != NULL && failpoints[0] != '\0') {
        if ((size_t)snprintf(fp_entry, fp_len, "%s=%s", ENV_FAILPOINTS,
                             failpoints) >= fp_len)
            return -1;
        env[n++] = fp_entry;
    }
    env[n] = NULL;
    return 0;
}

/* client <control-file> <index>, with its own failpoints. */
static pid_t spawn_one(sim_fleet *f, const char *program, int client,
                       const char *failpoints, char *errstr, size_t len)
{
    char *env[ENV_MAX], fp_entry[FP_ENTRY_LEN], index[16];
    char *argv[] = { (char *)program, f->ctl_path, index, NULL };

    snprintf(index, sizeof(index), "%d", client);
    if (client_env(env, ENV_MAX, fp_entry, sizeof(fp_entry), failpoints) != 0)
        return sim_error(errstr, len, "failpoint arming too long: %s", failpoints);
    return sim_proc_spawn(program, argv, env, errstr, len);
}

int sim_fleet_spawn(sim_fleet *f, const char *program,
                    const char *const *failpoints, char *errstr, size_t len)
{
    int i;

    for (i = 0; i < f->n; i++) {
        f->pid[i] = spawn_one(f, program, i, failpoints != NULL ? failpoints[i] : NULL,
                              errstr, len);
        if (f->pid[i] < 0) {
            f->pid[i] = 0;
            return -1;
        }
    }
    return 0;
}

/* ---- watching ---------------------------------------------------------------------- */

/* A client that ended: fine when it exited 0 or was SIGKILLed (a crash,
 * by the nemesis or its own failpoint); anything else broke the run. */
static int reap(sim_fleet *f, int i, sim_proc_state st, int status,
                char *errstr, size_t len)
{
    char name[2];

    f->pid[i] = 0;
    sim_control_reach(f->ctl, i, SIM_PHASE_DONE);
    if (st == SIM_PROC_EXITED && status != 0)
        return sim_error(errstr, len, "client %s exited with status %d (its error is above)",
                         letter(i, name), status);
    if (st == SIM_PROC_KILLED && status != SIGKILL)
        return sim_error(errstr, len, "client %s died of signal %d (%s)",
                         letter(i, name), status, strsignal(status));
    return 0;
}

int sim_fleet_poll(sim_fleet *f, int *stopped, char *errstr, size_t len)
{
    int i, status = 0, running = 0;

    for (i = 0; i < f->n; i++) {
        sim_proc_state st;

        if (f->pid[i] == 0)
            continue;
        st = sim_proc_poll(f->pid[i], &status);
        if (st == SIM_PROC_STOPPED && stopped != NULL)
            stopped[i] = 1;
        if (st == SIM_PROC_RUNNING || st == SIM_PROC_STOPPED)
            running++;
        else if (reap(f, i, st, status, errstr, len) != 0)
            return -1;
    }
    return running;
}

static int all_ready(const sim_fleet *f)
{
    int i;

    for (i = 0; i < f->n; i++) {
        if (sim_control_reached(f->ctl, i, SIM_PHASE_READY) == 0)
            return 0;
    }
    return 1;
}

int sim_fleet_ready(sim_fleet *f, long timeout_ms, char *errstr, size_t len)
{
    int64_t start = sim_now_ns();
    int running;

    while (!all_ready(f)) {
        if ((running = sim_fleet_poll(f, NULL, errstr, len)) < 0)
            return -1;
        if (running < f->n)
            return sim_error(errstr, len, "a client ended before it was ready");
        if ((sim_now_ns() - start) / 1000000 > timeout_ms)
            return sim_error(errstr, len, "clients not ready after %ld ms", timeout_ms);
        sim_sleep_us(POLL_US);
    }
    return 0;
}

void sim_fleet_go(sim_fleet *f, int client)
{
    atomic_store(&f->ctl->client[client].go, 1);
}

int64_t sim_fleet_go_all(sim_fleet *f)
{
    int i;

    for (i = 0; i < f->n; i++)
        sim_fleet_go(f, i);
    return sim_now_ns();
}

int sim_fleet_stop(sim_fleet *f, long timeout_ms, char *errstr, size_t len)
{
    int64_t start = sim_now_ns();
    int running;

    atomic_store(&f->ctl->stop, 1);
    while ((running = sim_fleet_poll(f, NULL, errstr, len)) != 0) {
        if (running < 0)
            return -1;
        if ((sim_now_ns() - start) / 1000000 > timeout_ms)
            return sim_error(errstr, len, "%d client%s still running %ld ms after the stop",
                             running, running == 1 ? "" : "s", timeout_ms);
        sim_sleep_us(POLL_US);
    }
    return 0;
}

void sim_fleet_end(sim_fleet *f)
{
    int i;

    if (f->ctl != NULL)
        atomic_store(&f->ctl->stop, 1);
    for (i = 0; i < f->n; i++) {
        sim_proc_kill(f->pid[i]);
        f->pid[i] = 0;
    }
    sim_control_close(f->ctl);
    sim_history_close(f->h);
    f->ctl = NULL;
    f->h = NULL;
    if (f->ctl_path[0])
        unlink(f->ctl_path);
    if (f->h_path[0])
        unlink(f->h_path);
    f->ctl_path[0] = f->h_path[0] = '\0';
}
