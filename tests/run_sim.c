/* run_sim: the simulator's own tests (build/test_sim). No Redis: the
 * checker, the history, the report and the bench's tally run on
 * hand-written histories; the list of stages and the answer key are
 * checked against each other and the stage folders.
 * Prints Check's summary line and exits non-zero when any test failed. */
#include <check.h>

#include "tcases.h"

Suite *checker_suite(void);  /* tests/test_checker.c: ME and MD */
Suite *deadlock_suite(void); /* tests/test_deadlock.c: DL, lost updates, refusals */
Suite *verdicts_suite(void); /* tests/test_verdicts.c: tests/histories */
Suite *nodes_suite(void);    /* tests/test_nodes.c: a lock of several nodes */
Suite *history_suite(void);  /* tests/test_history.c: journal, order, file */
Suite *report_suite(void);   /* tests/test_report*.c: sentences, timeline, matrix */
Suite *tally_suite(void);    /* tests/test_tally.c: the bench's tally */
Suite *stages_suite(void);   /* tests/test_stages.c: the list of stages, the answer key */
Suite *pool_suite(void);     /* tests/test_pool.c: jobs in processes of their own */
Suite *html_suite(void);     /* tests/test_html.c: the report's web pages */
Suite *row_stories_suite(void); /* tests/test_row_stories.c: docs/matrix.md's row stories */
Suite *matrix_page_suite(void); /* tests/test_matrix_page.c: the matrix page, the handout */
Suite *fault_story_suite(void); /* tests/test_fault_story.c: a cut link, a clock jump */
Suite *zk_dump_suite(void);     /* tests/test_zk_dump.c: a ZooKeeper server's sessions */
Suite *libs_suite(void);        /* tests/test_libs.c: the libraries' driver.conf */

int main(void)
{
    Suite *const suites[] = {
        checker_suite(), deadlock_suite(), verdicts_suite(), nodes_suite(), history_suite(),
        report_suite(), tally_suite(), stages_suite(), pool_suite(), html_suite(),
        row_stories_suite(), matrix_page_suite(), fault_story_suite(), zk_dump_suite(),
        libs_suite(),
    };

    return RUN_SUITES(suites);
}
