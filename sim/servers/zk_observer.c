/* zk_observer: a ZooKeeper session that writes who holds the lock into
 * the history. See zk_observer.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include "ensemble.h"
#include "observer.h"
#include "proc.h"
#include "util.h"
#include "zk_dump.h"
#include "zk_observer.h"

#define SESSION_MS 10000  /* the observer's own session outlives any election */
#define POLL_US 2000      /* how often it looks for a client's ask */
#define SYNC_MS 2000      /* for its server to catch up with the leader */
#define LOOK_TRIES 5      /* the lowest child went away while it looked */
#define DUMP_LEN 65536    /* a server's dump: sessions, nodes, connections */
#define DUMP_TRIES 10     /* a leader's dump is torn at times (zk_dump.h) */
#define PATH_LEN (SIM_LOCK_NAME_LEN + 64)
#define HOSTS_LEN (SIM_NODES_MAX * 24)
#define SEQ_DIGITS 10     /* a sequential node's counter, zero-padded */
#define PENDING_MAX 64    /* holders' ends seen and not named yet */

/* Who holds the lock, as the observer last read it. */
typedef struct holder {
    int64_t czxid;   /* its node's creation; 0: nobody holds */
    int64_t owner;   /* its node's session */
    long long seq;   /* its sequence number (v11); 0 for v10's one node */
} holder;

/* A holder's node seen gone, at t_ns: "delete" or "expired" is for its
 * session to say, which costs a dump; the next holder's client must not
 * wait for it. */
typedef struct pending_end {
    int64_t t_ns;
    int64_t owner;
    long long seq;
} pending_end;

typedef struct obs {
    sim_history *h;
    sim_control *ctl;
    zhandle_t *zh;
    int authed;              /* zh has sent the run's password */
    char hosts[HOSTS_LEN];
    char path[PATH_LEN];     /* the lock's node */
    holder cur;
    long long *queue;        /* the children of the last look: their */
    int32_t queued;          /* sequence numbers, in order */
    pthread_t namer;         /* names the ends seen, off the asks' path: */
    pending_end pending[PENDING_MAX]; /* a ring, guarded by mu */
    int first, npending;
    int naming;              /* the namer is naming one */
    pthread_mutex_t mu;      /* guards the ring, and every move of a count: */
    pthread_cond_t changed;  /* broadcast on each */
    atomic_ulong events;     /* notifications so far (read without mu) */
    atomic_ulong syncs;      /* sync answers so far (read without mu) */
} obs;

/* ---- notifications ---------------------------------------------------------- */

/* The library logs through this: the observer never prints. */
static void quiet(const char *message)
{
    (void)message;
}

/* What the library's thread does on a notification (sync 0) or on a
 * sync's answer (sync 1): it only counts and wakes; whoever waits calls
 * the ensemble again itself. The count moves with mu held, so a waiter
 * that read the old count under mu cannot miss the wake-up. */
static void wake(obs *o, int sync)
{
    pthread_mutex_lock(&o->mu);
    atomic_fetch_add(sync ? &o->syncs : &o->events, 1);
    pthread_cond_broadcast(&o->changed);
    pthread_mutex_unlock(&o->mu);
}

static void watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
    (void)zh;
    (void)type;
    (void)state;
    (void)path;
    wake(ctx, 0);
}

static void synced(int rc, const char *value, const void *data)
{
    (void)rc;
    (void)value;
    wake((obs *)data, 1);
}

/* Until *count is past seen, or us microseconds; the count then. One
 * wait for both counts: a notification's and a sync's answer. */
static unsigned long await_count(obs *o, atomic_ulong *count, unsigned long seen, long us)
{
    struct timespec until;

    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_nsec += us * 1000;
    until.tv_sec += until.tv_nsec / 1000000000;
    until.tv_nsec %= 1000000000;
    pthread_mutex_lock(&o->mu);
    while (atomic_load(count) == seen &&
           pthread_cond_timedwait(&o->changed, &o->mu, &until) != ETIMEDOUT)
        ;
    pthread_mutex_unlock(&o->mu);
    return atomic_load(count);
}

/* Its server catches up with the leader: what a client saw committed
 * before it asked is readable here after this. */
static void sync_server(obs *o)
{
    unsigned long seen = atomic_load(&o->syncs);

    if (zoo_async(o->zh, o->path, synced, o) == ZOK)
        await_count(o, &o->syncs, seen, SYNC_MS * 1000L);
}

/* ---- sessions ------------------------------------------------------------------ */

/* Whether a server's dump lists the session, asking again while the
 * dump it gets is torn (zk_dump.h): 1 listed, 0 not, -1 when the server
 * does not answer or never gives a whole dump. */
