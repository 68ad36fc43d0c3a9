/* bench_mdb: the bench's MariaDB side: the server, what it counted (SHOW
 * GLOBAL STATUS), and a stage's statements replayed on one connection of
 * Connector/C. See bench.h. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <unistd.h>

#include "bench.h"
#include "history.h"
#include "password.h"
#include "util.h"

#define TABLE "dlock"        /* v12's table, as its lock.c names it */
#define ER_DUP_ENTRY_NO 1062 /* a second row under a unique key: v12's INSERT
                              * of a row that exists, an answer */
#define ROWS_PER_PAIR 2      /* a row statement's pair changes the row twice:
                              * taken (INSERT or UPDATE), given back (UPDATE) */

int sim_bench_mariadb(int stage)
{
    const sim_stage *s = sim_stage_get(stage);

    return s != NULL && strcmp(s->server, "mariadb") == 0;
}

/* ---- the server ----------------------------------------------------------------- */

static int needed(const sim_bench *b)
{
    int s;

    for (s = 1; s <= SIM_STAGES; s++) {
        if (sim_bench_wanted(b, s) && sim_bench_mariadb(s))
            return 1;
    }
    return 0;
}

/* The version as the server says it ("10.11.6"), and how it writes a
 * commit to disk: what every v12 acquisition waits for. */
static int read_setup(sim_bench *b, char *errstr, size_t len)
{
    char version[64];

    if (sim_mariadb_value(b->mdb_root, version, sizeof(version), errstr, len,
                          "SELECT VERSION()") != 0 ||
        sim_mariadb_value(b->mdb_root, b->mdb_flush, sizeof(b->mdb_flush), errstr, len,
                          "SELECT @@innodb_flush_log_at_trx_commit") != 0)
        return -1;
    version[strcspn(version, "-")] = '\0';
    snprintf(b->mdb_version, sizeof(b->mdb_version), "%.*s",
             (int)sizeof(b->mdb_version) - 1, version);
    return 0;
}

int sim_bench_mdb_start(sim_bench *b, char *errstr, size_t len)
{
    if (!needed(b))
        return 0;
    if (sim_password_ready(errstr, len) != 0 ||
        sim_mariadb_start(&b->mdb, b->cl.dir, "mariadb", 1, sim_password(), NULL, errstr,
                          len) != 0 ||
        (b->mdb_root = sim_mariadb_root(&b->mdb, SIM_BENCH_TIMEOUT_MS, errstr, len)) == NULL)
        return -1;
    return read_setup(b, errstr, len);
}

void sim_bench_mdb_stop(sim_bench *b)
{
    if (b->mdb_root != NULL)
        mysql_close(b->mdb_root);
    b->mdb_root = NULL;
    sim_mariadb_stop(&b->mdb);
}

int sim_bench_mdb_reset(sim_bench *b, char *errstr, size_t len)
{
    return sim_mariadb_query(b->mdb_root, errstr, len,
                             "DROP TABLE IF EXISTS " SIM_MARIADB_DB "." TABLE);
}

/* One counter of a SHOW GLOBAL STATUS row into c. */
static void count_row(sim_bench_mdb_count *c, const char *name, const char *value)
{
    long long v = atoll(value);

    if (strcasecmp(name, "Com_insert") == 0)
        c->insert = v;
    else if (strcasecmp(name, "Com_update") == 0)
        c->update = v;
    else if (strcasecmp(name, "Com_select") == 0)
        c->select = v;
    else if (strcasecmp(name, "Com_delete") == 0)
        c->del = v;
    else if (strcasecmp(name, "Connections") == 0)
        c->connections = v;
}

int sim_bench_mdb_counts(sim_bench *b, sim_bench_mdb_count *c, char *errstr, size_t len)
{
    MYSQL_RES *res;
    MYSQL_ROW row;

    memset(c, 0, sizeof(*c));
    if (mysql_query(b->mdb_root, "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_insert', "
                    "'Com_update', 'Com_select', 'Com_delete', 'Connections')") != 0 ||
        (res = mysql_store_result(b->mdb_root)) == NULL)
        return sim_error(errstr, len, "SHOW GLOBAL STATUS: %s", mysql_error(b->mdb_root));
    while ((row = mysql_fetch_row(res)) != NULL)
        if (mysql_num_fields(res) >= 2 && row[0] != NULL && row[1] != NULL)
            count_row(c, row[0], row[1]);
    mysql_free_result(res);
    return 0;
}

