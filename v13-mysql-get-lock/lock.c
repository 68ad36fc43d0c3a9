/* v13-mysql-get-lock: the lock is the server's named lock, held by the session.
 *
 * acquire: SELECT GET_LOCK(name, 0) on the handle's own connection: 1 when
 *          this session took it, or holds it already (the server counts
 *          each take), 0 when another session holds it. Polled until the
 *          budget is spent.
 * release: SELECT RELEASE_LOCK(name): 1 when this session gave one take
 *          back, 0 when another session holds it, NULL when none does:
 *          NOT_OWNER for both.
 *
 * No lease: the lock lives as long as the session that took it. A holder
 * slower than lease_ms keeps it, and one that dies loses it the moment
 * its session ends. The same session may take it again, and must give it
 * back as many times. But the lock lives in one server's memory: it is
 * not replicated, and a restart ends every session, so a promoted
 * replica or a restarted server hands it out again while its holder
 * works on. A lost connection is a lost lock: the call that meets the
 * I/O error says so, and the next call opens a new session that holds
 * nothing. A holder cut off without a word keeps the lock until the
 * server notices (wait_timeout, 8 hours by default), and every waiter
 * waits. Threads that share a handle share its session: the server
 * counts them as one holder. No token fences a late holder's write.
 *
 * What every MariaDB stage shares (the connection, its errors, the config
 * checks, the mutex, the wait loop) is in plumbing/mariadb.c. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "mariadb.h"

struct dlock {
    mariadb_base m; /* first: the plumbing's name, config, connection, errstr, mutex */
};

/* The session is gone, and with it any lock it held: the call that met
 * the error says so after the client library's words. */
static void session_lost(dlock *l)
{
    size_t n = strlen(l->m.errstr);

    snprintf(l->m.errstr + n, sizeof(l->m.errstr) - n, "; a lock it held is gone");
}

static int watch_session(dlock *l)
{
    l->m.on_disconnect = session_lost;
    return DLOCK_OK;
}

/* One attempt: OK when we took the lock, BUSY when someone else has it.
 * Called under the handle's mutex. */
static int try_acquire(dlock *l)
{
    long long got;
    int none;

    /* The server's own lock: one session holds it, however often. */
    if (mariadb_number(l, &got, &none, "SELECT GET_LOCK(%s, 0)", l->m.sql_name) != 0)
        return DLOCK_ERR;
    if (none)
        return mariadb_error(l, "GET_LOCK(%s) returned NULL", l->m.sql_name);
    return got == 1 ? DLOCK_OK : DLOCK_BUSY;
}

/* Gives the lock back: dlock_release under the handle's mutex. */
static int release(dlock *l)
{
    long long released;
    int none;

    /* One take back; the lock is free once the session gave back all. */
    if (mariadb_number(l, &released, &none, "SELECT RELEASE_LOCK(%s)", l->m.sql_name) != 0)
        return DLOCK_ERR;
    return !none && released == 1 ? DLOCK_OK : DLOCK_NOT_OWNER;
}

dlock *dlock_new(const char *name, const dlock_config *cfg)
{
    return mariadb_new(sizeof(dlock), name, cfg, watch_session);
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
