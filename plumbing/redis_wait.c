/* redis_wait.c: waiting without polling, for the Redis stages that sleep
 * until a release tells them (see redis.h): a waiter's pub/sub connection,
 * kept between waits, and a condition on the monotonic clock. */
#define _GNU_SOURCE
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "redis.h"

/* The shared part of a stage's handle: its first member (redis.h). */
static redis_base *base(dlock *l)
{
    return (redis_base *)(void *)l;
}

int redis_fail(dlock *l, const char *what, const char *why)
{
    pthread_mutex_lock(&base(l)->mu);
    redis_error(l, "%s: %s", what, why);
    pthread_mutex_unlock(&base(l)->mu);
    return DLOCK_ERR;
}

/* Whether a reply is the server's confirmation of a SUBSCRIBE. */
static int is_subscribed(const redisReply *r)
{
    return r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
           r->element[0]->type == REDIS_REPLY_STRING &&
           strcmp(r->element[0]->str, "subscribe") == 0;
}

/* Sends SUBSCRIBE on sub and reads up to the server's confirmation. What
 * the last wait left unread (its UNSUBSCRIBE's answer, messages about
 * earlier releases) comes before the confirmation and is skipped. 0, or
 * -1 when the connection failed (sub->errstr says why). */
static int subscribe_on(redisContext *sub, const char *channel)
{
    redisReply *r = NULL;

    if (redisAppendCommand(sub, "SUBSCRIBE %s", channel) != REDIS_OK)
        return -1;
    do {
        freeReplyObject(r);
        if (redisGetReply(sub, (void **)&r) != REDIS_OK)
            return -1;
    } while (!is_subscribed(r));
    freeReplyObject(r);
    return 0;
}

/* Takes the kept connection, if any, and the channel it still listens to
 * (NULL: none) out of the handle: one waiter at a time uses it. */
static redisContext *take_kept(dlock *l, char **listening)
{
    redis_base *b = base(l);
    redisContext *sub;

    pthread_mutex_lock(&b->mu);
    sub = b->sub;
    *listening = b->listening;
    b->sub = NULL;
    b->listening = NULL;
    pthread_mutex_unlock(&b->mu);
    return sub;
}

/* Whether the kept sub serves a wait on channel: it listens there already
 * (*same), or it leaves the channel it stayed on, if any, and subscribes
 * (the answer to UNSUBSCRIBE comes before the confirmation: skipped). */
static int reuse(redisContext *sub, const char *listening, const char *channel, int *same)
{
    *same = listening != NULL && strcmp(listening, channel) == 0;
    if (*same)
        return 1;
    if (listening != NULL && redisAppendCommand(sub, "UNSUBSCRIBE") != REDIS_OK)
        return 0;
    return subscribe_on(sub, channel) == 0;
}

redisContext *redis_subscribe(dlock *l, const char *channel, int *kept)
{
    char why[DLOCK_ERRSTR_LEN], *listening;
    redisContext *sub = take_kept(l, &listening);
    int same = 0, ok = sub != NULL && reuse(sub, listening, channel, &same);

    free(listening);
    if (kept != NULL)
        *kept = same;
    if (ok)
        return sub;
    redisFree(sub); /* none kept, or it died since: a new one */
    sub = redis_connect(l, 0, why, sizeof(why));
    if (sub == NULL) {
        redis_fail(l, "subscribe", why);
        return NULL;
    }
    if (subscribe_on(sub, channel) == 0)
        return sub;
    redis_fail(l, "subscribe", sub->errstr);
    redisFree(sub);
    return NULL;
}

/* Keeps sub in the handle for the next wait, still listening to name
 * (NULL: to none); closes it when another thread's wait kept one first. */
static void keep(dlock *l, redisContext *sub, char *name)
{
    redis_base *b = base(l);

    pthread_mutex_lock(&b->mu);
    if (b->sub == NULL) {
        b->sub = sub;
        sub = NULL;
        b->listening = name;
        name = NULL;
    }
    pthread_mutex_unlock(&b->mu);
    free(name);
    redisFree(sub);
}

/* Keeps sub still subscribed to channel (redis_base's stay_subscribed). */
static void stay(dlock *l, redisContext *sub, const char *channel)
{
    char *name = strdup(channel);

    if (name == NULL) {
        redisFree(sub); /* out of memory: the next wait subscribes anew */
        return;
    }
    keep(l, sub, name);
}

void redis_unsubscribe(dlock *l, redisContext *sub, const char *channel)
{
    int sent = 0;

    if (sub == NULL)
        return;
    if (base(l)->stay_subscribed) {
        stay(l, sub, channel);
        return;
    }
    if (redisAppendCommand(sub, "UNSUBSCRIBE %s", channel) == REDIS_OK)
        while (redisBufferWrite(sub, &sent) == REDIS_OK && !sent)
            ;
    if (!sent) {
        redisFree(sub); /* broken: the next wait asks for a new one */
        return;
    }
    keep(l, sub, NULL);
}

void redis_drop_sub(dlock *l)
{
    redis_base *b = base(l);

    redisFree(b->sub);
    b->sub = NULL;
    free(b->listening);
    b->listening = NULL;
}

void redis_wait_message(redisContext **sub, long ms)
{
    struct pollfd p = { (*sub)->fd, POLLIN, 0 };
    void *reply = NULL;

    /* An earlier read may have left a whole message in hiredis's buffer. */
    if (redisReaderGetReply((*sub)->reader, &reply) == REDIS_OK && reply) {
        freeReplyObject(reply);
        return;
    }
    if (poll(&p, 1, ms < 1 ? 1 : ms > INT_MAX ? INT_MAX : (int)ms) <= 0)
        return;
    if (redisGetReply(*sub, &reply) != REDIS_OK) {
        redisFree(*sub);
        *sub = NULL;
        return;
    }
    freeReplyObject(reply);
}

void redis_cond_init(pthread_cond_t *cond)
{
    pthread_condattr_t attr;

    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(cond, &attr);
    pthread_condattr_destroy(&attr);
}
