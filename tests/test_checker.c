/* test_checker: the checker, the history and the report on hand-written
 * histories. No Redis: each test writes down a run as it would have been
 * recorded, event by event, and asserts what the checker makes of it.
 *
 * A story's times are in ms from the run's start. Key events come from the
 * observer (client SIM_NO_CLIENT); the helpers' names say which side
 * records each event. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checker.h"
#include "history.h"
#include "report.h"

#define MS 1000000LL     /* ns per ms */
#define STORY_MAX 128    /* events in one hand-written history */

enum { A, B, C, D };     /* client letters */

typedef struct story {
    sim_event ev[STORY_MAX];
    size_t n;
} story;

static story s;          /* the test's history; each test starts it anew */
static sim_verdict v;

static void record(long ms, int client, int thread, sim_event_type type,
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

static void begin(void)
{
    memset(&s, 0, sizeof(s));
    memset(&v, 0, sizeof(v));
}

/* ---- verbs: a client's steps, the observer's, the nemesis's ---------------- */

static void wants(long ms, int c) { record(ms, c, 0, SIM_EV_ACQUIRE_INVOKE, 0, ""); }
static void gets(long ms, int c) { record(ms, c, 0, SIM_EV_ACQUIRE_OK, 0, ""); }
static void gives_up(long ms, int c) { record(ms, c, 0, SIM_EV_ACQUIRE_BUSY, 0, ""); }
static void unlocks(long ms, int c) { record(ms, c, 0, SIM_EV_RELEASE_INVOKE, 0, ""); }
static void unlocked(long ms, int c) { record(ms, c, 0, SIM_EV_RELEASE_OK, 0, ""); }
static void not_owner(long ms, int c) { record(ms, c, 0, SIM_EV_RELEASE_NOT_OWNER, 0, ""); }
static void crashes(long ms, int c) { record(ms, c, 0, SIM_EV_CRASH, 0, ""); }
static void key(long ms, const char *what) { record(ms, SIM_NO_CLIENT, 0, SIM_EV_KEY, 0, what); }
static void stock(sim_event_type type, long ms, int64_t n) { record(ms, SIM_NO_CLIENT, 0, type, n, ""); }

/* A successful SET NX (PX when ttl): invoke, the observer's events, ok. */
static void takes(long ms, int c, int ttl)
{
    wants(ms, c);
    key(ms + 1, "set");
    if (ttl)
        key(ms + 1, "expire");
    gets(ms + 2, c);
}

/* A release whose DEL went through: invoke, the observer's del, ok. */
static void gives_back(long ms, int c)
{
    unlocks(ms, c);
    key(ms + 1, "del");
    unlocked(ms + 2, c);
}

static unsigned check(void)
{
    return sim_check(s.ev, s.n, &v);
}

/* Two buffers in turn: one message may show two sets. */
static const char *set_text(unsigned set)
{
    static char buf[2][64];
    static int turn;

    turn = !turn;
    sim_anomaly_format(set, buf[turn], sizeof(buf[turn]));
    return buf[turn];
}

#define assert_verdict(want, why)                                           \
    ck_assert_msg(check() == (want), "%s: the checker found \"%s\"; "       \
                  "expected \"%s\"", why, set_text(v.anomalies),            \
                  set_text(want))

/* ---- ME ------------------------------------------------------------------ */

START_TEST(test_checker_sequential_holds)
{
    begin();
    wants(0, B);
    takes(0, A, 1);
    gives_back(100, A);
    gets(103, B);             /* B entered after A's release */
    unlocks(200, B);
    assert_verdict(0, "A then B, one after the other");
}
END_TEST

START_TEST(test_checker_expired_holder_overlaps)
{
    begin();
    takes(0, A, 1);           /* v4: A's lease of 300 ms runs out inside */
    key(300, "expired");
    takes(310, B, 1);
    unlocks(900, A);          /* GET sees B's token: nothing deleted */
    not_owner(902, A);
    gives_back(1000, B);
    assert_verdict(SIM_ANOM_ME, "A still inside while B took the expired key");
    ck_assert_msg(v.me.a == A && v.me.b == B,
                  "the overlap was blamed on clients %d and %d; expected A and B",
                  v.me.a, v.me.b);
    ck_assert_msg(v.me.from_ns == 312 * MS && v.me.to_ns == 900 * MS,
                  "the overlap was [%lld, %lld] ns; expected [312 ms, 900 ms]",
                  (long long)v.me.from_ns, (long long)v.me.to_ns);
}
END_TEST

START_TEST(test_checker_reentrant_nested_holds)
{
    begin();
    takes(0, A, 1);
    wants(10, A);             /* v6: the same thread enters again */
    key(11, "hincrby");
    gets(12, A);
    unlocks(20, A);           /* inner release: A still holds */
    unlocked(21, A);
    wants(22, B);
    gives_back(30, A);        /* outer release */
    gets(33, B);
    unlocks(50, B);
    assert_verdict(0, "a thread nesting its own holds");
}
END_TEST

START_TEST(test_checker_inner_release_keeps_the_hold)
{
    begin();
    takes(0, A, 1);
    wants(10, A);
    gets(12, A);
    unlocks(20, A);           /* inner release only */
    unlocked(21, A);
    gets(25, B);              /* someone lets B in while A is still inside */
    unlocks(30, A);
    assert_verdict(SIM_ANOM_ME, "B entered between A's inner and outer release");
}
END_TEST

START_TEST(test_checker_crash_ends_the_hold)
{
    begin();
    takes(0, A, 1);
    crashes(100, A);
    key(300, "expired");
    wants(50 + 260, B);
    key(311, "set");
    gets(312, B);
    assert_verdict(0, "B entered after A's crash and its key's expiry");
}
END_TEST

/* ---- MD ------------------------------------------------------------------ */

START_TEST(test_checker_holder_deletes_its_own_key)
{
    begin();
    takes(0, A, 0);
    gives_back(100, A);
    takes(200, B, 0);
    gives_back(300, B);
    assert_verdict(0, "each holder deleted its own key");
}
END_TEST

START_TEST(test_checker_late_del_deletes_anothers_lock)
{
    begin();
    takes(0, A, 1);           /* v2/v3: A's lease runs out inside */
    key(300, "expired");
    takes(310, B, 1);
    gives_back(900, A);       /* A's DEL: the key is B's */
    takes(950, C, 1);
    gives_back(1200, B);
    assert_verdict(SIM_ANOM_ME | SIM_ANOM_MD, "A's late DEL removed B's key");
    ck_assert_msg(v.md.deleter == A && v.md.owner == B,
                  "the delete was blamed on client %d over client %d's lock; "
                  "expected A deleting B's", v.md.deleter, v.md.owner);
    ck_assert_msg(v.md.at_ns == 901 * MS && v.md.owner_since_ns == 312 * MS,
                  "the delete was at %lld ns of a lock held since %lld ns; "
                  "expected 901 ms and 312 ms", (long long)v.md.at_ns,
                  (long long)v.md.owner_since_ns);
    ck_assert_msg(v.md.deleter_in_flight, "A's release was in flight at the "
                  "del, but the checker says it had returned");
    ck_assert_msg(v.md.intruder == C && v.md.intruder_ns == 952 * MS,
                  "the delete let in client %d at %lld ns; expected C at "
                  "952 ms, while B was still inside", v.md.intruder,
                  (long long)v.md.intruder_ns);
}
END_TEST

START_TEST(test_checker_intruder_before_the_del_is_heard)
{
    begin();
    takes(0, A, 1);
    key(300, "expired");
    takes(310, B, 1);
    wants(850, C);
    unlocks(900, A);          /* A's DEL removes B's key ... */
    unlocked(901, A);
    gets(903, C);             /* ... C's SET NX wins at once ... */
    key(904, "del");          /* ... and the observer hears both late */
    key(904, "set");
    key(904, "expire");
    unlocks(1200, B);
    assert_verdict(SIM_ANOM_ME | SIM_ANOM_MD, "A's DEL let C in, heard late");
    ck_assert_msg(v.md.deleter == A && v.md.owner == B,
                  "the delete was blamed on client %d over client %d's lock; "
                  "expected A deleting B's", v.md.deleter, v.md.owner);
    ck_assert_msg(v.md.intruder == C && v.md.intruder_ns == 903 * MS,
                  "the delete let in client %d at %lld ns; expected C at "
                  "903 ms, whose key came after the del", v.md.intruder,
                  (long long)v.md.intruder_ns);
}
END_TEST

START_TEST(test_checker_stranger_release)
{
    begin();
    takes(0, A, 1);
    gives_back(100, B);       /* B never acquired; v1-v3 delete anyway */
    takes(150, C, 1);
    gives_back(250, A);
    assert_verdict(SIM_ANOM_ME | SIM_ANOM_MD, "a stranger deleted A's lock");
    ck_assert_msg(v.md.deleter == B && v.md.owner == A,
                  "the delete was blamed on client %d over client %d's lock; "
                  "expected B deleting A's", v.md.deleter, v.md.owner);
    ck_assert_msg(v.md.intruder == C, "the delete let in client %d; expected "
                  "C, who took the lock while A was inside", v.md.intruder);
}
END_TEST

/* The delete is wrong either way; only a holder who came in while its
 * victim was still inside was let in by it. */
START_TEST(test_checker_nobody_entered_after_the_delete)
{
    begin();
    takes(0, A, 1);
    gives_back(100, B);       /* a stranger deletes A's lock ... */
    unlocks(250, A);          /* ... A leaves, its DEL finds nothing ... */
    unlocked(251, A);
    takes(300, C, 1);         /* ... and C enters an empty lock */
    gives_back(400, C);
    assert_verdict(SIM_ANOM_MD, "a stranger deleted A's lock, C came later");
    ck_assert_msg(v.md.intruder == SIM_NO_CLIENT, "client %d is said to "
                  "have got in through the delete, but it entered after A "
                  "left", v.md.intruder);
    begin();
    takes(0, A, 1);
    gives_back(100, B);
    crashes(200, A);          /* A dies inside: its hold ends here */
    takes(300, C, 1);
    assert_verdict(SIM_ANOM_MD, "a stranger deleted A's lock, A crashed");
    ck_assert_msg(v.md.intruder == SIM_NO_CLIENT, "client %d is said to "
                  "have got in through the delete, but it entered after A "
                  "crashed", v.md.intruder);
}
END_TEST

START_TEST(test_checker_expired_key_reacquired)
{
    begin();
    takes(0, A, 1);
    crashes(100, A);          /* A never releases: its key expires */
    wants(110, B);
    key(300, "expired");
    key(305, "set");
    key(305, "expire");
    gets(306, B);
    gives_back(400, B);
    assert_verdict(0, "B took and deleted a key after A's expired");
}
END_TEST

START_TEST(test_checker_new_holder_deletes_its_own_key)
{
    begin();
    takes(0, B, 1);           /* v4/v5: B's lease runs out inside */
    key(300, "expired");
    takes(310, C, 1);
    gives_back(400, C);       /* C's DEL: C's own key, B still inside */
    unlocks(900, B);
    not_owner(901, B);
    assert_verdict(SIM_ANOM_ME, "C deleted C's own key while B thought it held");
}
END_TEST

START_TEST(test_checker_observer_lag)
{
    begin();
    takes(0, A, 1);
    wants(50, B);
    unlocks(100, A);          /* DEL runs, both replies arrive ... */
    unlocked(101, A);
    gets(102, B);             /* ... B retries and wins ... */
    key(103, "del");          /* ... before the observer hears of the DEL */
    key(104, "set");
    key(104, "expire");
    gives_back(200, B);
    assert_verdict(0, "the observer reported A's own DEL after B's acquire");
}
END_TEST

START_TEST(test_checker_reentrant_unlock_script)
{
    begin();
    wants(0, A);              /* v6: HINCRBY and PEXPIRE in one script */
    key(1, "hincrby");
    key(1, "expire");
    gets(2, A);
    unlocks(100, A);          /* count to zero, then DEL and PUBLISH */
    key(101, "hincrby");
    key(101, "del");
    unlocked(102, A);
    assert_verdict(0, "v6's unlock script deleted its own hash");
}
END_TEST

START_TEST(test_checker_failover_loses_the_key)
{
    begin();
    takes(0, A, 1);
    record(100, SIM_NO_CLIENT, 0, SIM_EV_FAILOVER, 7001, "promote");
    takes(150, C, 1);         /* the new primary never had A's key */
    gives_back(400, A);       /* v1-v3: A's DEL removes C's key */
    assert_verdict(SIM_ANOM_ME | SIM_ANOM_MD, "A's DEL after the failover");
    ck_assert_msg(v.md.deleter == A && v.md.owner == C,
                  "the delete was blamed on client %d over client %d's lock; "
                  "expected A deleting C's", v.md.deleter, v.md.owner);
}
END_TEST

START_TEST(test_checker_unknown_outcome_keeps_owners_in_order)
{
    begin();
    wants(0, A);
    key(1, "set");            /* A's SET went through ... */
    key(1, "expire");
    record(5, A, 0, SIM_EV_ACQUIRE_ERROR, 0, "timeout");  /* ... its reply did not */
    wants(10, B);
    gets(301, B);             /* B got in at the expiry; the observer lags */
    key(302, "expired");
    key(303, "set");
    key(303, "expire");
    gives_back(400, D);       /* a stranger deletes B's key */
    assert_verdict(SIM_ANOM_MD, "a stranger deleted B's key after A's error");
    ck_assert_msg(v.md.owner == B && v.md.deleter == D,
                  "the delete was blamed on client %d over client %d's lock; "
                  "expected D deleting B's", v.md.deleter, v.md.owner);
}
END_TEST

/* ---- DL ------------------------------------------------------------------ */

START_TEST(test_checker_waiter_behind_live_holder)
{
    begin();
    takes(0, A, 0);
    wants(10, B);
    gives_up(1210, B);        /* A is alive: waiting longer would work */
    gives_back(1500, A);
    assert_verdict(0, "B gave up behind a live holder");
}
END_TEST

START_TEST(test_checker_crashed_holder_with_ttl)
{
    begin();
    takes(0, A, 1);
    crashes(100, A);
    wants(110, B);
    gives_up(200, B);         /* the key would expire at 300 ms */
    assert_verdict(0, "B gave up on a crashed holder's key that has a TTL");
}
END_TEST

START_TEST(test_checker_crashed_holder_without_ttl)
{
    begin();
    takes(0, A, 0);           /* v1: SETNX, no TTL */
    crashes(100, A);
    wants(110, B);
    gives_up(1310, B);
    assert_verdict(SIM_ANOM_DL, "A crashed holding a key without TTL");
    ck_assert_msg(!v.dl.self && v.dl.waiter == B && v.dl.crashed == A &&
                  !v.dl.crashed_acquiring,
                  "the deadlock names waiter %d and crashed client %d (inside "
                  "acquire: %d); expected B waiting on A, who crashed holding",
                  v.dl.waiter, v.dl.crashed, v.dl.crashed_acquiring);
    ck_assert_msg(v.dl.busy_ns - v.dl.invoke_ns == 1200 * MS,
                  "B waited %lld ns; expected 1200 ms",
                  (long long)(v.dl.busy_ns - v.dl.invoke_ns));
}
END_TEST

START_TEST(test_checker_crash_after_setnx)
{
    begin();
    wants(0, A);
    key(1, "set");            /* SETNX went through ... */
    record(2, A, 0, SIM_EV_FAILPOINT, 0, "acquire.after_setnx=crash");
    crashes(3, A);            /* ... and A died before PEXPIRE and the ok */
    wants(10, B);
    gives_up(1210, B);
    assert_verdict(SIM_ANOM_DL, "A crashed between SETNX and PEXPIRE");
    ck_assert_msg(v.dl.crashed == A && v.dl.crashed_acquiring,
                  "the deadlock blames client %d (inside acquire: %d); "
                  "expected A, crashed inside its acquire",
                  v.dl.crashed, v.dl.crashed_acquiring);
}
END_TEST

static int key_owner_after(size_t i)
{
    sim_key_state trace[STORY_MAX];

    sim_check_key_trace(s.ev, s.n, trace);
    return trace[i].owner;
}

START_TEST(test_checker_crash_before_key_reported)
{
    begin();
    wants(0, A);
    record(2, A, 0, SIM_EV_FAILPOINT, 0, "acquire.after_setnx=crash");
    crashes(3, A);
    key(4, "set");            /* the observer hears A's SETNX after A died */
    wants(10, B);
    gives_up(1210, B);
    assert_verdict(SIM_ANOM_DL, "A crashed before its key was reported");
    ck_assert_msg(key_owner_after(3) == A, "the key is said to be client "
                  "%d's; expected A's, whose acquire died with it",
                  key_owner_after(3));
}
END_TEST

START_TEST(test_checker_crash_while_polling)
{
    begin();
    takes(0, C, 1);
    wants(10, A);             /* A polls behind C ... */
    wants(20, B);
    crashes(50, A);           /* ... and dies without writing anything */
    gives_back(100, C);
    key(110, "set");          /* B's key */
    key(110, "expire");
    gets(111, B);
    gives_back(400, D);       /* a stranger deletes it */
    assert_verdict(SIM_ANOM_MD, "a stranger deleted B's key");
    ck_assert_msg(v.md.owner == B, "the deleted key is said to be client "
                  "%d's; expected B's", v.md.owner);
}
END_TEST

START_TEST(test_checker_self_deadlock)
{
    begin();
    takes(0, A, 1);
    wants(10, A);             /* v1-v5: the holder's own thread asks again */
    gives_up(160, A);
    gives_back(200, A);
    assert_verdict(SIM_ANOM_DL, "A waited for the lock it held");
    ck_assert_msg(v.dl.self && v.dl.waiter == A &&
                  v.dl.held_since_ns == 2 * MS,
                  "the deadlock is self=%d by client %d holding since %lld ns; "
                  "expected a self-deadlock of A holding since 2 ms",
                  v.dl.self, v.dl.waiter, (long long)v.dl.held_since_ns);
}
END_TEST

/* ---- DAMAGE ----------------------------------------------------------------- */

static void sells(long ms, int c, int64_t wrote)
{
    record(ms, c, 0, SIM_EV_STOCK_WRITE, wrote, "");
}

START_TEST(test_checker_lost_update)
{
    begin();
    stock(SIM_EV_STOCK_INITIAL, 0, 100);
    sells(10, A, 99);
    sells(11, B, 99);         /* B read 100 too: A's sale is overwritten */
    sells(20, C, 98);
    stock(SIM_EV_STOCK_FINAL, 30, 98);
    assert_verdict(SIM_ANOM_DAMAGE, "three sales took two units");
    ck_assert_msg(v.stock.lost == 1 && v.stock.oversold == 0,
                  "the checker counted %lld lost and %lld oversold; expected "
                  "1 lost, 0 oversold", (long long)v.stock.lost,
                  (long long)v.stock.oversold);
}
END_TEST

START_TEST(test_checker_oversold)
{
    begin();
    stock(SIM_EV_STOCK_INITIAL, 0, 2);
    sells(10, A, 1);
    sells(20, B, 0);
    sells(30, C, -1);         /* C read 0 with no lock check of its own */
    stock(SIM_EV_STOCK_FINAL, 40, -1);
    assert_verdict(SIM_ANOM_DAMAGE, "three sales of two units");
    ck_assert_msg(v.stock.oversold == 1 && v.stock.lost == 0,
                  "the checker counted %lld oversold and %lld lost; expected "
                  "1 oversold, 0 lost", (long long)v.stock.oversold,
                  (long long)v.stock.lost);
}
END_TEST

START_TEST(test_checker_stock_intact_or_unknown)
{
    begin();
    stock(SIM_EV_STOCK_INITIAL, 0, 100);
    sells(10, A, 99);
    stock(SIM_EV_STOCK_FINAL, 40, 99);
    assert_verdict(0, "one sale, one unit");
    ck_assert_msg(v.stock_known, "initial and final were recorded, but the "
                  "checker says the stock is unknown");
    begin();
    sells(10, A, 99);
    assert_verdict(0, "a history without initial and final stock");
    ck_assert_msg(!v.stock_known, "no stock was recorded, but the checker "
                  "says it knows the stock");
}
END_TEST

START_TEST(test_checker_anomaly_names)
{
    unsigned set;

    ck_assert_str_eq(set_text(SIM_ANOM_ME | SIM_ANOM_MD), "ME MD");
    ck_assert_str_eq(set_text(0), "-");
    ck_assert_msg(sim_anomaly_parse("ME MD", &set) == 0 &&
                  set == (SIM_ANOM_ME | SIM_ANOM_MD),
                  "\"ME MD\" parsed to %u; expected ME|MD", set);
    ck_assert_msg(sim_anomaly_parse("-", &set) == 0 && set == 0,
                  "\"-\" parsed to %u; expected the empty set", set);
    ck_assert_msg(sim_anomaly_parse("ME XX", &set) == -1,
                  "\"ME XX\" parsed although XX is no anomaly");
}
END_TEST

Suite *checker_suite(void)
{
    Suite *suite = suite_create("checker");
    TCase *me = tcase_create("mutual exclusion");
    TCase *md = tcase_create("delete by a non-owner");
    TCase *dl = tcase_create("deadlock");
    TCase *damage = tcase_create("resource damage");

    tcase_add_test(me, test_checker_sequential_holds);
    tcase_add_test(me, test_checker_expired_holder_overlaps);
    tcase_add_test(me, test_checker_reentrant_nested_holds);
    tcase_add_test(me, test_checker_inner_release_keeps_the_hold);
    tcase_add_test(me, test_checker_crash_ends_the_hold);
    tcase_add_test(md, test_checker_holder_deletes_its_own_key);
    tcase_add_test(md, test_checker_late_del_deletes_anothers_lock);
    tcase_add_test(md, test_checker_intruder_before_the_del_is_heard);
    tcase_add_test(md, test_checker_stranger_release);
    tcase_add_test(md, test_checker_nobody_entered_after_the_delete);
    tcase_add_test(md, test_checker_expired_key_reacquired);
    tcase_add_test(md, test_checker_new_holder_deletes_its_own_key);
    tcase_add_test(md, test_checker_observer_lag);
    tcase_add_test(md, test_checker_reentrant_unlock_script);
    tcase_add_test(md, test_checker_failover_loses_the_key);
    tcase_add_test(md, test_checker_unknown_outcome_keeps_owners_in_order);
    tcase_add_test(md, test_checker_crash_while_polling);
    tcase_add_test(dl, test_checker_waiter_behind_live_holder);
    tcase_add_test(dl, test_checker_crashed_holder_with_ttl);
    tcase_add_test(dl, test_checker_crashed_holder_without_ttl);
    tcase_add_test(dl, test_checker_crash_after_setnx);
    tcase_add_test(dl, test_checker_crash_before_key_reported);
    tcase_add_test(dl, test_checker_self_deadlock);
    tcase_add_test(damage, test_checker_lost_update);
    tcase_add_test(damage, test_checker_oversold);
    tcase_add_test(damage, test_checker_stock_intact_or_unknown);
    tcase_add_test(damage, test_checker_anomaly_names);
    suite_add_tcase(suite, me);
    suite_add_tcase(suite, md);
    suite_add_tcase(suite, dl);
    suite_add_tcase(suite, damage);
    return suite;
}

/* ---- history --------------------------------------------------------------- */

static char tmp_path[64];

/* A fresh name in /tmp; the test removes the file. */
static const char *temp_file(void)
{
    int fd;

    snprintf(tmp_path, sizeof(tmp_path), "/tmp/lockstep-test-XXXXXX");
    fd = mkstemp(tmp_path);
    ck_assert_msg(fd >= 0, "could not create a temporary file");
    close(fd);
    return tmp_path;
}

START_TEST(test_history_writers_in_many_processes)
{
    enum { WRITERS = 4, EACH = 200 };
    char err[256] = "", path[64];
    sim_history *h;
    sim_event *ev;
    int64_t last[WRITERS] = { 0 };
    size_t n;

    snprintf(path, sizeof(path), "%s", temp_file());
    h = sim_history_create(path, err, sizeof(err));
    ck_assert_msg(h != NULL, "creating the history failed: %s", err);
    for (int w = 0; w < WRITERS; w++)
        if (fork() == 0) {    /* a client process: opens the file itself */
            sim_history *mine = sim_history_open(path, err, sizeof(err));

            for (int i = 1; mine != NULL && i <= EACH; i++)
                sim_history_add(mine, w, 0, SIM_EV_STOCK_WRITE, i, "sale");
            _exit(mine == NULL);
        }
    for (int w = 0; w < WRITERS; w++) {
        int status;

        wait(&status);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                      "a writer process failed");
    }
    ev = sim_history_snapshot(h, &n);
    ck_assert_msg(n == WRITERS * EACH, "the snapshot holds %zu events; "
                  "expected %d", n, WRITERS * EACH);
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(i == 0 || ev[i - 1].t_ns <= ev[i].t_ns,
                      "event %zu is earlier than the one before it", i);
        ck_assert_msg(ev[i].value == last[ev[i].client] + 1,
                      "writer %d's events are out of order at %zu",
                      ev[i].client, i);
        last[ev[i].client] = ev[i].value;
    }
    free(ev);
    sim_history_close(h);
    unlink(path);
}
END_TEST

