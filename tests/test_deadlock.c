/* test_deadlock: the checker's rules for DL and lost updates (LU), the
 * writes a fenced resource refused, and the histories it refuses to
 * judge, on hand-written histories (story.h). No Redis. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "story.h"
#include "tcases.h"

#define DL(k) (&episode(SIM_ANOM_DL, k)->dl)

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
    ck_assert_msg(!DL(0)->self && DL(0)->waiter == B && DL(0)->owner == A &&
                  DL(0)->stuck == SIM_STUCK_CRASHED,
                  "the deadlock names waiter %d and client %d (stuck: %d); "
                  "expected B waiting on A, who crashed holding",
                  DL(0)->waiter, DL(0)->owner, DL(0)->stuck);
    ck_assert_msg(DL(0)->busy_ns - DL(0)->invoke_ns == 1200 * MS,
                  "B waited %lld ns; expected 1200 ms",
                  (long long)(DL(0)->busy_ns - DL(0)->invoke_ns));
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
    ck_assert_msg(DL(0)->owner == A &&
                  DL(0)->stuck == SIM_STUCK_CRASHED_ACQUIRING,
                  "the deadlock blames client %d (stuck: %d); expected A, "
                  "crashed inside its acquire", DL(0)->owner, DL(0)->stuck);
}
END_TEST

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
    ck_assert_msg(v.n_keys == 1 && v.keys[0].owner == A, "the key is said to "
                  "be client %d's; expected A's, whose acquire died with it",
                  v.n_keys ? v.keys[0].owner : -1);
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
    ck_assert_msg(DL(0)->self && DL(0)->waiter == A &&
                  DL(0)->held_since_ns == 2 * MS,
                  "the deadlock is self=%d by client %d holding since %lld ns; "
                  "expected a self-deadlock of A holding since 2 ms",
                  DL(0)->self, DL(0)->waiter, (long long)DL(0)->held_since_ns);
}
END_TEST

/* A key that ends in the nanosecond a waiter gives up was not there to
 * deadlock it; one that appears then was not there either. */
START_TEST(test_checker_tie_is_no_deadlock)
{
    begin();
    takes(0, A, 0);
    crashes(100, A);
    wants(110, B);
    gives_up(1310, B);
    key(1310, "del");         /* someone cleared it at that very instant */
    assert_verdict(0, "the key ended as B gave up");
}
END_TEST

/* ---- LU: lost updates -------------------------------------------------- */

/* The checker counted lost sales overwritten, and oversold ones that
 * took the stock below zero. */
static void assert_counted(long long lost, long long oversold)
{
    ck_assert_msg(v.stock.lost == lost && v.stock.oversold == oversold,
                  "the checker counted %lld lost and %lld oversold; expected "
                  "%lld lost, %lld oversold", (long long)v.stock.lost,
                  (long long)v.stock.oversold, lost, oversold);
}

START_TEST(test_checker_lost_update)
{
    begin();
    stock(SIM_EV_STOCK_INITIAL, 0, 100);
    sells(10, A, 99);
    sells(11, B, 99);         /* B read 100 too: A's sale is overwritten */
    sells(20, C, 98);
    stock(SIM_EV_STOCK_FINAL, 30, 98);
    assert_verdict(SIM_ANOM_LU, "three sales took two units");
    assert_counted(1, 0);
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
    assert_verdict(SIM_ANOM_LU, "three sales of two units");
    assert_counted(0, 1);
}
END_TEST

START_TEST(test_checker_refused_write)
{
    const sim_refusal *r;

    fenced_pause_story(); /* A's write refused at 400 ms, B read at 315 ms */
    assert_verdict(SIM_ANOM_ME, "two holders, the stale write refused");
    ck_assert_msg(v.stock.sold == 1 && v.stock.lost == 0, "the checker counted "
                  "%lld sales and %lld lost; expected 1 sale (a refused write "
                  "is none) and 0 lost", (long long)v.stock.sold,
                  (long long)v.stock.lost);
    ck_assert_msg(v.n_refusals == 1, "the checker kept %zu refused writes; "
                  "expected 1", v.n_refusals);
    r = &v.refusals[0];
    ck_assert_msg(r->client == A && r->token == 1 && r->fence == 2 &&
                  r->at_ns == 400 * MS, "the refusal is client %d's token %lld "
                  "against %lld at %lld ns; expected A's token 1 against 2 at "
                  "400 ms", r->client, (long long)r->token, (long long)r->fence,
                  (long long)r->at_ns);
    ck_assert_msg(r->by == B && r->by_type == SIM_EV_STOCK_READ &&
                  r->by_ns == 315 * MS, "the checker says client %d showed "
                  "token 2 by a %s at %lld ns; expected B's read at 315 ms",
                  r->by, sim_event_type_name(r->by_type), (long long)r->by_ns);
    ck_assert_msg(!v.token_clash, "A and B had tokens 1 and 2, yet the checker "
                  "says clients %d and %d shared token %lld", v.clash.a,
                  v.clash.b, (long long)v.clash.token);
}
END_TEST

START_TEST(test_checker_token_clash)
{
    fenced_failover_story();  /* B reads with A's token 1 at 33 ms */
    check();
    ck_assert_msg((v.anomalies & SIM_ANOM_LU) && v.n_refusals == 0, "expected "
                  "a lost update and no refused write; the checker found \"%s\" "
                  "and %zu refused", set_text(v.anomalies), v.n_refusals);
    ck_assert_msg(v.token_clash && v.clash.token == 1 && v.clash.a == A &&
                  v.clash.b == B && v.clash.b_type == SIM_EV_STOCK_READ &&
                  v.clash.b_ns == 33 * MS, "expected B's read at 33 ms to "
                  "share token 1 with A; the checker says %s (%d and %d, token "
                  "%lld)", v.token_clash ? "a clash" : "none", v.clash.a,
                  v.clash.b, (long long)v.clash.token);
}
END_TEST

