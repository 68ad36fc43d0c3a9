/* bench_measure: one stage in one run: its commands, its limit, its
 * uncontended rate and its contended figures, from the stage's own client
 * processes (a fleet) and what the server and the history say. See
 * bench.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "fleet.h"
#include "resource.h"
#include "tally.h"
#include "util.h"

#define LOCK_NAME "lockstep:bench"
#define HISTORY_ROOM (SIM_HISTORY_MAX / 10 * 9) /* the window ends here: the
                                 * clients' last calls after it need room */
#define WINDOW_POLL_MS 10    /* how often we look at the history's size */
#define READY_TIMEOUT_MS 20000 /* client programs up (sanitizer builds are slow) */
#define JOIN_TIMEOUT_MS 20000  /* clients done after the stop flag */
#define POLL_US 1000         /* how often we look at the client during a batch */
#define ERR_LEN 512

static double seconds(int64_t ns)
{
    return (double)ns / 1e9;
}

/* ---- the stage's clients ------------------------------------------------------------ */

/* The lock's name in the stage's run. A ZooKeeper stage's own: v11's
 * container of a run before lives on for a while (the server deletes an
 * empty one within a minute), and at v10's path it would be taken. */
static void lock_name(int stage, char *out, size_t len)
{
    if (sim_bench_zookeeper(stage))
        snprintf(out, len, "%s-v%d", LOCK_NAME, stage);
    else
        snprintf(out, len, "%s", LOCK_NAME);
}

/* Where the stage's clients find the lock's servers: the first of the
 * bench's Redis nodes, or the ensemble; an uncontended ZooKeeper client
 * gets one follower as its ensemble, the server the replay talks to. */
static void fill_nodes(sim_bench *b, sim_control *ctl, int stage, int kind)
{
    int i;

    ctl->nodes = sim_stage_get(stage)->masters;
    if (sim_bench_zookeeper(stage))
        snprintf(ctl->password, sizeof(ctl->password), "%s", b->ens.password);
    if (sim_bench_zookeeper(stage) && kind == SIM_PLAN_BENCH_SOLO) {
        ctl->nodes = 1;
        atomic_store(&ctl->node_port[0], b->ens.port + b->zk_follower);
        return;
    }
    for (i = 0; i < ctl->nodes; i++)
        atomic_store(&ctl->node_port[i], sim_bench_zookeeper(stage) ? b->ens.port + i
                                                                    : b->cl.node[i].port);
}

/* The stage's nodes, with the stage's own node timeout: what a user
 * gets. */
static void fill_control(sim_bench *b, sim_control *ctl, int stage, int kind)
{
    int i;

    lock_name(stage, ctl->lock_name, sizeof(ctl->lock_name));
    ctl->lease_ms = SIM_BENCH_LEASE_MS;
    ctl->retry_ms = SIM_BENCH_RETRY_MS;
    ctl->timeout_ms = sim_bench_zookeeper(stage) ? SIM_BENCH_ZK_TIMEOUT_MS
                                                 : SIM_BENCH_TIMEOUT_MS;
    ctl->resource_port = b->cl.resource.port;
    fill_nodes(b, ctl, stage, kind);
    for (i = 0; i < ctl->nclients; i++) {
        ctl->client[i].plan.kind = kind;
        ctl->client[i].plan.wait_ms = SIM_BENCH_WAIT_MS;
        ctl->client[i].plan.lease_ms = SIM_BENCH_LEASE_MS;
    }
}

/* A fleet of n processes of the stage's client program, each with a plan
 * of this kind, ready and waiting for its start flag. */
static int fleet_start(sim_bench *b, sim_fleet *f, int stage, int kind, int n,
                       char *errstr, size_t len)
{
    char program[PATH_MAX + 32], name[32];

    snprintf(name, sizeof(name), "bench-%d", ++b->sessions);
    snprintf(program, sizeof(program), "%s/v%d/client", b->build_dir, stage);
    if (sim_fleet_create(f, b->cl.dir, name, n, errstr, len) != 0)
        return -1;
    fill_control(b, f->ctl, stage, kind);
    if (sim_fleet_spawn(f, program, NULL, errstr, len) != 0)
        return -1;
    return sim_fleet_ready(f, READY_TIMEOUT_MS, errstr, len);
}

