/* scenarios: the table of scenarios and its answer key. See scenarios.h;
 * runner.c plays them. */
#include <string.h>

#include "checker.h"
#include "scenarios.h"

/* ---- the table ------------------------------------------------------------------
 * Times are in leases L. Each margin that decides a cell is at least about
 * 0.4 L; the comment above each scenario gives its timeline. The expect
 * line has a cell per stage number, NULL for a number that sim/stages.def
 * skips. For the ZooKeeper stages the lease is the session's timeout. */

#define AT_START { SIM_AFTER_START, SIM_PHASE_READY, 0 }
#define AFTER(who, phase, delay) { who, SIM_PHASE_##phase, delay }
#define AFTER_FAULT(delay) { SIM_AFTER_FAULT, SIM_PHASE_READY, delay }
#define LONG_WAIT 12 /* a budget no one should run out of, a lease no one outlives */

/* The clients of a fault that makes a server forget A's lock (failover,
 * restart): A takes it and works until 0.5 L after B got in, its lease
 * (12 L) outlasting the fault and B's whole wait (3 L); B asks once the
 * fault is done and holds 3 L under a 4 L lease. */
#define FORGOTTEN_LOCK_CLIENTS                                                      \
    { { 'A', SIM_PLAN_ONCE, .hold = 0.5, .wait = 1, .lease = 12, .start = AT_START, \
        .until = AFTER('B', IN_CS, 0.5) },                                          \
      { 'B', SIM_PLAN_ONCE, .hold = 3, .wait = 3, .lease = 4, .start = AFTER_FAULT(0) } }

/* B and C behind a holder A whose lease ran out under it (A worked too
 * long, or stopped): B takes the lock at `at` L into A's section and
 * holds 3 L; C waits behind B, and gets in while B is still inside when
 * A's late release deletes B's key. */
#define LATE_B_WAITING_C(at)                                                              \
    { 'B', SIM_PLAN_ONCE, .hold = 3, .wait = LONG_WAIT, .start = AFTER('A', IN_CS, at) }, \
    { 'C', SIM_PLAN_ONCE, .hold = 0.5, .wait = LONG_WAIT, .start = AFTER('B', IN_CS, 0) }