START_TEST(test_history_full)
{
    char err[256] = "";
    const char *path = temp_file();
    sim_history *h = sim_history_create(path, err, sizeof(err));

    ck_assert_msg(h != NULL, "creating the history failed: %s", err);
    for (int i = 0; i < SIM_HISTORY_MAX; i++)
        ck_assert_msg(sim_history_add(h, 0, 0, SIM_EV_KEY, i, "set") == 0,
                      "add %d of %d failed", i, SIM_HISTORY_MAX);
    ck_assert_msg(sim_history_add(h, 0, 0, SIM_EV_KEY, 0, "set") == -1,
                  "a full history accepted one more event");
    sim_history_close(h);
    unlink(path);
}
END_TEST

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    char *text = calloc(1, 1 << 16);

    ck_assert_msg(f != NULL && text != NULL, "could not read %s", path);
    fread(text, 1, (1 << 16) - 1, f);
    fclose(f);
    return text;
}

START_TEST(test_history_round_trip)
{
    sim_run_info run = { "v3-set-nx-px", "slow-holder",
                         "the holder's \"critical\" section outlives its lease",
                         "", 300, 7, 3 }, back;
    char err[256] = "", first[64], second[64];
    sim_event *ev;
    size_t n;
    char *a, *b;

    begin();
    takes(0, A, 1);
    record(5, A, 1, SIM_EV_ACQUIRE_ERROR, -3, "tab\there \\ \"quoted\"\n");
    stock(SIM_EV_STOCK_INITIAL, 6, 100);
    snprintf(first, sizeof(first), "%s", temp_file());
    snprintf(second, sizeof(second), "%s", temp_file());
    ck_assert_msg(sim_history_save_run(first, &run, s.ev, s.n, 0, err,
                                       sizeof(err)) == 0, "save failed: %s", err);
    ev = sim_history_load_run(first, &back, &n, err, sizeof(err));
    ck_assert_msg(ev != NULL, "load failed: %s", err);
    ck_assert_msg(n == s.n, "loaded %zu events; saved %zu", n, s.n);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(memcmp(&ev[i], &s.ev[i], sizeof(ev[i])) == 0,
                      "event %zu came back different", i);
    ck_assert_msg(memcmp(&run, &back, sizeof(run)) == 0,
                  "the run header came back different");
    ck_assert_msg(sim_history_save_run(second, &back, ev, n, 0, err,
                                       sizeof(err)) == 0, "save failed: %s", err);
    a = slurp(first);
    b = slurp(second);
    ck_assert_msg(strcmp(a, b) == 0, "saving a loaded history gave another "
                  "file:\n%s\nthen\n%s", a, b);
    free(a);
    free(b);
    free(ev);
    unlink(first);
    unlink(second);
}
END_TEST

