/* proc: fork, exec, poll, kill and the registry of live children. See
 * proc.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "proc.h"
#include "util.h"

#define TRACKED_MAX 96  /* live children per process: a run has 13 */

/* ---- the registry of live children ------------------------------------------
 * Read by the cleanup, which may run in a signal handler: atomics only;
 * the mutex only orders writers. An entry belongs to the process that
 * made it, so a forked child never kills its parent's children. It is
 * published by setting owner last and retired by clearing owner first. */
typedef struct tracked {
    atomic_int pid;
    atomic_int owner; /* 0 = free slot */
} tracked;

static tracked children[TRACKED_MAX];
static struct sigaction chained[3];   /* what our handler runs after itself */
static const int cleanup_signals[3] = { SIGINT, SIGTERM, SIGHUP };

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;

int sim_proc_track(pid_t pid)
{
    int i, found = -1;

    pthread_mutex_lock(&reg_lock);
    for (i = 0; i < TRACKED_MAX && found < 0; i++) {
        if (atomic_load(&children[i].owner) == 0) {
            atomic_store(&children[i].pid, pid);
            atomic_store(&children[i].owner, getpid());
            found = i;
        }
    }
    pthread_mutex_unlock(&reg_lock);
    return found < 0 ? -1 : 0;
}

void sim_proc_untrack(pid_t pid)
{
    int i;

    pthread_mutex_lock(&reg_lock);
    for (i = 0; i < TRACKED_MAX; i++) {
        if (atomic_load(&children[i].owner) == getpid() &&
            atomic_load(&children[i].pid) == pid)
            atomic_store(&children[i].owner, 0);
    }
    pthread_mutex_unlock(&reg_lock);
}

static void reap(pid_t pid)
{
    /* ECHILD: a signal handler's cleanup reaped it first. */
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

/* No lock: an entry retired meanwhile is at worst killed twice. */
void sim_proc_cleanup(void)
{
    pid_t me = getpid();
    int i;

    for (i = 0; i < TRACKED_MAX; i++) {
        if (atomic_load(&children[i].owner) == me) {
            pid_t pid = atomic_load(&children[i].pid);

            atomic_store(&children[i].owner, 0);
            kill(pid, SIGKILL);
            reap(pid);
        }
    }
}

static void on_signal(int sig)
{
    int saved = errno, i;

    sim_proc_cleanup();
    errno = saved;
    for (i = 0; i < 3; i++) {
        if (cleanup_signals[i] != sig)
            continue;
        if (chained[i].sa_handler != SIG_DFL && chained[i].sa_handler != SIG_IGN)
            chained[i].sa_handler(sig);
        else
            raise(sig); /* SA_RESETHAND: the default action, once we return */
    }
}

void sim_proc_cleanup_on_signal(void)
{
    static int installed;
    struct sigaction sa;
    int i;

    /* Twice would chain our handler to itself. */
    if (installed++)
        return;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    for (i = 0; i < 3; i++)
        sigaddset(&sa.sa_mask, cleanup_signals[i]);
    for (i = 0; i < 3; i++)
        sigaction(cleanup_signals[i], &sa, &chained[i]);
}

/* ---- one child ------------------------------------------------------------------ */

pid_t sim_proc_fork(char *errstr, size_t len)
{
    pid_t parent = getpid(), pid = fork();

    if (pid < 0)
        return sim_error(errstr, len, "fork: %s", strerror(errno));
    if (pid == 0) {
        /* Die with the parent, even when it is SIGKILLed; and check it
         * did not die before we asked. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        return 0;
    }
    if (sim_proc_track(pid) != 0) {
        kill(pid, SIGKILL);
        reap(pid);
        return sim_error(errstr, len, "more than %d children at once", TRACKED_MAX);
    }
    return pid;
}

pid_t sim_proc_spawn(const char *program, char *const argv[],
                     char *const envp[], char *errstr, size_t len)
{
    pid_t pid;

    if (access(program, X_OK) != 0)
        return sim_error(errstr, len, "program %s: %s", program, strerror(errno));
    pid = sim_proc_fork(errstr, len);
    if (pid == 0) {
        execve(program, argv, envp);
        _exit(127);
    }
    return pid;
}

sim_proc_state sim_proc_poll(pid_t pid, int *status)
{
    int st = 0;
    pid_t r;

    do
        r = waitpid(pid, &st, WNOHANG | WUNTRACED);
    while (r < 0 && errno == EINTR);
    if (r != pid)
        return SIM_PROC_RUNNING;
    if (WIFSTOPPED(st))
        return SIM_PROC_STOPPED;
    sim_proc_untrack(pid);
    if (WIFSIGNALED(st)) {
        *status = WTERMSIG(st);
        return SIM_PROC_KILLED;
    }
    *status = WEXITSTATUS(st);
    return SIM_PROC_EXITED;
}

void sim_proc_kill(pid_t pid)
{
    if (pid <= 0)
        return;
    /* Forget it first: a cleanup running in a signal handler must never
     * kill a reaped pid that the system may have handed to someone else. */
    sim_proc_untrack(pid);
    kill(pid, SIGKILL);
    reap(pid);
}
