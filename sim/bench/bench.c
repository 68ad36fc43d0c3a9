/* bench: each stage of the lock against its own round-trip limit, and
 * what waiting costs (make bench).
 *
 *   bench [--runs N] [--stage N] [--out FILE]
 *
 * (or runs=N stage=N out=FILE, as make passes them: an error quotes an
 * argument as it was typed.)
 *
 * The program of the bench (see bench.h for what it measures and how):
 * it starts one redis-server for the lock and one for the counter (the
 * resource) through cluster, like every server in this repository, for
 * the stages on ZooKeeper an ensemble of three (ensemble.h) and for those
 * on MariaDB one mariadbd (mariadbd.h, with the run's password), pins
 * them and itself to different CPUs, runs every stage runs times, then
 * prints the table and writes the data file (default: build/bench/
 * bench.jsonl next to this program). The clients are the stages' own
 * client programs (build/vN/client), spawned like the simulator's.
 *
 * Runs interleave the stages, so a slow moment of the machine spreads over
 * all of them. Exit status: 0; 1 when a counter disagrees with its
 * acquisitions (lost updates) or the bench could not run; 2 for bad
 * arguments. Ctrl-C leaves no server and no temp dir behind. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "proc.h"
#include "util.h"

#define RUNS_DEFAULT 3
#define ERR_LEN 512

/* ---- CPU pinning --------------------------------------------------------------- */

/* Pins every thread of a process (Redis starts its background threads
 * before we can pin it, and sched_setaffinity on a pid moves only the
 * main thread). */
static int pin_process(pid_t pid, const cpu_set_t *set, char *errstr, size_t len)
{
    char path[64];
    struct dirent *d;
    DIR *dir;
    int rc = 0;

    snprintf(path, sizeof(path), "/proc/%ld/task", (long)pid);
    if ((dir = opendir(path)) == NULL)
        return sim_error(errstr, len, "pin: %s: %s", path, strerror(errno));
    while ((d = readdir(dir)) != NULL && rc == 0) {
        if (d->d_name[0] == '.')
            continue;
        if (sched_setaffinity(atoi(d->d_name), sizeof(*set), set) != 0)
            rc = sim_error(errstr, len, "pin thread %s of %ld: %s", d->d_name,
                       (long)pid, strerror(errno));
    }
    closedir(dir);
    return rc;
}

/* "1" or "1-3" or "1,3": a set's CPUs in words. */
static void cpus_text(const cpu_set_t *set, char *out, size_t len)
{
    int cpu, used = 0;

    out[0] = '\0';
    for (cpu = 0; cpu < CPU_SETSIZE && used < (int)len; cpu++) {
        if (!CPU_ISSET(cpu, set))
            continue;
        if (cpu > 0 && CPU_ISSET(cpu - 1, set) && CPU_ISSET(cpu + 1, set))
            continue;
        used += snprintf(out + used, len - used, "%s%d",
                         used == 0 ? "" : CPU_ISSET(cpu - 1, set) ? "-" : ",", cpu);
    }
}

/* Servers on the first CPU we may use, we and the clients on the others:
 * on small virtual machines an unpinned client and server share a CPU in
 * some runs and not in others, and round-trip rates then differ ~2.5x.
 * Clients inherit our mask through fork and exec. One CPU: nothing to do. */
static int pin(sim_bench *b, char *errstr, size_t len)
{
    cpu_set_t all, servers, clients;
    char s[48], c[48];
    int cpu, first = -1, i;

    if (sched_getaffinity(0, sizeof(all), &all) != 0)
        return sim_error(errstr, len, "sched_getaffinity: %s", strerror(errno));
    b->ncpu = CPU_COUNT(&all);
    if (b->ncpu < 2) {
        snprintf(b->pinning, sizeof(b->pinning),
                 "not pinned: one CPU, servers and clients share it");
        return 0;
    }
    CPU_ZERO(&servers);
    clients = all;
    for (cpu = 0; cpu < CPU_SETSIZE && first < 0; cpu++)
        first = CPU_ISSET(cpu, &all) ? cpu : -1;
    CPU_SET(first, &servers);
    CPU_CLR(first, &clients);
    for (i = 0; i < b->cl.nodes; i++) {
        if (pin_process(b->cl.node[i].pid, &servers, errstr, len) != 0)
            return -1;
    }
    for (i = 0; i < b->ens.nodes; i++) {
        if (pin_process(b->ens.node[i].pid, &servers, errstr, len) != 0)
            return -1;
    }
    if (b->mdb.srv.pid > 0 && pin_process(b->mdb.srv.pid, &servers, errstr, len) != 0)
        return -1;
    if (pin_process(b->cl.resource.pid, &servers, errstr, len) != 0)
        return -1;
    if (sched_setaffinity(0, sizeof(clients), &clients) != 0)
        return sim_error(errstr, len, "pin the bench: %s", strerror(errno));
    cpus_text(&servers, s, sizeof(s));
    cpus_text(&clients, c, sizeof(c));
    snprintf(b->pinning, sizeof(b->pinning),
             "the servers pinned to CPU %s; the bench and its clients to CPU %s", s, c);
    return 0;
}

