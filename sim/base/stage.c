/* stage: the table of stages, from sim/stages.def. See stage.h. */
#include <stddef.h>
#include <string.h>

#include "stage.h"

/* Every stage's masters can be started. */
#define SIM_STAGE(n, folder, base, server, masters, adds) \
    _Static_assert((masters) >= 1 && (masters) <= SIM_NODES_MAX, \
                   folder " talks to more masters than SIM_NODES_MAX (sim/base/stage.h)");
#include "stages.def"
#undef SIM_STAGE

/* By number: a number the list skips stays zero (n = 0). */
#define SIM_STAGE(n, folder, base, server, masters, adds) \
    [n - 1] = { n, folder, base, #server, masters, SIM_STAGE_CAPS_##n },
static const sim_stage table[SIM_STAGES] = {
#include "stages.def"
};
#undef SIM_STAGE

const sim_stage *sim_stage_get(int n)
{
    return n >= 1 && n <= SIM_STAGES && table[n - 1].n == n ? &table[n - 1] : NULL;
}

const char *sim_stage_name(int n)
{
    const sim_stage *s = sim_stage_get(n);

    return s != NULL ? s->dir : "?";
}

/* The steps the scenarios' failpoints are named after, and the
 * capabilities that have them: a stage has the step when it has every
 * bit of needs and none of lacks. */
static const struct {
    const char *failpoint;
    const char *step;
    unsigned needs, lacks;
} steps[] = {
    { "acquire.after_setnx", "two-step acquire (SETNX, then the lease)", 0, SIM_CAP_ATOMIC },
    { "release.after_get", "two-step release (GET, then DEL)", SIM_CAP_OWNER, SIM_CAP_SCRIPT },
    { "watchdog.before_renew", "renewal of the lease by the watchdog", SIM_CAP_WATCHDOG, 0 },
};

static int step_at(const char *failpoint)
{
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
        if (strcmp(steps[i].failpoint, failpoint) == 0)
            return (int)i;
    return -1;
}

int sim_stage_has_step(const sim_stage *st, const char *failpoint)
{
    int i = step_at(failpoint);

    if (i < 0 || strcmp(st->server, "redis") != 0)
        return 0;
    return (st->caps & steps[i].needs) == steps[i].needs && (st->caps & steps[i].lacks) == 0;
}

const char *sim_stage_step(const char *failpoint)
{
    int i = step_at(failpoint);

    return i < 0 ? NULL : steps[i].step;
}
