/* bench_server: what the lock server tells the bench: our own named
 * connections, the SLOWLOG (every command a client sent, and those its
 * scripts ran) and INFO commandstats. See bench.h. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bench.h"
#include "util.h"

#define ADMIN_NAME "lockstep-bench" /* our own connections: left out of every count */
#define SLOWLOG_MAX_LEN 2000000  /* room for every command of a contended window */
#define SLOWLOG_DEFAULT_US 10000 /* Redis's defaults, restored after each count */
#define SLOWLOG_DEFAULT_LEN 128
#define SCRIPT_ADDR "?:0"    /* SLOWLOG's address for a command run by a script */

/* ---- our connections ------------------------------------------------------------ */

/* One command on one of our connections; NULL with errstr on an error
 * reply or a broken connection. */
static redisReply *ask(redisContext *c, char *errstr, size_t len,
                       const char *fmt, ...)
{
    char text[96];
    redisReply *r;
    va_list ap, again;

    va_start(ap, fmt);
    va_copy(again, ap);
    vsnprintf(text, sizeof(text), fmt, again); /* the command, for the error */
    va_end(again);
    r = redisvCommand(c, fmt, ap);
    va_end(ap);
    if (r == NULL) {
        sim_error(errstr, len, "%s: %s", text, c->errstr);
        return NULL;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        sim_error(errstr, len, "%s: %s", text, r->str);
        freeReplyObject(r);
        return NULL;
    }
    return r;
}

int sim_bench_tell(redisContext *c, char *errstr, size_t len, const char *fmt,
                   const char *arg)
{
    redisReply *r = ask(c, errstr, len, fmt, arg);

    freeReplyObject(r);
    return r == NULL ? -1 : 0;
}

redisContext *sim_bench_connect(const sim_server *s, char *errstr, size_t len)
{
    redisContext *c = sim_server_connect(s, SIM_BENCH_TIMEOUT_MS, errstr, len);

    if (c == NULL)
        return NULL;
    if (sim_bench_tell(c, errstr, len, "CLIENT SETNAME %s", ADMIN_NAME) != 0 ||
        sim_bench_tell(c, errstr, len, "CONFIG SET notify-keyspace-events %s", "") != 0) {
        redisFree(c);
        return NULL;
    }
    return c;
}

int sim_bench_slowlog_on(sim_bench *b, char *errstr, size_t len)
{
    char n[16];

    snprintf(n, sizeof(n), "%d", SLOWLOG_MAX_LEN);
    if (sim_bench_tell(b->adm[0], errstr, len, "CONFIG SET slowlog-max-len %s", n) != 0 ||
        sim_bench_tell(b->adm[0], errstr, len, "CONFIG SET slowlog-log-slower-than %s", "0") != 0)
        return -1;
    return sim_bench_tell(b->adm[0], errstr, len, "SLOWLOG %s", "RESET");
}

int sim_bench_slowlog_off(sim_bench *b, char *errstr, size_t len)
{
    char us[16], n[16];

    snprintf(us, sizeof(us), "%d", SLOWLOG_DEFAULT_US);
    snprintf(n, sizeof(n), "%d", SLOWLOG_DEFAULT_LEN);
    if (sim_bench_tell(b->adm[0], errstr, len, "CONFIG SET slowlog-log-slower-than %s", us) != 0 ||
        sim_bench_tell(b->adm[0], errstr, len, "SLOWLOG %s", "RESET") != 0)
        return -1;
    return sim_bench_tell(b->adm[0], errstr, len, "CONFIG SET slowlog-max-len %s", n);
}

/* A SLOWLOG entry: id, time, duration, argv, client address, client name.
 * 0 for a client's command, 1 for a script's, 2 for ours (skipped). */
static int entry_origin(const redisReply *e)
{
    if (e->type != REDIS_REPLY_ARRAY || e->elements < 6 ||
        e->element[3]->type != REDIS_REPLY_ARRAY ||
        e->element[4]->type != REDIS_REPLY_STRING ||
        e->element[5]->type != REDIS_REPLY_STRING)
        return -1;
    if (strcmp(e->element[5]->str, ADMIN_NAME) == 0)
        return 2;
    return strcmp(e->element[4]->str, SCRIPT_ADDR) == 0 ? 1 : 0;
}

