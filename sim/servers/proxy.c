/* proxy: the relay between the clients and the lock's nodes, and its
 * black holes. See proxy.h. One process, one poll loop: a listening
 * socket per route, and a pair of sockets per connection, each direction
 * with a buffer of its own, so that a side that does not read never
 * blocks the other. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "proc.h"
#include "proxy.h"
#include "util.h"

#define ROUTES_MAX (SIM_CLIENTS_MAX * SIM_NODES_MAX)
#define PAIRS_MAX 128    /* connections at once: a client keeps two or three
                          * per node, and makes new ones after a timeout */
#define BUF_SIZE 16384
#define LISTEN_ATTEMPTS 20 /* first ports tried for a client's consecutive ones */
#define POLL_MS 100      /* how often the relay checks that its parent lives */
#define AUTH_MS 1000     /* for a node to answer the relay's own AUTH */
#define AUTH_OK "+OK\r\n"
#define NOAUTH "-NOAUTH Authentication required.\r\n"

/* Bytes read from one side, still to be written to the other. */
typedef struct half {
    size_t len, off;
    char buf[BUF_SIZE];
} half;

/* One connection: fd[0] the client's, fd[1] the node's; to[k] waits for
 * fd[k]. fd[0] < 0: the slot is free. */
typedef struct pair {
    int fd[2];
    int route;
    size_t authed;   /* bytes of the client's AUTH checked so far */
    half to[2];
} pair;

typedef struct relay {
    sim_control *ctl;
    char auth[SIM_LOCK_NAME_LEN + 32]; /* AUTH <password> as a client sends it */
    size_t auth_len; /* 0: the nodes ask for no password; bytes pass as they come */
    int routes;
    int listen_fd[ROUTES_MAX];
    pair *pairs;
    pid_t parent;
} relay;

static int route_client(const relay *r, int route)
{
    return route / r->ctl->nodes;
}

static int route_node(const relay *r, int route)
{
    return route % r->ctl->nodes;
}

static int is_cut(const relay *r, int route)
{
    unsigned cut = atomic_load(&r->ctl->client[route_client(r, route)].cut);

    return (cut >> route_node(r, route)) & 1u;
}

/* ---- the routes' ports, bound before the fork ------------------------------ */

/* Listens on 127.0.0.1:*port, or on a free port when *port is 0, which
 * it then names. -1 with errstr; *port is left 0 when the port asked for
 * was taken. */
