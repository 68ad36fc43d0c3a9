/* clockfile: one server's wall-clock offset, for the clock-jump fault.
 *
 * A server started under the clock library (clockshim.c) adds to every
 * wall-clock reading an int64 of milliseconds kept at the start of a file
 * of its own, which it maps. A jump stores into the same page, atomically,
 * so no reading sees half of it. Redis's nodes (cluster.h) and
 * ZooKeeper's (ensemble.h) both use it.
 *
 * Errors, hiredis-style: 0, or -1 with one line of reason in errstr. */
#ifndef SIM_CLOCKFILE_H
#define SIM_CLOCKFILE_H

#include <limits.h>
#include <stddef.h>

#include "tempdir.h"

#define SIM_CLOCKFILE_LEN (SIM_PATH_LEN + 32)

/* What a server's environment gets: the library to preload, the file. */
typedef struct sim_clock_env {
    char preload[PATH_MAX + 16];          /* LD_PRELOAD=<shim> */
    char file[SIM_CLOCKFILE_LEN + 32];    /* LOCKSTEP_CLOCK_FILE=<path> */
    const char *env[3];                   /* both, NULL-terminated */
} sim_clock_env;

/* Creates dir/name.clock holding an offset of 0; its path into path. */
int sim_clockfile_create(char path[SIM_CLOCKFILE_LEN], const char *dir, const char *name,
                         char *errstr, size_t len);

/* Fills e with the entries that run a server under shim, with the offset
 * at path; e->env is what sim_server_start_env and sim_server_exec take. */
void sim_clockfile_env(sim_clock_env *e, const char *shim, const char *path);

/* The offset at path grows by ms: the server's wall clock jumps. */
int sim_clockfile_jump(const char *path, long ms, char *errstr, size_t len);

#endif
