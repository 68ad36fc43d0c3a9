/* run_site: the report's browser test (make report-test).
 *
 *   build/site_test SITE
 *
 * SITE is a site make report wrote. Without a headless Chromium the
 * test says so in one line and passes: the rest of the suite runs.
 * Otherwise it takes a screenshot of the matrix and of one run into
 * SITE (matrix.png, run.png), loads every page of SITE and both
 * screenshots in one browser (one page that frames them all, with
 * tests/site_facts.js), reads the facts the script wrote from the DOM
 * the browser dumped, reads the text of the site's PDF, and runs the
 * suite on them (test_site.c). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"
#include "site.h"
#include "tcases.h"
#include "util.h"

site the_site;

static const char *browser_sh = SRCDIR "/tools/browser.sh";

/* Runs argv with its output into out (NULL: nowhere); its exit status.
 * The child is the simulator's (proc.h): it dies with this test, and a
 * Ctrl-C kills it. */
static int run(const char *const argv[], const char *out)
{
    char why[128];
    pid_t pid = sim_proc_fork(why, sizeof(why));
    sim_proc_state st;
    int status = -1;

    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open(out != NULL ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);

        if (fd >= 0)
            dup2(fd, STDOUT_FILENO);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    while ((st = sim_proc_poll(pid, &status)) == SIM_PROC_RUNNING || st == SIM_PROC_STOPPED)
        sim_sleep_ms(10);
    return st == SIM_PROC_EXITED ? status : -1;
}

/* dir/name, allocated; NULL when out of memory. */
static char *join(const char *dir, const char *name)
{
    char *path;

    return asprintf(&path, "%s/%s", dir, name) < 0 ? NULL : path;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0;
    FILE *mem;

    if (f == NULL || (mem = open_memstream(&buf, &len)) == NULL) {
        if (f != NULL)
            fclose(f);
        return NULL;
    }
    for (int c; (c = fgetc(f)) != EOF;)
        fputc(c, mem);
    fclose(f);
    fclose(mem);
    return buf;
}

/* file:// and an absolute path, its unusual bytes %-encoded. */
static void url(FILE *f, const char *abs)
{
    fputs("file://", f);
    for (const unsigned char *p = (const unsigned char *)abs; *p; p++)
        if (strchr("/._-~", *p) != NULL || (*p >= '0' && *p <= '9') ||
            (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))
            fputc(*p, f);
        else
            fprintf(f, "%%%02X", *p);
}

static char *url_of(const char *abs)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);

    if (mem == NULL)
        return NULL;
    url(mem, abs);
    fclose(mem);
    return buf;
}

/* ---- the site's pages ------------------------------------------------------ */

