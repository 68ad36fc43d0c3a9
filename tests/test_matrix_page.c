/* test_matrix_page: the matrix page and the handout, written from
 * hand-written histories (story.h) and read back as text: every badge
 * has a style, the fence's two outcomes have a mark each, in the cells,
 * the legends and the timeline, and print.html is the grid, its legend
 * and the rows' stories. No Redis and no browser (make report-test
 * renders the real site, and prints it). */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "html_internal.h"
#include "pages.h"
#include "stage.h"
#include "story.h"

static story kept[2];          /* two runs' histories, kept past begin() */
static sim_verdict judged[2];  /* and their verdicts */
static sim_run_info info[2];
static sim_html_run runs[2];

/* The scratch folder, and the verdicts the tests kept. */
static void remove_all(void)
{
    remove_tmp();
    for (size_t i = 0; i < 2; i++)
        sim_verdict_free(&judged[i]);
}

/* v7's two fenced runs: gc-pause, where the fence held (ME, a write
 * refused), and failover, where it failed (ME LU, one token twice). The
 * checker's verdicts are kept apart from story.h's, which begin() frees. */
static void two_fenced_runs(void)
{
    static const char *const names[2] = { "gc-pause", "failover" };

    for (size_t i = 0; i < 2; i++) {
        if (i == 0)
            fenced_pause_story();
        else
            fenced_failover_story();
        check();
        kept[i] = s;
        judged[i] = v;
        memset(&v, 0, sizeof(v));
        info[i] = (sim_run_info){ "v7-fencing-token", "", "", "", 300, 1, 2, 1 };
        snprintf(info[i].scenario, sizeof(info[i].scenario), "%s", names[i]);
        runs[i] = (sim_html_run){ { names[i], 7, judged[i].anomalies,
                                    judged[i].anomalies & SIM_ANOM_CELLS, 0, &judged[i], 0 },
                                  &info[i], kept[i].ev, kept[i].n };
    }
}

static void matrix_page(const sim_html_run *r, size_t n)
{
    sim_html_about about = { 300, 1, 6, 0, "", "", 1 };
    char why[256];

    ck_assert_msg(sim_html_matrix_page(tmp, SRCDIR, &about, r, n, why, sizeof(why)) == 0,
                  "the matrix page was not written: %s", why);
    read_back("index.html");
}

/* Every badge the page draws, class="mark X", has a rule of the page's
 * style that colours it: a badge without one is white on white. */
START_TEST(test_matrix_page_every_badge_has_a_style)
{
    char cls[64], rule[80];
    sim_html_run unjudged;
    const char *style_end;

    two_fenced_runs();
    unjudged = runs[0];
    unjudged.cell.scenario = "baseline";
    unjudged.cell.observed = SIM_ANOM_UNJUDGED;
    matrix_page((const sim_html_run[]){ runs[0], runs[1], unjudged }, 3);
    style_end = strstr(text, "</style>");
    ck_assert(style_end != NULL);
    for (const char *p = text; (p = strstr(p, "class=\"mark ")) != NULL; p++) {
        size_t n = strcspn(p + 12, "\" ");

        ck_assert(n < sizeof(cls));
        snprintf(cls, sizeof(cls), "%.*s", (int)n, p + 12);
        snprintf(rule, sizeof(rule), ".mark.%s{", cls);
        ck_assert_msg(memmem(text, (size_t)(style_end - text), rule, strlen(rule)) != NULL,
                      "the page draws a badge of class \"mark %s\", which its style "
                      "does not know: %.80s", cls, p);
    }
    /* The legend's "?" among them. */
    has("<dt><span class=\"mark unjudged\">?</span></dt><dd>the history could not be "
        "judged</dd>");
}
END_TEST

/* The fence held in one cell and failed in the other: each has its own
 * mark, its own badge, and the one that held is not coloured as a lost
 * sale. */
