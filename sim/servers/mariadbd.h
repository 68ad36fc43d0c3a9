/* mariadbd: one MariaDB server process, its whole life.
 *
 * A server is a data dir made by mariadb-install-db in the run's temp dir
 * and a mariadbd on a free 127.0.0.1 port, started as a direct child of
 * ours (server.h: it dies with us, joins the registry that Ctrl-C empties,
 * and is stopped by its PID). Nothing else gets in:
 *
 *   - the stages and the tests log in as SIM_MARIADB_USER, from 127.0.0.1
 *     only, with a random password drawn per run; that user may only read
 *     and write the tables of SIM_MARIADB_DB (no FILE, SUPER or GRANT);
 *   - root has no password and is reachable only over the server's socket,
 *     in a dir of mode 0700; the only other account left is the
 *     replication user, REPLICATION SLAVE alone, with the same password;
 *   - secure_file_priv is a dir inside the server's own dir, so even root
 *     writes no file anywhere else.
 *
 * Every server writes a binary log under its own server_id, so any of them
 * can be a primary; a replica follows one asynchronously (MariaDB's
 * default) and a promotion makes it writable.
 *
 * Errors, hiredis-style: 0 or -1, with one line of reason in errstr. */
#ifndef SIM_MARIADBD_H
#define SIM_MARIADBD_H

#include <stddef.h>
#include <mysql.h>

#include "password.h"
#include "server.h"

#define SIM_MARIADB_USER "lockstep"   /* the stages' user */
#define SIM_MARIADB_DB "lockstep"     /* the only database it may touch */

typedef struct sim_mariadb {
    sim_server srv;                 /* pid (0 when down), port, dir */
    char sock[SIM_PATH_LEN + 16];   /* root's socket, in a 0700 dir */
    char password[SIM_PASSWORD_LEN]; /* the stages' user's */
    int server_id;                  /* for the binary log: 1, 2, ... */
    const char *const *env;         /* added to mariadbd's environment (the
                                     * clock library), NULL for none */
} sim_mariadb;

/* Makes parent_dir/name, its data dir (mariadb-install-db), starts
 * mariadbd there under server_id with password for the stages' user and
 * env in its environment (NULL: none; it must outlive the server), waits
 * until it answers, and sets the accounts up. On error nothing runs. */
int sim_mariadb_start(sim_mariadb *m, const char *parent_dir, const char *name,
                      int server_id, const char *password, const char *const *env,
                      char *errstr, size_t len);

/* A killed server comes back on its own data dir and port (what InnoDB
 * committed is still there). */
int sim_mariadb_restart(sim_mariadb *m, char *errstr, size_t len);

/* SIGKILL and reap: a crash. The data dir stays. Idempotent. */
void sim_mariadb_kill(sim_mariadb *m);

/* Kills the server and removes its dir. Idempotent. */
void sim_mariadb_stop(sim_mariadb *m);

/* A connection as root over the socket, or as the stages' user over TCP,
 * with timeout_ms (rounded up to whole seconds, as the client counts) on
 * connect, reads and writes. NULL with errstr. Close with mysql_close. */
MYSQL *sim_mariadb_root(const sim_mariadb *m, long timeout_ms, char *errstr, size_t len);
MYSQL *sim_mariadb_connect(const sim_mariadb *m, long timeout_ms, char *errstr, size_t len);

/* Runs one statement (printf format) and drops any result. */
int sim_mariadb_query(MYSQL *c, char *errstr, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The first column of the first row of a query's result into out ("" for
 * NULL); -1 with errstr when the query fails or returns no row. */
int sim_mariadb_value(MYSQL *c, char *out, size_t outlen, char *errstr, size_t len,
                      const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* replica follows primary (asynchronous replication), and this returns
 * once its I/O and SQL threads run. */
int sim_mariadb_replicate(sim_mariadb *replica, const sim_mariadb *primary,
                          char *errstr, size_t len);

/* The replica reads its primary's log but applies nothing (STOP SLAVE
 * SQL_THREAD): what the primary commits from now on is not on it. */
int sim_mariadb_hold(sim_mariadb *replica, char *errstr, size_t len);

/* The replica becomes a primary: STOP SLAVE; RESET SLAVE ALL (what it
 * read but had not applied is gone); SET GLOBAL read_only=0. */
int sim_mariadb_promote(sim_mariadb *replica, char *errstr, size_t len);

#endif
