/* client: the control block, the provider that follows the primary, and
 * the client processes' life (spawn, poll, kill). See client.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "client.h"
#include "history.h"
#include "util.h"

#define ENV_FAILPOINTS "DLOCK_FAILPOINTS"
#define ENV_MAX 256     /* environment entries passed on to a client */
#define TRACKED_MAX 32  /* live children per process: a run has 9 */

extern char **environ;

/* ---- the control block ---------------------------------------------------- */

static sim_control *map_control(const char *path, int flags, char *errstr,
                                size_t len)
{
    int fd = open(path, flags | O_RDWR | O_CLOEXEC, 0600);
    void *p;

    if (fd < 0) {
        sim_error(errstr, len, "open %s: %s", path, strerror(errno));
        return NULL;
    }
    if ((flags & O_CREAT) && ftruncate(fd, sizeof(sim_control)) != 0) {
        sim_error(errstr, len, "ftruncate %s: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    p = mmap(NULL, sizeof(sim_control), PROT_READ | PROT_WRITE, MAP_SHARED,
             fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        sim_error(errstr, len, "mmap %s: %s", path, strerror(errno));
        return NULL;
    }
    return p;
}

sim_control *sim_client_control_create(const char *path, char *errstr,
                                       size_t len)
{
    /* ftruncate of a new file gives zeroes: every atomic starts at 0. */
    return map_control(path, O_CREAT | O_EXCL, errstr, len);
}

sim_control *sim_client_control_open(const char *path, char *errstr,
                                     size_t len)
{
    struct stat st;

    if (stat(path, &st) != 0) {
        sim_error(errstr, len, "stat %s: %s", path, strerror(errno));
        return NULL;
    }
    /* A control block of another build would be read as garbage. */
    if ((size_t)st.st_size != sizeof(sim_control)) {
        sim_error(errstr, len, "%s is not a control block of this build", path);
        return NULL;
    }
    return map_control(path, 0, errstr, len);
}

void sim_client_control_close(sim_control *ctl)
{
    if (ctl != NULL)
        munmap(ctl, sizeof(*ctl));
}

void sim_client_reach(sim_control *ctl, int client, sim_phase phase)
{
    long long unset = 0;

    atomic_compare_exchange_strong(&ctl->client[client].reached_ns[phase],
                                   &unset, (long long)sim_now_ns());
}

int64_t sim_client_reached(const sim_control *ctl, int client, sim_phase phase)
{
    return atomic_load(&ctl->client[client].reached_ns[phase]);
}

/* ---- the connection provider ---------------------------------------------- */

static redisContext *connect_port(const sim_control *ctl, int port,
                                  char *errstr, size_t len)
{
    struct timeval tv = { ctl->timeout_ms / 1000, (ctl->timeout_ms % 1000) * 1000 };
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);

    if (c == NULL || c->err) {
        sim_error(errstr, len, "connect to 127.0.0.1:%d: %s", port,
              c != NULL ? c->errstr : "out of memory");
        redisFree(c);
        return NULL;
    }
    redisSetTimeout(c, tv);
    return c;
}

/* Asks the sentinel where the master is now: the way a client finds the
 * primary in a real deployment. Returns the port, or -1 with errstr. */
static int ask_sentinel(const sim_control *ctl, char *errstr, size_t len)
{
    redisContext *c = connect_port(ctl, ctl->sentinel_port, errstr, len);
    redisReply *r;
    int port = -1;

    if (c == NULL)
        return -1;
    r = redisCommand(c, "SENTINEL get-master-addr-by-name %s",
                     ctl->sentinel_master);
    if (r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
        r->element[1]->type == REDIS_REPLY_STRING)
        port = atoi(r->element[1]->str);
    else
        sim_error(errstr, len, "sentinel on port %d does not know master %s",
              ctl->sentinel_port, ctl->sentinel_master);
    freeReplyObject(r);
    redisFree(c);
    return port;
}

redisContext *sim_client_connect_primary(void *arg, char *errstr, size_t len)
{
    const sim_control *ctl = arg;
    int port = atomic_load(&ctl->primary_port);

    if (ctl->sentinel_port > 0 && (port = ask_sentinel(ctl, errstr, len)) < 0)
        return NULL;
    return connect_port(ctl, port, errstr, len);
}

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

