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

/* The stage's nodes (the first of the bench's), with the stage's own
 * node timeout: what a user gets. */
static void fill_control(sim_bench *b, sim_control *ctl, int stage, int kind)
{
    int i;

    snprintf(ctl->lock_name, sizeof(ctl->lock_name), "%s", LOCK_NAME);
    ctl->lease_ms = SIM_BENCH_LEASE_MS;
    ctl->retry_ms = SIM_BENCH_RETRY_MS;
    ctl->timeout_ms = SIM_BENCH_TIMEOUT_MS;
    ctl->resource_port = b->cl.resource.port;
    ctl->nodes = sim_stage_get(stage)->masters;
    for (i = 0; i < ctl->nodes; i++)
        atomic_store(&ctl->node_port[i], b->cl.node[i].port);
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

/* ---- limit: the commands alone ----------------------------------------------------- */

/* The connections the replay sends a command on: one per node. */
typedef struct lines {
    redisContext *c[SIM_NODES_MAX];
    int n;
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

/* The limit and the stage in alternating slices: the commands replayed
 * raw on a connection like the stage's, then the same number of pairs by
 * the stage's own client, and again. A slow stretch of the machine (on a
 * virtual machine a slice now and then runs at a fifth of the speed)
 * skews a slice or two: the medians leave them out. The ratio is taken
 * slice by slice, so a drift slower than a slice cancels in it. */
static int uncontended(sim_bench *b, int stage, sim_bench_stage *sr, char *errstr, size_t len)
{
    lines ls = { { NULL }, sim_stage_get(stage)->masters };
    slices sl;
    sim_fleet f;
    int i, rc = 0;

    for (i = 0; i < ls.n && rc == 0; i++) {
        ls.c[i] = sim_server_connect(&b->cl.node[i], SIM_BENCH_TIMEOUT_MS, errstr, len);
        rc = ls.c[i] == NULL ? -1 : 0;
    }
    memset(&sl, 0, sizeof(sl));
    memset(&f, 0, sizeof(f));
    if (rc == 0)
        rc = solo_start(b, &f, stage, errstr, len);
    if (rc == 0)
        rc = slice(&ls, &f, &sr->pair, SIM_BENCH_WARM_MS, &sl, errstr, len);
    memset(&sl, 0, sizeof(sl));
    for (i = 0; i < SIM_BENCH_SLICES && rc == 0; i++)
        rc = slice(&ls, &f, &sr->pair, SIM_BENCH_SLICE_MS, &sl, errstr, len);
    if (rc == 0)
        rc = sim_fleet_stop(&f, JOIN_TIMEOUT_MS, errstr, len);
    sim_fleet_end(&f);
    for (i = 0; i < ls.n; i++)
        redisFree(ls.c[i]);
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
 * shorter window; the rates are per second of the window it got. */
static int window(sim_bench *b, sim_fleet *f, int64_t *go, int64_t *stop,
                  char *errstr, size_t len)
{
    if (sim_bench_slowlog_on(b, errstr, len) != 0)
        return -1;
    *go = sim_fleet_go_all(f);
    while (sim_now_ns() - *go < SIM_BENCH_WINDOW_MS * 1000000LL &&
           atomic_load(&f->h->reserved) < HISTORY_ROOM)
        sim_sleep_ms(WINDOW_POLL_MS);
    *stop = sim_now_ns();
    return sim_fleet_stop(f, JOIN_TIMEOUT_MS, errstr, len);
}

/* The counter starts at 0; what it says afterwards is what the clients
 * did, lost updates aside. */
static int contended(sim_bench *b, int stage, sim_bench_stage *sr, char *errstr, size_t len)
{
    long long before = 0, after = 0, internal = 0;
    int64_t go = 0, stop = 0;
    sim_fleet f;
    int rc;

    if (sim_resource_set(b->res, SIM_COUNTER_KEY, 0, errstr, len) != 0 ||
        sim_bench_commandstats(b, &before, errstr, len) != 0)
        return -1;
    rc = fleet_start(b, &f, stage, SIM_PLAN_BENCH_RMW, SIM_BENCH_CONTENDERS, errstr, len);
    if (rc == 0)
        rc = window(b, &f, &go, &stop, errstr, len);
    if (rc == 0)
        rc = sim_bench_slowlog_count(b, &sr->round_trips, &internal, errstr, len);
    if (rc == 0)
        rc = sim_bench_slowlog_messages(b, &sr->published, &sr->delivered, errstr, len);
    if (rc == 0 && (rc = sim_bench_slowlog_off(b, errstr, len)) == 0 &&
        (rc = sim_bench_commandstats(b, &after, errstr, len)) == 0 &&
        (rc = sim_resource_get(b->res, SIM_COUNTER_KEY, &sr->counter, errstr, len)) == 0)
        rc = analyse(&f, go, stop, sr, errstr, len);
    sim_fleet_end(&f);
    if (rc != 0)
        return -1;
    sr->commands = after - before;
    sr->window_ms = (double)(stop - go) / 1e6;
    sr->fig[SIM_BENCH_RTT_ACQ] = sr->acquisitions ? (double)sr->round_trips / sr->acquisitions : NAN;
    sr->fig[SIM_BENCH_CMDS_ACQ] = sr->acquisitions ? (double)sr->commands / sr->acquisitions : NAN;
    sr->fig[SIM_BENCH_DELIVERED] = sr->published ? (double)sr->delivered / sr->published : NAN;
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
    sim_bench_progress(b, run, stage, "capture");
    if (reset(b, 1, errstr, len) != 0 || capture(b, stage, &sr->pair, errstr, len) != 0)
        return -1;
    sim_bench_progress(b, run, stage, "uncontended");
    if (reset(b, 0, errstr, len) != 0 || uncontended(b, stage, sr, errstr, len) != 0)
        return -1;
    sim_bench_progress(b, run, stage, "contended");
    if (reset(b, 0, errstr, len) != 0 || contended(b, stage, sr, errstr, len) != 0)
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
