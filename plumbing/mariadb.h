/* mariadb.h: what every MariaDB stage shares, written once.
 *
 * A stage's lock.c holds its protocol: its statements, its acquire and
 * release steps. Everything around them is here: the connection through
 * the provider (the default one logs in as user "lockstep" to the
 * database "lockstep", with the config's password and timeouts);
 * dropping it after an I/O error or
 * when the server says it is read-only (a failover left it a replica), so
 * that the next call asks the provider again; the error string, in the
 * server's own words; the config checks; the handle's mutex; the wait loop
 * and its clock; the lock's name as an SQL string.
 *
 * The client never reconnects by itself (Connector/C's MYSQL_OPT_RECONNECT
 * stays off): a lock that lives in the session must learn that the
 * session ended.
 *
 * A MariaDB stage's struct dlock begins with a mariadb_base named m:
 *
 *     struct dlock {
 *         mariadb_base m;  (first: the plumbing finds its part there)
 *         ...              (what the stage adds)
 *     };
 *
 * dlock_config_init, dlock_errstr, and the no-op dlock_failpoint and
 * dlock_token are defined in mariadb.c; a stage defines dlock_new,
 * dlock_acquire, dlock_release and dlock_free. */
#ifndef DLOCK_MARIADB_H
#define DLOCK_MARIADB_H

#include <pthread.h>
#include <stddef.h>
#include <time.h>
#include <mysql.h>

#include "lock.h"

#define MARIADB_USER "lockstep"  /* the default provider logs in as this user */
#define MARIADB_DB "lockstep"    /* ... to this database */
#define MARIADB_NAME_MAX 64      /* GET_LOCK's limit, and the table's key */

/* A MariaDB stage's connection provider (lock.h's dlock_config.provider):
 * connect returns a new connection, logged in to the lock's database,
 * that the lock then owns and closes, or NULL with one line in errstr.
 * The simulator's follows a failover to the promoted replica. */
struct dlock_provider {
    MYSQL *(*connect)(void *arg, int node, char *errstr, size_t errlen);
    void *arg;
};

/* The part of every MariaDB stage's handle that the plumbing keeps. */
typedef struct mariadb_base {
    char *name;                     /* the lock's name; NULL when dlock_new
                                     * refused the handle */
    char sql_name[2 * MARIADB_NAME_MAX + 3]; /* the name as an SQL string,
                                     * quoted and escaped: 'name' */
    dlock_config cfg;               /* a copy: the caller's may go away */
    struct dlock_provider provider; /* a copy of cfg's, or host:port's */
    MYSQL *c;                       /* NULL until needed, and after an I/O
                                     * error or a read-only server */
    char errstr[DLOCK_ERRSTR_LEN];  /* why the last call failed, "" if none */
    pthread_mutex_t mu;             /* one thread at a time on c and errstr */
    int (*on_connect)(dlock *l);    /* NULL, or what a stage does on each new
                                     * connection (v12 makes its table) */
    void (*on_disconnect)(dlock *l); /* NULL, or what a stage forgets with the
                                     * session (v13's hold) */
} mariadb_base;

/* mariadb_exec's answer when a row with that unique key exists already. */
#define MARIADB_DUPLICATE (-2)

/* ---- the handle ------------------------------------------------------------ */

/* Allocates a stage's handle of size bytes (zeroed), checks name and
 * config, copies them, and runs the stage's init (NULL for none). NULL
 * only when out of memory; a refused handle's every call returns
 * DLOCK_ERR with errstr set, and dlock_free still frees it. */
void *mariadb_new(size_t size, const char *name, const dlock_config *cfg,
                  int (*init)(dlock *l));

/* Closes the connection, frees the name and the handle. NULL is ok. */
void mariadb_free(dlock *l);

/* Records why a call failed; returns DLOCK_ERR. */
int mariadb_error(dlock *l, const char *fmt, ...);

/* Runs step with the handle's mutex held; DLOCK_ERR without running it
 * when dlock_new refused the handle. */
int mariadb_guarded(dlock *l, int (*step)(dlock *l));

/* Runs try under mariadb_guarded until it returns other than DLOCK_BUSY
 * or the wait budget is spent, pausing retry_ms between tries. A waiter
 * holds the mutex only for a try, never while it sleeps. */
int mariadb_poll(dlock *l, int (*try)(dlock *l));

/* ---- statements: call with the handle's mutex held --------------------------- */

/* Runs one statement that changes rows (printf's format; the lock's name
 * goes in as sql_name). The rows it changed, MARIADB_DUPLICATE when a row
 * with its unique key exists (errstr untouched: an answer, not a
 * failure), or -1 with errstr. */
long long mariadb_exec(dlock *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Runs a query whose answer is one number (SELECT GET_LOCK(...)): 0 with
 * it in *value, or *is_null set when the server answered NULL; -1 with
 * errstr. */
int mariadb_number(dlock *l, long long *value, int *is_null, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The connection, asked from the provider when there is none (then the
 * stage's on_connect runs). NULL with errstr set. */
MYSQL *mariadb_session(dlock *l);

/* Drops the connection, and with it the session; then the stage's
 * on_disconnect. */
void mariadb_disconnect(dlock *l);

/* ---- the clock: CLOCK_MONOTONIC ------------------------------------------------ */

long mariadb_elapsed_ms(const struct timespec *start);
void mariadb_sleep_ms(long ms);
struct timespec mariadb_now(void);

#endif
