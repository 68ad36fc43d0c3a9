/* html_run: a run's page: its marks against the answer key, its
 * timeline as a picture, the verdict in the very sentences the terminal
 * prints, and its history saved next to it for `sim check`. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_internal.h"

#define ITEM (SIM_REPORT_SENTENCE * 4) /* one sentence, its parts joined */

/* What this cell shows, and what the answer key says of it. */
static void marks_line(FILE *f, const sim_matrix_cell *c)
{
    char want[32];
    unsigned seen = c->observed & SIM_ANOM_CELLS;
    int match = seen == (c->expected & SIM_ANOM_CELLS);

    sim_anomaly_format(c->expected & SIM_ANOM_CELLS, want, sizeof(want));
    fputs("<p class=\"lead\">This run: ", f);
    sim_html_marks(f, seen, c->unreachable);
    fprintf(f, " &nbsp; <span class=\"match%s\" data-match=\"%s\">", match ? "" : " bad",
            match ? "yes" : "no");
    sim_html_escf(f, match ? "as the answer key says (%s)"
                  : "differs from the answer key, which says %s", want);
    fputs("</span></p>\n", f);
}

/* One item of the terminal's account, as a list item: a heading before
 * its first ": " (one without digits, "mutual exclusion lost") in bold. */
static void item(FILE *f, const char *text)
{
    const char *colon = strstr(text, ": ");
    size_t head = colon != NULL ? (size_t)(colon - text) : 0;

    fputs("<li>", f);
    if (head > 0 && head < 40 && strcspn(text, "0123456789") > head) {
        fputs("<strong>", f);
        sim_html_escn(f, text, head);
        fputs("</strong>", f);
        text += head;
    }
    sim_html_esc(f, text);
    fputs("</li>\n", f);
}

/* The terminal's account of the run (sim_report_run), as items: its
 * lines up to the first blank one, each sentence joined again.
 * sim_report_wrapped breaks a line only at a blank and indents what it
 * continues deeper than the line it began, so joining with one blank
 * gives the sentence back. The first item, the title, is the page's
 * heading already. Returns where the timeline begins. */
static const char *sentences(FILE *f, const char *text)
{
    char cur[ITEM] = "";
    int n = 0;

    while (*text != '\0' && *text != '\n') {
        size_t len = strcspn(text, "\n"), ind = strspn(text, " ");

        if (ind <= 2) {
            if (n++ > 1)
                item(f, cur);
            cur[0] = '\0';
        }
        snprintf(cur + strlen(cur), sizeof(cur) - strlen(cur), "%s%.*s",
                 cur[0] ? " " : "", (int)(len - ind), text + ind);
        text += len + (text[len] == '\n');
    }
    if (n > 1)
        item(f, cur);
    return *text == '\n' ? text + 1 : text;
}

/* The verdict in sentences, and the terminal's drawing on request. */
static void account(FILE *f, const sim_html_run *r)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    const char *rest;

    if (mem == NULL)
        return;
    sim_report_run(mem, r->info, r->ev, r->n, r->cell.t0_ns, r->cell.verdict);
    fclose(mem);
    fputs("<h2>What the checker found</h2>\n<ul class=\"verdict\">\n", f);
    rest = sentences(f, text);
    fputs("</ul>\n", f);
    if (*rest != '\0') {
        fputs("<details><summary>The same run as the terminal draws it "
              "(<code>make sim</code>)</summary>\n<pre>", f);
        sim_html_esc(f, rest);
        fputs("</pre></details>\n", f);
    }
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
