/* libs_cmd: sim run lib=... and sim libs. See libs_cmd.h. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checker.h"
#include "cluster.h"
#include "history.h"
#include "html.h"
#include "libs.h"
#include "libs_cmd.h"
#include "pool.h"
#include "proc.h"
#include "report.h"
#include "stage.h"
#include "util.h"

#define SCENARIOS_MAX 16 /* rows: sim_libs_main refuses a table with more */
#define CELLS_MAX (SIM_LIBS_MAX * SCENARIOS_MAX)

typedef struct args {
    const char *lib;
    const char *scenario;
    const char *site;           /* libs: the site's folder, for libraries.html */
    const char *html;           /* run: the folder of its page */
    long lease_ms, jobs, seed, sentinel;
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
    a->site = arg(argc, argv, "site");
    a->html = arg(argc, argv, "html");
    if (((v = arg(argc, argv, "lease")) != NULL &&
         sim_number("lease", v, 1, 100, 10000, " ms", &a->lease_ms, why, sizeof(why)) != 0) ||
        ((v = arg(argc, argv, "jobs")) != NULL &&
         sim_number("jobs", v, 1, 1, 16, "", &a->jobs, why, sizeof(why)) != 0) ||
        ((v = arg(argc, argv, "seed")) != NULL &&
         sim_number("seed", v, 1, 0, 1000000, "", &a->seed, why, sizeof(why)) != 0) ||
        ((v = arg(argc, argv, "sentinel")) != NULL &&
         sim_number("sentinel", v, 1, 0, 1, "", &a->sentinel, why, sizeof(why)) != 0)) {
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
    cfg.sentinel = (int)a->sentinel;
    return cfg;
}

/* One cell, told and drawn as a stage's run; n/a said in one line. */
static int run_one(const args *a)
{
    const sim_lib *lib = find(a->lib);
    const sim_scenario *s = a->scenario != NULL ? sim_scenario_find(a->scenario) : NULL;
    sim_run_config cfg;
    const char *why, *key;
    char err[512], got[64];
    sim_run run;
    sim_verdict v;

    if (lib == NULL || s == NULL) {
        if (lib != NULL) {
            fprintf(stderr, "sim: run lib=%s needs scenario=S, one of:", lib->name);
            for (size_t i = 0; i < sim_scenario_count(); i++)
                fprintf(stderr, " %s", sim_scenario_at(i)->name);
            fprintf(stderr, "\n");
        }
        return 2;
    }
    cfg = sim_lib_config(lib, config(a));
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
    if (a->html != NULL) {
        char path[4096];
        sim_html_run page = { { s->name, lib->beside, v.anomalies, 0, 0, &v, run.t0_ns },
                              &run.info, run.ev, run.n };

        sim_anomaly_parse(key, &page.cell.expected);
        if (sim_html_run_page(a->html, &page, path, sizeof(path), err, sizeof(err)) == 0)
            sim_html_tell(stdout, "this run's page", path);
        else
            fprintf(stderr, "sim: html=%s: %s\n", a->html, err);
    }
    printf("%s beside v%d: this run %s, the answer key %s%s%s%s\n", lib->name, lib->beside,
           got[0] != '\0' ? got : "-", key, why[0] != '\0' ? " (" : "", why,
           why[0] != '\0' ? ")" : "");
    sim_verdict_free(&v);
    sim_runner_free(&run);
    return 0;
}

/* ---- every row ------------------------------------------------------------------- */

static sim_cell cells[CELLS_MAX];
static const sim_lib *cell_lib[CELLS_MAX];
static sim_run runs[CELLS_MAX];
static char programs[SIM_LIBS_MAX][4096];
static char got[SIM_LIBS_MAX][SCENARIOS_MAX][32]; /* each library's cell of each scenario */
static int played[SIM_LIBS_MAX];

/* lib's cells that a scenario reaches, after the n already there. */
static size_t gather(const sim_lib *lib, size_t n)
{
    const char *why;

    for (size_t k = 0; k < sim_scenario_count(); k++) {
        const sim_scenario *s = sim_scenario_at(k);

        if (strcmp(sim_lib_key(lib, s, &why), SIM_LIB_NA) == 0)
            continue;
        cell_lib[n] = lib;
        cells[n++] = (sim_cell){ s, lib->beside, programs[lib - libs] };
    }
    return n;
}

/* What lib's cell for s showed, into got[lib][s]: its run's marks, or
 * n/a. With LOCKSTEP_LIBS_TELL set, a cell that differs from its key is
 * told whole, as make sim tells a run. How many differ. */
static int judge(const sim_lib *lib, size_t n)
{
    int wrong = 0, l = (int)(lib - libs);

    for (size_t k = 0; k < sim_scenario_count(); k++) {
        const sim_scenario *s = sim_scenario_at(k);
        const char *why, *key = sim_lib_key(lib, s, &why);
        sim_verdict v;

        snprintf(got[l][k], sizeof(got[l][k]), "%s", SIM_LIB_NA);
        for (size_t i = 0; i < n; i++) {
            if (cell_lib[i] != lib || cells[i].s != s)
                continue;
            sim_check_run(&runs[i].info, runs[i].ev, runs[i].n, &v);
            sim_anomaly_format(v.anomalies, got[l][k], sizeof(got[l][k]));
            if (strcmp(got[l][k], key) != 0 && getenv("LOCKSTEP_LIBS_TELL") != NULL)
                sim_report_run(stdout, &runs[i].info, runs[i].ev, runs[i].n, runs[i].t0_ns, &v);
            sim_verdict_free(&v);
        }
        wrong += strcmp(got[l][k], key) != 0;
    }
    return wrong;
}

/* Columns: each stage a library stands beside (its answer key), then
 * those libraries (their runs), a cell that differs from its library's
 * key marked "!". */
static void print_columns(void)
{
    int prev = 0;

    printf("\nthe libraries, each beside the stage it stands by (a stage's column is its answer key)\n");
    printf("%-18s", "scenario");
    for (int l = 0; l < nlibs; l++) {
        if (!played[l])
            continue;
        if (libs[l].beside != prev) {
            char stage[16];

            snprintf(stage, sizeof(stage), "v%d", libs[l].beside);
            printf(" %-10s", stage);
        }
        printf(" %-10.10s", libs[l].name);
        prev = libs[l].beside;
    }
    printf("\n");
    for (size_t k = 0; k < sim_scenario_count(); k++) {
        const sim_scenario *s = sim_scenario_at(k);
        const char *why;
        char cell[40];

        printf("%-18s", s->name);
        prev = 0;
        for (int l = 0; l < nlibs; l++) {
            if (!played[l])
                continue;
            if (libs[l].beside != prev)
                printf(" %-10s", sim_scenario_key(s, libs[l].beside));
            snprintf(cell, sizeof(cell), "%.30s%s", got[l][k],
                     strcmp(got[l][k], sim_lib_key(&libs[l], s, &why)) != 0 ? " !" : "");
            printf(" %-10s", cell);
            prev = libs[l].beside;
        }
        printf("\n");
    }
}

/* The libraries whose cell of s has the sentence of library l's, from l
 * on, into buf: "curator, kazoo". Empty when one before l has it (it
 * was said with that one). */
static void sharing(int l, const sim_scenario *s, char *buf, size_t len)
{
    const char *mine, *why;
    size_t used = 0;

    sim_lib_key(&libs[l], s, &mine);
    buf[0] = '\0';
    for (int i = 0; i < nlibs; i++) {
        if (!played[i] || (sim_lib_key(&libs[i], s, &why), strcmp(why, mine) != 0))
            continue;
        if (i < l) {
            buf[0] = '\0';
            return;
        }
        used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s",
                                 used > 0 ? ", " : "", libs[i].name);
    }
}

