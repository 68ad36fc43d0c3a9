/* sim: the simulator's command line (build/sim/sim).
 *
 *   sim run --stage N --scenario S [--seed K] [--lease MS] [--save FILE] [--sentinel]
 *           [--html DIR]
 *   sim demo [--jobs N] [--seed K] [--lease MS] [--sentinel]
 *   sim report --out DIR --src DIR [--build TEXT] [--jobs N] [--seed K] [--lease MS]
 *              [--sentinel]
 *   sim check FILE
 *   sim list [--names]
 *
 * Every "--name value" may also be written "name=value", as make passes
 * its variables (sentinel=1 for --sentinel), and an error quotes it as it
 * was written: "sim: lease=50 is below the minimum of 100 ms". --seed
 * varies the baseline's hold times only; the fault scenarios are the same
 * for every seed.
 *
 * run plays one scenario against one stage and prints its title, verdict
 * and timeline (with --html, it also writes the run's page into DIR);
 * demo plays all of them against every stage and prints the fault
 * matrix, exiting non-zero when a cell differs from the answer key:
 * --jobs cells at once, each with servers of its own (the default is a
 * few per CPU, as a cell mostly sleeps); report plays and prints the
 * same matrix and writes it as a web site into --out, reading the
 * stories and the stages from the repository at --src; check judges a history
 * saved with --save again (exit status 0: clean, 1: anomalies, 2: cannot
 * judge). With --sentinel a real redis-sentinel promotes
 * the replica in the failover scenario, and the clients ask it where the
 * primary is. The clients are the stage's program build/vN/client, found
 * next to this one (build/sim/sim), so SANITIZE=1 builds find their own.
 * Ctrl-C at any point leaves no redis-server and no temp dir behind
 * (cluster's cleanup on signals; the client processes die with us). */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checker.h"
#include "cluster.h"
#include "html.h"
#include "libs_cmd.h"
#include "proc.h"
#include "report.h"
#include "runner.h"
#include "util.h"

#define MIN_LEASE_MS 100   /* below this the scenarios' margins drown in noise */
#define MAX_LEASE_MS 10000 /* above this a demo takes hours */
#define CELLS (SIM_STAGES * 16) /* the matrix: every stage, up to 16 scenarios */

typedef struct options {
    const char *command;
    int stage;                  /* 0 = not given */
    const sim_scenario *scenario;
    unsigned seed;
    long lease_ms;
    const char *save;           /* NULL = do not save */
    const char *html;           /* run: the folder of its page; NULL = none */
    const char *out;            /* report: the site's folder */
    const char *src;            /* report: the repository's root */
    const char *build;          /* report: the build's version */
    const char *file;           /* check: the saved history */
    long jobs;                  /* demo: cells played at once */
    int sentinel;               /* failover by a real sentinel */
    int help;                   /* --help, -h or help: the usage, exit 0 */
    int names;                  /* list: the scenarios' names only */
} options;

/* The usage on f; returns status, the exit code that goes with it. */
static int usage(FILE *f, int status)
{
    fprintf(f,
            "usage: sim run --stage N --scenario S [--seed K] [--lease MS] [--save FILE] [--sentinel]\n"
            "               [--html DIR]\n"
            "       sim demo [--jobs N] [--seed K] [--lease MS] [--sentinel]\n"
            "       sim report --out DIR --src DIR [--build TEXT] [--jobs N] [--seed K] [--lease MS]\n"
            "                  [--sentinel]\n"
            "       sim check FILE      exit 0: clean, 1: anomalies, 2: cannot judge\n"
            "       sim list [--names]\n");
    return status;
}

static int is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0 || strcmp(arg, "help") == 0;
}

/* ---- arguments ------------------------------------------------------------------ *
 * Each option comes as "--lease 300" or, from make, as "lease=300"; an
 * error quotes it the way it was typed. */

/* "--lease 50" or "lease=50", as typed, into buf. */
static const char *typed(char *buf, size_t len, const char *name,
                         const char *value, int as_make)
{
    snprintf(buf, len, as_make ? "%s=%s" : "--%s %s", name, value);
    return buf;
}

