/* mariadbd: one MariaDB server process (see mariadbd.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mariadbd.h"
#include "proc.h"
#include "util.h"

#define INSTALL_TIMEOUT_MS 60000 /* mariadb-install-db: 0.8 s idle, seconds when loaded */
#define READY_TIMEOUT_MS 30000   /* mariadbd's socket answers: 0.14 s idle */
#define SETUP_TIMEOUT_MS 10000   /* root's statements while the accounts are set up */
#define START_ATTEMPTS 5         /* another process may take the port first */
#define LOG_NAME "mariadbd.log"
#define REPL_USER "repl"

static long monotonic_ms(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000L + t.tv_nsec / 1000000;
}

/* Waits for the program s runs to exit by itself; 0 when it exited 0. */
static int wait_exit(sim_server *s, const char *what, long timeout_ms, char *errstr, size_t len)
{
    long began = monotonic_ms();
    char tail[512];
    int status = 0;
    sim_proc_state st;

    while ((st = sim_proc_poll(s->pid, &status)) == SIM_PROC_RUNNING ||
           st == SIM_PROC_STOPPED) {
        if (monotonic_ms() - began > timeout_ms) {
            sim_server_kill(s);
            return sim_error(errstr, len, "%s did not finish within %ld ms", what, timeout_ms);
        }
        sim_sleep_ms(20);
    }
    s->pid = 0;
    if (st == SIM_PROC_EXITED && status == 0)
        return 0;
    sim_server_log_tail(s, "install.log", tail, sizeof(tail));
    return sim_error(errstr, len, "%s failed (%s %d): %s", what,
                     st == SIM_PROC_EXITED ? "status" : "signal", status, tail);
}

static MYSQL *connect_as(const sim_mariadb *m, int root, long timeout_ms, char *errstr,
                         size_t len)
{
    unsigned int secs = (unsigned int)((timeout_ms + 999) / 1000);
    MYSQL *c = mysql_init(NULL);

    if (c == NULL) {
        sim_error(errstr, len, "mysql_init: out of memory");
        return NULL;
    }
    mysql_options(c, MYSQL_OPT_CONNECT_TIMEOUT, &secs);
    mysql_options(c, MYSQL_OPT_READ_TIMEOUT, &secs);
    mysql_options(c, MYSQL_OPT_WRITE_TIMEOUT, &secs);
    if ((root ? mysql_real_connect(c, NULL, "root", NULL, NULL, 0, m->sock, 0)
              : mysql_real_connect(c, "127.0.0.1", SIM_MARIADB_USER, m->password,
                                   SIM_MARIADB_DB, (unsigned)m->srv.port, NULL, 0)) == NULL) {
        sim_error(errstr, len, "connect to MariaDB %s: %s",
                  root ? m->sock : "on 127.0.0.1", mysql_error(c));
        mysql_close(c);
        return NULL;
    }
    return c;
}

MYSQL *sim_mariadb_root(const sim_mariadb *m, long timeout_ms, char *errstr, size_t len)
{
    return connect_as(m, 1, timeout_ms, errstr, len);
}

MYSQL *sim_mariadb_connect(const sim_mariadb *m, long timeout_ms, char *errstr, size_t len)
{
    return connect_as(m, 0, timeout_ms, errstr, len);
}

static int vquery(MYSQL *c, char *errstr, size_t len, const char *fmt, va_list ap)
{
    char sql[1024];
    MYSQL_RES *res;

    vsnprintf(sql, sizeof(sql), fmt, ap);
    if (mysql_query(c, sql) != 0)
        return sim_error(errstr, len, "%.60s: %s", sql, mysql_error(c));
    if ((res = mysql_store_result(c)) != NULL)
        mysql_free_result(res);
    return 0;
}

int sim_mariadb_query(MYSQL *c, char *errstr, size_t len, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = vquery(c, errstr, len, fmt, ap);
    va_end(ap);
    return rc;
}

int sim_mariadb_value(MYSQL *c, char *out, size_t outlen, char *errstr, size_t len,
                      const char *fmt, ...)
{
    char sql[1024];
    MYSQL_RES *res;
    MYSQL_ROW row;
    va_list ap;
    int rc = -1;

    va_start(ap, fmt);
    vsnprintf(sql, sizeof(sql), fmt, ap);
    va_end(ap);
    if (mysql_query(c, sql) != 0)
        return sim_error(errstr, len, "%.60s: %s", sql, mysql_error(c));
    if ((res = mysql_store_result(c)) == NULL)
        return sim_error(errstr, len, "%.60s: no result: %s", sql, mysql_error(c));
    if ((row = mysql_fetch_row(res)) != NULL && mysql_num_fields(res) > 0) {
        snprintf(out, outlen, "%s", row[0] != NULL ? row[0] : "");
        rc = 0;
    } else {
        sim_error(errstr, len, "%.60s: no row", sql);
    }
    mysql_free_result(res);
    return rc;
}

