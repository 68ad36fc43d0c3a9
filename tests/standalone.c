/* standalone.c: one check of a stage built apart from the tree, from its
 * folder and its kind's plumbing alone (tests/standalone.sh builds it with
 * them). It needs no server, and no more than lock.h: a handle with no name
 * is refused with a reason, a good one starts with an empty errstr, and a
 * server that is not there is an error that says so. Built for a Redis
 * stage (-DREDIS_PLUMBING), it also reads error replies as the plumbing
 * does. 0 when all hold; else 1, with what went wrong on stderr. */
#include <stdio.h>
#include <string.h>

#include "lock.h"
#ifdef REDIS_PLUMBING
#include "redis.h"
#endif

static int failed;

/* what went wrong, and the text it was seen in (an errstr, a reply) */
static void check(int ok, const char *what, const char *seen)
{
    if (!ok) {
        fprintf(stderr, "standalone: %s: \"%s\"\n", what, seen);
        failed = 1;
    }
}

#ifdef REDIS_PLUMBING
/* The error replies after which the next call asks the provider again: a
 * demoted primary's READONLY, a Redis Cluster's MOVED and ASK; not the
 * others, which a new connection would not mend. */
static void check_reconnects(void)
{
    static const struct {
        const char *reply;
        int reconnect;
    } cases[] = {
        { "READONLY You can't write against a read only replica.", 1 },
        { "MOVED 3999 127.0.0.1:6381", 1 },
        { "ASK 3999 127.0.0.1:6381", 1 },
        { "NOSCRIPT No matching script. Please use EVAL.", 0 },
        { "ERR wrong number of arguments for 'set' command", 0 },
        { "MOVEDX not a redirect", 0 },
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        redisReply r = { .type = REDIS_REPLY_ERROR, .str = (char *)cases[i].reply,
                         .len = strlen(cases[i].reply) };

        check(redis_must_reconnect(&r) == cases[i].reconnect,
              cases[i].reconnect ? "an error reply that must drop the connection keeps it"
                                 : "an error reply that a new connection would not mend drops it",
              cases[i].reply);
    }
}
#endif

int main(void)
{
    dlock_config cfg;
    dlock *l;
    int rc;

    dlock_config_init(&cfg);
    cfg.port = 1; /* nothing listens there */
    cfg.timeout_ms = 500;
    l = dlock_new("", &cfg);
    if (l == NULL)
        return fprintf(stderr, "standalone: dlock_new returned NULL\n"), 1;
    rc = dlock_acquire(l);
    check(rc == DLOCK_ERR && strstr(dlock_errstr(l), "name") != NULL,
          "a lock with an empty name: expected DLOCK_ERR and a reason that names the name, "
          "got",
          dlock_errstr(l));
    dlock_free(l);
    l = dlock_new("standalone", &cfg);
    if (l == NULL)
        return fprintf(stderr, "standalone: dlock_new returned NULL\n"), 1;
    check(dlock_errstr(l)[0] == '\0', "a new handle: expected errstr \"\", got", dlock_errstr(l));
    rc = dlock_acquire(l);
    check(rc == DLOCK_ERR && dlock_errstr(l)[0] != '\0',
          "acquire with no server: expected DLOCK_ERR and a reason, got", dlock_errstr(l));
    dlock_free(l);
#ifdef REDIS_PLUMBING
    check_reconnects();
#endif
    return failed;
}