/* The whole log (newest first), checked to be whole. */
static redisReply *slowlog_get(sim_bench *b, char *errstr, size_t len)
{
    redisReply *r = ask(b->adm[0], errstr, len, "SLOWLOG GET %d", -1);

    if (r != NULL && r->type != REDIS_REPLY_ARRAY) {
        freeReplyObject(r);
        r = NULL;
        sim_error(errstr, len, "SLOWLOG GET: not an array");
    }
    if (r != NULL && r->elements >= SLOWLOG_MAX_LEN) {
        freeReplyObject(r);
        r = NULL;
        sim_error(errstr, len, "SLOWLOG overflowed %d entries: shorten SIM_BENCH_WINDOW_MS",
              SLOWLOG_MAX_LEN);
    }
    return r;
}

int sim_bench_slowlog_count(sim_bench *b, long long *top, long long *internal,
                            char *errstr, size_t len)
{
    redisReply *r = slowlog_get(b, errstr, len);
    size_t i;

    if (r == NULL)
        return -1;
    *top = *internal = 0;
    for (i = 0; i < r->elements; i++) {
        int origin = entry_origin(r->element[i]);

        *top += origin == 0;
        *internal += origin == 1;
    }
    freeReplyObject(r);
    return 0;
}

/* ---- unlock messages, from the log ------------------------------------------------ */

#define CHANNELS_MAX 256 /* channels a window subscribes to: one per waiting thread */

/* Subscribers per channel, as the log's commands change them. */
typedef struct channels {
    char *name[CHANNELS_MAX];
    long long subs[CHANNELS_MAX];
    int n;
} channels;

/* The channel's counter; NULL when the table is full. */
static long long *subscribers(channels *t, const redisReply *name)
{
    int i;

    for (i = 0; i < t->n; i++)
        if (strcmp(t->name[i], name->str) == 0)
            return &t->subs[i];
    if (t->n == CHANNELS_MAX || (t->name[t->n] = strdup(name->str)) == NULL)
        return NULL;
    t->subs[t->n] = 0;
    return &t->subs[t->n++];
}

/* One entry's effect: a SUBSCRIBE or UNSUBSCRIBE of one channel by a
 * client, or a PUBLISH (from a script, or a client). -1: out of room. */
static int message_step(channels *t, const redisReply *e, long long *published,
                        long long *delivered)
{
    const redisReply *argv = e->element[3];
    const char *cmd;
    long long *subs;

    if (argv->elements < 2 || argv->element[0]->type != REDIS_REPLY_STRING ||
        argv->element[1]->type != REDIS_REPLY_STRING)
        return 0;
    cmd = argv->element[0]->str;
    if (strcasecmp(cmd, "subscribe") != 0 && strcasecmp(cmd, "unsubscribe") != 0 &&
        strcasecmp(cmd, "publish") != 0)
        return 0;
    if ((subs = subscribers(t, argv->element[1])) == NULL)
        return -1;
    if (strcasecmp(cmd, "subscribe") == 0)
        (*subs)++;
    else if (strcasecmp(cmd, "unsubscribe") == 0)
        *subs -= *subs > 0;
    else {
        (*published)++;
        *delivered += *subs;
    }
    return 0;
}

int sim_bench_slowlog_messages(sim_bench *b, long long *published, long long *delivered,
                               char *errstr, size_t len)
{
    redisReply *r = slowlog_get(b, errstr, len);
    channels t = { .n = 0 };
    int rc = 0, i;
    size_t k;

    if (r == NULL)
        return -1;
    *published = *delivered = 0;
    /* Oldest first: the log keeps the newest at the front. */
    for (k = r->elements; k-- > 0 && rc == 0;) {
        int origin = entry_origin(r->element[k]);

        if (origin == 0 || origin == 1)
            rc = message_step(&t, r->element[k], published, delivered);
    }
    for (i = 0; i < t.n; i++)
        free(t.name[i]);
    freeReplyObject(r);
    if (rc != 0)
        return sim_error(errstr, len, "more than %d pub/sub channels in one window",
                         CHANNELS_MAX);
    return 0;
}

/* Leaves out the commands only we send (info, slowlog, config, client)
 * and a new connection's AUTH: the run's password, not the lock's. */
int sim_bench_commandstats(sim_bench *b, long long *calls, char *errstr, size_t len)
{
    static const char *const ours[] = { "info", "slowlog", "config", "client", "auth" };
    redisReply *r = ask(b->adm[0], errstr, len, "INFO %s", "commandstats");
    const char *p;
    size_t i;

    if (r == NULL)
        return -1;
    *calls = 0;
    for (p = r->str; (p = strstr(p, "cmdstat_")) != NULL; p++) {
        const char *name = p + strlen("cmdstat_"), *n = strstr(p, "calls=");
        int skip = 0;

        for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
            skip |= strncmp(name, ours[i], strlen(ours[i])) == 0;
        if (n != NULL && !skip)
            *calls += atoll(n + strlen("calls="));
    }
    freeReplyObject(r);
    return 0;
}