static int bad_scenario(const char *value, int as_make)
{
    char arg[128];
    size_t i;

    fprintf(stderr, "sim: %s is not a scenario; valid:",
            typed(arg, sizeof(arg), "scenario", value, as_make));
    for (i = 0; i < sim_scenario_count(); i++)
        fprintf(stderr, " %s", sim_scenario_at(i)->name);
    fprintf(stderr, "\n");
    return -1;
}

/* A whole number in [lo, hi], or a one-line error that quotes it. */
static int number(const char *name, const char *value, int as_make, long lo,
                  long hi, const char *unit, long *out)
{
    char why[256];

    if (sim_number(name, value, as_make, lo, hi, unit, out, why,
                   sizeof(why)) == 0)
        return 0;
    fprintf(stderr, "sim: %s\n", why);
    return -1;
}

static int stage_arg(const char *value, int as_make, int *stage)
{
    char why[256];
    long n;
    int i;

    if (sim_number("stage", value, as_make, 1, SIM_STAGES, "", &n, why,
                   sizeof(why)) == 0) {
        *stage = (int)n;
        return 0;
    }
    fprintf(stderr, "sim: %s; stages:", why);
    for (i = 1; i <= SIM_STAGES; i++)
        if (sim_stage_get(i) != NULL)
            fprintf(stderr, " %d (%s)", i, sim_stage_name(i));
    fprintf(stderr, "\n");
    return -1;
}

/* The field of an option whose value is any text (a file, a folder);
 * NULL for another option. */
static const char **text_option(options *o, const char *name)
{
    if (strcmp(name, "save") == 0)
        return &o->save;
    if (strcmp(name, "html") == 0)
        return &o->html;
    if (strcmp(name, "out") == 0)
        return &o->out;
    if (strcmp(name, "src") == 0)
        return &o->src;
    if (strcmp(name, "build") == 0)
        return &o->build;
    return NULL;
}

/* sentinel=1 or sentinel=0, from make; "--sentinel" takes no value. */
static int switch_arg(const char *name, const char *value, int *out)
{
    if (strcmp(value, "0") == 0 || strcmp(value, "1") == 0) {
        *out = value[0] == '1';
        return 0;
    }
    fprintf(stderr, "sim: %s=%s is neither 1 nor 0: give %s=1 to turn it "
            "on, or leave it out\n", name, value, name);
    return -1;
}

/* One option: its name without dashes and its value. */
static int option(options *o, const char *name, const char *value,
                  int as_make)
{
    const char **text;
    long n;

    if (strcmp(name, "stage") == 0)
        return stage_arg(value, as_make, &o->stage);
    if (strcmp(name, "scenario") == 0)
        return (o->scenario = sim_scenario_find(value)) ? 0
               : bad_scenario(value, as_make);
    if (strcmp(name, "seed") == 0) {
        if (number("seed", value, as_make, 0, INT_MAX, "", &n) != 0)
            return -1;
        o->seed = (unsigned)n;
        return 0;
    }
    if (strcmp(name, "lease") == 0)
        return number("lease", value, as_make, MIN_LEASE_MS, MAX_LEASE_MS,
                      " ms", &o->lease_ms);
    if (strcmp(name, "jobs") == 0)
        return number("jobs", value, as_make, 1, SIM_POOL_JOBS_MAX, "",
                      &o->jobs);
    if ((text = text_option(o, name)) != NULL) {
        *text = value;
        return 0;
    }
    if (strcmp(name, "sentinel") == 0 && as_make)
        return switch_arg(name, value, &o->sentinel);
    fprintf(stderr, as_make ? "sim: unknown argument '%s=%s'\n"
            : "sim: unknown option '--%s'\n", name, value);
    return -1;
}

/* "name=value", as make passes a variable: 0 and the option, or -1 when
 * arg has no such form. */
static int make_form(options *o, const char *arg, int *rc)
{
    const char *eq = strchr(arg, '=');
    char name[32];

    if (arg[0] == '-' || eq == NULL || eq == arg ||
        (size_t)(eq - arg) >= sizeof(name))
        return -1;
    memcpy(name, arg, (size_t)(eq - arg));
    name[eq - arg] = '\0';
    *rc = option(o, name, eq + 1, 1);
    return 0;
}

