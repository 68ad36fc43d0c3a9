/* test_site: the report's web site, as a browser rendered it (the facts
 * run_site.c gathered), against the histories saved next to its run
 * pages, judged again by the checker. */
#define _GNU_SOURCE
#include <check.h>
#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checker.h"
#include "history.h"
#include "scenarios.h"
#include "site.h"
#include "stage.h"
#include "tcases.h"

#define MIN_CHANGED 0.02  /* a screenshot with fewer pixels off its first is blank */

static long ms(int64_t t_ns)
{
    return (long)(t_ns / 1000000); /* a saved history starts at 0 */
}

/* A run's saved history, judged again; 0, or -1 when it cannot be read. */
/* The times each node went down in the history judged last. */
static int downs[SIM_HISTORY_NODES_MAX];

static int judge(const char *page, sim_run_info *info, sim_verdict *v, int *unreachable)
{
    char path[PATH_MAX], why[512];
    size_t n, len = strlen(page);
    sim_event *ev;

    snprintf(path, sizeof(path), "%s/%.*s.jsonl", the_site.dir, (int)(len - 5), page);
    if ((ev = sim_history_load_run(path, info, &n, why, sizeof(why))) == NULL) {
        ck_abort_msg("the history of %s cannot be read: %s", page, why);
        return -1;
    }
    sim_check_run(info, ev, n, v);
    memset(downs, 0, sizeof(downs));
    for (size_t i = 0; i < n; i++)
        if (ev[i].type == SIM_EV_NODE_DOWN && ev[i].node < SIM_HISTORY_NODES_MAX)
            downs[ev[i].node]++;
    *unreachable = info->failpoint[0] != '\0' &&
                   !sim_check_failpoint_fired(ev, n, info->failpoint);
    free(ev);
    return 0;
}

static const site_fact *one(const char *kind, const char *page)
{
    size_t at = 0;

    return site_next(kind, page, &at);
}

/* ---- every page ------------------------------------------------------------------- */

START_TEST(test_site_every_page_loaded)
{
    ck_assert_msg(one("done", NULL) != NULL,
                  "the test's page never finished: the facts end before their last line");
    for (size_t i = 0; i < the_site.n_pages; i++) {
        const char *p = the_site.pages[i];
        const site_fact *s = one("scripts", p);

        ck_assert_msg(one("failed", p) == NULL && one("page", p) != NULL,
                      "%s did not load in the browser", p);
        ck_assert_msg(s != NULL && strcmp(s->f[2], "0") == 0,
                      "%s has %s script elements; expected none: the site is static", p,
                      s != NULL ? s->f[2] : "?");
    }
}
END_TEST

START_TEST(test_site_no_console_errors)
{
    const char *at = the_site.log != NULL ? strstr(the_site.log, ":CONSOLE") : NULL;

    ck_assert_msg(the_site.log != NULL, "the browser wrote no log");
    ck_assert_msg(at == NULL, "the browser's console said: %.*s; expected nothing",
                  (int)strcspn(at != NULL ? at : "", "\n"), at != NULL ? at : "");
}
END_TEST

/* The file a file:// link points to, %-decoded, without its #anchor. */
static void link_path(const char *url, char *out, size_t len)
{
    size_t o = 0;

    url += strlen("file://");
    for (; *url && *url != '#' && *url != '?' && o + 1 < len; url++) {
        unsigned int c;

        if (url[0] == '%' && sscanf(url + 1, "%2x", &c) == 1) {
            out[o++] = (char)c;
            url += 2;
        } else {
            out[o++] = *url;
        }
    }
    out[o] = '\0';
}