static int dump_lists(int port, int64_t session, char *dump)
{
    int tries, listed = -1;

    for (tries = 0; tries < DUMP_TRIES && listed < 0; tries++) {
        if (tries > 0)
            sim_sleep_us(POLL_US);
        if (sim_ensemble_ask(port, "dump", dump, DUMP_LEN) != 0)
            return -1;
        listed = sim_zk_dump_lists(dump, session);
    }
    return listed;
}

/* Whether a session is open, as a server's dump says. The server the
 * observer is connected to (it fired the watch, so it has closed the
 * session if it went); the others only when that one cannot be asked.
 * -1 when no server answers. */
static int session_open(obs *o, int64_t session)
{
    const char *current = zoo_get_current_server(o->zh), *colon;
    char *dump = malloc(DUMP_LEN);
    int first = current != NULL && (colon = strrchr(current, ':')) != NULL ? atoi(colon + 1) : 0;
    int i, open = -1, port;

    if (dump == NULL)
        return -1;
    for (i = first > 0 ? -1 : 0; i < o->ctl->nodes && open < 0; i++) {
        port = i < 0 ? first : atomic_load(&o->ctl->node_port[0]) + i;
        if (port > 0)
            open = dump_lists(port, session, dump);
    }
    free(dump);
    return open;
}

/* ---- reading the lock ------------------------------------------------------------ */

/* The sequence number of a child: ZooKeeper appends it to the name the
 * client gave (v11's "...lock-", kazoo's "<id>__lock__"), as ten digits,
 * so it is the name's last ten characters; -1 when they are not (not a
 * lock's child). Any library's queue is read so, whatever it names its
 * nodes. */
static long long sequence(const char *name)
{
    size_t len = strlen(name);
    const char *digits;

    if (len <= SEQ_DIGITS)
        return -1;
    digits = name + len - SEQ_DIGITS;
    if (strspn(digits, "0123456789") != SEQ_DIGITS)
        return -1;
    return strtoll(digits, NULL, 10);
}

/* The children's sequence numbers, in order, into *seqs (the caller
 * frees it); children that are not a lock's are left out. How many, or
 * -1 when out of memory. */
static int32_t sequences(const struct String_vector *kids, long long **seqs)
{
    int32_t i, j, n = 0;
    long long s;

    *seqs = malloc(((size_t)kids->count + 1) * sizeof(**seqs));
    if (*seqs == NULL)
        return -1;
    for (i = 0; i < kids->count; i++) {
        if ((s = sequence(kids->data[i])) < 0)
            continue;
        for (j = n++; j > 0 && (*seqs)[j - 1] > s; j--)
            (*seqs)[j] = (*seqs)[j - 1];
        (*seqs)[j] = s;
    }
    return n;
}

static int has(const long long *seqs, int32_t n, long long seq)
{
    for (int32_t i = 0; i < n; i++)
        if (seqs[i] == seq)
            return 1;
    return 0;
}

/* Frees a list of children; it reads as empty after (the library's
 * deallocate leaves its count). */
static void drop(struct String_vector *kids)
{
    deallocate_String_vector(kids);
    *kids = (struct String_vector){ 0, NULL };
}

/* The children, with a watch on them (a waiter's node that comes or goes
 * is a change of the queue), and the lowest, with a watch on it too. 0,
 * with *lowest (czxid 0: no child) and *kids; ZNONODE to look again
 * (the lowest went meanwhile), or an error. A lock's node that is gone
 * has no child: the watch its parent's read left fires when it is back. */
static int lowest_child(obs *o, holder *lowest, struct String_vector *kids)
{
    char child[PATH_LEN * 2];
    struct Stat st;
    int32_t i, best = -1;
    int rc = zoo_wget_children(o->zh, o->path, watcher, o, kids);

    if (rc != ZOK)
        return rc == ZNONODE ? 0 : rc;
    for (i = 0; i < kids->count; i++)
        if (sequence(kids->data[i]) >= 0 &&
            (best < 0 || sequence(kids->data[i]) < sequence(kids->data[best])))
            best = i;
    if (best < 0)
        return 0;
    snprintf(child, sizeof(child), "%s/%s", o->path, kids->data[best]);
    rc = zoo_wexists(o->zh, child, watcher, o, &st);
    if (rc == ZOK)
        *lowest = (holder){ st.czxid, st.ephemeralOwner, sequence(kids->data[best]) };
    return rc; /* ZNONODE: gone meanwhile */
}

/* Who holds the lock now: the node itself when it is ephemeral (v10),
 * else its lowest child (v11), whose children fill *kids. 0, or a
 * ZooKeeper error. */
