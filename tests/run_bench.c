/* run_bench: the bench's own logic without a server (build/bench/test_bench):
 * a ZooKeeper server's counters read from its mntr answer, and what the
 * clients did between two readings. make bench-test runs it before the
 * bench itself. Prints Check's summary line and exits non-zero when any
 * test failed. */
#include <check.h>
#include <stdlib.h>

Suite *mntr_suite(void); /* tests/test_mntr.c */

int main(void)
{
    SRunner *runner = srunner_create(mntr_suite());
    int failed;

    srunner_run_all(runner, CK_NORMAL);
    failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
