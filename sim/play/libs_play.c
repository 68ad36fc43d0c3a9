/* libs_play: a library's cell played through its driver, on the servers
 * of the stage it stands beside. See libs.h. */
#define _GNU_SOURCE
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "libs.h"
#include "util.h"

int sim_lib_program(const sim_lib *lib, char *out, size_t len, char *errstr, size_t elen)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

    if (n <= 0)
        return sim_error(errstr, elen, "cannot read /proc/self/exe");
    self[n] = '\0';
    snprintf(out, len, "%s/lib-%s/client", dirname(dirname(self)), lib->name);
    if (access(out, X_OK) != 0)
        return sim_error(errstr, elen, "%s is missing: build it with `make libs-build`", out);
    return 0;
}

sim_run_config sim_lib_config(const sim_lib *lib, sim_run_config base)
{
    base.proxy = 1;
    if (base.lease_ms < lib->lease_ms)
        base.lease_ms = lib->lease_ms;
    return base;
}

void sim_lib_settle(const sim_lib *lib, sim_run *run)
{
    snprintf(run->info.stage, sizeof(run->info.stage), "%.*s",
             (int)sizeof(run->info.stage) - 1, lib->name);
    run->cfg.client_program = NULL; /* the caller's buffer */
    for (size_t i = 0; i < run->n; i++) {
        if (run->ev[i].type == SIM_EV_ACQUIRE_INVOKE || run->ev[i].type == SIM_EV_RELEASE_INVOKE) {
            if (run->ev[i].t_ns > run->t0_ns)
                run->t0_ns = run->ev[i].t_ns;
            break;
        }
    }
}

int sim_lib_play(const sim_lib *lib, const sim_scenario *s, const sim_run_config *base,
                 sim_run *run, char *errstr, size_t len)
{
    char program[PATH_MAX];
    sim_run_config cfg = *base;

    if (sim_lib_program(lib, program, sizeof(program), errstr, len) != 0)
        return -1;
    cfg.stage = lib->beside;
    cfg.client_program = program;
    if (sim_runner_play(s, &cfg, run, errstr, len) != 0)
        return -1;
    sim_lib_settle(lib, run);
    return 0;
}