START_TEST(test_matrix_page_fence_held_is_not_a_failure)
{
    const char *mark, *meaning, *seen[32];
    size_t n = 0;

    two_fenced_runs();
    matrix_page(runs, 2);
    has("<td class=\"cell me fence\" data-stage=\"7\" data-scenario=\"gc-pause\" "
        "data-marks=\"ME F\"");
    has("<td class=\"cell me lu clash\" data-stage=\"7\" data-scenario=\"failover\" "
        "data-marks=\"ME LU T\"");
    has("<span class=\"mark ME\">ME</span><span class=\"mark fence\">F</span></span>");
    has("<span class=\"mark LU\">LU</span><span class=\"mark clash\">T</span></span>");
    has("td.cell.fence:not(.lu){background:");
    /* The evidence says which: the refusal under F, the shared token
     * under T. */
    has("<span class=\"mark fence\">F</span> A&#39;s write refused at 400 ms");
    has("<span class=\"mark clash\">T</span> A and B both used token 1");
    /* Each mark of the legend once, with one meaning. */
    for (size_t i = 0; (meaning = sim_report_matrix_legend(i, &mark)) != NULL; i++) {
        for (size_t j = 0; j < n; j++)
            ck_assert_msg(strcmp(seen[j], mark) != 0, "the legend lists %s twice", mark);
        ck_assert_msg(strstr(meaning, ", or ") == NULL, "the legend's %s means two "
                      "things: %s", mark, meaning);
        seen[n++] = mark;
    }
    has("<dt><span class=\"mark fence\">F</span></dt><dd>the fence held: the resource "
        "refused a stale write</dd>");
    has("<dt><span class=\"mark clash\">T</span></dt><dd>the fence failed: two holders "
        "used one token</dd>");
}
END_TEST

/* A run's page says the same: its marks, and the timeline's symbols of
 * the fence, one for each outcome. */
START_TEST(test_matrix_page_run_pages_tell_the_fence_apart)
{
    char path[512], why[256];

    two_fenced_runs();
    ck_assert(sim_html_run_page(tmp, &runs[0], path, sizeof(path), why, sizeof(why)) == 0);
    read_back("v7-gc-pause.html");
    has("<span class=\"mark ME\">ME</span><span class=\"mark fence\">F</span>");
    has("<g class=\"refused\"><title>F: A&#39;s write refused");
    has("F: the fence held: the resource refused a stale write</li>");
    lacks("the fence failed");
    ck_assert(sim_html_run_page(tmp, &runs[1], path, sizeof(path), why, sizeof(why)) == 0);
    read_back("v7-failover.html");
    has("<span class=\"mark LU\">LU</span><span class=\"mark clash\">T</span>");
    has("<g class=\"clash\"><title>T: A and B both used token 1");
    has("T: the fence failed: two holders used one token</li>");
    lacks("F: the fence");
}
END_TEST

/* print.html: the handout, the matrix page's content without its
 * navigation: the grid, its legend (the last thing on the first sheet),
 * then each row's story; no run's page and no stage's; a link to a run
 * leads to its page on the site, beside print.html. */
START_TEST(test_matrix_page_print_is_the_handout)
{
    sim_html_about about = { 300, 1, 6, 0, "", "", 1 };
    char site[600], why[256];
    const char *grid, *legend, *story;

    two_fenced_runs();
    snprintf(site, sizeof(site), "%s/site", tmp);
    ck_assert_msg(sim_html_site(site, SRCDIR, &about, runs, 2, why, sizeof(why)) == 0,
                  "the site was not written: %s", why);
    read_back("site/print.html");
    grid = strstr(text, "<table class=\"matrix\">");
    legend = strstr(text, "<dl class=\"legend\">");
    story = strstr(text, "<section class=\"story\" id=\"row-gc-pause\">");
    ck_assert_msg(grid != NULL && legend != NULL && story != NULL && grid < legend &&
                  legend < story, "print.html is not the grid, its legend, then the "
                  "rows' stories");
    has("<h1>The fault matrix</h1>");
    has("<a href=\"runs/v7-gc-pause.html\">");           /* a cell, to the site */
    lacks("<svg class=\"timeline\"");
    lacks("What the checker found");
    lacks("<header class=\"bar\">");
    has("@media print{");
    has("break-after:page}");
}
END_TEST

Suite *matrix_page_suite(void)
{
    const TTest *tests[] = {
        test_matrix_page_every_badge_has_a_style, test_matrix_page_fence_held_is_not_a_failure,
        test_matrix_page_run_pages_tell_the_fence_apart, test_matrix_page_print_is_the_handout,
    };

    return PAGES_SUITE("matrix page", tests, remove_all);
}