static const sim_scenario table[] = {
    /* Eight clients sell 100 items, one short critical section each.
     * Their lease (12 L) is far beyond any section: on ZooKeeper it is
     * each client's session, which must outlive every gap in its pings
     * on a loaded machine for the whole run, not just a section. */
    { "baseline", "no faults: every stage keeps the lock and sells exactly the stock", 100,
      { { 'A', SIM_PLAN_LOOP, .hold = 0.01, .wait = 100, .lease = LONG_WAIT, .start = AT_START,
          .copies = 8 } },
      { .kind = SIM_FAULT_NONE },
      { "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-" } },

    /* A is killed 0.3 L into its section; B waits 4 L. A key with a
     * lease frees itself after 1 L; v1's never does. */
    { "crash-holding", "a holder dies in its critical section: does its lock ever go away?", 10,
      { { 'A', SIM_PLAN_ONCE, .hold = 2, .wait = 1, .start = AT_START },
        { 'B', SIM_PLAN_ONCE, .hold = 0.2, .wait = 4, .start = AFTER('A', IN_CS, 0.1) } },
      { .kind = SIM_FAULT_CRASH, .target = 'A', .when = AFTER('A', IN_CS, 0.3) },
      { "DL", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-" } },

    /* A dies right after SETNX, before any lease is set (v1, v2). B
     * starts when A is gone and waits 4 L. */
    { "crash-mid-acquire", "a client dies between taking the key and giving it a lease", 10,
      { { 'A', SIM_PLAN_ONCE, .hold = 0.2, .wait = 1, .start = AT_START,
          .failpoint = "acquire.after_setnx=crash" },
        { 'B', SIM_PLAN_ONCE, .hold = 0.2, .wait = 4, .start = AFTER('A', DONE, 0.1) } },
      { .kind = SIM_FAULT_NONE },
      { "DL", "DL", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-" } },

    /* A works 3 L under a 1 L lease. B arrives at 2.5 L and finds the
     * lock free (A's lease ran out); C waits behind B. At 3 L A releases:
     * its DEL meets B's key (alive 2.5..3.5 L), and C gets in while B is
     * still inside. A watchdog (v6) or no lease (v1) keeps A's lock. */
    { "slow-holder", "a live holder works longer than its lease", 10,
      { { 'A', SIM_PLAN_ONCE, .hold = 3, .wait = 1, .start = AT_START }, LATE_B_WAITING_C(2.5) },
      { .kind = SIM_FAULT_NONE },
      { "-", "ME MD LU", "ME MD LU", "ME LU", "ME LU", "-", "-", "ME LU", "-", "-", "-",
        "ME LU", "-" } },

    /* A is stopped 0.1 L into its section, for 3 L: its lease runs out,
     * v6's watchdog is frozen with it. Its section lasts 0.5 L, so a
     * nemesis that a loaded machine delays by up to 0.4 L still stops it
     * inside; the section's end has passed when it wakes. B arrives at
     * 2.6 L and reads the stock; A wakes at 3.1 L, writes and releases
     * while B's key (2.6..3.6 L) is alive. v10's A lost its session at
     * about 1 L; its release opens a new one and deletes B's node by
     * path, as v2's DEL deletes B's key, and C gets in. */
    { "gc-pause", "the holder's whole process stops (GC, SIGSTOP) for longer than its lease", 10,
      { { 'A', SIM_PLAN_ONCE, .hold = 0.5, .wait = 1, .start = AT_START }, LATE_B_WAITING_C(2.6) },
      { .kind = SIM_FAULT_PAUSE, .target = 'A', .when = AFTER('A', IN_CS, 0.1), .len = 3 },
      { "-", "ME MD LU", "ME MD LU", "ME LU", "ME LU", "ME LU", "ME", "ME LU", "ME LU",
        "ME MD LU", "ME", "ME LU", "-" } },

    /* A stops for 3 L between its GET and its DEL (v4 only has that
     * step). B arrives 2.5 L after A's release began and takes the
     * expired lock, with a lease (4 L) that covers its work (3 L); A's
     * DEL at 3 L deletes B's key and C, waiting, gets in. Where the step
     * is missing, A released at once and C simply waits for B. */
    { "pause-in-release", "the holder stops between checking the owner and deleting the key", 10,
      { { 'A', SIM_PLAN_ONCE, .hold = 0.2, .wait = 1, .start = AT_START,
          .failpoint = "release.after_get=stop(3L)" },
        { 'B', SIM_PLAN_ONCE, .hold = 3, .wait = LONG_WAIT, .lease = 4,
          .start = AFTER('A', RELEASING, 2.5) },
        { 'C', SIM_PLAN_ONCE, .hold = 0.5, .wait = LONG_WAIT, .lease = 4,
          .start = AFTER('B', IN_CS, 0) } },
      { .kind = SIM_FAULT_NONE },
      { "-", "-", "-", "ME MD LU", "-", "-", "-", "-", "-", "-", "-", "-", "-" } },

    /* A holds 1 L under a 2 L lease. B never took the lock and releases it
     * 0.1 L after A got in, 0.9 L before A's own release; C is already
     * waiting and gets in at once if B's release deleted A's key. C holds
     * 1.5 L (lease 2 L), so A's late DEL at 1 L meets C's key, 0.5 L
     * before C's own release. */
    { "stranger-unlock", "a client that never took the lock releases it", 10,
      { { 'A', SIM_PLAN_ONCE, .hold = 1, .wait = 1, .lease = 2, .start = AT_START },
        { 'B', SIM_PLAN_STRANGER, .start = AFTER('A', IN_CS, 0.1) },
        { 'C', SIM_PLAN_ONCE, .hold = 1.5, .wait = LONG_WAIT, .lease = 2,
          .start = AFTER('A', IN_CS, 0) } },
      { .kind = SIM_FAULT_NONE },
      { "ME MD LU", "ME MD LU", "ME MD LU", "-", "-", "-", "-", "-", "-", "ME MD LU", "-",
        "-", "-" } },

    /* The replica holds back its stream; A takes the lock on the primary
     * (node 0); at 0.1 L the primary dies and the replica is promoted
     * without the lock. B takes it there and holds 3 L under a 4 L
     * lease. A works until 0.5 L after B got in (however long the
     * promotion took: a sentinel needs about a second), then its release
     * (an I/O error, then a retry) reaches the new primary while B's key
     * has 3.5 L to live, however late a loaded machine runs the retry.
     * A's lease (12 L)
     * outlasts the promotion (a sentinel's takes about 4 L) and B's whole
     * wait (3 L): where B never gets in (a majority of nodes), A leaves
     * 0.5 L after B gave up, its lease still running. */
    { "failover", "the primary dies before the lock reached its replica", 10,
      FORGOTTEN_LOCK_CLIENTS,
      { .kind = SIM_FAULT_FAILOVER, .target = 'A', .when = AFTER('A', IN_CS, 0.1) },
      { "ME MD LU", "ME MD LU", "ME MD LU", "ME LU", "ME LU", "ME LU", "ME LU", "-", "ME LU",
        "-", "-", "ME LU", "ME LU" } },

    /* A's thread asks again for the lock it holds, with a 0.5 L budget
     * under a 4 L lease: its own key must outlive the budget by far, or a
     * stalled machine lets the key expire and the second acquire wins. */
    { "reentrant", "the holder's own thread acquires the lock again", 10,
      { { 'A', SIM_PLAN_REENTRANT, .hold = 0.2, .wait = 0.5, .lease = 4, .start = AT_START } },
      { .kind = SIM_FAULT_NONE },
      { "DL", "DL", "DL", "DL", "DL", "-", "-", "DL", "-", "DL", "-", "DL", "-" } },

    /* Of several nodes, the last two are down while A takes the lock: A
     * holds a bare majority (nodes 0, 1, 2). At 0.1 L node 0 restarts
     * empty, and the two come back, empty too. B asks: nodes 0, 3 and 4
     * say OK, a majority that A's 1 and 2 cannot stop. Of one node, the
     * primary restarts empty and B takes the lock there (a MariaDB server
     * starts again on its data dir: v12's committed row is still there,
     * v13's GET_LOCK went with every session). Then as in the
     * failover: A works until 0.5 L after B got in, and releases into B's
     * lock (4 L), its own lease (12 L) still running. */
    { "restart", "a node restarts without persistence and forgets the lock", 10,
      FORGOTTEN_LOCK_CLIENTS,
      { .kind = SIM_FAULT_RESTART, .target = 'A', .when = AFTER('A', IN_CS, 0.1),
        .down = 2 },
      { "ME MD LU", "ME MD LU", "ME MD LU", "ME LU", "ME LU", "ME LU", "ME LU", "ME LU",
        "ME LU", "-", "-", "-", "ME LU" } },
    /* A holds 1 L (lease 2 L). B asks at 0.1 L and queues; C asks at
     * 0.3 L and queues behind it; B is killed at 0.4 L, still waiting.
     * A releases at 1 L. A stage that wakes every waiter, or whose
     * waiters poll, hands the lock to C at once. A queue wakes only its
     * first waiter, dead B: the lock stays free until B's place ends,
     * its budget (3 L) after A's TTL when it queued (about 2 L), so at
     * about 5 L: 4 L of a free lock that C waits for, twice the checker's
     * bound (2 L). C's budget outlasts it: C gets in at last. */
    { "crash-waiting", "a waiter dies in the queue: does the next one still get the lock?", 10,
      { { 'A', SIM_PLAN_ONCE, .hold = 1, .wait = 1, .lease = 2, .start = AT_START },
        { 'B', SIM_PLAN_ONCE, .hold = 0.2, .wait = 3, .start = AFTER('A', IN_CS, 0.1) },
        { 'C', SIM_PLAN_ONCE, .hold = 0.2, .wait = LONG_WAIT,
          .start = AFTER('B', WAITING, 0.2) } },
      { .kind = SIM_FAULT_CRASH, .target = 'B', .when = AFTER('B', WAITING, 0.3) },
      { "-", "-", "-", "-", "-", "-", "-", "-", "ST", "-", "-", "-", "-" } },

    /* 0.1 L into its section A is cut off from every node for 3 L: what
     * it sends them is dropped, its calls time out after 1 L; its process
     * runs on, and so does its resource server. Its section lasts until
     * 2.5 L after the link is back. A lease nobody renews runs out 1 L
     * after A's last write to the key (a watchdog's renewals time out):
     * B, waiting since 0.2 L, takes the lock, reads the stock A read,
     * sells and leaves within 1 L, and A, working on, writes last, 3.6 L
     * after B left: on a loaded machine a ZooKeeper session ends, and B
     * learns of it, up to a second late, and A's release must still find
     * B gone. Without a lease (v1) B waits for A's release, and so it does
     * behind v13's GET_LOCK: its session outlives the cut, for a server
     * hears nothing from a client that sends nothing (it drops one after
     * wait_timeout, 8 hours, as shipped). */
    { "partition", "the holder is cut off from the lock's servers while it works", 10,
      { { 'A', SIM_PLAN_ONCE, .hold = 0.5, .wait = 1, .start = AT_START,
          .until = AFTER_FAULT(5.5) },
        { 'B', SIM_PLAN_ONCE, .hold = 1, .wait = LONG_WAIT, .lease = 2,
          .start = AFTER('A', IN_CS, 0.2) } },
      { .kind = SIM_FAULT_PARTITION, .target = 'A', .when = AFTER('A', IN_CS, 0.1), .len = 3,
        .timeout = 1 },
      { "-", "ME LU", "ME LU", "ME LU", "ME LU", "ME LU", "ME", "ME LU", "ME LU", "ME LU",
        "ME", "ME LU", "-" } },

    /* A's own lease (1.9 L, just under the jump) covers its work (1.2 L).
     * 0.1 L into it, the wall clock of a node with A's key jumps 2 L
     * forward: the key's TTL, 1.9 L at most, has run out there. B asks
     * 0.1 L later, takes the lock and sells within 0.3 L; A, still
     * inside, writes 0.7 L after B left. Of several nodes, A asks while
     * it cannot reach the last two (a bare majority, nodes 0 to 2: its
     * try waits out their node timeout, 0.5 L, so its keys there outlive
     * its work by 0.2 L); node 2's clock jumps, the link comes back with
     * it, and B wins nodes 2, 3 and 4. Without a TTL (v1) the clock
     * changes nothing: B waits for A's release. */
    { "clock-jump", "a lock server's wall clock jumps forward while the holder works", 10,
      { { 'A', SIM_PLAN_ONCE, .hold = 1.2, .wait = 1, .lease = 1.9, .start = AT_START },
        { 'B', SIM_PLAN_ONCE, .hold = 0.3, .wait = LONG_WAIT, .lease = 2,
          .start = AFTER_FAULT(0.1) } },
      { .kind = SIM_FAULT_CLOCK_JUMP, .target = 'A', .when = AFTER('A', IN_CS, 0.1), .len = 2,
        .down = 2 },
      { "-", "ME LU", "ME LU", "ME LU", "ME LU", "ME LU", "ME", "ME LU", "ME LU", "-", "-",
        "ME LU", "-" } },
};

#define SCENARIOS (sizeof(table) / sizeof(table[0]))

size_t sim_scenario_count(void)
{
    return SCENARIOS;
}

const sim_scenario *sim_scenario_at(size_t i)
{
    return i < SCENARIOS ? &table[i] : NULL;
}

const sim_scenario *sim_scenario_find(const char *name)
{
    size_t i;

    for (i = 0; i < SCENARIOS; i++) {
        if (strcmp(table[i].name, name) == 0)
            return &table[i];
    }
    return NULL;
}

const char *sim_scenario_key(const sim_scenario *s, int stage)
{
    const sim_stage *st;

    while ((st = sim_stage_get(stage)) != NULL && s->expect[stage - 1] == NULL)
        stage = st->base;
    return st != NULL ? s->expect[stage - 1] : "?";
}

unsigned sim_scenario_expected(const sim_scenario *s, int stage)
{
    unsigned set = 0;

    sim_anomaly_parse(sim_scenario_key(s, stage), &set);
    return set;
}

int sim_scenario_clients(const sim_scenario *s)
{
    int n = 0, i;

    for (i = 0; s->actors[i].name != 0; i++)
        n += s->actors[i].copies > 0 ? s->actors[i].copies : 1;
    return n;
}