/* ---- setup and main ------------------------------------------------------------------ */

/* A whole number in [lo, hi], or a one-line error that quotes it as it
 * was typed (make's "runs=0", or "--runs 0"). */
static int number(const char *name, const char *text, int as_make, long lo,
                  long hi, int *out)
{
    char why[256];
    long n;

    if (sim_number(name, text, as_make, lo, hi, "", &n, why, sizeof(why)) != 0) {
        fprintf(stderr, "bench: %s\n", why);
        return -1;
    }
    *out = (int)n;
    return 0;
}

/* A stage the bench can measure: one on Redis, whose commands it
 * captures from the server's SLOWLOG and replays, or on ZooKeeper or
 * MariaDB, whose requests it knows (bench_zk.c, bench_mdb.c). */
static int measurable(int stage, const char *text, int as_make)
{
    const sim_stage *s = sim_stage_get(stage);

    if (s != NULL && (strcmp(s->server, "redis") == 0 || sim_bench_zookeeper(stage) ||
                      sim_bench_mariadb(stage)))
        return 0;
    fprintf(stderr, "bench: %s%s is %s: the bench measures the stages on Redis, "
            "ZooKeeper and MariaDB; leave stage= out, or give one of those\n",
            as_make ? "stage=" : "--stage ", text,
            s != NULL ? s->dir : "no stage of sim/stages.def");
    return -1;
}

/* One option: its name without dashes and its value. */
static int option(sim_bench *b, const char *name, const char *value, int as_make)
{
    if (strcmp(name, "runs") == 0)
        return number("runs", value, as_make, 1, SIM_BENCH_RUNS_MAX, &b->runs);
    if (strcmp(name, "stage") == 0)
        return number("stage", value, as_make, 1, SIM_STAGES, &b->only_stage) != 0 ? -1
               : measurable(b->only_stage, value, as_make);
    if (strcmp(name, "out") == 0) {
        b->out = value;
        return 0;
    }
    fprintf(stderr, "bench: unknown option '%s%s'; usage: bench [--runs N] "
            "[--stage N] [--out FILE]\n", as_make ? "" : "--", name);
    return -1;
}

/* Every option comes as "--runs 3" or, from make, as "runs=3". */
static int parse(sim_bench *b, int argc, char **argv)
{
    size_t used = 0;
    int i;

    b->runs = RUNS_DEFAULT;
    for (i = 0; i < argc; i++)
        used += snprintf(b->command_line + used, used < sizeof(b->command_line)
                         ? sizeof(b->command_line) - used : 0, "%s%s", i ? " " : "", argv[i]);
    for (i = 1; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        char name[32];

        if (argv[i][0] != '-' && eq != NULL && (size_t)(eq - argv[i]) < sizeof(name)) {
            snprintf(name, sizeof(name), "%.*s", (int)(eq - argv[i]), argv[i]);
            if (option(b, name, eq + 1, 1) != 0)
                return -1;
        } else if (strncmp(argv[i], "--", 2) != 0 || i + 1 >= argc) {
            fprintf(stderr, "bench: %s %s; usage: bench [--runs N] [--stage N] "
                    "[--out FILE]\n", argv[i], strncmp(argv[i], "--", 2) == 0
                    ? "needs a value" : "is not an option");
            return -1;
        } else if (option(b, argv[i] + 2, argv[i + 1], 0) != 0) {
            return -1;
        } else {
            i++;
        }
    }
    return 0;
}

