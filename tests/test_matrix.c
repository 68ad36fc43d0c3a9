/* test_matrix: this stage's row of the fault matrix, asserted exactly.
 *
 * One tcase per scenario of the table in sim/play/scenarios.c: the test plays
 * the scenario against this stage with real servers (redis-servers, or a
 * ZooKeeper ensemble and the stock's redis-server) and client
 * processes (build/vN/client, next to this test binary), has the checker
 * judge the history, and asserts the answer key's cell: the anomalies it
 * expects appear, and no others. It also asserts that a scenario's
 * failpoint fires exactly where the stage has the step, so a cell cannot
 * pass because its fault never happened, and that the run's history,
 * saved and read back with its lines shuffled, gets the same verdict and
 * the same report (what `sim check` would say of a `sim run --save`).
 * And what README.md's story of the row says of this stage's cell (who
 * read what, whose write came last, how many sales, who was inside
 * together) must be what the run's history shows: tests/row_claims.c.
 * Of v11, the observer must have seen each waiter's node queue; of both
 * ZooKeeper stages, a node its holder's release deleted must be told so. */
#define _GNU_SOURCE
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checker.h"
#include "harness.h"
#include "proc.h"
#include "report.h"
#include "row_claims.h"
#include "runner.h"
#include "suites.h"

#define RUN_TIMEOUT_S 150   /* a run takes seconds; its own limit is shorter */
#define EVIDENCE_LEN 768
#define SEED 1

/* Unchecked: the runs' clusters make their temp dirs inside one made by
 * the runner process (harness_tmpdir_setup). */
static void matrix_setup(void)
{
    harness_tmpdir_setup();
    /* Inherited by each test's process: Ctrl-C kills and reaps its
     * clients before the harness's cleanup stops the servers. */
    sim_proc_cleanup_on_signal();
}

/* The client program of this stage, next to this test binary. */
static void client_program(char *out, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

    ck_assert_msg(n > 0, "cannot read /proc/self/exe");
    self[n] = '\0';
    snprintf(out, len, "%s/client", dirname(self));
    ck_assert_msg(access(out, X_OK) == 0,
                  "the stage's client program %s is missing: build it with make", out);
}

/* The scenario's failpoint fires exactly where the stage has its step
 * (sim_stage_has_step). A lock that never reaches the step releases, or
 * takes, the lock another way than the stage's protocol: the answer key
 * judges the stage's own steps, so the cell says which. */
static void assert_failpoint(const sim_run *run)
{
    const char *fp = run->info.failpoint;
    int has = sim_stage_has_step(sim_stage_get(STAGE), fp);
    const char *step = sim_stage_step(fp);

    if (!run->failpoint_armed)
        return;
    ck_assert_msg(run->failpoint_fired || !has,
                  "v%d %s: the failpoint %s never fired: the answer key judges v%d's own %s, "
                  "and a lock without that step (a later stage's, say) is not the lock v%d "
                  "asks for",
                  CAPS.stage, run->info.scenario, fp, CAPS.stage, step ? step : "step", CAPS.stage);
    ck_assert_msg(!run->failpoint_fired || has,
                  "v%d %s: the failpoint %s fired, but it marks the %s, a step v%d's protocol "
                  "does not have: its lock must not call it",
                  CAPS.stage, run->info.scenario, fp, step ? step : "a step", CAPS.stage);
}

/* The cell, asserted as a sentence with the checker's evidence. */
static void assert_cell(const sim_run *run, const sim_verdict *v,
                        unsigned expected)
{
    char got[32], want[32], evidence[EVIDENCE_LEN];
    unsigned observed = v->anomalies & SIM_ANOM_CELLS;

    sim_anomaly_format(observed, got, sizeof(got));
    sim_anomaly_format(expected, want, sizeof(want));
    sim_report_evidence(evidence, sizeof(evidence), v, run->t0_ns);
    ck_assert_msg(observed == expected,
                  "v%d %s: the checker found %s; the answer key expects %s. %s",
                  CAPS.stage, run->info.scenario, got, want,
                  evidence[0] ? evidence : "No anomaly was found.");
    /* Lost updates need two clients inside at once: damage without ME
     * would mean the history or the checker is wrong. */
    ck_assert_msg(!(v->anomalies & SIM_ANOM_LU) || (observed & SIM_ANOM_ME),
                  "v%d %s: the stock was damaged without lost mutual exclusion: %s",
                  CAPS.stage, run->info.scenario, evidence);
}

/* Every sentence of the row's story that speaks of this cell, checked
 * against the run's history. */
