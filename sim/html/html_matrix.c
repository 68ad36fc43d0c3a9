/* html_matrix: index.html, the fault matrix: a row per scenario of the
 * table, a column per stage of the list, each cell coloured by its marks
 * and linked to its run, with its evidence on hover and under the grid;
 * the story of each row, read from docs/matrix.md (one copy of that
 * prose); and how the matrix was played. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "html_internal.h"

#define MATRIX_CAP 3 /* episodes of a kind per cell, as the terminal's matrix */

static int cell_matches(const sim_matrix_cell *c)
{
    return (c->observed & SIM_ANOM_CELLS) == (c->expected & SIM_ANOM_CELLS);
}

/* ---- the stories, from docs/matrix.md ------------------------------------------------ */

const char *sim_html_story(const char *readme, const char *scenario,
                           size_t *n)
{
    char head[SIM_NAME_LEN + 16];
    const char *at = readme, *end;

    snprintf(head, sizeof(head), "- **%s.**", scenario);
    while ((at = strstr(at, head)) != NULL && at != readme && at[-1] != '\n')
        at += strlen(head);
    if (at == NULL)
        return NULL;
    at += strlen(head);
    /* The item goes on while its lines are indented under it. */
    for (end = at; *end != '\0'; end++)
        if (end[0] == '\n' && strncmp(end + 1, "  ", 2) != 0)
            break;
    *n = (size_t)(end - at);
    return at;
}

/* ---- a cell ----------------------------------------------------------------------- */

static const sim_html_run *find(const sim_html_run *runs, size_t n,
                                const char *scenario, int stage)
{
    for (size_t i = 0; i < n; i++)
        if (runs[i].cell.stage == stage && strcmp(runs[i].cell.scenario, scenario) == 0)
            return &runs[i];
    return NULL;
}

/* One line of a cell's evidence: in its tooltip (plain text, a line
 * each) or in the list under the grid (a badge, then the words). */
static void say(FILE *f, int tip, const char *code, const char *text)
{
    if (tip) {
        sim_html_escf(f, "%s%s%s\n", code, code[0] ? ": " : "", text);
        return;
    }
    fputs("<br>", f);
    if (code[0] != '\0')
        fprintf(f, "<span class=\"mark %s\">%s</span> ", sim_html_mark_class(code), code);
    sim_html_esc(f, text);
}

/* The cell's episodes, MATRIX_CAP of a kind, in the matrix's short
 * sentences, as the terminal's matrix lists them. */
static void episodes(FILE *f, const sim_matrix_cell *c, int tip)
{
    static const unsigned kinds[] = { SIM_ANOM_ME, SIM_ANOM_MD, SIM_ANOM_DL, SIM_ANOM_ST };
    const sim_verdict *v = c->verdict;
    char s[SIM_REPORT_SENTENCE];

    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        size_t told = 0, all = sim_verdict_count(v, kinds[k]);

        for (size_t i = 0; i < v->n_episodes && told < MATRIX_CAP; i++) {
            if (v->episodes[i].kind != kinds[k])
                continue;
            sim_report_brief(s, sizeof(s), &v->episodes[i], c->t0_ns);
            say(f, tip, sim_anomaly_name(kinds[k]), s);
            told++;
        }
        if (all > told) {
            snprintf(s, sizeof(s), "and %zu more like it", all - told);
            say(f, tip, "", s);
        }
    }
}

/* The fence's work: the writes the resource refused (F), and two
 * holders with one token (T). */
static void fence(FILE *f, const sim_matrix_cell *c, int tip)
{
    const sim_verdict *v = c->verdict;
    char s[SIM_REPORT_SENTENCE];
    size_t i;

    for (i = 0; i < v->n_refusals && i < MATRIX_CAP; i++) {
        sim_report_refusal_brief(s, sizeof(s), &v->refusals[i], c->t0_ns);
        say(f, tip, "F", s);
    }
    if (v->n_refusals > i) {
        snprintf(s, sizeof(s), "and %zu more like it", v->n_refusals - i);
        say(f, tip, "", s);
    }
    if (v->token_clash) {
        sim_report_clash_brief(s, sizeof(s), &v->clash, c->t0_ns);
        say(f, tip, "T", s);
    }
}

/* Everything the terminal's matrix says of a cell. */
static void evidence(FILE *f, const sim_matrix_cell *c, int tip)
{
    const sim_verdict *v = c->verdict;
    char s[SIM_REPORT_SENTENCE], want[32];

    if (v != NULL)
        episodes(f, c, tip);
    if (v != NULL && (v->anomalies & SIM_ANOM_UNJUDGED)) {
        sim_report_put(s, sizeof(s), "cannot judge: %s", v->why);
        say(f, tip, "?", s);
    }
    if (v != NULL && (v->anomalies & SIM_ANOM_LU)) {
        sim_report_stock(s, sizeof(s), v);
        say(f, tip, "LU", s);
    }
    if (v != NULL)
        fence(f, c, tip);
    if (!cell_matches(c)) {
        sim_anomaly_format(c->expected & SIM_ANOM_CELLS, want, sizeof(want));
        snprintf(s, sizeof(s), "differs from the answer key, which says %s", want);
        say(f, tip, "!", s);
    }
}