/* build/ (or build/sanitize/): where this program's dir and vN/ are. */
static int find_build_dir(sim_bench *b, char *errstr, size_t len)
{
    char self[PATH_MAX], program[PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    int s;

    if (n <= 0)
        return sim_error(errstr, len, "readlink /proc/self/exe: %s", strerror(errno));
    self[n] = '\0';
    snprintf(b->build_dir, sizeof(b->build_dir), "%s", dirname(dirname(self)));
    for (s = 1; s <= SIM_STAGES; s++) {
        snprintf(program, sizeof(program), "%s/v%d/client", b->build_dir, s);
        if (sim_bench_wanted(b, s) && access(program, X_OK) != 0)
            return sim_error(errstr, len, "%s is missing: build it with `make bench`", program);
    }
    return 0;
}

/* As many Redis nodes as the measured stage on Redis that talks to the
 * most; one at least, whose version the header gives. */
static int nodes_needed(const sim_bench *b)
{
    int s, n = 1;

    for (s = 1; s <= SIM_STAGES; s++) {
        if (sim_bench_wanted(b, s) && strcmp(sim_stage_get(s)->server, "redis") == 0 &&
            sim_stage_get(s)->masters > n)
            n = sim_stage_get(s)->masters;
    }
    return n;
}

static int setup(sim_bench *b, char *errstr, size_t len)
{
    time_t now = time(NULL);
    char field[32];
    int i;

    strftime(b->date, sizeof(b->date), "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
    /* Other work on the machine slows every figure: the header says how
     * much there was. */
    if (getloadavg(b->load, 3) != 3)
        b->load[0] = -1;
    if (find_build_dir(b, errstr, len) != 0 ||
        sim_cluster_start(&b->cl, nodes_needed(b), SIM_CLUSTER_RESOURCE, errstr, len) != 0 ||
        sim_bench_zk_start(b, errstr, len) != 0 ||
        sim_bench_mdb_start(b, errstr, len) != 0 ||
        pin(b, errstr, len) != 0 ||
        (b->res = sim_bench_connect(&b->cl.resource, errstr, len)) == NULL)
        return -1;
    for (i = 0; i < b->cl.nodes; i++) {
        if ((b->adm[i] = sim_bench_connect(&b->cl.node[i], errstr, len)) == NULL)
            return -1;
    }
    if (sim_server_info_field(b->adm[0], "server", "redis_version", field,
                              sizeof(field), errstr, len) != 0)
        return -1;
    snprintf(b->redis_version, sizeof(b->redis_version), "%s", field);
    return 0;
}

static void teardown(sim_bench *b)
{
    int r, s;

    for (r = 0; r < SIM_NODES_MAX; r++) {
        redisFree(b->adm[r]);
        b->adm[r] = NULL;
    }
    redisFree(b->res);
    b->res = NULL;
    sim_bench_zk_stop(b); /* its dirs are in the cluster's, as MariaDB's */
    sim_bench_mdb_stop(b);
    sim_cluster_stop(&b->cl);
    for (r = 0; r < b->runs; r++) {
        for (s = 0; s < SIM_STAGES; s++)
            sim_bench_pair_free(&b->result[r][s].pair);
    }
}

static int run_all(sim_bench *b, char *errstr, size_t len)
{
    int r, s;

    for (r = 0; r < b->runs; r++) {
        for (s = 1; s <= SIM_STAGES; s++) {
            if (sim_bench_wanted(b, s) && sim_bench_measure(b, r, s, errstr, len) != 0) {
                sim_bench_progress(b, 0, 0, NULL);
                return -1;
            }
        }
    }
    sim_bench_progress(b, 0, 0, NULL);
    return 0;
}

static int lost_updates(const sim_bench *b)
{
    long long lost = 0;
    int s;

    for (s = 1; s <= SIM_STAGES; s++)
        lost += sim_bench_wanted(b, s) ? sim_bench_lost(b, s) : 0;
    return lost != 0;
}

int main(int argc, char **argv)
{
    static sim_bench b; /* the results of 20 runs: too big for the stack */
    char why[ERR_LEN] = "", out[PATH_MAX + 32];
    int rc;

    if (parse(&b, argc, argv) != 0)
        return 2;
    atexit(sim_cluster_cleanup);
    sim_cluster_cleanup_on_signal();
    sim_proc_cleanup_on_signal();
    rc = setup(&b, why, sizeof(why));
    if (rc == 0 && b.out == NULL) {
        snprintf(out, sizeof(out), "%s/bench/bench.jsonl", b.build_dir);
        b.out = out;
    }
    if (rc == 0)
        rc = run_all(&b, why, sizeof(why));
    if (rc == 0) {
        sim_bench_print(&b, stdout);
        rc = sim_bench_save(&b, why, sizeof(why));
        if (rc == 0)
            printf("\ndata: %s\n", b.out);
    }
    teardown(&b);
    if (rc != 0) {
        fprintf(stderr, "bench: %s\n", why);
        return 1;
    }
    if (lost_updates(&b)) {
        fprintf(stderr, "bench: a counter disagrees with its acquisitions: lost updates (see the table)\n");
        return 1;
    }
    return 0;
}
