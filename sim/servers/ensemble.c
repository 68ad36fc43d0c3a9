/* ensemble: ZooKeeper servers as java children, their config, and their
 * roles asked with srvr. See ensemble.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <zookeeper/zookeeper.h>

#include "ensemble.h"
#include "history.h"
#include "password.h"
#include "proc.h"
#include "util.h"
#include "zk_waker.h"

/* The Makefile's ZK_JAR, ZK_CLASS_PATH and ZK_JAVA_OPTS: the same words
 * start the server whose classes make dumps (ZK_CLASS_DATA), and a JVM
 * maps that archive only when its class path and options match. */
#if !defined(SIM_ZK_JAR) || !defined(SIM_ZK_CLASS_PATH) || !defined(SIM_ZK_JAVA_OPTS)
#error "build with make: it defines SIM_ZK_JAR, SIM_ZK_CLASS_PATH and SIM_ZK_JAVA_OPTS"
#endif
#define JAVA_OPTS_MAX 16      /* words in SIM_ZK_JAVA_OPTS */
#define LOG_NAME "zookeeper.log"
#define CLASS_DATA "zookeeper.jsa" /* make's archive of the server's classes */
#define SRVR_TIMEOUT_MS 300   /* one srvr: connect, ask, read */
#define POLL_MS 20            /* between looks at the nodes' roles */
#define START_ATTEMPTS 3      /* ports tried when another process took one */
#define INIT_TICKS 200        /* initLimit: 10 s for a follower's first sync */
#define SYNC_TICKS 40         /* syncLimit: 2 s a follower may lag on a busy machine */
#define MAX_SESSION_MS 2147483647L /* any lease lock.h allows */
#define LOCK_SESSION_MS 10000 /* the session that closes the root */
#define LOCK_CONNECT_MS 10000 /* a loaded machine: a session takes a while */

/* ---- srvr ---------------------------------------------------------------- */

/* Connects to 127.0.0.1:port within ms; the socket, or -1. */
static int connect_within(int port, int ms)
{
    struct sockaddr_in a;
    struct pollfd p;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), err = 0;
    socklen_t elen = sizeof(err);

    if (fd < 0)
        return -1;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)port);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
        return fd;
    p = (struct pollfd){ fd, POLLOUT, 0 };
    if (errno == EINPROGRESS && poll(&p, 1, ms) == 1 &&
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) == 0 && err == 0)
        return fd;
    close(fd);
    return -1;
}

int sim_ensemble_ask(int port, const char *word, char *out, size_t outlen)
{
    int64_t deadline = sim_now_ns() + (int64_t)SRVR_TIMEOUT_MS * 1000000;
    size_t used = 0;
    ssize_t n = 1;
    int fd = connect_within(port, SRVR_TIMEOUT_MS);

    if (fd < 0)
        return -1;
    if (write(fd, word, strlen(word)) != (ssize_t)strlen(word)) {
        close(fd);
        return -1;
    }
    while (n > 0 && used + 1 < outlen) {
        struct pollfd p = { fd, POLLIN, 0 };
        int left = (int)((deadline - sim_now_ns()) / 1000000);

        if (left <= 0 || poll(&p, 1, left) != 1)
            break;
        n = read(fd, out + used, outlen - used - 1);
        if (n > 0)
            used += (size_t)n;
    }
    close(fd);
    out[used] = '\0';
    return n == 0 || used + 1 == outlen ? 0 : -1;
}

sim_zk_mode sim_ensemble_mode(const sim_ensemble *e, int i)
{
    char answer[1024];
    const char *mode;

    if (i < 0 || i >= e->nodes || e->node[i].pid <= 0 ||
        sim_ensemble_ask(e->port + i, "srvr", answer, sizeof(answer)) != 0)
        return SIM_ZK_DOWN;
    if ((mode = strstr(answer, "Mode: ")) == NULL)
        return SIM_ZK_LOOKING; /* "This ZooKeeper instance is not currently serving" */
    mode += strlen("Mode: ");
    if (strncmp(mode, "leader", 6) == 0)
        return SIM_ZK_LEADER;
    if (strncmp(mode, "follower", 8) == 0)
        return SIM_ZK_FOLLOWER;
    return SIM_ZK_LOOKING;
}

int sim_ensemble_leader(const sim_ensemble *e)
{
    int i;

    for (i = 0; i < e->nodes; i++) {
        if (sim_ensemble_mode(e, i) == SIM_ZK_LEADER)
            return i;
    }
    return -1;
}

/* ---- one node ------------------------------------------------------------- */

