/* drivers/lock.c: the lock of a library, run in another process, behind
 * the contract of lock.h (docs/drivers.md).
 *
 * The simulator's client is linked with this file instead of a stage's
 * lock.c (build/drivers/client): everything the client records (the
 * history, the resource's reads and writes, the wait budget's events)
 * stays the client's, and only dlock_acquire and dlock_release cross a
 * pipe to the driver, a short program in the library's own language:
 *
 *   -> acquire        <- ok [token] | busy | error <text>
 *   -> release        <- ok | not-owner | error <text>
 *
 * The driver is the `run:` line of driver.conf in the folder
 * LOCKSTEP_DRIVER_DIR (set by build/lib-<name>/client, the script that
 * starts this client for one library), one command that /bin/sh execs
 * there, with the config in its environment
 * (LOCKSTEP_HOST, _PORT, _NODES, _LOCK, _LEASE_MS, _WAIT_MS, _RETRY_MS,
 * _TIMEOUT_MS); it says `ready` once it is connected. It closes when its
 * input does.
 *
 * The client makes itself the leader of a process group that the driver
 * joins, so that the nemesis's SIGSTOP and SIGKILL reach both: a paused
 * client pauses the library's threads too (its pings, its watchdog), as
 * a stage's own threads pause with the client. The driver also dies with
 * the client (PDEATHSIG), whoever kills it. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lock.h"

#define LINE_LEN 512

struct dlock {
    dlock_config cfg;
    pid_t pid;              /* the driver */
    FILE *to, *from;        /* its stdin, its stdout */
    long long token;        /* the last acquire's token; 0: none */
    char errstr[DLOCK_ERRSTR_LEN];
};

void dlock_config_init(dlock_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->lease_ms = 10000;
    cfg->retry_ms = 10;
    cfg->nodes = 1;
    cfg->node_timeout_ms = 50;
    cfg->host = "127.0.0.1";
    cfg->port = 6379;
    cfg->timeout_ms = 1000;
}

__attribute__((weak)) void dlock_failpoint(const char *name)
{
    (void)name;
}

static void put_env(const char *name, long value)
{
    char buf[32];

    snprintf(buf, sizeof(buf), "%ld", value);
    setenv(name, buf, 1);
}

/* The run: line of dir/driver.conf into cmd; -1 when there is none. */
static int driver_command(const char *dir, char *cmd, size_t len)
{
    char path[LINE_LEN], line[LINE_LEN];
    FILE *f;
    int rc = -1;

    snprintf(path, sizeof(path), "%s/driver.conf", dir);
    if ((f = fopen(path, "r")) == NULL)
        return -1;
    while (rc != 0 && fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, "run:", 4) == 0) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(cmd, len, "%s", line + 4 + strspn(line + 4, " "));
            rc = 0;
        }
    }
    fclose(f);
    return rc;
}

