/* html_book: print.html, the whole site as one document to print: the
 * matrix, then every run row by row, then every stage, each page's
 * <main> on sheets of its own (the style's print rules), its links to
 * other pages of the site turned into links inside the document. One
 * document prints in one go, so make report needs no tool to join PDFs:
 * a headless Chromium prints this file to lockstep.pdf. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_internal.h"
#include "util.h"

/* "page-runs-v3-slow-holder": the id of a page's sheet, from its path in
 * the site ("runs/v3-slow-holder.html"). */
static void sheet_id(char *buf, size_t len, const char *rel, size_t n)
{
    size_t k = 0;

    if (n > 5 && strncmp(rel + n - 5, ".html", 5) == 0)
        n -= 5;
    k = (size_t)snprintf(buf, len, "page-");
    for (size_t i = 0; i < n && k + 1 < len; i++)
        buf[k++] = rel[i] == '/' ? '-' : rel[i];
    buf[k < len ? k : len - 1] = '\0';
}

/* Where a link of the page in folder ("" or "runs/") points from the
 * document: another page (or a place in one) becomes a link inside it;
 * any other file keeps its path, from the site's root where print.html
 * is; a link outside the site stays as it is. */
static void link_target(FILE *out, const char *folder, const char *url, size_t n)
{
    char path[SIM_HTML_PATH], id[SIM_HTML_PATH];
    size_t keep = strlen(folder), plen;
    const char *hash;

    if (n == 0 || url[0] == '#' || memchr(url, ':', n) != NULL) {
        fwrite(url, 1, n, out);
        return;
    }
    while (n >= 3 && strncmp(url, "../", 3) == 0) {
        /* The site's pages are one folder deep at most. */
        keep = 0;
        url += 3;
        n -= 3;
    }
    snprintf(path, sizeof(path), "%.*s%.*s", (int)keep, folder, (int)n, url);
    hash = strchr(path, '#');
    plen = hash != NULL ? (size_t)(hash - path) : strlen(path);
    if (plen > 5 && strncmp(path + plen - 5, ".html", 5) == 0) {
        if (hash != NULL) {
            fputs(hash, out);
        } else {
            sheet_id(id, sizeof(id), path, plen);
            fprintf(out, "#%s", id);
        }
        return;
    }
    fputs(path, out);
}

/* The text of a page's <main>, its links rewritten. */
static void copy_links(FILE *out, const char *text, size_t n, const char *folder)
{
    static const char attr[] = "href=\"";
    const char *end = text + n;

    while (text < end) {
        const char *at = strstr(text, attr), *close;

        if (at == NULL || at >= end || (close = strchr(at + strlen(attr), '"')) == NULL ||
            close >= end) {
            fwrite(text, 1, (size_t)(end - text), out);
            return;
        }
        at += strlen(attr);
        fwrite(text, 1, (size_t)(at - text), out);
        link_target(out, folder, at, (size_t)(close - at));
        text = close;
    }
}

/* One page of the site, rel from dir, as a sheet of the document. */
static int sheet(FILE *out, const char *dir, const char *rel, char *errstr, size_t len)
{
    char path[SIM_HTML_PATH], id[SIM_HTML_PATH], folder[SIM_HTML_PATH];
    const char *slash = strrchr(rel, '/'), *at, *end;
    size_t size;
    char *text;

    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    if ((text = sim_html_slurp(path, &size, errstr, len)) == NULL)
        return -1;
    if ((at = strstr(text, "<main>\n")) == NULL || (end = strstr(at, "</main>")) == NULL) {
        free(text);
        return sim_error(errstr, len, "%s has no <main> to print: make report wrote "
                         "it only in part; run make report again", path);
    }
    at += strlen("<main>\n");
    snprintf(folder, sizeof(folder), "%.*s", slash != NULL ? (int)(slash - rel + 1) : 0, rel);
    sheet_id(id, sizeof(id), rel, strlen(rel));
    fprintf(out, "<article class=\"sheet\" id=\"%s\">\n", id);
    copy_links(out, at, (size_t)(end - at), folder);
    fputs("</article>\n", out);
    free(text);
    return 0;
}

/* 1 when runs[i] is the first of its scenario: it opens a row. */
static int opens_row(const sim_html_run *runs, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (strcmp(runs[j].cell.scenario, runs[i].cell.scenario) == 0)
            return 0;
    return 1;
}

/* The runs of the site as the matrix reads them: row by row, each row's
 * stages in order. */
static int run_sheets(FILE *out, const char *dir, const sim_html_run *runs, size_t n,
                      char *errstr, size_t len)
{
    char name[SIM_NAME_LEN + 8], rel[SIM_NAME_LEN + 32];

    for (size_t i = 0; i < n; i++) {
        if (!opens_row(runs, i))
            continue;
        for (int s = 1; s <= SIM_STAGES; s++)
            for (size_t j = i; j < n; j++) {
                if (runs[j].cell.stage != s ||
                    strcmp(runs[j].cell.scenario, runs[i].cell.scenario) != 0)
                    continue;
                sim_html_run_name(name, sizeof(name), s, runs[j].cell.scenario);
                snprintf(rel, sizeof(rel), "runs/%s.html", name);
                if (sheet(out, dir, rel, errstr, len) != 0)
                    return -1;
            }
    }
    return 0;
}

int sim_html_book(const char *dir, const sim_html_run *runs, size_t n, char *errstr,
                  size_t len)
{
    char path[SIM_HTML_PATH], rel[SIM_HTML_PATH];
    int failed;
    FILE *f;

    if ((f = sim_html_create(dir, "print.html", path, sizeof(path), errstr, len)) == NULL)
        return -1;
    sim_html_head(f, "lockstep: the fault matrix, its runs and its stages", NULL);
    failed = sheet(f, dir, "index.html", errstr, len) != 0 ||
             run_sheets(f, dir, runs, n, errstr, len) != 0;
    for (int s = 1; s <= SIM_STAGES && !failed; s++) {
        snprintf(rel, sizeof(rel), "stages/%s.html", sim_stage_name(s));
        failed = sheet(f, dir, rel, errstr, len) != 0;
    }
    sim_html_foot(f);
    if (failed) {
        fclose(f);
        return -1;
    }
    return sim_html_close(f, path, errstr, len);
}
