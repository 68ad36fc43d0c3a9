/* lock_helpers: the verbs the contract suite is written in, shared by its
 * files (tests/test_lock*.c), and the parts those files add to the suite.
 *
 * Each verb fails the test with a sentence when Redis or the lock does not
 * answer as the contract says, so that a test reads as the protocol. */
#ifndef LOCKSTEP_LOCK_HELPERS_H
#define LOCKSTEP_LOCK_HELPERS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "harness.h"

#define LEASE_MS 10000     /* never runs out during a test */
#define SHORT_LEASE_MS 300 /* for tests about the lease: margins are multiples of it */
#define TOKEN_HEX 32       /* 128 random bits in hex */

/* ---- verbs ---------------------------------------------------------------- */

/* Client who takes the free lock name; fails the test if it cannot. */
dlock *take(const char *who, const char *name, long lease_ms);

/* Client who releases l; fails the test unless the release returns OK. */
void release_ok(dlock *l, const char *who);

/* On how many of the tcase's nodes key exists. */
int nodes_with(const char *key);

/* 1 when key exists on the tcase's nodes, 0 when it does not; a key on
 * some nodes only (v8) fails the test: a lock is on all or none. */
long long exists(const char *key);

/* What the lock key holds, as one string: the value of a string key,
 * "field=value" of a hash (v6), "" when there is no key. */
void lock_value(const char *key, char *out, size_t len);

/* An owner is 32 lowercase hex digits, ':' and a thread id. Copies the hex
 * part to id (33 bytes) and returns the thread id, or -1 if malformed. */
long parse_owner(const char *owner, char *id);

/* A thread that calls dlock_acquire on a handle, and releases when asked. */
typedef struct attempt {
    dlock *l;
    int rc;              /* acquire's result */
    int release_rc;      /* release's result, when rc was OK */
    int64_t done_ms;     /* when acquire returned */
} attempt;

/* Starts a thread that runs acquire_in_thread on a; join it with
 * pthread_join, then read its results. */
void run_in_thread(pthread_t *t, attempt *a);

/* The whole of a test that every kind of lock runs as it is: a second
 * client's try returns BUSY while the lock is held. */
void check_busy_while_held(void);

/* Client A takes the lock name (*a gets A's handle), and client B waits
 * for it with a budget of budget_ms: fails the test unless B's acquire
 * returns BUSY after least_ms or more, and nowhere near "forever".
 * Returns B's handle. */
dlock *wait_out_budget(dlock **a, const char *name, long budget_ms, long least_ms);

/* An error result with a reason, not a crash or a hang. */
void assert_error(dlock *l, int rc, const char *call, const char *situation);

/* A port where connections are refused: bound by us, so nobody else can
 * listen there, but not listening. Returns the socket; *port gets it. */
int refusing_port(int *port);

/* Connections the server has accepted since it started. */
long long connections_received(void);

/* Closes, from the server's side (CLIENT KILL), every connection whose
 * last command was cmd. Returns how many it closed. */
int kill_clients_by_last_command(const char *cmd);

/* ---- many at once ---------------------------------------------------------- */

/* Where a contention test keeps its counter: the store of the stage's
 * kind of server, which each client reads and writes beside the lock,
 * never through it. */
typedef struct counter_store {
    void *(*open)(void);                 /* a connection of the caller's own; NULL if none */
    long long (*get)(void *conn);        /* the count, 0 before the first write; -1 on an error */
    int (*set)(void *conn, long long n); /* 0, or -1 on an error */
    void (*close)(void *conn);
} counter_store;

/* The contention test: clients processes, each rounds read-modify-writes
 * of the store's counter under the lock "counter-lock". Fails the test
 * unless every client ended well and the counter ends at clients x
 * rounds (a lost update means two holders at once). */
void count_in_processes(const counter_store *store, int clients, int rounds);

/* The shared-handle test: threads threads all on the handle l, rounds
 * locked increments each of a counter in memory. Fails the test on a
 * call that did not return OK, on two threads inside at once, or on a
 * lost increment. */
void count_in_threads(dlock *l, int threads, int rounds);

/* ---- the parts of the contract -------------------------------------------- */

/* A part adds its file's tests to a tcase of test_lock.c's suite, the
 * ones the stage's capabilities (CAPS) call for. Some parts share a tcase
 * (its one redis-server): test_lock.c's table calls them in the order of
 * the contract. A line a tcase, its files (test_lock_*.c) after it. */
typedef void lock_part(TCase *tc);

lock_part lock_basics_tests, lock_reentry_tests;                    /* _basics.c, _reentry.c */
lock_part lock_owner_tests, lock_token_tests, lock_script_tests;    /* _owner.c, _tokens.c */
lock_part lock_lease_tests, lock_pubsub_tests, lock_watchdog_tests; /* _lease.c, _pubsub.c */
lock_part lock_contention_tests, lock_threads_tests; /* two tcases, test_lock_contention.c */
lock_part lock_errors_tests;                                        /* test_lock_errors.c */
lock_part lock_quorum_tests;                                        /* test_lock_quorum.c */

#endif