START_TEST(test_site_links_resolve)
{
    char abs[PATH_MAX], path[PATH_MAX];
    int *linked = calloc(the_site.n_pages + 1, sizeof(*linked));
    const site_fact *l;
    size_t at = 0;

    ck_assert(realpath(the_site.dir, abs) != NULL && linked != NULL);
    while ((l = site_next("link", NULL, &at)) != NULL) {
        ck_assert_msg(strncmp(l->f[3], "file://", 7) == 0,
                      "%s links to %s; expected only files of the site (no network)",
                      l->f[1], l->f[3]);
        link_path(l->f[3], path, sizeof(path));
        ck_assert_msg(access(path, R_OK) == 0, "%s links to %s, which does not exist",
                      l->f[1], l->f[2]);
        ck_assert_msg(strncmp(path, abs, strlen(abs)) == 0,
                      "%s links to %s, outside the site %s", l->f[1], path, abs);
        for (size_t i = 0; i < the_site.n_pages; i++)
            if (strcmp(path + strlen(abs) + 1, the_site.pages[i]) == 0 &&
                strcmp(l->f[1], the_site.pages[i]) != 0)
                linked[i] = 1;
    }
    for (size_t i = 1; i < the_site.n_pages; i++)
        ck_assert_msg(linked[i], "no other page links to %s", the_site.pages[i]);
    free(linked);
}
END_TEST

/* ---- the matrix ----------------------------------------------------------------------- */

static void check_cell(const sim_scenario *s, int stage)
{
    char page[PATH_MAX], want[32], num[16];
    const site_fact *c, *c2, *f;
    size_t at = 0;
    sim_run_info info;
    sim_verdict v;
    unsigned seen;
    int unreachable;

    snprintf(num, sizeof(num), "%d", stage);
    for (c = NULL; (f = site_next("cell", "index.html", &at)) != NULL;)
        if (strcmp(f->f[2], num) == 0 && strcmp(f->f[3], s->name) == 0) {
            c2 = c;
            c = f;
            ck_assert_msg(c2 == NULL, "the matrix has two cells for v%d %s", stage, s->name);
        }
    ck_assert_msg(c != NULL, "the matrix has no cell for v%d %s", stage, s->name);
    snprintf(page, sizeof(page), "runs/v%d-%s.html", stage, s->name);
    if (judge(page, &info, &v, &unreachable) != 0)
        return;
    seen = v.anomalies & SIM_ANOM_CELLS;
    sim_anomaly_format(seen, want, sizeof(want));
    if (seen == 0 && unreachable)
        snprintf(want, sizeof(want), "(-)");
    /* The fence's work, each outcome its own mark: held, failed. */
    if (v.n_refusals > 0)
        strcat(want, " F");
    if (v.token_clash)
        strcat(want, " T");
    ck_assert_msg(strcmp(c->f[4], want) == 0,
                  "the matrix shows \"%s\" for v%d %s; its saved history says \"%s\"",
                  c->f[4], stage, s->name, want);
    ck_assert_msg(atoi(c->f[5]) == (seen != (sim_scenario_expected(s, stage) & SIM_ANOM_CELLS)),
                  "v%d %s is %smarked as differing from the answer key (%s), wrongly",
                  stage, s->name, atoi(c->f[5]) ? "" : "not ", sim_scenario_key(s, stage));
    ck_assert_msg(atoi(c->f[6]) > 40 && atoi(c->f[7]) > 20,
                  "the cell of v%d %s is drawn %sx%s px; expected a cell one can read",
                  stage, s->name, c->f[6], c->f[7]);
    ck_assert_msg(seen == 0 || c->f[8][0] != '\0',
                  "the cell of v%d %s shows \"%s\" but no evidence on hover",
                  stage, s->name, want);
    sim_verdict_free(&v);
}

/* The stages the list has: a number it skips has no column. */
static int stages_listed(void)
{
    int n = 0;

    for (int s = 1; s <= SIM_STAGES; s++)
        n += sim_stage_get(s) != NULL;
    return n;
}

START_TEST(test_site_matrix_cells)
{
    size_t at = 0, cells = 0;

    for (size_t i = 0; i < sim_scenario_count(); i++)
        for (int stage = 1; stage <= SIM_STAGES; stage++)
            if (sim_stage_get(stage) != NULL)
                check_cell(sim_scenario_at(i), stage);
    while (site_next("cell", "index.html", &at) != NULL)
        cells++;
    ck_assert_msg(cells == sim_scenario_count() * (size_t)stages_listed(),
                  "the matrix has %zu cells; expected %zu scenarios x %d stages",
                  cells, sim_scenario_count(), stages_listed());
}
END_TEST

/* A cell where the fence held (F, no sale lost) is drawn unlike every
 * cell that lost a sale. */
