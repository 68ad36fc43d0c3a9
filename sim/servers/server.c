/* server: one redis-server process: fork, exec, wait for PING, kill and
 * reap. See server.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "password.h"
#include "proc.h"
#include "server.h"
#include "util.h"

#define MAX_ARGS 32          /* a caller's arguments to the server */
#define START_ATTEMPTS 5     /* ports tried when another process wins the race */
#define PING_TIMEOUT_MS 200  /* per connection attempt while waiting for PING */
#define POLL_MS 10           /* between readiness polls */
#define LOG_NAME "redis.log"
#define PORT_RUN_ATTEMPTS 20 /* tries to find free ports side by side */
#define PORT_FLOOR 10000     /* the lowest port a server is given */

/* ---- small helpers ------------------------------------------------------ */

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The first port of the kernel's range for the local end of outgoing
 * connections, or 0 when it cannot be read. */
static int ephemeral_low(void)
{
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    int low = 0;

    if (f != NULL) {
        if (fscanf(f, "%d", &low) != 1)
            low = 0;
        fclose(f);
    }
    return low;
}

/* A port nobody listens on right now: the kernel picks one for a socket
 * bound to port 0. Someone may take it before the server binds it; the
 * caller retries then. Returns the port, or -1. */
static int kernel_port(char *errstr, size_t len)
{
    struct sockaddr_in a;
    socklen_t alen = sizeof(a);
    int fd, port = -1;

    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return sim_error(errstr, len, "socket: %s", strerror(errno));
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &alen) == 0)
        port = ntohs(a.sin_port);
    else
        sim_error(errstr, len, "cannot find a free port: %s", strerror(errno));
    close(fd);
    return port;
}

/* Whether port is free on loopback now: a socket can bind it. */
static int port_free(int port)
{
    struct sockaddr_in a;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), ok;

    if (fd < 0)
        return 0;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)port);
    ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    close(fd);
    return ok;
}

/* A port below the kernel's range for outgoing connections, at random,
 * with room for n up to it; 0 when the range leaves no such room. A
 * kernel port is no good while servers start: a client's connect takes
 * its local port from that range (even ports first, as the kernel's
 * bind(0) hands out odd ones), and a port found free there was taken
 * before a JVM, a second or two later, bound it. Below it only another
 * server of ours may take it, which is rare. */
static int quiet_port(int n)
{
    int low = ephemeral_low();
    unsigned r;

    if (low - n <= PORT_FLOOR || getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
        return 0;
    return PORT_FLOOR + (int)(r % (unsigned)(low - n - PORT_FLOOR));
}

/* A free port, the first of n free ones where the range allows. */
static int free_port(int n, char *errstr, size_t len)
{
    int port = quiet_port(n);

    if (port > 0)
        return port_free(port) ? port : 0;
    return kernel_port(errstr, len);
}

int sim_server_free_ports(int n, char *errstr, size_t len)
{
    int attempt, port, i;

    for (attempt = 0; attempt < PORT_RUN_ATTEMPTS; attempt++) {
        if ((port = free_port(n, errstr, len)) < 0)
            return -1;
        if (port == 0)
            continue;
        for (i = 1; i < n && port + i <= 65535 && port_free(port + i); i++)
            ;
        if (i == n)
            return port;
    }
    return sim_error(errstr, len, "no %d consecutive free ports found in %d tries",
                     n, PORT_RUN_ATTEMPTS);
}

/* Finds program in $PATH before forking: the child may only make
 * async-signal-safe calls, and execvp's search is not one of them. */
static int find_program(const char *program, char *out, size_t outlen,
                        char *errstr, size_t len)
{
    const char *path = getenv("PATH");
    const char *p, *end;

    if (path == NULL || path[0] == '\0')
        path = "/usr/local/bin:/usr/bin:/bin";
    for (p = path; *p != '\0'; p = *end ? end + 1 : end) {
        end = strchr(p, ':');
        if (end == NULL)
            end = p + strlen(p);
        snprintf(out, outlen, "%.*s/%s", (int)(end - p), p, program);
        if (end > p && access(out, X_OK) == 0)
            return 0;
    }
    return sim_error(errstr, len, "%s not found: run `make deps`", program);
}

void sim_server_log_tail(const sim_server *s, const char *log_name, char *out,
                         size_t outlen)
{
    char path[SIM_PATH_LEN + 16], buf[512], *line, *save = NULL;
    const char *lines[3] = { NULL, NULL, NULL };
    ssize_t n = 0;
    int fd, i, skip;

    out[0] = '\0';
    snprintf(path, sizeof(path), "%s/%s", s->dir, log_name);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    if (lseek(fd, -(off_t)(sizeof(buf) - 1), SEEK_END) < 0)
        lseek(fd, 0, SEEK_SET);
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        lines[0] = lines[1];
        lines[1] = lines[2];
        lines[2] = line;
    }
    for (i = 0; i < 3; i++) {
        if (lines[i] == NULL)
            continue;
        skip = 0;
        sscanf(lines[i], "%*d:%*c %*d %*s %*d %*d:%*d:%*d.%*d %*c %n", &skip);
        snprintf(out + strlen(out), outlen - strlen(out), "%s%s",
                 out[0] ? " | " : "", lines[i] + skip);
    }
}

