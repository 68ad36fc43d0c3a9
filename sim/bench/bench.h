/* bench: each stage of the lock against its own round-trip limit, and
 * what waiting costs (make bench).
 *
 * Files of one role: bench.c is the program (arguments, servers, CPU
 * pinning, the runs), bench_measure.c measures one stage in one run,
 * bench_replay.c replays its commands raw (bench_zk.c and bench_mdb.c
 * a ZooKeeper and a MariaDB stage's, and their servers),
 * bench_server.c reads what the lock server counted, bench_report.c
 * prints the table and the targets (bench_queue.c a fair queue's),
 * bench_data.c writes the data file. The contended history is read by
 * the tally (tally.h).
 *
 * For each run and each stage, in this order:
 *
 *   capture      one warm lock+unlock pair of the stage as the server saw
 *                it. With slowlog-log-slower-than 0 the SLOWLOG keeps every
 *                command with its client's address; Redis 7.0 also logs the
 *                commands a script runs, from the address "?:0". The others
 *                are what the client sent: the stage's round trips.
 *   uncontended  those top-level commands replayed raw on one hiredis
 *                connection of the same kind as the stage's (blocking, TCP
 *                loopback) with no client logic: the limit. A stage of
 *                several nodes sees the same commands on each (the capture
 *                reads node 0): each is replayed on one connection per
 *                node, written to all of them before any reply is read,
 *                as the stage sends it. Alternating
 *                with the replay, in slices, the stage's own client process
 *                does as many pairs through dlock_acquire and dlock_release:
 *                pairs per second, and the ratio to the limit.
 *   contended    8 client processes on one key for a fixed window, each:
 *                lock, GET + SET of the counter on the resource server,
 *                unlock, recorded in a history like a scenario's clients.
 *                The tally (tally.h) reads it: acquisitions/s, handoffs,
 *                waits, how often the releaser won again, the least and
 *                most served client, and the counter against the
 *                acquisitions (lost updates). From the servers: INFO
 *                commandstats before and after (commands, script-internal
 *                ones included) and the SLOWLOG again (round trips: the
 *                top-level commands), on node 0: per node for a stage of
 *                several.
 *
 * A stage on ZooKeeper (bench_zk.c) is measured the same way, on an
 * ensemble of three servers (ensemble.h: tickTime 50 ms, forceSync no),
 * with what its servers count (mntr.h) in place of Redis's logs:
 *
 *   capture      the requests of one pair are those the stage's lock.c
 *                sends (v10: create, delete; v11: create2, getChildren,
 *                delete), written down here; a new client of the stage
 *                does SIM_BENCH_ZK_PAIRS warm pairs, and the requests the
 *                servers received must be as many per pair, or the bench
 *                stops: the stage no longer sends what is replayed.
 *   uncontended  those requests replayed synchronously on one session of
 *                the C client, alternating with the stage's own client,
 *                both given the same follower as their ensemble.
 *   contended    the same 8 clients on the whole ensemble; the servers'
 *                packets before and after (ours, and each session's open
 *                and close, left out) are the requests, and the watches
 *                they triggered the waiters woken.
 *
 * A stage on MariaDB (bench_mdb.c) likewise, on one mariadbd
 * (mariadbd.h) with SHOW GLOBAL STATUS's counters:
 *
 *   capture      the statements of one warm pair, as the stage's lock.c
 *                formats them (v12: INSERT, UPDATE, UPDATE; v13: SELECT
 *                GET_LOCK, SELECT RELEASE_LOCK), written down here; a new
 *                client of the stage does SIM_BENCH_MDB_PAIRS pairs, and
 *                the server's INSERTs, UPDATEs, SELECTs and DELETEs must
 *                be as many per pair, on one connection, or the bench stops.
 *   uncontended  those statements replayed on one connection of
 *                Connector/C, alternating with the stage's own client.
 *   contended    the same 8 clients; the statements of those kinds the
 *                server counted are the round trips.
 *
 * Errors, hiredis-style: 0 or -1 with one line of reason in errstr. */
