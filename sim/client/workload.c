/* workload: the stock deduction under the lock, step by step into the
 * history. See workload.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mariadb_link.h"
#include "observer.h"
#include "redis.h"
#include "resource.h"
#include "stage.h"
#include "workload.h"
#include "util.h"

#define SYNC_TIMEOUT_MS 1000 /* an observer slower than this is not waited for */
#define ASK_TIMEOUT_MS 5000  /* the ZooKeeper observer syncs its server with the
                              * leader, then reads: on a loaded machine that takes
                              * longer than a Redis marker */
#define MAIN_THREAD 0        /* the workload runs on the client's main thread */

static void record(sim_workload *w, sim_event_type type, long long value,
                   const char *detail)
{
    sim_history_add(w->h, w->client, MAIN_THREAD, type, value, detail);
}

/* A step that carried our fencing token (0 in stages without one). */
static void record_token(sim_workload *w, sim_event_type type, long long value)
{
    sim_history_add_token(w->h, w->client, MAIN_THREAD, type, value, w->token, "");
}

/* ---- the resource ------------------------------------------------------------ */

static int read_key(sim_workload *w, const char *key, long long *value)
{
    return sim_resource_get(w->resource, key, value, w->errstr, sizeof(w->errstr));
}

static int write_key(sim_workload *w, const char *key, long long value)
{
    return sim_resource_set(w->resource, key, value, w->errstr, sizeof(w->errstr));
}

/* The stock as the holder reads it: with its token where it has one. */
static int read_stock(sim_workload *w, long long *stock)
{
    if (w->token > 0)
        return sim_resource_get_fenced(w->resource, SIM_STOCK_KEY, w->token, stock,
                                       w->errstr, sizeof(w->errstr));
    return read_key(w, SIM_STOCK_KEY, stock);
}

/* A sale: stock written, with the holder's token where it has one.
 * SIM_RESOURCE_REFUSED with the resource's fence in *highest when the
 * token was too old. */
static int write_stock(sim_workload *w, long long stock, long long *highest)
{
    if (w->token > 0)
        return sim_resource_set_fenced(w->resource, SIM_STOCK_KEY, stock, w->token,
                                       highest, w->errstr, sizeof(w->errstr));
    return write_key(w, SIM_STOCK_KEY, stock);
}

/* How long this critical section works: LOOP varies it a little (from
 * the seed) so the clients do not move in lockstep. */
static long hold_ms(sim_workload *w)
{
    long hold = w->plan->hold_ms;

    if (w->plan->kind != SIM_PLAN_LOOP || hold < 2)
        return hold;
    return hold / 2 + rand_r(&w->rng) % (hold - hold / 2 + 1);
}

/* ---- the lock ---------------------------------------------------------------- */

/* Waits until the observer has recorded every key event that came before
 * our acquire, on every node, so a DEL that freed the lock for us is never
 * stamped after our acquire (observer.h). Best effort: a broken link skips
 * it. Without an observer (the bench) there is nothing to wait for, and
 * the marker would only add a command to every acquisition. */
static void sync_observer(sim_workload *w)
{
    char why[128];
    int i;

    if (w->ctl->observed == SIM_OBSERVED_NONE)
        return;
    ++w->sync_seq;
    if (w->ctl->observed == SIM_OBSERVED_ASKED) {
        sim_observer_ask(w->ctl, w->client, w->sync_seq, ASK_TIMEOUT_MS);
        return;
    }
    for (i = 0; i < w->ctl->nodes; i++) {
        if (w->sync[i] == NULL)
            w->sync[i] = sim_control_connect_node(w->ctl, i, why, sizeof(why));
        if (w->sync[i] == NULL)
            continue; /* a node that is down has no events to wait for */
        if (sim_observer_sync(w->sync[i], w->ctl, w->client, i, w->sync_seq,
                              SYNC_TIMEOUT_MS) < 0) {
            redisFree(w->sync[i]);
            w->sync[i] = NULL;
        }
    }
}