/* Under the columns, a line for every cell that is not its stage's (one
 * for the libraries that share its sentence), and one for every cell
 * that is not its key: into notes, for the terminal and the site. */
#define NOTES_MAX 64
static char notes[NOTES_MAX][640];
static size_t nnotes;

static void collect_notes(void)
{
    char who[256];

    nnotes = 0;
    for (size_t k = 0; k < sim_scenario_count(); k++) {
        const sim_scenario *s = sim_scenario_at(k);

        for (int l = 0; l < nlibs && nnotes + 2 <= NOTES_MAX; l++) {
            const char *why, *key = sim_lib_key(&libs[l], s, &why);

            if (!played[l])
                continue;
            sharing(l, s, who, sizeof(who));
            if (why[0] != '\0' && who[0] != '\0')
                snprintf(notes[nnotes++], sizeof(notes[0]), "%.40s: %.200s, %.31s: %.300s", s->name,
                         who, key, why);
            if (strcmp(got[l][k], key) != 0)
                snprintf(notes[nnotes++], sizeof(notes[0]),
                         "%.40s: %.31s DIFFERS: this run %.31s, its answer key %.31s", s->name,
                         libs[l].name, got[l][k], key);
        }
    }
}

static void print_notes(void)
{
    collect_notes();
    for (size_t i = 0; i < nnotes; i++)
        printf("  %s\n", notes[i]);
}