START_TEST(test_site_fence_held_looks_unlike_a_lost_sale)
{
    const site_fact *c, *lost;
    size_t at = 0, held = 0;

    while ((c = site_next("cell", "index.html", &at)) != NULL) {
        size_t at2 = 0;

        if (strstr(c->f[4], "F") == NULL || strstr(c->f[4], "LU") != NULL)
            continue;
        held++;
        while ((lost = site_next("cell", "index.html", &at2)) != NULL)
            ck_assert_msg(strstr(lost->f[4], "LU") == NULL || strcmp(lost->f[9], c->f[9]) != 0,
                          "v%s %s, where the fence held (%s), is drawn %s like v%s %s, "
                          "which lost a sale (%s)", c->f[2], c->f[3], c->f[4], c->f[9],
                          lost->f[2], lost->f[3], lost->f[4]);
    }
    ck_assert_msg(held > 0 || SIM_STAGES < 7, "no cell of the matrix shows that the fence "
                  "held (F); v7's gc-pause should");
}
END_TEST

/* The matrix, with every stage, on one projector's screen; and with as
 * many stages and scenarios as the course plans, still (site_facts.js
 * adds them as copies of the fullest cells and rows). */
static void check_fits(const char *kind, const char *what)
{
    const site_fact *m = one(kind, "index.html");

    ck_assert_msg(m != NULL, "the matrix page has no table.matrix (%s)", what);
    ck_assert_msg(atoi(m->f[2]) >= 0 && atoi(m->f[3]) >= 0 && atoi(m->f[4]) <= atoi(m->f[9]) &&
                  atoi(m->f[5]) <= atoi(m->f[10]) && atoi(m->f[11]) <= atoi(m->f[9]),
                  "the matrix (%s: %s stages x %s scenarios) spans x %s..%s, y %s..%s px "
                  "(the page %s px wide); a %sx%s screen must show it whole", what,
                  m->f[7], m->f[6], m->f[2], m->f[4], m->f[3], m->f[5], m->f[11],
                  m->f[9], m->f[10]);
    ck_assert_msg(atoi(m->f[8]) == 0, "%s of the matrix's cells (%s) overflow: their "
                  "marks do not fit them", m->f[8], what);
}

/* The legend under the grid, whole on the same screen: a mark the
 * projector shows is told there. */
static void check_legend(const char *kind, const char *what)
{
    const site_fact *l = one(kind, "index.html");

    ck_assert_msg(l != NULL, "the matrix page has no dl.legend (%s)", what);
    ck_assert_msg(atoi(l->f[6]) > 0, "the matrix page's legend has no mark (%s)", what);
    ck_assert_msg(atoi(l->f[2]) >= 0 && atoi(l->f[3]) >= 0 && atoi(l->f[4]) <= atoi(l->f[7]) &&
                  atoi(l->f[5]) <= atoi(l->f[8]),
                  "the matrix's legend (%s) spans x %s..%s, y %s..%s px; a %sx%s screen must "
                  "show it whole under the grid", what, l->f[2], l->f[4], l->f[3], l->f[5],
                  l->f[7], l->f[8]);
}

START_TEST(test_site_matrix_fits_a_screen)
{
    const site_fact *m = one("matrix", "index.html");

    ck_assert_msg(m != NULL && atoi(m->f[7]) == SIM_STAGES &&
                  (size_t)atoi(m->f[6]) == sim_scenario_count(),
                  "the matrix page's table is not the whole matrix");
    check_fits("matrix", "as played");
    check_fits("matrix-planned", "13 stages x 13 scenarios");
    check_legend("legend", "as played");
    check_legend("legend-planned", "13 stages x 13 scenarios");
}
END_TEST

/* ---- the runs ------------------------------------------------------------------------- */

/* An anomaly fact of the page: kind, and from/to or at in ms. */
static int drawn(const char *page, const char *kind, long from, long to, long at_ms)
{
    const site_fact *a;
    size_t at = 0;

    while ((a = site_next("anomaly", page, &at)) != NULL) {
        if (strcmp(a->f[2], kind) != 0 || atoi(a->f[6]) <= 0)
            continue;
        if (at_ms >= 0 ? atol(a->f[5]) == at_ms
                       : atol(a->f[3]) == from && atol(a->f[4]) == to)
            return 1;
    }
    return 0;
}