/* zoo.cfg and myid in node i's dir, which is its data dir too. */
static int write_config(const sim_ensemble *e, int i, char *errstr, size_t len)
{
    char path[SIM_PATH_LEN + 16];
    FILE *f;
    int k, ok;

    snprintf(path, sizeof(path), "%s/myid", e->node[i].dir);
    if ((f = fopen(path, "w")) == NULL)
        return sim_error(errstr, len, "writing %s: %s", path, strerror(errno));
    ok = fprintf(f, "%d\n", i + 1) > 0;
    ok = fclose(f) == 0 && ok;
    snprintf(path, sizeof(path), "%s/zoo.cfg", e->node[i].dir);
    if (!ok || (f = fopen(path, "w")) == NULL)
        return sim_error(errstr, len, "writing %s: %s", path, strerror(errno));
    fprintf(f, "tickTime=%d\ninitLimit=%d\nsyncLimit=%d\n", SIM_ENSEMBLE_TICK_MS,
            INIT_TICKS, SYNC_TICKS);
    fprintf(f, "minSessionTimeout=%d\nmaxSessionTimeout=%ld\n",
            SIM_ENSEMBLE_MIN_SESSION_MS, MAX_SESSION_MS);
    fprintf(f, "dataDir=%s\nclientPortAddress=127.0.0.1\nclientPort=%d\n",
            e->node[i].dir, e->port + i);
    /* No fsync per write; a log file grown 1 MB at a time, not 64 MB. */
    fprintf(f, "forceSync=no\npreAllocSize=1024\n");
    fprintf(f, "admin.enableServer=false\n4lw.commands.whitelist=srvr,ruok,mntr,dump\n");
    for (k = 0; k < e->nodes; k++)
        fprintf(f, "server.%d=127.0.0.1:%d:%d\n", k + 1, e->peer_port[k],
                e->election_port[k]);
    ok = !ferror(f);
    ok = fclose(f) == 0 && ok;
    return ok ? 0 : sim_error(errstr, len, "writing %s: %s", path, strerror(errno));
}

/* The JVM's class data for a ZooKeeper server, which make has a server
 * dump once (java -XX:ArchiveClassesAtExit): the classes it loads,
 * parsed and verified once, mapped by every JVM that starts. A quarter
 * less CPU to start a server, and a demo starts some twenty-five. It lies
 * in the build dir, next to the program that runs (build/test_servers) or
 * one folder up (build/sim/sim, build/v10/tests). "-Xshare:auto", java's
 * own default, when there is none: a JVM whose archive does not match
 * its version or class path warns in its log and starts without it. */
static const char *class_data(void)
{
    static char opt[PATH_MAX + 32];
    char exe[PATH_MAX], *slash;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

    for (int up = 0; n > 0 && up < 2; up++) {
        exe[n] = '\0';
        if ((slash = strrchr(exe, '/')) == NULL)
            break;
        n = slash - exe;
        snprintf(opt, sizeof(opt), "-XX:SharedArchiveFile=%.*s/%s", (int)n, exe, CLASS_DATA);
        if (access(strchr(opt, '=') + 1, R_OK) == 0)
            return opt;
    }
    return "-Xshare:auto";
}

/* java's words for node i: the Makefile's options, the class data, its
 * temp dir tmp, the class path, the main class and its config cfg. */
static void java_args(const char **args, char *opts, char *tmp, char *cfg)
{
    char *word, *save = NULL;
    int n = 0;

    for (word = strtok_r(opts, " ", &save); word != NULL && n < JAVA_OPTS_MAX;
         word = strtok_r(NULL, " ", &save))
        args[n++] = word;
    args[n++] = class_data();
    /* A session serves no request until it has authenticated by digest:
     * the run's clients send the run's password first of all. */
    args[n++] = "-Dzookeeper.enforce.auth.enabled=true";
    args[n++] = "-Dzookeeper.enforce.auth.schemes=digest";
    args[n++] = tmp;
    args[n++] = "-cp";
    args[n++] = SIM_ZK_CLASS_PATH;
    args[n++] = "org.apache.zookeeper.server.quorum.QuorumPeerMain";
    args[n++] = cfg;
    args[n] = NULL;
}

