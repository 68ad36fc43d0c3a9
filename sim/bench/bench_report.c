/* bench_report: the table, the targets and the data file. See bench.h.
 *
 * Every figure printed is the median of the runs, except the uncontended
 * limit, rate and ratio, which come together from the run with the median
 * ratio. A "±x%" after a figure is half the spread (max - min) of all runs,
 * in % of the figure. The data file has every run, and every figure's own
 * median, min and max. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <hiredis/hiredis.h>

#include "bench.h"
#include "tally.h"
#include "util.h"

/* The figures' names in the data file. */
static const char *const figure_key[SIM_BENCH_FIGURES] = {
    "limit_pairs_per_s", "uncontended_pairs_per_s", "ratio",
    "acquisitions_per_s", "round_trips_per_acquisition", "commands_per_acquisition",
    "handoff_p50_ms", "handoff_p99_ms", "wait_p50_ms", "wait_p99_ms", "wait_max_ms",
    "releaser_rewon_share", "least_served", "most_served",
};

/* ---- statistics -------------------------------------------------------------- */

/* Median, min and max of one figure over the runs, skipping NANs. */
static int spread(const sim_bench *b, int stage, int f, double *med, double *lo,
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

    if (spread(b, stage, f, &med, &lo, &hi) != 0)
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

    if (spread(b, stage, f, &med, &lo, &hi) != 0)
        return snprintf(buf, len, "-"), buf;
    return format(b, b->result[median_run(b, stage)][stage - 1].fig[f], lo, hi,
                  kind, buf, len);
}

int sim_bench_wanted(const sim_bench *b, int stage)
{
    const sim_stage *s = sim_stage_get(stage);

    /* It captures and replays Redis commands: the stages on Redis. */
    return s != NULL && strcmp(s->server, "redis") == 0 &&
           (b->only_stage == 0 || b->only_stage == stage);
}

