/* replica: attaching a replica, holding its stream, promoting it. See
 * replica.h. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "replica.h"
#include "util.h"

#define REPL_TIMEOUT_MS 5000 /* a replica's link must be up by then */
#define POLL_MS 10           /* between polls of the link */
#define CONNECT_MS 1000
#define REPL_CHECK_KEY "lockstep:replication-check"

static int64_t ms_since(int64_t start_ns)
{
    return (sim_now_ns() - start_ns) / 1000000;
}

/* Sends one command and checks that the reply is of the given type;
 * the reply is returned for the caller to read and free. */
static redisReply *expect(redisContext *c, int type, char *errstr, size_t len,
                          const char *fmt, ...)
{
    redisReply *r;
    va_list ap;

    va_start(ap, fmt);
    r = redisvCommand(c, fmt, ap);
    va_end(ap);
    if (r == NULL) {
        sim_error(errstr, len, "%s: %s", fmt, c->errstr);
        return NULL;
    }
    if (r->type != type) {
        sim_error(errstr, len, "%s: unexpected reply%s%s", fmt,
                  r->type == REDIS_REPLY_ERROR ? ": " : "",
                  r->type == REDIS_REPLY_ERROR ? r->str : "");
        freeReplyObject(r);
        return NULL;
    }
    return r;
}

/* ---- attach ------------------------------------------------------------------ */

/* Polls the replica until its link to the primary is up. */
static int wait_link_up(redisContext *c, char *errstr, size_t len)
{
    int64_t start = sim_now_ns();
    char status[32] = "";

    while (ms_since(start) <= REPL_TIMEOUT_MS) {
        if (sim_server_info_field(c, "replication", "master_link_status",
                                  status, sizeof(status), errstr, len) != 0)
            return -1;
        if (strcmp(status, "up") == 0)
            return 0;
        sim_sleep_ms(POLL_MS);
    }
    return sim_error(errstr, len, "replica's master_link_status still '%s' after %d ms",
                     status, REPL_TIMEOUT_MS);
}

/* A write on the primary reaches the replica: SET, then WAIT 1 must count
 * one replica. The key is deleted again so the dataset starts empty. */
static int confirm_replication(redisContext *p, char *errstr, size_t len)
{
    redisReply *r;
    int acked;

    r = expect(p, REDIS_REPLY_STATUS, errstr, len, "SET " REPL_CHECK_KEY " 1");
    freeReplyObject(r);
    if (r == NULL)
        return -1;
    r = expect(p, REDIS_REPLY_INTEGER, errstr, len, "WAIT 1 %d", REPL_TIMEOUT_MS);
    if (r == NULL)
        return -1;
    acked = (int)r->integer;
    freeReplyObject(r);
    if (acked != 1)
        return sim_error(errstr, len, "WAIT 1 counted %d replicas, expected 1", acked);
    r = expect(p, REDIS_REPLY_INTEGER, errstr, len, "DEL " REPL_CHECK_KEY);
    freeReplyObject(r);
    return r == NULL ? -1 : 0;
}

int sim_replica_attach(const sim_server *replica, const sim_server *primary,
                       char *errstr, size_t len)
{
    redisContext *c;
    redisReply *r;
    int rc;

    c = sim_server_connect(replica, CONNECT_MS, errstr, len);
    if (c == NULL)
        return -1;
    r = expect(c, REDIS_REPLY_STATUS, errstr, len, "REPLICAOF 127.0.0.1 %d",
               primary->port);
    rc = r == NULL ? -1 : wait_link_up(c, errstr, len);
    freeReplyObject(r);
    redisFree(c);
    if (rc != 0)
        return -1;
    c = sim_server_connect(primary, REPL_TIMEOUT_MS + CONNECT_MS, errstr, len);
    if (c == NULL)
        return -1;
    rc = confirm_replication(c, errstr, len);
    redisFree(c);
    return rc;
}

/* ---- hold, lag, promote ---------------------------------------------------------- */

int sim_replica_command(redisContext *c, const char *cmd, char *errstr,
                        size_t len)
{
    redisReply *r = expect(c, REDIS_REPLY_STATUS, errstr, len, cmd);

    freeReplyObject(r);
    return r == NULL ? -1 : 0;
}

redisContext *sim_replica_hold(const sim_server *replica, long hold_ms,
                               char *errstr, size_t len)
{
    redisContext *c = sim_server_connect(replica, 2 * CONNECT_MS, errstr, len);
    char cmd[64];

    if (c == NULL)
        return NULL;
    /* WRITE: the replica keeps reading its primary's stream (its read
     * offset moves) but applies none of the writes in it. */
    snprintf(cmd, sizeof(cmd), "CLIENT PAUSE %ld WRITE", hold_ms);
    if (sim_replica_command(c, cmd, errstr, len) != 0) {
        redisFree(c);
        return NULL;
    }
    return c;
}

static long long info_number(redisContext *c, const char *field, char *errstr,
                             size_t len)
{
    char value[32];

    if (sim_server_info_field(c, "replication", field, value, sizeof(value),
                              errstr, len) != 0)
        return -1;
    return atoll(value);
}

long long sim_replica_lag(redisContext *c, const char *key, long timeout_ms,
                          char *errstr, size_t len)
{
    long long read = 0, applied = 0, exists = 1;
    long waited;
    redisReply *r;

    for (waited = 0; waited <= timeout_ms; waited++) {
        read = info_number(c, "slave_read_repl_offset", errstr, len);
        applied = info_number(c, "slave_repl_offset", errstr, len);
        if (read < 0 || applied < 0)
            return -1;
        if (read > applied)
            break;
        sim_sleep_ms(1);
    }
    r = redisCommand(c, "EXISTS %s", key);
    if (r != NULL && r->type == REDIS_REPLY_INTEGER)
        exists = r->integer;
    freeReplyObject(r);
    if (read <= applied || exists != 0)
        return sim_error(errstr, len, "the replica is not behind its primary (read offset %lld, applied %lld, lock key %s): the failover would not lose the lock",
                         read, applied, exists ? "present" : "absent");
    return read - applied;
}

int sim_replica_link_down(redisContext *c)
{
    char status[32], why[128];

    return sim_server_info_field(c, "replication", "master_link_status",
                                 status, sizeof(status), why, sizeof(why)) == 0 &&
           strcmp(status, "down") == 0;
}

int sim_replica_is_master(const sim_server *s)
{
    char why[128], role[32];
    redisContext *c = sim_server_connect(s, CONNECT_MS, why, sizeof(why));
    int yes;

    if (c == NULL)
        return 0;
    yes = sim_server_info_field(c, "replication", "role", role, sizeof(role),
                                why, sizeof(why)) == 0 &&
          strcmp(role, "master") == 0;
    redisFree(c);
    return yes;
}
