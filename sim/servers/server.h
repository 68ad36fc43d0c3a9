/* server: one redis-server (or redis-sentinel) process, its whole life.
 *
 * The only place in the repository that starts a server process (Redis
 * here; a ZooKeeper node through sim_server_exec). Every server is a
 * direct child (fork + exec, never daemonized) bound to 127.0.0.1 on a free
 * port, in its own directory (its log is redis.log there), with no
 * persistence and keyspace events on:
 *
 *   --save "" --appendonly no --repl-diskless-sync no --hz 100
 *   --notify-keyspace-events KEA
 *
 * and the run's password (password.h) as requirepass and masterauth, from
 * a file of its dir; sim_server_connect sends AUTH with it.
 *
 * A server can never outlive the thread that started it: the child asks the
 * kernel for SIGKILL when its parent goes (PR_SET_PDEATHSIG), which covers a
 * parent that is itself SIGKILLed, e.g. by Check's per-test timeout. So start
 * servers from a thread that lives as long as they must (the main thread).
 *
 * Each server joins the registry of this process's children (proc.h),
 * which sim_cluster_cleanup empties at exit and on a signal. A forked
 * child inherits the registry but never acts on its parent's entries.
 *
 * Errors, hiredis-style: functions return 0 or -1, with one line of reason
 * in the caller's errstr. */
#ifndef SIM_SERVER_H
#define SIM_SERVER_H

#include <stddef.h>
#include <sys/types.h>
#include <hiredis/hiredis.h>

#include "tempdir.h"

#define SIM_START_TIMEOUT_MS 15000 /* a server that does not answer PING by then is broken
                                   * (a loaded machine, many runs at once, takes seconds) */

/* One redis-server process. Zero it (or let sim_server_start fill it)
 * before use; pid is 0 whenever no process is running. */
typedef struct sim_server {
    pid_t pid;               /* the child process; 0 when stopped or killed */
    int port;                /* its port on 127.0.0.1; kept after a kill */
    char dir[SIM_PATH_LEN];  /* its working dir: redis.log lives there */
} sim_server;

/* Starts redis-server in parent_dir/name (created; it must not exist) on a
 * free port and waits until it answers PING. extra_args is NULL or a
 * NULL-terminated list of more arguments ("--maxmemory", "1mb", NULL).
 * Returns 0, or -1 with errstr that quotes the end of the server's log. */
int sim_server_start(sim_server *s, const char *parent_dir, const char *name,
                     const char *const *extra_args, char *errstr, size_t len);

/* The same, with env (NULL-terminated "NAME=value" entries, or NULL)
 * added to the environment the server gets, each in place of ours of
 * that name: a preload library for this server alone (clockshim.c). */
int sim_server_start_env(sim_server *s, const char *parent_dir, const char *name,
                         const char *const *extra_args, const char *const *env,
                         char *errstr, size_t len);

/* The two halves of sim_server_start, for a server of another kind (a
 * sentinel, which needs its config file in its dir first):
 * sim_server_make_dir zeroes s and creates parent_dir/name;
 * sim_server_launch starts what (the name for messages: "redis-sentinel")
 * with args (NULL-terminated, before the port, bind and log options that
 * every server gets) in that dir, on a free port, and waits for PING. */
int sim_server_make_dir(sim_server *s, const char *parent_dir, const char *name,
                        char *errstr, size_t len);
int sim_server_launch(sim_server *s, const char *what, const char *const *args,
                      char *errstr, size_t len);

/* For a server that is no redis-server (a ZooKeeper node): starts program,
 * found in $PATH, with args (NULL-terminated) in s's dir (made by
 * sim_server_make_dir), with env added to its environment as for
 * sim_server_start_env, its stdout and stderr into log_name there, as a
 * child that dies with us and joins the registry, like every server.
 * It does not wait: whether the program serves is the caller's to ask.
 * s->port stays as the caller set it. */
int sim_server_exec(sim_server *s, const char *program, const char *const *args,
                    const char *const *env, const char *log_name, char *errstr, size_t len);

/* The last lines of log_name in s's dir, joined with " | ", for an error
 * message; "" when there is none. */
void sim_server_log_tail(const sim_server *s, const char *log_name, char *out,
                         size_t outlen);

/* The first of n consecutive ports that are free on 127.0.0.1 now (a
 * server that wants node i at port + i), or -1 with errstr: at random
 * below the kernel's range for outgoing connections, whose local ends
 * would otherwise take them while a server starts. Another server may
 * take one before this one binds it: the caller retries then. */
int sim_server_free_ports(int n, char *errstr, size_t len);

/* SIGKILL and reap: the crash of a failover. Keeps port and dir, so the
 * log can still be read. Idempotent. */
void sim_server_kill(sim_server *s);

/* Kills and reaps the server (nothing is persisted, so there is nothing to
 * shut down gently) and removes its dir. Idempotent. */
void sim_server_stop(sim_server *s);

/* A new connection to the server, with timeout_ms on connect and on every
 * command, authenticated with the run's password. NULL with errstr when
 * it cannot connect or AUTH is refused. */
redisContext *sim_server_connect(const sim_server *s, long timeout_ms,
                                 char *errstr, size_t len);

/* Reads one field of INFO <section> ("replication", "master_link_status")
 * into out. Returns 0, or -1 with errstr (no such field, I/O error). */
int sim_server_info_field(redisContext *c, const char *section,
                          const char *field, char *out, size_t outlen,
                          char *errstr, size_t len);

#endif
