/* html_libs: the libraries' columns as a page of the site (make report
 * libs=1), each library's cell linked to its run. See html.h. */
#include <stdio.h>
#include <string.h>

#include "html.h"
#include "html_internal.h"

static void head_row(FILE *f, const sim_html_libs *t)
{
    fprintf(f, "<thead><tr><th>scenario</th>");
    for (size_t c = 0; c < t->ncols; c++) {
        fprintf(f, "<th>");
        sim_html_esc(f, t->heads[c]);
        fprintf(f, "</th>");
    }
    fprintf(f, "</tr></thead>\n");
}

/* "ME LU": a badge per mark, as the matrix draws them. */
static void marks(FILE *f, const char *text)
{
    char mark[16];
    size_t n;

    for (const char *p = text; *p != '\0'; p += n + strspn(p + n, " ")) {
        n = strcspn(p, " ");
        snprintf(mark, sizeof(mark), "%.*s", (int)(n < sizeof(mark) ? n : sizeof(mark) - 1), p);
        fprintf(f, "<span class=\"mark %s\">", sim_html_mark_class(mark));
        sim_html_esc(f, mark);
        fprintf(f, "</span> ");
    }
}

static void cell(FILE *f, const sim_html_lib_cell *x)
{
    fprintf(f, "<td%s>", x->differs ? " style=\"outline:2px solid #c00\"" : "");
    if (x->href != NULL && x->href[0] != '\0') {
        fprintf(f, "<a href=\"");
        sim_html_esc(f, x->href);
        fprintf(f, "\">");
    }
    marks(f, x->text);
    fprintf(f, "%s%s</td>", x->differs ? " (differs from its answer key)" : "",
            x->href != NULL && x->href[0] != '\0' ? "</a>" : "");
}

int sim_html_libs_page(const char *dir, const sim_html_libs *t, char *path, size_t plen,
                       char *errstr, size_t len)
{
    FILE *f;

    if (sim_html_mkdir(dir, errstr, len) != 0 ||
        (f = sim_html_create(dir, "libraries.html", path, plen, errstr, len)) == NULL)
        return -1;
    sim_html_head(f, "The libraries beside their stages", NULL);
    fprintf(f, "<h1>The libraries beside their stages</h1>\n<p>A stage's column is its "
               "answer key; a library's is what its runs showed (each links to its run). "
               "docs/drivers.md says how a library runs.</p>\n<table>\n");
    head_row(f, t);
    fprintf(f, "<tbody>\n");
    for (size_t r = 0; r < t->nrows; r++) {
        fprintf(f, "<tr><th>");
        sim_html_esc(f, t->rows[r]);
        fprintf(f, "</th>");
        for (size_t c = 0; c < t->ncols; c++)
            cell(f, &t->cells[r * t->ncols + c]);
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</tbody></table>\n<ul>\n");
    for (size_t i = 0; i < t->nnotes; i++) {
        fprintf(f, "<li>");
        sim_html_esc(f, t->notes[i]);
        fprintf(f, "</li>\n");
    }
    fprintf(f, "</ul>\n");
    sim_html_foot(f);
    return sim_html_close(f, path, errstr, len);
}