#ifndef SIM_BENCH_H
#define SIM_BENCH_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "cluster.h"
#include "ensemble.h"
#include "mariadbd.h"
#include "mntr.h"
#include "scenarios.h"

#define SIM_BENCH_RUNS_MAX 20     /* 20 runs take about 6 minutes */
#define SIM_BENCH_CONTENDERS 8    /* contended client processes (the 8) */
#define SIM_BENCH_LEASE_MS 10000  /* dlock_config_init's default lease */
#define SIM_BENCH_RETRY_MS 10     /* dlock_config_init's default: what a user gets */
#define SIM_BENCH_WAIT_MS 10000   /* a contended waiter's budget: far beyond the window */
#define SIM_BENCH_TIMEOUT_MS 2000 /* connect and command timeout, ours and the clients' */
#define SIM_BENCH_WARM_MS 100     /* the first slice, not counted: connections, caches */
#define SIM_BENCH_SLICE_MS 40     /* one slice of the replay; the stage then does as many pairs */
#define SIM_BENCH_SLICES 16       /* alternating slices per run: 0.64 s of each */
#define SIM_BENCH_WINDOW_MS 1500  /* the contended window, unless the history fills first */
#define SIM_BENCH_ZK_TIMEOUT_MS 10000 /* a ZooKeeper session opens through the leader:
                                      * seconds on a loaded machine */
#define SIM_BENCH_ZK_WARM_MS 500  /* the JVMs compile the request path in the first ones */
#define SIM_BENCH_ZK_SLICE_MS 100 /* a ZooKeeper pair takes ten times a Redis one */
#define SIM_BENCH_ZK_PAIRS 20     /* the capture's pairs: a stray ping is 1/20 of a request */
#define SIM_BENCH_MDB_SLICE_MS 100 /* a MariaDB pair commits (v12) or waits on a
                                     * server thread: several Redis pairs' time */
#define SIM_BENCH_MDB_PAIRS 20    /* the capture's pairs on MariaDB */
#define SIM_BENCH_SEQ_MAX 8       /* top-level commands in one pair (v4 sends 3) */
#define SIM_BENCH_ARGS_MAX 16     /* arguments of one of them (v6's EVALSHA has 7) */

/* Every figure the bench reports per stage and run. */
enum {
    SIM_BENCH_LIMIT,       /* pairs/s of the raw replay */
    SIM_BENCH_SOLO,        /* pairs/s through the stage, one client */
    SIM_BENCH_RATIO,       /* SOLO / LIMIT in the same slice, median of the slices */
    SIM_BENCH_ACQ_RATE,    /* contended acquisitions/s */
    SIM_BENCH_RTT_ACQ,     /* requests the clients sent, per acquisition */
    SIM_BENCH_CMDS_ACQ,    /* commands the server ran, per acquisition */
    SIM_BENCH_HANDOFF_P50, /* ms from a release call to another client's acquire */
    SIM_BENCH_HANDOFF_P99,
    SIM_BENCH_WAIT_P50,    /* ms in one acquire call */
    SIM_BENCH_WAIT_P99,
    SIM_BENCH_WAIT_MAX,
    SIM_BENCH_REWON,       /* share of lock changes that went back to the releaser */
    SIM_BENCH_LEAST,       /* acquisitions of the least served client */
    SIM_BENCH_MOST,        /* and of the most served one */
    SIM_BENCH_DELIVERED,   /* unlock messages delivered per one published; of
                            * ZooKeeper, watch notifications per release */
    SIM_BENCH_FIGURES
};

/* One command as a client sent it (argv as SLOWLOG kept it). */
typedef struct sim_bench_command {
    int argc;
    char *argv[SIM_BENCH_ARGS_MAX];
    size_t len[SIM_BENCH_ARGS_MAX];
} sim_bench_command;

