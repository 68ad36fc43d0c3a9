/* util: see util.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
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
