/* tempdir: the temp dirs of the simulator and the tests, and their removal.
 *
 * Every run's files (servers' dirs and logs, the fleet's control block and
 * history) live under a temp dir made here, $TMPDIR/lockstep.XXXXXX. The
 * module keeps a registry of the dirs each process made, so that the
 * cleanup (sim_cluster_cleanup, at exit or on a signal) removes them even
 * when a run is cut short. A forked child inherits the registry but never
 * acts on its parent's entries. */
#ifndef SIM_TEMPDIR_H
#define SIM_TEMPDIR_H

#include <stddef.h>

#define SIM_PATH_LEN 256      /* a temp dir plus a server's name, with room */

/* Makes $TMPDIR/lockstep.XXXXXX (mode 0700) and registers it, so cleanup
 * removes it. path gets the name; len must be at least SIM_PATH_LEN. */
int sim_tempdir_create(char *path, size_t len, char *errstr, size_t errlen);

/* Removes a temp dir and everything under it, and forgets it. */
void sim_tempdir_remove(const char *path);

/* Removes a directory tree (a server's dir) without touching the
 * registry. Async-signal-safe: system calls only. */
void sim_tempdir_remove_tree(const char *path);

/* Removes every temp dir this process made and has not removed.
 * Async-signal-safe. */
void sim_tempdir_cleanup(void);

#endif
