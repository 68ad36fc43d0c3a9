/* runner: plays one scenario against one stage. See runner.h. Clients
 * are processes of the stage's client program (the fleet); the observer
 * is a fork of this process; the servers come from their kind (servers.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "checker.h"
#include "fleet.h"
#include "nemesis.h"
#include "proxy.h"
#include "resource.h"
#include "runner.h"
#include "servers.h"
#include "util.h"

#define LOCK_NAME "lockstep:lock"
/* The loop's period: far below any margin (a lease is 300 ms), and no
 * finer: six cells at once, each waking 2,000 times a second, cost a
 * demo a third of its context switches. */
#define TICK_US 2000
#define READY_TIMEOUT_MS 20000 /* client programs up (sanitizer builds are slow) */
#define RUN_LIMIT_MS 60000     /* a run that takes longer is stuck */
#define CLIENT_TIMEOUT_MS 2000 /* the clients' connect and command timeout */
#define FAILPOINT_LEN 128
#define CLOCK_SHIM "clockshim.so"  /* built next to the stages' folders */

typedef struct runner {
    const sim_scenario *s;
    const sim_run_config *cfg;
    sim_servers srv;                        /* the lock's servers and the resource */
    sim_fleet fleet;                        /* the clients, their control block, the history */
    sim_nemesis nem;
    sim_proxy proxy;                        /* between clients and nodes, in a
                                             * run that cuts links */
    char shim[PATH_MAX];                    /* the clock library, in a run
                                             * whose clock jumps */
    int n;                                  /* clients */
    const sim_actor *actor[SIM_CLIENTS_MAX]; /* each client's line of the table */
    int started[SIM_CLIENTS_MAX];           /* its start flag is set */
    int fault_done;                         /* the nemesis struck */
    int64_t fault_ns;
    int64_t start_ns;                       /* clients were let go */
} runner;

static long leases(const runner *r, double x)
{
    return (long)(x * r->cfg->lease_ms + 0.5);
}

/* "release.after_get=stop(3L)" with L = 300 becomes "...=stop(900)". */
static int expand_failpoint(const char *spec, long lease_ms, char *out,
                            size_t len)
{
    const char *p = spec;
    size_t used = 0;

    while (*p != '\0' && used + 1 < len) {
        char *end;
        double x = p[0] == '(' ? strtod(p + 1, &end) : 0;

        if (p[0] == '(' && end != p + 1 && end[0] == 'L' && end[1] == ')') {
            used += snprintf(out + used, len - used, "(%ld)", (long)(x * lease_ms + 0.5));
            p = end + 2;
        } else {
            out[used++] = *p++;
        }
    }
    out[used < len ? used : len - 1] = '\0';
    return *p == '\0' && used < len ? 0 : -1;
}

/* ---- setup ---------------------------------------------------------------------- */

/* Each client's line of the table: a line with copies stands for that many. */
static int assign_actors(runner *r, char *errstr, size_t len)
{
    const sim_actor *a;
    int k;

    r->n = 0;
    for (a = r->s->actors; a->name != 0; a++) {
        for (k = 0; k < (a->copies > 0 ? a->copies : 1); k++) {
            if (r->n == SIM_CLIENTS_MAX)
                return sim_error(errstr, len, "scenario %s has more than %d clients",
                             r->s->name, SIM_CLIENTS_MAX);
            r->actor[r->n++] = a;
        }
    }
    return 0;
}

static void fill_plan(runner *r, int i)
{
    sim_plan *p = &r->fleet.ctl->client[i].plan;

    p->kind = r->actor[i]->plan;
    p->hold_ms = leases(r, r->actor[i]->hold);
    p->wait_ms = leases(r, r->actor[i]->wait);
    p->lease_ms = leases(r, r->actor[i]->lease > 0 ? r->actor[i]->lease : 1);
    p->until = r->actor[i]->until.after != 0;
    p->seed = r->cfg->seed * 7919u + (unsigned)i;
}

