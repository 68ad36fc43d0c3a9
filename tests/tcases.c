/* tcases: a suite's tcases from tables of tests, and the run of the
 * suites. See tcases.h. */
#include <stdlib.h>

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

Suite *one_tcase_suite(const char *name, const char *tcase, const TTest *const *tests, size_t n,
                       TCase **tc)
{
    Suite *suite = suite_create(name);
    TCase *made = add_tcase(suite, tcase, tests, n);

    if (tc != NULL)
        *tc = made;
    return suite;
}

Suite *table_suite(const char *name, const tcase_row *rows, size_t n, tcase_adder *add)
{
    Suite *suite = suite_create(name);

    for (size_t i = 0; i < n; i++) {
        size_t tests = 0;

        while (rows[i].tests[tests] != NULL)
            tests++;
        add(suite, rows[i].name, rows[i].tests, tests);
    }
    return suite;
}

int run_suites(Suite *const *suites, size_t n)
{
    SRunner *sr = srunner_create(suites[0]);
    int failed;

    for (size_t i = 1; i < n; i++)
        srunner_add_suite(sr, suites[i]);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
