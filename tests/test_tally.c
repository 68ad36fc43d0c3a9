/* test_tally: the bench's tally on hand-written histories. No Redis: each
 * test writes down a contended window as the bench's clients would have
 * recorded it (lock, counter + 1, unlock, again and again) and asserts
 * the figures the tally makes of it.
 *
 * Times are in ms; the window is [100 ms, 1100 ms) unless a test says
 * otherwise, so a rate is per second of it. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "history.h"
#include "tally.h"
#include "tcases.h"

#define MS 1000000LL     /* ns per ms */
#define STORY_MAX 512    /* events in one hand-written history */
#define GO 100
#define STOP 1100

enum { A, B, C };        /* client letters */

static sim_event story[STORY_MAX];
static size_t n;
static long stop_ms;     /* the window's end: STOP unless a test moves it */
static sim_tally t;

static void begin(void)
{
    memset(story, 0, sizeof(story));
    n = 0;
    stop_ms = STOP;
    memset(&t, 0, sizeof(t));
}

static void record(long ms, int client, sim_event_type type)
{
    ck_assert_msg(n < STORY_MAX, "the story has more than %d events", STORY_MAX);
    ck_assert_msg(n == 0 || story[n - 1].t_ns <= ms * MS,
                  "the story goes back in time at %ld ms", ms);
    story[n].t_ns = ms * MS;
    story[n].client = client;
    story[n].type = type;
    n++;
}

/* ---- verbs: one client's calls ------------------------------------------------ */

static void wants(long ms, int c) { record(ms, c, SIM_EV_ACQUIRE_INVOKE); }
static void gets(long ms, int c) { record(ms, c, SIM_EV_ACQUIRE_OK); }
static void gives_up(long ms, int c) { record(ms, c, SIM_EV_ACQUIRE_BUSY); }
static void fails(long ms, int c) { record(ms, c, SIM_EV_ACQUIRE_ERROR); }
static void unlocks(long ms, int c) { record(ms, c, SIM_EV_RELEASE_INVOKE); }
static void unlocked(long ms, int c) { record(ms, c, SIM_EV_RELEASE_OK); }
static void not_owner(long ms, int c) { record(ms, c, SIM_EV_RELEASE_NOT_OWNER); }

/* One whole turn: asks at ms, gets it 1 ms later, unlocks 2 ms after that. */
static void turn(long ms, int c)
{
    wants(ms, c);
    gets(ms + 1, c);
    unlocks(ms + 3, c);
    unlocked(ms + 4, c);
}

/* Tallies the story for clients A.. whose counter went up by counted. */
static void tally(int clients, long long counted)
{
    sim_tally_window w = { GO * MS, stop_ms * MS, clients, counted };
    char why[128] = "";

    ck_assert_msg(sim_tally_history(story, n, &w, &t, why, sizeof(why)) == 0,
                  "the tally failed on a %zu-event history: %s", n, why);
}

/* The acquisitions and lost updates of the story, as a sentence when wrong. */
static void assert_lost(long long acquisitions, long long lost, const char *story)
{
    ck_assert_msg(t.acquisitions == acquisitions && t.lost == lost,
                  "%s: the tally found %lld acquisitions and %lld lost updates; "
                  "expected %lld and %lld", story, t.acquisitions, t.lost, acquisitions, lost);
}

static void assert_near(double got, double want, const char *what)
{
    ck_assert_msg(fabs(got - want) < 1e-9, "%s is %g; expected %g", what, got, want);
}

/* ---- lost updates --------------------------------------------------------------- */

START_TEST(test_tally_no_lost_update)
{
    begin();
    turn(200, A);
    turn(300, B);
    turn(400, A);
    tally(2, 3);
    assert_lost(3, 0, "three turns, one at a time, and a counter up by 3");
}
END_TEST

START_TEST(test_tally_lost_update)
{
    begin();
    wants(200, A);
    gets(201, A);
    wants(202, B);
    gets(203, B);          /* B inside with A: both read the same counter */
    unlocks(210, A);
    unlocks(212, B);
    turn(300, C);
    tally(3, 2);
    assert_lost(3, 1, "A and B inside at once, then C, and a counter up by 2");
}
END_TEST

/* ---- handoffs ----------------------------------------------------------------- */

/* A releases and takes the lock back while B waits (re-won), then hands
 * it to B (a handoff, timed from A's release call). */
START_TEST(test_tally_releaser_rewins)
{
    begin();
    wants(200, B);
    turn(200, A);          /* A unlocks at 203 ... */
    turn(205, A);          /* ... and takes it back at 206, B still waits */
    gets(220, B);          /* A unlocked at 208: a handoff of 12 ms */
    unlocks(221, B);
    tally(2, 3);
    ck_assert_msg(t.rewon == 1 && t.handoffs == 1,
                  "A took the lock back once, then handed it to B: %ld re-won, %zu handoffs; "
                  "expected 1 and 1", t.rewon, t.handoffs);
    assert_near(t.rewon_share, 0.5, "the releaser's share of the lock changes");
    assert_near(t.handoff_p50_ms, 12.0, "the handoff to B (ms)");
}
END_TEST