/* The statements a count holds: those a lock sends. */
static long long statements(const sim_bench_mdb_count *c)
{
    return c->insert + c->update + c->select + c->del;
}

void sim_bench_mdb_delta(const sim_bench_mdb_count *before, const sim_bench_mdb_count *after,
                         sim_bench_mdb_count *d)
{
    d->insert = after->insert - before->insert;
    d->update = after->update - before->update;
    d->select = after->select - before->select;
    d->del = after->del - before->del;
    d->connections = after->connections - before->connections;
    d->statements = statements(d);
}

/* ---- a stage's statements -------------------------------------------------------------- */

/* One statement of a pair: the name the table shows, its SQL. */
static int add_statement(sim_bench_pair *t, const char *name, const char *sql, char *errstr,
                         size_t len)
{
    sim_bench_command *c = &t->cmd[t->n];

    if ((c->argv[0] = strdup(name)) == NULL || (c->argv[1] = strdup(sql)) == NULL) {
        free(c->argv[0]);
        c->argv[0] = NULL;
        return sim_error(errstr, len, "out of memory");
    }
    c->argc = 2;
    c->len[0] = strlen(name);
    c->len[1] = strlen(sql);
    t->n++;
    return 0;
}

/* v12's owner: a random id in hex and a thread id, as long as a stage's. */
static int owner(char *out, size_t outlen, char *errstr, size_t len)
{
    unsigned char id[16];
    int i;

    if (getrandom(id, sizeof(id), 0) != (ssize_t)sizeof(id))
        return sim_error(errstr, len, "cannot read the OS random source");
    for (i = 0; i < (int)sizeof(id); i++)
        sprintf(out + 2 * i, "%02x", id[i]);
    snprintf(out + 2 * sizeof(id), outlen - 2 * sizeof(id), ":%ld", (long)gettid());
    return 0;
}

/* v12's warm pair: the row exists, given back by the pair before, so the
 * INSERT meets the key and the UPDATE takes the row; the release's UPDATE
 * gives it back. Each as its lock.c formats it. */
static int row_pair(const char *name, sim_bench_pair *t, char *errstr, size_t len)
{
    char token[64], sql[3][512];
    long us = SIM_BENCH_LEASE_MS * 1000L;

    if (owner(token, sizeof(token), errstr, len) != 0)
        return -1;
    snprintf(sql[0], sizeof(sql[0]), "INSERT INTO dlock (name, lock_until, locked_at, "
             "locked_by) VALUES (%s, NOW(3) + INTERVAL %ld MICROSECOND, NOW(3), '%s')",
             name, us, token);
    snprintf(sql[1], sizeof(sql[1]), "UPDATE dlock SET lock_until = NOW(3) + INTERVAL %ld "
             "MICROSECOND, locked_at = NOW(3), locked_by = '%s' WHERE name = %s AND "
             "lock_until <= NOW(3)", us, token, name);
    snprintf(sql[2], sizeof(sql[2]), "UPDATE dlock SET lock_until = NOW(3) WHERE name = %s "
             "AND locked_by = '%s' AND lock_until > NOW(3)", name, token);
    return add_statement(t, "INSERT", sql[0], errstr, len) != 0 ||
           add_statement(t, "UPDATE", sql[1], errstr, len) != 0 ||
           add_statement(t, "UPDATE", sql[2], errstr, len) != 0 ? -1 : 0;
}

int sim_bench_mdb_pair(int stage, const char *lock, sim_bench_pair *t, char *errstr,
                       size_t len)
{
    char name[SIM_LOCK_NAME_LEN + 2], sql[2][256];

    memset(t, 0, sizeof(*t));
    if (strpbrk(lock, "'\\") != NULL)
        return sim_error(errstr, len, "lock name %s needs SQL escapes; give a plain one", lock);
    snprintf(name, sizeof(name), "'%s'", lock);
    /* v12 keeps a row; v13, re-entrant (the server counts a session's
     * takes), the server's named lock: one SELECT each way. */
    if ((sim_stage_get(stage)->caps & SIM_CAP_REENTRANT) == 0)
        return row_pair(name, t, errstr, len);
    snprintf(sql[0], sizeof(sql[0]), "SELECT GET_LOCK(%s, 0)", name);
    snprintf(sql[1], sizeof(sql[1]), "SELECT RELEASE_LOCK(%s)", name);
    return add_statement(t, "GET_LOCK", sql[0], errstr, len) != 0 ||
           add_statement(t, "RELEASE_LOCK", sql[1], errstr, len) != 0 ? -1 : 0;
}

