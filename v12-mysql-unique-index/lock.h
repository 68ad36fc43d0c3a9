/* lock.h: the contract of the lock, the same bytes in every stage.
 *
 * Each stage folder implements this header in its own lock.c, with what
 * every stage of its kind of server shares in plumbing/<server>.c. Only the
 * protocol behind it changes from stage to stage; a program written against
 * it (the tests, the simulator's clients) runs unchanged on every stage.
 *
 * Failure contract, the hiredis way: every call returns a result code;
 * DLOCK_ERR means dlock_errstr() says what went wrong in one line. Stage code
 * never prints and never exits. After an I/O error, or a READONLY reply
 * (a failover made the server a replica), the lock drops its connection
 * and asks the provider for a new one on its next call. */
#ifndef DLOCK_LOCK_H
#define DLOCK_LOCK_H

#include <stddef.h>

/* Results of dlock_acquire and dlock_release. */
#define DLOCK_OK 0         /* acquired, or released */
#define DLOCK_ERR -1       /* I/O, protocol or argument error: see dlock_errstr */
#define DLOCK_BUSY 1       /* acquire: the wait budget ran out, another holds it */
#define DLOCK_NOT_OWNER 2  /* release: the lock was not ours, nothing deleted */

#define DLOCK_ERRSTR_LEN 128 /* room for one line of error text */

/* A connection provider: how the lock reaches node i of its servers.
 * Each kind of server defines it in its plumbing header: a Redis
 * provider (plumbing/redis.h) returns a connected redisContext, and the
 * simulator's follows a failover to the new primary; the ZooKeeper stages
 * take none. dlock_new copies it. */
struct dlock_provider;

/* The range of lease_ms, checked by dlock_new in every stage before
 * anything is sent. At the low end a watchdog that renews every lease/3
 * still has 10 ms for a round trip and a thread wake-up. At the high end,
 * 2^31-1 ms (24.8 days) is the longest a waiter can sleep in one poll()
 * while it waits out a TTL. Redis accepts any PX or PEXPIRE for which now
 * plus the lease fits in 64 bits of milliseconds, so it takes every lease
 * in this range, and a script never fails on one halfway. */
#define DLOCK_MIN_LEASE_MS 30L
#define DLOCK_MAX_LEASE_MS 2147483647L

typedef struct dlock_config {
    long lease_ms;             /* the key's time to live, where a stage sets one;
                                * DLOCK_MIN_LEASE_MS to DLOCK_MAX_LEASE_MS */
    long wait_ms;              /* acquire's budget; 0 = try once */
    long retry_ms;             /* pause between tries, in stages that poll */
    int nodes;                 /* independent Redis masters: 1; more only in a
                                * stage that takes a majority of them (v8),
                                * the others refuse a config of several */
    long node_timeout_ms;      /* several nodes: how long a call waits for a
                                * node's reply before it counts that node as
                                * failed; far below the lease */
    const struct dlock_provider *provider; /* NULL: the kind's default
                                * way, host:port below */
    const char *host;          /* default provider: server address */
    int port;                  /* default provider: server port; node i of
                                * several at port + i */
    const char *password;      /* default provider: AUTH when not NULL */
    long timeout_ms;           /* default provider: connect and command timeout */
} dlock_config;

/* One client's handle on one named lock. Opaque: each stage keeps different
 * state behind it. The config's strings must outlive the handle. Threads
 * may share a handle: they take turns on its connection, one try or one
 * release at a time, and a waiter holds nothing while it sleeps between
 * tries, so it never holds up the holder's release. */
typedef struct dlock dlock;

/* Fills cfg with defaults: lease 10 s, wait 0, retry 10 ms, one node
 * (node timeout 50 ms), 127.0.0.1:6379, no password, timeout 1 s, the
 * default provider. */
void dlock_config_init(dlock_config *cfg);

/* Makes a handle for the lock called name. Talks to no server. Returns NULL
 * only when out of memory; a bad name or config gives a handle whose every
 * call returns DLOCK_ERR with the reason in dlock_errstr. */
dlock *dlock_new(const char *name, const dlock_config *cfg);

/* Takes the lock, waiting up to the config's wait budget.
 * DLOCK_OK, DLOCK_BUSY or DLOCK_ERR. */
int dlock_acquire(dlock *l);

/* Gives the lock back. DLOCK_OK, DLOCK_NOT_OWNER (stages that can tell)
 * or DLOCK_ERR. */
int dlock_release(dlock *l);

/* The fencing token of the calling thread's current hold, or 0 when the
 * thread holds no lock through l, or the stage draws no tokens. A stage
 * that draws them takes each from a counter on the lock's server that
 * only grows, so a later holder has a higher token. A holder sends its
 * token with every write to the resource it guards; a resource that
 * refuses a token lower than the highest it has seen refuses a holder
 * whose lease ran out while it was paused. */
long long dlock_token(dlock *l);

/* The last failed call's reason, "" when none has failed. When threads
 * share one handle, it is the reason of whichever failed last. Only
 * dlock_new, dlock_acquire and dlock_release write it: a thread that a
 * stage runs behind the handle (v6's watchdog) never does, so a call that
 * succeeded never finds an error here that no call returned. */
const char *dlock_errstr(const dlock *l);

/* Closes the connections, stops any thread, frees the handle. NULL is ok. */
void dlock_free(dlock *l);

/* Fault-injection hook, called at named protocol steps. Every stage comes
 * with a weak no-op; the simulator links a strong one that acts. */
void dlock_failpoint(const char *name);

#endif