/* Loads text as a history file; returns the error, "" when it loaded. */
static const char *load_text(const char *text, char *err, size_t len)
{
    const char *path = temp_file();
    FILE *f = fopen(path, "w");
    sim_event *ev;
    size_t n;

    fputs(text, f);
    fclose(f);
    err[0] = '\0';
    ev = sim_history_load(path, &n, err, len);
    ck_assert_msg((ev == NULL) == (err[0] != '\0'),
                  "load returned %p with the error \"%s\"", (void *)ev, err);
    free(ev);
    unlink(path);
    return err;
}

#define GOOD "{\"t_ns\":1,\"client\":0,\"type\":\"acquire-ok\"}\n"

static void assert_bad(const char *text, int line, const char *reason)
{
    char err[256], want[128];

    load_text(text, err, sizeof(err));
    snprintf(want, sizeof(want), "%s:%d: ", tmp_path, line);
    ck_assert_msg(strncmp(err, want, strlen(want)) == 0,
                  "the error \"%s\" does not start with \"%s\"", err, want);
    ck_assert_msg(strstr(err, reason) != NULL,
                  "the error \"%s\" does not say \"%s\"", err, reason);
    ck_assert_msg(strchr(err, '\n') == NULL, "the error \"%s\" is more than "
                  "one line", err);
}