/* One lock+unlock pair of a stage, as the server saw it. */
typedef struct sim_bench_pair {
    int n;                 /* top-level commands: the pair's round trips */
    int internal;          /* commands its scripts ran */
    sim_bench_command cmd[SIM_BENCH_SEQ_MAX];
} sim_bench_pair;

/* One stage in one run. NAN where a figure has no sample. */
typedef struct sim_bench_stage {
    int done;                   /* measured (a --stage run skips the others) */
    sim_bench_pair pair;
    double fig[SIM_BENCH_FIGURES];
    double cmd_rate[SIM_BENCH_SEQ_MAX]; /* each top-level command, per s of its own time */
    double window_ms;           /* the contended window it got */
    long long acquisitions;     /* contended, the tail after the window too */
    long long counter;          /* the counter's final value (it starts at 0) */
    long long lost;             /* acquisitions the counter does not show */
    long long round_trips;      /* contended top-level commands, all clients */
    long long commands;         /* contended commandstats delta */
    long long published;        /* contended unlock messages published */
    long long delivered;        /* and delivered: one per subscriber */
    long busy, errors;          /* acquire calls that did not get the lock */
    double requests_seen;       /* ZooKeeper: requests per pair, as the servers
                                 * counted the capture's pairs */
    long long sessions;         /* ZooKeeper, contended: sessions opened */
    long long watches;          /* and watch notifications sent */
} sim_bench_stage;

/* What MariaDB counted (SHOW GLOBAL STATUS): the statements of the kinds
 * a lock sends, and the connections opened. */
typedef struct sim_bench_mdb_count {
    long long insert, update, select, del;
    long long statements;       /* a delta's four kinds summed */
    long long connections;
} sim_bench_mdb_count;

/* One session of the ZooKeeper C client, for the replay. */
typedef struct sim_bench_zk {
    struct _zhandle *zh;
    char owner[64];             /* the node's data: as long as a stage's */
    char node[512];             /* the path the pair's create made */
} sim_bench_zk;

/* What the replay sends on: a connection per node (Redis), one
 * ZooKeeper session (zk.zh set), or one MariaDB connection (mdb set). */
typedef struct sim_bench_lines {
    redisContext *c[SIM_NODES_MAX];
    int n;
    sim_bench_zk zk;
    MYSQL *mdb;
} sim_bench_lines;

typedef struct sim_bench {
    int runs;
    int only_stage;             /* 0 = every stage */
    const char *out;            /* the JSON-lines file */
    char command_line[512];
    char build_dir[PATH_MAX];   /* holds vN/client */
    sim_cluster cl;             /* the lock's nodes, as many as the stage that talks
                                 * to the most, and the resource server */
    redisContext *adm[SIM_NODES_MAX]; /* each node, on a connection named for us;
                                 * SLOWLOG and commandstats are read on node 0 */
    redisContext *res;          /* the resource server, the same */
    int ncpu;                   /* CPUs we may run on */
    char pinning[256];          /* what went where, in words */
    char redis_version[32];
    sim_ensemble ens;           /* the ZooKeeper stages' servers; nodes 0 when none
                                 * is measured */
    int zk_follower;            /* the node the uncontended client and the replay use */
    long long zk_asked;         /* four-letter words we sent the ensemble (mntr.h) */
    char zk_version[32];
    sim_mariadb mdb;            /* the MariaDB stages' server; srv.pid 0 when none
                                 * is measured */
    MYSQL *mdb_root;            /* our connection to it: root, over its socket */
    char mdb_version[32];
    char mdb_flush[8];          /* @@innodb_flush_log_at_trx_commit */
    char date[40];
    double load[3];             /* the load average at the start; -1: unknown */
    int sessions;               /* names each session's files */
    sim_bench_stage result[SIM_BENCH_RUNS_MAX][SIM_STAGES];
} sim_bench;

