/* mariadb.c: the plumbing every MariaDB stage shares (see mariadb.h). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mariadb.h"

#define DEFAULT_LEASE_MS 10000
#define DEFAULT_RETRY_MS 10
#define DEFAULT_TIMEOUT_MS 1000
#define DEFAULT_PORT 3306
#define SQL_LEN 1024

/* Server error numbers the plumbing acts on (mysqld_error.h). */
#define ER_DUP_ENTRY_NO 1062       /* a second row under a unique key */
#define ER_READ_ONLY_NO 1290       /* --read-only: the server is a replica */
#define ER_KILLED_NO 1927          /* the server killed this connection */
#define ER_INACTIVE_NO 4031        /* the server dropped a silent client */

static mariadb_base *base(dlock *l)
{
    return (mariadb_base *)(void *)l;
}

int mariadb_error(dlock *l, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(base(l)->errstr, sizeof(base(l)->errstr), fmt, ap);
    va_end(ap);
    return DLOCK_ERR;
}

/* The default provider: the server at host:port, with the config's
 * timeout on connect, on every read and every write (Connector/C counts
 * whole seconds: rounded up). */
static MYSQL *connect_default(void *arg, int node, char *errstr, size_t errlen)
{
    const dlock_config *cfg = arg;
    unsigned int secs = (unsigned int)((cfg->timeout_ms + 999) / 1000);
    MYSQL *c = mysql_init(NULL);

    (void)node;
    if (c == NULL) {
        snprintf(errstr, errlen, "mysql_init: out of memory");
        return NULL;
    }
    mysql_options(c, MYSQL_OPT_CONNECT_TIMEOUT, &secs);
    mysql_options(c, MYSQL_OPT_READ_TIMEOUT, &secs);
    mysql_options(c, MYSQL_OPT_WRITE_TIMEOUT, &secs);
    if (mysql_real_connect(c, cfg->host, MARIADB_USER, cfg->password, MARIADB_DB,
                           (unsigned int)cfg->port, NULL, 0) == NULL) {
        snprintf(errstr, errlen, "connect to %s:%d: %s", cfg->host, cfg->port, mysql_error(c));
        mysql_close(c);
        return NULL;
    }
    return c;
}

MYSQL *mariadb_session(dlock *l)
{
    mariadb_base *b = base(l);
    char why[DLOCK_ERRSTR_LEN] = "the connection provider returned NULL";

    if (b->c != NULL)
        return b->c;
    if ((b->c = b->provider.connect(b->provider.arg, 0, why, sizeof(why))) == NULL) {
        mariadb_error(l, "%s", why);
        return NULL;
    }
    if (b->on_connect != NULL && b->on_connect(l) != DLOCK_OK) {
        mariadb_disconnect(l);
        return NULL;
    }
    return b->c;
}

void mariadb_disconnect(dlock *l)
{
    mariadb_base *b = base(l);

    mysql_close(b->c);
    b->c = NULL;
    if (b->on_disconnect != NULL)
        b->on_disconnect(l);
}

/* The statement's error into errstr. Client errors (2000-2999: the
 * connection failed, timed out, or the server went away) and a server
 * that is read-only, killed the session or dropped a silent client drop
 * the connection: the next call asks the provider again. */
static void failed(dlock *l)
{
    MYSQL *c = base(l)->c;
    unsigned int no = mysql_errno(c);
    int io = no >= 2000 && no < 3000;

    mariadb_error(l, "%s error %u: %s", io ? "I/O" : "server", no, mysql_error(c));
    if (io || no == ER_READ_ONLY_NO || no == ER_KILLED_NO || no == ER_INACTIVE_NO)
        mariadb_disconnect(l);
}

/* Formats and sends one statement; 0, or -1 with errstr. */
static int send_sql(dlock *l, const char *fmt, va_list ap)
{
    char sql[SQL_LEN];
    MYSQL *c = mariadb_session(l);

    if (c == NULL)
        return -1;
    if (vsnprintf(sql, sizeof(sql), fmt, ap) >= (int)sizeof(sql)) {
        mariadb_error(l, "statement longer than %d bytes: \"%.40s...\"", SQL_LEN, sql);
        return -1;
    }
    if (mysql_query(c, sql) != 0) {
        if (mysql_errno(c) == ER_DUP_ENTRY_NO)
            return MARIADB_DUPLICATE;
        failed(l);
        return -1;
    }
    return 0;
}

long long mariadb_exec(dlock *l, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = send_sql(l, fmt, ap);
    va_end(ap);
    if (rc != 0)
        return rc;
    return (long long)mysql_affected_rows(base(l)->c);
}

int mariadb_number(dlock *l, long long *value, int *is_null, const char *fmt, ...)
{
    MYSQL_RES *res;
    MYSQL_ROW row;
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = send_sql(l, fmt, ap);
    va_end(ap);
    if (rc != 0)
        return rc == MARIADB_DUPLICATE ? mariadb_error(l, "duplicate key") : -1;
    if ((res = mysql_store_result(base(l)->c)) == NULL) {
        failed(l);
        return -1;
    }
    row = mysql_fetch_row(res);
    rc = row != NULL && mysql_num_fields(res) > 0 ? 0 : mariadb_error(l, "the server "
                                                                      "answered no row");
    if (rc == 0) {
        *is_null = row[0] == NULL;
        *value = row[0] != NULL ? atoll(row[0]) : 0;
    }
    mysql_free_result(res);
    return rc;
}

