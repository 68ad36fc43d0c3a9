/* sentinel: start a redis-sentinel and ask it what it knows. See
 * sentinel.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control.h"
#include "password.h"
#include "sentinel.h"
#include "util.h"

#define SENTINEL_CONF "sentinel.conf"
#define CONNECT_MS 1000

/* A sentinel needs its config file as its first argument (it rewrites it
 * to keep its state). It logs in to the nodes with the run's password
 * (auth-pass), and asks it of its own clients (requirepass): an open
 * sentinel would let any local user move the primary (SENTINEL FAILOVER)
 * or point the clients elsewhere (SENTINEL REMOVE, MONITOR). The file is
 * the server's alone (0600): the password is in it. */
static int write_conf(const sim_server *s, const char *master, int master_port,
                      long down_after_ms, long failover_timeout_ms,
                      char *errstr, size_t len)
{
    char path[SIM_PATH_LEN + 16];
    FILE *f;
    int fd = -1;

    snprintf(path, sizeof(path), "%s/%s", s->dir, SENTINEL_CONF);
    if (sim_password_ready(errstr, len) != 0)
        return -1;
    if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0 ||
        (f = fdopen(fd, "w")) == NULL) {
        if (fd >= 0)
            close(fd);
        return sim_error(errstr, len, "cannot write %s: %s", path, strerror(errno));
    }
    fprintf(f, "requirepass %s\n", sim_password());
    fprintf(f, "sentinel monitor %s 127.0.0.1 %d 1\n", master, master_port);
    fprintf(f, "sentinel auth-pass %s %s\n", master, sim_password());
    fprintf(f, "sentinel down-after-milliseconds %s %ld\n", master, down_after_ms);
    fprintf(f, "sentinel failover-timeout %s %ld\n", master, failover_timeout_ms);
    fclose(f);
    return 0;
}

int sim_sentinel_start(sim_server *s, const char *parent_dir,
                       const char *master, int master_port,
                       long down_after_ms, long failover_timeout_ms,
                       char *errstr, size_t len)
{
    const char *const args[] = { SENTINEL_CONF, "--sentinel", NULL };

    if (sim_server_make_dir(s, parent_dir, "sentinel", errstr, len) != 0 ||
        write_conf(s, master, master_port, down_after_ms, failover_timeout_ms,
                   errstr, len) != 0)
        return -1;
    return sim_server_launch(s, "redis-sentinel", args, errstr, len);
}

int sim_sentinel_master_port(const sim_server *s, const char *master)
{
    char why[128];
    redisContext *c = sim_server_connect(s, CONNECT_MS, why, sizeof(why));
    int port;

    if (c == NULL)
        return -1;
    port = sim_control_sentinel_master(c, master);
    redisFree(c);
    return port;
}

/* One replica as SENTINEL replicas lists it: flat pairs, "port" "6380",
 * "flags" "slave". Whether it is ours and in good standing. */
static int good_replica(const redisReply *r, int port)
{
    int ours = 0, good = 0;
    size_t i;

    for (i = 0; r->type == REDIS_REPLY_ARRAY && i + 1 < r->elements; i += 2) {
        const char *k = r->element[i]->str, *v = r->element[i + 1]->str;

        if (k == NULL || v == NULL)
            continue;
        if (strcmp(k, "port") == 0)
            ours = atoi(v) == port;
        if (strcmp(k, "flags") == 0)
            good = strcmp(v, "slave") == 0;
    }
    return ours && good;
}

int sim_sentinel_knows_replica(const sim_server *s, const char *master,
                               int replica_port)
{
    char why[128];
    redisContext *c = sim_server_connect(s, CONNECT_MS, why, sizeof(why));
    redisReply *r;
    int seen = 0;
    size_t i;

    if (c == NULL)
        return 0;
    r = redisCommand(c, "SENTINEL replicas %s", master);
    for (i = 0; r != NULL && r->type == REDIS_REPLY_ARRAY && i < r->elements; i++)
        seen |= good_replica(r->element[i], replica_port);
    freeReplyObject(r);
    redisFree(c);
    return seen;
}
