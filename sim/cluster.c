/* cluster: starts, watches and stops the redis-server processes of a run.
 *
 * Three parts: a registry of what this process started (read by the
 * cleanup, which may run in a signal handler), the life of one server
 * (fork, exec, wait for PING, kill, reap), and a cluster of them (primary,
 * replica, resource) in one temp dir. See cluster.h for the contract. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cluster.h"
#include "util.h"

#define MAX_SERVERS 64       /* live servers per process: a run needs 3 */
#define MAX_DIRS 16          /* live temp dirs per process: a run needs 1 */
#define MAX_EXTRA_ARGS 32    /* caller's extra arguments to redis-server */
#define START_ATTEMPTS 5     /* ports tried when another process wins the race */
#define PING_TIMEOUT_MS 200  /* per connection attempt while waiting for PING */
#define POLL_MS 10           /* between readiness and replication polls */
#define REPL_TIMEOUT_MS 5000 /* a replica's link must be up by then */
#define TREE_DEPTH 4         /* temp dir / server dir / files: 2 would do */
#define LOG_NAME "redis.log"
#define REPL_CHECK_KEY "lockstep:replication-check"

/* ---- the registry ------------------------------------------------------
 * Entries belong to the process that made them (owner). A forked child
 * inherits the arrays but skips its parent's entries, so a client process
 * or a Check test process never kills its parent's servers. Fields are
 * atomics because the cleanup may read them from a signal handler; the
 * mutex only orders writers. An entry is published by setting owner last
 * and retired by clearing owner first. */
typedef struct reg_server {
    atomic_int pid;   /* the server process */
    atomic_int owner; /* the process that started it; 0 = free slot */
} reg_server;

typedef struct reg_dir {
    char path[SIM_PATH_LEN]; /* a temp dir to remove */
    atomic_int owner;        /* the process that made it; 0 = free slot */
} reg_dir;

static reg_server servers[MAX_SERVERS];
static reg_dir dirs[MAX_DIRS];
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;

static int register_server(pid_t pid)
{
    int i, found = -1;

    pthread_mutex_lock(&reg_lock);
    for (i = 0; i < MAX_SERVERS && found < 0; i++) {
        if (atomic_load(&servers[i].owner) == 0) {
            atomic_store(&servers[i].pid, pid);
            atomic_store(&servers[i].owner, getpid());
            found = i;
        }
    }
    pthread_mutex_unlock(&reg_lock);
    return found < 0 ? -1 : 0;
}

static void unregister_server(pid_t pid)
{
    int i;

    pthread_mutex_lock(&reg_lock);
    for (i = 0; i < MAX_SERVERS; i++) {
        if (atomic_load(&servers[i].owner) == getpid() &&
            atomic_load(&servers[i].pid) == pid)
            atomic_store(&servers[i].owner, 0);
    }
    pthread_mutex_unlock(&reg_lock);
}

static int register_dir(const char *path)
{
    int i, found = -1;

    pthread_mutex_lock(&reg_lock);
    for (i = 0; i < MAX_DIRS && found < 0; i++) {
        if (atomic_load(&dirs[i].owner) == 0) {
            snprintf(dirs[i].path, sizeof(dirs[i].path), "%s", path);
            atomic_store(&dirs[i].owner, getpid());
            found = i;
        }
    }
    pthread_mutex_unlock(&reg_lock);
    return found < 0 ? -1 : 0;
}

static void unregister_dir(const char *path)
{
    int i;

    pthread_mutex_lock(&reg_lock);
    for (i = 0; i < MAX_DIRS; i++) {
        if (atomic_load(&dirs[i].owner) == getpid() &&
            strcmp(dirs[i].path, path) == 0)
            atomic_store(&dirs[i].owner, 0);
    }
    pthread_mutex_unlock(&reg_lock);
}

