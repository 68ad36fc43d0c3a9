/* clockshim: a preload library that moves a process's wall clock, for
 * the clock-jump fault.
 *
 *   LD_PRELOAD=build/clockshim.so LOCKSTEP_CLOCK_FILE=<file> redis-server ...
 *
 * Redis expires keys by its wall clock (gettimeofday, CLOCK_REALTIME), so
 * a server whose clock jumps forward ends its keys early. This library
 * adds an offset to every wall-clock reading of the process it is loaded
 * into: CLOCK_REALTIME and CLOCK_REALTIME_COARSE of clock_gettime,
 * gettimeofday and time. The monotonic clocks pass unchanged, as they do
 * on a real machine whose wall clock is stepped (by NTP, or by hand).
 *
 * The offset is a signed 64-bit count of milliseconds at the start of
 * <file>, which the nemesis maps and stores into atomically (cluster.c);
 * each reading loads it from the same page, so a jump takes effect at the
 * server's next reading of the time. Without the variable, or with a file
 * it cannot map, the offset is 0.
 *
 * Built on its own (the Makefile's build/clockshim.so, -shared -fPIC),
 * linked into nothing, and never built with the sanitizers: it is loaded
 * into a redis-server, which has no sanitizer runtime. It reads the real
 * time with the system call itself, not through the C library's symbols:
 * looking those up (dlsym) can allocate, and redis-server's allocator
 * reads the time while it starts, which is the loop that makes Debian's
 * libfaketime refuse to start redis-server. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define CLOCK_FILE_ENV "LOCKSTEP_CLOCK_FILE"

static const _Atomic int64_t no_offset;
/* The mapped offset; NULL until the first reading maps it. */
static const _Atomic int64_t *_Atomic offset_at;

/* Maps the file once; a second thread that maps it too loses the race
 * and keeps the first mapping (its own stays mapped: one page, for the
 * process's life). */
static const _Atomic int64_t *offset_page(void)
{
    const _Atomic int64_t *p = atomic_load(&offset_at), *expected = NULL;
    const char *path;
    void *map = MAP_FAILED;
    int fd;

    if (p != NULL)
        return p;
    path = getenv(CLOCK_FILE_ENV);
    fd = path != NULL ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (fd >= 0) {
        map = mmap(NULL, sizeof(int64_t), PROT_READ, MAP_SHARED, fd, 0);
        close(fd);
    }
    p = map != MAP_FAILED ? map : &no_offset;
    if (!atomic_compare_exchange_strong(&offset_at, &expected, p))
        p = expected;
    return p;
}

static int64_t offset_ns(void)
{
    return atomic_load_explicit(offset_page(), memory_order_relaxed) * 1000000;
}

static int wall(clockid_t id)
{
    return id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE;
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
    int64_t ns;

    if (syscall(SYS_clock_gettime, id, ts) != 0)
        return -1;
    if (!wall(id))
        return 0;
    ns = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec + offset_ns();
    ts->tv_sec = (time_t)(ns / 1000000000);
    ts->tv_nsec = (long)(ns % 1000000000);
    return 0;
}

/* The timezone argument is obsolete; Redis passes NULL. The C library
 * declares tv never NULL, so it is not checked here either. */
int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
    struct timespec ts;

    (void)tz;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
        return -1;
    tv->tv_sec = ts.tv_sec;
    tv->tv_usec = ts.tv_nsec / 1000;
    return 0;
}

time_t time(time_t *out)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
        return (time_t)-1;
    if (out != NULL)
        *out = ts.tv_sec;
    return ts.tv_sec;
}