/* acquire with its outcome in the history. */
static int acquire(sim_workload *w)
{
    int rc;

    sim_history_add_invoke(w->h, w->client, MAIN_THREAD, w->plan->wait_ms,
                           w->plan->lease_ms);
    sim_control_reach(w->ctl, w->client, SIM_PHASE_WAITING);
    rc = dlock_acquire(w->lock);
    if (rc == DLOCK_OK) {
        sync_observer(w);
        /* Asked once per acquisition, as a caller of the lock would: a
         * hold whose lease runs out meanwhile still writes with it. */
        w->token = dlock_token(w->lock);
        record_token(w, SIM_EV_ACQUIRE_OK, 0);
    } else if (rc == DLOCK_BUSY) {
        record(w, SIM_EV_ACQUIRE_BUSY, w->plan->wait_ms, "");
    } else {
        record(w, SIM_EV_ACQUIRE_ERROR, 0, dlock_errstr(w->lock));
    }
    return rc;
}

/* release with its outcome; an error is tried again (a new connection
 * through the provider, to the primary of now). */
static int release(sim_workload *w)
{
    int rc = DLOCK_ERR, i;

    for (i = 0; i < SIM_RELEASE_TRIES && rc == DLOCK_ERR; i++) {
        if (i > 0)
            sim_sleep_ms(w->ctl->retry_ms);
        record(w, SIM_EV_RELEASE_INVOKE, i, "");
        sim_control_reach(w->ctl, w->client, SIM_PHASE_RELEASING);
        rc = dlock_release(w->lock);
        if (rc == DLOCK_OK)
            record(w, SIM_EV_RELEASE_OK, 0, "");
        else if (rc == DLOCK_NOT_OWNER)
            record(w, SIM_EV_RELEASE_NOT_OWNER, 0, "");
        else
            record(w, SIM_EV_RELEASE_ERROR, 0, dlock_errstr(w->lock));
    }
    return rc;
}

/* ---- the critical section ---------------------------------------------------- */

static int cs_enter(sim_workload *w, long long *stock)
{
    record(w, SIM_EV_CS_ENTER, 0, "");
    sim_control_reach(w->ctl, w->client, SIM_PHASE_IN_CS);
    if (read_stock(w, stock) != 0)
        return -1;
    record_token(w, SIM_EV_STOCK_READ, *stock);
    return 0;
}

/* The sale: the stock we read, minus one, whatever happened meanwhile,
 * unless the resource refuses our token. */
static int cs_exit(sim_workload *w, long long stock)
{
    long long highest = 0;
    int rc;

    if (stock > 0) {
        if ((rc = write_stock(w, stock - 1, &highest)) < 0)
            return -1;
        if (rc == SIM_RESOURCE_REFUSED)
            record_token(w, SIM_EV_STOCK_REFUSED, highest);
        else
            record_token(w, SIM_EV_STOCK_WRITE, stock - 1);
    }
    record(w, SIM_EV_CS_EXIT, 0, "");
    return 0;
}

/* One acquire, critical section, release. *stock gets what was read, or
 * stays as it was when the lock was not taken. */
/* A section that lasts until the scenario says so: its end is tied to
 * another client's step, not to a guess of how long a failover takes. */
static void wait_finish(sim_workload *w)
{
    const sim_client_slot *slot = &w->ctl->client[w->client];

    while (w->plan->until && !atomic_load(&slot->finish) &&
           !atomic_load(&w->ctl->stop))
        sim_sleep_ms(1);
}

static int once(sim_workload *w, long long *stock)
{
    if (acquire(w) != DLOCK_OK)
        return 0;
    if (cs_enter(w, stock) != 0)
        return -1;
    sim_sleep_ms(hold_ms(w));
    wait_finish(w);
    if (cs_exit(w, *stock) != 0)
        return -1;
    release(w);
    return 0;
}

