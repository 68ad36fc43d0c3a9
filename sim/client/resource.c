/* resource: the stock and the counter on the resource server. See
 * resource.h. */
#include <stdlib.h>

#include "resource.h"
#include "util.h"

/* KEYS = {key, fence}, ARGV = {token}: raise the fence, read the key. */
#define FENCED_GET                                                   \
    "if tonumber(ARGV[1]) > tonumber(redis.call('get', KEYS[2]) or '0') then\n" \
    "    redis.call('set', KEYS[2], ARGV[1])\n"                      \
    "end\n"                                                          \
    "return redis.call('get', KEYS[1])\n"

/* KEYS = {key, fence}, ARGV = {value, token}: write only with a token at
 * least the fence, and say the fence when the write is refused. */
#define FENCED_SET                                                   \
    "local fence = tonumber(redis.call('get', KEYS[2]) or '0')\n"    \
    "if tonumber(ARGV[2]) < fence then\n"                            \
    "    return fence\n"                                             \
    "end\n"                                                          \
    "redis.call('set', KEYS[2], ARGV[2])\n"                          \
    "return redis.call('set', KEYS[1], ARGV[1])\n"

/* Why a reply is not the one asked for, in a few words. */
static const char *reply_error(const redisContext *c, const redisReply *r,
                               const char *missing)
{
    if (r == NULL)
        return c->errstr;
    return r->type == REDIS_REPLY_ERROR ? r->str : missing;
}

/* A reply to GET (or to the fenced read) into *value. */
static int get_reply(redisContext *c, redisReply *r, const char *what,
                     const char *key, long long *value, char *errstr, size_t len)
{
    int ok = r != NULL && r->type == REDIS_REPLY_STRING;

    if (ok)
        *value = atoll(r->str);
    else
        sim_error(errstr, len, "%s %s on the resource server: %s", what, key,
                  reply_error(c, r, "no such key"));
    freeReplyObject(r);
    return ok ? 0 : -1;
}

int sim_resource_get(redisContext *c, const char *key, long long *value,
                     char *errstr, size_t len)
{
    return get_reply(c, redisCommand(c, "GET %s", key), "GET", key, value, errstr, len);
}

int sim_resource_set(redisContext *c, const char *key, long long value,
                     char *errstr, size_t len)
{
    redisReply *r = redisCommand(c, "SET %s %lld", key, value);
    int ok = r != NULL && r->type == REDIS_REPLY_STATUS;

    if (!ok)
        sim_error(errstr, len, "SET %s on the resource server: %s", key,
                  reply_error(c, r, "unexpected reply"));
    freeReplyObject(r);
    return ok ? 0 : -1;
}

int sim_resource_get_fenced(redisContext *c, const char *key, long long token,
                            long long *value, char *errstr, size_t len)
{
    redisReply *r = redisCommand(c, "EVAL %s 2 %s %s %lld", FENCED_GET, key,
                                 SIM_FENCE_KEY, token);

    return get_reply(c, r, "the fenced read of", key, value, errstr, len);
}

int sim_resource_set_fenced(redisContext *c, const char *key, long long value,
                            long long token, long long *highest,
                            char *errstr, size_t len)
{
    redisReply *r = redisCommand(c, "EVAL %s 2 %s %s %lld %lld", FENCED_SET, key,
                                 SIM_FENCE_KEY, value, token);
    int rc = 0;

    if (r != NULL && r->type == REDIS_REPLY_INTEGER) {
        *highest = r->integer;
        rc = SIM_RESOURCE_REFUSED;
    } else if (r == NULL || r->type != REDIS_REPLY_STATUS) {
        rc = sim_error(errstr, len, "the fenced write of %s on the resource server: %s",
                       key, reply_error(c, r, "unexpected reply"));
    }
    freeReplyObject(r);
    return rc;
}