/* ---- removing a directory tree ------------------------------------------
 * With system calls only (getdents64, unlinkat), not nftw or readdir, which
 * allocate: this also runs in a signal handler. Our trees are shallow and
 * small, so a bounded depth and a few passes per directory are enough. */
struct dirent_raw {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

static int is_dot(const char *name)
{
    return strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}

static void remove_tree_at(int parentfd, const char *name, int depth);

/* Removes what dirfd contains; returns how many entries it saw. */
static int empty_dir(int dirfd, int depth)
{
    _Alignas(8) char buf[4096];
    long n, off;
    int seen = 0;

    while ((n = getdents64(dirfd, buf, sizeof(buf))) > 0) {
        for (off = 0; off < n;) {
            struct dirent_raw *d = (struct dirent_raw *)(buf + off);

            off += d->d_reclen;
            if (is_dot(d->d_name))
                continue;
            seen++;
            if (d->d_type == DT_DIR)
                remove_tree_at(dirfd, d->d_name, depth + 1);
            else
                unlinkat(dirfd, d->d_name, 0);
        }
    }
    return seen;
}

static void remove_tree_at(int parentfd, const char *name, int depth)
{
    int fd, pass;

    fd = openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        unlinkat(parentfd, name, 0);
        return;
    }
    /* Deleting while reading may hide entries from the same pass; rescan
     * until a pass finds the directory empty. */
    for (pass = 0; depth < TREE_DEPTH && pass < 4; pass++) {
        if (empty_dir(fd, depth) == 0)
            break;
        lseek(fd, 0, SEEK_SET);
    }
    close(fd);
    unlinkat(parentfd, name, AT_REMOVEDIR);
}

static void remove_tree(const char *path)
{
    remove_tree_at(AT_FDCWD, path, 0);
}