/* Until a critical section finds the stock sold out, or the run ends. */
static int loop(sim_workload *w)
{
    long long stock = -1;

    while (!atomic_load(&w->ctl->stop)) {
        if (once(w, &stock) != 0)
            return -1;
        if (stock == 0)
            return 0;
        stock = -1;
    }
    return 0;
}

/* The holder's own thread asks for the lock again, as code that calls a
 * locked function from a locked function does. */
static int reentrant(sim_workload *w)
{
    long long stock;

    if (acquire(w) != DLOCK_OK)
        return 0;
    if (cs_enter(w, &stock) != 0)
        return -1;
    if (acquire(w) == DLOCK_OK)
        release(w);
    sim_sleep_ms(hold_ms(w));
    if (cs_exit(w, stock) != 0)
        return -1;
    release(w);
    return 0;
}

/* ---- the benchmark's loops (make bench, sim/bench*.c) ----------------------- */

/* One uncontended lock+unlock pair. With one client nobody else can hold
 * the lock, so anything but OK means the run is broken. */
static int bench_pair(sim_workload *w)
{
    int rc;

    if ((rc = dlock_acquire(w->lock)) != DLOCK_OK)
        return sim_error(w->errstr, sizeof(w->errstr), "uncontended acquire: %s",
                    rc == DLOCK_BUSY ? "BUSY" : dlock_errstr(w->lock));
    if ((rc = dlock_release(w->lock)) != DLOCK_OK)
        return sim_error(w->errstr, sizeof(w->errstr), "uncontended release: %s",
                    rc == DLOCK_NOT_OWNER ? "NOT_OWNER" : dlock_errstr(w->lock));
    return 0;
}

/* Uncontended: pairs in batches, each as many as the bench asks for and
 * timed here, so that the bench can alternate them with its own replay of
 * the same commands and both meet the same moments of a noisy machine.
 * Nothing else runs in a batch: no history, no observer sync. */
static int bench_solo(sim_workload *w)
{
    sim_client_slot *slot = &w->ctl->client[w->client];
    long long done = 0, target;
    int64_t start;

    while (!atomic_load(&w->ctl->stop)) {
        if (done >= (target = atomic_load(&slot->bench_target))) {
            sim_sleep_ms(1); /* idle between batches: the bench's replay runs */
            continue;
        }
        start = sim_now_ns();
        for (; done < target; done++) {
            if (bench_pair(w) != 0)
                return -1;
        }
        atomic_fetch_add(&slot->bench_ns, sim_now_ns() - start);
        atomic_store(&slot->bench_done, done);
    }
    return 0;
}

/* Contended: lock, counter + 1 on the resource server, unlock, until the
 * run stops, recorded by the same acquire and release as a scenario's
 * clients. Two clients inside at once would both write the same value:
 * the counter would fall behind the acquisitions (a lost update). */
static int bench_rmw(sim_workload *w)
{
    long long counter;
    int rc;

    while (!atomic_load(&w->ctl->stop)) {
        if ((rc = acquire(w)) == DLOCK_ERR)
            sim_sleep_ms(w->ctl->retry_ms); /* a broken server: do not spin */
        if (rc != DLOCK_OK)
            continue;
        if (read_key(w, SIM_COUNTER_KEY, &counter) != 0 ||
            write_key(w, SIM_COUNTER_KEY, counter + 1) != 0)
            return -1;
        release(w);
    }
    return 0;
}

int sim_workload_run(sim_workload *w)
{
    long long stock;

    switch (w->plan->kind) {
    case SIM_PLAN_LOOP:
        return loop(w);
    case SIM_PLAN_REENTRANT:
        return reentrant(w);
    case SIM_PLAN_STRANGER:
        release(w); /* a lock it never took: a bug in the caller */
        return 0;
    case SIM_PLAN_BENCH_SOLO:
        return bench_solo(w);
    case SIM_PLAN_BENCH_RMW:
        return bench_rmw(w);
    default:
        return once(w, &stock);
    }
}

/* ---- setup -------------------------------------------------------------------- */

