/* stage: the stages of the course, from the one list in sim/stages.def.
 *
 * Every stage's number, folder, base, masters and capabilities, as
 * constants (SIM_STAGES, the stages' count, sizes arrays) and as a table.
 * A stage inherits its base's capabilities and adds its own, so a line
 * says what the stage brings: v6 is v5 plus reentrancy, a watchdog and
 * pub/sub waits.
 *
 * Capabilities: what a stage's lock does, so that the tests assert the fix
 * where it is there and the flaw where it is not (tests/stages.h). */
#ifndef SIM_STAGE_H
#define SIM_STAGE_H

#define SIM_CAP_TTL       0x01u /* the key gets the lease as its TTL (v2+); of
                                 * ZooKeeper, the session's timeout (v10) */
#define SIM_CAP_ATOMIC    0x02u /* key and TTL are set by one command (v3+): an
                                 * ephemeral node is one create (v10) */
#define SIM_CAP_OWNER     0x04u /* release checks the owner: NOT_OWNER (v4+) */
#define SIM_CAP_SCRIPT    0x08u /* release is one Lua script, EVALSHA first (v5+) */
#define SIM_CAP_REENTRANT 0x10u /* the holder's thread may acquire again (v6) */
#define SIM_CAP_WATCHDOG  0x20u /* a thread renews the lease while held (v6) */
#define SIM_CAP_PUBSUB    0x40u /* waiters wake on the unlock message (v6) */
#define SIM_CAP_TOKEN     0x80u /* each acquisition draws a fencing token (v7) */
#define SIM_CAP_QUORUM    0x100u /* a majority of independent masters (v8) */
#define SIM_CAP_QUEUE     0x200u /* waiters queue in order; a release wakes
                                  * the first alone (v9, v11) */

#define SIM_NODES_MAX 5 /* the most independent masters a stage may talk to:
                         * what a run or a test starts for it (v8's five) */

/* SIM_STAGE_CAPS_<n>: stage n's capabilities, its base's included. A base
 * must come before its stage: a later one does not compile. */
#define CAP(x) SIM_CAP_##x
#define SIM_STAGE(n, folder, base, server, masters, adds) \
    SIM_STAGE_CAPS_##n = (adds) | SIM_STAGE_CAPS_##base,
enum {
    SIM_STAGE_CAPS_0 = 0,
#include "stages.def"
};
#undef SIM_STAGE

/* SIM_STAGES: the last line's number, the highest a stage has, so the
 * size of every table indexed by a stage's number (0 * 0 + 1 * 0 + ...
 * + n). A number may be missing from the list (a stage written apart,
 * not merged yet): sim_stage_get is NULL for it, and every loop over the
 * stages skips it. */
#define SIM_STAGE(n, folder, base, server, masters, adds) * 0 + n
enum {
    SIM_STAGES = 0
#include "stages.def"
};
#undef SIM_STAGE
#undef CAP

/* One line of stages.def. */
typedef struct sim_stage {
    int n;            /* 1..SIM_STAGES */
    const char *dir;  /* its folder, "vN-<idea>" */
    int base;         /* the stage it is built on; 0: none */
    const char *server; /* the kind of server the lock talks to: "redis",
                         * "zookeeper" */
    int masters;      /* servers the lock talks to: independent masters,
                       * or the servers of one ensemble */
    unsigned caps;    /* SIM_CAP_* bits, its base's included */
} sim_stage;

/* Stage n's line, or NULL when n is not a stage (0, above SIM_STAGES, or a
 * number the list skips). */
const sim_stage *sim_stage_get(int n);

/* Stage n's folder name; "?" when n is not a stage. */
const char *sim_stage_name(int n);

/* Whether stage st has the protocol step a scenario's failpoint is named
 * after (release.after_get: a GET apart from the DEL), from its
 * capabilities; a failpoint of a step it lacks never fires, and the
 * matrix shows the cell as "(-)". A ZooKeeper stage has none of them. */
int sim_stage_has_step(const sim_stage *st, const char *failpoint);

/* That step in words ("two-step release (GET, then DEL)"); NULL for
 * a failpoint no scenario arms. */
const char *sim_stage_step(const char *failpoint);

#endif