/* Each episode of the history's verdict, drawn; as many as there are. */
static void check_episodes(const char *page, const sim_verdict *v)
{
    size_t at = 0, n = 0;

    for (size_t i = 0; i < v->n_episodes; i++) {
        const sim_episode *e = &v->episodes[i];

        if (e->kind == SIM_ANOM_ME)
            ck_assert_msg(drawn(page, "ME", ms(e->me.from_ns), ms(e->me.to_ns), -1),
                          "%s does not draw the overlap [%ld ms, %ld ms] its history has",
                          page, ms(e->me.from_ns), ms(e->me.to_ns));
        else if (e->kind == SIM_ANOM_ST)
            ck_assert_msg(drawn(page, "ST", ms(e->st.from_ns), ms(e->st.to_ns), -1),
                          "%s does not draw the stall [%ld ms, %ld ms] its history has",
                          page, ms(e->st.from_ns), ms(e->st.to_ns));
        else
            ck_assert_msg(drawn(page, sim_anomaly_name(e->kind), 0, 0,
                                ms(e->kind == SIM_ANOM_MD ? e->md.at_ns : e->dl.busy_ns)),
                          "%s does not draw the %s its history has", page,
                          sim_anomaly_name(e->kind));
    }
    while (site_next("anomaly", page, &at) != NULL)
        n++;
    ck_assert_msg(n == v->n_episodes, "%s draws %zu episodes; its history has %zu",
                  page, n, v->n_episodes);
}

/* Every interval a sentence of the page names, "[790 ms, 938 ms]", is
 * drawn as an ME interval. */
static void check_sentences(const char *page)
{
    const site_fact *s;
    size_t at = 0, told = 0;

    while ((s = site_next("verdict", page, &at)) != NULL) {
        told++;
        for (const char *p = s->f[2]; (p = strchr(p, '[')) != NULL; p++) {
            long from, to;

            if (sscanf(p, "[%ld ms, %ld ms]", &from, &to) == 2)
                ck_assert_msg(drawn(page, "ME", from, to, -1),
                              "%s says \"%.40s\" but draws no such interval", page, p);
        }
    }
    ck_assert_msg(told > 0, "%s tells no verdict", page);
}

/* One lane for the lock key on each node that can hold it: five for a
 * majority of independent masters, so that the vote can be seen; in
 * each, every time its node was down, as the terminal's ':'. */
static void check_key_lanes(const char *page, const sim_run_info *info)
{
    int nodes = info->nodes > 0 ? info->nodes : 1;
    size_t at = 0, lanes = 0;
    const site_fact *k;

    while ((k = site_next("keylane", page, &at)) != NULL) {
        int node = atoi(k->f[2]);

        lanes++;
        ck_assert_msg(k->n > 4 && node >= 0 && node < SIM_HISTORY_NODES_MAX &&
                      atoi(k->f[4]) == downs[node], "%s draws node %d down %s times; "
                      "its history has it go down %d times", page, node,
                      k->n > 4 ? k->f[4] : "no", node >= 0 &&
                      node < SIM_HISTORY_NODES_MAX ? downs[node] : -1);
    }
    ck_assert_msg(lanes == (size_t)nodes, "%s draws %zu lanes for the lock key; "
                  "its history has %d node%s", page, lanes, nodes, nodes == 1 ? "" : "s");
}

static void check_run(const char *page)
{
    const site_fact *svg = one("svg", page), *l;
    size_t at = 0, lanes = 0;
    sim_run_info info;
    sim_verdict v;
    int unreachable;

    ck_assert_msg(svg != NULL, "%s has no timeline", page);
    ck_assert_msg(atoi(svg->f[3]) > 400 && atoi(svg->f[4]) > 150,
                  "%s's timeline is drawn %sx%s px; expected a picture", page,
                  svg->f[3], svg->f[4]);
    if (judge(page, &info, &v, &unreachable) != 0)
        return;
    while ((l = site_next("lane", page, &at)) != NULL) {
        lanes++;
        ck_assert_msg(atoi(l->f[3]) > 100 && atoi(l->f[4]) > 10,
                      "%s: client %s's lane is drawn %sx%s px", page, l->f[2],
                      l->f[3], l->f[4]);
    }
    ck_assert_msg(lanes == (size_t)info.clients && atoi(svg->f[2]) == info.clients,
                  "%s draws %zu client lanes; its history has %d clients", page,
                  lanes, info.clients);
    check_key_lanes(page, &info);
    check_episodes(page, &v);
    check_sentences(page);
    sim_verdict_free(&v);
}