static int listen_loopback(int *port, char *errstr, size_t len)
{
    struct sockaddr_in a;
    socklen_t alen = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

    if (fd < 0)
        return sim_error(errstr, len, "proxy: socket: %s", strerror(errno));
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((unsigned short)*port);
    if (*port != 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        *port = 0;
        close(fd);
        return -1;
    }
    if ((*port == 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0) || listen(fd, 64) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &alen) != 0) {
        sim_error(errstr, len, "proxy: cannot listen on 127.0.0.1: %s", strerror(errno));
        close(fd);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

/* ---- connections ----------------------------------------------------------- */

static void close_pair(pair *p)
{
    close(p->fd[0]);
    close(p->fd[1]);
    p->fd[0] = p->fd[1] = -1;
}

/* A connection to where the route's node lives now; -1 when it is down
 * (the client's side is then closed, as a refused connection would be). */
static int connect_node(const relay *r, int route)
{
    char why[128];
    struct sockaddr_in a;
    int port = sim_control_node_port(r->ctl, route_node(r, route), why, sizeof(why));
    int fd, one = 1;

    if (port <= 0 || (fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return -1;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    /* Loopback: the connect is answered at once, or refused. */
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(fd);
        return -1;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

/* The relay logs in to the node itself, at once: a client's AUTH is
 * answered by the relay (check_auth), cut or not. 0, or -1. */
static int node_auth(const relay *r, int fd)
{
    struct timeval tv = { AUTH_MS / 1000, (AUTH_MS % 1000) * 1000 };
    char reply[sizeof(AUTH_OK)];
    size_t got = 0;
    ssize_t n;

    if (r->auth_len == 0)
        return 0;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
        send(fd, r->auth, r->auth_len, MSG_NOSIGNAL) != (ssize_t)r->auth_len)
        return -1;
    while (got < sizeof(reply) - 1 && (n = recv(fd, reply + got, sizeof(reply) - 1 - got, 0)) > 0)
        got += (size_t)n;
    return got == sizeof(reply) - 1 && memcmp(reply, AUTH_OK, got) == 0 ? 0 : -1;
}

static void accept_route(relay *r, int route)
{
    int c = accept4(r->listen_fd[route], NULL, NULL, SOCK_CLOEXEC), one = 1, k;

    if (c < 0)
        return;
    for (k = 0; k < PAIRS_MAX && r->pairs[k].fd[0] >= 0; k++)
        ;
    if (k == PAIRS_MAX || (r->pairs[k].fd[1] = connect_node(r, route)) < 0) {
        close(c);
        return;
    }
    if (node_auth(r, r->pairs[k].fd[1]) != 0) {
        close(r->pairs[k].fd[1]);
        r->pairs[k].fd[1] = -1;
        close(c);
        return;
    }
    r->pairs[k].authed = 0;
    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    r->pairs[k].fd[0] = c;
    r->pairs[k].route = route;
    r->pairs[k].to[0].len = r->pairs[k].to[1].len = 0;
}

/* Writes what waits for side k without blocking. -1: the side is gone. */
static int flush(pair *p, int k)
{
    half *h = &p->to[k];
    ssize_t n;

    while (h->off < h->len) {
        n = send(p->fd[k], h->buf + h->off, h->len - h->off, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
        h->off += (size_t)n;
    }
    h->len = h->off = 0;
    return 0;
}

/* A client's first bytes must be AUTH with the run's password, which
 * the relay answers itself: a cut route answers it too, so a client
 * connects during a cut as before, and only its commands are lost. Any
 * other first command is refused, and the connection closed. -1: closed. */
static int check_auth(relay *r, pair *p)
{
    char buf[sizeof(r->auth)];
    ssize_t n = recv(p->fd[0], buf, r->auth_len - p->authed, MSG_DONTWAIT);

    if (n == 0)
        return -1;
    if (n < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
    if (memcmp(buf, r->auth + p->authed, (size_t)n) != 0) {
        send(p->fd[0], NOAUTH, strlen(NOAUTH), MSG_DONTWAIT | MSG_NOSIGNAL);
        return -1;
    }
    p->authed += (size_t)n;
    if (p->authed == r->auth_len &&
        send(p->fd[0], AUTH_OK, strlen(AUTH_OK), MSG_DONTWAIT | MSG_NOSIGNAL) !=
        (ssize_t)strlen(AUTH_OK))
        return -1;
    return 0;
}

/* Side k has bytes: they go to the other side, or into the black hole
 * while the route is cut. -1: the side closed or broke. */
static int carry(relay *r, pair *p, int k)
{
    half *h = &p->to[1 - k];
    ssize_t n;

    if (k == 0 && p->authed < r->auth_len)
        return check_auth(r, p);
    n = recv(p->fd[k], h->buf, sizeof(h->buf), MSG_DONTWAIT);
    if (n == 0)
        return -1;
    if (n < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
    if (is_cut(r, p->route))
        return 0;
    h->len = (size_t)n;
    h->off = 0;
    return flush(p, 1 - k);
}

/* ---- the loop --------------------------------------------------------------- */

/* What to wait for: each listener; each side that can take more bytes
 * (the other direction's buffer is empty) or has bytes waiting for it.
 * index[i] names pollfd i: a route (< ROUTES_MAX), or ROUTES_MAX + 2 *
 * pair + side. */
static int gather(const relay *r, struct pollfd *pf, int *index)
{
    int n = 0;

    for (int i = 0; i < r->routes; i++) {
        pf[n] = (struct pollfd){ r->listen_fd[i], POLLIN, 0 };
        index[n++] = i;
    }
    for (int k = 0; k < PAIRS_MAX; k++) {
        const pair *p = &r->pairs[k];

        if (p->fd[0] < 0)
            continue;
        for (int side = 0; side < 2; side++) {
            short ev = (short)((p->to[1 - side].len == 0 ? POLLIN : 0) |
                               (p->to[side].len > 0 ? POLLOUT : 0));

            pf[n] = (struct pollfd){ p->fd[side], ev, 0 };
            index[n++] = ROUTES_MAX + 2 * k + side;
        }
    }
    return n;
}

static void serve(relay *r, const struct pollfd *pf, const int *index, int n)
{
    for (int i = 0; i < n; i++) {
        pair *p;
        int side, broken = 0;

        if (pf[i].revents == 0)
            continue;
        if (index[i] < ROUTES_MAX) {
            accept_route(r, index[i]);
            continue;
        }
        p = &r->pairs[(index[i] - ROUTES_MAX) / 2];
        side = (index[i] - ROUTES_MAX) % 2;
        if (p->fd[0] < 0)
            continue; /* closed by its other side in this round */
        if (pf[i].revents & POLLOUT)
            broken = flush(p, side) != 0;
        /* Read a side only into an empty buffer: a hang-up with bytes
         * still on their way is read once they are written. */
        if (!broken && p->to[1 - side].len == 0 &&
            (pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
            broken = carry(r, p, side) != 0;
        if (broken)
            close_pair(p);
    }
}

static void run_relay(relay *r)
{
    static struct pollfd pf[ROUTES_MAX + 2 * PAIRS_MAX];
    static int index[ROUTES_MAX + 2 * PAIRS_MAX];

    for (;;) {
        int n = gather(r, pf, index);

        if (poll(pf, (nfds_t)n, POLL_MS) < 0 && errno != EINTR)
            _exit(1);
        if (getppid() != r->parent)
            _exit(0);
        serve(r, pf, index, n);
    }
}

/* ---- the simulator's side ------------------------------------------------ */

static void close_listeners(relay *r)
{
    for (int i = 0; i < r->routes; i++)
        close(r->listen_fd[i]);
}

/* A client's routes to the nodes listen on consecutive ports, as the
 * nodes themselves do: a lock that is given one port and a count (a
 * ZooKeeper connect string, node i at port + i) reaches them through
 * the proxy too. A free first port whose next ones are taken is tried
 * again elsewhere. */
static int listen_client(relay *r, int client, char *errstr, size_t len)
{
    for (int attempt = 0; attempt < LISTEN_ATTEMPTS; attempt++) {
        int first = r->routes, base = 0, port, node;

        for (node = 0; node < r->ctl->nodes; node++) {
            port = node == 0 ? 0 : base + node;
            if (port > 65535) {
                port = 0; /* past the last port: try another first one */
                break;
            }
            if ((r->listen_fd[r->routes] = listen_loopback(&port, errstr, len)) < 0)
                break;
            if (node == 0)
                base = port;
            r->routes++;
        }
        if (node == r->ctl->nodes) {
            for (node = 0; node < r->ctl->nodes; node++)
                atomic_store(&r->ctl->client[client].via_port[node], base + node);
            return 0;
        }
        while (r->routes > first)
            close(r->listen_fd[--r->routes]);
        if (node == 0 || port != 0)
            return -1; /* not a taken port: a failure another port would not mend */
    }
    return sim_error(errstr, len, "proxy: no %d consecutive free ports on 127.0.0.1 in %d tries",
                     r->ctl->nodes, LISTEN_ATTEMPTS);
}

int sim_proxy_start(sim_proxy *p, sim_control *ctl, int clients, char *errstr,
                    size_t len)
{
    relay r = { .ctl = ctl, .routes = 0, .parent = getpid() };
    pid_t pid;

    p->pid = 0;
    if (ctl->nodes_auth && ctl->password[0] != '\0')
        r.auth_len = (size_t)snprintf(r.auth, sizeof(r.auth), "*2\r\n$4\r\nAUTH\r\n$%zu\r\n%s\r\n",
                                      strlen(ctl->password), ctl->password);
    if (clients < 1 || clients > SIM_CLIENTS_MAX || ctl->nodes < 1 || ctl->nodes > SIM_NODES_MAX)
        return sim_error(errstr, len, "proxy: %d clients and %d nodes: give 1 to %d and 1 to %d",
                         clients, ctl->nodes, SIM_CLIENTS_MAX, SIM_NODES_MAX);
    for (int c = 0; c < clients; c++)
        if (listen_client(&r, c, errstr, len) != 0) {
            close_listeners(&r);
            return -1;
        }
    if ((pid = sim_proc_fork(errstr, len)) < 0) {
        close_listeners(&r);
        return -1;
    }
    if (pid == 0) {
        if ((r.pairs = malloc(PAIRS_MAX * sizeof(*r.pairs))) == NULL)
            _exit(1);
        for (int k = 0; k < PAIRS_MAX; k++)
            r.pairs[k].fd[0] = r.pairs[k].fd[1] = -1;
        run_relay(&r);
    }
    close_listeners(&r);
    p->pid = pid;
    return 0;
}

void sim_proxy_cut(sim_control *ctl, int client, unsigned nodes)
{
    atomic_fetch_or(&ctl->client[client].cut, nodes);
}

void sim_proxy_heal(sim_control *ctl, int client, unsigned nodes)
{
    atomic_fetch_and(&ctl->client[client].cut, ~nodes);
}

void sim_proxy_stop(sim_proxy *p)
{
    sim_proc_kill(p->pid);
    p->pid = 0;
}
