/* servers: the registry of server kinds, and the calls that go to the
 * kind of a run. See servers.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "password.h"
#include "servers.h"
#include "util.h"

extern const sim_servers_kind sim_servers_redis;
extern const sim_servers_kind sim_servers_zookeeper;
extern const sim_servers_kind sim_servers_mariadb;

/* Every kind a stage may name, by its name in sim/stages.def. */
static const sim_servers_kind *const kinds[] = {
    &sim_servers_redis,
    &sim_servers_zookeeper,
    &sim_servers_mariadb,
};

const sim_servers_kind *sim_servers_kind_get(const char *name)
{
    size_t i;

    for (i = 0; name != NULL && i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        if (strcmp(kinds[i]->name, name) == 0)
            return kinds[i];
    }
    return NULL;
}

int sim_servers_start(sim_servers *s, const sim_stage *stage, unsigned flags,
                      char *errstr, size_t len)
{
    return sim_servers_start_clock(s, stage, flags & ~SIM_SERVERS_CLOCK, NULL, errstr, len);
}

int sim_servers_start_clock(sim_servers *s, const sim_stage *stage, unsigned flags,
                            const char *clock_shim, char *errstr, size_t len)
{
    memset(s, 0, sizeof(*s));
    s->clock_shim = clock_shim;
    s->kind = sim_servers_kind_get(stage->server);
    if (s->kind == NULL)
        return sim_error(errstr, len, "%s talks to a server of kind \"%s\", which no file "
                         "of sim/servers implements", stage->dir, stage->server);
    if (stage->masters < 1 || stage->masters > SIM_NODES_MAX)
        return sim_error(errstr, len, "a lock of %d nodes: give 1 to %d", stage->masters,
                         SIM_NODES_MAX);
    s->nodes = stage->masters;
    if ((flags & SIM_SERVERS_CLOCK) && s->kind->clock_jump == NULL)
        return sim_error(errstr, len, "servers of kind \"%s\" cannot move a node's clock",
                         s->kind->name);
    if ((flags & SIM_SERVERS_CLOCK) && clock_shim == NULL)
        return sim_error(errstr, len, "a clock that can jump needs the clock library: "
                         "build it with make");
    if ((s->impl = calloc(1, s->kind->state)) == NULL)
        return sim_error(errstr, len, "out of memory for the servers");
    if (s->kind->start(s, flags, errstr, len) == 0) {
        if (s->lanes == 0)
            s->lanes = s->nodes;
        return 0;
    }
    sim_servers_stop(s);
    return -1;
}

int sim_servers_attach(sim_servers *s, sim_history *h, sim_control *ctl,
                       char *errstr, size_t len)
{
    int i;

    s->h = h;
    s->ctl = ctl;
    ctl->nodes = s->nodes;
    ctl->resource_port = s->resource_port;
    snprintf(ctl->password, sizeof(ctl->password), "%s", sim_password());
    for (i = 0; i < s->nodes; i++)
        atomic_store(&ctl->node_port[i], s->port[i]);
    return s->kind->attach(s, errstr, len);
}

int sim_servers_prepare_failover(sim_servers *s, char *errstr, size_t len)
{
    return s->kind->prepare(s, errstr, len);
}

int sim_servers_failover(sim_servers *s, char *errstr, size_t len)
{
    return s->kind->failover(s, errstr, len);
}

void sim_servers_down(sim_servers *s, int node)
{
    s->kind->down(s, node);
}

int sim_servers_restart(sim_servers *s, int node, char *errstr, size_t len)
{
    return s->kind->restart(s, node, errstr, len);
}

void sim_servers_drain(sim_servers *s)
{
    s->kind->drain(s);
}

int sim_servers_clock_jump(sim_servers *s, int node, long ms, char *errstr, size_t len)
{
    if (s->kind->clock_jump == NULL)
        return sim_error(errstr, len, "servers of kind \"%s\" cannot move a node's clock",
                         s->kind->name);
    return s->kind->clock_jump(s, node, ms, errstr, len);
}

int sim_servers_share(const sim_stage *stage, const char *clock_shim, char *errstr,
                      size_t len)
{
    const sim_servers_kind *kind = sim_servers_kind_get(stage->server);

    if (kind == NULL || kind->share == NULL)
        return 0;
    return kind->share(clock_shim, errstr, len);
}

void sim_servers_unshare(void)
{
    size_t i;

    for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (kinds[i]->unshare != NULL)
            kinds[i]->unshare();
}

void sim_servers_stop(sim_servers *s)
{
    if (s->kind != NULL)
        s->kind->stop(s);
    free(s->impl);
    s->impl = NULL;
    s->dir[0] = '\0';
}