static void add_page(const char *rel)
{
    char **p = realloc(the_site.pages, (the_site.n_pages + 1) * sizeof(*p));

    if (p == NULL)
        return;
    the_site.pages = p;
    the_site.pages[the_site.n_pages++] = strdup(rel);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* index.html, then the pages of runs/ and of stages/, by name. */
static void list_pages(const char *abs)
{
    static const char *const subs[] = { "runs", "stages", "guide" };

    add_page("index.html");
    for (size_t s = 0; s < sizeof(subs) / sizeof(subs[0]); s++) {
        char *dir = join(abs, subs[s]), *rel;
        size_t first = the_site.n_pages;
        struct dirent *e;
        DIR *d = dir != NULL ? opendir(dir) : NULL;

        free(dir);
        if (d == NULL)
            continue;
        while ((e = readdir(d)) != NULL) {
            size_t n = strlen(e->d_name);

            if (n > 5 && strcmp(e->d_name + n - 5, ".html") == 0 &&
                (rel = join(subs[s], e->d_name)) != NULL) {
                add_page(rel);
                free(rel);
            }
        }
        closedir(d);
        qsort(the_site.pages + first, the_site.n_pages - first, sizeof(char *), by_name);
    }
}

/* ---- the browser ------------------------------------------------------------ */

static int shoot(const char *abs, const char *page, const char *png)
{
    char *in = join(abs, page), *out = join(abs, png), *u = NULL, w[16], h[16];
    int rc = -1;

    snprintf(w, sizeof(w), "%d", SITE_SHOT_W);
    snprintf(h, sizeof(h), "%d", SITE_SHOT_H);
    if (in != NULL && out != NULL && (u = url_of(in)) != NULL)
        rc = run((const char *[]){ "/bin/sh", browser_sh, "shot", u, out, w, h, NULL }, NULL);
    free(in);
    free(out);
    free(u);
    return rc;
}

/* The page that frames every page of the site and shows both
 * screenshots, with the facts script inlined. */
static int write_harness(const char *path, const char *abs)
{
    static const char *const shots[] = { "matrix.png", "run.png" };
    char *js = slurp(SRCDIR "/tests/site_facts.js"), *file;
    FILE *f = fopen(path, "w");

    if (js == NULL || f == NULL) {
        free(js);
        if (f != NULL)
            fclose(f);
        return -1;
    }
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>site test</title>"
          "</head><body>\n", f);
    for (size_t i = 0; i < the_site.n_pages; i++) {
        if ((file = join(abs, the_site.pages[i])) == NULL)
            continue;
        fprintf(f, "<iframe width=\"%d\" height=\"%d\" data-page=\"%s\" src=\"",
                SITE_SHOT_W, SITE_SHOT_H, the_site.pages[i]);
        url(f, file);
        fputs("\"></iframe>\n", f);
        free(file);
    }
    for (size_t i = 0; i < 2; i++) {
        if ((file = join(abs, shots[i])) == NULL)
            continue;
        fprintf(f, "<img data-png=\"%s\" src=\"", shots[i]);
        url(f, file);
        fputs("\">\n", f);
        free(file);
    }
    fprintf(f, "<script>\n%s</script>\n</body></html>\n", js);
    free(js);
    return fclose(f) == 0 ? 0 : -1;
}

/* ---- the facts ------------------------------------------------------------------ */