static void assert_story(const sim_run *run, const sim_verdict *v)
{
    char why[1024];

    for (size_t i = 0; i < row_claims_count(); i++) {
        const row_claim *c = row_claim_at(i);

        if (strcmp(c->scenario, run->info.scenario) != 0 || !row_claim_speaks_of(c, CAPS.stage))
            continue;
        ck_assert_msg(row_claims_check(c->facts, run->ev, run->n, v, why, sizeof(why)) == 0,
                      "v%d %s: README.md's story of the row says \"%s\", but %s",
                      CAPS.stage, run->info.scenario, c->sentence, why);
    }
}

/* Shuffles a saved history's event lines (the header stays first). */
static void shuffle_lines(const char *path, unsigned seed)
{
    char *text = NULL, **line = NULL, *p;
    size_t len = 0, n = 0;
    FILE *f = fopen(path, "r");

    ck_assert_msg(f != NULL && getdelim(&text, &len, '\0', f) > 0,
                  "cannot read back %s", path);
    fclose(f);
    line = malloc((strlen(text) + 1) * sizeof(*line));
    ck_assert_msg(line != NULL, "out of memory");
    for (p = strtok(text, "\n"); p != NULL; p = strtok(NULL, "\n"))
        line[n++] = p;
    for (size_t i = n - 1; i > 1; i--) {
        size_t j = 1 + (size_t)rand_r(&seed) % i;
        char *t = line[i];

        line[i] = line[j];
        line[j] = t;
    }
    f = fopen(path, "w");
    ck_assert_msg(f != NULL, "cannot rewrite %s", path);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s\n", line[i]);
    fclose(f);
    free(line);
    free(text);
}

/* The report of a verdict, as text. */
static char *report_text(const sim_run_info *info, const sim_event *ev,
                         size_t n, int64_t t0_ns, const sim_verdict *v)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);

    sim_report_run(out, info, ev, n, t0_ns, v);
    fclose(out);
    return text;
}

/* Whether a waiter's node was seen queueing (its sequence number in
 * token) before ev[i]. */
static int queued_before(const sim_run *run, size_t i, int64_t seq)
{
    for (size_t j = 0; j < i; j++)
        if (run->ev[j].type == SIM_EV_KEY && run->ev[j].token == seq &&
            strcmp(run->ev[j].detail, "queued") == 0)
            return 1;
    return 0;
}

/* A ZooKeeper lock with a queue (v11): the observer saw each waiter's
 * node come ("queued") before its turn ("first"); where B and C wait
 * behind A, it saw both queue. */
static void assert_queue(const sim_run *run)
{
    size_t queued = 0;
    int sequential = 0;

    if (!STAGE_ZOOKEEPER || !CAPS.queue)
        return;
    for (size_t i = 0; i < run->n; i++) {
        const sim_event *e = &run->ev[i];

        if (e->type != SIM_EV_KEY)
            continue;
        queued += strcmp(e->detail, "queued") == 0;
        sequential |= e->token != 0;
        ck_assert_msg(strcmp(e->detail, "first") != 0 || queued_before(run, i, e->token),
                      "v%d %s: node %lld had its turn at %lld ms, but the observer never "
                      "saw it queue", CAPS.stage, run->info.scenario, (long long)e->token,
                      (long long)((e->t_ns - run->t0_ns) / 1000000));
    }
    /* A lock of one node and no children (v10's lock.c graded as v11, as
     * the course hands it out) has no queue to see: its cells are the
     * answer key's to judge, not this. The second node of a queue lock
     * is the first with a sequence number other than 0. */
    if (sequential && (strcmp(run->info.scenario, "crash-waiting") == 0 ||
                       strcmp(run->info.scenario, "slow-holder") == 0))
        ck_assert_msg(queued >= 2, "v%d %s: B and C wait behind A, and the observer saw %zu "
                      "nodes queue", CAPS.stage, run->info.scenario, queued);
}

/* Whether a release failed while the node that went at end held: after
 * the node's "create" or "first", before its end. A holder starved past
 * two thirds of its session (two busy loops beside a run did it) loses
 * its connection ("delete: operation timeout"), and its session expires
 * before the release's next try: the node did go with its session. */
static int release_failed(const sim_run *run, size_t end)
{
    size_t i = end;

    while (i > 0 && !(run->ev[i - 1].type == SIM_EV_KEY &&
                      (strcmp(run->ev[i - 1].detail, "create") == 0 ||
                       strcmp(run->ev[i - 1].detail, "first") == 0)))
        i--;
    for (; i < end; i++)
        if (run->ev[i].type == SIM_EV_RELEASE_ERROR)
            return 1;
    return 0;
}

