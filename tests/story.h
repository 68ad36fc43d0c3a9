/* story: hand-written histories for the simulator's own tests (no Redis).
 *
 * A test writes a run down as it would have been recorded, event by event,
 * with verbs that say which side records each step: a client's (wants,
 * gets, unlocks, ...), the observer's (key) and the nemesis's (crashes).
 * Times are in ms from the run's start. check() sorts the story into the
 * history's order and has the checker judge it into v. */
#ifndef LOCKSTEP_STORY_H
#define LOCKSTEP_STORY_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include "checker.h"
#include "history.h"

#define MS 1000000LL     /* ns per ms */
#define STORY_MAX 128    /* events in one hand-written history */

enum { A, B, C, D, E, F };     /* client letters */

typedef struct story {
    sim_event ev[STORY_MAX];
    size_t n;
} story;

extern story s;          /* the test's history; each test starts it anew */
extern sim_verdict v;    /* the checker's verdict on it */

void begin(void);        /* an empty story; frees the last verdict */
void free_verdict(void); /* a checked teardown: frees the test's verdict */

/* A tcase called name, added to suite, of the n tests, each told with a
 * story of its own: free_verdict after each. A suite's table of such
 * tcases (tcases.h) gives it as their adder. */
TCase *add_story_tcase(Suite *suite, const char *name, const TTest *const *tests, size_t n);

void record(long ms, int client, int thread, sim_event_type type,
            int64_t value, const char *detail);

/* A client's steps (thread 0). */
void wants(long ms, int c);
void gets(long ms, int c);
void gives_up(long ms, int c);
void fails(long ms, int c);         /* acquire-error: outcome unknown */
void unlocks(long ms, int c);
void unlocked(long ms, int c);
void not_owner(long ms, int c);
void sells(long ms, int c, int64_t wrote);

/* A resource that checks fencing tokens: a read and a sale that carried
 * token, and a write it refused because it had seen fence. */
void reads(long ms, int c, int64_t stock, int64_t token);
void sells_fenced(long ms, int c, int64_t wrote, int64_t token);
void refused(long ms, int c, int64_t token, int64_t fence);

/* The nemesis, the observer, the simulator's numbers. */
void crashes(long ms, int c);
void key(long ms, const char *what);        /* on node 0, the only one */
void key_on(long ms, int node, const char *what); /* one of several nodes */
void node_down(long ms, int node);
void node_restarts(long ms, int node);
void cut_off(long ms, int c, int node);    /* c's link to node becomes a black hole */
void heals(long ms, int c, int node);      /* ... and carries bytes again */
void clock_jumps(long ms, int node, int64_t by_ms);
void stock(sim_event_type type, long ms, int64_t n);

/* The nemesis promotes node 0's replica (port 7001), as the simulator
 * records a failover. */
void promotes(long ms);

/* A successful SET NX (PX when ttl): invoke, the observer's events, ok. */
void takes(long ms, int c, int ttl);

/* A release whose DEL went through: invoke, the observer's del, ok. */
void gives_back(long ms, int c);

/* The opening of a story, begun anew, where A's lease runs out under it:
 * A takes the lock at 0 ms, its key expires at 300 ms, and B takes the
 * lock at 310 ms (inside from 312 ms). */
void lease_runs_out(void);

/* The opening of a story, begun anew, where a failover loses A's key: A
 * takes the lock at 0 ms, the replica is promoted without it at 100 ms,
 * and client c takes the lock there at 150 ms (inside from 152 ms). */
void failover_loses_the_key(int c);

/* A whole story, begun anew: gc-pause as v4 plays it, without C. A and
 * B both read 10 (A at 5 ms, B at 315 ms, after A's lease ran out at
 * 300 ms); A's late write comes first (400 ms, not the owner at 402 ms)
 * and B's over it (900 ms). Two sales, stock 10 -> 9. */
void pause_story(void);

/* The same under a fence (v7): A reads with token 1, B with token 2, and
 * A's write is refused at 400 ms; B's sale at 900 ms is the only one.
 * Stock 10 -> 9. */
void fenced_pause_story(void);

/* Failover under a fence: A (token 1) reads the stock at 5 ms; at 29 ms
 * the replica is promoted without A's key and without A's increment; B
 * takes the lock there, draws token 1 again and reads at 33 ms; A sells
 * at 200 ms (not the owner at 202 ms), B at 900 ms. Stock 10 -> 9. */
void fenced_failover_story(void);

/* Sorts the story by sim_event_order and checks it. */
unsigned check(void);

/* The k-th episode of a kind (from 0); fails the test when there is none. */
const sim_episode *episode(unsigned kind, size_t k);

/* A set as text, "ME MD"; two buffers in turn, for one message. */
const char *set_text(unsigned set);

#define assert_verdict(want, what)                                          \
    ck_assert_msg(check() == (want), "%s: the checker found \"%s\"%s%s; "   \
                  "expected \"%s\"", what, set_text(v.anomalies),           \
                  v.why[0] ? ": " : "", v.why, set_text(want))

#endif
