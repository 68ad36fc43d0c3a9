/* sale: a flash sale played on a Redis Cluster (see sale.h). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libgen.h>
#include <limits.h>
#include <unistd.h>

#include "proc.h"
#include "sale.h"
#include "stage.h"
#include "util.h"

#define POLL_MS 5
#define SALE_TIMEOUT_NS (120LL * 1000000000) /* buyers give up at 90 s */
#define CUT_AFTER 4    /* cut the replica once segment 0 sold a quarter... */
#define KILL_AFTER 2   /* ...and kill its master once it sold half */
#define KILL_WITHIN_MS 500 /* or this long after the cut: the replica is stopped,
                            * and must be back well within the node timeout */
#define PROMOTE_MS 30000
#define ARGS 16

void sim_sale_defaults(sim_sale_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->product = "10001";
    o->units = 1000;
    o->segments = 8;
    o->buyers = 16;
    o->pause_ms = 2;
    o->fault = "none";
    o->seed = 1;
    o->lease_ms = 5000;
    o->wait_ms = 100;
    o->retry_ms = 1;
    o->hold_ms = 1500;
}

static void stock_key(const sim_sale_opts *o, int k, char *out, size_t len)
{
    snprintf(out, len, "{Product:%s:%d}", o->product, k);
}

/* One command on node i; 0, or -1 with errstr. */
static int node_command(sim_rcluster *rc, int i, redisReply **out, char *errstr, size_t len,
                        const char *fmt, const char *a, const char *b)
{
    redisContext *c = sim_rcluster_connect(rc, i, errstr, len);
    redisReply *r;

    if (c == NULL)
        return -1;
    r = redisCommand(c, fmt, a, b);
    if (r == NULL || r->type == REDIS_REPLY_ERROR) {
        sim_error(errstr, len, "node %d: %s: %s", i, fmt, r != NULL ? r->str : c->errstr);
        freeReplyObject(r);
        redisFree(c);
        return -1;
    }
    redisFree(c);
    if (out != NULL)
        *out = r;
    else
        freeReplyObject(r);
    return 0;
}

/* Each segment's slot and master, and its stock set. */
static int stock_up(sim_rcluster *rc, const sim_sale_opts *o, const sim_sale_meta *m,
                    sim_sale_place *place, char *errstr, size_t len)
{
    char key[64], val[32];
    redisReply *r;
    int k;

    for (k = 0; k < o->segments; k++) {
        stock_key(o, k, key, sizeof(key));
        if (node_command(rc, 0, &r, errstr, len, "CLUSTER KEYSLOT %s", key, NULL) != 0)
            return -1;
        place->slot[k] = (int)r->integer;
        freeReplyObject(r);
        if ((place->node[k] = sim_rcluster_master_of(rc, place->slot[k], errstr, len)) < 0)
            return -1;
        snprintf(val, sizeof(val), "%ld", sim_sale_initial_stock(m, k));
        if (node_command(rc, place->node[k], NULL, errstr, len, "SET %s %s", key, val) != 0)
            return -1;
    }
    return 0;
}

/* program with our environment and LOCKSTEP_PASSWORD: the run's
 * password goes in the environment, which only our user can read, not on
 * the command line, which every local user can. */
static pid_t spawn_with_password(const char *program, char *const argv[], const char *password,
                                 char *errstr, size_t len)
{
    char entry[SIM_PASSWORD_LEN + 32], **envp;
    size_t n = 0, k = 0;
    pid_t pid;

    while (environ[n] != NULL)
        n++;
    if ((envp = malloc((n + 2) * sizeof(*envp))) == NULL)
        return sim_error(errstr, len, "out of memory for a buyer's environment");
    snprintf(entry, sizeof(entry), "LOCKSTEP_PASSWORD=%s", password);
    for (n = 0; environ[n] != NULL; n++)
        if (strncmp(environ[n], "LOCKSTEP_PASSWORD=", 18) != 0)
            envp[k++] = environ[n];
    envp[k++] = entry;
    envp[k] = NULL;
    pid = sim_proc_spawn(program, argv, envp, errstr, len);
    free(envp);
    return pid;
}

/* Buyer i as a process of the stage's program. */
static pid_t spawn_buyer(const sim_rcluster *rc, const sim_sale_opts *o, const char *dir, int i,
                         char *errstr, size_t len)
{
    char a[ARGS][160];
    char *argv[ARGS + 2];
    int n = 0, k, off;

    snprintf(a[n++], sizeof(a[0]), "id=%d", i);
    snprintf(a[n++], sizeof(a[0]), "dir=%s", dir);
    off = snprintf(a[n], sizeof(a[0]), "ports=");
    for (k = 0; k < SIM_RCLUSTER_NODES; k++)
        off += snprintf(a[n] + off, sizeof(a[0]) - (size_t)off, "%s%d", k ? "," : "", rc->port[k]);
    n++;
    snprintf(a[n++], sizeof(a[0]), "product=%s", o->product);
    snprintf(a[n++], sizeof(a[0]), "segments=%d", o->segments);
    snprintf(a[n++], sizeof(a[0]), "pause=%ld", o->pause_ms);
    snprintf(a[n++], sizeof(a[0]), "first=%d", o->first);
    snprintf(a[n++], sizeof(a[0]), "seed=%u", o->seed);
    snprintf(a[n++], sizeof(a[0]), "lease=%ld", o->lease_ms);
    snprintf(a[n++], sizeof(a[0]), "wait=%ld", o->wait_ms);
    snprintf(a[n++], sizeof(a[0]), "retry=%ld", o->retry_ms);
    snprintf(a[n++], sizeof(a[0]), "hold_at=%d", i == 0 && strcmp(o->fault, "pause") == 0 ? 3 : 0);
    snprintf(a[n++], sizeof(a[0]), "hold=%ld", o->hold_ms);
    argv[0] = (char *)o->buyer;
    for (k = 0; k < n; k++)
        argv[k + 1] = a[k];
    argv[n + 1] = NULL;
    return spawn_with_password(o->buyer, argv, rc->password, errstr, len);
}