/* Hands an uncontended client a batch of n pairs and waits until it has
 * done them; *ns gets the time the client took, measured by itself. We
 * look once a millisecond, as the idle client does during our replay, so
 * each side's slices bear the same small cost of the other's polling. */
static int batch(sim_fleet *f, long long n, int64_t *ns, char *errstr, size_t len)
{
    sim_client_slot *slot = &f->ctl->client[0];
    long long target = atomic_load(&slot->bench_target) + n;
    int64_t before = atomic_load(&slot->bench_ns), start = sim_now_ns();
    int running;

    atomic_store(&slot->bench_target, target);
    while (atomic_load(&slot->bench_done) < target) {
        if ((running = sim_fleet_poll(f, NULL, errstr, len)) < 0)
            return -1;
        if (running == 0)
            return sim_error(errstr, len, "the client ended in a batch");
        if ((sim_now_ns() - start) / 1000000 > JOIN_TIMEOUT_MS)
            return sim_error(errstr, len, "the client did not finish %lld pairs in %d ms",
                             n, JOIN_TIMEOUT_MS);
        usleep(POLL_US);
    }
    *ns = atomic_load(&slot->bench_ns) - before;
    return 0;
}

/* One uncontended client of the stage, started and waiting for batches. */
static int solo_start(sim_bench *b, sim_fleet *f, int stage, char *errstr, size_t len)
{
    if (fleet_start(b, f, stage, SIM_PLAN_BENCH_SOLO, 1, errstr, len) != 0)
        return -1;
    sim_fleet_go_all(f);
    return 0;
}

/* A new client of the stage does n pairs and exits. */
static int run_pairs(sim_bench *b, int stage, long long n, char *errstr, size_t len)
{
    int64_t ns;
    sim_fleet f;
    int rc;

    rc = solo_start(b, &f, stage, errstr, len);
    if (rc == 0)
        rc = batch(&f, n, &ns, errstr, len);
    if (rc == 0)
        rc = sim_fleet_stop(&f, JOIN_TIMEOUT_MS, errstr, len);
    sim_fleet_end(&f);
    return rc;
}

/* ---- capture: the stage's commands ------------------------------------------------- */

/* A first pair warms the server (a script stage's NOSCRIPT and EVAL
 * happen there), then two pairs of a new client are logged. */
static int capture(sim_bench *b, int stage, sim_bench_pair *t, char *errstr, size_t len)
{
    char ignored[ERR_LEN];
    int rc;

    if (run_pairs(b, stage, 1, errstr, len) != 0 ||
        sim_bench_slowlog_on(b, errstr, len) != 0)
        return -1;
    rc = run_pairs(b, stage, 2, errstr, len);
    if (rc == 0)
        rc = sim_bench_slowlog_pair(b, t, errstr, len);
    /* Off in any case; its own error matters only when nothing failed. */
    if (sim_bench_slowlog_off(b, rc == 0 ? errstr : ignored,
                              rc == 0 ? len : sizeof(ignored)) != 0) {
        sim_bench_pair_free(t);
        rc = -1;
    }
    return rc;
}

/* A ZooKeeper stage's pair is written down (bench_zk.c); its length is
 * checked against what the servers got from a new client of the stage:
 * one warm pair first (the parent nodes, the servers' first requests),
 * then SIM_BENCH_ZK_PAIRS in one session, its open and close left out. */
