/* resource: the stock and the counter on the resource server. See
 * resource.h. */
#include <stdlib.h>

#include "resource.h"
#include "util.h"

int sim_resource_get(redisContext *c, const char *key, long long *value,
                     char *errstr, size_t len)
{
    redisReply *r = redisCommand(c, "GET %s", key);
    int ok = r != NULL && r->type == REDIS_REPLY_STRING;

    if (ok)
        *value = atoll(r->str);
    else
        sim_error(errstr, len, "GET %s on the resource server: %s", key,
                  r == NULL ? c->errstr
                  : r->type == REDIS_REPLY_ERROR ? r->str : "no such key");
    freeReplyObject(r);
    return ok ? 0 : -1;
}

int sim_resource_set(redisContext *c, const char *key, long long value,
                     char *errstr, size_t len)
{
    redisReply *r = redisCommand(c, "SET %s %lld", key, value);
    int ok = r != NULL && r->type == REDIS_REPLY_STATUS;

    if (!ok)
        sim_error(errstr, len, "SET %s on the resource server: %s", key,
                  r == NULL ? c->errstr
                  : r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
    freeReplyObject(r);
    return ok ? 0 : -1;
}
