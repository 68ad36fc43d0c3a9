/* test_row_stories: docs/matrix.md's story of each row of the fault matrix
 * names no sale that tests/row_claims.c does not check, the claims'
 * facts read a history right, and README.md's matrix is the answer key. No Redis: that page and hand-written
 * histories (story.h); each stage's matrix row checks the claims against
 * its real runs. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_internal.h"
#include "row_claims.h"
#include "scenarios.h"
#include "stage.h"
#include "story.h"
#include "tcases.h"

#ifndef SRCDIR
#define SRCDIR "." /* the repository root; make passes its own */
#endif

static char *readme(void)
{
    char why[256];
    size_t n;
    char *text = sim_html_slurp(SRCDIR "/" SIM_HTML_STORIES, &n, why, sizeof(why));

    ck_assert_msg(text != NULL, "cannot read " SIM_HTML_STORIES ": %s", why);
    return text;
}

/* Every row's story: each sentence that names a sale is a claim, each
 * claim is still told; each claim names a real row and real stages. */
START_TEST(test_row_stories_are_all_claimed)
{
    char *text = readme(), why[1024];

    for (size_t i = 0; i < sim_scenario_count(); i++) {
        const char *name = sim_scenario_at(i)->name, *story;
        size_t n = 0;

        story = sim_html_story(text, name, &n);
        ck_assert_msg(story != NULL, SIM_HTML_STORIES " tells no story of the row %s", name);
        ck_assert_msg(row_claims_story(name, story, n, why, sizeof(why)) == 0, "%s", why);
    }
    for (size_t i = 0; i < row_claims_count(); i++) {
        const row_claim *c = row_claim_at(i);
        int stages = 0;

        ck_assert_msg(sim_scenario_find(c->scenario) != NULL,
                      "a claim of tests/row_claims.c is about %s, which is no scenario",
                      c->scenario);
        for (int s = 1; s <= SIM_STAGES; s++)
            stages += row_claim_speaks_of(c, s);
        ck_assert_msg(stages > 0, "the claim \"%s\" speaks of no stage (\"%s\")",
                      c->sentence, c->stages);
    }
    free(text);
}
END_TEST

/* The sentences that once told these rows wrong are caught: they name
 * sales, and no claim backs them. */
START_TEST(test_row_stories_catch_an_unchecked_sentence)
{
    const char *gc = " The same, but the whole process stops. A's write, late and based "
                     "on a stock it read before the pause,\n  overwrites B's sale (LU).";
    const char *slow = " A live holder outlasts its lease. A and B both read 10 and both\n"
                       "  wrote 9: two sales, one unit gone (LU).";
    const char *plain = " A live holder outlasts its lease. v1 has no lease to run out.";
    char why[1024];

    ck_assert_int_eq(row_claims_story("gc-pause", gc, strlen(gc), why, sizeof(why)), -1);
    ck_assert_msg(strstr(why, "overwrites B's sale (LU).") != NULL, "%s", why);
    ck_assert_int_eq(row_claims_story("slow-holder", slow, strlen(slow), why, sizeof(why)), -1);
    ck_assert_msg(strstr(why, "two sales, one unit gone") != NULL, "%s", why);
    /* A story that drops a claimed sentence is caught too. */
    ck_assert_int_eq(row_claims_story("slow-holder", plain, strlen(plain), why, sizeof(why)),
                     -1);
    ck_assert_msg(strstr(why, "no longer says it") != NULL, "%s", why);
    ck_assert(!row_claims_names_sales("v1 has no lease to run out."));
    ck_assert(row_claims_names_sales("B writes 9 later."));
    ck_assert(row_claims_names_sales("C walks in beside B."));
}
END_TEST

/* The cells of a table's row, each trimmed, into cell[]; their count. */
static int split_row(char *line, char *cell[], int max)
{
    int n = 0;

    for (char *p = strchr(line, '|'); p != NULL && n < max; ) {
        char *next = strchr(p + 1, '|'), *end;

        if (next == NULL)
            break;
        *next = '\0';
        for (p++; *p == ' '; p++)
            ;
        for (end = next; end > p && end[-1] == ' '; end--)
            ;
        *end = '\0';
        cell[n++] = p;
        p = next;
    }
    return n;
}

/* README.md's matrix is the answer key's, cell by cell, once the
 * fence's marks (F, T: no anomaly) are set aside and "(-)" read as the
 * "-" it is. */
