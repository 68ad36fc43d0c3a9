/* stages.h: what each stage can do, the table the tests' expectations
 * come from.
 *
 * A suite is compiled once per stage with -DSTAGE=N and reads the row of
 * its stage as CAPS. Tests branch on capabilities, never on stage numbers,
 * so a stage's line in sim/stages.def says in one place what it fixes and
 * what it keeps: where a capability is missing, the test asserts the flaw
 * instead. This file only spells those capabilities out as fields. */
#ifndef LOCKSTEP_STAGES_H
#define LOCKSTEP_STAGES_H

#include <string.h>

#include "stage.h"

#ifndef STAGE
#error "compile with -DSTAGE=N, N a stage of sim/stages.def"
#endif
_Static_assert(STAGE >= 1 && STAGE <= SIM_STAGES, "STAGE must be a stage of sim/stages.def");

#define STAGE_COUNT SIM_STAGES /* the highest number: a skipped one has dir NULL */

typedef struct stage_caps {
    int stage;           /* 1..STAGE_COUNT */
    const char *dir;     /* the stage's folder */
    int base;            /* the stage it is built on; 0: none */
    const char *server;  /* the kind of server its lock talks to: "redis", "zookeeper" */
    int masters;         /* independent Redis masters it talks to, or the
                          * servers of its ZooKeeper ensemble */
    int has_ttl;         /* the key gets the lease as its TTL (v2+) */
    int atomic_acquire;  /* key and TTL are set by one command (v3+) */
    int owner_check;     /* release checks the owner: NOT_OWNER (v4+) */
    int script_release;  /* release is one Lua script, EVALSHA first (v5+) */
    int reentrant;       /* the holder's thread may acquire again (v6) */
    int watchdog;        /* a thread renews the lease while held (v6) */
    int pubsub;          /* waiters wake on the unlock message (v6) */
    int token;           /* each acquisition draws a fencing token (v7) */
    int quorum;          /* a majority of independent masters (v8) */
    int queue;           /* waiters queue in order; a release wakes the first alone (v9, v11) */
} stage_caps;

#define STAGE_HAS(n, cap) ((SIM_STAGE_CAPS_##n & SIM_CAP_##cap) != 0)
#define SIM_STAGE(n, folder, base, server, masters, adds) \
    [n - 1] = { n, folder, base, #server, masters, STAGE_HAS(n, TTL), STAGE_HAS(n, ATOMIC), \
      STAGE_HAS(n, OWNER), STAGE_HAS(n, SCRIPT), STAGE_HAS(n, REENTRANT), \
      STAGE_HAS(n, WATCHDOG), STAGE_HAS(n, PUBSUB), STAGE_HAS(n, TOKEN), \
      STAGE_HAS(n, QUORUM), STAGE_HAS(n, QUEUE) },
__attribute__((unused)) static const stage_caps stage_table[STAGE_COUNT] = {
#include "stages.def"
};
#undef SIM_STAGE
#undef STAGE_HAS

/* The row of the stage this file is compiled for. */
#define CAPS (stage_table[STAGE - 1])

/* Whether its lock lives in a ZooKeeper ensemble (tests/test_zk.c), not
 * in Redis (tests/test_lock.c). */
#define STAGE_ZOOKEEPER (strcmp(CAPS.server, "zookeeper") == 0)

/* Whether its lock lives in MariaDB (tests/test_mariadb.c). */
#define STAGE_MARIADB (strcmp(CAPS.server, "mariadb") == 0)

#endif