/* No label of a run's picture covers another: every word on it can be
 * read where it is drawn, without a tooltip. */
START_TEST(test_site_labels_apart)
{
    const site_fact *o;
    size_t at = 0, n = 0;
    char first[512] = "";

    while ((o = site_next("overlap", NULL, &at)) != NULL)
        if (n++ == 0 && o->n > 5)
            snprintf(first, sizeof(first), "%s: \"%s\" and \"%s\" cover %sx%s px",
                     o->f[1], o->f[2], o->f[3], o->f[4], o->f[5]);
    ck_assert_msg(n == 0, "%zu pairs of labels cover each other; the first: %s", n, first);
}
END_TEST

START_TEST(test_site_run_timelines)
{
    size_t runs = 0;

    for (size_t i = 0; i < the_site.n_pages; i++)
        if (strncmp(the_site.pages[i], "runs/", 5) == 0) {
            check_run(the_site.pages[i]);
            runs++;
        }
    ck_assert_msg(runs == sim_scenario_count() * (size_t)stages_listed(),
                  "the site has %zu run pages; expected one per cell, %zu", runs,
                  sim_scenario_count() * (size_t)stages_listed());
}
END_TEST

/* ---- the stages and the screenshots --------------------------------------------------- */

START_TEST(test_site_stage_pages)
{
    for (int s = 1; s <= SIM_STAGES; s++) {
        const sim_stage *st = sim_stage_get(s);
        char page[PATH_MAX];
        const site_fact *h, *d;

        if (st == NULL)
            continue; /* a number the list skips has no page */
        snprintf(page, sizeof(page), "stages/%s.html", st->dir);
        h = one("readme", page);
        ck_assert_msg(h != NULL && strncmp(h->f[2], st->dir, strlen(st->dir)) == 0,
                      "%s does not show %s's README", page, st->dir);
        d = one("diff", page);
        if (st->base != 0)
            ck_assert_msg(d != NULL && atoi(d->f[2]) > 0,
                          "%s shows no changed line against %s", page,
                          sim_stage_name(st->base));
    }
}
END_TEST

START_TEST(test_site_screenshots_not_blank)
{
    static const char *const shots[] = { "matrix.png", "run.png" };

    for (size_t i = 0; i < 2; i++) {
        const site_fact *p = one("png", shots[i]);
        double changed;

        ck_assert_msg(p != NULL, "no screenshot %s was read", shots[i]);
        ck_assert_msg(atoi(p->f[2]) == SITE_SHOT_W && atoi(p->f[3]) == SITE_SHOT_H,
                      "%s/%s is %sx%s px; expected %dx%d", the_site.dir, shots[i],
                      p->f[2], p->f[3], SITE_SHOT_W, SITE_SHOT_H);
        changed = atof(p->f[4]) / ((double)SITE_SHOT_W * SITE_SHOT_H);
        ck_assert_msg(changed >= MIN_CHANGED,
                      "%s/%s is blank: %.1f%% of its pixels differ from the first; "
                      "expected at least %.0f%%", the_site.dir, shots[i], changed * 100,
                      MIN_CHANGED * 100);
    }
}
END_TEST

/* ---- the PDF ------------------------------------------------------------------------- */

/* The text of the PDF's page k (from 0), into a buffer of the test's; ""
 * past the last. */
static const char *pdf_page(size_t k, char *buf, size_t len)
{
    const char *p = the_site.pdf_text;
    size_t n;

    for (; k > 0 && (p = strchr(p, '\f')) != NULL; k--)
        p++;
    n = p != NULL ? strcspn(p, "\f") : 0;
    snprintf(buf, len, "%.*s", (int)n, p != NULL ? p : "");
    return buf;
}