START_TEST(test_row_stories_readme_matrix_is_the_key)
{
    char why[256], *cell[SIM_STAGES + 4], want[32];
    size_t n;
    char *text = sim_html_slurp(SRCDIR "/README.md", &n, why, sizeof(why));

    ck_assert_msg(text != NULL, "cannot read README.md: %s", why);
    for (size_t i = 0; i < sim_scenario_count(); i++) {
        const sim_scenario *sc = sim_scenario_at(i);
        char head[SIM_NAME_LEN + 8], line[2048], *at;
        int cells, col = 2;

        snprintf(head, sizeof(head), "\n| %s |", sc->name);
        ck_assert_msg((at = strstr(text, head)) != NULL, "README.md's matrix has no row %s",
                      sc->name);
        snprintf(line, sizeof(line), "%.*s", (int)strcspn(at + 1, "\n"), at + 1);
        cells = split_row(line, cell, SIM_STAGES + 4);
        for (int s = 1; s <= SIM_STAGES; s++) {
            char *c, *mark;

            if (sim_stage_get(s) == NULL)
                continue;
            ck_assert_msg(col < cells, "README.md's row %s has no cell for v%d", sc->name, s);
            c = cell[col++];
            while ((mark = strstr(c, " F")) != NULL || (mark = strstr(c, " T")) != NULL)
                memmove(mark, mark + 2, strlen(mark + 2) + 1);
            snprintf(want, sizeof(want), "%s", sim_scenario_key(sc, s));
            ck_assert_msg(strcmp(c, want) == 0 || (strcmp(c, "(-)") == 0 && strcmp(want, "-") == 0),
                          "README.md's matrix says %s for v%d %s; the answer key says %s",
                          c, s, sc->name, want);
        }
    }
    free(text);
}
END_TEST

static int facts(const char *f, char *why, size_t len)
{
    return row_claims_check(f, s.ev, s.n, &v, why, len);
}

START_TEST(test_row_stories_facts_read_the_history)
{
    char why[1024];

    pause_story();
    check();
    ck_assert_msg(facts("read A 10; read B 10; wrote A 9; wrote B 9; order A B; overlap A B; "
                        "overlaps 1; not-owner A; sales 2; stock 10 9; lost 1", why,
                        sizeof(why)) == 0, "%s", why);
    /* The old story's order: A's write over B's. */
    ck_assert_int_eq(facts("read A 10; order B A", why, sizeof(why)), 1);
    ck_assert_msg(strstr(why, "\"order B A\" does not hold: the history shows reads A10 B10; "
                          "writes A9 B9; overlaps AB; 2 sales, 10 -> 9") != NULL, "%s", why);
    ck_assert_int_eq(facts("lost 2", why, sizeof(why)), 1);
    ck_assert_int_eq(facts("overlap B C", why, sizeof(why)), 1);
    ck_assert_int_eq(facts("deleted A B", why, sizeof(why)), 1);
    ck_assert_int_eq(facts("refused A", why, sizeof(why)), 1);
    ck_assert_int_eq(facts("token A 1", why, sizeof(why)), 1);
    ck_assert_int_eq(facts("colour A red", why, sizeof(why)), -1);
    ck_assert_msg(strstr(why, "\"colour A red\" is not a fact") != NULL, "%s", why);
    ck_assert_int_eq(facts("order A Z", why, sizeof(why)), -1);
}
END_TEST

/* v7's fence: A's write refused, tokens drawn, B's sale the only one. */
START_TEST(test_row_stories_facts_read_a_fence)
{
    char why[1024];

    fenced_pause_story();
    /* The tokens A and B drew, on their acquires as a run records them. */
    for (size_t i = 0; i < s.n; i++)
        if (s.ev[i].type == SIM_EV_ACQUIRE_OK)
            s.ev[i].token = s.ev[i].client == A ? 1 : 2;
    check();
    ck_assert_msg(facts("refused A; token A 1; token B 2; sales 1; stock 10 9; lost 0; "
                        "overlap A B", why, sizeof(why)) == 0, "%s", why);
    ck_assert_int_eq(facts("wrote A 9", why, sizeof(why)), 1);
    ck_assert_msg(strstr(why, "writes A(refused) B9") != NULL, "%s", why);
}
END_TEST

Suite *row_stories_suite(void)
{
    const TTest *tests[] = {
        test_row_stories_are_all_claimed, test_row_stories_catch_an_unchecked_sentence,
        test_row_stories_facts_read_the_history, test_row_stories_facts_read_a_fence,
        test_row_stories_readme_matrix_is_the_key,
    };

    return ONE_TCASE_SUITE("row stories", "claims", tests, NULL);
}
