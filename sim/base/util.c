/* util: see util.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "util.h"

int sim_error(char *errstr, size_t len, const char *fmt, ...)
{
    va_list ap;

    if (errstr == NULL || len == 0)
        return -1;
    va_start(ap, fmt);
    vsnprintf(errstr, len, fmt, ap);
    va_end(ap);
    return -1;
}

void sim_sleep_us(long us)
{
    struct timespec deadline;
    long long ns;

    if (us <= 0)
        return;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    ns = deadline.tv_nsec + us * 1000LL;
    deadline.tv_sec += ns / 1000000000;
    deadline.tv_nsec = ns % 1000000000;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL) == EINTR)
        ;
}

void sim_sleep_ms(long ms)
{
    sim_sleep_us(ms * 1000);
}

int sim_number(const char *name, const char *text, int as_make, long lo,
               long hi, const char *unit, long *out, char *errstr,
               size_t len)
{
    char typed[96];
    char *end;

    snprintf(typed, sizeof(typed), as_make ? "%s=%s" : "--%s %s", name, text);
    errno = 0;
    *out = strtol(text, &end, 10);
    if (end == text || *end != '\0' || (errno != 0 && errno != ERANGE))
        return sim_error(errstr, len, "%s is not a whole number: give one "
                         "from %ld to %ld%s", typed, lo, hi, unit);
    /* strtol clamps a number too long for a long: still a side to name. */
    if (*out > hi)
        return sim_error(errstr, len, "%s is above the maximum of %ld%s",
                         typed, hi, unit);
    if (*out < lo)
        return sim_error(errstr, len, "%s is below the minimum of %ld%s",
                         typed, lo, unit);
    return 0;
}
