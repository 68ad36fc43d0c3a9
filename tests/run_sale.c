/* run_sale: the Redis Cluster's and the flash sale's tests
 * (build/test_sale): a real cluster of six nodes formed, keys routed by
 * slot, MOVED and ASK followed, and sales played on it with v5's lock.
 * Prints Check's summary line and exits non-zero when any test failed. */
#include <check.h>

#include "rundir.h"
#include "tcases.h"

Suite *rcluster_suite(void); /* tests/test_rcluster.c */
Suite *sale_suite(void);     /* tests/test_sale.c */

int main(void)
{
    rundir_init();
    return run_suites((Suite *[]){ rcluster_suite(), sale_suite() }, 2);
}
