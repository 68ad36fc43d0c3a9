/* pages: the web page tests' scratch folder and reading. See pages.h. */
#define _GNU_SOURCE
#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pages.h"
#include "tcases.h"

/* A stage page runs make diff, v6's once per part: a few seconds on a
 * busy machine, more under a sanitizer. */
#define PAGES_TIMEOUT_S 60

char tmp[PAGES_PATH];
char *text;

Suite *pages_suite(const char *name, const TTest *const *tests, size_t n,
                   void (*teardown)(void))
{
    TCase *pages;
    Suite *suite = one_tcase_suite(name, "pages", tests, n, &pages);

    tcase_add_checked_fixture(pages, make_tmp, teardown);
    tcase_set_timeout(pages, PAGES_TIMEOUT_S);
    return suite;
}

void make_tmp(void)
{
    snprintf(tmp, sizeof(tmp), "%s", "/tmp/lockstep-pages.XXXXXX");
    ck_assert_msg(mkdtemp(tmp) != NULL, "cannot make a temp folder");
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void remove_tmp(void)
{
    nftw(tmp, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    free(text);
    text = NULL;
}

void read_back(const char *name)
{
    char path[512];
    FILE *f;
    size_t len = 0;

    snprintf(path, sizeof(path), "%s/%s", tmp, name);
    free(text);
    text = NULL;
    ck_assert_msg((f = fopen(path, "r")) != NULL, "%s was not written", path);
    ck_assert(getdelim(&text, &len, '\0', f) > 0);
    fclose(f);
}

void has(const char *want)
{
    ck_assert_msg(strstr(text, want) != NULL, "the page lacks \"%s\"", want);
}

void lacks(const char *unwanted)
{
    ck_assert_msg(strstr(text, unwanted) == NULL, "the page has \"%s\"; expected "
                  "it escaped or gone", unwanted);
}

size_t count(const char *what)
{
    size_t n = 0;

    for (const char *p = text; (p = strstr(p, what)) != NULL; p++)
        n++;
    return n;
}