/* ---- the registry of live children ------------------------------------------
 * Read by the cleanup, which may run in a signal handler: atomics only.
 * An entry belongs to the process that made it, so a forked child never
 * kills its parent's clients. */
typedef struct tracked {
    atomic_int pid;
    atomic_int owner; /* 0 = free slot */
} tracked;

static tracked children[TRACKED_MAX];
static struct sigaction chained[3];   /* what our handler runs after itself */
static const int cleanup_signals[3] = { SIGINT, SIGTERM, SIGHUP };

/* The simulator starts its children from one thread: no lock is needed,
 * only the order (pid first, then owner) for a handler that reads. */
void sim_client_track(pid_t pid)
{
    int i;

    for (i = 0; i < TRACKED_MAX; i++) {
        if (atomic_load(&children[i].owner) == 0) {
            atomic_store(&children[i].pid, pid);
            atomic_store(&children[i].owner, getpid());
            return;
        }
    }
}

void sim_client_untrack(pid_t pid)
{
    int i;

    for (i = 0; i < TRACKED_MAX; i++) {
        if (atomic_load(&children[i].owner) == getpid() &&
            atomic_load(&children[i].pid) == pid)
            atomic_store(&children[i].owner, 0);
    }
}

void sim_client_cleanup(void)
{
    pid_t me = getpid();
    int i;

    for (i = 0; i < TRACKED_MAX; i++) {
        if (atomic_load(&children[i].owner) == me) {
            pid_t pid = atomic_load(&children[i].pid);

            atomic_store(&children[i].owner, 0);
            kill(pid, SIGKILL);
            while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
        }
    }
}

static void on_signal(int sig)
{
    int saved = errno, i;

    sim_client_cleanup();
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

void sim_client_cleanup_on_signal(void)
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

/* ---- client processes ---------------------------------------------------------- */

pid_t sim_client_spawn(const char *program, const char *control_path,
                       int client, const char *failpoints, char *errstr,
                       size_t len)
{
    char *env[ENV_MAX], fp_entry[256], index[16];
    char *argv[] = { (char *)program, (char *)control_path, index, NULL };
    pid_t parent = getpid(), pid;

    snprintf(index, sizeof(index), "%d", client);
    if (client_env(env, ENV_MAX, fp_entry, sizeof(fp_entry), failpoints) != 0)
        return sim_error(errstr, len, "failpoint arming too long: %s", failpoints);
    if (access(program, X_OK) != 0)
        return sim_error(errstr, len, "client program %s: %s", program, strerror(errno));
    pid = fork();
    if (pid < 0)
        return sim_error(errstr, len, "fork: %s", strerror(errno));
    if (pid == 0) {
        /* Die with the simulator, even when it is SIGKILLed; and check it
         * did not die before we asked. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        execve(program, argv, env);
        _exit(127);
    }
    sim_client_track(pid);
    return pid;
}

sim_client_state sim_client_poll(pid_t pid, int *status)
{
    int st = 0;
    pid_t r;

    do
        r = waitpid(pid, &st, WNOHANG | WUNTRACED);
    while (r < 0 && errno == EINTR);
    if (r != pid)
        return SIM_CLIENT_RUNNING;
    if (WIFSTOPPED(st))
        return SIM_CLIENT_STOPPED;
    sim_client_untrack(pid);
    if (WIFSIGNALED(st)) {
        *status = WTERMSIG(st);
        return SIM_CLIENT_KILLED;
    }
    *status = WEXITSTATUS(st);
    return SIM_CLIENT_EXITED;
}

void sim_client_kill(pid_t pid)
{
    if (pid <= 0)
        return;
    sim_client_untrack(pid);
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

const char *sim_client_name(int client)
{
    static const char *const names[] = {
        "A", "B", "C", "D", "E", "F", "G", "H", "I"
    };

    if (client < 0 || client >= (int)(sizeof(names) / sizeof(names[0])))
        return "-";
    return names[client];
}