START_TEST(test_tally_no_samples_are_nan)
{
    begin();
    wants(200, A);
    gets(201, A);          /* one acquisition: no change of hands */
    tally(1, 1);
    ck_assert_msg(isnan(t.handoff_p50_ms) && isnan(t.handoff_p99_ms) && isnan(t.rewon_share),
                  "with no lock change the handoff figures are %g and %g and the re-won share "
                  "%g; expected NAN (no sample)", t.handoff_p50_ms, t.handoff_p99_ms,
                  t.rewon_share);
}
END_TEST

/* ---- waits ---------------------------------------------------------------------- */

/* A waits 1, 2, ... 100 ms in 100 calls, one after another: 5 s and
 * more, in a window that long. */
START_TEST(test_tally_wait_percentiles)
{
    long at = GO, k;

    begin();
    stop_ms = 6000;
    for (k = 1; k <= 100; k++) {
        wants(at, A);
        gets(at + k, A);
        unlocks(at + k, A);
        at += k;
    }
    tally(1, 100);
    /* Whole milliseconds: the figures are exact. */
    ck_assert_msg(t.waits == 100 && t.wait_p50_ms == 50.0 && t.wait_p99_ms == 99.0 &&
                  t.wait_max_ms == 100.0,
                  "waits of 1 to 100 ms gave %zu waits, p50 %g ms, p99 %g ms, max %g ms; "
                  "expected 100 waits, 50, 99 and 100 ms",
                  t.waits, t.wait_p50_ms, t.wait_p99_ms, t.wait_max_ms);
}
END_TEST

START_TEST(test_tally_wait_counts_calls_begun_in_window)
{
    begin();
    wants(50, A);
    gets(150, A);          /* begun before the window: not a wait of it */
    unlocks(151, A);
    wants(1090, B);
    gets(1130, B);         /* begun in it, ends after it: 40 ms */
    unlocks(1131, B);
    tally(2, 2);
    ck_assert_msg(t.waits == 1, "one call began in the window; the tally counted %zu waits",
                  t.waits);
    assert_near(t.wait_max_ms, 40.0, "the wait of the call begun in the window (ms)");
}
END_TEST

START_TEST(test_tally_busy_and_errors)
{
    begin();
    turn(200, A);
    wants(300, B);
    gives_up(310, B);      /* wait budget spent */
    wants(320, C);
    fails(321, C);         /* the server broke */
    wants(400, A);
    gets(401, A);
    not_owner(410, A);     /* its lock was gone */
    tally(3, 2);
    ck_assert_msg(t.busy == 1 && t.errors == 2,
                  "one BUSY, one acquire error and one NOT_OWNER gave busy %ld, errors %ld; "
                  "expected 1 and 2", t.busy, t.errors);
    ck_assert_msg(t.waits == 4, "four acquire calls ended; the tally counted %zu waits",
                  t.waits);
}
END_TEST

/* ---- fairness ------------------------------------------------------------------- */

START_TEST(test_tally_fairness)
{
    begin();
    turn(200, A);
    turn(300, A);
    turn(400, B);
    turn(500, A);
    turn(1200, B);         /* after the window: not served in it, but counted */
    tally(3, 5);
    ck_assert_msg(t.least == 0 && t.most == 3,
                  "A served 3 times in the window, B once, C never: least %ld, most %ld; "
                  "expected 0 and 3", t.least, t.most);
    assert_near(t.rate, 4.0, "acquisitions per second of the 1 s window");
    assert_lost(5, 0, "four turns in the window and one after it, a counter up by 5");
}
END_TEST

START_TEST(test_tally_stats)
{
    double v[] = { 5, 1, 4, 2, 3, 6 };
    double sorted[] = { 1, 2, 3, 4 };

    assert_near(sim_tally_median(v, 6), 3.5, "the median of 1..6");
    ck_assert_msg(v[0] == 1 && v[5] == 6, "the median left the samples unsorted");
    assert_near(sim_tally_median(v, 5), 3.0, "the median of 1..5");
    assert_near(sim_tally_percentile(sorted, 4, 50), 2.0, "the nearest-rank p50 of 1..4");
    assert_near(sim_tally_percentile(sorted, 4, 100), 4.0, "the p100 of 1..4");
    ck_assert_msg(isnan(sim_tally_percentile(sorted, 0, 50)) && isnan(sim_tally_median(v, 0)),
                  "a percentile or median of no samples is a number; expected NAN");
}
END_TEST

Suite *tally_suite(void)
{
    const tcase_row tcases[] = {
        TCASE_ROW("lost updates", test_tally_no_lost_update, test_tally_lost_update),
        TCASE_ROW("handoffs", test_tally_releaser_rewins, test_tally_no_samples_are_nan),
        TCASE_ROW("waits",
                  test_tally_wait_percentiles, test_tally_wait_counts_calls_begun_in_window,
                  test_tally_busy_and_errors),
        TCASE_ROW("fairness", test_tally_fairness, test_tally_stats),
    };

    return TABLE_SUITE("tally", tcases, add_tcase);
}
