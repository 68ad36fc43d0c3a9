/* runner_cells: many cells of the matrix played side by side, each in a
 * process of its own, their histories read back. See runner.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"
#include "servers.h"
#include "util.h"

/* ---- many cells at once ---------------------------------------------------------- */

/* What the children of sim_runner_play_cells share with the parent. */
typedef struct batch {
    const sim_cell *cells;
    const size_t *order;      /* job i plays cells[order[i]] */
    const sim_run_config *cfg;
    const char *dir;          /* where each child leaves its events */
    sim_pool_progress progress;
    void *progress_arg;
} batch;

static void events_path(const batch *b, size_t i, char *out, size_t len)
{
    snprintf(out, len, "%s/cell-%zu.events", b->dir, i);
}

/* In a child of the pool: plays job i's cell. Its events go to a file
 * (their number varies), the rest of the run to the shared result. */
static int play_cell(size_t i, void *result, void *arg, char *errstr, size_t len)
{
    const batch *b = arg;
    const sim_cell *c = &b->cells[b->order[i]];
    sim_run_config cfg = *b->cfg;
    sim_run *run = result;
    char path[SIM_CONTROL_PATH_LEN];
    FILE *f;
    int ok;

    cfg.stage = c->stage;
    cfg.client_program = c->program;
    if (sim_runner_play(c->s, &cfg, run, errstr, len) != 0)
        return -1;
    events_path(b, i, path, sizeof(path));
    f = fopen(path, "w");
    ok = f != NULL && fwrite(run->ev, sizeof(run->ev[0]), run->n, f) == run->n;
    if (f != NULL && fclose(f) != 0)
        ok = 0;
    free(run->ev);
    run->ev = NULL;  /* an address in this child only */
    return ok ? 0 : sim_error(errstr, len, "writing %s: %s", path, strerror(errno));
}

/* In the parent: job i's events, back from its file. */
static int read_events(const batch *b, size_t i, sim_run *run, char *errstr,
                       size_t len)
{
    char path[SIM_CONTROL_PATH_LEN];
    FILE *f;
    int ok;

    events_path(b, i, path, sizeof(path));
    run->ev = malloc((run->n + 1) * sizeof(run->ev[0]));
    f = fopen(path, "r");
    ok = run->ev != NULL && f != NULL &&
         fread(run->ev, sizeof(run->ev[0]), run->n, f) == run->n;
    if (f != NULL)
        fclose(f);
    unlink(path);
    if (!ok)
        sim_runner_free(run);
    return ok ? 0 : sim_error(errstr, len, "reading %s: %s", path, strerror(errno));
}

static void forward_progress(size_t done, size_t total, void *arg)
{
    const batch *b = arg;

    if (b->progress != NULL)
        b->progress(done, total, b->progress_arg);
}

/* The servers the cells of a kind may share (servers.h), started before
 * the pool forks the cells, so that every cell finds them. */
static int share_servers(const sim_cell *cells, size_t n, char *errstr, size_t len)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (!sim_runner_faults_servers(cells[i].s) &&
            sim_servers_share(sim_stage_get(cells[i].stage), errstr, len) != 0)
            return -1;
    }
    return 0;
}

/* The pool, with every child's temp dirs inside ours: removing ours, at
 * the end or on Ctrl-C, removes theirs, even a killed child's. */
static int play_in_pool(batch *b, size_t n, int jobs, sim_run *runs,
                        char *errstr, size_t len)
{
    const char *old = getenv("TMPDIR");
    char saved[SIM_PATH_LEN], why[512];
    size_t failed = 0;
    int rc;

    snprintf(saved, sizeof(saved), "%s", old != NULL ? old : "");
    setenv("TMPDIR", b->dir, 1);
    rc = sim_pool_run(n, jobs, sizeof(sim_run), play_cell, forward_progress, b,
                      runs, &failed, why, sizeof(why));
    if (saved[0] != '\0')
        setenv("TMPDIR", saved, 1);
    else
        unsetenv("TMPDIR");
    if (rc != 0)
        return sim_error(errstr, len, "%s %s: %s",
                         sim_stage_name(b->cells[b->order[failed]].stage),
                         b->cells[b->order[failed]].s->name, why);
    return 0;
}

/* A run that starts its own servers of a kind slow to start (three
 * JVMs) takes several times what a run on Redis takes; a restart starts
 * some twice. 0 for a run on Redis or on shared servers. */
static int weight(const sim_cell *c)
{
    const sim_stage *stage = sim_stage_get(c->stage);

    if (stage == NULL || !sim_servers_slow_to_start(stage) || !sim_runner_faults_servers(c->s))
        return 0;
    return c->s->fault.kind == SIM_FAULT_RESTART ? 2 : 1;
}

/* The order of play: the heavy runs spread over the first part of the
 * matrix, the heaviest first, so that neither do their servers start
 * all at once (each start slows the others down) nor does one start
 * last and keep the whole matrix waiting for it alone; the quick runs
 * in the matrix's order around them. */
static void spread_heavy(const sim_cell *cells, size_t n, size_t *order)
{
    size_t heavy = 0, gap, k = 0, quick = 0, next = 0, i;

    for (i = 0; i < n; i++)
        heavy += weight(&cells[i]) > 0;
    gap = n / (heavy + 1) > 0 ? n / (heavy + 1) : 1;
    for (int w = 2; w > 0; w--)
        for (i = 0; i < n; i++) {
            if (weight(&cells[i]) != w)
                continue;
            while (k < next && quick < n)
                if (weight(&cells[quick++]) == 0)
                    order[k++] = quick - 1;
            order[k++] = i;
            next = k + gap - 1;
        }
    for (; quick < n; quick++)
        if (weight(&cells[quick]) == 0)
            order[k++] = quick;
}

int sim_runner_play_cells(const sim_cell *cells, size_t n,
                          const sim_run_config *cfg, int jobs,
                          sim_pool_progress progress, void *progress_arg,
                          sim_run *runs, char *errstr, size_t len)
{
    char dir[SIM_PATH_LEN] = "";
    size_t *order = malloc((n + 1) * sizeof(*order));
    sim_run *played = calloc(n + 1, sizeof(*played));
    batch b = { cells, order, cfg, dir, progress, progress_arg };
    size_t i;
    int rc;

    memset(runs, 0, n * sizeof(runs[0]));
    if (order == NULL || played == NULL) {
        free(order);
        free(played);
        return sim_error(errstr, len, "out of memory for %zu cells", n);
    }
    spread_heavy(cells, n, order);
    rc = sim_tempdir_create(dir, sizeof(dir), errstr, len);
    if (rc == 0 && (rc = share_servers(cells, n, errstr, len)) == 0)
        rc = play_in_pool(&b, n, jobs, played, errstr, len);
    sim_servers_unshare();
    for (i = 0; rc == 0 && i < n; i++)
        rc = read_events(&b, i, &played[i], errstr, len);
    for (i = 0; i < n; i++) {
        if (rc != 0)
            sim_runner_free(&played[i]);
        else
            runs[order[i]] = played[i];
    }
    if (dir[0] != '\0')
        sim_tempdir_remove(dir);
    free(order);
    free(played);
    return rc;
}
