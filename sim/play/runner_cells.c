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
    const sim_run_config *cfg;
    const char *dir;          /* where each child leaves its events */
    sim_pool_progress progress;
    void *progress_arg;
} batch;

static void events_path(const batch *b, size_t i, char *out, size_t len)
{
    snprintf(out, len, "%s/cell-%zu.events", b->dir, i);
}

/* In a child of the pool: plays cell i. Its events go to a file (their
 * number varies), the rest of the run to the shared result. */
static int play_cell(size_t i, void *result, void *arg, char *errstr, size_t len)
{
    const batch *b = arg;
    sim_run_config cfg = *b->cfg;
    sim_run *run = result;
    char path[SIM_CONTROL_PATH_LEN];
    FILE *f;
    int ok;

    cfg.stage = b->cells[i].stage;
    cfg.client_program = b->cells[i].program;
    if (sim_runner_play(b->cells[i].s, &cfg, run, errstr, len) != 0)
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

/* In the parent: cell i's events, back from its file. */
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
 * the pool forks the cells, so that every cell finds them; under the
 * clock library, for the cells whose fault moves a clock. */
static int share_servers(const sim_cell *cells, size_t n, char *errstr, size_t len)
{
    static char shim[PATH_MAX]; /* outlives the shared servers */
    size_t i;

    for (i = 0; i < n; i++) {
        if (sim_runner_kills_servers(cells[i].s))
            continue;
        if (shim[0] == '\0' &&
            sim_runner_clock_shim(cells[i].program, shim, errstr, len) != 0)
            return -1;
        if (sim_servers_share(sim_stage_get(cells[i].stage), shim, errstr, len) != 0)
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
        return sim_error(errstr, len, "%s %s: %s", sim_stage_name(b->cells[failed].stage),
                         b->cells[failed].s->name, why);
    return 0;
}

int sim_runner_play_cells(const sim_cell *cells, size_t n,
                          const sim_run_config *cfg, int jobs,
                          sim_pool_progress progress, void *progress_arg,
                          sim_run *runs, char *errstr, size_t len)
{
    char dir[SIM_PATH_LEN];
    batch b = { cells, cfg, dir, progress, progress_arg };
    size_t i;
    int rc;

    memset(runs, 0, n * sizeof(runs[0]));
    if (sim_tempdir_create(dir, sizeof(dir), errstr, len) != 0)
        return -1;
    rc = share_servers(cells, n, errstr, len);
    if (rc == 0)
        rc = play_in_pool(&b, n, jobs, runs, errstr, len);
    sim_servers_unshare();
    for (i = 0; rc == 0 && i < n; i++)
        rc = read_events(&b, i, &runs[i], errstr, len);
    for (i = 0; rc != 0 && i < n; i++)
        sim_runner_free(&runs[i]);
    sim_tempdir_remove(dir);
    return rc;
}
