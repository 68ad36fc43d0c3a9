/* observer: a subscriber that writes the lock key's keyspace events into
 * the history, following the primary across a failover. See observer.h. */
#define _GNU_SOURCE
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "observer.h"
#include "proc.h"
#include "util.h"

#define KEYSPACE_PREFIX "__keyspace@0__:" /* database 0: the stages use it */
#define CHANNEL_LEN (SIM_LOCK_NAME_LEN + 32)
#define POLL_MS 5        /* how often it looks for a new primary */
#define SUBSCRIBE_MS 1000 /* to connect and confirm a subscription */

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
static redisContext *subscribe(int port, const char *key_channel)
{
    struct timeval tv = { SUBSCRIBE_MS / 1000, (SUBSCRIBE_MS % 1000) * 1000 };
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    redisReply *r = NULL;
    void *second = NULL;
    int ok;

    if (c == NULL || c->err) {
        redisFree(c);
        return NULL;
    }
    redisSetTimeout(c, tv);
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

/* A sync marker "slot:seq": the sender waits for synced to reach seq. */
static void acknowledge(sim_control *ctl, const char *marker)
{
    int slot = atoi(marker);
    const char *colon = strchr(marker, ':');
    long long seq;

    if (colon == NULL || slot < 0 || slot > SIM_ORCHESTRATOR)
        return;
    seq = atoll(colon + 1);
    if (seq > atomic_load(&ctl->client[slot].synced))
        atomic_store(&ctl->client[slot].synced, seq);
}

/* ["message", channel, payload]: a key event or a sync marker. */
static void handle(sim_history *h, sim_control *ctl, redisReply *r,
                   const char *key_channel, int port)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 3 ||
        r->element[1]->type != REDIS_REPLY_STRING ||
        r->element[2]->type != REDIS_REPLY_STRING)
        return;
    if (strcmp(r->element[1]->str, key_channel) == 0)
        sim_history_add(h, SIM_NO_CLIENT, 0, SIM_EV_KEY, port, r->element[2]->str);
    else
        acknowledge(ctl, r->element[2]->str);
}

/* Reads messages until the connection breaks or the primary moves. Each
 * buffered message is handled before waiting on the socket again. */
static void listen_on(redisContext *c, sim_history *h, sim_control *ctl,
                      const char *key_channel, int port)
{
    struct pollfd p = { c->fd, POLLIN, 0 };
    void *reply;

    while (atomic_load(&ctl->primary_port) == port) {
        reply = NULL;
        if (redisGetReplyFromReader(c, &reply) != REDIS_OK)
            return;
        if (reply != NULL) {
            handle(h, ctl, reply, key_channel, port);
            freeReplyObject(reply);
            continue;
        }
        if (poll(&p, 1, POLL_MS) > 0 && redisBufferRead(c) != REDIS_OK)
            return;
    }
}

static void observe(sim_history *h, sim_control *ctl)
{
    char key_channel[CHANNEL_LEN];
    redisContext *c;
    int port;

    snprintf(key_channel, sizeof(key_channel), "%s%s", KEYSPACE_PREFIX,
             ctl->lock_name);
    for (;;) {
        port = atomic_load(&ctl->primary_port);
        c = subscribe(port, key_channel);
        if (c == NULL) {
            sim_sleep_us(POLL_MS * 1000); /* a dead primary: wait for the next */
            continue;
        }
        atomic_store(&ctl->observer_port, port);
        listen_on(c, h, ctl, key_channel, port);
        atomic_store(&ctl->observer_port, 0);
        redisFree(c);
    }
}

pid_t sim_observer_start(sim_history *h, sim_control *ctl,
                                 long timeout_ms, char *errstr, size_t len)
{
    pid_t pid;

    atomic_store(&ctl->observer_port, 0);
    if ((pid = sim_proc_fork(errstr, len)) < 0)
        return -1;
    if (pid == 0) {
        observe(h, ctl);
        _exit(0);
    }
    if (sim_observer_wait(ctl, atomic_load(&ctl->primary_port),
                                  timeout_ms) != 0) {
        sim_observer_stop(pid);
        return sim_error(errstr, len, "the observer did not subscribe to port %d within %ld ms",
                     atomic_load(&ctl->primary_port), timeout_ms);
    }
    return pid;
}

int sim_observer_wait(const sim_control *ctl, int port,
                              long timeout_ms)
{
    int64_t start = sim_now_ns();

    while (atomic_load(&ctl->observer_port) != port) {
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

int sim_observer_sync(redisContext *c, sim_control *ctl, int slot,
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
    while (atomic_load(&ctl->client[slot].synced) < seq) {
        if (ms_since(start) > timeout_ms)
            return 1;
        sim_sleep_us(100);
    }
    return 0;
}