static void cell(FILE *f, const sim_html_run *r)
{
    const sim_matrix_cell *c = &r->cell;
    char cls[64], set[32], name[SIM_HTML_PATH];
    unsigned marks = sim_report_cell_marks(c);

    sim_html_mark_classes(cls, sizeof(cls), marks);
    sim_report_marks_format(marks, set, sizeof(set));
    sim_html_run_name(name, sizeof(name), c->stage, c->scenario);
    fprintf(f, "<td class=\"cell %s%s%s\" data-stage=\"%d\" data-scenario=\"",
            cls, c->unreachable ? " unreachable" : "", cell_matches(c) ? "" : " differs",
            c->stage);
    sim_html_esc(f, c->scenario);
    fprintf(f, "\" data-marks=\"%s\" title=\"", set);
    evidence(f, c, 1);
    fputs("\"><a href=\"runs/", f);
    sim_html_esc(f, name);
    fputs(".html\">", f);
    sim_html_marks(f, marks, c->unreachable);
    fputs("</a>", f);
    if (!cell_matches(c))
        fputs("<span class=\"differs-mark\">!</span>", f);
    fputs("</td>\n", f);
}

/* ---- the grid ------------------------------------------------------------------------ */

/* 1 when runs[i] is the first of its scenario: it opens a row. */
static int opens_row(const sim_html_run *runs, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (strcmp(runs[j].cell.scenario, runs[i].cell.scenario) == 0)
            return 0;
    return 1;
}

/* The first run from runs[from] on that opens a row, or n: the grid and
 * the stories walk the rows by it. */
static size_t next_row(const sim_html_run *runs, size_t n, size_t from)
{
    while (from < n && !opens_row(runs, from))
        from++;
    return from;
}

static void grid_head(FILE *f)
{
    fputs("<table class=\"matrix\">\n<thead><tr><th>scenario</th>\n", f);
    for (int s = 1; s <= SIM_STAGES; s++) {
        const char *dir = sim_stage_name(s), *idea = strchr(dir, '-');

        if (sim_stage_get(s) == NULL)
            continue; /* a number the stage list skips */
        fputs("<th class=\"stage\"><a href=\"stages/", f);
        sim_html_esc(f, dir);
        fprintf(f, ".html\">v%d<small>", s);
        sim_html_esc(f, idea != NULL ? idea + 1 : dir);
        fputs("</small></a></th>\n", f);
    }
    fputs("</tr></thead>\n<tbody>\n", f);
}

/* The row that runs[i] opens: its scenario, a link to its story, and a
 * cell per stage. */
static void grid_row(FILE *f, const sim_html_run *runs, size_t n, size_t i)
{
    const char *sc = runs[i].cell.scenario;

    fputs("<tr><th class=\"row\" scope=\"row\"><a href=\"#row-", f);
    sim_html_esc(f, sc);
    fputs("\">", f);
    sim_html_esc(f, sc);
    fputs("</a><small>", f);
    sim_html_esc(f, runs[i].info->what);
    fputs("</small></th>\n", f);
    for (int s = 1; s <= SIM_STAGES; s++) {
        const sim_html_run *r = find(runs, n, sc, s);

        if (sim_stage_get(s) == NULL)
            continue;
        if (r != NULL)
            cell(f, r);
        else
            fputs("<td class=\"cell unjudged\">not played</td>\n", f);
    }
    fputs("</tr>\n", f);
}

static void grid(FILE *f, const sim_html_run *runs, size_t n)
{
    grid_head(f);
    for (size_t i = next_row(runs, n, 0); i < n; i = next_row(runs, n, i + 1))
        grid_row(f, runs, n, i);
    fputs("</tbody>\n</table>\n", f);
}

/* The terminal matrix's legend, word for word. */
static void legend(FILE *f)
{
    const char *mark, *meaning;

    fputs("<dl class=\"legend\">\n", f);
    for (size_t i = 0; (meaning = sim_report_matrix_legend(i, &mark)) != NULL; i++) {
        fprintf(f, "<dt><span class=\"mark %s\">", sim_html_mark_class(mark));
        sim_html_esc(f, mark);
        fputs("</span></dt><dd>", f);
        sim_html_esc(f, meaning);
        fputs("</dd>\n", f);
    }
    fputs("</dl>\n", f);
}

/* ---- how it was played ---------------------------------------------------------- */

static void param(FILE *f, const char *name, const char *value)
{
    fputs("<tr><th>", f);
    sim_html_esc(f, name);
    fputs("</th><td>", f);
    sim_html_esc(f, value[0] != '\0' ? value : "unknown");
    fputs("</td></tr>\n", f);
}