/* ---- one server ---------------------------------------------------------- */

/* What the child reports through the pipe when it cannot exec. */
typedef struct exec_failure {
    int step; /* index into step_names */
    int err;  /* errno */
} exec_failure;

static const char *const step_names[] = {
    "PR_SET_PDEATHSIG", "open its log", "chdir to its dir", "exec",
};

/* Everything the child needs, prepared before fork: after fork in a
 * threaded process the child may only make async-signal-safe calls. */
typedef struct spawn_plan {
    char exe[SIM_PATH_LEN];
    char log[SIM_PATH_LEN + 16];
    char port[16];
    const char *dir; /* the server's working dir */
    const char *argv[MAX_ARGS + 16];
    char **envp;     /* the environment the server gets; NULL: ours */
    pid_t parent;
    int errfd; /* write end of the close-on-exec pipe */
} spawn_plan;

/* exe, the caller's args, then what every server gets: its port, bound
 * to loopback, its log, in the foreground. */
static int plan_argv(spawn_plan *p, const sim_server *s, const char *const *args,
                     char *errstr, size_t len)
{
    const char *common[] = {
        "--port", p->port, "--bind", "127.0.0.1", "--logfile", p->log,
        "--daemonize", "no", NULL,
    };
    size_t n = 0, i;

    p->argv[n++] = p->exe;
    for (i = 0; args != NULL && args[i] != NULL; i++) {
        if (i == MAX_ARGS)
            return sim_error(errstr, len, "more than %d arguments for the server", MAX_ARGS);
        p->argv[n++] = args[i];
    }
    memcpy(p->argv + n, common, sizeof(common));
    p->dir = s->dir;
    snprintf(p->port, sizeof(p->port), "%d", s->port);
    snprintf(p->log, sizeof(p->log), "%s/%s", s->dir, LOG_NAME);
    return 0;
}

static void child_fail(const spawn_plan *p, int step)
{
    exec_failure f = { step, errno };

    if (write(p->errfd, &f, sizeof(f)) < 0)
        _exit(126);
    _exit(127);
}

/* In the child, between fork and exec. */
static void exec_child(const spawn_plan *p)
{
    sigset_t none;
    int fd;

    /* Die with the parent, even when it is SIGKILLed. If it already died
     * before prctl took effect, getppid no longer names it: give up. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != p->parent)
        child_fail(p, 0);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* stdout and stderr into the log: startup errors printed before Redis
     * opens its logfile ("FATAL CONFIG FILE ERROR") land there too. */
    fd = open(p->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0)
        child_fail(p, 1);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd >= 0)
        dup2(fd, STDIN_FILENO);
    /* The server must not keep our sockets and pipes (a Check pipe, a
     * client's connection) open after we close them. Linux 5.11+; on an
     * older kernel this fails and the server inherits them, harmlessly:
     * it dies with us anyway. */
    close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
    if (chdir(p->dir) != 0)
        child_fail(p, 2);
    execve(p->exe, (char *const *)p->argv, p->envp != NULL ? p->envp : environ);
    child_fail(p, 3);
}