static int capture_zk(sim_bench *b, int stage, sim_bench_stage *sr, char *errstr, size_t len)
{
    char name[SIM_LOCK_NAME_LEN];
    sim_mntr before, after;
    sim_mntr_delta d;

    lock_name(stage, name, sizeof(name));
    if (sim_bench_zk_pair(stage, name, &sr->pair, errstr, len) != 0 ||
        run_pairs(b, stage, 1, errstr, len) != 0 ||
        sim_bench_zk_counts(b, &before, errstr, len) != 0 ||
        run_pairs(b, stage, SIM_BENCH_ZK_PAIRS, errstr, len) != 0 ||
        sim_bench_zk_counts(b, &after, errstr, len) != 0 ||
        sim_mntr_delta_of(&before, &after, &d, errstr, len) != 0)
        return -1;
    sr->requests_seen = (double)d.requests / SIM_BENCH_ZK_PAIRS;
    if (d.sessions != 1 || lround(sr->requests_seen) != sr->pair.n)
        return sim_error(errstr, len, "%d pairs of one client: %lld session(s), %lld requests "
                         "(%.2f a pair), where the bench replays %d a pair: make "
                         "sim/bench/bench_zk.c send what the stage's lock.c sends",
                         SIM_BENCH_ZK_PAIRS, d.sessions, d.requests, sr->requests_seen,
                         sr->pair.n);
    return 0;
}

/* ---- limit: the commands alone ----------------------------------------------------- */

/* What the replay sends on: a connection per node (Redis), or one
 * ZooKeeper session (zk.zh set). */
typedef struct lines {
    redisContext *c[SIM_NODES_MAX];
    int n;
    sim_bench_zk zk;
} lines;

/* One command on every line: written to all of them first (nothing is
 * sent until the first read flushes each), then each one's reply. */
static int replay_command(lines *ls, const sim_bench_command *cmd, char *errstr, size_t len)
{
    redisReply *r;
    int i, rc = 0;

    for (i = 0; i < ls->n; i++) {
        if (redisAppendCommandArgv(ls->c[i], cmd->argc, (const char **)cmd->argv,
                                   cmd->len) != REDIS_OK)
            return sim_error(errstr, len, "replaying %s: out of memory", cmd->argv[0]);
    }
    for (i = 0; i < ls->n; i++) {
        int done = 0;

        while (!done && redisBufferWrite(ls->c[i], &done) == REDIS_OK)
            ;
    }
    for (i = 0; i < ls->n; i++) {
        r = NULL;
        if (redisGetReply(ls->c[i], (void **)&r) != REDIS_OK || r->type == REDIS_REPLY_ERROR)
            rc = rc ? rc : sim_error(errstr, len, "replaying %s: %s", cmd->argv[0],
                                     r == NULL ? ls->c[i]->errstr : r->str);
        freeReplyObject(r);
    }
    return rc;
}