static size_t pdf_pages(void)
{
    size_t n = 0;

    for (const char *p = the_site.pdf_text; (p = strchr(p, '\f')) != NULL; p++)
        n++;
    return n;
}

/* The first page from k on whose text has want; SIZE_MAX: none. */
static size_t pdf_find(size_t k, const char *want, char *buf, size_t len)
{
    for (size_t n = pdf_pages(); k < n; k++)
        if (strstr(pdf_page(k, buf, len), want) != NULL)
            return k;
    return SIZE_MAX;
}

/* White space as single blanks: pdftotext breaks a line where the page
 * did. */
static char *flat(char *s)
{
    size_t k = 0;

    for (size_t i = 0; s[i] != '\0'; i++) {
        char c = isspace((unsigned char)s[i]) ? ' ' : s[i];

        if (!(c == ' ' && k > 0 && s[k - 1] == ' '))
            s[k++] = c;
    }
    s[k] = '\0';
    return s;
}

/* make report's handout: the matrix and its legend whole on the first
 * page, then the story of each row with its cells' evidence, at most two
 * pages a row; text, not pictures of text. Runs and stages stay on the
 * site. */
START_TEST(test_site_pdf_is_the_handout)
{
    static const char *const legend[] = { "mutual exclusion lost", "the fence held",
                                          "the fence failed", "differs from the answer key" };
    static char page[64 * 1024];
    char title[128];
    size_t rows = sim_scenario_count();

    ck_assert_msg(the_site.pdf_there, "%s/lockstep.pdf is missing: make report found a "
                  "browser, so it should have printed the site", the_site.dir);
    if (the_site.pdf_text == NULL)
        return; /* said in one line: no pdftotext */
    ck_assert_msg(pdf_pages() >= 2 && pdf_pages() <= 1 + 2 * rows, "lockstep.pdf has %zu "
                  "pages; expected the matrix, then the stories of %zu rows, two pages a row "
                  "at most", pdf_pages(), rows);
    flat((char *)pdf_page(0, page, sizeof(page)));
    ck_assert_msg(strstr(page, "The fault matrix") != NULL &&
                  strstr(page, "cells match the answer key") != NULL,
                  "lockstep.pdf does not open with the matrix: %.200s", page);
    for (size_t i = 0; i < rows; i++)
        ck_assert_msg(strstr(page, sim_scenario_at(i)->name) != NULL, "the matrix's row %s "
                      "is not on the PDF's first page", sim_scenario_at(i)->name);
    for (int s = 1; s <= SIM_STAGES; s++) {
        snprintf(title, sizeof(title), " v%d ", s);
        ck_assert_msg(strstr(page, title) != NULL, "the matrix's column v%d is not on the "
                      "PDF's first page", s);
    }
    for (size_t i = 0; i < sizeof(legend) / sizeof(legend[0]); i++)
        ck_assert_msg(strstr(page, legend[i]) != NULL, "the matrix's legend is not whole on "
                      "the PDF's first page: it lacks \"%s\"", legend[i]);
    for (size_t i = 0; i < rows; i++)
        ck_assert_msg(pdf_find(1, sim_scenario_at(i)->name, page, sizeof(page)) != SIZE_MAX,
                      "lockstep.pdf tells no story of the row %s after the matrix",
                      sim_scenario_at(i)->name);
}
END_TEST

Suite *site_suite(void)
{
    const TTest *page_tests[] = {
        test_site_every_page_loaded, test_site_no_console_errors, test_site_links_resolve,
        test_site_screenshots_not_blank,
    };
    const TTest *content_tests[] = {
        test_site_matrix_cells, test_site_fence_held_looks_unlike_a_lost_sale,
        test_site_matrix_fits_a_screen, test_site_run_timelines, test_site_labels_apart,
        test_site_stage_pages, test_site_pdf_is_the_handout,
    };
    Suite *s = suite_create("site");
    TCase *content;

    ADD_TCASE(s, "pages", page_tests);
    content = ADD_TCASE(s, "content", content_tests);
    /* Reading 54 histories again takes a moment under a sanitizer. */
    tcase_set_timeout(content, 60);
    return s;
}
