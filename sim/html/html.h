/* html: the course as a web site, for a projector and a handout.
 *
 * The same account the terminal gives (report.h), drawn for a browser:
 * the fault matrix as a coloured grid, each run's timeline as an SVG
 * picture from its recorded history, each stage's README and its diff
 * from the stage it is built on, side by side. Static files only: no
 * script, no font, no style sheet or image from anywhere else, so the
 * folder opens from the file system and can be zipped and mailed.
 *
 * API:
 *
 *   int sim_html_site(const char *dir, const char *src,
 *                     const sim_html_about *about,
 *                     const sim_html_run *runs, size_t n,
 *                     char *errstr, size_t len);
 *   int sim_html_run_page(const char *dir, const sim_html_run *run,
 *                         char *path, size_t plen,
 *                         char *errstr, size_t len);
 *   void sim_html_tell(FILE *out, const char *what, const char *path);
 *
 * The site, in dir:
 *
 *   index.html                  the matrix: a cell per scenario and stage,
 *                               the story of each row, the run's parameters
 *   runs/vN-<scenario>.html     a run: its timeline, its verdict in the
 *                               report's sentences
 *   runs/vN-<scenario>.jsonl    its history, which `sim check` judges again
 *   stages/<folder>.html        a stage: its README, its diff from its base
 *   guide/readme.html           README.md, and guide/<name>.html each page of
 *                               docs/, as GitHub renders them, with their pictures
 *   print.html                  the handout: the matrix and its legend on one
 *                               sheet, then each row's story with the evidence
 *                               of its cells (make report prints it to
 *                               lockstep.pdf); runs and stages stay on the site
 *
 * Everything that comes from data (names, sentences, file contents) is
 * HTML-escaped. Errors, hiredis-style: 0, or -1 with one line of reason
 * in errstr naming the file that could not be read or written. */
#ifndef SIM_HTML_H
#define SIM_HTML_H

#include <stddef.h>
#include <stdio.h>

#include "report.h"

/* The page that tells the story of each row of the matrix, under the
 * repository's root: the matrix page shows each story under its grid. */
#define SIM_HTML_STORIES "docs/matrix.md"

/* One run as the pages show it. */
typedef struct sim_html_run {
    sim_matrix_cell cell;       /* the matrix's cell: scenario, stage, marks,
                                 * answer key, reachability, verdict, t0 */
    const sim_run_info *info;   /* the run's header: title, lease, clients */
    const sim_event *ev;        /* its history, in sim_event_order */
    size_t n;
} sim_html_run;

/* How the matrix was played, for the parameters on its page. */
typedef struct sim_html_about {
    long lease_ms;         /* L */
    unsigned seed;
    int jobs;              /* cells played at once */
    int sentinel;          /* the failover was a real redis-sentinel's */
    const char *redis;     /* "redis-server v=7.0.15 ...", "" unknown */
    const char *build;     /* the build's version (git describe), "" unknown */
    double seconds;        /* how long the matrix took to play */
} sim_html_about;

/* The whole site: index.html, runs/, stages/ and print.html in dir (created as
 * needed). src is the repository's root: the stories of the matrix's rows
 * come from its README.md, each stage's page from its folder. */
int sim_html_site(const char *dir, const char *src,
                  const sim_html_about *about, const sim_html_run *runs,
                  size_t n, char *errstr, size_t len);

/* One run's page alone, dir/vN-<scenario>.html, its history next to it
 * (.jsonl); path gets the page's path. The page links only to its
 * history: it stands outside any site. */
int sim_html_run_page(const char *dir, const sim_html_run *run, char *path,
                      size_t plen, char *errstr, size_t len);

/* Where a page was written, and how to open it: its path, and its
 * file:// address for a browser. */
void sim_html_tell(FILE *out, const char *what, const char *path);

/* The libraries' columns (sim/libs_cmd.c): a table of nrows x ncols
 * cells, a row per scenario, and a line per note under it. */
typedef struct sim_html_lib_cell {
    const char *text;      /* "ME LU", "-", "n/a" */
    const char *href;      /* its run's page, relative to dir; NULL: none */
    int differs;           /* the run differs from the library's answer key */
} sim_html_lib_cell;

typedef struct sim_html_libs {
    const char *const *heads;      /* ncols: "v5", "redis-py", ... */
    size_t ncols;
    const char *const *rows;       /* nrows: the scenarios */
    size_t nrows;
    const sim_html_lib_cell *cells; /* row by row */
    const char *const *notes;
    size_t nnotes;
} sim_html_libs;

/* Writes dir/libraries.html; its path into path. 0, or -1 with errstr. */
int sim_html_libs_page(const char *dir, const sim_html_libs *t, char *path, size_t plen,
                       char *errstr, size_t len);

#endif