/* The flags that take no value. 1 when arg was one. */
static int flag(options *o, const char *arg)
{
    if (strcmp(arg, "--sentinel") == 0)
        o->sentinel = 1;
    else if (is_help(arg))
        o->help = 1;
    else if (strcmp(arg, "--names") == 0)
        o->names = 1;
    else
        return 0;
    return 1;
}

static int parse(options *o, int argc, char **argv)
{
    int i, rc;

    memset(o, 0, sizeof(*o));
    o->lease_ms = SIM_DEFAULT_LEASE_MS;
    o->seed = 1;
    o->jobs = sim_pool_default_jobs();
    if (argc < 2)
        return -1;
    o->command = argv[1];
    o->help = is_help(argv[1]);
    for (i = 2; i < argc; i++) {
        if (strcmp(o->command, "check") == 0 && o->file == NULL && argv[i][0] != '-') {
            o->file = argv[i];
            continue;
        }
        if (flag(o, argv[i]))
            continue;
        if (make_form(o, argv[i], &rc) == 0) {
            if (rc != 0)
                return -1;
            continue;
        }
        if (strncmp(argv[i], "--", 2) != 0) {
            fprintf(stderr, "sim: unknown argument '%s'\n", argv[i]);
            return -1;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "sim: %s needs a value\n", argv[i]);
            return -1;
        }
        if (option(o, argv[i] + 2, argv[i + 1], 0) != 0)
            return -1;
        i++;
    }
    return 0;
}

/* ---- running ---------------------------------------------------------------------- */

/* build/vN/client, next to our own directory build/sim. */
static int client_program(int stage, char *out, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

    if (n <= 0)
        return -1;
    self[n] = '\0';
    snprintf(out, len, "%s/v%d/client", dirname(dirname(self)), stage);
    if (access(out, X_OK) != 0) {
        fprintf(stderr, "sim: %s is missing: build it with `make sim stage=%d scenario=...`\n",
                out, stage);
        return -1;
    }
    return 0;
}

/* How every cell runs: the options' lease, seed and failover. */
static sim_run_config run_config(const options *o)
{
    sim_run_config cfg;

    memset(&cfg, 0, sizeof(cfg));
    cfg.lease_ms = o->lease_ms;
    cfg.seed = o->seed;
    cfg.sentinel = o->sentinel;
    return cfg;
}

/* Plays one cell; prints nothing. 0, or -1 after a one-line error. */
static int play(const options *o, int stage, const sim_scenario *s,
                sim_run *run, sim_verdict *v)
{
    char program[PATH_MAX], why[512];
    sim_run_config cfg = run_config(o);

    if (client_program(stage, program, sizeof(program)) != 0)
        return -1;
    cfg.stage = stage;
    cfg.client_program = program;
    if (sim_runner_play(s, &cfg, run, why, sizeof(why)) != 0) {
        fprintf(stderr, "sim: v%d %s: %s\n", stage, s->name, why);
        return -1;
    }
    sim_check_run(&run->info, run->ev, run->n, v);
    return 0;
}

/* The page of one run, when --html asked for it. */
static int run_page(const options *o, const sim_run *run, const sim_verdict *v)
{
    char why[512], path[PATH_MAX];
    sim_html_run page = {
        { run->info.scenario, o->stage, v->anomalies,
          sim_scenario_expected(o->scenario, o->stage),
          run->failpoint_armed && !run->failpoint_fired, v, run->t0_ns },
        &run->info, run->ev, run->n };

    if (sim_html_run_page(o->html, &page, path, sizeof(path), why, sizeof(why)) != 0) {
        fprintf(stderr, "sim: --html: %s\n", why);
        return -1;
    }
    sim_html_tell(stdout, "this run's page", path);
    return 0;
}

static int cmd_run(const options *o)
{
    char why[256];
    sim_run run;
    sim_verdict v;
    int rc = 0;

    if (o->stage == 0 || o->scenario == NULL) {
        fprintf(stderr, "sim: run needs --stage N and --scenario S\n");
        return 2;
    }
    if (play(o, o->stage, o->scenario, &run, &v) != 0)
        return 1;
    sim_report_run(stdout, &run.info, run.ev, run.n, run.t0_ns, &v);
    if (o->save != NULL &&
        sim_history_save_run(o->save, &run.info, run.ev, run.n, run.t0_ns,
                             why, sizeof(why)) != 0)
        fprintf(stderr, "sim: --save: %s\n", why);
    if (o->html != NULL && run_page(o, &run, &v) != 0)
        rc = 1;
    sim_verdict_free(&v);
    sim_runner_free(&run);
    return rc;
}