static int read_holder(obs *o, holder *now, struct String_vector *kids)
{
    struct Stat st;
    int rc, tries;

    for (tries = 0; tries < LOOK_TRIES; tries++) {
        *now = (holder){ 0, 0, 0 };
        drop(kids);
        rc = zoo_wexists(o->zh, o->path, watcher, o, &st);
        if (rc == ZNONODE)
            return 0;
        if (rc != ZOK)
            return rc;
        if (st.ephemeralOwner != 0) {
            *now = (holder){ st.czxid, st.ephemeralOwner, 0 };
            return 0;
        }
        rc = lowest_child(o, now, kids);
        if (rc != ZNONODE)
            return rc;
    }
    return ZNONODE;
}

/* A key event, stamped t_ns (0: now), on the lock's one lane; token: the
 * node's sequence number (v11), 0 for v10's one node. */
static void record(obs *o, int64_t t_ns, const char *word, long long seq)
{
    sim_history_add_node_token_at(o->h, t_ns, 0, SIM_EV_KEY,
                                  atomic_load(&o->ctl->node_port[0]), seq, word);
}

/* The namer thread: each end seen is named when its session has been
 * asked about, and stamped when it was seen, so before the next holder's
 * begin whatever the order of the records. */
static void *namer(void *arg)
{
    obs *o = arg;
    pending_end end;

    pthread_mutex_lock(&o->mu);
    for (;;) {
        while (o->npending == 0)
            pthread_cond_wait(&o->changed, &o->mu);
        end = o->pending[o->first];
        o->first = (o->first + 1) % PENDING_MAX;
        o->npending--;
        o->naming = 1;
        pthread_mutex_unlock(&o->mu);
        record(o, end.t_ns, session_open(o, end.owner) == 0 ? "expired" : "delete",
               end.seq);
        pthread_mutex_lock(&o->mu);
        o->naming = 0;
        pthread_cond_broadcast(&o->changed);
    }
    return NULL;
}

/* An end seen now, for the namer; waits while its queue is full. */
static void end_seen(obs *o, const holder *gone)
{
    pending_end end = { sim_now_ns(), gone->owner, gone->seq };

    pthread_mutex_lock(&o->mu);
    while (o->npending == PENDING_MAX)
        pthread_cond_wait(&o->changed, &o->mu);
    o->pending[(o->first + o->npending++) % PENDING_MAX] = end;
    pthread_cond_broadcast(&o->changed);
    pthread_mutex_unlock(&o->mu);
}

/* Until every end seen is named: the run's last answer waits for it. */
static void ends_named(obs *o)
{
    pthread_mutex_lock(&o->mu);
    while (o->npending > 0 || o->naming)
        pthread_cond_wait(&o->changed, &o->mu);
    pthread_mutex_unlock(&o->mu);
}

/* The waiters' nodes of the last look that are gone (the holder's end is
 * the namer's): "left" when a lower node is still there, so it never
 * held; "gone" when none is, so it may have held between two looks. */
static void departures(obs *o, const long long *now, int32_t n)
{
    for (int32_t i = 0; i < o->queued; i++)
        if (!has(now, n, o->queue[i]) && !(o->cur.czxid != 0 && o->queue[i] == o->cur.seq))
            record(o, 0, n > 0 && now[0] < o->queue[i] ? "left" : "gone", o->queue[i]);
}

/* The nodes of this look that the last one had not seen, but the lowest
 * (a holder's "create"): each a waiter that queued. */
static void arrivals(obs *o, const long long *now, int32_t n, const holder *lowest)
{
    for (int32_t i = 0; i < n; i++)
        if (!has(o->queue, o->queued, now[i]) && !(lowest->czxid != 0 && now[i] == lowest->seq))
            record(o, 0, "queued", now[i]);
}

/* Reads the lock and records what changed since the last look: waiters
 * gone, the holder's end, the next holder, waiters come. 0, or -1 when
 * the ensemble did not answer (the next look tries again). */
static int look(obs *o)
{
    struct String_vector kids = { 0, NULL };
    long long *seqs = NULL;
    int32_t n = -1;
    holder now;

    if (read_holder(o, &now, &kids) == 0)
        n = sequences(&kids, &seqs);
    drop(&kids);
    if (n < 0) {
        free(seqs);
        return -1;
    }
    departures(o, seqs, n);
    if (o->cur.czxid != 0 && now.czxid != o->cur.czxid)
        end_seen(o, &o->cur);
    if (now.czxid != 0 && now.czxid != o->cur.czxid)
        record(o, 0, has(o->queue, o->queued, now.seq) ? "first" : "create", now.seq);
    arrivals(o, seqs, n, &now);
    free(o->queue);
    o->queue = seqs;
    o->queued = n;
    o->cur = now;
    return 0;
}