/* ---- the site (make report libs=1) ------------------------------------------------ */

#define COLS_MAX (SIM_LIBS_MAX * 2)
#define ROWS_MAX SCENARIOS_MAX

static sim_html_lib_cell site_cells[ROWS_MAX * COLS_MAX];
static char hrefs[SIM_LIBS_MAX][ROWS_MAX][256];

/* Each played cell's run page, into dir/libs/<name>/, its link into hrefs. */
static int run_pages(const char *dir, size_t n)
{
    char sub[4096], path[4096], why[512];

    for (size_t i = 0; i < n; i++) {
        const sim_lib *lib = cell_lib[i];
        size_t k = 0;
        const char *note, *key = sim_lib_key(lib, cells[i].s, &note);
        unsigned expected = 0;
        sim_verdict v;

        while (sim_scenario_at(k) != cells[i].s)
            k++;
        sim_anomaly_parse(key, &expected);
        sim_check_run(&runs[i].info, runs[i].ev, runs[i].n, &v);
        sim_html_run page = { { cells[i].s->name, lib->beside, v.anomalies, expected, 0, &v,
                                runs[i].t0_ns }, &runs[i].info, runs[i].ev, runs[i].n };
        snprintf(sub, sizeof(sub), "%s/libs/%s", dir, lib->name);
        if (sim_html_run_page(sub, &page, path, sizeof(path), why, sizeof(why)) != 0) {
            sim_verdict_free(&v);
            fprintf(stderr, "sim: site: %s\n", why);
            return -1;
        }
        sim_verdict_free(&v);
        snprintf(hrefs[lib - libs][k], sizeof(hrefs[0][0]), "%s", path + strlen(dir) + 1);
    }
    return 0;
}

/* dir/libraries.html: the columns as print_columns prints them, each
 * library's cell linked to its run, the notes under them. */
static int write_site(const char *dir, size_t n)
{
    static char stage_heads[SIM_LIBS_MAX][16];
    const char *heads[COLS_MAX], *rows[ROWS_MAX], *notep[NOTES_MAX], *why;
    size_t ncols = 0, nrows = sim_scenario_count() < ROWS_MAX ? sim_scenario_count() : ROWS_MAX;
    char path[4096], err[512];
    int prev = 0;

    if (run_pages(dir, n) != 0)
        return -1;
    for (size_t k = 0; k < nrows; k++) {
        const sim_scenario *s = sim_scenario_at(k);
        size_t c = 0;

        rows[k] = s->name;
        prev = 0;
        for (int l = 0; l < nlibs; l++) {
            if (!played[l])
                continue;
            if (libs[l].beside != prev) {
                snprintf(stage_heads[l], sizeof(stage_heads[l]), "v%d", libs[l].beside);
                heads[c] = stage_heads[l];
                site_cells[k * COLS_MAX + c++] =
                    (sim_html_lib_cell){ sim_scenario_key(s, libs[l].beside), NULL, 0 };
            }
            heads[c] = libs[l].name;
            site_cells[k * COLS_MAX + c++] = (sim_html_lib_cell){
                got[l][k], hrefs[l][k], strcmp(got[l][k], sim_lib_key(&libs[l], s, &why)) != 0 };
            prev = libs[l].beside;
        }
        ncols = c;
    }
    for (size_t k = 0; k < nrows; k++) /* close up the rows: ncols a row */
        memmove(&site_cells[k * ncols], &site_cells[k * COLS_MAX], ncols * sizeof(site_cells[0]));
    for (size_t i = 0; i < nnotes; i++)
        notep[i] = notes[i];
    sim_html_libs t = { heads, ncols, rows, nrows, site_cells, notep, nnotes };
    if (sim_html_libs_page(dir, &t, path, sizeof(path), err, sizeof(err)) != 0) {
        fprintf(stderr, "sim: site: %s\n", err);
        return -1;
    }
    sim_html_tell(stdout, "the libraries' columns", path);
    return 0;
}