/* A fence no access in the history shows: the write is still no sale,
 * and who raised the fence cannot be named. */
START_TEST(test_checker_refused_write_unnamed)
{
    begin();
    stock(SIM_EV_STOCK_INITIAL, 0, 10);
    takes(0, A, 1);
    reads(5, A, 10, 3);
    refused(20, A, 3, 7);
    gives_back(30, A);
    stock(SIM_EV_STOCK_FINAL, 40, 10);
    assert_verdict(0, "one holder, whose write was refused");
    ck_assert_msg(v.n_refusals == 1 && v.refusals[0].by == SIM_UNNAMED,
                  "expected one refused write whose fence nobody in the "
                  "history raised; got %zu, by client %d", v.n_refusals,
                  v.n_refusals ? v.refusals[0].by : 0);
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

/* ---- histories it cannot judge ------------------------------------------- */

static void assert_unjudged(const char *why, const char *reason)
{
    assert_verdict(SIM_ANOM_UNJUDGED, why);
    ck_assert_msg(strstr(v.why, reason) != NULL, "%s: the reason \"%s\" does "
                  "not say \"%s\"", why, v.why, reason);
    ck_assert_msg(sim_verdict_status(&v) == 2 && v.n_episodes == 0,
                  "%s: status %d with %zu episodes; expected 2 and none", why,
                  sim_verdict_status(&v), v.n_episodes);
}

START_TEST(test_checker_cannot_judge)
{
    begin();
    assert_unjudged("no events", "no events");
    begin();
    record(0, -3, 0, SIM_EV_ACQUIRE_INVOKE, 0, "");
    assert_unjudged("client -3", "client -3");
    begin();
    takes(0, A, 1);
    crashes(10, A);
    unlocks(20, A);
    assert_unjudged("a step after a crash", "after its client's crash");
    begin();
    wants(0, A);
    wants(10, A);
    assert_unjudged("two invokes", "before the outcome");
    begin();
    gets(0, A);
    assert_unjudged("an ok without invoke", "no invoke");
    begin();
    takes(0, A, 1);
    key(10, "rename_from");
    assert_unjudged("an unknown key event", "rename_from");
    begin();
    takes(0, A, 1);
    s.ev[0].type = SIM_EV_TYPE_COUNT;
    assert_unjudged("an unknown type", "does not know");
}
END_TEST

START_TEST(test_checker_out_of_order)
{
    begin();
    takes(0, A, 1);
    s.ev[0].t_ns = 5 * MS;    /* after the key event at 1 ms */
    sim_verdict_free(&v);
    ck_assert_msg(sim_check(s.ev, s.n, &v) == SIM_ANOM_UNJUDGED &&
                  strstr(v.why, "out of order") != NULL, "events out of "
                  "order gave \"%s\"; expected a refusal", v.why);
}
END_TEST

START_TEST(test_checker_anomaly_names)
{
    unsigned set;

    ck_assert_str_eq(set_text(SIM_ANOM_ME | SIM_ANOM_MD), "ME MD");
    ck_assert_str_eq(set_text(0), "-");
    ck_assert_str_eq(set_text(SIM_ANOM_UNJUDGED), "?");
    ck_assert_msg(sim_anomaly_parse("ME MD", &set) == 0 &&
                  set == (SIM_ANOM_ME | SIM_ANOM_MD),
                  "\"ME MD\" parsed to %u; expected ME|MD", set);
    ck_assert_msg(sim_anomaly_parse("-", &set) == 0 && set == 0,
                  "\"-\" parsed to %u; expected the empty set", set);
    ck_assert_msg(sim_anomaly_parse("ME XX", &set) == -1,
                  "\"ME XX\" parsed although XX is no anomaly");
}
END_TEST

START_TEST(test_checker_client_names)
{
    static const struct { int client; const char *name; } names[] = {
        { 0, "A" }, { 25, "Z" }, { 26, "AA" }, { 30, "AE" }, { 701, "ZZ" },
        { 702, "AAA" }, { SIM_UNNAMED, "?" },
    };
    char buf[16];

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        ck_assert_msg(strcmp(sim_check_client_name(names[i].client, buf,
                                                   sizeof(buf)),
                             names[i].name) == 0,
                      "client %d is named \"%s\"; expected \"%s\"",
                      names[i].client, buf, names[i].name);
}
END_TEST

Suite *deadlock_suite(void)
{
    const tcase_row tcases[] = {
        TCASE_ROW("deadlock",
                  test_checker_waiter_behind_live_holder, test_checker_crashed_holder_with_ttl,
                  test_checker_crashed_holder_without_ttl, test_checker_crash_after_setnx,
                  test_checker_crash_before_key_reported, test_checker_self_deadlock,
                  test_checker_tie_is_no_deadlock),
        TCASE_ROW("lost updates",
                  test_checker_lost_update, test_checker_oversold,
                  test_checker_stock_intact_or_unknown, test_checker_refused_write,
                  test_checker_refused_write_unnamed, test_checker_token_clash),
        TCASE_ROW("refusals and names",
                  test_checker_cannot_judge, test_checker_out_of_order,
                  test_checker_anomaly_names, test_checker_client_names),
    };

    return TABLE_SUITE("deadlock, lost updates, refusals", tcases, add_story_tcase);
}