static int setup_control(runner *r, char *errstr, size_t len)
{
    sim_control *ctl;
    int i;

    if (sim_fleet_create(&r->fleet, r->srv.dir, "run", r->n, errstr, len) != 0)
        return -1;
    ctl = r->fleet.ctl;
    snprintf(ctl->lock_name, sizeof(ctl->lock_name), "%s", LOCK_NAME);
    ctl->lease_ms = r->cfg->lease_ms;
    ctl->retry_ms = r->cfg->lease_ms / 30 > 0 ? r->cfg->lease_ms / 30 : 1;
    ctl->timeout_ms = r->s->fault.timeout > 0 ? leases(r, r->s->fault.timeout) : CLIENT_TIMEOUT_MS;
    /* Far below the lease, and far above a reply's delay on a loaded
     * machine: a node is never counted failed for being slow. */
    ctl->node_timeout_ms = leases(r, 0.5);
    for (i = 0; i < r->n; i++)
        fill_plan(r, i);
    return sim_servers_attach(&r->srv, r->fleet.h, ctl, errstr, len);
}

/* The stock on the resource server: set before the run, read after it,
 * each time into the history. */
static int stock(runner *r, int final, char *errstr, size_t len)
{
    redisContext *c = sim_control_connect_resource(r->fleet.ctl, errstr, len);
    long long value = r->s->stock;
    int rc;

    if (c == NULL)
        return -1;
    rc = final ? sim_resource_get(c, SIM_STOCK_KEY, &value, errstr, len)
               : sim_resource_set(c, SIM_STOCK_KEY, value, errstr, len);
    redisFree(c);
    if (rc == 0)
        sim_history_add(r->fleet.h, SIM_NO_CLIENT, 0,
                        final ? SIM_EV_STOCK_FINAL : SIM_EV_STOCK_INITIAL, value, "");
    return rc;
}

/* Each client's failpoints, times in leases made milliseconds. */
static int spawn_clients(runner *r, char *errstr, size_t len)
{
    char fp[SIM_CLIENTS_MAX][FAILPOINT_LEN];
    const char *arming[SIM_CLIENTS_MAX];
    int i;

    for (i = 0; i < r->n; i++) {
        const char *spec = r->actor[i]->failpoint;

        arming[i] = NULL;
        if (spec == NULL)
            continue;
        if (expand_failpoint(spec, r->cfg->lease_ms, fp[i], sizeof(fp[i])) != 0)
            return sim_error(errstr, len, "failpoint too long: %s", spec);
        arming[i] = fp[i];
    }
    return sim_fleet_spawn(&r->fleet, r->cfg->client_program, arming, errstr, len);
}

/* The last nodes that the fault keeps from the target until it strikes
 * (down for a restart, cut off for a clock jump): as many as it asks,
 * and never so many that the rest are no majority (a lock of one node
 * has none to spare). */
static int nodes_apart(const runner *r, int kind)
{
    int spare = r->srv.nodes - (r->srv.nodes / 2 + 1);

    if (r->s->fault.kind != kind)
        return 0;
    /* Kleppmann's bare majority is a case of independent masters: an
     * ensemble's servers agree among themselves, a cut changes nothing
     * there. */
    if (kind == SIM_FAULT_CLOCK_JUMP && !(sim_stage_get(r->cfg->stage)->caps & SIM_CAP_QUORUM))
        return 0;
    return r->s->fault.down < spare ? r->s->fault.down : spare;
}

/* The nodes of the target's bare majority are the first ones; the jump
 * is the last of them's. */
static int jump_node(const runner *r)
{
    int cut = nodes_apart(r, SIM_FAULT_CLOCK_JUMP);

    return cut > 0 ? r->srv.nodes - cut - 1 : 0;
}

static unsigned all_nodes(const runner *r)
{
    return (1u << r->srv.nodes) - 1;
}

