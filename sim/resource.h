/* resource: what the clients change under the lock, on the resource
 * server (a server of its own that faults never touch).
 *
 *   stock    the scenarios' stock deduction: read it, work, write it - 1.
 *            Two clients inside at once sell the same item: a lost update.
 *   counter  the bench's read-modify-write: read it, write it + 1.
 *
 * One way to read and write these keys, for the clients inside their
 * critical sections, the runner (the stock before and after a run) and
 * the bench (the counter before and after a window). Errors, hiredis-
 * style: 0, or -1 with one line of reason in errstr. */
#ifndef SIM_RESOURCE_H
#define SIM_RESOURCE_H

#include <stddef.h>
#include <hiredis/hiredis.h>

#define SIM_STOCK_KEY "stock"     /* items left; each sale writes one less */
#define SIM_COUNTER_KEY "counter" /* acquisitions so far; each writes one more */

/* GET key into *value; a missing key is an error. */
int sim_resource_get(redisContext *c, const char *key, long long *value,
                     char *errstr, size_t len);

/* SET key to value. */
int sim_resource_set(redisContext *c, const char *key, long long value,
                     char *errstr, size_t len);

#endif