/* A progress line on a terminal, overwritten by the next: silence
 * would look like a hang. */
static void progress(size_t done, size_t total, void *arg)
{
    (void)arg;
    if (!isatty(STDERR_FILENO))
        return;
    if (done < total)
        fprintf(stderr, "\r[%zu/%zu] cells played", done, total);
    else
        fprintf(stderr, "\r%*s\r", 40, "");
    fflush(stderr);
}

/* The matrix played: each cell's run, its verdict, and the matrix's
 * cell that shows them. Static: it is large, and there is one. */
typedef struct matrix {
    sim_cell cells[CELLS];
    sim_run runs[CELLS];
    sim_verdict verdicts[CELLS];   /* each cell's evidence */
    sim_matrix_cell m[CELLS];
    size_t n;
} matrix;

static matrix played;

/* Every scenario against every stage, in the table's order: the order of
 * the matrix, whatever order the cells finish in. */
static int demo_cells(sim_cell *cells, char (*programs)[PATH_MAX], size_t *n)
{
    size_t i;
    int stage;

    for (stage = 1; stage <= SIM_STAGES; stage++) {
        if (sim_stage_get(stage) != NULL &&
            client_program(stage, programs[stage - 1], PATH_MAX) != 0)
            return -1;
    }
    *n = 0;
    for (i = 0; i < sim_scenario_count(); i++) {
        for (stage = 1; stage <= SIM_STAGES; stage++)
            if (sim_stage_get(stage) != NULL)
                cells[(*n)++] = (sim_cell){ sim_scenario_at(i), stage, programs[stage - 1] };
    }
    return 0;
}

/* Plays and checks every cell: 0, or -1 after a one-line error. */
static int play_matrix(const options *o, matrix *mx)
{
    static char programs[SIM_STAGES][PATH_MAX];
    sim_run_config cfg = run_config(o);
    char why[512];

    if (demo_cells(mx->cells, programs, &mx->n) != 0)
        return -1;
    progress(0, mx->n, NULL);
    if (sim_runner_play_cells(mx->cells, mx->n, &cfg, o->jobs, progress, NULL,
                              mx->runs, why, sizeof(why)) != 0) {
        progress(mx->n, mx->n, NULL);
        fprintf(stderr, "sim: %s\n", why);
        return -1;
    }
    for (size_t i = 0; i < mx->n; i++) {
        const sim_run *r = &mx->runs[i];

        sim_check_run(&r->info, r->ev, r->n, &mx->verdicts[i]);
        mx->m[i] = (sim_matrix_cell){ mx->cells[i].s->name, mx->cells[i].stage,
                                      mx->verdicts[i].anomalies,
                                      sim_scenario_expected(mx->cells[i].s, mx->cells[i].stage),
                                      r->failpoint_armed && !r->failpoint_fired,
                                      &mx->verdicts[i], r->t0_ns };
    }
    return 0;
}

static void free_matrix(matrix *mx)
{
    for (size_t i = 0; i < mx->n; i++) {
        sim_verdict_free(&mx->verdicts[i]);
        sim_runner_free(&mx->runs[i]);
    }
    mx->n = 0;
}

static int cmd_demo(const options *o)
{
    int status;

    if (play_matrix(o, &played) != 0)
        return 1;
    status = sim_report_matrix(stdout, played.m, played.n) == (int)played.n ? 0 : 1;
    free_matrix(&played);
    return status;
}

/* "redis-server v=7.0.15 sha=... bits=64 ...": the version the runs
 * used, for the report's parameters; "" when it cannot be asked. */
