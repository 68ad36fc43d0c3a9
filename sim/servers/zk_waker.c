/* zk_waker: a process that holds an idle session on each node of an
 * ensemble, whose pings wake a request ZooKeeper 3.8.0 can leave waiting.
 * See zk_waker.h. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include "proc.h"
#include "util.h"
#include "zk_waker.h"

#define WAKER_SESSION_MS 3000 /* the waker's sessions: the library pings every third */
#define WAKER_CHECK_MS 500    /* how often the waker looks for a session that ended */
#define WAKER_START_MS 10000  /* a loaded machine: a session takes a while */

static void quiet(const char *message)
{
    (void)message;
}

/* ZooKeeper 3.8.0, the version Debian ships, can leave a request in a
 * server's commit processor until another request reaches that server
 * (ZOOKEEPER-4537, fixed in 3.8.1): the processor reads whether a commit
 * waits outside the lock it then waits on, and sleeps through a commit
 * that lands in between. A busy server gets the next request at once; a
 * test's lone client gets none, and its request waits out two thirds of
 * its session, then fails as "operation timeout" (seen under load, with
 * the whole ensemble idle in a thread dump). So a process of ours holds
 * an idle session on each node, whose pings (one a second, sent by the
 * library's own thread) wake the processor. A process, not threads of
 * this one: a test forked from this one would inherit the sessions'
 * memory without the threads that own it. */
static zhandle_t *waker_session(const sim_ensemble *e, int i)
{
    char host[32];

    snprintf(host, sizeof(host), "127.0.0.1:%d", e->port + i);
    return zookeeper_init2(host, NULL, WAKER_SESSION_MS, NULL, NULL, 0, quiet);
}

static void waker_run(const sim_ensemble *e, int ready)
{
    zhandle_t *zh[SIM_NODES_MAX] = { NULL };
    int i, state;

    for (i = 0; i < e->nodes; i++)
        if ((zh[i] = waker_session(e, i)) == NULL ||
            sim_ensemble_add_auth(zh[i], e->password) != ZOK)
            _exit(1);
    if (write(ready, "", 1) != 1)
        _exit(1);
    /* A session that ended (its node down longer than it, or restarted
     * empty) gives way to a new one, which the library connects as soon
     * as the node serves again. Until the ensemble's stop kills us. */
    for (;;) {
        sim_sleep_ms(WAKER_CHECK_MS);
        for (i = 0; i < e->nodes; i++) {
            state = zh[i] != NULL ? zoo_state(zh[i]) : ZOO_EXPIRED_SESSION_STATE;
            if (state != ZOO_EXPIRED_SESSION_STATE && state != ZOO_AUTH_FAILED_STATE)
                continue;
            if (zh[i] != NULL)
                zookeeper_close(zh[i]);
            if ((zh[i] = waker_session(e, i)) != NULL &&
                sim_ensemble_add_credential(zh[i], e->password) != ZOK) {
                zookeeper_close(zh[i]);
                zh[i] = NULL;
            }
        }
    }
}

int sim_zk_waker_start(sim_ensemble *e, char *errstr, size_t len)
{
    struct pollfd p;
    int fd[2];
    char byte;

    if (pipe(fd) != 0)
        return sim_error(errstr, len, "pipe: %s", strerror(errno));
    if ((e->waker = sim_proc_fork(errstr, len)) == 0) {
        close(fd[0]);
        waker_run(e, fd[1]);
    }
    close(fd[1]);
    p = (struct pollfd){ fd[0], POLLIN, 0 };
    if (e->waker > 0 && poll(&p, 1, WAKER_START_MS) == 1 && read(fd[0], &byte, 1) == 1) {
        close(fd[0]);
        return 0;
    }
    close(fd[0]);
    return e->waker < 0 ? -1 : sim_error(errstr, len, "the ZooKeeper ensemble on ports "
                                         "%d-%d took no session within %d ms", e->port,
                                         e->port + e->nodes - 1, WAKER_START_MS);
}
