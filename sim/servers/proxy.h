/* proxy: a TCP relay between each client and each node of the lock,
 * which can cut a client off: the partition fault, without root.
 *
 * Jepsen cuts links with iptables; a relay of our own does the same on
 * any server kind and needs no privilege. The proxy listens on one port
 * per route (a client and a node); a client that finds its route's port
 * in the control block (control.h: via_port) connects there, and the
 * proxy opens a connection to where the node lives now (node_port, or
 * the sentinel's answer), so it follows a failover or a restart as the
 * clients do. Bytes go both ways as they come.
 *
 * A cut route is a black hole: whatever the client sends there and
 * whatever the node answers is read and dropped, and the sockets stay
 * open, so the client's calls time out, as behind a cut link, instead of
 * being refused. When the cut ends, bytes flow again on the same
 * connections; what was dropped is gone (a command sent during the cut
 * never ran, a reply never came: the client's timeout has dropped that
 * connection, and its next call makes a new one).
 *
 * The lock's Redis nodes ask for the run's password (control.h:
 * nodes_auth): the relay logs in to the node itself when a client
 * connects, and checks and answers the client's AUTH, its first command,
 * itself; a client that opens with anything else is refused.
 *
 * What it does not model: a connect during a cut succeeds (the proxy
 * accepts it and answers its AUTH; only its traffic is lost), where a
 * real cut leaves it unanswered until its own timeout; a cut is always both ways; the
 * servers never lose each other (a replica's link, a sentinel's); the
 * resource server, the observer and the clients' sync markers never go
 * through the proxy, so the history stays complete.
 *
 * The proxy is a process of its own (sim_proc_fork: it dies with the
 * simulator and Ctrl-C's cleanup kills it), started only for the runs
 * that cut a link: the others connect directly and pay nothing.
 *
 * Errors, hiredis-style: 0, or -1 with one line of reason in errstr. */
#ifndef SIM_PROXY_H
#define SIM_PROXY_H

#include <stddef.h>
#include <sys/types.h>

#include "control.h"

typedef struct sim_proxy {
    pid_t pid;     /* the relay process; 0 when stopped */
} sim_proxy;

/* Listens on a port per route of clients 0 .. clients - 1 to each of
 * ctl->nodes nodes, writes those ports into each client's via_port, and
 * forks the relay. Call after the servers have filled in the node ports
 * and before the clients connect. */
int sim_proxy_start(sim_proxy *p, sim_control *ctl, int clients, char *errstr,
                    size_t len);

/* Client's links to the nodes of the set (a bit per node) become black
 * holes (cut), or carry bytes again (heal). */
void sim_proxy_cut(sim_control *ctl, int client, unsigned nodes);
void sim_proxy_heal(sim_control *ctl, int client, unsigned nodes);

/* Kills and reaps the relay; the clients' via_port stay, so a client
 * that connects afterwards is refused. Idempotent. */
void sim_proxy_stop(sim_proxy *p);

#endif
