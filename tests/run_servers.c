/* run_servers: the server kinds' own tests (build/test_servers): a real
 * ZooKeeper ensemble started, its leader killed, a node restarted empty,
 * and nothing left behind, also after Ctrl-C. No stage and no lock.
 * Prints Check's summary line and exits non-zero when any test failed. */
#include <check.h>
#include <stdlib.h>

void servers_test_init(void); /* tests/test_ensemble.c: the temp dir and the cleanup */
Suite *ensemble_suite(void);  /* tests/test_ensemble.c */

int main(void)
{
    SRunner *runner;
    int failed;

    servers_test_init();
    runner = srunner_create(ensemble_suite());
    srunner_run_all(runner, CK_NORMAL);
    failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
