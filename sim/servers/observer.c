/* observer: a subscriber that writes the lock key's keyspace events into
 * the history, on every node, following each one across a failover or a
 * restart. See observer.h. */
#define _GNU_SOURCE
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "observer.h"
#include "password.h"
#include "proc.h"
#include "util.h"

#define KEYSPACE_PREFIX "__keyspace@0__:" /* database 0: the stages use it */
#define CHANNEL_LEN (SIM_LOCK_NAME_LEN + 32)
#define POLL_MS 5        /* how often it looks for a node that moved */
#define SUBSCRIBE_MS 1000 /* to connect and confirm a subscription */
#define ASK_POLL_US 1000  /* how often an asking client looks for the answer */
#define SYNC_POLL_US 500  /* and a syncing one: the observer reads its marker in
                           * well under a millisecond */

static int64_t ms_since(int64_t start_ns)
{
    return (sim_now_ns() - start_ns) / 1000000;
}

/* ---- the observer process ------------------------------------------------ */

/* One reply to SUBSCRIBE: ["subscribe", channel, count]. */
static int confirmed(redisReply *r)
{
    return r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
           r->element[0]->type == REDIS_REPLY_STRING &&
           strcmp(r->element[0]->str, "subscribe") == 0;
}

/* Subscribes on port to the key's events and to the sync channel, and
 * waits for both confirmations: only then are no events missed. */
static redisContext *subscribe(int port, const char *key_channel, const char *password)
{
    struct timeval tv = { SUBSCRIBE_MS / 1000, (SUBSCRIBE_MS % 1000) * 1000 };
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    redisReply *r = NULL;
    void *second = NULL;
    char why[128];
    int ok;

    if (c == NULL || c->err) {
        redisFree(c);
        return NULL;
    }
    redisSetTimeout(c, tv);
    if (sim_password_auth(c, password, port, why, sizeof(why)) != 0) {
        redisFree(c);
        return NULL;
    }
    r = redisCommand(c, "SUBSCRIBE %s %s", key_channel, SIM_OBSERVER_SYNC_CHANNEL);
    ok = confirmed(r) && redisGetReply(c, &second) == REDIS_OK &&
         confirmed(second);
    freeReplyObject(r);
    freeReplyObject(second);
    if (!ok) {
        redisFree(c);
        return NULL;
    }
    return c;
}

/* A sync marker "slot:seq" seen on node: the sender waits for that
 * node's synced to reach seq. */
static void acknowledge(sim_control *ctl, int node, const char *marker)
{
    int slot = atoi(marker);
    const char *colon = strchr(marker, ':');
    long long seq;

    if (colon == NULL || slot < 0 || slot > SIM_ORCHESTRATOR)
        return;
    seq = atoll(colon + 1);
    if (seq > atomic_load(&ctl->client[slot].synced[node]))
        atomic_store(&ctl->client[slot].synced[node], seq);
}

/* ["message", channel, payload]: a key event or a sync marker. */
static void handle(sim_history *h, sim_control *ctl, redisReply *r,
                   const char *key_channel, int node, int port)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
        r->element[1]->type != REDIS_REPLY_STRING ||
        r->element[2]->type != REDIS_REPLY_STRING)
        return;
    if (strcmp(r->element[1]->str, key_channel) == 0)
        sim_history_add_node(h, node, SIM_EV_KEY, port, r->element[2]->str);
    else
        acknowledge(ctl, node, r->element[2]->str);
}

/* The observer's link to each node. */
typedef struct links {
    redisContext *c[SIM_NODES_MAX];  /* NULL while the node is not subscribed */
    int port[SIM_NODES_MAX];         /* where c is connected */
} links;

static void unlink_node(links *ls, sim_control *ctl, int i)
{
    redisFree(ls->c[i]);
    ls->c[i] = NULL;
    atomic_store(&ctl->observer_port[i], 0);
}

/* Each node subscribed where the control block says it lives now: a
 * node that moved is left, one that is down is tried again next time. */
static void follow(links *ls, sim_control *ctl, const char *key_channel)
{
    int i, want;

    for (i = 0; i < ctl->nodes; i++) {
        want = atomic_load(&ctl->node_port[i]);
        if (ls->c[i] != NULL && ls->port[i] != want)
            unlink_node(ls, ctl, i);
        if (ls->c[i] != NULL || (ls->c[i] = subscribe(want, key_channel, ctl->password)) == NULL)
            continue;
        ls->port[i] = want;
        atomic_store(&ctl->observer_port[i], want);
    }
}

/* Handles every message node i has sent (readable: read the socket
 * first); a broken link is dropped. */