/* mariadbd on m's data dir and port; returns once root's socket answers.
 * 1 when the port was taken (the caller picks another), 0, or -1.
 * Its timeouts are those it ships with, which services keep: a session
 * that sends nothing lives 8 hours (wait_timeout), a read or write that
 * stalls mid-statement ends after 30 or 60 s. They decide when a silent
 * holder's GET_LOCK ends, so they are written out here. */
static int launch(sim_mariadb *m, char *errstr, size_t len)
{
    char datadir[SIM_PATH_LEN + 16], port[32], sock[SIM_PATH_LEN + 32], files[SIM_PATH_LEN + 32];
    char sid[32], tail[512], why[256];
    const char *args[] = {
        "--no-defaults", datadir, port, sock, "--bind-address=127.0.0.1", "--user=root",
        files, sid, "--log-bin=mariadb-bin", "--skip-name-resolve",
        "--innodb-buffer-pool-size=8M", "--key-buffer-size=1M",
        "--aria-pagecache-buffer-size=1M", "--performance-schema=OFF",
        "--max-connections=200", "--wait-timeout=28800", "--net-read-timeout=30",
        "--net-write-timeout=60", NULL,
    };
    long began = monotonic_ms();
    int status = 0;
    MYSQL *c;

    snprintf(datadir, sizeof(datadir), "--datadir=%s/data", m->srv.dir);
    snprintf(port, sizeof(port), "--port=%d", m->srv.port);
    snprintf(sock, sizeof(sock), "--socket=%s", m->sock);
    snprintf(files, sizeof(files), "--secure-file-priv=%s/files", m->srv.dir);
    snprintf(sid, sizeof(sid), "--server-id=%d", m->server_id);
    if (sim_server_exec(&m->srv, "mariadbd", args, m->env, LOG_NAME, errstr, len) != 0)
        return -1;
    for (;;) {
        if ((c = sim_mariadb_root(m, 1000, why, sizeof(why))) != NULL) {
            mysql_close(c);
            return 0;
        }
        if (sim_proc_poll(m->srv.pid, &status) != SIM_PROC_RUNNING) {
            m->srv.pid = 0;
            sim_server_log_tail(&m->srv, LOG_NAME, tail, sizeof(tail));
            if (strstr(tail, "Address already in use") != NULL)
                return 1;
            return sim_error(errstr, len, "mariadbd on port %d exited before it answered: %s",
                             m->srv.port, tail);
        }
        if (monotonic_ms() - began > READY_TIMEOUT_MS) {
            sim_server_kill(&m->srv);
            return sim_error(errstr, len, "mariadbd on port %d did not answer within %d ms: %s",
                             m->srv.port, READY_TIMEOUT_MS, why);
        }
        sim_sleep_ms(20);
    }
}

/* Launches on a free port, and again on another while one is taken. */
static int launch_free(sim_mariadb *m, char *errstr, size_t len)
{
    int attempt, rc;

    for (attempt = 0; attempt < START_ATTEMPTS; attempt++) {
        if ((m->srv.port = sim_server_free_ports(1, errstr, len)) < 0)
            return -1;
        if ((rc = launch(m, errstr, len)) <= 0)
            return rc;
    }
    return sim_error(errstr, len, "mariadbd could not bind a free port in %d tries",
                     START_ATTEMPTS);
}

/* Root only over the socket; the stages' user and the replication user
 * from 127.0.0.1 with the run's password; no test database. Not written
 * to the binary log: every server sets up its own. */
static int setup_accounts(sim_mariadb *m, char *errstr, size_t len)
{
    const char *const steps[] = {
        "SET sql_log_bin=0",
        "DELETE FROM mysql.global_priv WHERE User='' OR (User='root' AND Host<>'localhost')",
        "DELETE FROM mysql.db WHERE Db LIKE 'test%%'",
        "DROP DATABASE IF EXISTS test",
        "FLUSH PRIVILEGES",
        "CREATE DATABASE " SIM_MARIADB_DB,
        "CREATE USER '" SIM_MARIADB_USER "'@'127.0.0.1' IDENTIFIED BY '%s'",
        "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE ON " SIM_MARIADB_DB ".* TO '"
        SIM_MARIADB_USER "'@'127.0.0.1'",
        "CREATE USER '" REPL_USER "'@'127.0.0.1' IDENTIFIED BY '%s'",
        "GRANT REPLICATION SLAVE ON *.* TO '" REPL_USER "'@'127.0.0.1'",
    };
    MYSQL *c = sim_mariadb_root(m, SETUP_TIMEOUT_MS, errstr, len);
    size_t i;
    int rc = 0;

    if (c == NULL)
        return -1;
    for (i = 0; rc == 0 && i < sizeof(steps) / sizeof(steps[0]); i++)
        rc = sim_mariadb_query(c, errstr, len, steps[i], m->password);
    mysql_close(c);
    return rc;
}

