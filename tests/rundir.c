/* rundir: the run's temp dir and its cleanup. See rundir.h. */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cluster.h"
#include "rundir.h"
#include "tempdir.h"

static char root[SIM_PATH_LEN]; /* the run's temp dir */

void rundir_init(void)
{
    char err[256];

    /* Check forks a process per test: flush each line before it does, or
     * the children repeat what the parent had buffered. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (sim_tempdir_create(root, sizeof(root), err, sizeof(err)) != 0) {
        fprintf(stderr, "tests: %s\n", err);
        exit(EXIT_FAILURE);
    }
    atexit(sim_cluster_cleanup);
    sim_cluster_cleanup_on_signal();
}

const char *rundir_path(void)
{
    return root;
}

int rundir_alive(pid_t pid)
{
    char path[64], stat[256], *paren;
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    if (pid <= 0 || (f = fopen(path, "r")) == NULL)
        return 0;
    n = fread(stat, 1, sizeof(stat) - 1, f);
    fclose(f);
    stat[n] = '\0';
    paren = strrchr(stat, ')');
    return paren == NULL || paren[1] == '\0' || paren[2] != 'Z';
}

pid_t rundir_start_child(void (*start)(int fd), rundir_started *st, const char *what)
{
    int fds[2], status;
    pid_t child;
    ssize_t n;

    ck_assert_msg(pipe(fds) == 0, "pipe: %s", strerror(errno));
    child = fork();
    ck_assert_msg(child >= 0, "fork: %s", strerror(errno));
    if (child == 0) {
        close(fds[0]);
        start(fds[1]);
        _exit(5); /* start never returns */
    }
    close(fds[1]);
    memset(st, 0, sizeof(*st));
    n = read(fds[0], st, sizeof(*st));
    close(fds[0]);
    if (n != (ssize_t)sizeof(*st)) {
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
        ck_abort_msg("the child did not start its %s (exit %d)", what,
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    return child;
}

void rundir_interrupt(pid_t child, const rundir_started *st, const char *what)
{
    struct stat sb;
    int status, i;

    kill(child, SIGINT);
    waitpid(child, &status, 0);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT,
                  "the child should have died of its SIGINT");
    for (i = 0; i < RUNDIR_MAX_PIDS && st->pid[i] > 0; i++)
        ck_assert_msg(!rundir_alive(st->pid[i]), "%s %d (pid %ld) outlived Ctrl-C", what, i,
                      (long)st->pid[i]);
    ck_assert_msg(stat(st->dir, &sb) != 0, "the temp dir %s outlived Ctrl-C", st->dir);
}
