/* tcases: a suite's tcases, each built from a table of its tests, and a
 * test binary's run of its suites.
 *
 * A suite lists each tcase's tests in an array, in the order they run,
 * and adds the tcase with one call; the TCase it gets back takes what
 * the tcase needs besides (fixtures, a timeout, loop tests). Check reads
 * a tcase's fixtures and timeout when it runs the tcase, so they may be
 * set after its tests.
 *
 *   ADD_TCASE(suite, name, tests)   a tcase of the array's tests
 *   ADD_TESTS(tc, tests)            the array's tests, after tc's own
 *   ONE_TCASE_SUITE(name, tcase, tests, &tc)   a suite of that one tcase
 *
 * A suite whose tcases need nothing besides is one table instead, a row
 * a tcase, its name before its tests:
 *
 *   const tcase_row tcases[] = {
 *       TCASE_ROW("parse", test_a, test_b),
 *       TCASE_ROW("delta", test_c),
 *   };
 *   return TABLE_SUITE("mntr", tcases, add_tcase); */
#ifndef LOCKSTEP_TCASES_H
#define LOCKSTEP_TCASES_H

#include <check.h>
#include <stddef.h>

/* Adds the n tests to tc, in order. */
void add_tests(TCase *tc, const TTest *const *tests, size_t n);

/* A tcase called name, holding the n tests, added to suite. */
TCase *add_tcase(Suite *suite, const char *name, const TTest *const *tests, size_t n);

/* The same for an array, which they count themselves (GCC warns where a
 * pointer is given instead). */
#define ADD_TESTS(tc, tests) add_tests((tc), (tests), sizeof(tests) / sizeof((tests)[0]))
#define ADD_TCASE(suite, name, tests) \
    add_tcase((suite), (name), (tests), sizeof(tests) / sizeof((tests)[0]))

/* A suite called name of one tcase, called tcase, holding the n tests;
 * *tc gets the tcase when tc is not NULL. */
Suite *one_tcase_suite(const char *name, const char *tcase, const TTest *const *tests, size_t n,
                       TCase **tc);
#define ONE_TCASE_SUITE(name, tcase, tests, tc) \
    one_tcase_suite((name), (tcase), (tests), sizeof(tests) / sizeof((tests)[0]), (tc))

/* A row of a suite's table: a tcase's name and its tests, NULL-ended.
 * The tests' list is a compound literal, alive in the block that holds
 * the table: the suite is built there, before the function returns. */
typedef struct tcase_row {
    const char *name;
    const TTest *const *tests;
} tcase_row;
#define TCASE_ROW(name, ...) { (name), (const TTest *const[]){ __VA_ARGS__, NULL } }

/* How a row's tcase is added: add_tcase, or a kind of tcase's own adder
 * (tests/story.h's add_story_tcase). */
typedef TCase *tcase_adder(Suite *suite, const char *name, const TTest *const *tests, size_t n);

/* A suite called name of the n rows' tcases, in order, each added by add. */
Suite *table_suite(const char *name, const tcase_row *rows, size_t n, tcase_adder *add);
#define TABLE_SUITE(name, rows, add) \
    table_suite((name), (rows), sizeof(rows) / sizeof((rows)[0]), (add))

/* Runs the n suites (Check's CK_VERBOSITY says how much it prints; by
 * default the failures and the summary line "N%: Checks: N, Failures:
 * N, Errors: N") and returns main's exit status: EXIT_FAILURE when any
 * test failed. */
int run_suites(Suite *const *suites, size_t n);
#define RUN_SUITES(suites) run_suites((suites), sizeof(suites) / sizeof((suites)[0]))

#endif