static int make_dirs(sim_mariadb *m, char *errstr, size_t len)
{
    char path[SIM_PATH_LEN + 16];

    snprintf(m->sock, sizeof(m->sock), "%s/root/sock", m->srv.dir);
    if (strlen(m->sock) >= 100) /* a socket's path has room for 107 bytes */
        return sim_error(errstr, len, "the socket path %s is too long: give a shorter TMPDIR",
                         m->sock);
    snprintf(path, sizeof(path), "%s/root", m->srv.dir);
    if (mkdir(path, 0700) != 0)
        return sim_error(errstr, len, "mkdir %s: %s", path, strerror(errno));
    snprintf(path, sizeof(path), "%s/files", m->srv.dir);
    if (mkdir(path, 0700) != 0)
        return sim_error(errstr, len, "mkdir %s: %s", path, strerror(errno));
    return 0;
}

#ifndef SIM_MARIADB_DATA
#define SIM_MARIADB_DATA "" /* no data dir to copy: every server installs its own */
#endif

static int copy_file(const char *from, const char *to, char *errstr, size_t len)
{
    char buf[65536];
    int in = open(from, O_RDONLY | O_CLOEXEC), out = -1, rc = 0;
    ssize_t n;

    if (in >= 0)
        out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0660);
    while (out >= 0 && rc == 0 && (n = read(in, buf, sizeof(buf))) != 0)
        if (n < 0 ? errno != EINTR : write(out, buf, (size_t)n) != n)
            rc = -1;
    if (in < 0 || out < 0 || rc != 0)
        rc = sim_error(errstr, len, "copy %s to %s: %s", from, to, strerror(errno));
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) != 0 && rc == 0)
        rc = sim_error(errstr, len, "close %s: %s", to, strerror(errno));
    return rc;
}

/* Copies the dir tree from (dirs and plain files: a data dir) to to. */
static int copy_tree(const char *from, const char *to, char *errstr, size_t len)
{
    char a[SIM_PATH_LEN + 256], b[SIM_PATH_LEN + 256];
    struct dirent *e;
    struct stat st;
    DIR *d;
    int rc = 0;

    if (mkdir(to, 0700) != 0)
        return sim_error(errstr, len, "mkdir %s: %s", to, strerror(errno));
    if ((d = opendir(from)) == NULL)
        return sim_error(errstr, len, "opendir %s: %s", from, strerror(errno));
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(a, sizeof(a), "%s/%s", from, e->d_name);
        snprintf(b, sizeof(b), "%s/%s", to, e->d_name);
        if (lstat(a, &st) != 0)
            rc = sim_error(errstr, len, "stat %s: %s", a, strerror(errno));
        else if (S_ISDIR(st.st_mode))
            rc = copy_tree(a, b, errstr, len);
        else if (S_ISREG(st.st_mode))
            rc = copy_file(a, b, errstr, len);
    }
    closedir(d);
    return rc;
}

/* The server's data dir: a copy of the one make installed, or, without
 * it, mariadb-install-db's own. */
