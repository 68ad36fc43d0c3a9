/* ensemble: a ZooKeeper ensemble of a few servers, its whole life.
 *
 * Node i is one ZooKeeper server (Debian's jar, run by java as a direct
 * child through server.h, so it dies with us and joins the registry that
 * Ctrl-C empties) that listens for clients on 127.0.0.1:port + i: a
 * lock's config of host, port and nodes names the whole ensemble, as it
 * names v8's masters. Its peers talk to it on two more ports each. Each
 * node has a dir of its own in the caller's dir, which is its data dir
 * too: zoo.cfg, myid, the transaction log and snapshots, and its own log
 * (zookeeper.log, warnings and errors only).
 *
 * The servers are set up for short leases on a shared machine:
 *
 *   tickTime 50 ms      sessions of 100 ms (two ticks) are allowed, and
 *                       one of any longer length (maxSessionTimeout is
 *                       not the default 20 ticks): the lease is the
 *                       session timeout
 *   forceSync no        a write is in the log, not fsynced, before the
 *                       server acknowledges it: an ensemble's data
 *                       survives a server's crash through the others,
 *                       not through a disk (the README says what this
 *                       changes)
 *   admin server off    else every node wants port 8080
 *   digest enforced     a session serves no request until it has sent a
 *                       digest credential (zookeeper.enforce.auth.*), and
 *                       the root's ACL lets in only lockstep:<the run's
 *                       password> (password.h); the stages' nodes
 *                       carry their creator's ACL
 *   4lw srvr ruok mntr dump
 *                       the only words it answers: srvr tells its role,
 *                       dump which sessions are open (the observer's)
 *   -Xmx64m, serial GC, C1 only: small and quick to start
 *
 * Ready means a leader is elected and every node that runs says leader
 * or follower (`srvr`). A JVM starts in about a second; an election after
 * the leader dies takes well under one.
 *
 * Errors, hiredis-style: 0 or -1 with one line of reason in errstr. */
#ifndef SIM_ENSEMBLE_H
#define SIM_ENSEMBLE_H

#include <stddef.h>
#include <sys/types.h>

#include "clockfile.h"
#include "server.h"
#include "stage.h"

#define SIM_ENSEMBLE_TICK_MS 50        /* the servers' tickTime */
#define SIM_ENSEMBLE_MIN_SESSION_MS 100 /* two ticks: the shortest lease it allows */
#define SIM_ENSEMBLE_START_MS 60000    /* JVMs on a loaded 2-core machine */
#define SIM_ENSEMBLE_ELECTION_MS 20000 /* a new leader after one died */
#define SIM_ENSEMBLE_PASSWORD_LEN 33   /* 32 hex digits and the '\0' */
#define SIM_ENSEMBLE_USER "lockstep"   /* the digest user of the run's clients */

/* What `srvr` says a node is. */
typedef enum sim_zk_mode {
    SIM_ZK_DOWN,     /* no answer: not running, or not listening yet */
    SIM_ZK_LOOKING,  /* it answers, but serves no client (no leader) */
    SIM_ZK_FOLLOWER,
    SIM_ZK_LEADER
} sim_zk_mode;

typedef struct sim_ensemble {
    int nodes;                        /* node 0 .. nodes - 1 */
    int port;                         /* node i serves clients on port + i */
    int peer_port[SIM_NODES_MAX];     /* where followers reach the leader */
    int election_port[SIM_NODES_MAX]; /* where nodes vote */
    sim_server node[SIM_NODES_MAX];   /* pid 0 while a node is down */
    char parent[SIM_PATH_LEN];        /* the dir the nodes' dirs live in */
    int restarts;                     /* names each restarted node's dir */
    const char *clock_shim;           /* the clock library the nodes run under; NULL: none */
    char clock_file[SIM_NODES_MAX][SIM_CLOCKFILE_LEN]; /* each node's clock offset */
    char password[SIM_ENSEMBLE_PASSWORD_LEN]; /* the run's password (password.h),
                                               * as a digest: only a session that
                                               * authenticated with it gets in */
    pid_t waker;                      /* the process whose sessions ping each node
                                       * (zk_waker.c says why); 0: none */
} sim_ensemble;

/* Adds the digest credential SIM_ENSEMBLE_USER:password to zh, right
 * after zookeeper_init (zh a zhandle_t: this header leaves the client
 * library's out of the files that have no session), and waits until a
 * server has answered it (the session connected first), up to 10 s: the
 * library sends it before any request, and again on every reconnect.
 * ZOK, the library's error, or ZOPERATIONTIMEOUT. */
struct _zhandle;
int sim_ensemble_add_auth(struct _zhandle *zh, const char *password);

/* The same credential without the wait: the library sends it once the
 * session connects (the waker's, whose node may be down). ZOK, or the
 * library's error. */
int sim_ensemble_add_credential(struct _zhandle *zh, const char *password);

/* Starts nodes (1 to SIM_NODES_MAX) servers, each in a new dir of
 * parent_dir, and waits until they are ready. On error nothing is left
 * running. */
int sim_ensemble_start(sim_ensemble *e, const char *parent_dir, int nodes,
                       char *errstr, size_t len);

/* The same, every node's java run under the clock library at shim (a
 * path that outlives the ensemble), with a wall clock that
 * sim_ensemble_clock_jump moves; a restarted node keeps its clock. */
int sim_ensemble_start_clock(sim_ensemble *e, const char *parent_dir, int nodes,
                             const char *shim, char *errstr, size_t len);

/* Node i's wall clock jumps ms forward, on top of its earlier jumps, at
 * its next reading of the time. Only the wall clock moves: what the JVM
 * times with System.nanoTime (the monotonic clock) does not. */
int sim_ensemble_clock_jump(sim_ensemble *e, int i, long ms, char *errstr, size_t len);

/* Sends a four-letter word to the server on 127.0.0.1:port and reads its
 * answer up to EOF (or as much as fits) into out. 0, or -1 when it does
 * not answer within a few hundred ms. */
int sim_ensemble_ask(int port, const char *word, char *out, size_t outlen);

/* What node i says it is now (a srvr over TCP, a few ms). */
sim_zk_mode sim_ensemble_mode(const sim_ensemble *e, int i);

/* The node that says it leads, or -1. */
int sim_ensemble_leader(const sim_ensemble *e);

/* Waits until a leader is elected and every node that runs follows it:
 * the leader's index, or -1 with errstr after timeout_ms. */
int sim_ensemble_wait(const sim_ensemble *e, long timeout_ms, char *errstr, size_t len);

/* Kills node i (SIGKILL, as a crash) and leaves it down. */
void sim_ensemble_down(sim_ensemble *e, int i);

/* Node i, killed if it runs, comes back on its ports with an empty data
 * dir (a new dir: the old one keeps its log), and serves again (leader or
 * follower) within timeout_ms. 0, or -1 with errstr. */
int sim_ensemble_restart(sim_ensemble *e, int i, long timeout_ms, char *errstr,
                         size_t len);

/* Kills and reaps every node and removes their dirs. Idempotent. */
void sim_ensemble_stop(sim_ensemble *e);

/* Kills the process whose sessions ping each node, for a caller that
 * counts the servers' requests (the bench), which the pings would add to.
 * The ensemble's stop kills it in any case. */
void sim_ensemble_waker_stop(sim_ensemble *e);

#endif
