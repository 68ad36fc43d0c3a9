/* bench_report: the table and the targets. See bench.h.
 *
 * Every figure printed is the median of the runs, except the uncontended
 * limit, rate and ratio, which come together from the run with the median
 * ratio. A "±x%" after a figure is half the spread (max - min) of all runs,
 * in % of the figure. The data file (bench_data.c) has every run, and
 * every figure's own median, min and max. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <hiredis/hiredis.h>
#include <zookeeper/zookeeper_version.h>

#include "bench.h"
#include "tally.h"
#include "util.h"

#define NAME_W 24 /* the longest stage name, v11-zookeeper-sequential */

/* ---- statistics -------------------------------------------------------------- */

/* Median, min and max of one figure over the runs, skipping NANs. */
int sim_bench_spread(const sim_bench *b, int stage, int f, double *med, double *lo,
                     double *hi)
{
    double v[SIM_BENCH_RUNS_MAX];
    int n = 0, r;

    for (r = 0; r < b->runs; r++) {
        double x = b->result[r][stage - 1].fig[f];

        if (b->result[r][stage - 1].done && !isnan(x))
            v[n++] = x;
    }
    if (n == 0)
        return -1;
    *med = sim_tally_median(v, (size_t)n);
    *lo = v[0];
    *hi = v[n - 1];
    return 0;
}

/* ---- output: the table ---------------------------------------------------------------- */

