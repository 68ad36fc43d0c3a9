/* site: the report's browser test, shared by its two files.
 *
 * run_site.c loads every page of a site that make report wrote into a
 * headless Chromium (tools/browser.sh), with two screenshots, and reads
 * back what the browser rendered as facts (tests/site_facts.js: one line
 * each, a kind and its fields); test_site.c asserts on those facts, and
 * on the histories saved next to the run pages, judged again; and on
 * the text of the site's PDF (lockstep.pdf), read with pdftotext. */
#ifndef SITE_H
#define SITE_H

#include <check.h>
#include <stddef.h>

#define SITE_FIELDS 16       /* a fact's kind and up to 15 fields */
#define SITE_SHOT_W 1400     /* the screenshots' size, a projector's */
#define SITE_SHOT_H 1000

typedef struct site_fact {
    char *f[SITE_FIELDS];    /* f[0] the kind; f[1] its page, mostly */
    int n;
} site_fact;

/* What run_site.c gathered before the suite runs. */
typedef struct site {
    const char *dir;         /* the site, as given */
    char **pages;            /* its pages, relative to dir */
    size_t n_pages;
    site_fact *facts;
    size_t n_facts;
    char *log;               /* the browser's log: its console messages */
    int pdf_there;           /* make report printed lockstep.pdf */
    char *pdf_text;          /* its text, a form feed after each page;
                              * NULL: no pdftotext here to read it */
} site;

extern site the_site;

/* The facts of a kind (and of a page, when page is not NULL), in order:
 * the first from *at on; NULL after the last. */
const site_fact *site_next(const char *kind, const char *page, size_t *at);

Suite *site_suite(void);

#endif