START_TEST(test_history_malformed_line)
{
    char err[256];

    ck_assert_str_eq(load_text(GOOD "\n" GOOD, err, sizeof(err)), "");
    assert_bad(GOOD GOOD "{\"t_ns\":1,\"client\":0,\"type\":\"dance\"}\n", 3,
               "unknown event type \"dance\"");
    assert_bad(GOOD "{\"client\":0,\"type\":\"key\"}\n", 2, "t_ns");
    assert_bad(GOOD "not json\n", 2, "not valid JSON");
    assert_bad(GOOD "{\"t_ns\":1,\"client\":0,\"type\":\"key\"\n", 2,
               "not valid JSON");
    assert_bad(GOOD "{\"lockstep\":\"run\"}\n", 2, "first line");
    assert_bad("{\"t_ns\":\"soon\",\"client\":0,\"type\":\"key\"}\n", 1,
               "integer");
}
END_TEST

START_TEST(test_history_type_names)
{
    for (int t = 0; t < SIM_EV_TYPE_COUNT; t++)
        ck_assert_msg(sim_event_type_parse(sim_event_type_name(t)) == t,
                      "the name \"%s\" of type %d parses to another type",
                      sim_event_type_name(t), t);
    ck_assert_int_eq(sim_event_type_parse("no-such-type"), -1);
}
END_TEST

