/* libs: the libraries the matrix runs through a driver (docs/drivers.md),
 * one folder each under drivers/, and their answer key.
 *
 * A library's folder holds its driver, a short program in the library's
 * language, and driver.conf, which says how to run it and what its row
 * of the matrix must show:
 *
 *   run: /usr/bin/python3 lock.py        the command, run in the folder
 *   beside: 5                            the stage it stands beside: the
 *                                        servers it gets, and the row's
 *                                        default cells
 *   package: python3-redis               what make deps libs=1 installs
 *   check: /usr/bin/python3 -c "import redis"   exit 0 when installed
 *   lease: 1200                          the least lease (L) its cells are
 *                                        played with, and why, in a comment
 *   cell: gc-pause | ME | sentence       a cell that differs from the
 *                                        stage's, and why in one sentence;
 *                                        "n/a" for a scenario that cannot
 *                                        reach the library (not played);
 *                                        a scenario that arms a failpoint
 *                                        is n/a for every library
 *
 * Nothing in the simulator names a library: a new folder is a new
 * column. The folders are read from LOCKSTEP_DRIVERS when it is set, else
 * from the repository's drivers/. */
#ifndef SIM_LIBS_H
#define SIM_LIBS_H

#include <stddef.h>

#include "runner.h"
#include "scenarios.h"

#define SIM_LIBS_MAX 16
#define SIM_LIB_CELLS 32
#define SIM_LIB_NA "n/a"

typedef struct sim_lib_cell {
    char scenario[32];
    char key[32];          /* the marks, "-", or "n/a" */
    char why[256];         /* one sentence */
} sim_lib_cell;

typedef struct sim_lib {
    char name[32];         /* the folder's name: "redis-py" */
    char dir[512];         /* its path */
    char run[256];
    char package[128];
    char check[256];
    int beside;            /* a stage's number */
    long lease_ms;         /* the least L it is played with; 0: any */
    sim_lib_cell cells[SIM_LIB_CELLS];
    int ncells;
} sim_lib;

/* Reads every drivers/<name>/driver.conf, by the stage it stands
 * beside and then by name, into libs
 * (SIM_LIBS_MAX). How many, or -1 with errstr (a line it cannot read). */
int sim_libs_load(sim_lib *libs, char *errstr, size_t len);

/* lib's cell for s: "n/a" when s arms a failpoint (a step of a stage's
 * own lock.c, which no library has), with *why saying so; else its own
 * line's key when it has one (*why its sentence), else the stage's
 * (*why ""). */
const char *sim_lib_key(const sim_lib *lib, const sim_scenario *s, const char **why);

/* Whether its package is installed: its check command exits 0. */
int sim_lib_installed(const sim_lib *lib);

/* build/lib-<name>/client, next to our own folder (build/sim): the
 * script make writes for each driver. 0, or -1 with errstr. */
int sim_lib_program(const sim_lib *lib, char *out, size_t len, char *errstr, size_t elen);

/* base as lib is played: through the proxy (a driver is given one
 * address per node, which the proxy keeps pointing at the node where it
 * lives now, after a failover or a restart), at its least lease. */
sim_run_config sim_lib_config(const sim_lib *lib, sim_run_config base);

/* A run of lib's, played: it reads as the library's, and its timeline
 * starts at its first call of the lock, not at its clients' start (a
 * JVM takes seconds to start). */
void sim_lib_settle(const sim_lib *lib, sim_run *run);

/* Plays s through lib's driver, on the servers of the stage it stands
 * beside (cfg from sim_lib_config); as sim_runner_play. The run's stage reads as the library's name. */
int sim_lib_play(const sim_lib *lib, const sim_scenario *s, const sim_run_config *cfg,
                 sim_run *run, char *errstr, size_t len);

#endif