/* The proxy costs a hop on every command: only a run that cuts a link
 * has one. */
static int needs_proxy(const runner *r)
{
    return r->cfg->proxy || r->s->fault.kind == SIM_FAULT_PARTITION ||
           nodes_apart(r, SIM_FAULT_CLOCK_JUMP) > 0;
}

/* Its whole path: a server preloads it from a dir of its own. */
int sim_runner_clock_shim(const char *prog, char *shim, char *errstr, size_t len)
{
    const char *slash = strrchr(prog, '/');
    char near[PATH_MAX];
    int n = snprintf(near, sizeof(near), "%.*s/../%s", slash != NULL ? (int)(slash - prog) : 1,
                     slash != NULL ? prog : ".", CLOCK_SHIM);

    if (n < 0 || (size_t)n >= sizeof(near) || realpath(near, shim) == NULL)
        return sim_error(errstr, len, "the clock library %s is missing: build it with make",
                         near);
    return 0;
}

int sim_runner_kills_servers(const sim_scenario *s)
{
    return s->fault.kind == SIM_FAULT_FAILOVER || s->fault.kind == SIM_FAULT_RESTART;
}

static int start_servers(runner *r, char *errstr, size_t len)
{
    int failover = r->s->fault.kind == SIM_FAULT_FAILOVER;
    unsigned flags = failover ? SIM_SERVERS_STANDBY : 0;

    if (r->cfg->sentinel)
        flags |= SIM_SERVERS_SENTINEL;
    if (!sim_runner_kills_servers(r->s))
        flags |= SIM_SERVERS_SHARED;
    if (r->s->fault.kind != SIM_FAULT_CLOCK_JUMP)
        return sim_servers_start(&r->srv, sim_stage_get(r->cfg->stage), flags, errstr, len);
    if (sim_runner_clock_shim(r->cfg->client_program, r->shim, errstr, len) != 0)
        return -1;
    return sim_servers_start_clock(&r->srv, sim_stage_get(r->cfg->stage),
                                   flags | SIM_SERVERS_CLOCK, r->shim, errstr, len);
}

/* Before any client runs: the nodes the fault keeps down, or keeps the
 * target from. */
static void before_start(runner *r)
{
    int cut = nodes_apart(r, SIM_FAULT_CLOCK_JUMP), target = r->s->fault.target - 'A';

    for (int i = r->srv.nodes - nodes_apart(r, SIM_FAULT_RESTART); i < r->srv.nodes; i++)
        sim_nemesis_down(&r->nem, i);
    if (cut > 0 && target >= 0 && target < r->n)
        sim_nemesis_cut(&r->nem, target, all_nodes(r) & ~((1u << (r->srv.nodes - cut)) - 1), 0);
}

static int setup(runner *r, char *errstr, size_t len)
{
    if (assign_actors(r, errstr, len) != 0 ||
        start_servers(r, errstr, len) != 0 ||
        setup_control(r, errstr, len) != 0 ||
        stock(r, 0, errstr, len) != 0)
        return -1;
    sim_nemesis_init(&r->nem, &r->srv, r->fleet.ctl, r->fleet.h, r->fleet.pid);
    if (r->s->fault.kind == SIM_FAULT_FAILOVER &&
        sim_servers_prepare_failover(&r->srv, errstr, len) != 0)
        return -1;
    if (needs_proxy(r) && sim_proxy_start(&r->proxy, r->fleet.ctl, r->n, errstr, len) != 0)
        return -1;
    before_start(r);
    return spawn_clients(r, errstr, len);
}

/* ---- the loop ------------------------------------------------------------------- */

/* Reaps the clients that ended; the ones that stopped themselves at a
 * failpoint go to the nemesis, which resumes them. The number still
 * running, or -1 with errstr. */