/* ---- the observer process ----------------------------------------------------- */

/* Every ask not answered yet gets its answer after one sync and one look,
 * and once every end seen is named too where its slot says so
 * (all_named: the simulator's at the run's end, a leaving client's). */
static void answer_asks(obs *o)
{
    long long asked[SIM_ORCHESTRATOR + 1];
    int i, pending = 0;

    for (i = 0; i <= SIM_ORCHESTRATOR; i++) {
        asked[i] = atomic_load(&o->ctl->client[i].asked);
        pending |= asked[i] > atomic_load(&o->ctl->client[i].synced[0]);
    }
    if (!pending)
        return;
    sync_server(o);
    if (look(o) != 0)
        return;
    for (i = 0; i <= SIM_ORCHESTRATOR; i++) {
        if (atomic_load(&o->ctl->client[i].all_named))
            ends_named(o);
        if (asked[i] > atomic_load(&o->ctl->client[i].synced[0]))
            atomic_store(&o->ctl->client[i].synced[0], asked[i]);
    }
}

/* A session on the ensemble; a new one when the last one expired. */
static int connect_session(obs *o)
{
    unsigned long seen = atomic_load(&o->events);

    if (o->zh == NULL || zoo_state(o->zh) == ZOO_EXPIRED_SESSION_STATE) {
        if (o->zh != NULL)
            zookeeper_close(o->zh);
        o->authed = 0;
        o->zh = zookeeper_init2(o->hosts, watcher, SESSION_MS, NULL, o, 0, quiet);
        if (o->zh == NULL)
            return -1;
        await_count(o, &o->events, seen, POLL_US);
    }
    if (zoo_state(o->zh) != ZOO_CONNECTED_STATE)
        return -1;
    /* The lock's nodes admit only the run's digest id: the connected
     * session sends it before any request. */
    if (!o->authed && o->ctl->password[0] != '\0')
        o->authed = sim_ensemble_add_auth(o->zh, o->ctl->password) == ZOK;
    return 0;
}

/* Until killed: read the lock on every notification, answer asks. */
static void observe(obs *o)
{
    unsigned long seen;
    int stale = 1;

    for (;;) {
        seen = atomic_load(&o->events);
        if (connect_session(o) != 0) {
            sim_sleep_us(POLL_US);
            continue;
        }
        if (stale && look(o) == 0) {
            stale = 0;
            atomic_store(&o->ctl->observer_port[0], atomic_load(&o->ctl->node_port[0]));
        }
        answer_asks(o);
        stale = stale || await_count(o, &o->events, seen, POLL_US) != seen;
    }
}

static void init(obs *o, sim_history *h, sim_control *ctl)
{
    pthread_condattr_t attr;
    size_t used = 0;
    int i, port = atomic_load(&ctl->node_port[0]);

    memset(o, 0, sizeof(*o));
    atomic_init(&o->events, 0);
    atomic_init(&o->syncs, 0);
    o->h = h;
    o->ctl = ctl;
    snprintf(o->path, sizeof(o->path), "%s/%s", SIM_ZK_ROOT, ctl->lock_name);
    for (i = 0; i < ctl->nodes && used < sizeof(o->hosts); i++)
        used += (size_t)snprintf(o->hosts + used, sizeof(o->hosts) - used, "%s127.0.0.1:%d",
                                 i ? "," : "", port + i);
    pthread_mutex_init(&o->mu, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&o->changed, &attr);
    pthread_condattr_destroy(&attr);
}

/* The observer process: its namer thread, then its loop; it never
 * returns, and is killed. */
static void run_observer(sim_history *h, sim_control *ctl)
{
    obs o;

    init(&o, h, ctl);
    if (pthread_create(&o.namer, NULL, namer, &o) != 0)
        _exit(1); /* never ready: its start says so */
    observe(&o);
}

pid_t sim_zk_observer_start(sim_history *h, sim_control *ctl, long timeout_ms,
                            char *errstr, size_t len)
{
    int port = atomic_load(&ctl->node_port[0]);
    pid_t pid;

    atomic_store(&ctl->observer_port[0], 0);
    if ((pid = sim_proc_fork(errstr, len)) < 0)
        return -1;
    if (pid == 0) {
        run_observer(h, ctl);
        _exit(0);
    }
    if (sim_observer_wait(ctl, 0, port, timeout_ms) != 0) {
        sim_observer_stop(pid);
        return sim_error(errstr, len, "the ZooKeeper observer did not read the lock on "
                         "ports %d.. within %ld ms", port, timeout_ms);
    }
    return pid;
}