Suite *history_suite(void)
{
    Suite *suite = suite_create("history");
    TCase *shared = tcase_create("shared journal");
    TCase *file = tcase_create("file");

    tcase_add_test(shared, test_history_writers_in_many_processes);
    tcase_add_test(shared, test_history_full);
    tcase_add_test(file, test_history_round_trip);
    tcase_add_test(file, test_history_malformed_line);
    tcase_add_test(file, test_history_type_names);
    suite_add_tcase(suite, shared);
    suite_add_tcase(suite, file);
    return suite;
}

/* ---- report ---------------------------------------------------------------- */

static char *printed;     /* what the last report call printed */
static size_t printed_len;

static FILE *capture(void)
{
    free(printed);
    printed = NULL;
    return open_memstream(&printed, &printed_len);
}

static void assert_printed(const char *want)
{
    ck_assert_msg(printed != NULL && strstr(printed, want) != NULL,
                  "the report does not say \"%s\"; it printed:\n%s", want,
                  printed ? printed : "(nothing)");
}

/* Sentences wrap at 72 columns: compare them with every run of blanks
 * and line breaks read as one space. */
static void assert_said(const char *want)
{
    char *flat = malloc(printed_len + 1);
    size_t k = 0;

    ck_assert_msg(flat != NULL, "out of memory");
    for (size_t i = 0; i < printed_len; i++)
        if (!(printed[i] == '\n' || (printed[i] == ' ' && k > 0 &&
                                     flat[k - 1] == ' ')))
            flat[k++] = printed[i];
        else if (k > 0 && flat[k - 1] != ' ')
            flat[k++] = ' ';
    flat[k] = '\0';
    ck_assert_msg(strstr(flat, want) != NULL, "the report does not say "
                  "\"%s\"; it printed:\n%s", want, printed);
    free(flat);
}

