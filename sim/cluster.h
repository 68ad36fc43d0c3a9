/* cluster: real redis-server processes for the simulator and the tests.
 *
 * The only place in the repository that starts Redis. Every server is a
 * direct child (fork + exec, never daemonized) bound to 127.0.0.1 on a free
 * port, in its own directory under a temp dir made with mkdtemp in $TMPDIR
 * (default /tmp), with no persistence and keyspace events on:
 *
 *   --save "" --appendonly no --repl-diskless-sync no --hz 100
 *   --notify-keyspace-events KEA
 *
 * A server can never outlive the thread that started it: the child asks the
 * kernel for SIGKILL when its parent goes (PR_SET_PDEATHSIG), which covers a
 * parent that is itself SIGKILLed, e.g. by Check's per-test timeout. So start
 * servers from a thread that lives as long as they must (the main thread).
 *
 * The module keeps a registry of the servers and temp dirs each process
 * started. sim_cluster_cleanup() empties it (for atexit), and
 * sim_cluster_cleanup_on_signal() does the same on SIGINT, SIGTERM or
 * SIGHUP, then lets the signal kill the process. A forked child inherits the
 * registry but never acts on its parent's entries.
 *
 * Errors, hiredis-style: functions return 0 or -1, with one line of reason
 * in the caller's errstr. */
#ifndef SIM_CLUSTER_H
#define SIM_CLUSTER_H

#include <stddef.h>
#include <sys/types.h>
#include <hiredis/hiredis.h>

#define SIM_PATH_LEN 256      /* a temp dir plus a server's name, with room */
#define SIM_START_TIMEOUT_MS 5000 /* a server that does not answer PING by then is broken */

/* One redis-server process. Zero it (or let sim_server_start fill it)
 * before use; pid is 0 whenever no process is running. */
typedef struct sim_server {
    pid_t pid;               /* the child process; 0 when stopped or killed */
    int port;                /* its port on 127.0.0.1; kept after a kill */
    char dir[SIM_PATH_LEN];  /* its working dir: redis.log lives there */
} sim_server;

/* Flags of sim_cluster_start: which servers besides the primary. */
#define SIM_CLUSTER_REPLICA 0x1  /* a replica of the primary, replication confirmed */
#define SIM_CLUSTER_RESOURCE 0x2 /* a separate server that faults never touch */

typedef struct sim_cluster {
    char dir[SIM_PATH_LEN];  /* the temp dir holding every server's dir; "" when stopped */
    unsigned flags;          /* what sim_cluster_start was asked for */
    sim_server primary;      /* always started */
    sim_server replica;      /* pid 0 unless SIM_CLUSTER_REPLICA */
    sim_server resource;     /* pid 0 unless SIM_CLUSTER_RESOURCE */
} sim_cluster;

/* Starts redis-server in parent_dir/name (created; it must not exist) on a
 * free port and waits until it answers PING. extra_args is NULL or a
 * NULL-terminated list of more arguments ("--maxmemory", "1mb", NULL).
 * Returns 0, or -1 with errstr that quotes the end of the server's log. */
int sim_server_start(sim_server *s, const char *parent_dir, const char *name,
                     const char *const *extra_args, char *errstr, size_t len);

/* SIGKILL and reap: the crash of a failover. Keeps port and dir, so the
 * log can still be read. Idempotent. */
void sim_server_kill(sim_server *s);

/* Kills and reaps the server (nothing is persisted, so there is nothing to
 * shut down gently) and removes its dir. Idempotent. */
void sim_server_stop(sim_server *s);

/* A new connection to the server, with timeout_ms on connect and on every
 * command. NULL with errstr when it cannot connect. */
redisContext *sim_server_connect(const sim_server *s, long timeout_ms,
                                 char *errstr, size_t len);

/* Makes $TMPDIR/lockstep.XXXXXX (mode 0700) and registers it, so cleanup
 * removes it. path gets the name; len must be at least SIM_PATH_LEN. */
int sim_tempdir_create(char *path, size_t len, char *errstr, size_t errlen);

/* Removes a temp dir and everything under it, and forgets it. */
void sim_tempdir_remove(const char *path);

/* A temp dir, the primary, and the servers named by flags, each waiting
 * for PING; a replica is attached with REPLICAOF, its link seen up, and
 * confirmed by SET on the primary + WAIT 1 before this returns. On error
 * everything started so far is stopped again. */
int sim_cluster_start(sim_cluster *cl, unsigned flags, char *errstr,
                      size_t len);

/* Kills and reaps every server and removes the temp dir. Idempotent. */
void sim_cluster_stop(sim_cluster *cl);

/* Reads one field of INFO <section> ("replication", "master_link_status")
 * into out. Returns 0, or -1 with errstr (no such field, I/O error). */
int sim_cluster_info_field(redisContext *c, const char *section,
                           const char *field, char *out, size_t outlen,
                           char *errstr, size_t len);

/* Starts a redis-sentinel (redis-server <conf> --sentinel) in
 * parent_dir/sentinel on a free port, monitoring the primary at
 * master_port under the name master with quorum 1, and waits until it
 * answers PING. Stop it like a server (sim_server_kill, sim_server_stop).
 * Returns 0, or -1 with errstr. */
int sim_sentinel_start(sim_server *s, const char *parent_dir,
                       const char *master, int master_port,
                       long down_after_ms, long failover_timeout_ms,
                       char *errstr, size_t len);

/* Kills and reaps every server this process started and removes every temp
 * dir it made. Safe to call from atexit and from a signal handler. */
void sim_cluster_cleanup(void);

/* Installs handlers for SIGINT, SIGTERM and SIGHUP that run
 * sim_cluster_cleanup() and then re-raise the signal with its default
 * action, so Ctrl-C leaves no redis-server and no temp dir behind. */
void sim_cluster_cleanup_on_signal(void);

#endif
