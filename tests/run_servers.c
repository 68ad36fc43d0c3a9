/* run_servers: the server kinds' own tests (build/test_servers): a real
 * ZooKeeper ensemble started, its leader killed, a node restarted empty,
 * nothing left behind, also after Ctrl-C, and a matrix's shared ensemble
 * whose clocks a clock-jump run moves; a MariaDB primary and replica,
 * who gets in, a restart and a promotion; Redis nodes, a replica and a
 * sentinel that let in only the run's clients. No lock.
 * Prints Check's summary line and exits non-zero when any test failed. */
#include <check.h>

#include "rundir.h"
#include "tcases.h"

Suite *ensemble_suite(void); /* tests/test_ensemble.c */
Suite *mariadb_servers_suite(void); /* tests/test_mariadbd.c */
Suite *redis_servers_suite(void); /* tests/test_redisd.c */

int main(void)
{
    rundir_init();
    return run_suites((Suite *[]){ ensemble_suite(), mariadb_servers_suite(),
                                   redis_servers_suite() }, 3);
}