static void assert_narrow(size_t width)
{
    for (const char *line = printed; *line; ) {
        size_t len = strcspn(line, "\n");

        ck_assert_msg(len <= width, "a line of %zu columns is wider than "
                      "%zu:\n%.*s", len, width, (int)len, line);
        line += len + (line[len] == '\n');
    }
}

static void late_delete_story(void)
{
    begin();
    stock(SIM_EV_STOCK_INITIAL, 0, 100);
    takes(0, A, 1);
    wants(100, B);
    key(300, "expired");      /* A's lease runs out inside */
    key(311, "set");
    key(311, "expire");
    gets(312, B);
    sells(800, A, 99);
    gives_back(900, A);       /* A's DEL removes B's key */
    takes(950, C, 1);
    sells(1000, B, 99);
    sells(1100, C, 98);
    stock(SIM_EV_STOCK_FINAL, 1300, 98);
}

START_TEST(test_report_sentences)
{
    FILE *out;

    begin();
    takes(0, A, 1);
    key(300, "expired");
    takes(310, B, 1);
    gives_back(900, A);
    stock(SIM_EV_STOCK_INITIAL, 903, 100);
    stock(SIM_EV_STOCK_FINAL, 904, 98);
    check();
    out = capture();
    sim_report_verdict(out, &v, 0);
    fclose(out);
    assert_said("clients A and B both held the lock in [312 ms, 900 ms]");
    assert_said("client A's release deleted client B's lock at 901 ms; "
                   "B had held it since 312 ms");
    ck_assert_msg(strstr(printed, "took the lock") == NULL, "nobody entered "
                  "after A's delete, but the report names someone:\n%s",
                  printed);
    assert_said("stock 100 -> 98 after 0 sales: the stock fell 2 more than "
                   "the sales recorded");
    begin();
    takes(0, A, 0);
    crashes(100, A);
    wants(110, B);
    gives_up(1310, B);
    check();
    out = capture();
    sim_report_verdict(out, &v, 0);
    fclose(out);
    assert_said("client B waited 1200 ms and gave up at 1310 ms while "
                   "crashed client A's key had no TTL: deadlock");
}
END_TEST

