/* html_stage: a stage's page: its README, rendered; its column of the
 * matrix; and what it changed on the stage it is built on (its base in
 * sim/stages.def), side by side, as `make diff to=N side=1` shows it. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_internal.h"

/* The stage's column: each scenario's marks, linked to its run. */
static void column(FILE *f, int stage, const sim_html_run *runs, size_t n)
{
    fputs("<h2 id=\"in-the-matrix\">In the fault matrix</h2>\n"
          "<table class=\"md\"><tr><th>scenario</th><th>marks</th>"
          "<th>answer key</th></tr>\n", f);
    for (size_t i = 0; i < n; i++) {
        const sim_matrix_cell *c = &runs[i].cell;
        char name[SIM_HTML_PATH], seen[32], want[32];

        if (c->stage != stage)
            continue;
        sim_html_run_name(name, sizeof(name), stage, c->scenario);
        sim_report_marks_format(sim_report_cell_marks(c), seen, sizeof(seen));
        sim_anomaly_format(c->expected & SIM_ANOM_CELLS, want, sizeof(want));
        fprintf(f, "<tr><td><a href=\"../runs/%s.html\">", name);
        sim_html_esc(f, c->scenario);
        fprintf(f, "</a></td><td>%s%s%s</td><td>%s</td></tr>\n",
                c->unreachable ? "(" : "", seen, c->unreachable ? ")" : "", want);
    }
    fputs("</table>\n", f);
}

/* What the stage changed on its base, or why there is nothing to show. */
static int changes(FILE *f, const char *src, const sim_stage *st,
                   char *errstr, size_t len)
{
    fputs("<h2 id=\"what-changed-in-the-code\">", f);
    if (st->base == 0) {
        fputs("The code</h2>\n<p>The first stage, built on no other: every "
              "line of it is new.</p>\n", f);
        return 0;
    }
    sim_html_escf(f, "What it changed on %s", sim_stage_name(st->base));
    fputs("</h2>\n<p>The same as <code>", f);
    sim_html_escf(f, "make diff from=%d to=%d side=1", st->base, st->n);
    fputs("</code>: the changed regions of each file with the lines around "
          "them, and the whole files below them.</p>\n", f);
    return sim_html_diff(f, src, st->n, errstr, len);
}

/* Links to the stages before and after it, as the list has them: a
 * number the list skips is stepped over. */
static void neighbours(FILE *f, int stage)
{
    int prev = stage, next = stage;

    while (--prev >= 1 && sim_stage_get(prev) == NULL)
        ;
    fputs("<p>", f);
    if (prev >= 1) {
        fputs("<a href=\"", f);
        sim_html_esc(f, sim_stage_name(prev));
        fputs(".html\">\u2190 ", f);
        sim_html_esc(f, sim_stage_name(prev));
        fputs("</a> &middot; ", f);
    }
    fputs("<a href=\"#in-the-matrix\">its column of the matrix</a> &middot; "
          "<a href=\"#what-changed-in-the-code\">its diff</a>", f);
    while (++next <= SIM_STAGES && sim_stage_get(next) == NULL)
        ;
    if (next <= SIM_STAGES) {
        fputs(" &middot; <a href=\"", f);
        sim_html_esc(f, sim_stage_name(next));
        fputs(".html\">", f);
        sim_html_esc(f, sim_stage_name(next));
        fputs(" \u2192</a>", f);
    }
    fputs("</p>\n", f);
}

int sim_html_stage_page(const char *dir, const char *src, int stage,
                        const sim_html_run *runs, size_t n, char *errstr,
                        size_t len)
{
    const sim_stage *st = sim_stage_get(stage);
    char path[SIM_HTML_PATH], readme[SIM_HTML_PATH], name[SIM_NAME_LEN + 8];
    char folder[SIM_NAME_LEN + 2];
    size_t size;
    char *text;
    FILE *f;
    int rc;

    snprintf(readme, sizeof(readme), "%s/%s/README.md", src, st->dir);
    if ((text = sim_html_slurp(readme, &size, errstr, len)) == NULL)
        return -1;
    snprintf(name, sizeof(name), "%s.html", st->dir);
    if ((f = sim_html_create(dir, name, path, sizeof(path), errstr, len)) == NULL) {
        free(text);
        return -1;
    }
    sim_html_head(f, st->dir, "../");
    neighbours(f, stage);
    fputs("<article class=\"readme\">\n", f);
    snprintf(folder, sizeof(folder), "%s/", st->dir);
    sim_html_markdown(f, text, sim_html_repo_link, folder);
    fputs("</article>\n", f);
    column(f, stage, runs, n);
    rc = changes(f, src, st, errstr, len);
    sim_html_foot(f);
    free(text);
    if (rc != 0) {
        fclose(f);
        return -1;
    }
    return sim_html_close(f, path, errstr, len);
}
