/* redis.h: what every Redis stage shares, written once.
 *
 * A stage's lock.c holds its protocol: its keys, its commands and scripts,
 * its acquire and release steps. Everything around them is here: the
 * connection through the provider, with its timeouts and AUTH; dropping it
 * after an I/O error, READONLY, MOVED or ASK, so that the next call asks
 * the provider again; the error string; the config checks; the handle's
 * mutex; the wait loop and its clock; a script sent by its SHA; one
 * command to several nodes at once; a waiter's pub/sub connection
 * (redis_wait.c).
 *
 * A Redis stage's struct dlock begins with a redis_base named r:
 *
 *     struct dlock {
 *         redis_base r;    (first: the plumbing finds its part there)
 *         ...              (what the stage adds)
 *     };
 *
 * Every call below takes the stage's handle and reaches the shared part
 * through that first member. redis.c defines dlock_config_init and
 * dlock_errstr, and the weak no-ops dlock_token (v7 defines its own) and
 * dlock_failpoint (the simulator links its own); a stage defines
 * dlock_new, dlock_acquire, dlock_release and dlock_free. */
#ifndef DLOCK_REDIS_H
#define DLOCK_REDIS_H

#include <pthread.h>
#include <stddef.h>
#include <time.h>
#include <hiredis/hiredis.h>

#include "lock.h"

/* A Redis stage's connection provider (lock.h's dlock_config.provider):
 * connect returns a new connected context to node `node` (0 to the
 * config's nodes - 1) that the lock then owns and frees, or NULL with one
 * line of reason in errstr. The simulator's follows a failover to the
 * node's current primary. dlock_new copies the struct; arg must outlive
 * the handle. */
struct dlock_provider {
    redisContext *(*connect)(void *arg, int node, char *errstr, size_t errlen);
    void *arg;                      /* handed to connect as is */
};

#define REDIS_MAX_NODES 15 /* a majority's replies live on the stack; 5 is usual */

/* The part of every Redis stage's handle that the plumbing keeps. */
typedef struct redis_base {
    char *key;                      /* the lock's name, the Redis key; NULL
                                     * when dlock_new refused the handle */
    dlock_config cfg;               /* a copy: the caller's may go away */
    struct dlock_provider provider; /* a copy of cfg's, or host:port's */
    redisContext *c[REDIS_MAX_NODES]; /* one per node; NULL until needed,
                                     * and after an I/O error, a late reply,
                                     * READONLY, MOVED or ASK */
    char errstr[DLOCK_ERRSTR_LEN];  /* why the last call failed, "" if none */
    pthread_mutex_t mu;             /* one thread at a time on c and errstr:
                                     * threads may share a handle */
    redisContext *sub;              /* a waiter's pub/sub connection, kept
                                     * between waits; NULL while one is in use */
    char *listening;                /* the channel sub stays subscribed to;
                                     * NULL: none (redis_wait.c) */
    int stay_subscribed;            /* a stage's init sets it when a wait
                                     * ends still subscribed: a channel that
                                     * only wakes this waiter stays quiet */
} redis_base;

/* A Lua script and the SHA1 of its text (sha1sum): EVALSHA sends these 40
 * bytes instead of the script. If a script changes, so must its SHA. */
typedef struct redis_script {
    const char *text;
    const char *sha;
} redis_script;

/* ---- the handle ------------------------------------------------------------ */

/* Allocates a stage's handle of size bytes (its struct dlock, zeroed),
 * checks name and config (at most max_nodes nodes: 1 for a stage that
 * talks to one server), copies them, and runs the stage's init once the
 * key is set (NULL for none; an init that returns DLOCK_ERR has set
 * errstr). NULL only when out of memory; a refused handle's every call
 * returns DLOCK_ERR, and dlock_free still frees it. */
void *redis_new(size_t size, const char *name, const dlock_config *cfg, int max_nodes,
                int (*init)(dlock *l));

/* 1 when dlock_new accepted the handle; 0: errstr says why it did not. */
int redis_ready(const dlock *l);

/* Closes the connections, frees the key and the handle itself. NULL is ok. */
void redis_free(dlock *l);

/* Records why a call failed; returns DLOCK_ERR so callers can return it. */
int redis_error(dlock *l, const char *fmt, ...);

/* ---- steps under the handle's mutex ------------------------------------------ */

/* Runs one step of the protocol (one try, or the release) with the
 * handle's mutex held: threads may share a handle, and its connections
 * and errstr serve one thread at a time. DLOCK_ERR without running it
 * when dlock_new refused the handle. */
int redis_guarded(dlock *l, int (*step)(dlock *l));

/* Runs try under redis_guarded until it returns other than DLOCK_BUSY or
 * the config's wait budget is spent, pausing retry_ms between tries (less
 * when less is left). A waiter holds the mutex only for a try, never while
 * it sleeps, so it never holds up the holder's release. */
int redis_poll(dlock *l, int (*try)(dlock *l));

/* ---- commands: call with the handle's mutex held ----------------------------- */

/* Sends one command (hiredis's format) to node 0 and returns its reply, or
 * NULL with errstr set when the connection failed or the server answered
 * with an error. */
redisReply *redis_command(dlock *l, const char *fmt, ...);

/* Runs script s on node 0 by its SHA; fmt gives EVAL's numkeys, keys and
 * args ("1 %s %s"). A server that has not seen the script (just started,
 * failed over, or after SCRIPT FLUSH) answers NOSCRIPT: then the whole
 * script goes (EVAL), which also caches it there, and errstr stays as it
 * was. The reply, or NULL with errstr set as redis_command. */