/* Forks and execs. Returns 0 once exec succeeded (the pipe closed empty). */
static int spawn(sim_server *s, spawn_plan *p, char *errstr, size_t len)
{
    int fds[2];
    exec_failure f;
    ssize_t n;
    pid_t pid;
    int full;

    if (pipe2(fds, O_CLOEXEC) != 0)
        return sim_error(errstr, len, "pipe: %s", strerror(errno));
    p->parent = getpid();
    p->errfd = fds[1];
    pid = fork();
    if (pid == 0)
        exec_child(p);
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return sim_error(errstr, len, "fork: %s", strerror(errno));
    }
    s->pid = pid;
    /* Registered at once, so a cleanup on exit or on a signal kills it. */
    full = sim_proc_track(pid) != 0;
    while ((n = read(fds[0], &f, sizeof(f))) < 0 && errno == EINTR)
        ;
    close(fds[0]);
    if (n <= 0 && !full)
        return 0;
    if (full) {
        sim_proc_kill(pid);
        s->pid = 0;
        return sim_error(errstr, len, "too many child processes at once to start another server");
    }
    sim_server_kill(s);
    if (f.step == 3 && f.err == ENOENT)
        return sim_error(errstr, len, "%s not found: run `make deps`",
                         strrchr(p->exe, '/') != NULL ? strrchr(p->exe, '/') + 1 : p->exe);
    return sim_error(errstr, len, "starting %s: %s: %s", p->exe,
                 step_names[f.step], strerror(f.err));
}

/* Our environment with env's NAME=value entries added, each replacing
 * ours of that name: built before the fork, freed after it. p->envp
 * stays NULL when env adds nothing. 0, or -1 with errstr. */
static int plan_env(spawn_plan *p, const char *const *env, char *errstr, size_t len)
{
    size_t ours = 0, extra = 0, n = 0;

    p->envp = NULL;
    if (env == NULL || env[0] == NULL)
        return 0;
    while (environ[ours] != NULL)
        ours++;
    while (env[extra] != NULL)
        extra++;
    if ((p->envp = malloc((ours + extra + 1) * sizeof(*p->envp))) == NULL)
        return sim_error(errstr, len, "out of memory for a server's environment");
    for (size_t i = 0; i < ours; i++) {
        size_t k = 0, name = strcspn(environ[i], "=");

        while (k < extra && !(strncmp(env[k], environ[i], name) == 0 && env[k][name] == '='))
            k++;
        if (k == extra)
            p->envp[n++] = environ[i];
    }
    for (size_t k = 0; k < extra; k++)
        p->envp[n++] = (char *)env[k];
    p->envp[n] = NULL;
    return 0;
}

/* How waiting for a new server ended. */
enum ready { READY, DIED, TAKEN, TIMEOUT };

/* The server answers PING and INFO says it is our process, not another
 * one that got this port first. */
static enum ready ping_ours(const sim_server *s)
{
    char pid[32], why[128];
    redisContext *c = sim_server_connect(s, PING_TIMEOUT_MS, why, sizeof(why));
    redisReply *r;
    enum ready res = TIMEOUT;

    if (c == NULL)
        return TIMEOUT;
    r = redisCommand(c, "PING");
    if (r != NULL && r->type == REDIS_REPLY_STATUS && strcmp(r->str, "PONG") == 0) {
        res = TAKEN;
        if (sim_server_info_field(c, "server", "process_id", pid, sizeof(pid),
                                   why, sizeof(why)) == 0 && atol(pid) == (long)s->pid)
            res = READY;
    }
    freeReplyObject(r);
    redisFree(c);
    return res;
}