/* In the child: the config into the environment, then the driver. */
static void exec_driver(const char *name, const dlock_config *cfg, int in, int out)
{
    const char *dir = getenv("LOCKSTEP_DRIVER_DIR");
    char cmd[LINE_LEN], line[LINE_LEN + 8];

    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (dup2(in, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0)
        _exit(127);
    setenv("LOCKSTEP_HOST", cfg->host != NULL ? cfg->host : "127.0.0.1", 1);
    setenv("LOCKSTEP_LOCK", name, 1);
    put_env("LOCKSTEP_PORT", cfg->port);
    put_env("LOCKSTEP_NODES", cfg->nodes);
    put_env("LOCKSTEP_LEASE_MS", cfg->lease_ms);
    put_env("LOCKSTEP_WAIT_MS", cfg->wait_ms);
    put_env("LOCKSTEP_RETRY_MS", cfg->retry_ms);
    put_env("LOCKSTEP_TIMEOUT_MS", cfg->timeout_ms);
    if (cfg->password != NULL)
        setenv("LOCKSTEP_PASSWORD", cfg->password, 1);
    if (driver_command(dir, cmd, sizeof(cmd)) != 0 || chdir(dir) != 0) {
        fprintf(stderr, "driver: no run: line in %s/driver.conf\n", dir);
        _exit(127);
    }
    /* exec: the shell becomes the driver, which keeps PDEATHSIG (a
     * process the shell forked would outlive us). */
    snprintf(line, sizeof(line), "exec %s", cmd);
    execl("/bin/sh", "sh", "-c", line, (char *)NULL);
    fprintf(stderr, "driver: /bin/sh: %s\n", strerror(errno));
    _exit(127);
}

/* One line of the driver's, without its newline; -1 when it closed. */
static int read_line(dlock *l, char *line, size_t len)
{
    size_t n;

    if (fgets(line, (int)len, l->from) == NULL)
        return -1;
    n = strcspn(line, "\n");
    line[n] = '\0';
    return 0;
}

static int start(dlock *l, const char *name)
{
    int in[2], out[2];
    char line[LINE_LEN];

    if (pipe(in) != 0 || pipe(out) != 0)
        return -1;
    setpgid(0, 0); /* the client leads the group the driver joins */
    if ((l->pid = fork()) < 0)
        return -1;
    if (l->pid == 0) {
        close(in[1]);
        close(out[0]);
        exec_driver(name, &l->cfg, in[0], out[1]);
    }
    close(in[0]);
    close(out[1]);
    l->to = fdopen(in[1], "w");
    l->from = fdopen(out[0], "r");
    if (l->to == NULL || l->from == NULL)
        return -1;
    if (read_line(l, line, sizeof(line)) != 0 || strcmp(line, "ready") != 0) {
        fprintf(stderr, "driver: the driver in %s did not say ready (it said \"%s\"): "
                "its error is above\n", getenv("LOCKSTEP_DRIVER_DIR"), feof(l->from) ? "nothing" : line);
        return -1;
    }
    return 0;
}

dlock *dlock_new(const char *name, const dlock_config *cfg)
{
    dlock *l;

    if (name == NULL || cfg == NULL || getenv("LOCKSTEP_DRIVER_DIR") == NULL)
        return NULL;
    if ((l = calloc(1, sizeof(*l))) == NULL)
        return NULL;
    l->cfg = *cfg; /* the driver gets the host's copy at its start */
    l->pid = -1;
    if (start(l, name) != 0) {
        dlock_free(l);
        return NULL;
    }
    l->cfg.host = NULL; /* the caller's string, not ours to keep */
    l->cfg.provider = NULL;
    return l;
}

/* Sends a command and reads its answer: "ok", "busy", "not-owner" map to
 * their codes, "error <text>" and a dead driver to DLOCK_ERR. */
static int call(dlock *l, const char *cmd)
{
    char line[LINE_LEN];

    l->errstr[0] = '\0';
    if (fprintf(l->to, "%s\n", cmd) < 0 || fflush(l->to) != 0 ||
        read_line(l, line, sizeof(line)) != 0) {
        snprintf(l->errstr, sizeof(l->errstr), "the driver exited (its error is on stderr)");
        return DLOCK_ERR;
    }
    if (strcmp(line, "ok") == 0 || strncmp(line, "ok ", 3) == 0) {
        l->token = line[2] == ' ' ? atoll(line + 3) : 0;
        return DLOCK_OK;
    }
    if (strcmp(line, "busy") == 0)
        return DLOCK_BUSY;
    if (strcmp(line, "not-owner") == 0)
        return DLOCK_NOT_OWNER;
    /* The error's text, cut to one line of errstr. */
    snprintf(l->errstr, sizeof(l->errstr), "%.*s", DLOCK_ERRSTR_LEN - 1,
             strncmp(line, "error ", 6) == 0 ? line + 6 : line);
    return DLOCK_ERR;
}

int dlock_acquire(dlock *l)
{
    int rc = call(l, "acquire");

    if (rc != DLOCK_OK)
        l->token = 0;
    return rc;
}

int dlock_release(dlock *l)
{
    return call(l, "release");
}

long long dlock_token(dlock *l)
{
    return l != NULL ? l->token : 0;
}

const char *dlock_errstr(const dlock *l)
{
    return l != NULL ? l->errstr : "";
}

/* The driver ends when its input closes: a library's close (a session's
 * end) runs as it does for a program that exits. */
void dlock_free(dlock *l)
{
    if (l == NULL)
        return;
    if (l->to != NULL)
        fclose(l->to);
    if (l->from != NULL)
        fclose(l->from);
    if (l->pid > 0)
        waitpid(l->pid, NULL, 0);
    free(l);
}