redisReply *redis_eval(dlock *l, const redis_script *s, const char *fmt, ...);

/* Node's connection, asked from the provider when there is none. NULL
 * with one line in why when the provider gives none; errstr is left as
 * it is (a node that fails may cost a stage a vote, not the call). */
redisContext *redis_connection(dlock *l, int node, char *why, size_t len);

/* Drops node's connection: the next call asks the provider for a new one.
 * A waiter's kept pub/sub connection goes with it (redis_drop_sub), so
 * that the next wait subscribes where the next commands go. */
void redis_disconnect(dlock *l, int node);

/* 1 when an error reply means this connection must go (see redis.c). */
int redis_must_reconnect(const redisReply *r);

/* A new connection to node from the provider, owned by the caller (a
 * waiter's pub/sub connection): NULL with one line in why. Needs no mutex. */
redisContext *redis_connect(dlock *l, int node, char *why, size_t len);

/* ---- several nodes at once: call with the handle's mutex held --------------- */

/* One command sent to every node at once, and what each one answered. */
typedef struct redis_fanout {
    int pending[REDIS_MAX_NODES];       /* sent; its reply has not come yet */
    redisReply *reply[REDIS_MAX_NODES]; /* the reply; NULL: none came in time */
    char why[DLOCK_ERRSTR_LEN];         /* the first node that failed, and why */
} redis_fanout;

/* Sends one command to every node (only given: to the nodes it marks) at
 * once, and reads the replies side by side as they come, for at most
 * node_timeout_ms: a node that fails (no connection, an I/O error, an
 * error reply, no reply in time) costs that node, not the call. Its reply
 * stays NULL, f->why names the first, and errstr is left as it is. A node
 * that does not answer in time is dropped: its reply may still come, and
 * must never be read as the answer to a later command. */
void redis_fanout_command(dlock *l, redis_fanout *f, const int *only, const char *fmt, ...);

/* Script s on every node (only given: on the nodes it marks) as
 * redis_fanout_command, by its SHA; the nodes that answer NOSCRIPT get the
 * whole script (EVAL). fmt as redis_eval's. */
void redis_fanout_eval(dlock *l, redis_fanout *f, const int *only, const redis_script *s,
                       const char *fmt, ...);

/* How many nodes answered with a reply of this type. */
int redis_fanout_count(dlock *l, const redis_fanout *f, int type);

/* How many nodes answered the integer value. */
int redis_fanout_count_int(dlock *l, const redis_fanout *f, long long value);

/* Frees the replies: the round can be sent again. */
void redis_fanout_clear(redis_fanout *f);

/* ---- the clock: CLOCK_MONOTONIC, which no wall-clock jump moves ------------- */

/* Milliseconds since start. */
long redis_elapsed_ms(const struct timespec *start);

/* Sleeps ms milliseconds. */
void redis_sleep_ms(long ms);

/* The time ms from now (for pthread_cond_timedwait on a monotonic
 * condition, or as a start for redis_elapsed_ms when ms is 0). */
struct timespec redis_deadline_after(long ms);

/* ---- waiting without polling (redis_wait.c) -------------------------------- */

/* redis_error from a thread that does not hold the handle's mutex: takes
 * it. "what: why" in errstr; returns DLOCK_ERR. */
int redis_fail(dlock *l, const char *what, const char *why);

/* Subscribes a waiter to channel, on the connection the last wait kept
 * (redis_unsubscribe) or on a new one from the provider, as after a
 * failed command: the kept one may have died since. *kept (when kept is
 * not NULL) is 1 when the kept one still listens to this very channel:
 * then nothing is sent. One that listens to another channel leaves it
 * first. NULL with errstr set on failure. Needs no mutex; the connection
 * is the caller's until it hands it back (redis_unsubscribe). */
redisContext *redis_subscribe(dlock *l, const char *channel, int *kept);

/* Ends a wait: sends UNSUBSCRIBE without waiting for its answer (the next
 * redis_subscribe reads past it) and keeps the connection for the next
 * wait, so that a contended acquire costs no new TCP connection. A handle
 * whose stay_subscribed is set sends nothing: the connection stays on
 * channel, and the next wait on it sends nothing either (*kept). NULL is
 * ok. Needs no mutex. */
void redis_unsubscribe(dlock *l, redisContext *sub, const char *channel);

/* Closes the kept pub/sub connection (redis_disconnect and redis_free
 * call it). Call with the handle's mutex held. */
void redis_drop_sub(dlock *l);

/* Waits up to ms for one message on sub, and reads it. A timeout is no
 * failure: the caller tries again. A broken connection is closed and
 * *sub set to NULL: the caller subscribes anew. */
void redis_wait_message(redisContext **sub, long ms);

/* Initializes a condition whose timed waits run on the monotonic clock
 * (redis_deadline_after's): a wall-clock jump must not skip or delay a
 * timed wake-up. */
void redis_cond_init(pthread_cond_t *cond);

/* ---- names ------------------------------------------------------------------ */

/* prefix and a lock's name, by Redisson's rule for what a lock keeps
 * beside its key (its unlock channel, a counter, a queue): the name in
 * braces, a hash tag, so that in a Redis Cluster they all live in the
 * key's slot. A name with a '{' in it is taken as it is: it may carry its
 * own hash tag ("{shop}:stock"), and braces around it would make the tag
 * differ from the key's (CROSSSLOT), and the name differ from the one a
 * Redisson client uses. A new string for the caller to free, or NULL when
 * out of memory. */
char *redis_tagged(const char *prefix, const char *name);

#endif