START_TEST(test_report_run_and_timeline)
{
    sim_run_info run = { "v3-set-nx-px", "slow-holder",
                         "the holder's critical section outlives its lease",
                         "", 300, 7, 3 };
    FILE *out;

    late_delete_story();
    check();
    out = capture();
    sim_report_run(out, &run, s.ev, s.n, 0, &v);
    fclose(out);
    assert_said("v3-set-nx-px / slow-holder: the holder's critical section "
                "outlives its lease (lease 300 ms, seed 7) ");
    assert_said("stock 100 -> 98 after 3 sales: 1 update lost");
    assert_said("client A's release deleted client B's lock at 901 ms; B had "
                "held it since 312 ms; client C took the lock at 952 ms while "
                "B was still inside");
    assert_printed("\nclient A    ");
    assert_printed("\nclient C");
    assert_printed("\nlock key    AAA");
    assert_printed("\nanomaly     ");
    assert_narrow(72);
}
END_TEST

/* The anomaly lane's symbol in a column of the last timeline printed
 * (blank past the lane's end, which is trimmed). */
static char anomaly_mark(int column)
{
    const char *lane = strstr(printed, "\nanomaly     ");
    size_t len;

    ck_assert_msg(lane != NULL, "the timeline has no anomaly lane:\n%s",
                  printed);
    lane += strlen("\nanomaly     ");
    len = strcspn(lane, "\n");
    return (size_t)column < len ? lane[column] : ' ';
}

START_TEST(test_report_marks_every_overlap)
{
    FILE *out;

    late_delete_story();      /* 1300 ms: 25 ms a column */
    check();
    out = capture();
    sim_report_timeline(out, s.ev, s.n, 0, 3, &v);
    fclose(out);
    ck_assert_msg(anomaly_mark(500 / 25) == '!', "A and B both held the "
                  "lock at 500 ms, but the anomaly lane does not say so:\n%s",
                  printed);
    ck_assert_msg(anomaly_mark(930 / 25) == ' ', "only B held the lock at "
                  "930 ms, but the anomaly lane marks it:\n%s", printed);
    ck_assert_msg(anomaly_mark(1100 / 25) == '!', "B and C both held the "
                  "lock at 1100 ms, after A's delete, but the anomaly lane "
                  "does not say so:\n%s", printed);
    assert_narrow(72);
}
END_TEST