static int poll_clients(runner *r, char *errstr, size_t len)
{
    int stopped[SIM_CLIENTS_MAX] = { 0 }, running, i;

    if ((running = sim_fleet_poll(&r->fleet, stopped, errstr, len)) < 0)
        return -1;
    for (i = 0; i < r->n; i++) {
        if (stopped[i])
            sim_nemesis_stopped(&r->nem, i);
    }
    return running;
}

/* When a trigger fires, or 0 while that is not known yet. */
static int64_t trigger_ns(const runner *r, const sim_trigger *t)
{
    int64_t at;
    int who = t->after - 'A';

    if (t->after == SIM_AFTER_START)
        at = r->start_ns;
    else if (t->after == SIM_AFTER_FAULT)
        at = r->fault_done ? r->fault_ns : 0;
    else if (who < 0 || who >= r->n)
        return 0;
    else if ((at = sim_control_reached(r->fleet.ctl, who, t->phase)) == 0)
        at = sim_control_reached(r->fleet.ctl, who, SIM_PHASE_DONE);
    return at == 0 ? 0 : at + (int64_t)leases(r, t->delay) * 1000000;
}

static int fires(const runner *r, const sim_trigger *t, int64_t now)
{
    int64_t at = trigger_ns(r, t);

    return at != 0 && now >= at;
}

/* Start flags, and the end of sections that wait for a trigger. */
static void signal_clients(runner *r, int64_t now)
{
    int i;

    for (i = 0; i < r->n; i++) {
        const sim_actor *a = r->actor[i];

        if (!r->started[i] && fires(r, &a->start, now)) {
            r->started[i] = 1;
            sim_fleet_go(&r->fleet, i);
        }
        if (a->until.after != 0 && fires(r, &a->until, now))
            atomic_store(&r->fleet.ctl->client[i].finish, 1);
    }
}

/* Node 0 restarts empty; the nodes that were down come back, empty too. */
static int restart(runner *r, char *errstr, size_t len)
{
    int i;

    if (sim_nemesis_restart(&r->nem, 0, errstr, len) != 0)
        return -1;
    for (i = r->srv.nodes - nodes_apart(r, SIM_FAULT_RESTART); i < r->srv.nodes; i++) {
        if (sim_nemesis_restart(&r->nem, i, errstr, len) != 0)
            return -1;
    }
    return 0;
}

static int strike(runner *r, int64_t now, char *errstr, size_t len)
{
    const sim_fault *f = &r->s->fault;
    int64_t at = trigger_ns(r, &f->when);
    int target = f->target - 'A';

    if (f->kind == SIM_FAULT_NONE || r->fault_done || at == 0 || now < at)
        return 0;
    r->fault_done = 1;
    if (f->kind == SIM_FAULT_FAILOVER &&
        sim_nemesis_failover(&r->nem, errstr, len) != 0)
        return -1;
    if (f->kind == SIM_FAULT_RESTART && restart(r, errstr, len) != 0)
        return -1;
    if (f->kind == SIM_FAULT_PARTITION && target >= 0 && target < r->n)
        sim_nemesis_cut(&r->nem, target, all_nodes(r), leases(r, f->len));
    if (f->kind == SIM_FAULT_CLOCK_JUMP) {
        if (target >= 0 && target < r->n)
            sim_nemesis_heal(&r->nem, target);
        if (sim_nemesis_clock_jump(&r->nem, jump_node(r), leases(r, f->len), errstr, len) != 0)
            return -1;
    }
    if ((f->kind == SIM_FAULT_PAUSE || f->kind == SIM_FAULT_CRASH) &&
        target >= 0 && target < r->n && r->fleet.pid[target] != 0) {
        if (f->kind == SIM_FAULT_PAUSE)
            sim_nemesis_pause(&r->nem, target, leases(r, f->len));
        else
            sim_nemesis_crash(&r->nem, target);
    }
    r->fault_ns = sim_now_ns();
    return 0;
}

