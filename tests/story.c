/* story: see story.h. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "story.h"
#include "tcases.h"

story s;
sim_verdict v;

void begin(void)
{
    memset(&s, 0, sizeof(s));
    sim_verdict_free(&v);
}

void free_verdict(void)
{
    sim_verdict_free(&v);
}

TCase *add_story_tcase(Suite *suite, const char *name, const TTest *const *tests, size_t n)
{
    TCase *tc = add_tcase(suite, name, tests, n);

    tcase_add_checked_fixture(tc, NULL, free_verdict);
    return tc;
}

void record(long ms, int client, int thread, sim_event_type type,
            int64_t value, const char *detail)
{
    sim_event *e;

    ck_assert_msg(s.n < STORY_MAX, "the story has more than %d events",
                  STORY_MAX);
    ck_assert_msg(s.n == 0 || s.ev[s.n - 1].t_ns <= ms * MS,
                  "the story goes back in time at %ld ms", ms);
    e = &s.ev[s.n++];
    memset(e, 0, sizeof(*e));
    e->t_ns = ms * MS;
    e->client = client;
    e->thread = thread;
    e->type = type;
    e->value = value;
    snprintf(e->detail, sizeof(e->detail), "%s", detail);
}

void wants(long ms, int c) { record(ms, c, 0, SIM_EV_ACQUIRE_INVOKE, 0, ""); }
void gets(long ms, int c) { record(ms, c, 0, SIM_EV_ACQUIRE_OK, 0, ""); }
void gives_up(long ms, int c) { record(ms, c, 0, SIM_EV_ACQUIRE_BUSY, 0, ""); }
void fails(long ms, int c) { record(ms, c, 0, SIM_EV_ACQUIRE_ERROR, 0, "I/O error"); }
void unlocks(long ms, int c) { record(ms, c, 0, SIM_EV_RELEASE_INVOKE, 0, ""); }
void unlocked(long ms, int c) { record(ms, c, 0, SIM_EV_RELEASE_OK, 0, ""); }
void not_owner(long ms, int c) { record(ms, c, 0, SIM_EV_RELEASE_NOT_OWNER, 0, ""); }
void sells(long ms, int c, int64_t wrote) { record(ms, c, 0, SIM_EV_STOCK_WRITE, wrote, ""); }
/* The last event recorded carried token. */
static void with_token(int64_t token)
{
    s.ev[s.n - 1].token = token;
}

void reads(long ms, int c, int64_t stock, int64_t token)
{
    record(ms, c, 0, SIM_EV_STOCK_READ, stock, "");
    with_token(token);
}

void sells_fenced(long ms, int c, int64_t wrote, int64_t token)
{
    sells(ms, c, wrote);
    with_token(token);
}

void refused(long ms, int c, int64_t token, int64_t fence)
{
    record(ms, c, 0, SIM_EV_STOCK_REFUSED, fence, "");
    with_token(token);
}

void crashes(long ms, int c) { record(ms, c, 0, SIM_EV_CRASH, 0, ""); }
void key(long ms, const char *what) { record(ms, SIM_NO_CLIENT, 0, SIM_EV_KEY, 0, what); }
void stock(sim_event_type type, long ms, int64_t n) { record(ms, SIM_NO_CLIENT, 0, type, n, ""); }

/* An event about one node: the observer's or the nemesis's. */
static void on_node(long ms, int node, sim_event_type type, const char *detail)
{
    record(ms, SIM_NO_CLIENT, 0, type, 0, detail);
    s.ev[s.n - 1].node = node;
}

void key_on(long ms, int node, const char *what) { on_node(ms, node, SIM_EV_KEY, what); }
void node_down(long ms, int node) { on_node(ms, node, SIM_EV_NODE_DOWN, "SIGKILL"); }
void node_restarts(long ms, int node) { on_node(ms, node, SIM_EV_RESTART, "empty"); }

void cut_off(long ms, int c, int node)
{
    record(ms, c, 0, SIM_EV_CUT_BEGIN, 0, "black hole");
    s.ev[s.n - 1].node = node;
}

void heals(long ms, int c, int node)
{
    record(ms, c, 0, SIM_EV_CUT_END, 0, "");
    s.ev[s.n - 1].node = node;
}

void clock_jumps(long ms, int node, int64_t by_ms)
{
    on_node(ms, node, SIM_EV_CLOCK_JUMP, "forward");
    s.ev[s.n - 1].value = by_ms;
}

void takes(long ms, int c, int ttl)
{
    wants(ms, c);
    key(ms + 1, "set");
    if (ttl)
        key(ms + 1, "expire");
    gets(ms + 2, c);
}

void gives_back(long ms, int c)
{
    unlocks(ms, c);
    key(ms + 1, "del");
    unlocked(ms + 2, c);
}

void promotes(long ms)
{
    record(ms, SIM_NO_CLIENT, 0, SIM_EV_FAILOVER, 7001, "promote replica");
}

void lease_runs_out(void)
{
    begin();
    takes(0, A, 1);
    key(300, "expired");
    takes(310, B, 1);
}

void failover_loses_the_key(int c)
{
    begin();
    takes(0, A, 1);
    promotes(100);
    takes(150, c, 1);
}

/* gc-pause, with a fence or without: without, no token is drawn and A's
 * late write sells as B's does. */
static void gc_pause(int fenced)
{
    int64_t a = fenced ? 1 : 0, b = fenced ? 2 : 0;

    begin();
    stock(SIM_EV_STOCK_INITIAL, 0, 10);
    takes(0, A, 1);
    reads(5, A, 10, a);
    key(300, "expired");
    takes(310, B, 1);
    reads(315, B, 10, b);
    if (fenced)
        refused(400, A, a, b);
    else
        sells(400, A, 9);
    unlocks(401, A);
    not_owner(402, A);
    sells_fenced(900, B, 9, b);
    gives_back(901, B);
    stock(SIM_EV_STOCK_FINAL, 1000, 9);
}

void pause_story(void)
{
    gc_pause(0);
}

void fenced_pause_story(void)
{
    gc_pause(1);
}

void fenced_failover_story(void)
{
    begin();
    stock(SIM_EV_STOCK_INITIAL, 0, 10);
    takes(0, A, 1);
    reads(5, A, 10, 1);
    record(29, SIM_NO_CLIENT, 0, SIM_EV_FAILOVER, 0, "promote");
    takes(30, B, 1);
    reads(33, B, 10, 1);
    sells_fenced(200, A, 9, 1);
    unlocks(201, A);
    not_owner(202, A);
    sells_fenced(900, B, 9, 1);
    gives_back(901, B);
    stock(SIM_EV_STOCK_FINAL, 1000, 9);
}

unsigned check(void)
{
    ck_assert_msg(sim_history_sort(s.ev, s.n) == 0, "out of memory");
    sim_verdict_free(&v);
    return sim_check(s.ev, s.n, &v);
}

const sim_episode *episode(unsigned kind, size_t k)
{
    size_t seen = 0;

    for (size_t i = 0; i < v.n_episodes; i++)
        if (v.episodes[i].kind == kind && seen++ == k)
            return &v.episodes[i];
    ck_abort_msg("the verdict has %zu %s episodes; the test needs %zu",
                 seen, sim_anomaly_name(kind), k + 1);
    return NULL;
}

const char *set_text(unsigned set)
{
    static char buf[2][64];
    static int turn;

    turn = !turn;
    sim_anomaly_format(set, buf[turn], sizeof(buf[turn]));
    return buf[turn];
}