/* ---- bench_measure.c ---- */

/* Measures one stage in one run into b->result[run][stage - 1]. */
int sim_bench_measure(sim_bench *b, int run, int stage, char *errstr, size_t len);

/* ---- bench_replay.c ---- */

/* The replay's connections: one per node of a Redis stage, one session
 * to the follower the stage's uncontended client talks to, or one
 * connection to the MariaDB server. Closed by sim_bench_lines_close. */
int sim_bench_lines_open(sim_bench *b, int stage, sim_bench_lines *ls, char *errstr,
                         size_t len);
void sim_bench_lines_close(sim_bench_lines *ls);

/* The pair replayed on ls for ms: pairs done, their time, each command's
 * time added to ns[]. */
int sim_bench_replay(sim_bench_lines *ls, const sim_bench_pair *t, long ms, long long *pairs,
                     int64_t *elapsed, int64_t *ns, char *errstr, size_t len);

/* ---- bench_server.c ---- */

/* Our connection to a server: named, so that every count leaves it out,
 * and with keyspace events off (only the simulator's observer reads them,
 * and each would cost a write a publish). NULL with errstr. */
redisContext *sim_bench_connect(const sim_server *s, char *errstr, size_t len);

/* fmt with one string argument, on one of our connections, for its side
 * effect: 0, or -1 with errstr on an error reply or a broken connection. */
int sim_bench_tell(redisContext *c, char *errstr, size_t len, const char *fmt,
                   const char *arg);

/* The SLOWLOG of the lock server logs every command from now on, from an
 * empty log (on), and is back to Redis's defaults, its memory freed (off). */
int sim_bench_slowlog_on(sim_bench *b, char *errstr, size_t len);
int sim_bench_slowlog_off(sim_bench *b, char *errstr, size_t len);

/* Top-level (round trips) and script-internal commands logged since on. */
int sim_bench_slowlog_count(sim_bench *b, long long *top, long long *internal,
                            char *errstr, size_t len);

/* The messages published since on (by scripts or clients), and how many
 * deliveries they made: each went to every connection subscribed to its
 * channel then, as the log's SUBSCRIBE and UNSUBSCRIBE commands tell. */
int sim_bench_slowlog_messages(sim_bench *b, long long *published, long long *delivered,
                               char *errstr, size_t len);

/* The log since on holds two pairs of a new client: *one gets the second
 * (free it with sim_bench_pair_free). Two warm pairs must be the same
 * commands twice; anything else (a first-use step, a retry) is not one
 * pair's cost, and an error. */
int sim_bench_slowlog_pair(sim_bench *b, sim_bench_pair *one, char *errstr, size_t len);

/* The sum of calls in INFO commandstats but ours: every command the
 * clients made the server run, those run inside scripts included. */
int sim_bench_commandstats(sim_bench *b, long long *calls, char *errstr, size_t len);

/* Frees a pair's copied arguments. */
void sim_bench_pair_free(sim_bench_pair *p);

/* ---- bench_zk.c ---- */

/* 1 for a stage on ZooKeeper. */
int sim_bench_zookeeper(int stage);

/* The ensemble, when a ZooKeeper stage is measured (in b->cl's dir);
 * stopped again by sim_bench_zk_stop, idempotent. */
int sim_bench_zk_start(sim_bench *b, char *errstr, size_t len);
void sim_bench_zk_stop(sim_bench *b);

/* Every server's counters now, summed (mntr.h). */
int sim_bench_zk_counts(sim_bench *b, sim_mntr *sum, char *errstr, size_t len);

/* The requests of one pair of the stage, on the lock called lock, as
 * its lock.c sends them (free with sim_bench_pair_free). */
int sim_bench_zk_pair(int stage, const char *lock, sim_bench_pair *t, char *errstr,
                      size_t len);

/* A session to 127.0.0.1:port, authenticated with the ensemble's
 * password as a stage's is, connected within timeout_ms; closed by
 * sim_bench_zk_close (idempotent). */