static void about(FILE *f, const sim_html_about *a)
{
    char buf[160];
    time_t now = time(NULL);
    struct tm tm;

    fputs("<table class=\"params\">\n", f);
    snprintf(buf, sizeof(buf), "%ld ms", a->lease_ms);
    param(f, "lease", buf);
    snprintf(buf, sizeof(buf), "%u", a->seed);
    param(f, "seed", buf);
    param(f, "failover", a->sentinel ? "a real redis-sentinel promotes the replica"
          : "the simulator promotes the replica");
    snprintf(buf, sizeof(buf), "%d cells at once, %.1f s in all", a->jobs, a->seconds);
    param(f, "played", buf);
    param(f, "redis-server", a->redis != NULL ? a->redis : "");
    param(f, "build", a->build != NULL ? a->build : "");
    strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M %Z", localtime_r(&now, &tm));
    param(f, "date", buf);
    fputs("</table>\n", f);
}

/* ---- the rows' stories -------------------------------------------------------------- */

/* A row's cells that found something, in the matrix's short sentences. */
static void row_evidence(FILE *f, const sim_html_run *runs, size_t n,
                         const char *scenario)
{
    fputs("<ul class=\"evidence\">\n", f);
    for (int s = 1; s <= SIM_STAGES; s++) {
        const sim_html_run *r = find(runs, n, scenario, s);
        char name[SIM_HTML_PATH];

        if (r == NULL || (sim_report_cell_marks(&r->cell) == 0 && cell_matches(&r->cell)))
            continue;
        sim_html_run_name(name, sizeof(name), s, scenario);
        fprintf(f, "<li><a href=\"runs/%s.html\">v%d</a>: ", name, s);
        evidence(f, &r->cell, 0);
        fputs("</li>\n", f);
    }
    fputs("</ul>\n", f);
}

/* The story of the row that runs[i] opens, as docs/matrix.md tells it, and
 * the evidence of its cells. */
static void row_story(FILE *f, const char *readme, const sim_html_run *runs, size_t n,
                      size_t i)
{
    const char *sc = runs[i].cell.scenario, *story;
    size_t len = 0;

    fputs("<section class=\"story\" id=\"row-", f);
    sim_html_esc(f, sc);
    fputs("\">\n<h3>", f);
    sim_html_esc(f, sc);
    fputs("</h3>\n", f);
    story = readme != NULL ? sim_html_story(readme, sc, &len) : NULL;
    if (story != NULL) {
        fputs("<p>", f);
        sim_html_inline(f, story, len, NULL, NULL);
    } else {
        /* Said, not hidden: the page of stories lacks a row. */
        fputs("<p class=\"no-story\">" SIM_HTML_STORIES " tells no story of this row; "
              "the scenario shows that ", f);
        sim_html_esc(f, runs[i].info->what);
    }
    fputs("</p>\n", f);
    row_evidence(f, runs, n, sc);
    fputs("</section>\n", f);
}

static void stories(FILE *f, const char *readme, const sim_html_run *runs,
                    size_t n)
{
    fputs("<h2>The story of each row</h2>\n", f);
    for (size_t i = next_row(runs, n, 0); i < n; i = next_row(runs, n, i + 1))
        row_story(f, readme, runs, n, i);
}

/* ---- the page ----------------------------------------------------------------------- */

int sim_html_matrix_page(const char *dir, const char *src,
                         const sim_html_about *a, const sim_html_run *runs,
                         size_t n, char *errstr, size_t len)
{
    char path[SIM_HTML_PATH], readme_path[SIM_HTML_PATH];
    size_t matched = 0, size;
    char *readme;
    FILE *f;

    snprintf(readme_path, sizeof(readme_path), "%s/" SIM_HTML_STORIES, src);
    if ((readme = sim_html_slurp(readme_path, &size, errstr, len)) == NULL)
        return -1;
    if ((f = sim_html_create(dir, "index.html", path, sizeof(path), errstr, len)) == NULL) {
        free(readme);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        matched += cell_matches(&runs[i].cell);
    sim_html_head(f, "lockstep: the fault matrix", "");
    fprintf(f, "<h1>The fault matrix</h1>\n<p class=\"lead\">Every scenario against "
            "every stage, each a real run judged from its history. A cell links to its "
            "run<span class=\"screen-only\">; hover over it for the evidence</span>"
            "<span class=\"print-only\">; its evidence is listed under its row's "
            "story</span>. <span class=\"match%s\" "
            "data-matched=\"%zu\" data-cells=\"%zu\">%zu/%zu cells match the answer "
            "key</span>.</p>\n", matched == n ? "" : " bad", matched, n, matched, n);
    grid(f, runs, n);
    legend(f);
    about(f, a);
    /* Written by make report after this page: print.html always, the
     * PDF where a headless Chromium prints it. */
    fputs("<p class=\"screen-only\">To print: <a href=\"print.html\">the handout</a>, "
          "this matrix and its legend on one sheet, then the rows' stories (make report "
          "also prints it to "
          "<code>lockstep.pdf</code> here, where it finds a headless Chromium).</p>\n", f);
    stories(f, readme, runs, n);
    sim_html_foot(f);
    free(readme);
    return sim_html_close(f, path, errstr, len);
}
