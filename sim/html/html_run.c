/* html_run: a run's page: its marks against the answer key, its
 * timeline as a picture, the verdict in the very sentences the terminal
 * prints, and its history saved next to it for `sim check`. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_internal.h"

/* What this cell shows, and what the answer key says of it. */
static void marks_line(FILE *f, const sim_matrix_cell *c)
{
    char want[32];
    unsigned seen = c->observed & SIM_ANOM_CELLS;
    int match = seen == (c->expected & SIM_ANOM_CELLS);

    sim_anomaly_format(c->expected & SIM_ANOM_CELLS, want, sizeof(want));
    fputs("<p class=\"lead\">This run: ", f);
    sim_html_marks(f, sim_report_cell_marks(c), c->unreachable);
    fprintf(f, " &nbsp; <span class=\"match%s\" data-match=\"%s\">", match ? "" : " bad",
            match ? "yes" : "no");
    sim_html_escf(f, match ? "as the answer key says (%s)"
                  : "differs from the answer key, which says %s", want);
    fputs("</span></p>\n", f);
}

/* The class of a line of the account: what colours its item. */
static const char *line_class(const sim_report_line *line)
{
    if (line->kind & (SIM_ANOM_ME | SIM_ANOM_MD | SIM_ANOM_DL | SIM_ANOM_ST | SIM_REPORT_CLASH))
        return "bad";
    if (line->kind == SIM_REPORT_REFUSAL)
        return "fence";
    if (line->kind == SIM_REPORT_RELEASE)
        return "release";
    return strcmp(line->heading, "no anomaly") == 0 ? "clean" : "note";
}

/* One line of the account (sim_report_account, as the terminal prints
 * it), as a list item: its heading in bold; an episode's kind and time
 * as data, for the picture above to be checked against. */
typedef struct page_list {
    FILE *f;
    int64_t t0_ns;
} page_list;

static void item(const sim_report_line *line, void *arg)
{
    const page_list *p = arg;
    FILE *f = p->f;

    fprintf(f, "<li class=\"%s\"", line_class(line));
    if (line->kind & SIM_ANOM_CELLS)
        fprintf(f, " data-kind=\"%s\"", sim_anomaly_name(line->kind));
    if (line->kind != SIM_REPORT_NOTE)
        fprintf(f, " data-at=\"%ld\"", sim_report_ms(line->at_ns, p->t0_ns));
    fputs(">", f);
    if (line->heading[0] != '\0') {
        fputs("<strong>", f);
        sim_html_esc(f, line->heading);
        fputs("</strong>: ", f);
    }
    sim_html_esc(f, line->text);
    fputs("</li>\n", f);
}

/* The verdict in the terminal's sentences, and the terminal's drawing
 * on request. */
static void account(FILE *f, const sim_html_run *r)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    page_list p = { f, r->cell.t0_ns };

    fputs("<h2>What the checker found</h2>\n<ul class=\"verdict\">\n", f);
    sim_report_account(r->info, r->cell.verdict, r->ev, r->n, r->cell.t0_ns, item, &p);
    fputs("</ul>\n", f);
    if (mem == NULL)
        return;
    sim_report_timeline(mem, r->ev, r->n, r->cell.t0_ns, r->info->clients,
                        r->info->lease_ms, r->cell.verdict);
    fclose(mem);
    fputs("<details><summary>The same run as the terminal draws it "
          "(<code>make sim</code>)</summary>\n<pre>", f);
    sim_html_esc(f, text);
    fputs("</pre></details>\n", f);
    free(text);
}

static void params(FILE *f, const sim_html_run *r, const char *history,
                   const char *dir)
{
    const sim_run_info *in = r->info;

    fputs("<table class=\"params\">\n", f);
    fprintf(f, "<tr><th>lease</th><td>%ld ms</td></tr>\n", in->lease_ms);
    fprintf(f, "<tr><th>seed</th><td>%lu</td></tr>\n", in->seed);
    fprintf(f, "<tr><th>clients</th><td>%d</td></tr>\n", in->clients);
    if (in->failpoint[0] != '\0') {
        fputs("<tr><th>failpoint</th><td><code>", f);
        sim_html_esc(f, in->failpoint);
        fputs("</code></td></tr>\n", f);
    }
    fputs("<tr><th>history</th><td><a href=\"", f);
    sim_html_esc(f, history);
    fputs("\">", f);
    sim_html_esc(f, history);
    fputs("</a>: JSON lines, one event a line; judge it again with "
          "<code>build/sim/sim check ", f);
    sim_html_escf(f, "%s/%s", dir, history);
    fputs("</code></td></tr>\n</table>\n", f);
}

static void body(FILE *f, const sim_html_run *r, int in_site,
                 const char *history, const char *dir)
{
    const sim_run_info *in = r->info;

    fputs("<h1>", f);
    sim_html_escf(f, "%s / %s", in->stage, in->scenario);
    fputs("</h1>\n<p class=\"lead\">", f);
    sim_html_esc(f, in->what);
    fputs("</p>\n", f);
    if (in_site) {
        fputs("<p><a href=\"../index.html#row-", f);
        sim_html_esc(f, in->scenario);
        fputs("\">\u2190 this row of the matrix, and its story</a> &middot; "
              "<a href=\"../stages/", f);
        sim_html_esc(f, in->stage);
        fputs(".html\">the stage: its README and its diff</a></p>\n", f);
    }
    marks_line(f, &r->cell);
    fputs("<figure class=\"timeline\">\n", f);
    sim_html_timeline(f, r);
    fputs("</figure>\n", f);
    account(f, r);
    params(f, r, history, dir);
}

int sim_html_write_run(const char *dir, const sim_html_run *r, int in_site,
                       char *path, size_t plen, char *errstr, size_t len)
{
    char base[SIM_NAME_LEN + 8], page[SIM_HTML_PATH], history[SIM_NAME_LEN + 16];
    char title[SIM_NAME_LEN * 2 + 8];
    FILE *f;

    sim_html_run_name(base, sizeof(base), r->cell.stage, r->cell.scenario);
    snprintf(history, sizeof(history), "%s.jsonl", base);
    sim_report_put(page, sizeof(page), "%s/%s", dir, history);
    if (sim_history_save_run(page, r->info, r->ev, r->n, r->cell.t0_ns, errstr,
                             len) != 0)
        return -1;
    snprintf(page, sizeof(page), "%s.html", base);
    if ((f = sim_html_create(dir, page, path, plen, errstr, len)) == NULL)
        return -1;
    sim_report_put(title, sizeof(title), "%s / %s", r->info->stage, r->info->scenario);
    sim_html_head(f, title, in_site ? "../" : NULL);
    body(f, r, in_site, history, dir);
    sim_html_foot(f);
    return sim_html_close(f, path, errstr, len);
}
