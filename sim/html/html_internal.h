/* html_internal: what the site's files share; nothing else includes it.
 *
 *   html.c          escaping, files, names, the whole site
 *   html_page.c     a page's frame: head, style, navigation, foot
 *   html_matrix.c   index.html: the fault matrix and the rows' stories
 *   html_run.c      a run's page: its timeline and its verdict
 *   html_svg.c      the timeline, drawn from the history (html_svg.h:
 *                   html_lanes.c its client lanes, html_legend.c its legend)
 *   html_stage.c    a stage's page: its README and its diff
 *   html_md.c       the Markdown the READMEs are written in
 *   html_diff.c     make diff's output side by side, the changed lines marked
 *   html_book.c     print.html: every page of the site in one document
 *
 * The site is part of the report: its sentences are the report's
 * (report_internal.h), never a second wording. */
#ifndef SIM_HTML_INTERNAL_H
#define SIM_HTML_INTERNAL_H

#include <stdio.h>

#include "html.h"
#include "report_internal.h"

#define SIM_HTML_PATH 4096  /* a file's path */

/* ---- html.c ----------------------------------------------------------- */

/* Text as HTML: & < > " ' escaped, so data never becomes markup. */
void sim_html_esc(FILE *f, const char *s);
void sim_html_escn(FILE *f, const char *s, size_t n);

/* printf, then escaped. */
void sim_html_escf(FILE *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Creates dir and its parents. 0, or -1 with errstr. */
int sim_html_mkdir(const char *dir, char *errstr, size_t len);

/* Opens dir/name for writing, its path into path. NULL with errstr. */
FILE *sim_html_create(const char *dir, const char *name, char *path,
                      size_t plen, char *errstr, size_t len);

/* Closes f, which was written to path: -1 with errstr when a write
 * failed (a full disk), 0 otherwise. */
int sim_html_close(FILE *f, const char *path, char *errstr, size_t len);

/* A whole file, NUL-terminated; *n its length. NULL with errstr. */
char *sim_html_slurp(const char *path, size_t *n, char *errstr, size_t len);

/* "v3-slow-holder": a run's file name without extension. */
void sim_html_run_name(char *buf, size_t len, int stage, const char *scenario);

/* "me md lu": the classes of a cell's marks (sim_report_cell_marks),
 * "none" when it has no anomaly, "fence" where the fence held. */
void sim_html_mark_classes(char *buf, size_t len, unsigned set);

/* A cell's marks as badges, ME MD DL LU ? F T; "-", or "(-)" for a
 * fault the stage cannot reach, when there is no anomaly. */
void sim_html_marks(FILE *f, unsigned set, int unreachable);

/* The class of a mark's badge ("ME", "unjudged", "fence", ...; "none"
 * for "-"): the one the stylesheet draws it with. */
const char *sim_html_mark_class(const char *mark);

/* ---- html_page.c ------------------------------------------------------ */

/* The top of a page up to its <main>: the title, the style, and with
 * root (the site's root relative to the page: "" or "../") a bar that
 * links to the matrix and to every stage. root NULL: no bar. */
void sim_html_head(FILE *f, const char *title, const char *root);

/* The end of a page. */
void sim_html_foot(FILE *f);

/* A client's colour, the same on every page: client 0 is A. */
const char *sim_html_client_colour(int client);

/* ---- html_matrix.c, html_run.c, html_stage.c ----------------------------- */

int sim_html_matrix_page(const char *dir, const char *src,
                         const sim_html_about *about,
                         const sim_html_run *runs, size_t n,
                         char *errstr, size_t len);

/* A run's page into dir; in_site: it links to the matrix and its stage
 * (runs/ of a site), else only to its history. */
int sim_html_write_run(const char *dir, const sim_html_run *run,
                       int in_site, char *path, size_t plen,
                       char *errstr, size_t len);

int sim_html_stage_page(const char *dir, const char *src, int stage,
                        const sim_html_run *runs, size_t n,
                        char *errstr, size_t len);

/* ---- html_guide.c ---------------------------------------------------------- */

/* guide/ in dir: README.md and each page of docs/ in src, rendered, and
 * docs/'s pictures. 0, or -1 with errstr. */
int sim_html_guide(const char *dir, const char *src, char *errstr, size_t len);

/* A sim_html_link_fn for a page of the repository in folder arg ("" for
 * README.md, "docs/", "v1-setnx/"), rendered one folder deep in the
 * site: a README or a page of docs/ leads to its page on the site, the
 * web and the page's own anchors stay, any other file: NULL. */
const char *sim_html_repo_link(const char *url, char *buf, size_t len, void *arg);

/* The story of a scenario's row in that page: the text after
 * "- **<name>.**" up to the next item, as a pointer into readme and its
 * length; NULL when the page tells none. */
const char *sim_html_story(const char *readme, const char *scenario,
                           size_t *n);

/* ---- html_book.c --------------------------------------------------------- */

/* dir/print.html, the handout, from dir/index.html, which must be
 * written: the matrix and its legend on the first sheet, then each
 * row's story with its cells' evidence. 0, or -1 with errstr. */
int sim_html_book(const char *dir, char *errstr, size_t len);

/* ---- html_svg.c ---------------------------------------------------------- */

/* The run's timeline as an inline <svg>. */
void sim_html_timeline(FILE *f, const sim_html_run *run);

/* ---- html_md.c ----------------------------------------------------------- */

/* Where a link of the Markdown points on the site: url rewritten into
 * buf and returned, or NULL to show its text without a link. */
typedef const char *(*sim_html_link_fn)(const char *url, char *buf,
                                        size_t len, void *arg);

/* Markdown to HTML as GitHub renders it (cmark-gfm): each link through
 * link (NULL: every link as written), a diff block's lines coloured, the
 * writer's raw HTML shown as text. */
void sim_html_markdown(FILE *f, const char *text, sim_html_link_fn link, void *arg);

/* The same of n bytes that make one paragraph, without its <p>. */
void sim_html_inline(FILE *f, const char *text, size_t n,
                     sim_html_link_fn link, void *arg);

/* ---- html_diff.c --------------------------------------------------------- */

/* What stage changed on its base, side by side: the output of make
 * diff (src/tools/stagediff.sh, run) drawn as tables: its changed
 * regions, in parts where make diff cuts the stage's diff into parts,
 * then the whole files on request. 0, or -1 with errstr. */
int sim_html_diff(FILE *f, const char *src, int stage, char *errstr, size_t len);

#endif