/* The failover's state, stepped while the buyers run. */
typedef struct nemesis {
    int master, replica, step; /* step: 0 waiting, 1 cut, 2 killed, 3 promoted */
    int64_t cut_ns;
    long initial;
    FILE *log;
} nemesis;

static long segment0_stock(sim_rcluster *rc, const sim_sale_opts *o, int node)
{
    char key[64], e[128];
    redisReply *r;
    long v = -1;

    stock_key(o, 0, key, sizeof(key));
    if (node_command(rc, node, &r, e, sizeof(e), "GET %s", key, NULL) == 0) {
        v = r->type == REDIS_REPLY_STRING ? atol(r->str) : -1;
        freeReplyObject(r);
    }
    return v;
}

static int nemesis_step(sim_rcluster *rc, const sim_sale_opts *o, nemesis *n,
                        const sim_sale_place *place, char *errstr, size_t len)
{
    long left;

    if (n->step == 0) {
        left = segment0_stock(rc, o, n->master);
        if (left < 0 || left > n->initial - n->initial / CUT_AFTER)
            return 0;
        if (sim_rcluster_cut_replica(rc, n->master, n->replica, errstr, len) != 0)
            return -1;
        sim_sale_log_event(n->log, -1, 0, 'F', SIM_SALE_FAULT_CUT);
        n->cut_ns = sim_sale_now_ns();
        n->step = 1;
    } else if (n->step == 1) {
        left = segment0_stock(rc, o, n->master);
        if (left > n->initial / KILL_AFTER &&
            sim_sale_now_ns() - n->cut_ns < KILL_WITHIN_MS * 1000000LL)
            return 0;
        sim_rcluster_kill(rc, n->master);
        sim_sale_log_event(n->log, -1, 0, 'F', SIM_SALE_FAULT_KILL);
        sim_rcluster_resume(rc, n->replica);
        n->step = 2;
    } else if (n->step == 2) {
        if (sim_rcluster_wait_failover(rc, place->slot[0], n->master, PROMOTE_MS, errstr, len) < 0)
            return -1;
        sim_sale_log_event(n->log, -1, 0, 'F', SIM_SALE_FAULT_PROMOTED);
        fflush(n->log);
        n->step = 3;
    }
    return 0;
}

/* Buyer i's end, when it ended; a buyer that did not exit 0 is told in
 * the history (the judge counts it: its steps stop there). */
static int ended(pid_t *pid, int i, FILE *deaths)
{
    int status = 0;
    sim_proc_state st = pid[i] > 0 ? sim_proc_poll(pid[i], &status) : SIM_PROC_RUNNING;

    if (st < SIM_PROC_EXITED)
        return 0;
    pid[i] = 0;
    if (st == SIM_PROC_KILLED || status != 0)
        sim_sale_log_event(deaths, i, 0, 'D', st == SIM_PROC_KILLED ? 128 + status : status);
    return 1;
}

/* Waits for every buyer, stepping the nemesis meanwhile. */
static int wait_buyers(sim_rcluster *rc, const sim_sale_opts *o, pid_t *pid, nemesis *n,
                       const sim_sale_place *place, FILE *deaths, char *errstr, size_t len)
{
    int64_t start = sim_sale_now_ns();
    int left = o->buyers, i, failed = 0;

    while (left > 0) {
        for (i = 0; i < o->buyers; i++)
            left -= ended(pid, i, deaths);
        if (n != NULL && failed == 0 && nemesis_step(rc, o, n, place, errstr, len) != 0)
            failed = -1;
        if (sim_sale_now_ns() - start > SALE_TIMEOUT_NS) {
            for (i = 0; i < o->buyers; i++)
                sim_proc_kill(pid[i]);
            return sim_error(errstr, len, "the buyers did not finish within %lld s",
                             SALE_TIMEOUT_NS / 1000000000);
        }
        sim_sleep_ms(POLL_MS);
    }
    return failed;
}