static enum ready wait_ready(sim_server *s, int *status)
{
    int64_t deadline = now_ms() + SIM_START_TIMEOUT_MS;
    enum ready res;

    for (;;) {
        if (waitpid(s->pid, status, WNOHANG) == s->pid) {
            sim_proc_untrack(s->pid);
            s->pid = 0;
            return DIED;
        }
        res = ping_ours(s);
        if (res != TIMEOUT || now_ms() > deadline)
            return res;
        sim_sleep_ms(POLL_MS);
    }
}

/* One try on one port. Returns READY or why it failed; errstr is set for
 * failures that another port would not fix. */
static enum ready start_once(sim_server *s, const char *what, const char *const *args,
                             const char *const *env, char *errstr, size_t len)
{
    spawn_plan plan;
    char tail[384];
    enum ready res;
    int status = 0, rc;

    if ((s->port = sim_server_free_ports(1, errstr, len)) < 0)
        return DIED;
    memset(&plan, 0, sizeof(plan));
    rc = find_program("redis-server", plan.exe, sizeof(plan.exe), errstr, len) != 0 ||
         plan_argv(&plan, s, args, errstr, len) != 0 ||
         plan_env(&plan, env, errstr, len) != 0 ||
         spawn(s, &plan, errstr, len) != 0;
    free(plan.envp);
    if (rc)
        return DIED;
    res = wait_ready(s, &status);
    if (res == READY)
        return READY;
    sim_server_kill(s);
    sim_server_log_tail(s, LOG_NAME, tail, sizeof(tail));
    if (res == TAKEN || strstr(tail, "Address already in use") != NULL)
        return TAKEN;
    if (res == TIMEOUT)
        sim_error(errstr, len, "%s on port %d did not answer PING within %d ms; its log: %s",
                  what, s->port, SIM_START_TIMEOUT_MS, tail[0] ? tail : "(empty)");
    else
        sim_error(errstr, len, "%s on port %d exited (status %d) before answering PING; its log: %s",
                  what, s->port, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
                  tail[0] ? tail : "(empty)");
    return res;
}

int sim_server_make_dir(sim_server *s, const char *parent_dir, const char *name,
                        char *errstr, size_t len)
{
    memset(s, 0, sizeof(*s));
    if ((size_t)snprintf(s->dir, sizeof(s->dir), "%s/%s", parent_dir, name) >= sizeof(s->dir))
        return sim_error(errstr, len, "server dir name too long: %s/%s", parent_dir, name);
    if (mkdir(s->dir, 0700) != 0)
        return sim_error(errstr, len, "mkdir %s: %s", s->dir, strerror(errno));
    return 0;
}

int sim_server_exec(sim_server *s, const char *program, const char *const *args,
                    const char *const *env, const char *log_name, char *errstr, size_t len)
{
    spawn_plan plan;
    size_t n = 0, i;
    int rc;

    memset(&plan, 0, sizeof(plan));
    if (find_program(program, plan.exe, sizeof(plan.exe), errstr, len) != 0)
        return -1;
    plan.argv[n++] = plan.exe;
    for (i = 0; args != NULL && args[i] != NULL; i++) {
        if (i == MAX_ARGS)
            return sim_error(errstr, len, "more than %d arguments for %s", MAX_ARGS, program);
        plan.argv[n++] = args[i];
    }
    plan.argv[n] = NULL;
    plan.dir = s->dir;
    snprintf(plan.log, sizeof(plan.log), "%s/%s", s->dir, log_name);
    rc = plan_env(&plan, env, errstr, len) != 0 || spawn(s, &plan, errstr, len) != 0;
    free(plan.envp);
    return rc ? -1 : 0;
}

