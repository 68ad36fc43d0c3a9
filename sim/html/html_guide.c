/* html_guide: the repository's own pages on the site, as GitHub shows
 * them: README.md as guide/readme.html, each page of docs/ as
 * guide/<name>.html with the pictures they show; and where a link of any
 * README or page of docs/ leads on the site (sim_html_repo_link): a
 * page the site renders becomes that page, any other file of the
 * repository keeps its text without a link. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_internal.h"
#include "util.h"

/* path with "x/../" and "./" taken out, in place: a link's target from
 * the repository's root. */
static void tidy(char *path)
{
    char *at;

    while ((at = strstr(path, "/./")) != NULL)
        memmove(at, at + 2, strlen(at + 2) + 1);
    while (strncmp(path, "./", 2) == 0)
        memmove(path, path + 2, strlen(path + 2) + 1);
    while ((at = strstr(path, "/../")) != NULL) {
        char *start = at;

        while (start > path && start[-1] != '/')
            start--;
        memmove(start, at + 4, strlen(at + 4) + 1);
    }
}

/* The site's file for a file of the repository, from the site's root;
 * NULL when the site has none. */
static const char *site_file(const char *file, char *buf, size_t len)
{
    size_t n = strlen(file);

    if (strcmp(file, "README.md") == 0)
        return "guide/readme.html";
    if (strncmp(file, "docs/", 5) == 0 && strchr(file + 5, '/') == NULL && n > 8 &&
        (strcmp(file + n - 3, ".md") == 0 || strcmp(file + n - 4, ".png") == 0)) {
        if (strcmp(file + n - 3, ".md") == 0)
            snprintf(buf, len, "guide/%.*s.html", (int)(n - 8 > 200 ? 200 : n - 8), file + 5);
        else
            snprintf(buf, len, "guide/%.200s", file + 5);
        return buf;
    }
    for (int s = 1; s <= SIM_STAGES; s++) {
        const char *dir = sim_stage_name(s);
        size_t d = strlen(dir);

        if (sim_stage_get(s) != NULL && strncmp(file, dir, d) == 0 &&
            (file[d] == '\0' || strcmp(file + d, "/") == 0 || strcmp(file + d, "/README.md") == 0)) {
            snprintf(buf, len, "stages/%s.html", dir);
            return buf;
        }
    }
    return NULL;
}

const char *sim_html_repo_link(const char *url, char *buf, size_t len, void *arg)
{
    const char *folder = arg != NULL ? arg : "", *hash, *to;
    char file[SIM_HTML_PATH], mapped[SIM_HTML_PATH];

    if (strstr(url, "://") != NULL || strncmp(url, "mailto:", 7) == 0 || url[0] == '#')
        return url;
    hash = strchr(url, '#');
    snprintf(file, sizeof(file), "%s%.*s", folder,
             (int)(hash != NULL ? (size_t)(hash - url) : strlen(url)), url);
    tidy(file);
    if ((to = site_file(file, mapped, sizeof(mapped))) == NULL)
        return NULL;
    /* Every page that renders Markdown is one folder deep. */
    snprintf(buf, len, "../%s%s", to, hash != NULL ? hash : "");
    return buf;
}

/* One page of the repository, rel from src, as guide/<name>. */
static int page(const char *dir, const char *src, const char *rel, const char *name,
                const char *folder, char *errstr, size_t len)
{
    char path[SIM_HTML_PATH], from[SIM_HTML_PATH];
    size_t size;
    char *text;
    FILE *f;

    snprintf(from, sizeof(from), "%s/%s", src, rel);
    if ((text = sim_html_slurp(from, &size, errstr, len)) == NULL)
        return -1;
    if ((f = sim_html_create(dir, name, path, sizeof(path), errstr, len)) == NULL) {
        free(text);
        return -1;
    }
    sim_html_head(f, rel, "../");
    fputs("<article class=\"readme\">\n", f);
    sim_html_markdown(f, text, sim_html_repo_link, (void *)folder);
    fputs("</article>\n", f);
    sim_html_foot(f);
    free(text);
    return sim_html_close(f, path, errstr, len);
}

/* A picture of docs/, copied as it is. */
static int copy(const char *dir, const char *src, const char *name, char *errstr, size_t len)
{
    char path[SIM_HTML_PATH], from[SIM_HTML_PATH];
    size_t size;
    char *data;
    FILE *f;

    snprintf(from, sizeof(from), "%s/docs/%s", src, name);
    if ((data = sim_html_slurp(from, &size, errstr, len)) == NULL)
        return -1;
    if ((f = sim_html_create(dir, name, path, sizeof(path), errstr, len)) == NULL) {
        free(data);
        return -1;
    }
    fwrite(data, 1, size, f);
    free(data);
    return sim_html_close(f, path, errstr, len);
}

int sim_html_guide(const char *dir, const char *src, char *errstr, size_t len)
{
    char sub[SIM_HTML_PATH], docs[SIM_HTML_PATH], rel[SIM_HTML_PATH], name[SIM_HTML_PATH];
    struct dirent *e;
    DIR *d;
    int rc = 0;

    snprintf(sub, sizeof(sub), "%s/guide", dir);
    if (sim_html_mkdir(sub, errstr, len) != 0 ||
        page(sub, src, "README.md", "readme.html", "", errstr, len) != 0)
        return -1;
    snprintf(docs, sizeof(docs), "%s/docs", src);
    if ((d = opendir(docs)) == NULL)
        return sim_error(errstr, len, "%s: cannot read it: the site shows its pages", docs);
    while (rc == 0 && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);

        if (n > 3 && strcmp(e->d_name + n - 3, ".md") == 0) {
            snprintf(rel, sizeof(rel), "docs/%s", e->d_name);
            snprintf(name, sizeof(name), "%.*s.html", (int)(n - 3), e->d_name);
            rc = page(sub, src, rel, name, "docs/", errstr, len);
        } else if (n > 4 && strcmp(e->d_name + n - 4, ".png") == 0) {
            rc = copy(sub, src, e->d_name, errstr, len);
        }
    }
    closedir(d);
    return rc;
}
