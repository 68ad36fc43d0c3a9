/* test_stages: the list of stages (sim/stages.def) and the answer key
 * (sim/scenarios.c) hold together. No Redis: only the tables and the
 * stage folders are read.
 *
 * Everything that builds, tests, plays or diffs a stage takes it from
 * stages.def, so a line that breaks the rules below breaks all of them at
 * once: these tests say which rule, in a sentence. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "checker.h"
#include "scenarios.h"
#include "stage.h"

#ifndef SRCDIR
#define SRCDIR "." /* the repository root; make passes its own */
#endif

#define PATH_LEN 512

/* Stage n is the nth line, its folder is vN-<idea> with a lock.h and a
 * lock.c, it is built on an earlier stage (or none) and talks to at least
 * one master. */
START_TEST(test_stages_lines)
{
    char prefix[16], path[PATH_LEN];
    const char *files[] = { "lock.h", "lock.c" };
    int n;
    size_t f;

    ck_assert_msg(SIM_STAGES >= 1, "sim/stages.def lists no stage");
    for (n = 1; n <= SIM_STAGES; n++) {
        const sim_stage *s = sim_stage_get(n);

        snprintf(prefix, sizeof(prefix), "v%d-", n);
        ck_assert_msg(s->n == n, "line %d of sim/stages.def is stage %d; expected "
                      "stages 1, 2, ... in order", n, s->n);
        ck_assert_msg(strncmp(s->dir, prefix, strlen(prefix)) == 0,
                      "stage %d's folder is %s; expected a name that begins with %s",
                      n, s->dir, prefix);
        ck_assert_msg(s->base >= 0 && s->base < n, "stage %d (%s) is built on stage %d; "
                      "expected an earlier stage, or 0 for none", n, s->dir, s->base);
        ck_assert_msg(s->masters >= 1, "stage %d (%s) talks to %d masters; expected 1 or more",
                      n, s->dir, s->masters);
        for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
            snprintf(path, sizeof(path), "%s/%s/%s", SRCDIR, s->dir, files[f]);
            ck_assert_msg(access(path, R_OK) == 0, "stage %d's line names the folder %s, "
                          "but %s cannot be read", n, s->dir, path);
        }
    }
    ck_assert_msg(sim_stage_get(0) == NULL && sim_stage_get(SIM_STAGES + 1) == NULL,
                  "sim_stage_get answers for a number that is not a stage");
}
END_TEST

/* A stage keeps what its base can do: a line adds capabilities. */
START_TEST(test_stages_inherit_capabilities)
{
    int n;

    for (n = 1; n <= SIM_STAGES; n++) {
        const sim_stage *s = sim_stage_get(n);
        unsigned base = s->base > 0 ? sim_stage_get(s->base)->caps : 0;

        ck_assert_msg((s->caps & base) == base, "stage %d (%s) lacks capabilities %#x of "
                      "its base, stage %d", n, s->dir, base & ~s->caps, s->base);
    }
    ck_assert_msg(sim_stage_get(1)->caps == 0, "the first stage has capabilities %#x; "
                  "expected none (the naive lock)", sim_stage_get(1)->caps);
}
END_TEST

/* Every scenario has a cell for every stage that is built on no other
 * (the others answer like their base when they have none), and every
 * cell is a set of anomaly names. */
START_TEST(test_stages_answer_key)
{
    unsigned set;
    size_t i;
    int n;

    for (i = 0; i < sim_scenario_count(); i++) {
        const sim_scenario *s = sim_scenario_at(i);

        for (n = 1; n <= SIM_STAGES; n++) {
            const char *cell = s->expect[n - 1];

            ck_assert_msg(cell != NULL || sim_stage_get(n)->base > 0,
                          "scenario %s has no answer for stage %d (%s), which is built on "
                          "no other stage: add its cell to the scenario's expect line in "
                          "sim/scenarios.c", s->name, n, sim_stage_name(n));
            ck_assert_msg(cell == NULL || sim_anomaly_parse(cell, &set) == 0,
                          "scenario %s's answer for stage %d is \"%s\"; expected anomaly "
                          "names (ME MD DL) or -", s->name, n, cell);
        }
    }
}
END_TEST

Suite *stages_suite(void)
{
    Suite *suite = suite_create("stages");
    TCase *list = tcase_create("the list");

    tcase_add_test(list, test_stages_lines);
    tcase_add_test(list, test_stages_inherit_capabilities);
    tcase_add_test(list, test_stages_answer_key);
    suite_add_tcase(suite, list);
    return suite;
}