/* Node i in a new dir called name: its config, then java. */
static int launch(sim_ensemble *e, int i, const char *name, char *errstr, size_t len)
{
    char cfg[SIM_PATH_LEN + 16], tmp[SIM_PATH_LEN + 32], opts[] = SIM_ZK_JAVA_OPTS;
    const char *args[JAVA_OPTS_MAX + 8];
    int port = e->port + i;
    sim_clock_env ce;

    java_args(args, opts, tmp, cfg);
    if (sim_server_make_dir(&e->node[i], e->parent, name, errstr, len) != 0)
        return -1;
    e->node[i].port = port;
    snprintf(cfg, sizeof(cfg), "%s/zoo.cfg", e->node[i].dir);
    snprintf(tmp, sizeof(tmp), "-Djava.io.tmpdir=%s", e->node[i].dir);
    if (write_config(e, i, errstr, len) != 0)
        return -1;
    if (e->clock_shim == NULL)
        return sim_server_exec(&e->node[i], "java", args, NULL, LOG_NAME, errstr, len);
    /* The first start makes the node's clock file in the ensemble's
     * parent dir; a restart keeps it, and so the node's clock. */
    if (e->clock_file[i][0] == '\0' &&
        sim_clockfile_create(e->clock_file[i], e->parent, name, errstr, len) != 0)
        return -1;
    sim_clockfile_env(&ce, e->clock_shim, e->clock_file[i]);
    return sim_server_exec(&e->node[i], "java", args, ce.env, LOG_NAME, errstr, len);
}

/* The first line of node i's log that names an exception, into buf
 * ("" when none: a Java stack trace follows it, so the log's tail says
 * little); 1 when a line of it says a port was taken. */
