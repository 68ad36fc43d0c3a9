/* v12-mysql-unique-index: the lock is a row under a unique key.
 *
 * table:   dlock(name PRIMARY KEY, lock_until, locked_at, locked_by),
 *          made on each new connection when it is missing.
 * acquire: INSERT the row: the lock is ours until lock_until, lease from
 *          now by the server's clock; where the row exists, one UPDATE
 *          that takes it only when lock_until has passed. The rows each
 *          statement changed say who won. Polled until the budget is spent.
 * release: one UPDATE that ends the hold only where the name and our
 *          owner match and the lease still runs; none: NOT_OWNER.
 *
 * The primary key does what SET NX did: two clients never both insert
 * the row, and the UPDATE's WHERE is checked where the row is changed, so
 * two clients never both take an expired lock. Every time is the
 * server's, so the clients' clocks never matter. But the lease is still a
 * lease: a holder slower than it shares the lock with the next client;
 * its own thread asking again waits out its own lease; and no token
 * fences a late holder's write. Replication is asynchronous: a replica
 * promoted before the row reached it hands the lock out again.
 *
 * What every MariaDB stage shares (the connection, its errors, the config
 * checks, the mutex, the wait loop) is in plumbing/mariadb.c. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "mariadb.h"

#define ID_BYTES 16    /* 128 random bits: no other client will draw them */
#define TOKEN_LEN 64   /* 32 hex digits, ':', a thread id, and room to spare */

struct dlock {
    mariadb_base m; /* first: the plumbing's name, config, connection, errstr, mutex */
    char id[2 * ID_BYTES + 1];      /* this client's random id, in hex */
};

/* The lock's table. The name is bytes, as a Redis key is: 'A' and 'a'
 * are two locks. Times are the server's, to the millisecond. */
static int make_table(dlock *l)
{
    return mariadb_exec(l, "CREATE TABLE IF NOT EXISTS dlock (name VARBINARY(%d) PRIMARY KEY, "
                        "lock_until DATETIME(3) NOT NULL, locked_at DATETIME(3) NOT NULL, "
                        "locked_by VARCHAR(%d) NOT NULL) ENGINE=InnoDB",
                        MARIADB_NAME_MAX, TOKEN_LEN) < 0 ? DLOCK_ERR : DLOCK_OK;
}

/* Draws this client's id from the OS random source, never from rand():
 * another client must not be able to guess it or draw the same. */
static int random_id(dlock *l)
{
    unsigned char bytes[ID_BYTES];
    int i;

    if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes))
        return mariadb_error(l, "cannot read the OS random source");
    for (i = 0; i < ID_BYTES; i++)
        sprintf(l->id + 2 * i, "%02x", bytes[i]);
    l->m.on_connect = make_table;
    return DLOCK_OK;
}

/* The value we store in the row: who holds it, down to the thread. */
static void owner_token(const dlock *l, char *token, size_t len)
{
    snprintf(token, len, "%s:%ld", l->id, (long)gettid());
}

/* One attempt: OK when we took the lock, BUSY when someone else has it.
 * Called under the handle's mutex. */
static int try_acquire(dlock *l)
{
    char token[TOKEN_LEN];
    long long n;

    owner_token(l, token, sizeof(token));
    /* No row yet: the primary key lets one INSERT of it succeed. */
    n = mariadb_exec(l, "INSERT INTO dlock (name, lock_until, locked_at, locked_by) "
                     "VALUES (%s, NOW(3) + INTERVAL %ld MICROSECOND, NOW(3), '%s')",
                     l->m.sql_name, l->m.cfg.lease_ms * 1000, token);
    if (n == MARIADB_DUPLICATE)
        /* The row exists: take it only if its lease has run out. */
        n = mariadb_exec(l, "UPDATE dlock SET lock_until = NOW(3) + INTERVAL %ld MICROSECOND, "
                         "locked_at = NOW(3), locked_by = '%s' "
                         "WHERE name = %s AND lock_until <= NOW(3)",
                         l->m.cfg.lease_ms * 1000, token, l->m.sql_name);
    if (n < 0)
        return DLOCK_ERR;
    return n == 1 ? DLOCK_OK : DLOCK_BUSY;
}

/* Gives the lock back: dlock_release under the handle's mutex. */
static int release(dlock *l)
{
    char token[TOKEN_LEN];
    long long n;

    owner_token(l, token, sizeof(token));
    /* One statement: the check and the change cannot be split. A row
     * whose lease ran out is no longer ours to give. */
    n = mariadb_exec(l, "UPDATE dlock SET lock_until = NOW(3) "
                     "WHERE name = %s AND locked_by = '%s' AND lock_until > NOW(3)",
                     l->m.sql_name, token);
    if (n < 0)
        return DLOCK_ERR;
    return n == 1 ? DLOCK_OK : DLOCK_NOT_OWNER;
}

dlock *dlock_new(const char *name, const dlock_config *cfg)
{
    return mariadb_new(sizeof(dlock), name, cfg, random_id);
}

int dlock_acquire(dlock *l)
{
    return mariadb_poll(l, try_acquire);
}

int dlock_release(dlock *l)
{
    return mariadb_guarded(l, release);
}

void dlock_free(dlock *l)
{
    mariadb_free(l);
}