/* 12345.6 as "12,346". */
static const char *grouped(double x, char *buf, size_t len)
{
    char digits[32];
    size_t n, i, o = 0;

    if (isnan(x))
        return snprintf(buf, len, "-"), buf;
    n = (size_t)snprintf(digits, sizeof(digits), "%.0f", x);
    for (i = 0; i < n && o + 2 < len; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
    return buf;
}

/* Milliseconds with three significant digits, or so. */
static const char *millis(double x, char *buf, size_t len)
{
    if (isnan(x))
        snprintf(buf, len, "-");
    else if (x < 10)
        snprintf(buf, len, "%.2f", x);
    else if (x < 100)
        snprintf(buf, len, "%.1f", x);
    else
        snprintf(buf, len, "%.0f", x);
    return buf;
}

/* One value formatted by kind ('g' grouped, 'm' ms, '%' share, else
 * 0.00) and, when the runs differ, half their spread in % of the value
 * ("7,012 ±3%"). */
static const char *format(const sim_bench *b, double x, double lo, double hi,
                          int kind, char *buf, size_t len)
{
    char v[24];

    if (kind == 'g')
        grouped(x, v, sizeof(v));
    else if (kind == 'm')
        millis(x, v, sizeof(v));
    else if (kind == '%')
        snprintf(v, sizeof(v), "%.1f%%", x * 100);
    else
        snprintf(v, sizeof(v), "%.2f", x);
    if (b->runs > 1 && x != 0 && hi > lo)
        snprintf(buf, len, "%s ±%d%%", v, (int)fmin((hi - lo) / 2 / fabs(x) * 100 + 0.5, 999));
    else
        snprintf(buf, len, "%s", v);
    return buf;
}

/* A figure's cell: its median over the runs, with their spread. */
static const char *cell(const sim_bench *b, int stage, int f, int kind, char *buf,
                        size_t len)
{
    double med, lo, hi;

    if (sim_bench_spread(b, stage, f, &med, &lo, &hi) != 0)
        return snprintf(buf, len, "-"), buf;
    return format(b, med, lo, hi, kind, buf, len);
}

/* The run whose uncontended ratio is the median (the lower of the two
 * middle ones when the runs are even). The limit and the stage's rate
 * are shown from that run: medians taken apart could come from two runs
 * on a machine that drifts, and then disagree with the ratio beside them. */
static int median_run(const sim_bench *b, int stage)
{
    int r, q, best = 0;

    for (r = 0; r < b->runs; r++) {
        int below = 0, above = 0;
        double x = b->result[r][stage - 1].fig[SIM_BENCH_RATIO];

        for (q = 0; q < b->runs; q++) {
            below += q != r && b->result[q][stage - 1].fig[SIM_BENCH_RATIO] < x;
            above += q != r && b->result[q][stage - 1].fig[SIM_BENCH_RATIO] > x;
        }
        if (below <= (b->runs - 1) / 2 && above <= b->runs / 2)
            best = r;
    }
    return best;
}

/* A figure of the median run, with the spread of all runs. */
static const char *run_cell(const sim_bench *b, int stage, int f, int kind,
                            char *buf, size_t len)
{
    double med, lo, hi;

    if (sim_bench_spread(b, stage, f, &med, &lo, &hi) != 0)
        return snprintf(buf, len, "-"), buf;
    return format(b, b->result[median_run(b, stage)][stage - 1].fig[f], lo, hi,
                  kind, buf, len);
}

int sim_bench_wanted(const sim_bench *b, int stage)
{
    const sim_stage *s = sim_stage_get(stage);

    /* It replays Redis commands, ZooKeeper requests or MariaDB statements:
     * the stages on those. */
    return s != NULL && (strcmp(s->server, "redis") == 0 || sim_bench_zookeeper(stage) ||
                         sim_bench_mariadb(stage)) &&
           (b->only_stage == 0 || b->only_stage == stage);
}

/* A figure's median, NAN when no run has it. */
static double med(const sim_bench *b, int stage, int f)
{
    double m, lo, hi;

    return sim_bench_spread(b, stage, f, &m, &lo, &hi) == 0 ? m : NAN;
}

double sim_bench_median(const sim_bench *b, int stage, int f)
{
    return med(b, stage, f);
}

/* A command's name in capitals: "EVALSHA". */
static const char *command_name(const sim_bench_command *c, char *buf, size_t len)
{
    size_t i;

    for (i = 0; i < c->len[0] && i + 1 < len; i++)
        buf[i] = (char)toupper((unsigned char)c->argv[0][i]);
    buf[i] = '\0';
    return buf;
}

/* A pair's round trips in words: "2  SET EVALSHA"; "2x5 SET EVALSHA" for
 * a stage that sends each to five nodes at once (not an ensemble's: a
 * ZooKeeper client sends each request to one server). */
static const char *pair_text(const sim_bench_pair *p, int stage, char *buf, size_t len)
{
    int nodes = sim_bench_zookeeper(stage) ? 1 : sim_stage_get(stage)->masters;
    char name[32];
    size_t used;
    int c;

    if (nodes > 1)
        used = (size_t)snprintf(buf, len, "%dx%d", p->n, nodes);
    else
        used = (size_t)snprintf(buf, len, "%d ", p->n);
    for (c = 0; c < p->n && used < len; c++)
        used += snprintf(buf + used, len - used, " %s",
                         command_name(&p->cmd[c], name, sizeof(name)));
    return buf;
}

/* The other servers' versions: the ensemble's and MariaDB's. */
static void print_versions(const sim_bench *b, FILE *f)
{
    if (b->ens.nodes > 0)
        fprintf(f, "          ZooKeeper %s, an ensemble of %d (tickTime %d ms), C client %s\n",
                b->zk_version, b->ens.nodes, SIM_ENSEMBLE_TICK_MS, ZOO_VERSION);
    if (b->mdb.srv.pid > 0)
        fprintf(f, "          MariaDB %s (InnoDB, binary log on), Connector/C %s\n",
                b->mdb_version, mysql_get_client_info());
}

/* The ensemble's line: what it does not wait for. */
static void print_zookeeper(const sim_bench *b, FILE *f)
{
    if (b->ens.nodes == 0)
        return;
    fprintf(f, "disk      ZooKeeper runs with forceSync=no: a write is acknowledged once a majority\n"
               "          of the servers wrote it to their log file, in memory, not fsynced to disk\n"
               "          (with an fsync each write would wait for a majority's disk); the Redis\n"
               "          servers persist nothing\n");
}

/* The MariaDB server's line: what a commit waits for. */
static void print_mariadb(const sim_bench *b, FILE *f)
{
    if (b->mdb.srv.pid <= 0)
        return;
    fprintf(f, "disk      MariaDB: innodb_flush_log_at_trx_commit=%s%s\n", b->mdb_flush,
            strcmp(b->mdb_flush, "1") == 0 ? " (its default): each commit, each statement\n"
            "          that changes a row here, waits until its log is flushed to disk" : "");
}

static void print_header(const sim_bench *b, FILE *f)
{
    fprintf(f, "lockstep bench: every stage against its own round-trip limit\n");
    fprintf(f, "command   %s\n", b->command_line);
    fprintf(f, "machine   %d CPU%s; %s\n", b->ncpu, b->ncpu == 1 ? "" : "s", b->pinning);
    fprintf(f, "software  redis-server %s, hiredis %d.%d.%d; lock and resource servers on TCP loopback\n",
            b->redis_version, HIREDIS_MAJOR, HIREDIS_MINOR, HIREDIS_PATCH);
    print_versions(b, f);
    print_zookeeper(b, f);
    print_mariadb(b, f);
    fprintf(f, "date      %s\n", b->date);
    if (b->load[0] >= 0)
        fprintf(f, "load      %.2f %.2f %.2f (1, 5, 15 min) at the start: other work on the machine\n"
                   "          slows every figure below, which are this machine's, not the stages' own\n",
                b->load[0], b->load[1], b->load[2]);
#if defined(__SANITIZE_ADDRESS__)
    fprintf(f, "build     SANITIZE=1 (ASan, UBSan): these figures measure the sanitizers, not the stages\n");
#endif
    fprintf(f, "config    lease %d ms; retry_ms %d (v1-v5 poll: the pause between tries); "
               "contended wait budget %d ms\n",
            SIM_BENCH_LEASE_MS, SIM_BENCH_RETRY_MS, SIM_BENCH_WAIT_MS);
    fprintf(f, "figures   median of %d run%s; \"±x%%\": half the spread (max - min) of the runs, "
               "in %% of the median\n\n", b->runs, b->runs == 1 ? "" : "s");
}

static void print_uncontended(const sim_bench *b, FILE *f)
{
    char c1[48], c2[48], c3[48], trips[64];
    int s;

    fprintf(f, "Uncontended, one client, one key. limit: the stage's own commands (from SLOWLOG)\n"
               "replayed raw on one hiredis connection, no client logic; \"x5\": each sent to five\n"
               "nodes on a connection each, all written before any reply is read. stage: as many\n"
               "pairs through dlock_acquire + dlock_release, alternating with the replay in %d ms\n"
               "slices. Each: the median of its slices; ratio: the median of stage / limit slice\n"
               "by slice. All three from the run with the median ratio (the spread: all runs).\n"
               "cmds: what the server ran for a pair, scripts' included (one node's).\n",
            SIM_BENCH_SLICE_MS);
    if (b->ens.nodes > 0)
        fprintf(f, "ZooKeeper: the requests its lock.c sends (as many as the servers received from\n"
                   "the stage's client: mntr), replayed synchronously on one session of the C\n"
                   "client; the replay and the stage's client both talk to one follower; %d ms\n"
                   "slices. No cmds: a request is one operation.\n", SIM_BENCH_ZK_SLICE_MS);
    if (b->mdb.srv.pid > 0)
        fprintf(f, "MariaDB: the statements its lock.c sends (as many of each kind as the server\n"
                   "counted from the stage's client: SHOW GLOBAL STATUS), replayed on one\n"
                   "connection of Connector/C, each answer checked (the lock taken and given\n"
                   "back); %d ms slices. No cmds: a statement is one request.\n",
                SIM_BENCH_MDB_SLICE_MS);
    fprintf(f, "%-*s %-29s %4s  %-14s %-14s %s\n", NAME_W, "stage", "round trips per pair",
            "cmds", "limit pairs/s", "stage pairs/s", "ratio");
    for (s = 1; s <= SIM_STAGES; s++) {
        const sim_bench_pair *p = &b->result[0][s - 1].pair;
        char cmds[16];

        if (!sim_bench_wanted(b, s))
            continue;
        snprintf(cmds, sizeof(cmds), sim_bench_zookeeper(s) || sim_bench_mariadb(s) ? "-" : "%d",
                 p->n + p->internal);
        fprintf(f, "%-*s %-29s %4s  %-14s %-14s %s\n", NAME_W, sim_stage_name(s),
                pair_text(p, s, trips, sizeof(trips)), cmds,
                run_cell(b, s, SIM_BENCH_LIMIT, 'g', c1, sizeof(c1)),
                run_cell(b, s, SIM_BENCH_SOLO, 'g', c2, sizeof(c2)),
                run_cell(b, s, SIM_BENCH_RATIO, 'f', c3, sizeof(c3)));
    }
}

/* The median over the runs of one command's single-connection rate. */
static double command_rate(const sim_bench *b, int stage, int c)
{
    double v[SIM_BENCH_RUNS_MAX];
    int n = 0, r;

    for (r = 0; r < b->runs; r++) {
        if (b->result[r][stage - 1].done && !isnan(b->result[r][stage - 1].cmd_rate[c]))
            v[n++] = b->result[r][stage - 1].cmd_rate[c];
    }
    return sim_tally_median(v, (size_t)n);
}

static void print_commands(const sim_bench *b, FILE *f)
{
    char num[32], name[32];
    int s, c;

    fprintf(f, "\nEach command of the replay on its own (ops/s per second of its own time):\n");
    for (s = 1; s <= SIM_STAGES; s++) {
        const sim_bench_pair *p = &b->result[0][s - 1].pair;

        if (!sim_bench_wanted(b, s))
            continue;
        fprintf(f, "  %-*s", NAME_W, sim_stage_name(s));
        for (c = 0; c < p->n; c++)
            fprintf(f, "  %s %s", command_name(&p->cmd[c], name, sizeof(name)),
                    grouped(command_rate(b, s, c), num, sizeof(num)));
        fprintf(f, "\n");
    }
}

long long sim_bench_lost(const sim_bench *b, int stage)
{
    long long lost = 0;
    int r;

    for (r = 0; r < b->runs; r++) {
        if (b->result[r][stage - 1].done)
            lost += b->result[r][stage - 1].lost;
    }
    return lost;
}

/* A column of a contended table: its title, its width (the last has
 * none: it is not padded), the figure it shows and how (cell's kind);
 * LOST: the lost updates, a count. */
typedef struct column {
    const char *title;
    int width;
    int figure;
    int kind;
} column;

#define LOST -1
#define COLUMNS 6

/* The titles, then a line per stage wanted: each column's median, with
 * its spread across the runs. */
static void print_columns(const sim_bench *b, FILE *f, const column *cols, size_t n)
{
    char text[COLUMNS][48];
    size_t i;
    int s;

    fprintf(f, "%-*s", NAME_W, "stage");
    for (i = 0; i < n; i++)
        fprintf(f, i + 1 < n ? " %-*s" : " %*s", i + 1 < n ? cols[i].width : 0, cols[i].title);
    fputc('\n', f);
    for (s = 1; s <= SIM_STAGES; s++) {
        if (!sim_bench_wanted(b, s))
            continue;
        fprintf(f, "%-*s", NAME_W, sim_stage_name(s));
        for (i = 0; i < n && i < COLUMNS; i++) {
            if (cols[i].figure == LOST)
                snprintf(text[i], sizeof(text[i]), "%lld", sim_bench_lost(b, s));
            else
                cell(b, s, cols[i].figure, cols[i].kind, text[i], sizeof(text[i]));
            fprintf(f, i + 1 < n ? " %-*s" : " %*s", i + 1 < n ? cols[i].width : 0, text[i]);
        }
        fputc('\n', f);
    }
}

/* The words above each contended table: what its columns count. */
static void cost_words(const sim_bench *b, FILE *f)
{
    fprintf(f, "\nContended, %d client processes, one key, %d ms. Each: lock, GET + SET of a\n"
               "counter on the resource server, unlock. round trips: requests the clients sent to\n"
               "the lock server (SLOWLOG, top-level); commands: what it ran (INFO commandstats,\n"
               "scripts' included), both on one node for a stage of several; woken: unlock\n"
               "messages delivered per message published (its channel's subscribers then);\n"
               "lost updates: acquisitions the counter does not show.\n",
            SIM_BENCH_CONTENDERS, SIM_BENCH_WINDOW_MS);
    if (b->ens.nodes > 0)
        fprintf(f, "ZooKeeper, on the whole ensemble: round trips: the packets its servers received\n"
                   "(mntr's zk_packets_received, all servers), less our mntr words and each\n"
                   "session's open and close: the requests, and any ping (a session pings after\n"
                   "%d ms idle, a third of its timeout: a wait max below that means none);\n"
                   "woken: watch notifications the servers sent (zk_sum_node_*_watch_count) per\n"
                   "release.\n", SIM_BENCH_LEASE_MS / 3);
    if (b->mdb.srv.pid > 0)
        fprintf(f, "MariaDB: round trips: the INSERTs, UPDATEs, SELECTs and DELETEs the server\n"
                   "counted (SHOW GLOBAL STATUS's Com_*; v12's CREATE TABLE at each connection\n"
                   "left out); a waiter polls: no one is woken.\n");
}

static void wait_words(const sim_bench *b, FILE *f)
{
    (void)b;
    fprintf(f, "\nWaiting, same windows, in ms. handoff: one client's release call to another\n"
               "client's acquire returning; wait: one acquire call, from call to return.\n");
}

static void fairness_words(const sim_bench *b, FILE *f)
{
    (void)b;
    fprintf(f, "\nFairness, same windows. re-won: the lock changes that went back to the client\n"
               "that had just released it; least/most: acquisitions of the least and the most\n"
               "served of the %d clients in the window.\n", SIM_BENCH_CONTENDERS);
}

/* A contended table: its words, then its columns; a title of NULL ends
 * them before COLUMNS. */
typedef struct contended_table {
    void (*words)(const sim_bench *b, FILE *f);
    column cols[COLUMNS];
} contended_table;

static const contended_table contended[] = {
    { cost_words,
      { { "acquisitions/s", 15, SIM_BENCH_ACQ_RATE, 'g' },
        { "round trips/acq", 16, SIM_BENCH_RTT_ACQ, 'f' },
        { "commands/acq", 15, SIM_BENCH_CMDS_ACQ, 'f' },
        { "woken", 10, SIM_BENCH_DELIVERED, 'f' },
        { "lost updates", .figure = LOST } } },
    { wait_words,
      { { "handoff p50", 11, SIM_BENCH_HANDOFF_P50, 'm' },
        { "handoff p99", 11, SIM_BENCH_HANDOFF_P99, 'm' },
        { "wait p50", 11, SIM_BENCH_WAIT_P50, 'm' },
        { "wait p99", 11, SIM_BENCH_WAIT_P99, 'm' },
        { "wait max", .figure = SIM_BENCH_WAIT_MAX, .kind = 'm' } } },
    { fairness_words,
      { { "re-won", 12, SIM_BENCH_REWON, '%' },
        { "least", 12, SIM_BENCH_LEAST, 'g' },
        { "most", .figure = SIM_BENCH_MOST, .kind = 'g' } } },
};

/* Every contended table, in turn: its words, its titles, its lines. */
static void print_contended(const sim_bench *b, FILE *f)
{
    size_t t, n;

    for (t = 0; t < sizeof(contended) / sizeof(contended[0]); t++) {
        for (n = 0; n < COLUMNS && contended[t].cols[n].title != NULL; n++)
            ;
        contended[t].words(b, f);
        print_columns(b, f, contended[t].cols, n);
    }
}

/* ---- output: the targets ------------------------------------------------------------ */

#define V6 6 /* the stage that waits on pub/sub */

/* Every measured stage's ratio against 0.9. */
static void target_ratio(const sim_bench *b, FILE *f)
{
    int s, missed = 0;

    fprintf(f, "  uncontended ratio >= 0.90       ");
    for (s = 1; s <= SIM_STAGES; s++) {
        double r = med(b, s, SIM_BENCH_RATIO);

        if (sim_bench_wanted(b, s) && r < 0.9) {
            fprintf(f, "%sMISSED by %s (%.3f)", missed ? "; " : "", sim_stage_name(s), r);
            missed++;
        }
    }
    fprintf(f, "%s\n", missed ? "" : "met by every stage measured");
}

static void target_lost(const sim_bench *b, FILE *f)
{
    int s, missed = 0;

    fprintf(f, "  zero lost updates               ");
    for (s = 1; s <= SIM_STAGES; s++) {
        if (sim_bench_wanted(b, s) && sim_bench_lost(b, s) != 0) {
            fprintf(f, "%sMISSED by %s (%lld)", missed ? "; " : "",
                    sim_stage_name(s), sim_bench_lost(b, s));
            missed++;
        }
    }
    fprintf(f, "%s\n", missed ? "" : "met by every stage measured");
}

/* v6's wait p99 against the best polling stage's, and what explains it. */
static void target_wait(const sim_bench *b, FILE *f)
{
    double best = NAN, p99 = med(b, V6, SIM_BENCH_WAIT_P99);
    int s, at = 0;

    for (s = 1; s < V6; s++) {
        double w = med(b, s, SIM_BENCH_WAIT_P99);

        if (sim_bench_wanted(b, s) && !isnan(w) && (isnan(best) || w < best)) {
            best = w;
            at = s;
        }
    }
    if (isnan(best) || isnan(p99))
        return;
    fprintf(f, "  v6 wait p99 <= 1/3 of the best polling stage's (%s, %.1f ms): %s (%.1f ms)\n",
            sim_stage_name(at), best, p99 * 3 <= best ? "met" : "MISSED", p99);
    fprintf(f, "      v6: the releaser re-won %.1f%% of the lock changes; %.1f commands and %.1f\n"
               "      round trips per acquisition (every waiter retries on each unlock message)\n",
            med(b, V6, SIM_BENCH_REWON) * 100, med(b, V6, SIM_BENCH_CMDS_ACQ),
            med(b, V6, SIM_BENCH_RTT_ACQ));
}

static void print_targets(const sim_bench *b, FILE *f)
{
    double p50 = med(b, V6, SIM_BENCH_HANDOFF_P50);

    fprintf(f, "\nTargets, checked on the medians above (a slower or busier machine can miss\n"
               "one that another meets: the last two depend on the machine most):\n");
    target_ratio(b, f);
    target_lost(b, f);
    if (sim_bench_wanted(b, V6) && !isnan(p50))
        fprintf(f, "  v6 handoff p50 < 1 ms           %s (%.2f ms)\n",
                p50 < 1 ? "met" : "MISSED", p50);
    if (sim_bench_wanted(b, V6))
        target_wait(b, f);
    sim_bench_queue_targets(b, f);
}

void sim_bench_print(const sim_bench *b, FILE *f)
{
    print_header(b, f);
    print_uncontended(b, f);
    print_commands(b, f);
    print_contended(b, f);
    print_targets(b, f);
}

void sim_bench_progress(const sim_bench *b, int run, int stage, const char *what)
{
    if (!isatty(STDERR_FILENO))
        return;
    if (what == NULL)
        fprintf(stderr, "\r%*s\r", 70, "");
    else
        fprintf(stderr, "\r[run %d/%d] %-*s %-12s", run + 1, b->runs, NAME_W,
                sim_stage_name(stage), what);
    fflush(stderr);
}
