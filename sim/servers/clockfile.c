/* clockfile: one server's wall-clock offset (clockfile.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "clockfile.h"
#include "util.h"

int sim_clockfile_create(char path[SIM_CLOCKFILE_LEN], const char *dir, const char *name,
                         char *errstr, size_t len)
{
    int64_t zero = 0;
    int fd, ok;

    if ((size_t)snprintf(path, SIM_CLOCKFILE_LEN, "%s/%s.clock", dir, name) >= SIM_CLOCKFILE_LEN)
        return sim_error(errstr, len, "clock file name too long: %s/%s.clock", dir, name);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    ok = fd >= 0 && write(fd, &zero, sizeof(zero)) == (ssize_t)sizeof(zero);
    if (fd >= 0 && close(fd) != 0)
        ok = 0;
    return ok ? 0 : sim_error(errstr, len, "%s: %s", path, strerror(errno));
}

void sim_clockfile_env(sim_clock_env *e, const char *shim, const char *path)
{
    snprintf(e->preload, sizeof(e->preload), "LD_PRELOAD=%s", shim);
    snprintf(e->file, sizeof(e->file), "LOCKSTEP_CLOCK_FILE=%s", path);
    e->env[0] = e->preload;
    e->env[1] = e->file;
    e->env[2] = NULL;
}

int sim_clockfile_jump(const char *path, long ms, char *errstr, size_t len)
{
    _Atomic int64_t *offset;
    int fd = open(path, O_RDWR | O_CLOEXEC);

    offset = fd >= 0 ? mmap(NULL, sizeof(*offset), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                     : MAP_FAILED;
    if (fd >= 0)
        close(fd);
    if (offset == MAP_FAILED)
        return sim_error(errstr, len, "%s: %s", path, strerror(errno));
    atomic_fetch_add(offset, (int64_t)ms);
    munmap((void *)offset, sizeof(*offset));
    return 0;
}