/* A ZooKeeper node that its holder's release deleted is told "delete",
 * even when the client closed its session right after, as it leaves: in
 * slow-holder every holder releases, and no session ends before unless
 * the release failed. */
static void assert_node_ends(const sim_run *run)
{
    if (!STAGE_ZOOKEEPER || strcmp(run->info.scenario, "slow-holder") != 0)
        return;
    for (size_t i = 0; i < run->n; i++)
        ck_assert_msg(run->ev[i].type != SIM_EV_KEY || strcmp(run->ev[i].detail, "expired") != 0 ||
                      release_failed(run, i),
                      "v%d slow-holder: a node went at %lld ms, told \"expired\"; every node "
                      "here is deleted by its holder's release", CAPS.stage,
                      (long long)((run->ev[i].t_ns - run->t0_ns) / 1000000));
}

static void assert_replay(const sim_run *run, const sim_verdict *v)
{
    char path[SIM_PATH_LEN + 32], why[512];
    sim_run_info info;
    sim_verdict again;
    sim_event *ev;
    char *was, *now;
    size_t n;
    int fd;

    snprintf(path, sizeof(path), "%s/replay-XXXXXX", getenv("TMPDIR"));
    ck_assert_msg((fd = mkstemp(path)) >= 0, "cannot make %s", path);
    close(fd);
    ck_assert_msg(sim_history_save_run(path, &run->info, run->ev, run->n,
                                       run->t0_ns, why, sizeof(why)) == 0,
                  "v%d %s: saving the history failed: %s", CAPS.stage,
                  run->info.scenario, why);
    shuffle_lines(path, (unsigned)run->n);
    ev = sim_history_load_run(path, &info, &n, why, sizeof(why));
    unlink(path);
    ck_assert_msg(ev != NULL, "v%d %s: the saved history does not load: %s",
                  CAPS.stage, run->info.scenario, why);
    sim_check_run(&info, ev, n, &again);
    was = report_text(&run->info, run->ev, run->n, run->t0_ns, v);
    now = report_text(&info, ev, n, 0, &again);
    ck_assert_msg(again.anomalies == v->anomalies && strcmp(was, now) == 0,
                  "v%d %s: saved, shuffled and checked again, the history "
                  "gets another report.\nThe run said:\n%s\nsim check says:"
                  "\n%s", CAPS.stage, run->info.scenario, was, now);
    free(was);
    free(now);
    free(ev);
    sim_verdict_free(&again);
}

START_TEST(test_matrix_cell)
{
    const sim_scenario *s = sim_scenario_at((size_t)_i);
    unsigned expected = sim_scenario_expected(s, CAPS.stage);
    char program[PATH_MAX], why[512];
    sim_run_config cfg = { .stage = CAPS.stage, .client_program = program,
                           .lease_ms = SIM_DEFAULT_LEASE_MS, .seed = SEED };
    sim_run run;
    sim_verdict v;

    harness_title("%s: %s (expect %s)", s->name, s->shows,
                  sim_scenario_key(s, CAPS.stage));
    client_program(program, sizeof(program));
    ck_assert_msg(sim_runner_play(s, &cfg, &run, why, sizeof(why)) == 0,
                  "v%d %s: the run itself failed: %s", CAPS.stage, s->name, why);
    sim_check_run(&run.info, run.ev, run.n, &v);
    assert_failpoint(&run);
    assert_cell(&run, &v, expected);
    assert_story(&run, &v);
    assert_queue(&run);
    assert_node_ends(&run);
    assert_replay(&run, &v);
    printf("  ... Passed -- %.1f s, %d client%s, %zu events, lease %ld ms, seed %u\n",
           run.elapsed_ms / 1000.0, run.nclients, run.nclients == 1 ? "" : "s",
           run.n, cfg.lease_ms, cfg.seed);
    sim_verdict_free(&v);
    sim_runner_free(&run);
}
END_TEST

Suite *matrix_suite(void)
{
    Suite *suite = suite_create("matrix");
    size_t i;

    for (i = 0; i < sim_scenario_count(); i++) {
        TCase *tc = tcase_create(sim_scenario_at(i)->name);

        tcase_add_unchecked_fixture(tc, matrix_setup, harness_tmpdir_teardown);
        tcase_set_timeout(tc, RUN_TIMEOUT_S);
        tcase_add_loop_test(tc, test_matrix_cell, (int)i, (int)i + 1);
        suite_add_tcase(suite, tc);
    }
    return suite;
}
