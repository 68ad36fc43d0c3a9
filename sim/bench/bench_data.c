/* bench_data: every figure of every run, and each figure's median, min
 * and max, as JSON lines for a program to read (make bench's data file).
 * See bench.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "util.h"

/* The figures' names in the data file. */
static const char *const figure_key[SIM_BENCH_FIGURES] = {
    "limit_pairs_per_s", "uncontended_pairs_per_s", "ratio",
    "acquisitions_per_s", "round_trips_per_acquisition", "commands_per_acquisition",
    "handoff_p50_ms", "handoff_p99_ms", "wait_p50_ms", "wait_p99_ms", "wait_max_ms",
    "releaser_rewon_share", "least_served", "most_served", "delivered_per_message",
};

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
               "\"commands\":\"INFO commandstats calls, script-internal included\"",
            b->redis_version, HIREDIS_MAJOR, HIREDIS_MINOR, HIREDIS_PATCH, b->date,
            b->runs, SIM_BENCH_LEASE_MS, SIM_BENCH_RETRY_MS, SIM_BENCH_WAIT_MS,
            SIM_BENCH_CONTENDERS, SIM_BENCH_WINDOW_MS, SIM_BENCH_SLICES,
            SIM_BENCH_SLICE_MS, SIM_BENCH_WARM_MS);
    if (b->ens.nodes > 0)
        fprintf(f, ",\"zookeeper\":{\"version\":\"%s\",\"servers\":%d,\"tick_ms\":%d,"
                   "\"force_sync\":false,\"uncontended_server\":\"follower\",\"slice_ms\":%d,"
                   "\"warm_ms\":%d,\"capture_pairs\":%d,\"round_trips\":\"zk_packets_received "
                   "of every server, less our mntr words and each session's open and close\","
                   "\"watch_notifications\":\"zk_sum_node_*_watch_count of every server\"}",
                b->zk_version, b->ens.nodes, SIM_ENSEMBLE_TICK_MS, SIM_BENCH_ZK_SLICE_MS,
                SIM_BENCH_ZK_WARM_MS, SIM_BENCH_ZK_PAIRS);
    if (b->mdb.srv.pid > 0)
        fprintf(f, ",\"mariadb\":{\"version\":\"%s\",\"innodb_flush_log_at_trx_commit\":%s,"
                   "\"slice_ms\":%d,\"capture_pairs\":%d,\"round_trips\":\"Com_insert, "
                   "Com_update, Com_select and Com_delete of SHOW GLOBAL STATUS\"}",
                b->mdb_version, b->mdb_flush, SIM_BENCH_MDB_SLICE_MS, SIM_BENCH_MDB_PAIRS);
    fprintf(f, "}\n");
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
    fprintf(f, "],\"round_trips_per_pair\":%d,", sr->pair.n);
    if (sim_bench_zookeeper(s) || sim_bench_mariadb(s))
        fprintf(f, "\"commands_per_pair\":null,\"requests_seen_per_pair\":%.2f,",
                sr->requests_seen);
    else
        fprintf(f, "\"commands_per_pair\":%d,", sr->pair.n + sr->pair.internal);
    fprintf(f, "\"command_per_s\":[");
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
               "\"round_trips\":%lld,", sr->window_ms, sr->acquisitions, sr->counter,
            sr->acquisitions == sr->counter ? "true" : "false", sr->round_trips);
    /* ZooKeeper counts no commands apart from its requests: its own
     * counts instead. */
    if (sim_bench_zookeeper(s))
        fprintf(f, "\"commands\":null,\"sessions\":%lld,\"watch_notifications\":%lld,",
                sr->sessions, sr->watches);
    else if (sim_bench_mariadb(s))
        fprintf(f, "\"commands\":null,\"sessions\":%lld,", sr->sessions);
    else
        fprintf(f, "\"commands\":%lld,", sr->commands);
    fprintf(f, "\"busy\":%ld,\"errors\":%ld}\n", sr->busy, sr->errors);
}

static void json_summary(const sim_bench *b, int s, FILE *f)
{
    double med, lo, hi;
    int i;

    fprintf(f, "{\"kind\":\"summary\",\"stage\":\"%s\"", sim_stage_name(s));
    for (i = 0; i < SIM_BENCH_FIGURES; i++) {
        fprintf(f, ",\"%s\":", figure_key[i]);
        if (sim_bench_spread(b, s, i, &med, &lo, &hi) != 0) {
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
