/* html_diff: what changed between two stage folders, side by side, the
 * way `make diff ... side=1` pairs them: each source file (*.c, *.h) of
 * one folder against the same file of the other, a file missing on one
 * side shown as all added or all removed. The changed regions come
 * first, each with a few lines of context, the changed part of a changed
 * line marked; the whole file follows on request. Lines are never cut.
 *
 * The diff is a longest common subsequence of lines, found by dynamic
 * programming on what lies between the files' common head and tail: a
 * stage file is a few hundred lines, so the table stays small. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "html_internal.h"
#include "util.h"

#define CONTEXT 3      /* unchanged lines shown around a change */
#define MAX_FILES 64   /* source files in a stage folder */

typedef struct lines {
    char *text;        /* the file, NUL-terminated; "" when it is absent */
    const char **at;   /* each line's start */
    size_t *len;       /* each line's length, without its newline */
    size_t n;
} lines;

/* One row of the side-by-side table: a line of each side, or none. */
typedef struct row {
    long a, b;         /* line indices; -1: nothing on that side */
    int changed;
} row;

/* ---- reading ------------------------------------------------------------------------ */

static void *grow(void *p, size_t size)
{
    void *q = realloc(p, size);

    if (q == NULL)
        free(p);
    return q;
}

/* A file's lines; a missing file reads as empty (it was added or
 * removed). The caller frees l with unsplit, also after an error. */
static int split(lines *l, const char *path, char *errstr, size_t len)
{
    size_t size, cap = 0;

    memset(l, 0, sizeof(*l));
    if (access(path, F_OK) != 0)
        return (l->text = calloc(1, 1)) != NULL ? 0
               : sim_error(errstr, len, "%s: out of memory", path);
    if ((l->text = sim_html_slurp(path, &size, errstr, len)) == NULL)
        return -1;
    for (const char *s = l->text; *s != '\0';) {
        size_t n = strcspn(s, "\n");

        if (l->n == cap) {
            cap = cap * 2 + 256;
            if ((l->at = grow(l->at, cap * sizeof(*l->at))) == NULL ||
                (l->len = grow(l->len, cap * sizeof(*l->len))) == NULL)
                return sim_error(errstr, len, "%s: out of memory", path);
        }
        l->at[l->n] = s;
        l->len[l->n++] = n;
        s += n + (s[n] == '\n');
    }
    return 0;
}

static void unsplit(lines *l)
{
    free(l->text);
    free(l->at);
    free(l->len);
}

static int same(const lines *a, size_t i, const lines *b, size_t j)
{
    return a->len[i] == b->len[j] && memcmp(a->at[i], b->at[j], a->len[i]) == 0;
}

/* ---- the diff -------------------------------------------------------------------------- */

/* Deletions and additions between two common lines, paired row by row. */
static void block(row *rows, size_t *n, long a0, long a1, long b0, long b1)
{
    while (a0 < a1 || b0 < b1) {
        rows[(*n)++] = (row){ a0 < a1 ? a0 : -1, b0 < b1 ? b0 : -1, 1 };
        a0 += a0 < a1;
        b0 += b0 < b1;
    }
}

/* L[i * (k + 1) + j]: how many lines a's lines from p + i and b's from
 * p + j have in common, in order, at most. */
static void lcs(unsigned *L, const lines *a, const lines *b, size_t p,
                size_t m, size_t k)
{
    for (size_t i = m; i-- > 0;)
        for (size_t j = k; j-- > 0;) {
            unsigned down = L[(i + 1) * (k + 1) + j], right = L[i * (k + 1) + j + 1];

            L[i * (k + 1) + j] = same(a, p + i, b, p + j) ? L[(i + 1) * (k + 1) + j + 1] + 1
                                 : down > right ? down : right;
        }
}