static int start_nemesis(sim_rcluster *rc, const sim_sale_meta *m,
                         const sim_sale_place *place, const char *dir, nemesis *n,
                         char *errstr, size_t len)
{
    char path[SIM_PATH_LEN + 32];

    memset(n, 0, sizeof(*n));
    n->master = place->node[0];
    n->initial = sim_sale_initial_stock(m, 0);
    if ((n->replica = sim_rcluster_replica_of(rc, n->master, errstr, len)) < 0)
        return -1;
    snprintf(path, sizeof(path), "%s/nemesis.log", dir);
    if ((n->log = fopen(path, "w")) == NULL)
        return sim_error(errstr, len, "cannot write %s", path);
    return 0;
}

/* Runs the buyers (and the nemesis), then merges their logs into out. */
static int run(sim_rcluster *rc, const sim_sale_opts *o, const sim_sale_meta *m,
               const sim_sale_place *place, const char *dir, const char *out,
               char *errstr, size_t len)
{
    pid_t pid[SIM_SALE_MAX_BUYERS] = { 0 };
    char paths[SIM_SALE_MAX_BUYERS + 2][SIM_PATH_LEN + 32];
    const char *files[SIM_SALE_MAX_BUYERS + 2];
    nemesis n, *nem = NULL;
    FILE *deaths;
    int i, res = 0;

    snprintf(paths[o->buyers + 1], sizeof(paths[0]), "%s/deaths.log", dir);
    if ((deaths = fopen(paths[o->buyers + 1], "w")) == NULL)
        return sim_error(errstr, len, "cannot write %s", paths[o->buyers + 1]);

    if (strcmp(o->fault, "failover") == 0) {
        if (start_nemesis(rc, m, place, dir, &n, errstr, len) != 0)
            return -1;
        nem = &n;
    }
    for (i = 0; i < o->buyers && res == 0; i++)
        if ((pid[i] = spawn_buyer(rc, o, dir, i, errstr, len)) < 0)
            res = -1;
    if (res == 0)
        res = wait_buyers(rc, o, pid, nem, place, deaths, errstr, len);
    for (i = 0; i < o->buyers; i++)
        sim_proc_kill(pid[i]);
    fclose(deaths);
    if (nem != NULL)
        fclose(nem->log);
    for (i = 0; i <= o->buyers; i++) {
        if (i < o->buyers)
            snprintf(paths[i], sizeof(paths[i]), "%s/buyer-%d.log", dir, i);
        else
            snprintf(paths[i], sizeof(paths[i]), "%s/nemesis.log", dir);
        files[i] = paths[i];
    }
    files[o->buyers + 1] = paths[o->buyers + 1];
    if (res == 0)
        res = sim_sale_log_merge(m, files, o->buyers + 2, out, errstr, len);
    return res;
}

int sim_sale_play(sim_rcluster *rc, const sim_sale_opts *o, sim_sale_verdict *v,
                  sim_sale_place *place, char *errstr, size_t len)
{
    char dir[SIM_PATH_LEN], out[SIM_PATH_LEN + 16];
    sim_sale_meta m = { o->units, o->segments, o->buyers, o->stage, o->pause_ms, o->first,
                        "", 0 };
    sim_sale_log log;
    int res;

    snprintf(m.fault, sizeof(m.fault), "%s", o->fault);
    memset(place, 0, sizeof(*place));
    if (sim_tempdir_create(dir, sizeof(dir), errstr, len) != 0)
        return -1;
    snprintf(out, sizeof(out), "%s/history", dir);
    res = stock_up(rc, o, &m, place, errstr, len);
    m.t0_ns = sim_sale_now_ns();
    if (res == 0)
        res = run(rc, o, &m, place, dir, o->save != NULL ? o->save : out, errstr, len);
    if (res == 0 && (res = sim_sale_log_load(&log, o->save != NULL ? o->save : out, errstr,
                                             len)) == 0) {
        sim_sale_judge(&log, v);
        sim_sale_log_free(&log);
    }
    sim_tempdir_remove(dir);
    return res;
}

/* A segment's lock must be one Redis key on one master: a stage whose
 * line in stages.def says redis, 1. */
static int can_lock_segment(const sim_stage *st)
{
    return st != NULL && strcmp(st->server, "redis") == 0 && st->masters == 1;
}

int sim_sale_stage_ok(int n, const char *self, char *buyer, size_t len, char *errstr,
                      size_t errlen)
{
    const sim_stage *st = sim_stage_get(n);
    char copy[PATH_MAX], ok[128] = "";
    int i;

    if (!can_lock_segment(st)) {
        for (i = 1; i <= SIM_STAGES; i++)
            if (can_lock_segment(sim_stage_get(i)))
                snprintf(ok + strlen(ok), sizeof(ok) - strlen(ok), "%s%d", ok[0] ? ", " : "", i);
        return sim_error(errstr, errlen, "stage=%d cannot lock a segment: its lock %s; a "
                         "segment's lock is one Redis key on one master: stages %s", n,
                         st == NULL ? "does not exist" : strcmp(st->server, "redis") != 0
                         ? "lives in a ZooKeeper ensemble"
                         : "takes a majority of independent masters", ok);
    }
    snprintf(copy, sizeof(copy), "%s", self);
    snprintf(buyer, len, "%s/../v%d/buyer", dirname(copy), n);
    return 0;
}