/* ---- small helpers ------------------------------------------------------ */

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void reap(pid_t pid)
{
    /* ECHILD: a signal handler's cleanup reaped it first. */
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

/* A port nobody listens on right now: the kernel picks one for a socket
 * bound to port 0. Someone may take it before redis-server binds it; the
 * caller retries then. Returns the port, or -1. */
static int free_port(char *errstr, size_t len)
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

/* Finds redis-server in $PATH before forking: the child may only make
 * async-signal-safe calls, and execvp's search is not one of them. */
static int find_redis_server(char *out, size_t outlen, char *errstr, size_t len)
{
    const char *path = getenv("PATH");
    const char *p, *end;

    if (path == NULL || path[0] == '\0')
        path = "/usr/local/bin:/usr/bin:/bin";
    for (p = path; *p != '\0'; p = *end ? end + 1 : end) {
        end = strchr(p, ':');
        if (end == NULL)
            end = p + strlen(p);
        snprintf(out, outlen, "%.*s/redis-server", (int)(end - p), p);
        if (end > p && access(out, X_OK) == 0)
            return 0;
    }
    return sim_error(errstr, len, "redis-server not found: run `make deps`");
}

/* The last lines of a server's log, joined with " | " and without Redis's
 * "pid:role date time level" prefix, for error messages. "" if none. */
static void log_tail(const sim_server *s, char *out, size_t outlen)
{
    char path[SIM_PATH_LEN + 16], buf[512], *line, *save = NULL;
    const char *lines[3] = { NULL, NULL, NULL };
    ssize_t n = 0;
    int fd, i, skip;

    out[0] = '\0';
    snprintf(path, sizeof(path), "%s/%s", s->dir, LOG_NAME);
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
    const char *argv[24 + MAX_EXTRA_ARGS + 1];
    pid_t parent;
    int errfd; /* write end of the close-on-exec pipe */
} spawn_plan;

static int plan_argv(spawn_plan *p, const sim_server *s,
                     const char *const *extra, char *errstr, size_t len)
{
    const char *fixed[] = {
        p->exe, "--port", p->port, "--bind", "127.0.0.1", "--dir", s->dir,
        "--logfile", p->log, "--daemonize", "no", "--save", "",
        "--appendonly", "no", "--repl-diskless-sync", "no", "--hz", "100",
        "--notify-keyspace-events", "KEA",
    };
    size_t n = sizeof(fixed) / sizeof(fixed[0]), i;

    memcpy(p->argv, fixed, sizeof(fixed));
    for (i = 0; extra != NULL && extra[i] != NULL; i++) {
        if (i == MAX_EXTRA_ARGS)
            return sim_error(errstr, len, "more than %d extra arguments", MAX_EXTRA_ARGS);
        p->argv[n + i] = extra[i];
    }
    p->argv[n + i] = NULL;
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
    execv(p->exe, (char *const *)p->argv);
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
    full = register_server(pid) != 0;
    while ((n = read(fds[0], &f, sizeof(f))) < 0 && errno == EINTR)
        ;
    close(fds[0]);
    if (n <= 0 && !full)
        return 0;
    if (full) {
        kill(pid, SIGKILL);
        reap(pid);
        s->pid = 0;
        return sim_error(errstr, len, "more than %d servers at once", MAX_SERVERS);
    }
    sim_server_kill(s);
    if (f.step == 3 && f.err == ENOENT)
        return sim_error(errstr, len, "redis-server not found: run `make deps`");
    return sim_error(errstr, len, "starting %s: %s: %s", p->exe,
                 step_names[f.step], strerror(f.err));
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
        if (sim_cluster_info_field(c, "server", "process_id", pid, sizeof(pid),
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
            unregister_server(s->pid);
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
static enum ready start_once(sim_server *s, const char *const *extra,
                             char *errstr, size_t len)
{
    spawn_plan plan;
    char tail[384];
    enum ready res;
    int status = 0;

    if ((s->port = free_port(errstr, len)) < 0)
        return DIED;
    memset(&plan, 0, sizeof(plan));
    if (find_redis_server(plan.exe, sizeof(plan.exe), errstr, len) != 0 ||
        plan_argv(&plan, s, extra, errstr, len) != 0 ||
        spawn(s, &plan, errstr, len) != 0)
        return DIED;
    res = wait_ready(s, &status);
    if (res == READY)
        return READY;
    sim_server_kill(s);
    log_tail(s, tail, sizeof(tail));
    if (res == TAKEN || strstr(tail, "Address already in use") != NULL)
        return TAKEN;
    if (res == TIMEOUT)
        sim_error(errstr, len, "redis-server on port %d did not answer PING within %d ms; its log: %s",
              s->port, SIM_START_TIMEOUT_MS, tail[0] ? tail : "(empty)");
    else
        sim_error(errstr, len, "redis-server on port %d exited (status %d) before answering PING; its log: %s",
              s->port, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
              tail[0] ? tail : "(empty)");
    return res;
}

int sim_server_start(sim_server *s, const char *parent_dir, const char *name,
                     const char *const *extra_args, char *errstr, size_t len)
{
    char log[SIM_PATH_LEN + 16];
    int attempt;

    memset(s, 0, sizeof(*s));
    if ((size_t)snprintf(s->dir, sizeof(s->dir), "%s/%s", parent_dir, name) >= sizeof(s->dir))
        return sim_error(errstr, len, "server dir name too long: %s/%s", parent_dir, name);
    if (mkdir(s->dir, 0700) != 0)
        return sim_error(errstr, len, "mkdir %s: %s", s->dir, strerror(errno));
    snprintf(log, sizeof(log), "%s/%s", s->dir, LOG_NAME);
    for (attempt = 0; attempt < START_ATTEMPTS; attempt++) {
        switch (start_once(s, extra_args, errstr, len)) {
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
    return sim_error(errstr, len, "redis-server could not bind a free port in %d tries",
                 START_ATTEMPTS);
}

void sim_server_kill(sim_server *s)
{
    pid_t pid = s->pid;

    if (pid <= 0)
        return;
    /* Forget it first: a cleanup running in a signal handler must never
     * kill a reaped pid that the system may have handed to someone else. */
    unregister_server(pid);
    kill(pid, SIGKILL);
    reap(pid);
    s->pid = 0;
}

void sim_server_stop(sim_server *s)
{
    sim_server_kill(s);
    if (s->dir[0] != '\0') {
        remove_tree(s->dir);
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
    return c;
}

int sim_cluster_info_field(redisContext *c, const char *section,
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

/* ---- temp dirs ------------------------------------------------------------ */

int sim_tempdir_create(char *path, size_t len, char *errstr, size_t errlen)
{
    const char *tmp = getenv("TMPDIR");

    if (tmp == NULL || tmp[0] == '\0')
        tmp = "/tmp";
    if ((size_t)snprintf(path, len, "%s/lockstep.XXXXXX", tmp) >= len ||
        len < SIM_PATH_LEN)
        return sim_error(errstr, errlen, "TMPDIR is too long: %s", tmp);
    if (mkdtemp(path) == NULL)
        return sim_error(errstr, errlen, "mkdtemp %s: %s", path, strerror(errno));
    if (register_dir(path) != 0) {
        remove_tree(path);
        return sim_error(errstr, errlen, "more than %d temp dirs at once", MAX_DIRS);
    }
    return 0;
}

void sim_tempdir_remove(const char *path)
{
    char copy[SIM_PATH_LEN];

    /* path may be the registry's own copy: keep ours past unregistering. */
    snprintf(copy, sizeof(copy), "%s", path);
    unregister_dir(copy);
    remove_tree(copy);
}

/* ---- a cluster ------------------------------------------------------------ */

/* Polls the replica until its link to the primary is up. */
static int wait_link_up(redisContext *c, char *errstr, size_t len)
{
    int64_t deadline = now_ms() + REPL_TIMEOUT_MS;
    char status[32] = "";

    while (now_ms() <= deadline) {
        if (sim_cluster_info_field(c, "replication", "master_link_status",
                                   status, sizeof(status), errstr, len) != 0)
            return -1;
        if (strcmp(status, "up") == 0)
            return 0;
        sim_sleep_ms(POLL_MS);
    }
    return sim_error(errstr, len, "replica's master_link_status still '%s' after %d ms",
                 status, REPL_TIMEOUT_MS);
}

/* Sends one command and checks that the reply is of the given type;
 * the reply is returned for the caller to read and free. */
static redisReply *expect(redisContext *c, int type, char *errstr, size_t len,
                          const char *fmt, ...)
{
    redisReply *r;
    va_list ap;

    va_start(ap, fmt);
    r = redisvCommand(c, fmt, ap);
    va_end(ap);
    if (r == NULL) {
        sim_error(errstr, len, "%s: %s", fmt, c->errstr);
        return NULL;
    }
    if (r->type != type) {
        sim_error(errstr, len, "%s: unexpected reply%s%s", fmt,
              r->type == REDIS_REPLY_ERROR ? ": " : "",
              r->type == REDIS_REPLY_ERROR ? r->str : "");
        freeReplyObject(r);
        return NULL;
    }
    return r;
}

/* A write on the primary reaches the replica: SET, then WAIT 1 must count
 * one replica. The key is deleted again so the dataset starts empty. */
static int confirm_replication(redisContext *p, char *errstr, size_t len)
{
    redisReply *r;
    int acked;

    r = expect(p, REDIS_REPLY_STATUS, errstr, len, "SET " REPL_CHECK_KEY " 1");
    freeReplyObject(r);
    if (r == NULL)
        return -1;
    r = expect(p, REDIS_REPLY_INTEGER, errstr, len, "WAIT 1 %d", REPL_TIMEOUT_MS);
    if (r == NULL)
        return -1;
    acked = (int)r->integer;
    freeReplyObject(r);
    if (acked != 1)
        return sim_error(errstr, len, "WAIT 1 counted %d replicas, expected 1", acked);
    r = expect(p, REDIS_REPLY_INTEGER, errstr, len, "DEL " REPL_CHECK_KEY);
    freeReplyObject(r);
    return r == NULL ? -1 : 0;
}

static int attach_replica(sim_cluster *cl, char *errstr, size_t len)
{
    redisContext *c;
    redisReply *r;
    int rc;

    c = sim_server_connect(&cl->replica, 1000, errstr, len);
    if (c == NULL)
        return -1;
    r = expect(c, REDIS_REPLY_STATUS, errstr, len, "REPLICAOF 127.0.0.1 %d",
               cl->primary.port);
    rc = r == NULL ? -1 : wait_link_up(c, errstr, len);
    freeReplyObject(r);
    redisFree(c);
    if (rc != 0)
        return -1;
    c = sim_server_connect(&cl->primary, REPL_TIMEOUT_MS + 1000, errstr, len);
    if (c == NULL)
        return -1;
    rc = confirm_replication(c, errstr, len);
    redisFree(c);
    return rc;
}

int sim_cluster_start(sim_cluster *cl, unsigned flags, char *errstr, size_t len)
{
    int rc;

    memset(cl, 0, sizeof(*cl));
    cl->flags = flags;
    if (sim_tempdir_create(cl->dir, sizeof(cl->dir), errstr, len) != 0)
        return -1;
    rc = sim_server_start(&cl->primary, cl->dir, "primary", NULL, errstr, len);
    if (rc == 0 && (flags & SIM_CLUSTER_REPLICA))
        rc = sim_server_start(&cl->replica, cl->dir, "replica", NULL, errstr, len);
    if (rc == 0 && (flags & SIM_CLUSTER_REPLICA))
        rc = attach_replica(cl, errstr, len);
    if (rc == 0 && (flags & SIM_CLUSTER_RESOURCE))
        rc = sim_server_start(&cl->resource, cl->dir, "resource", NULL, errstr, len);
    if (rc != 0)
        sim_cluster_stop(cl);
    return rc;
}

void sim_cluster_stop(sim_cluster *cl)
{
    sim_server_kill(&cl->primary);
    sim_server_kill(&cl->replica);
    sim_server_kill(&cl->resource);
    if (cl->dir[0] != '\0') {
        sim_tempdir_remove(cl->dir);
        cl->dir[0] = '\0';
    }
}

/* ---- cleanup ---------------------------------------------------------------
 * Only async-signal-safe calls from here on: getpid, kill, waitpid, and
 * the system calls of remove_tree. No locks: the registry is read through
 * atomics, and an entry retired meanwhile is at worst killed twice. */

void sim_cluster_cleanup(void)
{
    pid_t me = getpid();
    int i;

    for (i = 0; i < MAX_SERVERS; i++) {
        if (atomic_load(&servers[i].owner) == me) {
            pid_t pid = atomic_load(&servers[i].pid);

            atomic_store(&servers[i].owner, 0);
            kill(pid, SIGKILL);
            reap(pid);
        }
    }
    for (i = 0; i < MAX_DIRS; i++) {
        if (atomic_load(&dirs[i].owner) == me) {
            remove_tree(dirs[i].path);
            atomic_store(&dirs[i].owner, 0);
        }
    }
}

static void on_signal(int sig)
{
    int saved = errno;

    sim_cluster_cleanup();
    errno = saved;
    /* SA_RESETHAND restored the default action; the signal is blocked
     * until we return, then it ends the process as it would have. */
    raise(sig);
}

void sim_cluster_cleanup_on_signal(void)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
    struct sigaction sa;
    size_t i;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaddset(&sa.sa_mask, sigs[i]);
    for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaction(sigs[i], &sa, NULL);
}

/* ---- a sentinel -------------------------------------------------------------
 * Added for the simulator's failover with a real redis-sentinel. A sentinel
 * needs its config file as the first argument (it rewrites it to keep its
 * state), so its argv differs from a server's; the rest is the same life:
 * a child with PDEATHSIG, registered, PING and process_id to know it is
 * ours, killed and reaped by sim_server_kill/stop and by the cleanup. */

#define SENTINEL_CONF "sentinel.conf"

static int write_sentinel_conf(const sim_server *s, const char *master,
                               int master_port, long down_after_ms,
                               long failover_timeout_ms, char *errstr,
                               size_t len)
{
    char path[SIM_PATH_LEN + 16];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", s->dir, SENTINEL_CONF);
    if ((f = fopen(path, "w")) == NULL)
        return sim_error(errstr, len, "cannot write %s: %s", path, strerror(errno));
    fprintf(f, "sentinel monitor %s 127.0.0.1 %d 1\n", master, master_port);
    fprintf(f, "sentinel down-after-milliseconds %s %ld\n", master, down_after_ms);
    fprintf(f, "sentinel failover-timeout %s %ld\n", master, failover_timeout_ms);
    fclose(f);
    return 0;
}

static int sentinel_argv(spawn_plan *p, const sim_server *s)
{
    const char *fixed[] = {
        p->exe, SENTINEL_CONF, "--sentinel", "--port", p->port,
        "--bind", "127.0.0.1", "--logfile", p->log, "--daemonize", "no", NULL,
    };

    memcpy(p->argv, fixed, sizeof(fixed));
    p->dir = s->dir;
    snprintf(p->port, sizeof(p->port), "%d", s->port);
    snprintf(p->log, sizeof(p->log), "%s/%s", s->dir, LOG_NAME);
    return 0;
}

/* One try on one port, like start_once. */
static enum ready sentinel_once(sim_server *s, char *errstr, size_t len)
{
    spawn_plan plan;
    char tail[384];
    enum ready res;
    int status = 0;

    if ((s->port = free_port(errstr, len)) < 0)
        return DIED;
    memset(&plan, 0, sizeof(plan));
    if (find_redis_server(plan.exe, sizeof(plan.exe), errstr, len) != 0 ||
        sentinel_argv(&plan, s) != 0 || spawn(s, &plan, errstr, len) != 0)
        return DIED;
    res = wait_ready(s, &status);
    if (res == READY)
        return READY;
    sim_server_kill(s);
    log_tail(s, tail, sizeof(tail));
    if (res == TAKEN || strstr(tail, "Address already in use") != NULL)
        return TAKEN;
    sim_error(errstr, len, "redis-sentinel on port %d did not start; its log: %s",
          s->port, tail[0] ? tail : "(empty)");
    return res;
}

int sim_sentinel_start(sim_server *s, const char *parent_dir,
                       const char *master, int master_port,
                       long down_after_ms, long failover_timeout_ms,
                       char *errstr, size_t len)
{
    int attempt;

    memset(s, 0, sizeof(*s));
    if ((size_t)snprintf(s->dir, sizeof(s->dir), "%s/sentinel", parent_dir) >= sizeof(s->dir))
        return sim_error(errstr, len, "sentinel dir name too long: %s/sentinel", parent_dir);
    if (mkdir(s->dir, 0700) != 0)
        return sim_error(errstr, len, "mkdir %s: %s", s->dir, strerror(errno));
    if (write_sentinel_conf(s, master, master_port, down_after_ms,
                            failover_timeout_ms, errstr, len) != 0)
        return -1;
    for (attempt = 0; attempt < START_ATTEMPTS; attempt++) {
        switch (sentinel_once(s, errstr, len)) {
        case READY:
            return 0;
        case TAKEN:
            continue;
        default:
            return -1;
        }
    }
    return sim_error(errstr, len, "redis-sentinel could not bind a free port in %d tries",
                 START_ATTEMPTS);
}
