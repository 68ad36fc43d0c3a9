/* resource: what the clients change under the lock, on the resource
 * server (a server of its own that faults never touch).
 *
 *   stock    the scenarios' stock deduction: read it, work, write it - 1.
 *            Two clients inside at once sell the same item: a lost update.
 *   counter  the bench's read-modify-write: read it, write it + 1.
 *   fence    the highest fencing token the stock has seen (stages that
 *            draw tokens).
 *
 * One way to read and write these keys, for the clients inside their
 * critical sections, the runner (the stock before and after a run) and
 * the bench (the counter before and after a window). Errors, hiredis-
 * style: 0, or -1 with one line of reason in errstr.
 *
 * The fenced stock is the resource that checks, as a fencing token asks:
 * a holder sends its token with every access, and one script on the
 * resource server checks it and does the access in one step. A read raises
 * the fence to its token: a holder with a newer token has come, and from
 * then on a write from any older holder is refused, even one whose read
 * came first (it would overwrite the sale of the newer holder, who read
 * before it wrote). A write with a token at least the fence is accepted.
 * Equal tokens pass: the resource cannot tell two holders with the same
 * token apart. */
#ifndef SIM_RESOURCE_H
#define SIM_RESOURCE_H

#include <stddef.h>
#include <hiredis/hiredis.h>

#define SIM_STOCK_KEY "stock"     /* items left; each sale writes one less */
#define SIM_COUNTER_KEY "counter" /* acquisitions so far; each writes one more */
#define SIM_FENCE_KEY "fence"     /* the highest token seen; absent: 0 */

#define SIM_RESOURCE_REFUSED 1    /* a fenced write: its token was too old */

/* GET key into *value; a missing key is an error. */
int sim_resource_get(redisContext *c, const char *key, long long *value,
                     char *errstr, size_t len);

/* SET key to value. */
int sim_resource_set(redisContext *c, const char *key, long long value,
                     char *errstr, size_t len);

/* GET key into *value, and raise the fence to token (> 0) when it is
 * higher. A missing key is an error. */
int sim_resource_get_fenced(redisContext *c, const char *key, long long token,
                            long long *value, char *errstr, size_t len);

/* SET key to value if token (> 0) is at least the fence, raising the
 * fence to it. Otherwise nothing is written and the result is
 * SIM_RESOURCE_REFUSED, with the fence in *highest. */
int sim_resource_set_fenced(redisContext *c, const char *key, long long value,
                            long long token, long long *highest,
                            char *errstr, size_t len);

#endif