/* The counters a lock's statements move (Com_insert ...). */
enum { K_INSERT, K_UPDATE, K_SELECT, K_DELETE, KINDS };

/* The counter a statement moves, by its first word. */
static int kind_of(const char *sql)
{
    static const char *const first[] = { "INSERT", "UPDATE", "SELECT" };
    int k;

    for (k = K_INSERT; k < K_DELETE && strncmp(sql, first[k], strlen(first[k])) != 0; k++)
        ;
    return k;
}

int sim_bench_mdb_check(const sim_bench_pair *t, const sim_bench_mdb_count *d, int pairs,
                        sim_bench_stage *sr, char *errstr, size_t len)
{
    long long want[KINDS] = { 0, 0, 0, 0 };
    int i;

    for (i = 0; i < t->n; i++)
        want[kind_of(t->cmd[i].argv[1])]++;
    sr->requests_seen = (double)d->statements / pairs;
    if (d->connections == 1 && d->insert == want[K_INSERT] * pairs &&
        d->update == want[K_UPDATE] * pairs && d->select == want[K_SELECT] * pairs &&
        d->del == want[K_DELETE] * pairs)
        return 0;
    return sim_error(errstr, len, "%d pairs of one client: %lld connection(s), %lld INSERT, "
                     "%lld UPDATE, %lld SELECT, %lld DELETE, where the bench replays %lld, "
                     "%lld, %lld, %lld a pair: make sim/bench/bench_mdb.c send what the "
                     "stage's lock.c sends", pairs, d->connections, d->insert, d->update,
                     d->select, d->del, want[K_INSERT], want[K_UPDATE], want[K_SELECT],
                     want[K_DELETE]);
}

/* ---- the replay: one connection, one statement at a time --------------------------- */

MYSQL *sim_bench_mdb_open(sim_bench *b, char *errstr, size_t len)
{
    return sim_mariadb_connect(&b->mdb, SIM_BENCH_TIMEOUT_MS, errstr, len);
}

/* One statement; a SELECT's answer must be 1 (taken, given back), a row
 * statement's changed rows go to *rows; v12's INSERT of a row that
 * exists is an answer, as in its lock.c. */
static int statement(MYSQL *c, const sim_bench_command *cmd, long long *rows, char *errstr,
                     size_t len)
{
    MYSQL_RES *res;
    MYSQL_ROW row;
    int rc = 0;

    if (mysql_query(c, cmd->argv[1]) != 0)
        return mysql_errno(c) == ER_DUP_ENTRY_NO ? 0
               : sim_error(errstr, len, "replaying %s: %s", cmd->argv[0], mysql_error(c));
    if (mysql_field_count(c) == 0) {
        *rows += (long long)mysql_affected_rows(c);
        return 0;
    }
    if ((res = mysql_store_result(c)) == NULL)
        return sim_error(errstr, len, "replaying %s: %s", cmd->argv[0], mysql_error(c));
    row = mysql_fetch_row(res);
    if (row == NULL || row[0] == NULL || strcmp(row[0], "1") != 0)
        rc = sim_error(errstr, len, "replaying %s: the server answered %s, not 1: another "
                       "session holds the lock", cmd->argv[0],
                       row == NULL ? "no row" : row[0] == NULL ? "NULL" : row[0]);
    mysql_free_result(res);
    return rc;
}

int sim_bench_mdb_replay(MYSQL *c, const sim_bench_pair *t, int64_t *ns, char *errstr,
                         size_t len)
{
    long long rows = 0;
    int i, writes = 0;

    for (i = 0; i < t->n; i++) {
        int64_t start = sim_now_ns();
        int rc = statement(c, &t->cmd[i], &rows, errstr, len);

        ns[i] += sim_now_ns() - start;
        if (rc != 0)
            return -1;
        writes += kind_of(t->cmd[i].argv[1]) != K_SELECT;
    }
    /* A pair that changed no row would be cheaper than the stage's. */
    if (writes > 0 && rows != ROWS_PER_PAIR)
        return sim_error(errstr, len, "the replayed pair changed %lld rows, not %d (taken, "
                         "given back): another client holds the lock", rows, ROWS_PER_PAIR);
    return 0;
}
