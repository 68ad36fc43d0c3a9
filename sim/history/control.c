/* control: the control block and the connections made from it: the
 * provider that follows the primary, and the resource server. See
 * control.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "control.h"
#include "history.h"
#include "password.h"
#include "util.h"

/* ---- the control block ---------------------------------------------------- */

static sim_control *map_control(const char *path, int flags, char *errstr,
                                size_t len)
{
    int fd = open(path, flags | O_RDWR | O_CLOEXEC, 0600);
    void *p;

    if (fd < 0) {
        sim_error(errstr, len, "open %s: %s", path, strerror(errno));
        return NULL;
    }
    if ((flags & O_CREAT) && ftruncate(fd, sizeof(sim_control)) != 0) {
        sim_error(errstr, len, "ftruncate %s: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    p = mmap(NULL, sizeof(sim_control), PROT_READ | PROT_WRITE, MAP_SHARED,
             fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        sim_error(errstr, len, "mmap %s: %s", path, strerror(errno));
        return NULL;
    }
    return p;
}

sim_control *sim_control_create(const char *path, char *errstr,
                                       size_t len)
{
    /* ftruncate of a new file gives zeroes: every atomic starts at 0. */
    return map_control(path, O_CREAT | O_EXCL, errstr, len);
}

sim_control *sim_control_open(const char *path, char *errstr,
                                     size_t len)
{
    struct stat st;

    if (stat(path, &st) != 0) {
        sim_error(errstr, len, "stat %s: %s", path, strerror(errno));
        return NULL;
    }
    /* A control block of another build would be read as garbage. */
    if ((size_t)st.st_size != sizeof(sim_control)) {
        sim_error(errstr, len, "%s is not a control block of this build", path);
        return NULL;
    }
    return map_control(path, 0, errstr, len);
}

void sim_control_close(sim_control *ctl)
{
    if (ctl != NULL)
        munmap(ctl, sizeof(*ctl));
}

void sim_control_reach(sim_control *ctl, int client, sim_phase phase)
{
    long long unset = 0;

    atomic_compare_exchange_strong(&ctl->client[client].reached_ns[phase],
                                   &unset, (long long)sim_now_ns());
}

int64_t sim_control_reached(const sim_control *ctl, int client, sim_phase phase)
{
    return atomic_load(&ctl->client[client].reached_ns[phase]);
}

/* ---- the connection provider ---------------------------------------------- */

static redisContext *connect_port(const sim_control *ctl, int port,
                                  char *errstr, size_t len)
{
    struct timeval tv = { ctl->timeout_ms / 1000, (ctl->timeout_ms % 1000) * 1000 };
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);

    if (c == NULL || c->err) {
        sim_error(errstr, len, "connect to 127.0.0.1:%d: %s", port,
              c != NULL ? c->errstr : "out of memory");
        redisFree(c);
        return NULL;
    }
    redisSetTimeout(c, tv);
    if (sim_password_auth(c, ctl->password, port, errstr, len) != 0) {
        redisFree(c);
        return NULL;
    }
    return c;
}

int sim_control_sentinel_master(redisContext *c, const char *master)
{
    redisReply *r = redisCommand(c, "SENTINEL get-master-addr-by-name %s", master);
    int port = -1;

    if (r != NULL && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
        r->element[1]->type == REDIS_REPLY_STRING)
        port = atoi(r->element[1]->str);
    freeReplyObject(r);
    return port;
}

/* Asks the sentinel where the master is now: the way a client finds the
 * primary in a real deployment. Returns the port, or -1 with errstr. */
static int ask_sentinel(const sim_control *ctl, char *errstr, size_t len)
{
    redisContext *c = connect_port(ctl, ctl->sentinel_port, errstr, len);
    int port;

    if (c == NULL)
        return -1;
    if ((port = sim_control_sentinel_master(c, ctl->sentinel_master)) < 0)
        sim_error(errstr, len, "sentinel on port %d does not know master %s",
                  ctl->sentinel_port, ctl->sentinel_master);
    redisFree(c);
    return port;
}

int sim_control_node_port(const sim_control *ctl, int node, char *errstr, size_t len)
{
    if (node < 0 || node >= ctl->nodes)
        return sim_error(errstr, len, "node %d: the run has %d", node, ctl->nodes);
    if (node == 0 && ctl->sentinel_port > 0)
        return ask_sentinel(ctl, errstr, len);
    return atomic_load(&ctl->node_port[node]);
}

redisContext *sim_control_connect_node(void *arg, int node, char *errstr, size_t len)
{
    const sim_control *ctl = arg;
    int port = sim_control_node_port(ctl, node, errstr, len);

    return port < 0 ? NULL : connect_port(ctl, port, errstr, len);
}

redisContext *sim_control_connect_via(const sim_control *ctl, int client, int node,
                                      char *errstr, size_t len)
{
    int port = node >= 0 && node < SIM_NODES_MAX && client >= 0 && client < SIM_CLIENTS_MAX
               ? atomic_load(&ctl->client[client].via_port[node]) : 0;

    if (port <= 0 || node >= ctl->nodes)
        return sim_control_connect_node((void *)ctl, node, errstr, len);
    return connect_port(ctl, port, errstr, len);
}

redisContext *sim_control_connect_resource(const sim_control *ctl, char *errstr,
                                          size_t len)
{
    return connect_port(ctl, ctl->resource_port, errstr, len);
}