/* The name as an SQL string literal: quoted, with quote, backslash and
 * NUL escaped, so that no name can end the string early. */
static void quote_name(mariadb_base *b)
{
    char *out = b->sql_name;
    const char *p;

    *out++ = '\'';
    for (p = b->name; *p != '\0'; p++) {
        if (*p == '\'' || *p == '\\')
            *out++ = '\\';
        *out++ = *p;
    }
    *out++ = '\'';
    *out = '\0';
}

/* Rejects what no call could work with, once, at dlock_new. */
static int check_config(dlock *l, const char *name, const dlock_config *cfg)
{
    if (name == NULL || name[0] == '\0')
        return mariadb_error(l, "lock name is empty: give each lock a name");
    if (strlen(name) > MARIADB_NAME_MAX)
        return mariadb_error(l, "lock name is %zu bytes: MariaDB's lock names take %d at most",
                             strlen(name), MARIADB_NAME_MAX);
    if (cfg == NULL)
        return mariadb_error(l, "config is NULL: call dlock_config_init first");
    if (cfg->lease_ms < DLOCK_MIN_LEASE_MS || cfg->lease_ms > DLOCK_MAX_LEASE_MS)
        return mariadb_error(l, "lease_ms %ld is out of range: give %ld to %ld ms",
                             cfg->lease_ms, DLOCK_MIN_LEASE_MS, DLOCK_MAX_LEASE_MS);
    if (cfg->wait_ms < 0 || cfg->retry_ms <= 0)
        return mariadb_error(l, "wait_ms must be >= 0 and retry_ms > 0");
    if (cfg->nodes != 1)
        return mariadb_error(l, "nodes is %d: this stage talks to one server; give 1",
                             cfg->nodes);
    if (cfg->provider == NULL && (cfg->host == NULL || cfg->timeout_ms <= 0))
        return mariadb_error(l, "default provider needs a host and timeout_ms > 0");
    return DLOCK_OK;
}

/* Connector/C sets itself up on the first mysql_init, which is not safe
 * from two threads at once: done once, before any handle connects. */
static void library_init(void)
{
    mysql_library_init(0, NULL, NULL);
}

void *mariadb_new(size_t size, const char *name, const dlock_config *cfg,
                  int (*init)(dlock *l))
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    dlock *l;
    mariadb_base *b;

    pthread_once(&once, library_init);
    if ((l = calloc(1, size)) == NULL)
        return NULL;
    b = base(l);
    pthread_mutex_init(&b->mu, NULL);
    if (check_config(l, name, cfg) != DLOCK_OK)
        return l;
    b->cfg = *cfg;
    b->provider = cfg->provider != NULL ? *cfg->provider
                                        : (struct dlock_provider){ connect_default, &b->cfg };
    b->cfg.provider = &b->provider;
    if ((b->name = strdup(name)) == NULL) {
        mariadb_error(l, "out of memory");
        return l;
    }
    quote_name(b);
    if (init != NULL && init(l) != DLOCK_OK) {
        free(b->name); /* refused: every call returns DLOCK_ERR */
        b->name = NULL;
    }
    return l;
}

void mariadb_free(dlock *l)
{
    mariadb_base *b = base(l);

    if (l == NULL)
        return;
    mysql_close(b->c);
    pthread_mutex_destroy(&b->mu);
    free(b->name);
    free(l);
}

int mariadb_guarded(dlock *l, int (*step)(dlock *l))
{
    int rc;

    if (base(l)->name == NULL)
        return DLOCK_ERR;
    pthread_mutex_lock(&base(l)->mu);
    rc = step(l);
    pthread_mutex_unlock(&base(l)->mu);
    return rc;
}

int mariadb_poll(dlock *l, int (*try)(dlock *l))
{
    struct timespec start = mariadb_now();
    long retry = base(l)->cfg.retry_ms;
    int rc;

    while ((rc = mariadb_guarded(l, try)) == DLOCK_BUSY) {
        long left = base(l)->cfg.wait_ms - mariadb_elapsed_ms(&start);

        if (left <= 0)
            break;
        mariadb_sleep_ms(left < retry ? left : retry);
    }
    return rc;
}

long mariadb_elapsed_ms(const struct timespec *start)
{
    struct timespec now = mariadb_now();

    return (now.tv_sec - start->tv_sec) * 1000 + (now.tv_nsec - start->tv_nsec) / 1000000;
}

void mariadb_sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

    nanosleep(&ts, NULL);
}

struct timespec mariadb_now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return t;
}

/* ---- lock.h's calls that are the same in every MariaDB stage ----------------- */

void dlock_config_init(dlock_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->lease_ms = DEFAULT_LEASE_MS;
    cfg->retry_ms = DEFAULT_RETRY_MS;
    cfg->nodes = 1;
    cfg->node_timeout_ms = 50;
    cfg->host = "127.0.0.1";
    cfg->port = DEFAULT_PORT;
    cfg->timeout_ms = DEFAULT_TIMEOUT_MS;
}

const char *dlock_errstr(const dlock *l)
{
    return ((const mariadb_base *)(const void *)l)->errstr;
}

/* Neither MariaDB stage draws fencing tokens. */
__attribute__((weak)) long long dlock_token(dlock *l)
{
    (void)l;
    return 0;
}

/* A no-op unless the simulator links its own definition. */
__attribute__((weak)) void dlock_failpoint(const char *name)
{
    (void)name;
}