static int install(sim_mariadb *m, char *errstr, size_t len)
{
    char datadir[SIM_PATH_LEN + 16];
    const char *args[] = { "--no-defaults", datadir, "--auth-root-authentication-method=normal",
                           "--skip-test-db", NULL };
    struct stat st;

    if (SIM_MARIADB_DATA[0] != '\0' && stat(SIM_MARIADB_DATA, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(datadir, sizeof(datadir), "%s/data", m->srv.dir);
        return copy_tree(SIM_MARIADB_DATA, datadir, errstr, len);
    }
    snprintf(datadir, sizeof(datadir), "--datadir=%s/data", m->srv.dir);
    if (sim_server_exec(&m->srv, "mariadb-install-db", args, NULL, "install.log", errstr,
                        len) != 0)
        return -1;
    return wait_exit(&m->srv, "mariadb-install-db", INSTALL_TIMEOUT_MS, errstr, len);
}

/* Debian puts mariadbd in /usr/sbin, which a user's PATH may lack: the
 * servers are found in $PATH (server.h), so it goes at its end. */
static void path_with_sbin(void)
{
    const char *path = getenv("PATH");
    char more[4096];

    if (path != NULL && strstr(path, "/usr/sbin") != NULL)
        return;
    snprintf(more, sizeof(more), "%s%s/usr/sbin", path != NULL ? path : "/usr/bin:/bin",
             ":");
    setenv("PATH", more, 1);
}

int sim_mariadb_start(sim_mariadb *m, const char *parent_dir, const char *name,
                      int server_id, const char *password, const char *const *env,
                      char *errstr, size_t len)
{
    path_with_sbin();
    if (sim_server_make_dir(&m->srv, parent_dir, name, errstr, len) != 0)
        return -1;
    m->server_id = server_id;
    m->env = env;
    snprintf(m->password, sizeof(m->password), "%s", password);
    if (make_dirs(m, errstr, len) != 0 || install(m, errstr, len) != 0 ||
        launch_free(m, errstr, len) != 0 || setup_accounts(m, errstr, len) != 0) {
        sim_mariadb_stop(m);
        return -1;
    }
    return 0;
}

int sim_mariadb_restart(sim_mariadb *m, char *errstr, size_t len)
{
    int rc;

    sim_mariadb_kill(m);
    /* Its port again, so clients find it where it was; another process
     * may have taken it meanwhile, then it moves. */
    if ((rc = launch(m, errstr, len)) == 1)
        rc = launch_free(m, errstr, len);
    return rc;
}

void sim_mariadb_kill(sim_mariadb *m)
{
    sim_server_kill(&m->srv);
}

void sim_mariadb_stop(sim_mariadb *m)
{
    sim_server_stop(&m->srv);
}

int sim_mariadb_replicate(sim_mariadb *replica, const sim_mariadb *primary, char *errstr,
                          size_t len)
{
    MYSQL *c = sim_mariadb_root(replica, SETUP_TIMEOUT_MS, errstr, len);
    char running[16] = "";
    long began = monotonic_ms();
    int rc;

    if (c == NULL)
        return -1;
    rc = sim_mariadb_query(c, errstr, len, "SET GLOBAL read_only=1") != 0 ||
         sim_mariadb_query(c, errstr, len, "CHANGE MASTER TO MASTER_HOST='127.0.0.1', "
                           "MASTER_PORT=%d, MASTER_USER='" REPL_USER "', MASTER_PASSWORD='%s', "
                           "MASTER_CONNECT_RETRY=1", primary->srv.port, primary->password) != 0 ||
         sim_mariadb_query(c, errstr, len, "START SLAVE") != 0;
    /* Slave_running is ON once its I/O thread has connected. */
    while (rc == 0 && strcmp(running, "1") != 0) {
        if (monotonic_ms() - began > READY_TIMEOUT_MS) {
            rc = sim_error(errstr, len, "the replica on port %d did not connect to its "
                           "primary within %d ms", replica->srv.port, READY_TIMEOUT_MS);
            break;
        }
        rc = sim_mariadb_value(c, running, sizeof(running), errstr, len,
                               "SELECT COUNT(*) FROM information_schema.GLOBAL_STATUS WHERE "
                               "VARIABLE_NAME='SLAVE_RUNNING' AND VARIABLE_VALUE='ON'");
        if (rc == 0 && strcmp(running, "1") != 0)
            sim_sleep_ms(20);
    }
    mysql_close(c);
    return rc;
}

int sim_mariadb_hold(sim_mariadb *replica, char *errstr, size_t len)
{
    MYSQL *c = sim_mariadb_root(replica, SETUP_TIMEOUT_MS, errstr, len);
    int rc;

    if (c == NULL)
        return -1;
    rc = sim_mariadb_query(c, errstr, len, "STOP SLAVE SQL_THREAD");
    mysql_close(c);
    return rc;
}

int sim_mariadb_promote(sim_mariadb *replica, char *errstr, size_t len)
{
    MYSQL *c = sim_mariadb_root(replica, SETUP_TIMEOUT_MS, errstr, len);
    int rc;

    if (c == NULL)
        return -1;
    rc = sim_mariadb_query(c, errstr, len, "STOP SLAVE") != 0 ||
         sim_mariadb_query(c, errstr, len, "RESET SLAVE ALL") != 0 ||
         sim_mariadb_query(c, errstr, len, "SET GLOBAL read_only=0") != 0 ? -1 : 0;
    mysql_close(c);
    return rc;
}
