/* libs_cmd: sim run lib=... and sim libs. See libs_cmd.h. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checker.h"
#include "cluster.h"
#include "libs.h"
#include "libs_cmd.h"
#include "pool.h"
#include "proc.h"
#include "report.h"
#include "stage.h"
#include "util.h"

#define CELLS_MAX (SIM_LIBS_MAX * 16)

typedef struct args {
    const char *lib;
    const char *scenario;
    long lease_ms, jobs, seed;
} args;

static sim_lib libs[SIM_LIBS_MAX];
static int nlibs;

/* "name=value" or "--name value": the value of name, or NULL. */
static const char *arg(int argc, char **argv, const char *name)
{
    size_t len = strlen(name);

    for (int i = 2; i < argc; i++) {
        if (strncmp(argv[i], name, len) == 0 && argv[i][len] == '=')
            return argv[i] + len + 1;
        if (argv[i][0] == '-' && argv[i][1] == '-' && strcmp(argv[i] + 2, name) == 0 &&
            i + 1 < argc)
            return argv[i + 1];
    }
    return NULL;
}

int sim_libs_wanted(int argc, char **argv)
{
    return argc >= 2 && (strcmp(argv[1], "libs") == 0 ||
                         (strcmp(argv[1], "run") == 0 && arg(argc, argv, "lib") != NULL));
}

static int parse(args *a, int argc, char **argv)
{
    const char *v;
    char why[256];

    memset(a, 0, sizeof(*a));
    a->lease_ms = SIM_DEFAULT_LEASE_MS;
    a->jobs = sim_pool_default_jobs();
    a->lib = arg(argc, argv, "lib");
    a->scenario = arg(argc, argv, "scenario");
    if (((v = arg(argc, argv, "lease")) != NULL &&
         sim_number("lease", v, 1, 100, 10000, " ms", &a->lease_ms, why, sizeof(why)) != 0) ||
        ((v = arg(argc, argv, "jobs")) != NULL &&
         sim_number("jobs", v, 1, 1, 16, "", &a->jobs, why, sizeof(why)) != 0) ||
        ((v = arg(argc, argv, "seed")) != NULL &&
         sim_number("seed", v, 1, 0, 1000000, "", &a->seed, why, sizeof(why)) != 0)) {
        fprintf(stderr, "sim: %s\n", why);
        return -1;
    }
    return 0;
}

static const sim_lib *find(const char *name)
{
    for (int i = 0; i < nlibs; i++)
        if (strcmp(libs[i].name, name) == 0)
            return &libs[i];
    fprintf(stderr, "sim: lib=%s is not a folder of drivers/ with a driver.conf; libs:", name);
    for (int i = 0; i < nlibs; i++)
        fprintf(stderr, " %s", libs[i].name);
    fprintf(stderr, "\n");
    return NULL;
}

static sim_run_config config(const args *a)
{
    sim_run_config cfg;

    memset(&cfg, 0, sizeof(cfg));
    cfg.lease_ms = a->lease_ms;
    cfg.seed = (unsigned)a->seed;
    return cfg;
}

/* One cell, told and drawn as a stage's run; n/a said in one line. */
static int run_one(const args *a)
{
    const sim_lib *lib = find(a->lib);
    const sim_scenario *s = a->scenario != NULL ? sim_scenario_find(a->scenario) : NULL;
    sim_run_config cfg = config(a);
    const char *why, *key;
    char err[512], got[64];
    sim_run run;
    sim_verdict v;

    if (lib == NULL || s == NULL) {
        if (lib != NULL)
            fprintf(stderr, "sim: run lib=%s needs scenario=S (sim list --names)\n", lib->name);
        return 2;
    }
    key = sim_lib_key(lib, s, &why);
    if (strcmp(key, SIM_LIB_NA) == 0) {
        printf("%s / %s: n/a: %s\n", lib->name, s->name, why);
        return 0;
    }
    if (!sim_lib_installed(lib)) {
        fprintf(stderr, "sim: %s is not installed (%s): make deps libs=1\n", lib->name, lib->package);
        return 2;
    }
    if (sim_lib_play(lib, s, &cfg, &run, err, sizeof(err)) != 0) {
        fprintf(stderr, "sim: %s %s: %s\n", lib->name, s->name, err);
        return 1;
    }
    sim_check_run(&run.info, run.ev, run.n, &v);
    sim_report_run(stdout, &run.info, run.ev, run.n, run.t0_ns, &v);
    sim_anomaly_format(v.anomalies, got, sizeof(got));
    printf("%s beside v%d: this run %s, the answer key %s%s%s%s\n", lib->name, lib->beside,
           got[0] != '\0' ? got : "-", key, why[0] != '\0' ? " (" : "", why,
           why[0] != '\0' ? ")" : "");
    sim_verdict_free(&v);
    sim_runner_free(&run);
    return 0;
}

int sim_libs_main(int argc, char **argv)
{
    args a;
    char why[256];

    if (parse(&a, argc, argv) != 0)
        return 2;
    atexit(sim_cluster_cleanup);
    sim_cluster_cleanup_on_signal();
    sim_proc_cleanup_on_signal();
    if ((nlibs = sim_libs_load(libs, why, sizeof(why))) < 0) {
        fprintf(stderr, "sim: %s\n", why);
        return 2;
    }
    if (strcmp(argv[1], "run") == 0)
        return run_one(&a);
    fprintf(stderr, "sim: libs: not yet\n");
    return 2;
}
