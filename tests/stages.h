/* stages.h: what each stage can do, the table the tests' expectations
 * come from.
 *
 * A suite is compiled once per stage with -DSTAGE=N and reads the row of
 * its stage as CAPS. Tests branch on capabilities, never on stage numbers,
 * so a row says in one place what a stage fixes and what it keeps: where a
 * capability is missing, the test asserts the flaw instead. */
#ifndef LOCKSTEP_STAGES_H
#define LOCKSTEP_STAGES_H

#ifndef STAGE
#error "compile with -DSTAGE=N, N = 1..6"
#endif
#if STAGE < 1 || STAGE > 6
#error "STAGE must be 1..6"
#endif

#define STAGE_COUNT 6

typedef struct stage_caps {
    int stage;           /* 1..6 */
    const char *dir;     /* the stage's folder */
    int has_ttl;         /* the key gets the lease as its TTL (v2+) */
    int atomic_acquire;  /* key and TTL are set by one command (v3+) */
    int owner_check;     /* release checks the owner: NOT_OWNER (v4+) */
    int script_release;  /* release is one Lua script, EVALSHA first (v5+) */
    int reentrant;       /* the holder's thread may acquire again (v6) */
    int watchdog;        /* a thread renews the lease while held (v6) */
    int pubsub;          /* waiters wake on the unlock message (v6) */
} stage_caps;

__attribute__((unused)) static const stage_caps stage_table[STAGE_COUNT] = {
    /*  stage  dir                      ttl atomic owner script reent wdog pubsub */
    { 1, "v1-setnx",              0, 0, 0, 0, 0, 0, 0 },
    { 2, "v2-expire",             1, 0, 0, 0, 0, 0, 0 },
    { 3, "v3-set-nx-px",          1, 1, 0, 0, 0, 0, 0 },
    { 4, "v4-owner-check",        1, 1, 1, 0, 0, 0, 0 },
    { 5, "v5-lua-unlock",         1, 1, 1, 1, 0, 0, 0 },
    { 6, "v6-reentrant-watchdog", 1, 1, 1, 1, 1, 1, 1 },
};

/* The row of the stage this file is compiled for. */
#define CAPS (stage_table[STAGE - 1])

#endif
