/* pages: what the tests of the report's web pages share (no Redis, no
 * browser): a scratch folder per test, where the pages are written, and
 * questions about the last file read back from it.
 *
 *   PAGES_SUITE(name, tests, teardown)   a suite of one tcase of page tests
 *   make_tmp, remove_tmp   a checked fixture: the folder, made and removed
 *   read_back(name)        tmp/name into text (a failed test if missing)
 *   has, lacks, count      text holds a string, does not, how often */
#ifndef LOCKSTEP_PAGES_H
#define LOCKSTEP_PAGES_H

#include <check.h>
#include <stddef.h>

#define PAGES_PATH 64  /* "/tmp/lockstep-pages.XXXXXX", with room */

extern char tmp[PAGES_PATH]; /* the running test's scratch folder */
extern char *text;           /* the last file read back */

/* A suite called name of one tcase, "pages", of the n tests: each in a
 * scratch folder of its own (make_tmp, then teardown: remove_tmp, or a
 * function that calls it), and time for the stage pages' make diff. */
Suite *pages_suite(const char *name, const TTest *const *tests, size_t n,
                   void (*teardown)(void));
#define PAGES_SUITE(name, tests, teardown) \
    pages_suite((name), (tests), sizeof(tests) / sizeof((tests)[0]), (teardown))

void make_tmp(void);
void remove_tmp(void);
void read_back(const char *name);
void has(const char *want);
void lacks(const char *unwanted);
size_t count(const char *what);

#endif