static int read_log(const sim_ensemble *e, int i, char *buf, size_t len)
{
    char path[SIM_PATH_LEN + 16], line[512];
    int taken = 0;
    FILE *f;

    buf[0] = '\0';
    snprintf(path, sizeof(path), "%s/%s", e->node[i].dir, LOG_NAME);
    if ((f = fopen(path, "r")) == NULL)
        return 0;
    while (fgets(line, sizeof(line), f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        if (buf[0] == '\0' && strstr(line, "Exception") != NULL)
            snprintf(buf, len, "%.*s", (int)(len - 1), line);
        taken |= strstr(line, "BindException") != NULL || strstr(line, "already in use") != NULL;
    }
    fclose(f);
    return taken;
}

/* A node that exited: why, from its log. 1 when another process had one
 * of its ports (another port may do), else 0; errstr says it either way. */
static int died(const sim_ensemble *e, int i, char *errstr, size_t len)
{
    char tail[384], cause[512];
    int taken = read_log(e, i, cause, sizeof(cause));

    sim_server_log_tail(&e->node[i], LOG_NAME, tail, sizeof(tail));
    sim_error(errstr, len, "ZooKeeper node %d (port %d) exited; its log: %s", i,
              e->port + i, cause[0] ? cause : tail[0] ? tail : "(empty)");
    return taken;
}

/* A node whose process ended is reaped and marked down: -1 then. */
static int reap_dead(sim_ensemble *e, int *dead)
{
    int status, i;

    for (i = 0; i < e->nodes; i++) {
        if (e->node[i].pid > 0 && sim_proc_poll(e->node[i].pid, &status) != SIM_PROC_RUNNING) {
            e->node[i].pid = 0;
            *dead = i;
            return -1;
        }
    }
    return 0;
}

/* ---- the ensemble ------------------------------------------------------------ */

/* Every running node leads or follows, and one leads. */
static int settled(const sim_ensemble *e, int *leader)
{
    int i, leaders = 0;
    sim_zk_mode m;

    *leader = -1;
    for (i = 0; i < e->nodes; i++) {
        if (e->node[i].pid <= 0)
            continue;
        m = sim_ensemble_mode(e, i);
        if (m == SIM_ZK_LEADER) {
            leaders++;
            *leader = i;
        } else if (m != SIM_ZK_FOLLOWER) {
            return 0;
        }
    }
    return leaders == 1;
}

int sim_ensemble_wait(const sim_ensemble *e, long timeout_ms, char *errstr, size_t len)
{
    int64_t deadline = sim_now_ns() + (int64_t)timeout_ms * 1000000;
    int leader;

    while (!settled(e, &leader)) {
        if (sim_now_ns() > deadline)
            return sim_error(errstr, len, "the ZooKeeper ensemble on ports %d-%d elected "
                             "no leader within %ld ms", e->port, e->port + e->nodes - 1,
                             timeout_ms);
        sim_sleep_ms(POLL_MS);
    }
    return leader;
}

/* Like sim_ensemble_wait, but a node that dies ends the wait: 1 when it
 * died for a port another process took, -1 for another reason. */
static int await_start(sim_ensemble *e, char *errstr, size_t len)
{
    int64_t deadline = sim_now_ns() + (int64_t)SIM_ENSEMBLE_START_MS * 1000000;
    int leader, dead = -1;

    while (!settled(e, &leader)) {
        if (reap_dead(e, &dead) != 0)
            return died(e, dead, errstr, len) ? 1 : -1;
        if (sim_now_ns() > deadline)
            return sim_error(errstr, len, "the ZooKeeper ensemble on ports %d-%d elected "
                             "no leader within %d ms", e->port, e->port + e->nodes - 1,
                             SIM_ENSEMBLE_START_MS);
        sim_sleep_ms(POLL_MS);
    }
    return 0;
}

/* Ports for every node: client ports side by side, peer ports anywhere. */
static int pick_ports(sim_ensemble *e, char *errstr, size_t len)
{
    int peers, i;

    if ((e->port = sim_server_free_ports(e->nodes, errstr, len)) < 0 ||
        (peers = sim_server_free_ports(2 * e->nodes, errstr, len)) < 0)
        return -1;
    for (i = 0; i < e->nodes; i++) {
        e->peer_port[i] = peers + 2 * i;
        e->election_port[i] = peers + 2 * i + 1;
    }
    return 0;
}

/* The run's password (password.h), the one its Redis servers ask for
 * too: the ensemble's clients also talk to the run's resource server. */
static int take_password(sim_ensemble *e, char *errstr, size_t len)
{
    if (sim_password_ready(errstr, len) != 0)
        return -1;
    snprintf(e->password, sizeof(e->password), "%s", sim_password());
    return 0;
}

static void quiet(const char *message)
{
    (void)message;
}

/* The server's answers to this process's credentials: a count, not a
 * flag on the caller's stack, which an answer later than the wait would
 * write after it returned. */
static atomic_int auth_answers;

static void auth_answered(int rc, const void *data)
{
    (void)rc;
    atomic_fetch_add((atomic_int *)data, 1);
}

static int credential(zhandle_t *zh, const char *password, void_completion_t done,
                      const void *data)
{
    char cred[SIM_ENSEMBLE_PASSWORD_LEN + 16];
    int n = snprintf(cred, sizeof(cred), "%s:%s", SIM_ENSEMBLE_USER, password);

    return zoo_add_auth(zh, "digest", cred, n, done, data);
}

int sim_ensemble_add_credential(zhandle_t *zh, const char *password)
{
    return credential(zh, password, NULL, NULL);
}

int sim_ensemble_add_auth(zhandle_t *zh, const char *password)
{
    int64_t deadline = sim_now_ns() + (int64_t)LOCK_CONNECT_MS * 1000000;
    int seen = atomic_load(&auth_answers), rc;

    rc = credential(zh, password, auth_answered, &auth_answers);
    /* Until the server has taken the credential: a request the session
     * sends before it would be its first unauthenticated one, and the
     * ensemble closes such a session. */
    while (rc == ZOK && atomic_load(&auth_answers) == seen && sim_now_ns() < deadline)
        sim_sleep_ms(1);
    return rc != ZOK ? rc : atomic_load(&auth_answers) != seen ? ZOK : ZOPERATIONTIMEOUT;
}

/* The ACLs of the root and of ZooKeeper's own nodes become the run's
 * digest id's alone: a session that authenticated with another password
 * (digest accepts any user:password, so enforcing it is not enough) can
 * neither list nor create there. /zookeeper/config stays readable: the
 * server does not let its ACL change. */
static int lock_root(sim_ensemble *e, char *errstr, size_t len)
{
    static const char *const closed[] = { "/", "/zookeeper", "/zookeeper/quota" };
    char hosts[32];
    zhandle_t *zh;
    int rc = ZCONNECTIONLOSS;

    snprintf(hosts, sizeof(hosts), "127.0.0.1:%d", e->port);
    if ((zh = zookeeper_init2(hosts, NULL, LOCK_SESSION_MS, NULL, NULL, 0, quiet)) == NULL)
        return sim_error(errstr, len, "cannot open a ZooKeeper session to %s", hosts);
    if (sim_ensemble_add_auth(zh, e->password) == ZOK) /* connected, and authenticated */
        for (int i = 0; i < 3 && (i == 0 || rc == ZOK); i++)
            rc = zoo_set_acl(zh, closed[i], -1, &ZOO_CREATOR_ALL_ACL);
    zookeeper_close(zh);
    return rc == ZOK ? 0 : sim_error(errstr, len, "closing the root of the ZooKeeper "
                                     "ensemble on %s: %s", hosts, zerror(rc));
}

void sim_ensemble_waker_stop(sim_ensemble *e)
{
    if (e->waker > 0)
        sim_proc_kill(e->waker);
    e->waker = 0;
}

/* One try on one set of ports: 0 ready, 1 a port was taken, -1 failed. */
static int start_once(sim_ensemble *e, char *errstr, size_t len)
{
    char name[32];
    int i;

    if (pick_ports(e, errstr, len) != 0)
        return -1;
    for (i = 0; i < e->nodes; i++) {
        snprintf(name, sizeof(name), "zk%d", i);
        if (launch(e, i, name, errstr, len) != 0)
            return -1;
    }
    return await_start(e, errstr, len);
}

int sim_ensemble_start(sim_ensemble *e, const char *parent_dir, int nodes,
                       char *errstr, size_t len)
{
    return sim_ensemble_start_clock(e, parent_dir, nodes, NULL, errstr, len);
}

int sim_ensemble_start_clock(sim_ensemble *e, const char *parent_dir, int nodes,
                             const char *shim, char *errstr, size_t len)
{
    int attempt, rc = -1;

    memset(e, 0, sizeof(*e));
    e->clock_shim = shim;
    if (nodes < 1 || nodes > SIM_NODES_MAX)
        return sim_error(errstr, len, "an ensemble of %d nodes: give 1 to %d", nodes,
                         SIM_NODES_MAX);
    if (access(SIM_ZK_JAR, R_OK) != 0)
        return sim_error(errstr, len, "ZooKeeper's jar %s is missing: run `make deps`",
                         SIM_ZK_JAR);
    e->nodes = nodes;
    snprintf(e->parent, sizeof(e->parent), "%s", parent_dir);
    if (take_password(e, errstr, len) != 0)
        return -1;
    for (attempt = 0; attempt < START_ATTEMPTS; attempt++) {
        if ((rc = start_once(e, errstr, len)) <= 0)
            break;
        sim_ensemble_stop(e);
        e->nodes = nodes;
    }
    if (rc == 0 && lock_root(e, errstr, len) != 0)
        rc = -1;
    if (rc == 0)
        rc = sim_zk_waker_start(e, errstr, len);
    if (rc != 0)
        sim_ensemble_stop(e);
    return rc == 0 ? 0 : -1;
}

int sim_ensemble_clock_jump(sim_ensemble *e, int i, long ms, char *errstr, size_t len)
{
    if (e->clock_shim == NULL || i < 0 || i >= e->nodes || e->clock_file[i][0] == '\0')
        return sim_error(errstr, len, "ZooKeeper node %d's clock cannot jump: the ensemble "
                         "was not started under the clock library", i);
    return sim_clockfile_jump(e->clock_file[i], ms, errstr, len);
}

void sim_ensemble_down(sim_ensemble *e, int i)
{
    if (i >= 0 && i < e->nodes)
        sim_server_kill(&e->node[i]);
}

/* Node i serves clients again. */
static int serving(const sim_ensemble *e, int i)
{
    sim_zk_mode m = sim_ensemble_mode(e, i);

    return m == SIM_ZK_LEADER || m == SIM_ZK_FOLLOWER;
}

int sim_ensemble_restart(sim_ensemble *e, int i, long timeout_ms, char *errstr,
                         size_t len)
{
    int64_t deadline = sim_now_ns() + (int64_t)timeout_ms * 1000000;
    char name[48];
    int dead = -1;

    if (i < 0 || i >= e->nodes)
        return sim_error(errstr, len, "node %d: the ensemble has %d", i, e->nodes);
    sim_server_kill(&e->node[i]);
    snprintf(name, sizeof(name), "zk%d-restart%d", i, ++e->restarts);
    if (launch(e, i, name, errstr, len) != 0)
        return -1;
    while (!serving(e, i)) {
        if (reap_dead(e, &dead) != 0) {
            died(e, dead, errstr, len);
            return -1;
        }
        if (sim_now_ns() > deadline)
            return sim_error(errstr, len, "ZooKeeper node %d (port %d) did not serve again "
                             "within %ld ms of its restart", i, e->port + i, timeout_ms);
        sim_sleep_ms(POLL_MS);
    }
    return 0;
}

void sim_ensemble_stop(sim_ensemble *e)
{
    int i;

    sim_ensemble_waker_stop(e);
    for (i = 0; i < SIM_NODES_MAX; i++)
        sim_server_stop(&e->node[i]);
    e->nodes = 0;
}