static int launch(sim_server *s, const char *what, const char *const *args,
                  const char *const *env, char *errstr, size_t len)
{
    char log[SIM_PATH_LEN + 16];
    int attempt;

    snprintf(log, sizeof(log), "%s/%s", s->dir, LOG_NAME);
    for (attempt = 0; attempt < START_ATTEMPTS; attempt++) {
        switch (start_once(s, what, args, env, errstr, len)) {
        case READY:
            return 0;
        case TAKEN:
            /* Another process took the port first: a new port, a new log. */
            unlink(log);
            continue;
        default:
            return -1;
        }
    }
    return sim_error(errstr, len, "%s could not bind a free port in %d tries",
                     what, START_ATTEMPTS);
}

int sim_server_launch(sim_server *s, const char *what, const char *const *args,
                      char *errstr, size_t len)
{
    return launch(s, what, args, NULL, errstr, len);
}

int sim_server_start(sim_server *s, const char *parent_dir, const char *name,
                     const char *const *extra_args, char *errstr, size_t len)
{
    return sim_server_start_env(s, parent_dir, name, extra_args, NULL, errstr, len);
}

int sim_server_start_env(sim_server *s, const char *parent_dir, const char *name,
                         const char *const *extra_args, const char *const *env,
                         char *errstr, size_t len)
{
    char conf[SIM_PATH_LEN + 16];
    const char *args[MAX_ARGS + 1] = {
        conf, "--dir", NULL, "--save", "", "--appendonly", "no", "--repl-diskless-sync", "no",
        "--hz", "100", "--notify-keyspace-events", "KEA",
    };
    size_t n = 13, i;

    if (sim_server_make_dir(s, parent_dir, name, errstr, len) != 0 ||
        sim_password_redis_conf(s->dir, conf, sizeof(conf), errstr, len) != 0)
        return -1;
    args[2] = s->dir;
    for (i = 0; extra_args != NULL && extra_args[i] != NULL; i++, n++) {
        if (n == MAX_ARGS)
            return sim_error(errstr, len, "more than %d extra arguments", MAX_ARGS - 13);
        args[n] = extra_args[i];
    }
    args[n] = NULL;
    return launch(s, "redis-server", args, env, errstr, len);
}

void sim_server_kill(sim_server *s)
{
    sim_proc_kill(s->pid);
    s->pid = 0;
}

void sim_server_stop(sim_server *s)
{
    sim_server_kill(s);
    if (s->dir[0] != '\0') {
        sim_tempdir_remove_tree(s->dir);
        s->dir[0] = '\0';
    }
}

redisContext *sim_server_connect(const sim_server *s, long timeout_ms,
                                 char *errstr, size_t len)
{
    struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
    redisContext *c = redisConnectWithTimeout("127.0.0.1", s->port, tv);

    if (c == NULL || c->err) {
        sim_error(errstr, len, "connect to 127.0.0.1:%d: %s", s->port,
              c != NULL ? c->errstr : "out of memory");
        redisFree(c);
        return NULL;
    }
    redisSetTimeout(c, tv);
    if (sim_password_auth(c, sim_password(), s->port, errstr, len) != 0) {
        redisFree(c);
        return NULL;
    }
    return c;
}

int sim_server_info_field(redisContext *c, const char *section,
                          const char *field, char *out, size_t outlen,
                          char *errstr, size_t len)
{
    redisReply *r = redisCommand(c, "INFO %s", section);
    size_t flen = strlen(field);
    const char *p;
    int rc = -1;

    if (r == NULL)
        return sim_error(errstr, len, "INFO %s: %s", section, c->errstr);
    if (r->type != REDIS_REPLY_STRING) {
        sim_error(errstr, len, "INFO %s: unexpected reply", section);
    } else {
        for (p = r->str; p != NULL; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
            if (strncmp(p, field, flen) == 0 && p[flen] == ':') {
                snprintf(out, outlen, "%.*s", (int)strcspn(p + flen + 1, "\r\n"), p + flen + 1);
                rc = 0;
                break;
            }
        }
        if (rc != 0)
            sim_error(errstr, len, "INFO %s has no field %s", section, field);
    }
    freeReplyObject(r);
    return rc;
}
