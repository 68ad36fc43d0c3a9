/* sale_buyer: one buyer of the flash sale (build/vN/buyer), with stage
 * N's lock on each segment.
 *
 *   LOCKSTEP_PASSWORD=P buyer id=I dir=D ports=A,B,... product=ID segments=K
 *         pause=MS first=0|1 seed=X lease=MS wait=MS retry=MS hold_at=N hold=MS
 *
 * In a loop: pick a segment at random, take its lock, read its stock,
 * sell one unit if there is one (pause ms inside the lock, then write
 * stock - 1), release. On an empty segment: release and try the next one
 * not yet seen empty; "sold out" only once every segment was seen empty
 * (first=1: at the first empty one, the shortcut that lies). A busy lock
 * (its wait budget spent) or a failed step sends the buyer to another
 * segment: an error says nothing about the stock. Each step goes to
 * D/buyer-I.log (sim/history/history_sale.h); hold_at=N: the buyer pauses
 * hold ms inside the lock of its N-th sale (fault=pause). Prints
 * nothing; exit 0, or 2 on bad arguments or when it gave up. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis_cluster.h"
#include "lock.h"
#include "history_sale.h"
#include "util.h"

#define GIVE_UP_NS (90LL * 1000000000) /* a sale that lasts longer is broken */
#define ERROR_PAUSE_MS 20              /* after a failed step: a failover takes seconds */

typedef struct buyer {
    int id, segments, first, hold_at;
    long pause_ms, hold_ms;
    const char *dir, *password, *product;
    redis_cluster cluster;
    redis_cluster_route route[SIM_SALE_MAX_SEGMENTS];
    struct dlock_provider provider[SIM_SALE_MAX_SEGMENTS];
    dlock_config cfg;
    dlock *lock[SIM_SALE_MAX_SEGMENTS];
    redisContext *conn[SIM_SALE_MAX_SEGMENTS]; /* the stock's, per segment */
    char stock_key[SIM_SALE_MAX_SEGMENTS][64];
    int seen_empty[SIM_SALE_MAX_SEGMENTS];
    int sales;
    FILE *log;
} buyer;

/* name=value among argv, or NULL. */
static const char *arg(int argc, char **argv, const char *name)
{
    size_t n = strlen(name);
    int i;

    for (i = 1; i < argc; i++)
        if (strncmp(argv[i], name, n) == 0 && argv[i][n] == '=')
            return argv[i] + n + 1;
    return NULL;
}

static long num(int argc, char **argv, const char *name)
{
    const char *v = arg(argc, argv, name);

    return v != NULL ? atol(v) : -1;
}

static int parse_ports(const char *s, int *port)
{
    int n = 0;

    while (s != NULL && *s != '\0' && n < REDIS_CLUSTER_MAX_NODES) {
        port[n++] = atoi(s);
        s = strchr(s, ',');
        s = s != NULL ? s + 1 : NULL;
    }
    return n;
}

/* Segment k: stock key {Product:ID:k}, lock key {Product:ID:k}:lock.
 * One hash tag, one slot: the lock and the stock it guards live on one
 * master, and a stage's script over the lock's keys touches one slot. */
static int setup(buyer *b, int argc, char **argv)
{
    int port[REDIS_CLUSTER_MAX_NODES], n = parse_ports(arg(argc, argv, "ports"), port), k;
    char lock_key[80];

    if (n == 0 || b->dir == NULL || b->product == NULL || b->segments < 1 ||
        b->segments > SIM_SALE_MAX_SEGMENTS)
        return -1;
    redis_cluster_init(&b->cluster, "127.0.0.1", port, n, b->password, 1000);
    dlock_config_init(&b->cfg);
    b->cfg.lease_ms = num(argc, argv, "lease");
    b->cfg.wait_ms = num(argc, argv, "wait");
    b->cfg.retry_ms = num(argc, argv, "retry");
    for (k = 0; k < b->segments; k++) {
        snprintf(b->stock_key[k], sizeof(b->stock_key[k]), "{Product:%s:%d}", b->product, k);
        snprintf(lock_key, sizeof(lock_key), "%s:lock", b->stock_key[k]);
        b->route[k] = (redis_cluster_route){ &b->cluster, redis_cluster_keyslot(lock_key), 0 };
        b->provider[k] = redis_cluster_provider(&b->route[k]);
        b->cfg.provider = &b->provider[k];
        if ((b->lock[k] = dlock_new(lock_key, &b->cfg)) == NULL)
            return -1;
    }
    return 0;
}

/* The segment's stock, or -1 after an error. */
static long long read_stock(buyer *b, int k)
{
    char err[128];
    redisReply *r = redis_cluster_command(&b->route[k], &b->conn[k], err, sizeof(err), "GET %s",
                                          b->stock_key[k]);
    long long v = -1;

    if (r != NULL && r->type == REDIS_REPLY_STRING)
        v = atoll(r->str);
    freeReplyObject(r);
    return v;
}

static int write_stock(buyer *b, int k, long long v)
{
    char err[128];
    redisReply *r = redis_cluster_command(&b->route[k], &b->conn[k], err, sizeof(err),
                                          "SET %s %lld", b->stock_key[k], v);
    int ok = r != NULL && r->type == REDIS_REPLY_STATUS;

    freeReplyObject(r);
    return ok ? 0 : -1;
}