/* The lock's connection provider: this client's own route to each node,
 * through the proxy in a run that cuts links (control.h). The observer's
 * sync markers keep their direct connections: they are the history's,
 * not the lock's. */
static redisContext *connect_lock(void *arg, int node, char *errstr, size_t len)
{
    const sim_workload *w = arg;

    return sim_control_connect_via(w->ctl, w->client, node, errstr, len);
}

/* Whether this client's stage (STAGE, from the build) talks to Redis: a
 * ZooKeeper stage takes no provider, nor does a library's driver
 * (STAGE 0, drivers/lock.c), which gets host and port. */
static int redis_stage(void)
{
    return sim_stage_get(STAGE) != NULL && strcmp(sim_stage_get(STAGE)->server, "redis") == 0;
}

int sim_workload_init(sim_workload *w, sim_control *ctl, sim_history *h,
                      int client, char *errstr, size_t len)
{
    struct dlock_provider provider = { connect_lock, w }; /* dlock_new copies it */
    struct dlock_provider *link = NULL; /* a MariaDB stage's, copied too */
    dlock_config cfg;

    memset(w, 0, sizeof(*w));
    w->ctl = ctl;
    w->h = h;
    w->client = client;
    w->plan = &ctl->client[client].plan;
    w->rng = w->plan->seed;
    if ((w->resource = sim_control_connect_resource(ctl, errstr, len)) == NULL)
        return -1;
    dlock_config_init(&cfg);
    cfg.lease_ms = w->plan->lease_ms;
    cfg.wait_ms = w->plan->wait_ms;
    cfg.retry_ms = ctl->retry_ms;
    cfg.nodes = ctl->nodes;
    if (ctl->node_timeout_ms > 0)
        cfg.node_timeout_ms = ctl->node_timeout_ms;
    if (redis_stage())
        cfg.provider = &provider;
    else if (sim_stage_get(STAGE) != NULL && strcmp(sim_stage_get(STAGE)->server, "mariadb") == 0)
        cfg.provider = link = sim_mariadb_link(ctl, client);
    /* A lock that takes no provider (a ZooKeeper stage) finds its servers
     * here: node i at port + i, through the proxy when the run has one
     * (its routes to the nodes are consecutive ports too). */
    cfg.host = "127.0.0.1";
    cfg.port = atomic_load(&ctl->client[client].via_port[0]) > 0
               ? atomic_load(&ctl->client[client].via_port[0])
               : atomic_load(&ctl->node_port[0]);
    cfg.timeout_ms = ctl->timeout_ms;
    /* A lock that takes no provider (a ZooKeeper stage, a library's
     * driver) logs in by itself with the run's password, as the provider
     * does for a Redis or MariaDB stage. */
    if (cfg.provider == NULL && ctl->password[0] != '\0')
        cfg.password = ctl->password;
    w->lock = dlock_new(ctl->lock_name, &cfg);
    free(link);
    if (w->lock == NULL) {
        snprintf(errstr, len, "dlock_new: out of memory");
        return -1;
    }
    return 0;
}

/* A ZooKeeper client's session closes with its handle. The observer names
 * a node's end by asking whether its session is still open: the node a
 * release deleted would be told "expired" if the session closed first. So
 * the last ask waits until every end the observer saw is named. */
static void last_ask(sim_workload *w)
{
    if (w->lock == NULL || w->ctl->observed != SIM_OBSERVED_ASKED)
        return;
    atomic_store(&w->ctl->client[w->client].all_named, 1);
    sim_observer_ask(w->ctl, w->client, ++w->sync_seq, ASK_TIMEOUT_MS);
}

void sim_workload_close(sim_workload *w)
{
    int i;

    last_ask(w);
    dlock_free(w->lock);
    redisFree(w->resource);
    for (i = 0; i < SIM_NODES_MAX; i++) {
        redisFree(w->sync[i]);
        w->sync[i] = NULL;
    }
    w->lock = NULL;
    w->resource = NULL;
}