START_TEST(test_report_key_without_ttl)
{
    FILE *out;

    begin();
    takes(0, A, 0);
    crashes(500, A);
    wants(510, B);
    gives_up(1700, B);
    check();
    out = capture();
    sim_report_timeline(out, s.ev, s.n, 0, 2, &v);
    fclose(out);
    assert_printed("\nlock key    aaaa");
    assert_printed("X");
    assert_printed("D");
    assert_narrow(72);
}
END_TEST

START_TEST(test_report_failover_mark)
{
    FILE *out;

    begin();
    takes(0, A, 1);
    record(100, SIM_NO_CLIENT, 0, SIM_EV_FAILOVER, 7001, "promote replica");
    takes(150, C, 1);
    gives_back(590, A);
    check();
    out = capture();
    sim_report_timeline(out, s.ev, s.n, 0, 3, &v);
    fclose(out);
    assert_printed("\nlock key    AAAAAAAAAA|");
    assert_printed("| failover: the replica became primary");
    assert_narrow(72);
}
END_TEST

START_TEST(test_report_fault_not_reachable)
{
    sim_run_info run = { "v3-set-nx-px", "crash-mid-acquire", "",
                         "acquire.after_setnx", 300, 1, 2 };
    FILE *out;

    begin();
    takes(0, A, 1);
    gives_back(100, A);
    check();
    out = capture();
    sim_report_run(out, &run, s.ev, s.n, 0, &v);
    fclose(out);
    assert_printed("fault not reachable: this stage has no such step");
    begin();
    wants(0, A);
    key(1, "set");
    record(2, A, 0, SIM_EV_FAILPOINT, 0, "acquire.after_setnx=crash");
    crashes(3, A);
    check();
    out = capture();
    sim_report_run(out, &run, s.ev, s.n, 0, &v);
    fclose(out);
    ck_assert_msg(strstr(printed, "not reachable") == NULL,
                  "the failpoint fired, but the report says it is not "
                  "reachable:\n%s", printed);
}
END_TEST

/* A late delete (v2) and a crash deadlock that the answer key says
 * should also lose mutual exclusion (a cell that differs). */
START_TEST(test_report_matrix)
{
    sim_verdict late, dead;
    sim_matrix_cell cells[] = {
        { "baseline", 1, 0, 0, 0, NULL, 0 },
        { "baseline", 2, 0, 0, 0, NULL, 0 },
        { "slow-holder", 1, 0, 0, 0, NULL, 0 },
        { "slow-holder", 2, 0, SIM_ANOM_ME | SIM_ANOM_MD, 0, &late, 0 },
        { "crash-mid-acquire", 3, 0, 0, 1, NULL, 0 },
        { "crash-mid-acquire", 1, 0, SIM_ANOM_DL | SIM_ANOM_ME, 0, &dead, 0 },
    };
    FILE *out;
    int matched;

    late_delete_story();
    cells[3].observed = check();
    late = v;
    begin();
    takes(0, A, 0);
    crashes(100, A);
    wants(110, B);
    gives_up(1310, B);
    cells[5].observed = check();
    dead = v;
    out = capture();
    matched = sim_report_matrix(out, cells, 6);
    fclose(out);
    ck_assert_msg(matched == 5, "the matrix counted %d matching cells; "
                  "expected 5", matched);
    assert_printed("slow-holder         -       ME MD\n");
    assert_printed("crash-mid-acquire   !DL             (-)\n");
    /* One line per anomaly, the numbers under them: fits a projector. */
    assert_printed("\nv2 slow-holder        ME  A and B held the lock at once "
                   "in [312 ms, 900 ms]\n"
                   "                      MD  A deleted B's lock at 901 ms; "
                   "C got in at 952 ms\n"
                   "                          (stock 100 -> 98 after 3 sales: "
                   "1 update lost)\n");
    assert_printed("\nv1 crash-mid-acquire  DL  B gave up at 1310 ms: crashed "
                   "A's key had no TTL\n"
                   "                      !   differs from the answer key, "
                   "which says ME DL\n");
    ck_assert_msg(strstr(printed, "v1 baseline") == NULL, "a cell without "
                  "an anomaly has evidence lines:\n%s", printed);
    assert_printed("\n5/6 cells match the answer key\n");
    assert_narrow(78);
}
END_TEST

static void free_printed(void)
{
    free(printed);
    printed = NULL;
}

Suite *report_suite(void)
{
    Suite *suite = suite_create("report");
    TCase *run = tcase_create("run");
    TCase *matrix = tcase_create("matrix");

    tcase_add_checked_fixture(run, NULL, free_printed);
    tcase_add_checked_fixture(matrix, NULL, free_printed);
    tcase_add_test(run, test_report_sentences);
    tcase_add_test(run, test_report_run_and_timeline);
    tcase_add_test(run, test_report_marks_every_overlap);
    tcase_add_test(run, test_report_key_without_ttl);
    tcase_add_test(run, test_report_failover_mark);
    tcase_add_test(run, test_report_fault_not_reachable);
    tcase_add_test(matrix, test_report_matrix);
    suite_add_tcase(suite, run);
    suite_add_tcase(suite, matrix);
    return suite;
}