/* One pass over the pair's commands; each one's time added to ns[]. */
static int replay_once(lines *ls, const sim_bench_pair *t, int64_t *ns,
                       char *errstr, size_t len)
{
    int i;

    if (ls->zk.zh != NULL)
        return sim_bench_zk_replay(&ls->zk, t, ns, errstr, len);
    for (i = 0; i < t->n; i++) {
        int64_t start = sim_now_ns();
        int rc = replay_command(ls, &t->cmd[i], errstr, len);

        ns[i] += sim_now_ns() - start;
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* The pair replayed for ms: pairs done, their time, each command's. */
static int replay(lines *ls, const sim_bench_pair *t, long ms, long long *pairs,
                  int64_t *elapsed, int64_t *ns, char *errstr, size_t len)
{
    int64_t start = sim_now_ns(), end = start;

    *pairs = 0;
    while (end - start < ms * 1000000LL) {
        if (replay_once(ls, t, ns, errstr, len) != 0)
            return -1;
        ++*pairs;
        end = sim_now_ns();
    }
    *elapsed = end - start;
    return 0;
}

/* Each slice's rates, and the time each command took in all of them. */
typedef struct slices {
    int n;
    double replay[SIM_BENCH_SLICES], stage[SIM_BENCH_SLICES]; /* pairs/s */
    double ratio[SIM_BENCH_SLICES];   /* stage / replay, slice by slice */
    long long pairs;
    int64_t cmd_ns[SIM_BENCH_SEQ_MAX];
} slices;

/* A slice of the replay, then as many pairs through the stage. */
static int slice(lines *ls, sim_fleet *f, const sim_bench_pair *t, long ms,
                 slices *sl, char *errstr, size_t len)
{
    long long pairs;
    int64_t replay_ns, stage_ns;

    if (replay(ls, t, ms, &pairs, &replay_ns, sl->cmd_ns, errstr, len) != 0 ||
        batch(f, pairs, &stage_ns, errstr, len) != 0)
        return -1;
    sl->replay[sl->n] = pairs / seconds(replay_ns);
    sl->stage[sl->n] = pairs / seconds(stage_ns);
    sl->ratio[sl->n] = sl->stage[sl->n] / sl->replay[sl->n];
    sl->n++;
    sl->pairs += pairs;
    return 0;
}

/* The replay's connections: one per node of a Redis stage, or one
 * session to the follower the stage's uncontended client talks to. */
static int lines_open(sim_bench *b, int stage, lines *ls, char *errstr, size_t len)
{
    memset(ls, 0, sizeof(*ls));
    if (sim_bench_zookeeper(stage))
        return sim_bench_zk_open(&ls->zk, b->ens.port + b->zk_follower, b->ens.password,
                                 SIM_BENCH_ZK_TIMEOUT_MS, errstr, len);
    for (ls->n = 0; ls->n < sim_stage_get(stage)->masters; ls->n++) {
        ls->c[ls->n] = sim_server_connect(&b->cl.node[ls->n], SIM_BENCH_TIMEOUT_MS, errstr, len);
        if (ls->c[ls->n] == NULL)
            return -1;
    }
    return 0;
}

static void lines_close(lines *ls)
{
    int i;

    for (i = 0; i < ls->n; i++)
        redisFree(ls->c[i]);
    sim_bench_zk_close(&ls->zk);
}

/* The limit and the stage in alternating slices: the commands replayed
 * raw on a connection like the stage's, then the same number of pairs by
 * the stage's own client, and again. A slow stretch of the machine (on a
 * virtual machine a slice now and then runs at a fifth of the speed)
 * skews a slice or two: the medians leave them out. The ratio is taken
 * slice by slice, so a drift slower than a slice cancels in it. */
static int uncontended(sim_bench *b, int stage, sim_bench_stage *sr, char *errstr, size_t len)
{
    int zk = sim_bench_zookeeper(stage), i, rc;
    long warm_ms = zk ? SIM_BENCH_ZK_WARM_MS : SIM_BENCH_WARM_MS;
    long slice_ms = zk ? SIM_BENCH_ZK_SLICE_MS : SIM_BENCH_SLICE_MS;
    lines ls;
    slices sl;
    sim_fleet f;

    memset(&sl, 0, sizeof(sl));
    memset(&f, 0, sizeof(f));
    rc = lines_open(b, stage, &ls, errstr, len);
    if (rc == 0)
        rc = solo_start(b, &f, stage, errstr, len);
    if (rc == 0)
        rc = slice(&ls, &f, &sr->pair, warm_ms, &sl, errstr, len);
    memset(&sl, 0, sizeof(sl));
    for (i = 0; i < SIM_BENCH_SLICES && rc == 0; i++)
        rc = slice(&ls, &f, &sr->pair, slice_ms, &sl, errstr, len);
    if (rc == 0)
        rc = sim_fleet_stop(&f, JOIN_TIMEOUT_MS, errstr, len);
    sim_fleet_end(&f);
    lines_close(&ls);
    if (rc != 0)
        return -1;
    sr->fig[SIM_BENCH_LIMIT] = sim_tally_median(sl.replay, sl.n);
    sr->fig[SIM_BENCH_SOLO] = sim_tally_median(sl.stage, sl.n);
    sr->fig[SIM_BENCH_RATIO] = sim_tally_median(sl.ratio, sl.n);
    for (i = 0; i < sr->pair.n; i++)
        sr->cmd_rate[i] = sl.cmd_ns[i] > 0 ? sl.pairs / seconds(sl.cmd_ns[i]) : NAN;
    return 0;
}

/* ---- contended: 8 clients, the history ------------------------------------------------ */

/* The history's figures, from the tally (tally.h). */
static int analyse(const sim_fleet *f, int64_t go, int64_t stop, sim_bench_stage *sr,
                   char *errstr, size_t len)
{
    sim_tally_window w = { go, stop, f->n, sr->counter };
    sim_tally t;
    sim_event *ev;
    size_t n;
    int rc;

    if (atomic_load(&f->h->reserved) > SIM_HISTORY_MAX)
        return sim_error(errstr, len, "the history is full (%d events): shorten SIM_BENCH_WINDOW_MS",
                         SIM_HISTORY_MAX);
    if ((ev = sim_history_snapshot(f->h, &n)) == NULL)
        return sim_error(errstr, len, "out of memory for the history");
    rc = sim_tally_history(ev, n, &w, &t, errstr, len);
    free(ev);
    if (rc != 0)
        return -1;
    sr->acquisitions = t.acquisitions;
    sr->lost = t.lost;
    sr->busy = t.busy;
    sr->errors = t.errors;
    sr->fig[SIM_BENCH_ACQ_RATE] = t.rate;
    sr->fig[SIM_BENCH_HANDOFF_P50] = t.handoff_p50_ms;
    sr->fig[SIM_BENCH_HANDOFF_P99] = t.handoff_p99_ms;
    sr->fig[SIM_BENCH_WAIT_P50] = t.wait_p50_ms;
    sr->fig[SIM_BENCH_WAIT_P99] = t.wait_p99_ms;
    sr->fig[SIM_BENCH_WAIT_MAX] = t.wait_max_ms;
    sr->fig[SIM_BENCH_REWON] = t.rewon_share;
    sr->fig[SIM_BENCH_LEAST] = (double)t.least;
    sr->fig[SIM_BENCH_MOST] = (double)t.most;
    return 0;
}

/* The window itself: go, wait, stop, and every client out. A machine
 * fast enough to fill the history (four events per acquisition) gets a
 * shorter window; the rates are per second of the window it got. The
 * servers start counting before go: Redis's SLOWLOG logs from an empty
 * log, a ZooKeeper ensemble's counters are read into *zk. */
static int window(sim_bench *b, int stage, sim_fleet *f, sim_mntr *zk, int64_t *go,
                  int64_t *stop, char *errstr, size_t len)
{
    if (sim_bench_zookeeper(stage) ? sim_bench_zk_counts(b, zk, errstr, len) != 0
                                   : sim_bench_slowlog_on(b, errstr, len) != 0)
        return -1;
    *go = sim_fleet_go_all(f);
    while (sim_now_ns() - *go < SIM_BENCH_WINDOW_MS * 1000000LL &&
           atomic_load(&f->h->reserved) < HISTORY_ROOM)
        sim_sleep_ms(WINDOW_POLL_MS);
    *stop = sim_now_ns();
    return sim_fleet_stop(f, JOIN_TIMEOUT_MS, errstr, len);
}

/* What Redis counted in the window: the round trips and unlock messages
 * from the SLOWLOG, the commands run from commandstats (before: their
 * count when the window began). */
static int redis_counts(sim_bench *b, sim_bench_stage *sr, long long before, char *errstr,
                        size_t len)
{
    long long after = 0, internal = 0;

    if (sim_bench_slowlog_count(b, &sr->round_trips, &internal, errstr, len) != 0 ||
        sim_bench_slowlog_messages(b, &sr->published, &sr->delivered, errstr, len) != 0 ||
        sim_bench_slowlog_off(b, errstr, len) != 0 ||
        sim_bench_commandstats(b, &after, errstr, len) != 0)
        return -1;
    sr->commands = after - before;
    return 0;
}

/* What the ensemble counted since *before: every client exited, so each
 * session was opened and closed in between. */
static int zk_counts(sim_bench *b, sim_bench_stage *sr, const sim_mntr *before,
                     char *errstr, size_t len)
{
    sim_mntr after;
    sim_mntr_delta d;

    if (sim_bench_zk_counts(b, &after, errstr, len) != 0 ||
        sim_mntr_delta_of(before, &after, &d, errstr, len) != 0)
        return -1;
    sr->round_trips = d.requests;
    sr->sessions = d.sessions;
    sr->watches = d.watches;
    return 0;
}

/* Per acquisition: requests, commands run (Redis), and the waiters woken
 * per unlock message (Redis) or per release (ZooKeeper: each acquisition
 * is released once). */
static void per_acquisition(int stage, sim_bench_stage *sr)
{
    double acq = sr->acquisitions > 0 ? (double)sr->acquisitions : NAN;

    sr->fig[SIM_BENCH_RTT_ACQ] = sr->round_trips / acq;
    if (sim_bench_zookeeper(stage)) {
        sr->fig[SIM_BENCH_DELIVERED] = sr->watches / acq;
        return;
    }
    sr->fig[SIM_BENCH_CMDS_ACQ] = sr->commands / acq;
    sr->fig[SIM_BENCH_DELIVERED] = sr->published ? (double)sr->delivered / sr->published : NAN;
}

/* The counter starts at 0; what it says afterwards is what the clients
 * did, lost updates aside. */
static int contended(sim_bench *b, int stage, sim_bench_stage *sr, char *errstr, size_t len)
{
    int zk = sim_bench_zookeeper(stage), rc;
    sim_mntr zk_before;
    long long before = 0;
    int64_t go = 0, stop = 0;
    sim_fleet f;

    if (sim_resource_set(b->res, SIM_COUNTER_KEY, 0, errstr, len) != 0 ||
        (!zk && sim_bench_commandstats(b, &before, errstr, len) != 0))
        return -1;
    rc = fleet_start(b, &f, stage, SIM_PLAN_BENCH_RMW, SIM_BENCH_CONTENDERS, errstr, len);
    if (rc == 0)
        rc = window(b, stage, &f, &zk_before, &go, &stop, errstr, len);
    if (rc == 0)
        rc = zk ? zk_counts(b, sr, &zk_before, errstr, len)
                : redis_counts(b, sr, before, errstr, len);
    if (rc == 0 &&
        (rc = sim_resource_get(b->res, SIM_COUNTER_KEY, &sr->counter, errstr, len)) == 0)
        rc = analyse(&f, go, stop, sr, errstr, len);
    sim_fleet_end(&f);
    if (rc != 0)
        return -1;
    sr->window_ms = (double)(stop - go) / 1e6;
    per_acquisition(stage, sr);
    return 0;
}

/* ---- one stage, one run ----------------------------------------------------------- */

/* No key left behind; with scripts, no cached script either: each stage
 * starts on clean servers, and its first pair loads what it needs. */
static int reset(sim_bench *b, int scripts, char *errstr, size_t len)
{
    int i;

    for (i = 0; i < b->cl.nodes; i++) {
        if (sim_bench_tell(b->adm[i], errstr, len, "FLUSHALL %s", "SYNC") != 0 ||
            (scripts && sim_bench_tell(b->adm[i], errstr, len, "SCRIPT FLUSH %s", "SYNC") != 0))
            return -1;
    }
    return 0;
}

/* The three measurements; on an error, errstr says which stage. */
static int measure(sim_bench *b, int run, int stage, sim_bench_stage *sr,
                   char *errstr, size_t len)
{
    /* A ZooKeeper stage's nodes go with their sessions: nothing to reset. */
    int zk = sim_bench_zookeeper(stage);

    sim_bench_progress(b, run, stage, "capture");
    if (zk ? capture_zk(b, stage, sr, errstr, len) != 0
           : reset(b, 1, errstr, len) != 0 || capture(b, stage, &sr->pair, errstr, len) != 0)
        return -1;
    sim_bench_progress(b, run, stage, "uncontended");
    if ((!zk && reset(b, 0, errstr, len) != 0) || uncontended(b, stage, sr, errstr, len) != 0)
        return -1;
    sim_bench_progress(b, run, stage, "contended");
    if ((!zk && reset(b, 0, errstr, len) != 0) || contended(b, stage, sr, errstr, len) != 0)
        return -1;
    return 0;
}

int sim_bench_measure(sim_bench *b, int run, int stage, char *errstr,
                      size_t len)
{
    sim_bench_stage *sr = &b->result[run][stage - 1];
    char why[ERR_LEN];
    int f;

    for (f = 0; f < SIM_BENCH_FIGURES; f++)
        sr->fig[f] = NAN;
    if (measure(b, run, stage, sr, why, sizeof(why)) != 0)
        return sim_error(errstr, len, "v%d: %s", stage, why);
    sr->done = 1;
    return 0;
}