/* The rows of the whole side-by-side table; NULL when out of memory. */
static row *diff(const lines *a, const lines *b, size_t *n)
{
    size_t p = 0, q = 0, m, k;
    row *rows = malloc((a->n + b->n + 1) * sizeof(*rows));
    unsigned *L;

    *n = 0;
    while (p < a->n && p < b->n && same(a, p, b, p))
        p++;
    while (q < a->n - p && q < b->n - p && same(a, a->n - 1 - q, b, b->n - 1 - q))
        q++;
    m = a->n - p - q;
    k = b->n - p - q;
    if (rows == NULL || (L = calloc((m + 1) * (k + 1), sizeof(*L))) == NULL) {
        free(rows);
        return NULL;
    }
    lcs(L, a, b, p, m, k);
    for (size_t i = 0; i < p; i++)
        rows[(*n)++] = (row){ (long)i, (long)i, 0 };
    size_t i = 0, j = 0, i0 = 0, j0 = 0;
    while (i < m || j < k) {
        if (i < m && j < k && same(a, p + i, b, p + j)) {
            block(rows, n, (long)(p + i0), (long)(p + i), (long)(p + j0), (long)(p + j));
            rows[(*n)++] = (row){ (long)(p + i), (long)(p + j), 0 };
            i0 = ++i;
            j0 = ++j;
        } else if (j >= k || (i < m && L[(i + 1) * (k + 1) + j] >= L[i * (k + 1) + j + 1])) {
            i++;
        } else {
            j++;
        }
    }
    block(rows, n, (long)(p + i0), (long)(p + m), (long)(p + j0), (long)(p + k));
    for (size_t t = 0; t < q; t++)
        rows[(*n)++] = (row){ (long)(a->n - q + t), (long)(b->n - q + t), 0 };
    free(L);
    return rows;
}

/* ---- writing --------------------------------------------------------------------------- */

/* One side of a row: its number and its text, the part that differs
 * from the other side marked. */
static void side(FILE *f, const lines *l, long i, const lines *o, long j, int changed,
                 const char *cls)
{
    size_t pre = 0, post = 0, n;
    const char *s;

    if (i < 0) {
        fputs("<td class=\"ln\"></td><td class=\"code\"></td>", f);
        return;
    }
    s = l->at[i];
    n = l->len[i];
    fprintf(f, "<td class=\"ln\">%ld</td><td class=\"code%s%s\">", i + 1,
            changed ? " " : "", changed ? cls : "");
    if (changed && j >= 0) {
        size_t on = o->len[j];

        while (pre < n && pre < on && s[pre] == o->at[j][pre])
            pre++;
        while (post < n - pre && post < on - pre && s[n - 1 - post] == o->at[j][on - 1 - post])
            post++;
    }
    if (changed && j >= 0 && pre + post < n) {
        sim_html_escn(f, s, pre);
        fputs("<span class=\"chg\">", f);
        sim_html_escn(f, s + pre, n - pre - post);
        fputs("</span>", f);
        sim_html_escn(f, s + n - post, post);
    } else {
        sim_html_escn(f, s, n);
    }
    fputs("</td>", f);
}

static void table_row(FILE *f, const lines *a, const lines *b, const row *r)
{
    fputs("<tr>", f);
    side(f, a, r->a, b, r->b, r->changed, "del");
    side(f, b, r->b, a, r->a, r->changed, "add");
    fputs("</tr>\n", f);
}

static void table_head(FILE *f, const char *a_label, const char *b_label,
                       const char *file, const char *cls)
{
    fprintf(f, "<table class=\"diff %s\"><colgroup><col style=\"width:3.6em\"><col>"
            "<col style=\"width:3.6em\"><col></colgroup>\n<thead><tr><th colspan=\"2\">", cls);
    sim_html_escf(f, "%s/%s", a_label, file);
    fputs("</th><th colspan=\"2\">", f);
    sim_html_escf(f, "%s/%s", b_label, file);
    fputs("</th></tr></thead>\n<tbody>\n", f);
}

/* The changed rows with CONTEXT rows around each; the rest folded into
 * one line that says how many. */
static void regions(FILE *f, const lines *a, const lines *b, const row *rows, size_t n)
{
    size_t skipped = 0;

    for (size_t r = 0; r < n; r++) {
        int near = 0;

        for (size_t d = r >= CONTEXT ? r - CONTEXT : 0; d < n && d <= r + CONTEXT; d++)
            near |= rows[d].changed;
        if (!near) {
            skipped++;
            continue;
        }
        if (skipped > 0)
            fprintf(f, "<tr class=\"skip\"><td colspan=\"4\">%zu unchanged line%s</td></tr>\n",
                    skipped, skipped == 1 ? "" : "s");
        skipped = 0;
        table_row(f, a, b, &rows[r]);
    }
    if (skipped > 0)
        fprintf(f, "<tr class=\"skip\"><td colspan=\"4\">%zu unchanged line%s</td></tr>\n",
                skipped, skipped == 1 ? "" : "s");
}

