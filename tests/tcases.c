/* tcases: a suite's tcases from tables of tests. See tcases.h. */
#include "tcases.h"

void add_tests(TCase *tc, const TTest *const *tests, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tcase_add_test(tc, tests[i]);
}

TCase *add_tcase(Suite *suite, const char *name, const TTest *const *tests, size_t n)
{
    TCase *tc = tcase_create(name);

    add_tests(tc, tests, n);
    suite_add_tcase(suite, tc);
    return tc;
}
