/* lock_helpers: see lock_helpers.h. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "lock_helpers.h"

dlock *take(const char *who, const char *name, long lease_ms)
{
    dlock *l = harness_lock(harness_server(), name, lease_ms, 0);
    int rc = dlock_acquire(l);

    ck_assert_msg(rc == DLOCK_OK, "expected client %s to take the free lock '%s', got %s (%s)",
                  who, name, harness_result(rc), dlock_errstr(l));
    return l;
}

void release_ok(dlock *l, const char *who)
{
    int rc = dlock_release(l);

    ck_assert_msg(rc == DLOCK_OK, "expected client %s's release to return OK, got %s (%s)",
                  who, harness_result(rc), dlock_errstr(l));
}

int nodes_with(const char *key)
{
    int i, n = 0;

    for (i = 0; i < harness_nodes(); i++)
        n += harness_int(harness_node_redis(i), "EXISTS %s", key) == 1;
    return n;
}

long long exists(const char *key)
{
    int n = nodes_with(key);

    ck_assert_msg(n == 0 || n == harness_nodes(), "the key '%s' is on %d of the %d nodes; "
                  "expected all of them or none", key, n, harness_nodes());
    return n > 0;
}

void lock_value(const char *key, char *out, size_t len)
{
    redisContext *c = harness_redis();
    char type[16];
    redisReply *r;

    harness_str(c, type, sizeof(type), "TYPE %s", key);
    out[0] = '\0';
    if (strcmp(type, "string") == 0) {
        harness_str(c, out, len, "GET %s", key);
    } else if (strcmp(type, "hash") == 0) {
        r = redisCommand(c, "HGETALL %s", key);
        ck_assert_msg(r != NULL && r->type == REDIS_REPLY_ARRAY, "HGETALL %s failed", key);
        if (r->elements == 2)
            snprintf(out, len, "%s=%s", r->element[0]->str, r->element[1]->str);
        else
            snprintf(out, len, "(%zu hash fields)", r->elements / 2);
        freeReplyObject(r);
    }
}

long parse_owner(const char *owner, char *id)
{
    char *end;
    long tid;
    int i;

    for (i = 0; i < TOKEN_HEX; i++)
        if (!isxdigit((unsigned char)owner[i]) || isupper((unsigned char)owner[i]))
            return -1;
    if (owner[TOKEN_HEX] != ':' || !isdigit((unsigned char)owner[TOKEN_HEX + 1]))
        return -1;
    tid = strtol(owner + TOKEN_HEX + 1, &end, 10);
    if (*end != '\0' && *end != '=')
        return -1;
    memcpy(id, owner, TOKEN_HEX);
    id[TOKEN_HEX] = '\0';
    return tid;
}

static void *acquire_in_thread(void *arg)
{
    attempt *a = arg;

    a->rc = dlock_acquire(a->l);
    a->done_ms = harness_now_ms();
    if (a->rc == DLOCK_OK)
        a->release_rc = dlock_release(a->l);
    return NULL;
}

void run_in_thread(pthread_t *t, attempt *a)
{
    ck_assert_msg(pthread_create(t, NULL, acquire_in_thread, a) == 0,
                  "cannot start a thread");
}

void assert_error(dlock *l, int rc, const char *call, const char *situation)
{
    ck_assert_msg(rc == DLOCK_ERR, "expected %s to return ERR %s, got %s", call, situation,
                  harness_result(rc));
    ck_assert_msg(dlock_errstr(l)[0] != '\0', "%s returned ERR %s with an empty errstr; expected "
                  "a reason", call, situation);
    printf("  %s %s: \"%s\"\n", call, situation, dlock_errstr(l));
}

int refusing_port(int *port)
{
    struct sockaddr_in a;
    socklen_t alen = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_msg(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
                  getsockname(fd, (struct sockaddr *)&a, &alen) == 0,
                  "cannot reserve a port: %s", strerror(errno));
    *port = ntohs(a.sin_port);
    return fd;
}

long long connections_received(void)
{
    char value[32], err[HARNESS_ERRSTR_LEN];

    ck_assert_msg(sim_server_info_field(harness_redis(), "stats", "total_connections_received",
                                        value, sizeof(value), err, sizeof(err)) == 0, "%s", err);
    return atoll(value);
}

int kill_clients_by_last_command(const char *cmd)
{
    char want[64];
    const char *line;
    redisReply *r;
    int killed = 0;
    long long id;

    snprintf(want, sizeof(want), " cmd=%s ", cmd);
    r = redisCommand(harness_redis(), "CLIENT LIST");
    ck_assert_msg(r != NULL && r->type == REDIS_REPLY_STRING, "CLIENT LIST failed");
    for (line = r->str; line != NULL && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        const char *end = strchr(line, '\n');
        const char *hit = strstr(line, want);

        if (hit == NULL || (end != NULL && hit > end) || sscanf(line, "id=%lld", &id) != 1)
            continue;
        killed += harness_int(harness_redis(), "CLIENT KILL ID %lld", id) == 1;
    }
    freeReplyObject(r);
    return killed;
}