/* One file: its changed regions, then the whole of it folded. Returns
 * 1 when it changed, 0 when the two are the same, -1 on error. */
static int one_file(FILE *f, const char *a, const char *b, const char *a_label,
                    const char *b_label, const char *file, char *errstr, size_t len)
{
    char pa[SIM_HTML_PATH], pb[SIM_HTML_PATH];
    lines la = { 0 }, lb = { 0 };
    row *rows = NULL;
    size_t n = 0, added = 0, removed = 0;
    int rc = -1;

    snprintf(pa, sizeof(pa), "%s/%s", a, file);
    snprintf(pb, sizeof(pb), "%s/%s", b, file);
    if (split(&la, pa, errstr, len) == 0 && split(&lb, pb, errstr, len) == 0 &&
        (rows = diff(&la, &lb, &n)) == NULL)
        sim_error(errstr, len, "the diff of %s: out of memory", file);
    for (size_t r = 0; rows != NULL && r < n; r++) {
        removed += rows[r].changed && rows[r].a >= 0;
        added += rows[r].changed && rows[r].b >= 0;
    }
    if (rows != NULL && (rc = added + removed > 0) == 1) {
        fprintf(f, "<h3 class=\"file\" data-file=\"");
        sim_html_esc(f, file);
        fputs("\"><code>", f);
        sim_html_esc(f, file);
        fprintf(f, "</code> <small>%zu line%s removed, %zu added</small></h3>\n",
                removed, removed == 1 ? "" : "s", added);
        table_head(f, a_label, b_label, file, "changes");
        regions(f, &la, &lb, rows, n);
        fputs("</tbody></table>\n<details><summary>the whole of ", f);
        sim_html_esc(f, file);
        fputs(", side by side</summary>\n", f);
        table_head(f, a_label, b_label, file, "whole");
        for (size_t r = 0; r < n; r++)
            table_row(f, &la, &lb, &rows[r]);
        fputs("</tbody></table>\n</details>\n", f);
    }
    free(rows);
    unsplit(&la);
    unsplit(&lb);
    return rc;
}

static int by_name(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The source files of a folder, added to names (without repeats). */
static void sources(const char *dir, char **names, size_t *n)
{
    DIR *d = opendir(dir);
    struct dirent *e;

    while (d != NULL && (e = readdir(d)) != NULL && *n < MAX_FILES) {
        size_t len = strlen(e->d_name);
        int dup = 0;

        if (len < 3 || e->d_name[0] == '.' || e->d_name[len - 2] != '.' ||
            (e->d_name[len - 1] != 'c' && e->d_name[len - 1] != 'h'))
            continue;
        for (size_t i = 0; i < *n; i++)
            dup |= strcmp(names[i], e->d_name) == 0;
        if (!dup && (names[*n] = strdup(e->d_name)) != NULL)
            (*n)++;
    }
    if (d != NULL)
        closedir(d);
}

int sim_html_diff(FILE *f, const char *a, const char *b, const char *a_label,
                  const char *b_label, char *errstr, size_t len)
{
    char *names[MAX_FILES];
    size_t n = 0, same = 0;
    int rc = 0;

    sources(a, names, &n);
    sources(b, names, &n);
    qsort(names, n, sizeof(names[0]), by_name);
    for (size_t i = 0; i < n; i++) {
        int changed = rc == 0 ? one_file(f, a, b, a_label, b_label, names[i],
                                         errstr, len) : 1;

        if (changed < 0)
            rc = -1;
        if (changed == 0)
            names[same++] = names[i];   /* the unchanged, listed at the end */
        else
            free(names[i]);
    }
    if (rc == 0 && same > 0) {
        fputs("<p>The same in both:", f);
        for (size_t i = 0; i < same; i++) {
            fputs(" <code>", f);
            sim_html_esc(f, names[i]);
            fputs("</code>", f);
        }
        fputs(".</p>\n", f);
    }
    for (size_t i = 0; i < same; i++)
        free(names[i]);
    return rc;
}