/* ---- one pair of commands, from the log ---------------------------------------------- */

void sim_bench_pair_free(sim_bench_pair *t)
{
    int i, j;

    for (i = 0; i < t->n; i++) {
        for (j = 0; j < t->cmd[i].argc; j++)
            free(t->cmd[i].argv[j]);
    }
    memset(t, 0, sizeof(*t));
}

/* Copies a logged argv. SLOWLOG shortens what it would not keep whole
 * ("... (12 more bytes)"): such a command cannot be replayed. */
static int copy_command(sim_bench_command *c, const redisReply *argv, char *errstr, size_t len)
{
    size_t i;

    if (argv->elements == 0 || argv->elements > SIM_BENCH_ARGS_MAX)
        return sim_error(errstr, len, "a command with %zu arguments", argv->elements);
    for (i = 0; i < argv->elements; i++) {
        const redisReply *a = argv->element[i];

        if (a->type != REDIS_REPLY_STRING || strstr(a->str, " more bytes)") ||
            strstr(a->str, " more arguments)"))
            return sim_error(errstr, len, "SLOWLOG shortened a command; cannot replay it");
        if ((c->argv[i] = malloc(a->len + 1)) == NULL)
            return sim_error(errstr, len, "out of memory");
        memcpy(c->argv[i], a->str, a->len + 1);
        c->len[i] = a->len;
        c->argc = (int)i + 1;
    }
    return 0;
}

static int same_command(const sim_bench_command *a, const sim_bench_command *b)
{
    int i;

    if (a->argc != b->argc)
        return 0;
    for (i = 0; i < a->argc; i++) {
        if (a->len[i] != b->len[i] || memcmp(a->argv[i], b->argv[i], a->len[i]) != 0)
            return 0;
    }
    return 1;
}

/* The log of two pairs, oldest first, into a trace of both. */
static int parse_log(const redisReply *r, sim_bench_pair *two, char *errstr, size_t len)
{
    size_t i;

    memset(two, 0, sizeof(*two));
    for (i = r->elements; i-- > 0;) {
        const redisReply *e = r->element[i];
        int origin = entry_origin(e);

        if (origin < 0)
            return sim_error(errstr, len, "SLOWLOG entry of an unknown shape");
        two->internal += origin == 1;
        /* A new connection's AUTH logs in with the run's password: it is
         * no command of the lock's. */
        if (origin != 0 || (e->element[3]->elements > 0 &&
                            e->element[3]->element[0]->type == REDIS_REPLY_STRING &&
                            strcasecmp(e->element[3]->element[0]->str, "auth") == 0))
            continue;
        if (two->n == SIM_BENCH_SEQ_MAX)
            return sim_error(errstr, len, "more than %d commands in two pairs", SIM_BENCH_SEQ_MAX);
        if (copy_command(&two->cmd[two->n++], e->element[3], errstr, len) != 0)
            return -1;
    }
    return 0;
}

/* Two warm pairs must be the same commands twice; the second is the
 * pair. Anything else (a first-use step, a retry) is not one pair's cost. */
static int split_pairs(sim_bench_pair *two, sim_bench_pair *one, char *errstr, size_t len)
{
    int half = two->n / 2, i;

    if (two->n == 0 || two->n % 2 != 0 || two->internal % 2 != 0)
        return sim_error(errstr, len, "two pairs logged %d commands and %d in scripts: not twice the same",
                     two->n, two->internal);
    for (i = 0; i < half; i++) {
        if (!same_command(&two->cmd[i], &two->cmd[half + i]))
            return sim_error(errstr, len, "the second pair's commands differ from the first's");
    }
    memset(one, 0, sizeof(*one));
    one->n = half;
    one->internal = two->internal / 2;
    for (i = 0; i < half; i++) {
        one->cmd[i] = two->cmd[half + i];
        memset(&two->cmd[half + i], 0, sizeof(sim_bench_command));
    }
    two->n = half;
    return 0;
}

int sim_bench_slowlog_pair(sim_bench *b, sim_bench_pair *one, char *errstr, size_t len)
{
    redisReply *r = slowlog_get(b, errstr, len);
    sim_bench_pair two = { 0 };
    int rc;

    if (r == NULL)
        return -1;
    rc = parse_log(r, &two, errstr, len);
    freeReplyObject(r);
    if (rc == 0)
        rc = split_pairs(&two, one, errstr, len);
    sim_bench_pair_free(&two);
    return rc;
}