/* One library's cells, at once (jobs at a time), after the n played. */
static int play_lib(const args *a, const sim_lib *lib, size_t *n)
{
    sim_run_config cfg = sim_lib_config(lib, config(a));
    size_t from = *n;
    char err[512];

    if (sim_lib_program(lib, programs[lib - libs], sizeof(programs[0]), err, sizeof(err)) != 0) {
        fprintf(stderr, "sim: %s\n", err);
        return -1;
    }
    *n = gather(lib, from);
    if (sim_runner_play_cells(cells + from, *n - from, &cfg, (int)a->jobs, NULL, NULL,
                              runs + from, err, sizeof(err)) != 0) {
        fprintf(stderr, "sim: %s: %s\n", lib->name, err);
        *n = from;
        return -1;
    }
    for (size_t i = from; i < *n; i++)
        sim_lib_settle(lib, &runs[i]);
    return 0;
}

static int play_rows(const args *a)
{
    size_t n = 0;
    int wrong = 0, broken = 0, any = 0;
    int64_t t0 = sim_now_ns();

    for (int i = 0; i < nlibs && !broken; i++) {
        if (a->lib != NULL && strcmp(a->lib, libs[i].name) != 0)
            continue;
        if (!sim_lib_installed(&libs[i])) {
            printf("%s: skipped: %s is not installed (make deps libs=1)\n", libs[i].name,
                   libs[i].package);
            continue;
        }
        size_t from = n;
        int64_t t = sim_now_ns();

        if ((broken = play_lib(a, &libs[i], &n) != 0))
            break;
        played[i] = any = 1;
        wrong += judge(&libs[i], n);
        printf("%s: %zu cells played in %.1f s, at a lease of %ld ms\n", libs[i].name, n - from,
               (double)(sim_now_ns() - t) / 1e9, sim_lib_config(&libs[i], config(a)).lease_ms);
    }
    if (any) {
        print_columns();
        print_notes();
        if (!broken && a->site != NULL && write_site(a->site, n) != 0)
            broken = 1;
    }
    for (size_t i = 0; i < n; i++)
        sim_runner_free(&runs[i]);
    if (broken)
        return 1;
    if (!any) {
        printf("libs: skipped: no library's driver has its packages here (make deps libs=1)\n");
        return 0;
    }
    printf("%zu library cells played in %.1f s; %s\n", n, (double)(sim_now_ns() - t0) / 1e9,
           wrong == 0 ? "every cell matches its library's answer key"
                      : "cells differ from their library's answer key (DIFFERS above)");
    return wrong == 0 ? 0 : 1;
}

int sim_libs_main(int argc, char **argv)
{
    args a;
    char why[256];

    if (parse(&a, argc, argv) != 0)
        return 2;
    if (sim_scenario_count() > SCENARIOS_MAX) {
        fprintf(stderr, "sim: libs: %zu scenarios, more than the %d rows of SCENARIOS_MAX "
                "(sim/libs_cmd.c): raise it\n", sim_scenario_count(), SCENARIOS_MAX);
        return 2;
    }
    atexit(sim_cluster_cleanup);
    sim_cluster_cleanup_on_signal();
    sim_proc_cleanup_on_signal();
    if ((nlibs = sim_libs_load(libs, why, sizeof(why))) < 0) {
        fprintf(stderr, "sim: %s\n", why);
        return 2;
    }
    if (strcmp(argv[1], "run") == 0)
        return run_one(&a);
    return play_rows(&a);
}