static void drain(links *ls, sim_history *h, sim_control *ctl, const char *key_channel,
                  int i, int readable)
{
    void *reply;

    if (readable && redisBufferRead(ls->c[i]) != REDIS_OK) {
        unlink_node(ls, ctl, i);
        return;
    }
    for (;;) {
        reply = NULL;
        if (redisGetReplyFromReader(ls->c[i], &reply) != REDIS_OK) {
            unlink_node(ls, ctl, i);
            return;
        }
        if (reply == NULL)
            return;
        handle(h, ctl, reply, key_channel, i, ls->port[i]);
        freeReplyObject(reply);
    }
}

/* Until killed: follow the nodes, wait on all their sockets at once, and
 * write what they say. */
static void observe(sim_history *h, sim_control *ctl)
{
    char key_channel[CHANNEL_LEN];
    struct pollfd p[SIM_NODES_MAX];
    int who[SIM_NODES_MAX], n, i;
    links ls;

    memset(&ls, 0, sizeof(ls));
    snprintf(key_channel, sizeof(key_channel), "%s%s", KEYSPACE_PREFIX,
             ctl->lock_name);
    for (;;) {
        follow(&ls, ctl, key_channel);
        for (i = n = 0; i < ctl->nodes; i++) {
            if (ls.c[i] != NULL)
                drain(&ls, h, ctl, key_channel, i, 0); /* what a read left */
            if (ls.c[i] == NULL)
                continue;
            p[n] = (struct pollfd){ ls.c[i]->fd, POLLIN, 0 };
            who[n++] = i;
        }
        if (n == 0)
            sim_sleep_us(POLL_MS * 1000); /* every node down: wait for one */
        if (n == 0 || poll(p, n, POLL_MS) <= 0)
            continue;
        for (i = 0; i < n; i++) {
            if (p[i].revents != 0 && ls.c[who[i]] != NULL)
                drain(&ls, h, ctl, key_channel, who[i], 1);
        }
    }
}

pid_t sim_observer_start(sim_history *h, sim_control *ctl,
                         long timeout_ms, char *errstr, size_t len)
{
    pid_t pid;
    int i;

    for (i = 0; i < SIM_NODES_MAX; i++)
        atomic_store(&ctl->observer_port[i], 0);
    if ((pid = sim_proc_fork(errstr, len)) < 0)
        return -1;
    if (pid == 0) {
        observe(h, ctl);
        _exit(0);
    }
    for (i = 0; i < ctl->nodes; i++) {
        int port = atomic_load(&ctl->node_port[i]);

        if (sim_observer_wait(ctl, i, port, timeout_ms) != 0) {
            sim_observer_stop(pid);
            return sim_error(errstr, len, "the observer did not subscribe to node %d "
                             "(port %d) within %ld ms", i, port, timeout_ms);
        }
    }
    return pid;
}

int sim_observer_wait(const sim_control *ctl, int node, int port,
                      long timeout_ms)
{
    int64_t start = sim_now_ns();

    while (atomic_load(&ctl->observer_port[node]) != port) {
        if (ms_since(start) > timeout_ms)
            return -1;
        sim_sleep_us(500);
    }
    return 0;
}

void sim_observer_stop(pid_t pid)
{
    sim_proc_kill(pid);
}

/* ---- the sync marker (any process) ------------------------------------------ */

int sim_observer_sync(redisContext *c, sim_control *ctl, int slot, int node,
                      long long seq, long timeout_ms)
{
    redisReply *r = redisCommand(c, "PUBLISH %s %d:%lld",
                                 SIM_OBSERVER_SYNC_CHANNEL, slot, seq);
    long long listeners;
    int64_t start = sim_now_ns();

    if (r == NULL)
        return -1;
    listeners = r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
    freeReplyObject(r);
    if (listeners == 0)
        return 1;
    while (atomic_load(&ctl->client[slot].synced[node]) < seq) {
        if (ms_since(start) > timeout_ms)
            return 1;
        sim_sleep_us(SYNC_POLL_US);
    }
    return 0;
}

int sim_observer_ask(sim_control *ctl, int slot, long long seq, long timeout_ms)
{
    int64_t start = sim_now_ns();

    atomic_store(&ctl->client[slot].asked, seq);
    /* The answer takes a sync and a read of the ensemble, milliseconds:
     * a finer poll only burns the CPU the servers need. */
    while (atomic_load(&ctl->client[slot].synced[0]) < seq) {
        if (ms_since(start) > timeout_ms)
            return 1;
        sim_sleep_us(ASK_POLL_US);
    }
    return 0;
}