/* Until every client has ended and no pause is left to resume. */
static int drive(runner *r, char *errstr, size_t len)
{
    int64_t now;
    int running;

    r->start_ns = sim_now_ns();
    for (;;) {
        now = sim_now_ns();
        if ((now - r->start_ns) / 1000000 > RUN_LIMIT_MS)
            return sim_error(errstr, len, "the run did not end within %d ms", RUN_LIMIT_MS);
        if ((running = poll_clients(r, errstr, len)) < 0)
            return -1;
        if (running == 0 && !sim_nemesis_busy(&r->nem))
            return 0;
        sim_nemesis_tick(&r->nem);
        signal_clients(r, now);
        if (strike(r, now, errstr, len) != 0)
            return -1;
        sim_sleep_us(TICK_US);
    }
}

/* ---- the end -------------------------------------------------------------------- */

static void describe(const runner *r, sim_run *run)
{
    const sim_actor *a;

    memset(&run->info, 0, sizeof(run->info));
    snprintf(run->info.stage, sizeof(run->info.stage), "%s",
             sim_stage_name(r->cfg->stage));
    snprintf(run->info.scenario, sizeof(run->info.scenario), "%s", r->s->name);
    snprintf(run->info.what, sizeof(run->info.what), "%s", r->s->shows);
    for (a = r->s->actors; a->name != 0; a++) {
        if (a->failpoint != NULL)
            snprintf(run->info.failpoint, sizeof(run->info.failpoint), "%.*s",
                     (int)strcspn(a->failpoint, "="), a->failpoint);
    }
    run->info.lease_ms = r->cfg->lease_ms;
    run->info.seed = r->cfg->seed;
    run->info.clients = r->n;
    run->info.nodes = r->srv.lanes;
}

static int finish(runner *r, sim_run *run, char *errstr, size_t len)
{
    sim_servers_drain(&r->srv);
    if (stock(r, 1, errstr, len) != 0)
        return -1;
    run->ev = sim_history_snapshot(r->fleet.h, &run->n);
    if (run->ev == NULL)
        return sim_error(errstr, len, "out of memory for the history");
    run->t0_ns = r->fleet.h->t0_ns;
    run->nclients = r->n;
    describe(r, run);
    run->failpoint_armed = run->info.failpoint[0] != '\0';
    run->failpoint_fired = run->failpoint_armed &&
        sim_check_failpoint_fired(run->ev, run->n, run->info.failpoint);
    return 0;
}

static void teardown(runner *r)
{
    sim_fleet_end(&r->fleet);
    sim_proxy_stop(&r->proxy);
    sim_servers_stop(&r->srv);
}

static int playable(int stage, char *errstr, size_t len)
{
    if (sim_stage_get(stage) == NULL)
        return sim_error(errstr, len, "stage %d is not a line of sim/stages.def", stage);
    return 0;
}

int sim_runner_play(const sim_scenario *s, const sim_run_config *cfg,
                    sim_run *run, char *errstr, size_t len)
{
    runner r;
    int64_t began = sim_now_ns();
    int rc;

    memset(&r, 0, sizeof(r));
    memset(run, 0, sizeof(*run));
    if (playable(cfg->stage, errstr, len) != 0)
        return -1;
    r.s = s;
    r.cfg = cfg;
    run->scenario = s;
    run->cfg = *cfg;
    rc = setup(&r, errstr, len);
    if (rc == 0)
        rc = sim_fleet_ready(&r.fleet, READY_TIMEOUT_MS, errstr, len);
    if (rc == 0)
        rc = drive(&r, errstr, len);
    if (rc == 0)
        rc = finish(&r, run, errstr, len);
    teardown(&r);
    run->elapsed_ms = (sim_now_ns() - began) / 1000000;
    if (rc != 0)
        sim_runner_free(run);
    return rc;
}

void sim_runner_free(sim_run *run)
{
    free(run->ev);
    run->ev = NULL;
    run->n = 0;
}