static void redis_version(char *buf, size_t len)
{
    FILE *p = popen("redis-server --version 2>/dev/null", "r");

    buf[0] = '\0';
    if (p == NULL)
        return;
    if (fgets(buf, (int)len, p) == NULL)
        buf[0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    pclose(p);
}

/* The matrix as demo prints it, then as a web site in --out: the same
 * runs, the same answer key, the same exit status. */
static int cmd_report(const options *o)
{
    static sim_html_run pages[CELLS];
    char redis[256], why[512], index[PATH_MAX];
    sim_html_about about = { o->lease_ms, o->seed, (int)o->jobs, o->sentinel,
                             redis, o->build != NULL ? o->build : "", 0 };
    int64_t start = sim_now_ns();
    int status;

    if (o->out == NULL || o->src == NULL) {
        fprintf(stderr, "sim: report needs --out DIR (the site) and --src DIR "
                "(the repository)\n");
        return 2;
    }
    if (play_matrix(o, &played) != 0)
        return 1;
    about.seconds = (double)(sim_now_ns() - start) / 1e9;
    redis_version(redis, sizeof(redis));
    status = sim_report_matrix(stdout, played.m, played.n) == (int)played.n ? 0 : 1;
    for (size_t i = 0; i < played.n; i++)
        pages[i] = (sim_html_run){ played.m[i], &played.runs[i].info,
                                   played.runs[i].ev, played.runs[i].n };
    if (sim_html_site(o->out, o->src, &about, pages, played.n, why, sizeof(why)) != 0) {
        fprintf(stderr, "sim: report: %s\n", why);
        free_matrix(&played);
        return 1;
    }
    snprintf(index, sizeof(index), "%s/index.html", o->out);
    sim_html_tell(stdout, "the report", index);
    free_matrix(&played);
    return status;
}

/* Exit 0 for a clean history, 1 when it holds an anomaly, 2 when it
 * cannot be read or judged: a script can tell the three apart. */
static int cmd_check(const options *o)
{
    char why[512];
    sim_run_info info;
    sim_verdict v;
    sim_event *ev;
    size_t n;
    int status;

    if (o->file == NULL) {
        fprintf(stderr, "sim: check needs a FILE saved with run --save\n");
        return 2;
    }
    if ((ev = sim_history_load_run(o->file, &info, &n, why, sizeof(why))) == NULL) {
        fprintf(stderr, "sim: %s\n", why);
        return 2;
    }
    sim_check_run(&info, ev, n, &v);
    if ((status = sim_verdict_status(&v)) == 2)
        fprintf(stderr, "sim: %s: cannot judge this history: %s\n", o->file, v.why);
    else
        sim_report_run(stdout, &info, ev, n, 0, &v);
    sim_verdict_free(&v);
    free(ev);
    return status;
}

/* Every scenario with its answer key; with --names only the names, one
 * a line, for scripts (make sim's usage). */
static int cmd_list(const options *o)
{
    size_t i;
    int stage;

    for (i = 0; i < sim_scenario_count(); i++) {
        const sim_scenario *s = sim_scenario_at(i);

        if (o->names) {
            printf("%s\n", s->name);
            continue;
        }
        printf("%-18s %s\n%18s answer key:", s->name, s->shows, "");
        for (stage = 1; stage <= SIM_STAGES; stage++)
            if (sim_stage_get(stage) != NULL)
                printf(" v%d %s%s", stage, sim_scenario_key(s, stage),
                       stage < SIM_STAGES ? "," : "\n");
    }
    return 0;
}

int main(int argc, char **argv)
{
    options o;

    if (sim_libs_wanted(argc, argv))
        return sim_libs_main(argc, argv);
    if (parse(&o, argc, argv) != 0)
        return argc < 2 ? usage(stderr, 2) : 2;
    if (o.help)
        return usage(stdout, 0);
    atexit(sim_cluster_cleanup);
    sim_cluster_cleanup_on_signal();
    sim_proc_cleanup_on_signal();
    if (strcmp(o.command, "run") == 0)
        return cmd_run(&o);
    if (strcmp(o.command, "demo") == 0)
        return cmd_demo(&o);
    if (strcmp(o.command, "report") == 0)
        return cmd_report(&o);
    if (strcmp(o.command, "check") == 0)
        return cmd_check(&o);
    if (strcmp(o.command, "list") == 0)
        return cmd_list(&o);
    fprintf(stderr, "sim: unknown command '%s'\n", o.command);
    return usage(stderr, 2);
}