static void release(buyer *b, int k)
{
    int rc;

    /* Logged before the release is sent: the next holder's L comes after
     * the server freed the lock, so a hold told [L, U] never overlaps the
     * next one under a lock that works. */
    sim_sale_log_event(b->log, b->id, k, 'U', 0);
    rc = dlock_release(b->lock[k]);
    if (rc == DLOCK_ERR)
        sim_sale_log_event(b->log, b->id, k, 'X', SIM_SALE_STEP_UNLOCK);
    else if (rc == DLOCK_NOT_OWNER)
        sim_sale_log_event(b->log, b->id, k, 'N', 0);
}

/* One visit to segment k under its lock: 1 sold, 0 empty, -1 failed. */
static int visit(buyer *b, int k)
{
    long long v;
    long pause = b->pause_ms;

    sim_sale_log_event(b->log, b->id, k, 'L', 0);
    if ((v = read_stock(b, k)) < 0) {
        sim_sale_log_event(b->log, b->id, k, 'X', SIM_SALE_STEP_READ);
        release(b, k);
        return -1;
    }
    sim_sale_log_event(b->log, b->id, k, 'R', v);
    if (v == 0) {
        sim_sale_log_event(b->log, b->id, k, 'E', 0);
        release(b, k);
        return 0;
    }
    if (b->hold_at > 0 && b->sales + 1 == b->hold_at) {
        sim_sale_log_event(b->log, b->id, k, 'H', b->hold_ms);
        pause += b->hold_ms;
    }
    sim_sleep_ms(pause);
    if (write_stock(b, k, v - 1) != 0) {
        sim_sale_log_event(b->log, b->id, k, 'X', SIM_SALE_STEP_WRITE);
        release(b, k);
        return -1;
    }
    sim_sale_log_event(b->log, b->id, k, 'S', v - 1);
    b->sales++;
    release(b, k);
    return 1;
}

/* The next segment after k not yet seen empty, or -1 when none is left. */
static int next_segment(const buyer *b, int k)
{
    int i;

    for (i = 1; i <= b->segments; i++)
        if (!b->seen_empty[(k + i) % b->segments])
            return (k + i) % b->segments;
    return -1;
}

/* Buys until sold out; 0, or -1 when it gave up. */
static int shop(buyer *b)
{
    int64_t start = sim_sale_now_ns();
    int k = rand() % b->segments, res, seen = 0;

    while (sim_sale_now_ns() - start < GIVE_UP_NS) {
        res = dlock_acquire(b->lock[k]);
        if (res != DLOCK_OK) {
            sim_sale_log_event(b->log, b->id, k, res == DLOCK_BUSY ? 'B' : 'X',
                               res == DLOCK_BUSY ? 0 : SIM_SALE_STEP_LOCK);
            if (res != DLOCK_BUSY)
                sim_sleep_ms(ERROR_PAUSE_MS);
            res = -1; /* no visit: on to the next segment */
        } else if ((res = visit(b, k)) == 0) {
            b->seen_empty[k] = 1;
            seen++;
            if (b->first || next_segment(b, k) < 0) {
                sim_sale_log_event(b->log, b->id, k, 'O', seen);
                return 0;
            }
        } else if (res < 0) {
            sim_sleep_ms(ERROR_PAUSE_MS);
        }
        /* After a sale: a new segment at random; else the next one. */
        if (res == 1) {
            k = rand() % b->segments;
            if (b->seen_empty[k])
                k = next_segment(b, k);
        } else {
            k = next_segment(b, k);
        }
        if (k < 0)
            k = 0;
    }
    sim_sale_log_event(b->log, b->id, k, 'X', SIM_SALE_STEP_GAVE_UP);
    return -1;
}

int main(int argc, char **argv)
{
    static buyer b;
    char path[512];
    int k, rc;

    /* A master killed mid-sale leaves sockets whose peer is gone; a write
     * on one raises SIGPIPE, which would kill the buyer (seen with v6:
     * exit 141) where the lock should see an I/O error and go on. */
    signal(SIGPIPE, SIG_IGN);
    b.id = (int)num(argc, argv, "id");
    b.dir = arg(argc, argv, "dir");
    b.password = getenv("LOCKSTEP_PASSWORD"); /* the run's: not on our command line */
    b.product = arg(argc, argv, "product");
    b.segments = (int)num(argc, argv, "segments");
    b.pause_ms = num(argc, argv, "pause");
    b.first = num(argc, argv, "first") == 1;
    b.hold_at = (int)num(argc, argv, "hold_at");
    b.hold_ms = num(argc, argv, "hold");
    srand((unsigned)num(argc, argv, "seed") * 7919u + (unsigned)b.id);
    if (setup(&b, argc, argv) != 0)
        return 2;
    snprintf(path, sizeof(path), "%s/buyer-%d.log", b.dir, b.id);
    if ((b.log = fopen(path, "w")) == NULL)
        return 2;
    /* A line at a time: a buyer that dies leaves its history up to there. */
    setvbuf(b.log, NULL, _IOLBF, 0);
    rc = shop(&b);
    fclose(b.log);
    for (k = 0; k < b.segments; k++) {
        dlock_free(b.lock[k]);
        redisFree(b.conn[k]);
    }
    redis_cluster_destroy(&b.cluster);
    return rc == 0 ? 0 : 2;
}
