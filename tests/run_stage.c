/* run_stage: the test binary of one stage (build/vN/tests).
 *
 * Runs every suite against real servers (redis-servers, or a ZooKeeper
 * ensemble or a MariaDB server for a stage whose lock lives there), prints Check's summary line
 * ("100%: Checks: N, Failures: 0, Errors: 0") and exits non-zero when any
 * test failed. */
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"
#include "suites.h"

/* A suite whose file is not part of the build yet is a null weak symbol:
 * the runner skips it instead of failing to link. */
#pragma weak matrix_suite
#pragma weak queue_suite
#pragma weak clock_suite
#pragma weak proxy_suite
#pragma weak zk_suite
#pragma weak mariadb_suite

int main(void)
{
    Suite *(*const all[])(void) = { lock_suite, zk_suite, mariadb_suite, queue_suite,
                                    clock_suite, proxy_suite, matrix_suite };
    Suite *suites[sizeof(all) / sizeof(all[0])];
    int i, n = 0;

    rundir_init();
    printf("== stage %d: %s ==\n", CAPS.stage, CAPS.dir);
    for (i = 0; i < (int)(sizeof(all) / sizeof(all[0])); i++)
        if (all[i] != NULL)
            suites[n++] = all[i]();
    return run_suites(suites, (size_t)n);
}
