/* html_book: print.html, the handout make report prints to lockstep.pdf:
 * the matrix and its legend on the first sheet, then the story of each
 * row with the evidence of its cells, which is the matrix page's <main>
 * under the style's print rules. A run's timeline and a stage's diff
 * stay on the site: a page per cell is more than a class prints, and a
 * cell of the handout names its run's page there. print.html sits beside
 * index.html, so the page's links need no rewriting. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_internal.h"
#include "util.h"

int sim_html_book(const char *dir, char *errstr, size_t len)
{
    char path[SIM_HTML_PATH], index[SIM_HTML_PATH];
    const char *at, *end;
    size_t size;
    char *text;
    FILE *f;

    snprintf(index, sizeof(index), "%s/index.html", dir);
    if ((text = sim_html_slurp(index, &size, errstr, len)) == NULL)
        return -1;
    if ((at = strstr(text, "<main>\n")) == NULL || (end = strstr(at, "</main>")) == NULL) {
        free(text);
        return sim_error(errstr, len, "%s has no <main> to print: make report wrote "
                         "it only in part; run make report again", index);
    }
    at += strlen("<main>\n");
    if ((f = sim_html_create(dir, "print.html", path, sizeof(path), errstr, len)) == NULL) {
        free(text);
        return -1;
    }
    sim_html_head(f, "lockstep: the fault matrix and the story of each row", NULL);
    fwrite(at, 1, (size_t)(end - at), f);
    sim_html_foot(f);
    free(text);
    return sim_html_close(f, path, errstr, len);
}
