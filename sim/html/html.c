/* html: escaping, files and names for the site's pages, and the whole
 * site (html.h). The pages themselves have files of their own
 * (html_internal.h lists them). */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "html_internal.h"
#include "util.h"

/* ---- escaping -------------------------------------------------------------- */

void sim_html_escn(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n && s[i] != '\0'; i++) {
        switch (s[i]) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(s[i], f);
        }
    }
}

void sim_html_esc(FILE *f, const char *s)
{
    sim_html_escn(f, s, strlen(s));
}

void sim_html_escf(FILE *f, const char *fmt, ...)
{
    char buf[SIM_REPORT_SENTENCE * 2];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    sim_html_esc(f, buf);
}

/* ---- files ------------------------------------------------------------------- */

int sim_html_mkdir(const char *dir, char *errstr, size_t len)
{
    char path[SIM_HTML_PATH];
    size_t n = strlen(dir);

    if (n == 0 || n >= sizeof(path))
        return sim_error(errstr, len, "'%s' is not a folder name that fits", dir);
    memcpy(path, dir, n + 1);
    /* Each parent in turn, then the folder itself. */
    for (size_t i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        path[i] = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            return sim_error(errstr, len, "cannot create the folder %s: %s",
                             path, strerror(errno));
        path[i] = i < n ? '/' : '\0';
    }
    return 0;
}

FILE *sim_html_create(const char *dir, const char *name, char *path,
                      size_t plen, char *errstr, size_t len)
{
    FILE *f;
    int k = snprintf(path, plen, "%s/%s", dir, name);

    if (k < 0 || (size_t)k >= plen) {
        sim_error(errstr, len, "the path %s/%s is too long", dir, name);
        return NULL;
    }
    if ((f = fopen(path, "w")) == NULL)
        sim_error(errstr, len, "cannot write %s: %s", path, strerror(errno));
    return f;
}

int sim_html_close(FILE *f, const char *path, char *errstr, size_t len)
{
    int failed = ferror(f);

    if (fclose(f) != 0 || failed)
        return sim_error(errstr, len, "cannot write %s: %s", path,
                         strerror(errno ? errno : EIO));
    return 0;
}

char *sim_html_slurp(const char *path, size_t *n, char *errstr, size_t len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t cap = 0;

    *n = 0;
    if (f == NULL) {
        sim_error(errstr, len, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    for (;;) {
        if (*n + 4096 + 1 > cap) {
            char *more = realloc(buf, cap = cap * 2 + 8192);

            if (more == NULL) {
                sim_error(errstr, len, "%s: out of memory", path);
                break;
            }
            buf = more;
        }
        size_t got = fread(buf + *n, 1, cap - *n - 1, f);

        *n += got;
        if (got == 0) {
            buf[*n] = '\0';
            fclose(f);
            return buf;
        }
    }
    fclose(f);
    free(buf);
    return NULL;
}

/* ---- names ------------------------------------------------------------------- */

/* Only letters, digits, '-' and '_' reach a file name: a scenario's name
 * comes from data. */
void sim_html_run_name(char *buf, size_t len, int stage, const char *scenario)
{
    int k = snprintf(buf, len, "v%d-", stage);

    for (size_t i = 0; scenario[i] != '\0' && k >= 0 && (size_t)k + 1 < len; i++) {
        char c = scenario[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9') || c == '-' || c == '_';

        buf[k++] = ok ? c : '_';
        buf[k] = '\0';
    }
}

/* The marks a cell can show, in the order the matrix writes them. */
static const unsigned mark_bits[] = { SIM_ANOM_ME, SIM_ANOM_MD, SIM_ANOM_DL,
                                      SIM_ANOM_LU, SIM_ANOM_ST, SIM_ANOM_UNJUDGED,
                                      SIM_MARK_FENCE_HELD, SIM_MARK_FENCE_FAILED };
#define MARKS (sizeof(mark_bits) / sizeof(mark_bits[0]))

/* A mark's name, as the terminal writes it. */
static const char *mark_name(unsigned bit)
{
    return bit == SIM_MARK_FENCE_HELD ? "F" : bit == SIM_MARK_FENCE_FAILED ? "T"
           : sim_anomaly_name(bit);
}

/* One table from a mark to its badge's class, so that every page and
 * the legend draw a mark alike. */
const char *sim_html_mark_class(const char *mark)
{
    static const struct {
        const char *mark, *cls;
    } classes[] = {
        { "ME", "ME" }, { "MD", "MD" }, { "DL", "DL" }, { "LU", "LU" },
        { "?", "unjudged" }, { "F", "fence" }, { "T", "clash" }, { "!", "differs" },
    };

    for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
        if (strcmp(mark, classes[i].mark) == 0)
            return classes[i].cls;
    return "none"; /* "-" and "(-)" */
}

void sim_html_mark_classes(char *buf, size_t len, unsigned set)
{
    static const char *const names[MARKS] = { "me", "md", "dl", "lu", "st", "unjudged",
                                              "fence", "clash" };
    size_t used = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < MARKS; i++)
        if (set & mark_bits[i])
            used += (size_t)snprintf(buf + used, len > used ? len - used : 0,
                                     "%s%s", used ? " " : "", names[i]);
    if ((set & SIM_ANOM_CELLS) == 0)
        snprintf(buf + used, len > used ? len - used : 0, "%snone", used ? " " : "");
}

void sim_html_marks(FILE *f, unsigned set, int unreachable)
{
    fputs("<span class=\"marks\">", f);
    if ((set & SIM_ANOM_CELLS) == 0)
        fprintf(f, "<span class=\"mark none\">%s</span>", unreachable ? "(-)" : "-");
    for (size_t i = 0; i < MARKS; i++)
        if (set & mark_bits[i])
            fprintf(f, "<span class=\"mark %s\">%s</span>",
                    sim_html_mark_class(mark_name(mark_bits[i])), mark_name(mark_bits[i]));
    fputs("</span>", f);
}

/* ---- the site ---------------------------------------------------------------- */

int sim_html_site(const char *dir, const char *src,
                  const sim_html_about *about, const sim_html_run *runs,
                  size_t n, char *errstr, size_t len)
{
    char sub[SIM_HTML_PATH], path[SIM_HTML_PATH];

    snprintf(sub, sizeof(sub), "%s/runs", dir);
    if (sim_html_mkdir(sub, errstr, len) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (sim_html_write_run(sub, &runs[i], 1, path, sizeof(path), errstr,
                               len) != 0)
            return -1;
    snprintf(sub, sizeof(sub), "%s/stages", dir);
    if (sim_html_mkdir(sub, errstr, len) != 0)
        return -1;
    for (int s = 1; s <= SIM_STAGES; s++)
        if (sim_stage_get(s) != NULL &&
            sim_html_stage_page(sub, src, s, runs, n, errstr, len) != 0)
            return -1;
    if (sim_html_guide(dir, src, errstr, len) != 0 ||
        sim_html_matrix_page(dir, src, about, runs, n, errstr, len) != 0)
        return -1;
    return sim_html_book(dir, errstr, len);
}

int sim_html_run_page(const char *dir, const sim_html_run *run, char *path,
                      size_t plen, char *errstr, size_t len)
{
    if (sim_html_mkdir(dir, errstr, len) != 0)
        return -1;
    return sim_html_write_run(dir, run, 0, path, plen, errstr, len);
}

void sim_html_tell(FILE *out, const char *what, const char *path)
{
    char *abs = realpath(path, NULL);

    fprintf(out, "%s: %s\n", what, path);
    if (abs != NULL)
        fprintf(out, "  open it in a browser: file://%s\n", abs);
    free(abs);
}
