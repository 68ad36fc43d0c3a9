/* nemesis: pauses, crashes, and when the servers fail. See nemesis.h. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nemesis.h"
#include "util.h"

static void record(sim_nemesis *n, int client, sim_event_type type,
                   long long value, const char *detail)
{
    sim_history_add(n->h, client, 0, type, value, detail);
}

/* A client that leads its own process group (a library's client, whose
 * driver runs beside it: drivers/lock.c) is signalled with its group, so
 * a pause or a crash hits the library's process too. */
static void signal_client(pid_t pid, int sig)
{
    kill(getpgid(pid) == pid ? -pid : pid, sig);
}

void sim_nemesis_init(sim_nemesis *n, sim_servers *srv, sim_control *ctl,
                      sim_history *h, const pid_t *pids)
{
    memset(n, 0, sizeof(*n));
    n->srv = srv;
    n->ctl = ctl;
    n->h = h;
    n->pids = pids;
}

/* ---- processes ---------------------------------------------------------------- */

void sim_nemesis_pause(sim_nemesis *n, int client, long ms)
{
    if (n->pids[client] <= 0)
        return;
    record(n, client, SIM_EV_PAUSE_BEGIN, ms, "SIGSTOP");
    signal_client(n->pids[client], SIGSTOP);
    n->self_stop[client] = 0;
    n->resume_ns[client] = sim_now_ns() + (int64_t)ms * 1000000;
}

void sim_nemesis_crash(sim_nemesis *n, int client)
{
    if (n->pids[client] <= 0)
        return;
    record(n, client, SIM_EV_CRASH, 0, "SIGKILL");
    signal_client(n->pids[client], SIGKILL);
}

void sim_nemesis_stopped(sim_nemesis *n, int client)
{
    long ms = atomic_load(&n->ctl->client[client].stop_ms);

    /* A stop we sent ourselves is already scheduled. */
    if (ms <= 0 || n->resume_ns[client] != 0)
        return;
    n->self_stop[client] = 1;
    n->resume_ns[client] = sim_now_ns() + (int64_t)ms * 1000000;
}

/* ---- links ------------------------------------------------------------------- */

/* One event per node of the set, so that each node's lane can tell it;
 * one in all when the nodes share the lock's one lane (an ensemble). */
static void record_link(sim_nemesis *n, int client, unsigned nodes, sim_event_type type,
                        long long value, const char *detail)
{
    if (n->srv->lanes == 1) {
        if (nodes != 0)
            sim_history_add_link(n->h, client, 0, type, value, detail);
        return;
    }
    for (int node = 0; node < SIM_NODES_MAX; node++)
        if (nodes & (1u << node))
            sim_history_add_link(n->h, client, node, type, value, detail);
}

void sim_nemesis_cut(sim_nemesis *n, int client, unsigned nodes, long ms)
{
    nodes &= ~n->cut[client];
    if (nodes == 0)
        return;
    record_link(n, client, nodes, SIM_EV_CUT_BEGIN, ms > 0 ? ms : 0, "black hole");
    sim_proxy_cut(n->ctl, client, nodes);
    n->cut[client] |= nodes;
    n->heal_ns[client] = ms > 0 ? sim_now_ns() + (int64_t)ms * 1000000 : 0;
}

void sim_nemesis_heal(sim_nemesis *n, int client)
{
    unsigned nodes = n->cut[client];

    if (nodes == 0)
        return;
    sim_proxy_heal(n->ctl, client, nodes);
    record_link(n, client, nodes, SIM_EV_CUT_END, 0, "");
    n->cut[client] = 0;
    n->heal_ns[client] = 0;
}

int sim_nemesis_clock_jump(sim_nemesis *n, int node, long ms, char *errstr, size_t len)
{
    return sim_servers_clock_jump(n->srv, node, ms, errstr, len);
}

void sim_nemesis_tick(sim_nemesis *n)
{
    int64_t now = sim_now_ns();
    int i;

    for (i = 0; i < SIM_CLIENTS_MAX; i++)
        if (n->heal_ns[i] != 0 && now >= n->heal_ns[i])
            sim_nemesis_heal(n, i);
    for (i = 0; i < SIM_CLIENTS_MAX; i++) {
        if (n->resume_ns[i] == 0 || now < n->resume_ns[i])
            continue;
        n->resume_ns[i] = 0;
        if (n->self_stop[i])
            atomic_store(&n->ctl->client[i].stop_ms, 0);
        if (n->pids[i] > 0)
            signal_client(n->pids[i], SIGCONT);
        record(n, i, SIM_EV_PAUSE_END, 0, n->self_stop[i] ? "failpoint" : "SIGCONT");
    }
}

int sim_nemesis_busy(const sim_nemesis *n)
{
    int i;

    for (i = 0; i < SIM_CLIENTS_MAX; i++) {
        if (n->resume_ns[i] != 0 || n->heal_ns[i] != 0)
            return 1;
    }
    return 0;
}

/* ---- the servers: their kind knows how, and records each step ---------------- */

int sim_nemesis_failover(sim_nemesis *n, char *errstr, size_t len)
{
    return sim_servers_failover(n->srv, errstr, len);
}

void sim_nemesis_down(sim_nemesis *n, int node)
{
    sim_servers_down(n->srv, node);
}

int sim_nemesis_restart(sim_nemesis *n, int node, char *errstr, size_t len)
{
    return sim_servers_restart(n->srv, node, errstr, len);
}