static int hex(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10
           : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A field, %-decoded in place. */
static char *decode(char *s)
{
    char *w = s;

    for (char *r = s; *r; r++) {
        if (r[0] == '%' && hex(r[1]) >= 0 && hex(r[2]) >= 0) {
            *w++ = (char)(hex(r[1]) * 16 + hex(r[2]));
            r += 2;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
    return s;
}

static void add_fact(char *line)
{
    site_fact *p = realloc(the_site.facts, (the_site.n_facts + 1) * sizeof(*p));
    site_fact *fact;
    char *w;

    if (p == NULL)
        return;
    the_site.facts = p;
    fact = &the_site.facts[the_site.n_facts++];
    memset(fact, 0, sizeof(*fact));
    /* strsep: an empty field is a field. */
    while ((w = strsep(&line, " ")) != NULL && fact->n < SITE_FIELDS)
        fact->f[fact->n++] = decode(w);
    for (int i = fact->n; i < SITE_FIELDS; i++)
        fact->f[i] = (char *)"";
}

/* The lines of <pre id="facts"> in the dumped DOM (their fields hold no
 * character the DOM escapes). */
static int read_facts(char *dom)
{
    char *at = strstr(dom, "<pre id=\"facts\">"), *end, *save = NULL;

    if (at == NULL || (end = strstr(at, "</pre>")) == NULL)
        return -1;
    *end = '\0';
    at += strlen("<pre id=\"facts\">");
    for (char *line = strtok_r(at, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save))
        add_fact(line);
    return 0;
}

const site_fact *site_next(const char *kind, const char *page, size_t *at)
{
    for (; *at < the_site.n_facts; (*at)++) {
        const site_fact *f = &the_site.facts[*at];

        if (strcmp(f->f[0], kind) == 0 && (page == NULL || strcmp(f->f[1], page) == 0)) {
            (*at)++;
            return f;
        }
    }
    return NULL;
}

/* Loads the harness and keeps what the browser wrote: the facts, the log. */
static int browse(const char *abs)
{
    char tmp[] = "/tmp/lockstep-site.XXXXXX", page[PATH_MAX], dom[PATH_MAX], log[PATH_MAX];
    char *u, *text;
    int rc = -1;

    if (mkdtemp(tmp) == NULL)
        return -1;
    snprintf(page, sizeof(page), "%s/harness.html", tmp);
    snprintf(dom, sizeof(dom), "%s/dom.html", tmp);
    snprintf(log, sizeof(log), "%s/browser.log", tmp);
    if (write_harness(page, abs) == 0 && (u = url_of(page)) != NULL) {
        run((const char *[]){ "/bin/sh", browser_sh, "dom", u, dom, log, NULL }, NULL);
        free(u);
        the_site.log = slurp(log);
        if ((text = slurp(dom)) != NULL && read_facts(text) == 0)
            rc = 0;
        else
            fprintf(stderr, "report-test: the browser wrote no facts (see %s)\n", log);
        if (rc != 0)
            free(text);
    }
    if (rc == 0) {
        unlink(page);
        unlink(dom);
        unlink(log);
        rmdir(tmp);
    }
    return rc;
}

/* make report's PDF, as text with a form feed after each page, when
 * pdftotext is here to read it; said in one line when it is not. */
static void read_pdf(const char *abs)
{
    char txt[] = "/tmp/lockstep-pdf.XXXXXX", *pdf = join(abs, "lockstep.pdf");
    int fd = mkstemp(txt);

    the_site.pdf_there = pdf != NULL && access(pdf, R_OK) == 0;
    if (fd >= 0)
        close(fd);
    if (the_site.pdf_there && fd >= 0) {
        if (run((const char *[]){ "/usr/bin/env", "pdftotext", "-enc", "UTF-8", pdf, txt,
                                  NULL }, NULL) == 0)
            the_site.pdf_text = slurp(txt);
        else
            printf("report-test: no pdftotext here (make deps installs poppler-utils): "
                   "the PDF's pages are not read\n");
    }
    if (fd >= 0)
        unlink(txt);
    free(pdf);
}

/* The run of the screenshot: v3's slow holder, which shows most, when
 * the site has it; else the first run. */
static const char *run_to_show(const char *abs)
{
    static const char *const best = "runs/v3-slow-holder.html";
    char *path = join(abs, best);
    int there = path != NULL && access(path, R_OK) == 0;

    free(path);
    if (there)
        return best;
    return the_site.n_pages > 1 ? the_site.pages[1] : "index.html";
}

int main(int argc, char **argv)
{
    char abs[PATH_MAX], *index;
    int there;

    if (argc != 2) {
        fprintf(stderr, "usage: %s SITE (a folder make report wrote)\n", argv[0]);
        return 2;
    }
    the_site.dir = argv[1];
    index = join(argv[1], "index.html");
    there = index != NULL && access(index, R_OK) == 0;
    free(index);
    if (realpath(argv[1], abs) == NULL || !there) {
        fprintf(stderr, "report-test: %s has no index.html: make report did not write the site\n",
                argv[1]);
        return 1;
    }
    if (run((const char *[]){ "/bin/sh", browser_sh, "find", NULL }, NULL) != 0) {
        printf("report-test: no headless Chromium here (make deps installs it): "
               "the browser test is skipped\n");
        return 0;
    }
    list_pages(abs);
    if (shoot(abs, "index.html", "matrix.png") != 0 ||
        shoot(abs, run_to_show(abs), "run.png") != 0)
        fprintf(stderr, "report-test: a screenshot failed (the test of it will say which)\n");
    if (browse(abs) != 0)
        return 1;
    read_pdf(abs);
    return run_suites((Suite *[]){ site_suite() }, 1);
}