/* A figure's median, NAN when no run has it. */
static double med(const sim_bench *b, int stage, int f)
{
    double m, lo, hi;

    return spread(b, stage, f, &m, &lo, &hi) == 0 ? m : NAN;
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
 * a stage that sends each to five nodes at once. */
static const char *pair_text(const sim_bench_pair *p, int nodes, char *buf, size_t len)
{
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

static void print_header(const sim_bench *b, FILE *f)
{
    fprintf(f, "lockstep bench: every stage against the Redis round-trip limit\n");
    fprintf(f, "command   %s\n", b->command_line);
    fprintf(f, "machine   %d CPU%s; %s\n", b->ncpu, b->ncpu == 1 ? "" : "s", b->pinning);
    fprintf(f, "software  redis-server %s, hiredis %d.%d.%d; lock and resource servers on TCP loopback\n",
            b->redis_version, HIREDIS_MAJOR, HIREDIS_MINOR, HIREDIS_PATCH);
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
    fprintf(f, "%-22s %-24s %4s  %-14s %-14s %s\n", "stage", "round trips per pair",
            "cmds", "limit pairs/s", "stage pairs/s", "ratio");
    for (s = 1; s <= SIM_STAGES; s++) {
        const sim_bench_pair *p = &b->result[0][s - 1].pair;

        if (!sim_bench_wanted(b, s))
            continue;
        fprintf(f, "%-22s %-24s %4d  %-14s %-14s %s\n", sim_stage_name(s),
                pair_text(p, sim_stage_get(s)->masters, trips, sizeof(trips)),
                p->n + p->internal,
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
        fprintf(f, "  %-22s", sim_stage_name(s));
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

static void print_contended_cost(const sim_bench *b, FILE *f)
{
    char c1[48], c2[48], c3[48], lost[32];
    int s;

    fprintf(f, "\nContended, %d client processes, one key, %d ms. Each: lock, GET + SET of a\n"
               "counter on the resource server, unlock. round trips: requests the clients sent to\n"
               "the lock server (SLOWLOG, top-level); commands: what it ran (INFO commandstats,\n"
               "scripts' included), both on one node for a stage of several; lost updates:\n"
               "acquisitions the counter does not show.\n",
            SIM_BENCH_CONTENDERS, SIM_BENCH_WINDOW_MS);
    fprintf(f, "%-22s %-15s %-16s %-15s %s\n", "stage", "acquisitions/s",
            "round trips/acq", "commands/acq", "lost updates");
    for (s = 1; s <= SIM_STAGES; s++) {
        if (!sim_bench_wanted(b, s))
            continue;
        snprintf(lost, sizeof(lost), "%lld", sim_bench_lost(b, s));
        fprintf(f, "%-22s %-15s %-16s %-15s %s\n", sim_stage_name(s),
                cell(b, s, SIM_BENCH_ACQ_RATE, 'g', c1, sizeof(c1)),
                cell(b, s, SIM_BENCH_RTT_ACQ, 'f', c2, sizeof(c2)),
                cell(b, s, SIM_BENCH_CMDS_ACQ, 'f', c3, sizeof(c3)), lost);
    }
}

static void print_contended_wait(const sim_bench *b, FILE *f)
{
    char c[5][48];
    int s;

    fprintf(f, "\nWaiting, same windows, in ms. handoff: one client's release call to another\n"
               "client's acquire returning; wait: one acquire call, from call to return.\n");
    fprintf(f, "%-22s %-11s %-11s %-11s %-11s %s\n", "stage", "handoff p50",
            "handoff p99", "wait p50", "wait p99", "wait max");
    for (s = 1; s <= SIM_STAGES; s++) {
        if (!sim_bench_wanted(b, s))
            continue;
        fprintf(f, "%-22s %-11s %-11s %-11s %-11s %s\n", sim_stage_name(s),
                cell(b, s, SIM_BENCH_HANDOFF_P50, 'm', c[0], 48),
                cell(b, s, SIM_BENCH_HANDOFF_P99, 'm', c[1], 48),
                cell(b, s, SIM_BENCH_WAIT_P50, 'm', c[2], 48),
                cell(b, s, SIM_BENCH_WAIT_P99, 'm', c[3], 48),
                cell(b, s, SIM_BENCH_WAIT_MAX, 'm', c[4], 48));
    }
}

static void print_fairness(const sim_bench *b, FILE *f)
{
    char c[3][48];
    int s;

    fprintf(f, "\nFairness, same windows. re-won: the lock changes that went back to the client\n"
               "that had just released it; least/most: acquisitions of the least and the most\n"
               "served of the %d clients in the window.\n", SIM_BENCH_CONTENDERS);
    fprintf(f, "%-22s %-12s %-12s %s\n", "stage", "re-won", "least", "most");
    for (s = 1; s <= SIM_STAGES; s++) {
        if (!sim_bench_wanted(b, s))
            continue;
        fprintf(f, "%-22s %-12s %-12s %s\n", sim_stage_name(s),
                cell(b, s, SIM_BENCH_REWON, '%', c[0], 48),
                cell(b, s, SIM_BENCH_LEAST, 'g', c[1], 48),
                cell(b, s, SIM_BENCH_MOST, 'g', c[2], 48));
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
}

void sim_bench_print(const sim_bench *b, FILE *f)
{
    print_header(b, f);
    print_uncontended(b, f);
    print_commands(b, f);
    print_contended_cost(b, f);
    print_contended_wait(b, f);
    print_fairness(b, f);
    print_targets(b, f);
}

void sim_bench_progress(const sim_bench *b, int run, int stage, const char *what)
{
    if (!isatty(STDERR_FILENO))
        return;
    if (what == NULL)
        fprintf(stderr, "\r%*s\r", 70, "");
    else
        fprintf(stderr, "\r[run %d/%d] %-22s %-12s", run + 1, b->runs,
                sim_stage_name(stage), what);
    fflush(stderr);
}

/* ---- output: the data file -------------------------------------------------------- */

/* A JSON string: our strings are plain, but a command's argv may not be. */
static void json_string(FILE *f, const char *s, size_t n)
{
    size_t i;

    fputc('"', f);
    for (i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];

        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20 || ch >= 0x7f)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

static void json_number(FILE *f, double x)
{
    if (isnan(x))
        fprintf(f, "null");
    else
        fprintf(f, "%.6g", x);
}

static void json_header(const sim_bench *b, FILE *f)
{
    fprintf(f, "{\"kind\":\"header\",\"command\":");
    json_string(f, b->command_line, strlen(b->command_line));
    fprintf(f, ",\"cpus\":%d,\"pinning\":", b->ncpu);
    json_string(f, b->pinning, strlen(b->pinning));
    fprintf(f, ",\"redis\":\"%s\",\"hiredis\":\"%d.%d.%d\",\"date\":\"%s\",\"runs\":%d,"
               "\"lease_ms\":%d,\"retry_ms\":%d,\"wait_ms\":%d,\"contenders\":%d,"
               "\"window_ms\":%d,\"slices\":%d,\"slice_ms\":%d,\"warm_ms\":%d,"
               "\"round_trips\":\"SLOWLOG entries from a client address (top-level commands)\","
               "\"commands\":\"INFO commandstats calls, script-internal included\"}\n",
            b->redis_version, HIREDIS_MAJOR, HIREDIS_MINOR, HIREDIS_PATCH, b->date,
            b->runs, SIM_BENCH_LEASE_MS, SIM_BENCH_RETRY_MS, SIM_BENCH_WAIT_MS,
            SIM_BENCH_CONTENDERS, SIM_BENCH_WINDOW_MS, SIM_BENCH_SLICES,
            SIM_BENCH_SLICE_MS, SIM_BENCH_WARM_MS);
}

static void json_run(const sim_bench *b, int run, int s, FILE *f)
{
    const sim_bench_stage *sr = &b->result[run][s - 1];
    int c, i;

    fprintf(f, "{\"kind\":\"run\",\"run\":%d,\"stage\":\"%s\",\"pair\":[", run + 1,
            sim_stage_name(s));
    for (c = 0; c < sr->pair.n; c++) {
        fprintf(f, "%s[", c ? "," : "");
        for (i = 0; i < sr->pair.cmd[c].argc; i++) {
            fprintf(f, "%s", i ? "," : "");
            json_string(f, sr->pair.cmd[c].argv[i], sr->pair.cmd[c].len[i]);
        }
        fprintf(f, "]");
    }
    fprintf(f, "],\"round_trips_per_pair\":%d,\"commands_per_pair\":%d,\"command_per_s\":[",
            sr->pair.n, sr->pair.n + sr->pair.internal);
    for (c = 0; c < sr->pair.n; c++) {
        fprintf(f, "%s", c ? "," : "");
        json_number(f, sr->cmd_rate[c]);
    }
    fprintf(f, "]");
    for (i = 0; i < SIM_BENCH_FIGURES; i++) {
        fprintf(f, ",\"%s\":", figure_key[i]);
        json_number(f, sr->fig[i]);
    }
    fprintf(f, ",\"window_ms\":%.1f,\"acquisitions\":%lld,\"counter\":%lld,\"counter_ok\":%s,"
               "\"round_trips\":%lld,\"commands\":%lld,\"busy\":%ld,\"errors\":%ld}\n",
            sr->window_ms, sr->acquisitions, sr->counter,
            sr->acquisitions == sr->counter ? "true" : "false",
            sr->round_trips, sr->commands, sr->busy, sr->errors);
}

static void json_summary(const sim_bench *b, int s, FILE *f)
{
    double med, lo, hi;
    int i;

    fprintf(f, "{\"kind\":\"summary\",\"stage\":\"%s\"", sim_stage_name(s));
    for (i = 0; i < SIM_BENCH_FIGURES; i++) {
        fprintf(f, ",\"%s\":", figure_key[i]);
        if (spread(b, s, i, &med, &lo, &hi) != 0) {
            fprintf(f, "null");
            continue;
        }
        fprintf(f, "{\"median\":");
        json_number(f, med);
        fprintf(f, ",\"min\":");
        json_number(f, lo);
        fprintf(f, ",\"max\":");
        json_number(f, hi);
        fprintf(f, "}");
    }
    fprintf(f, "}\n");
}

/* Written whole under a temporary name, then renamed: never half a file. */
int sim_bench_save(const sim_bench *b, char *errstr, size_t len)
{
    char tmp[PATH_MAX + 8];
    FILE *f;
    int r, s, rc;

    snprintf(tmp, sizeof(tmp), "%s.tmp", b->out);
    if ((f = fopen(tmp, "w")) == NULL)
        return sim_error(errstr, len, "%s: %s", tmp, strerror(errno));
    json_header(b, f);
    for (r = 0; r < b->runs; r++) {
        for (s = 1; s <= SIM_STAGES; s++) {
            if (sim_bench_wanted(b, s))
                json_run(b, r, s, f);
        }
    }
    for (s = 1; s <= SIM_STAGES; s++) {
        if (sim_bench_wanted(b, s))
            json_summary(b, s, f);
    }
    rc = ferror(f) | fclose(f);
    if (rc != 0 || rename(tmp, b->out) != 0)
        return sim_error(errstr, len, "writing %s: %s", b->out, strerror(errno));
    return 0;
}
