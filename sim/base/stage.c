/* stage: the table of stages, from sim/stages.def. See stage.h. */
#include <stddef.h>

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