int sim_bench_zk_open(sim_bench_zk *z, int port, const char *password, long timeout_ms,
                      char *errstr, size_t len);
void sim_bench_zk_close(sim_bench_zk *z);

/* One pass over the pair's requests on z; each one's time added to ns[]. */
int sim_bench_zk_replay(sim_bench_zk *z, const sim_bench_pair *t, int64_t *ns,
                        char *errstr, size_t len);

/* ---- bench_mdb.c ---- */

/* 1 for a stage on MariaDB. */
int sim_bench_mariadb(int stage);

/* The server, when a MariaDB stage is measured (in b->cl's dir), and our
 * root connection to it; stopped again by sim_bench_mdb_stop, idempotent. */
int sim_bench_mdb_start(sim_bench *b, char *errstr, size_t len);
void sim_bench_mdb_stop(sim_bench *b);

/* No table left behind (v12's row): each stage starts on a clean server. */
int sim_bench_mdb_reset(sim_bench *b, char *errstr, size_t len);

/* The server's counters now, and what changed between two reads. */
int sim_bench_mdb_counts(sim_bench *b, sim_bench_mdb_count *c, char *errstr, size_t len);
void sim_bench_mdb_delta(const sim_bench_mdb_count *before, const sim_bench_mdb_count *after,
                         sim_bench_mdb_count *d);

/* The statements of one warm pair of the stage, on the lock called lock,
 * as its lock.c sends them: argv[0] a name, argv[1] the SQL (free with
 * sim_bench_pair_free). */
int sim_bench_mdb_pair(int stage, const char *lock, sim_bench_pair *t, char *errstr,
                       size_t len);

/* d: what pairs pairs of one new client made the server count; 0 when
 * they are t's statements pairs times on one connection, into
 * sr->requests_seen; else the bench replays what the stage no longer sends. */
int sim_bench_mdb_check(const sim_bench_pair *t, const sim_bench_mdb_count *d, int pairs,
                        sim_bench_stage *sr, char *errstr, size_t len);

/* A connection as the stages' user (mariadbd.c's), NULL with errstr;
 * and one pass over the pair's statements on it, each one's time added
 * to ns[]. */
MYSQL *sim_bench_mdb_open(sim_bench *b, char *errstr, size_t len);
int sim_bench_mdb_replay(MYSQL *c, const sim_bench_pair *t, int64_t *ns, char *errstr,
                         size_t len);

/* ---- bench_report.c ---- */

/* 1 when the run measures this stage. */
int sim_bench_wanted(const sim_bench *b, int stage);

/* Median, min and max of figure f of stage over the runs, skipping NANs;
 * 0, or -1 when no run has it. */
int sim_bench_spread(const sim_bench *b, int stage, int f, double *med, double *lo,
                     double *hi);

/* On a terminal, one line on stderr that says where the runs are; the
 * next overwrites it, and what = NULL clears it. */
void sim_bench_progress(const sim_bench *b, int run, int stage, const char *what);

/* The header, the tables and the targets, from the medians of the runs. */
void sim_bench_print(const sim_bench *b, FILE *f);

/* Acquisitions that the counter does not show (lost updates), all runs. */
long long sim_bench_lost(const sim_bench *b, int stage);

/* One figure's median over the runs; NAN without a sample. */
double sim_bench_median(const sim_bench *b, int stage, int f);

/* ---- bench_data.c ---- */

/* Every figure of every run, and each stage's median, min and max, as
 * JSON lines after a header line, to b->out. */
int sim_bench_save(const sim_bench *b, char *errstr, size_t len);

/* ---- bench_queue.c ---- */

/* The fair queue's targets (a stage that queues its waiters), against
 * v6's herd and the polling stages, on the medians. */
void sim_bench_queue_targets(const sim_bench *b, FILE *f);

#endif
