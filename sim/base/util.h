/* util: the few helpers every simulator module uses.
 *
 *   sim_error     errors the hiredis way: fill errstr, return -1
 *   sim_sleep_ms  sleep the calling thread, resumed after a signal
 *   sim_sleep_us
 *   sim_number    a command-line number, with an error that quotes it
 *   SIM_CMP       a comparator's step: the order of two fields that differ
 *
 * One copy here, so that a fix to one reaches every module. */
#ifndef SIM_UTIL_H
#define SIM_UTIL_H

#include <stddef.h>

/* Writes one line of reason into errstr (when errstr is not NULL) and
 * returns -1, so a failing function can say `return sim_error(...)`. */
int sim_error(char *errstr, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Sleeps for ms (or us) on CLOCK_MONOTONIC, to an absolute deadline: a
 * signal handler that runs meanwhile neither cuts the sleep short nor
 * stretches it. */
void sim_sleep_ms(long ms);
void sim_sleep_us(long us);

/* A whole decimal number in [lo, hi] from a command-line argument, or -1
 * with a reason in errstr that quotes the argument as the user typed it:
 * make's form "lease=50" when as_make, else "--lease 50"; name is "lease".
 * unit (" ms", or "") follows each limit: "lease=50 is below the minimum
 * of 100 ms". */
int sim_number(const char *name, const char *text, int as_make, long lo,
               long hi, const char *unit, long *out, char *errstr,
               size_t len);

/* In a qsort comparator: returns -1 or 1 when x and y differ, so that a
 * comparator is its fields in order, most significant first, and what
 * ties on all of them after. */
#define SIM_CMP(x, y) do { if ((x) != (y)) return (x) < (y) ? -1 : 1; } while (0)

#endif
