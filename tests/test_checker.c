/* test_checker: the checker's rules for ME and MD on hand-written
 * histories (story.h); DL, lost updates and refusals are in test_deadlock.c.
 * No Redis: each test writes a run down as it would have been recorded and
 * asserts what the checker makes of it. The cases a user reported as
 * files live in tests/histories (test_verdicts.c). */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "story.h"
#include "tcases.h"

#define ME(k) (&episode(SIM_ANOM_ME, k)->me)
#define MD(k) (&episode(SIM_ANOM_MD, k)->md)

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
    lease_runs_out();         /* v4: A's lease of 300 ms runs out inside */
    unlocks(900, A);          /* GET sees B's token: nothing deleted */
    not_owner(902, A);
    gives_back(1000, B);
    assert_verdict(SIM_ANOM_ME, "A still inside while B took the expired key");
    ck_assert_msg(ME(0)->a.client == A && ME(0)->b.client == B,
                  "the overlap was blamed on clients %d and %d; expected A and B",
                  ME(0)->a.client, ME(0)->b.client);
    ck_assert_msg(ME(0)->from_ns == 312 * MS && ME(0)->to_ns == 900 * MS,
                  "the overlap was [%lld, %lld] ns; expected [312 ms, 900 ms]",
                  (long long)ME(0)->from_ns, (long long)ME(0)->to_ns);
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
    wants(24, B);
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
    wants(310, B);
    key(311, "set");
    gets(312, B);
    assert_verdict(0, "B entered after A's crash and its key's expiry");
}
END_TEST

/* A hold that ends and one that begins in the same nanosecond do not
 * overlap, whichever line comes first. */
START_TEST(test_checker_tie_is_no_overlap)
{
    for (int order = 0; order < 2; order++) {
        begin();
        takes(0, A, 1);
        key(300, "expired");
        wants(310, B);
        key(311, "set");
        if (order == 0) {
            unlocks(400, A);
            gets(400, B);
        } else {
            gets(400, B);
            unlocks(400, A);
        }
        not_owner(401, A);
        assert_verdict(0, order ? "B's ok written before A's release at the "
                       "same instant" : "A's release written before B's ok "
                       "at the same instant");
    }
}
END_TEST

/* Every overlap is its own episode, in time order. */
START_TEST(test_checker_every_overlap)
{
    lease_runs_out();
    unlocks(500, A);
    not_owner(501, A);
    key(610, "expired");
    takes(620, C, 1);
    unlocks(800, B);
    not_owner(801, B);
    assert_verdict(SIM_ANOM_ME, "A then B then C, each lease ran out");
    ck_assert_msg(sim_verdict_count(&v, SIM_ANOM_ME) == 2, "the checker kept "
                  "%zu overlaps; expected 2 (A with B, B with C)",
                  sim_verdict_count(&v, SIM_ANOM_ME));
    ck_assert_msg(ME(1)->a.client == B && ME(1)->b.client == C &&
                  ME(1)->from_ns == 622 * MS, "the second overlap is %d with "
                  "%d from %lld ns; expected B with C from 622 ms",
                  ME(1)->a.client, ME(1)->b.client, (long long)ME(1)->from_ns);
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
    lease_runs_out();         /* v2/v3: A's lease runs out inside */
    gives_back(900, A);       /* A's DEL: the key is B's */
    takes(950, C, 1);
    gives_back(1200, B);
    assert_verdict(SIM_ANOM_ME | SIM_ANOM_MD, "A's late DEL removed B's key");
    ck_assert_msg(MD(0)->deleter == A && MD(0)->owner.client == B,
                  "the delete was blamed on client %d over client %d's lock; "
                  "expected A deleting B's", MD(0)->deleter, MD(0)->owner.client);
    ck_assert_msg(MD(0)->at_ns == 901 * MS && MD(0)->owner.since_ns == 312 * MS,
                  "the delete was at %lld ns of a lock held since %lld ns; "
                  "expected 901 ms and 312 ms", (long long)MD(0)->at_ns,
                  (long long)MD(0)->owner.since_ns);
    ck_assert_msg(MD(0)->deleter_how == SIM_RELEASE_IN_FLIGHT, "A's release "
                  "was in flight at the del, but the checker says %d",
                  MD(0)->deleter_how);
    ck_assert_msg(MD(0)->intruder.client == C &&
                  MD(0)->intruder.since_ns == 952 * MS,
                  "the delete let in client %d at %lld ns; expected C at "
                  "952 ms, while B was still inside", MD(0)->intruder.client,
                  (long long)MD(0)->intruder.since_ns);
}
END_TEST

START_TEST(test_checker_intruder_before_the_del_is_heard)
{
    lease_runs_out();
    wants(850, C);
    unlocks(900, A);          /* A's DEL removes B's key ... */
    unlocked(901, A);
    gets(903, C);             /* ... C's SET NX wins at once ... */
    key(904, "del");          /* ... and the observer hears both late */
    key(905, "set");
    key(905, "expire");
    unlocks(1200, B);
    assert_verdict(SIM_ANOM_ME | SIM_ANOM_MD, "A's DEL let C in, heard late");
    ck_assert_msg(MD(0)->deleter == A && MD(0)->owner.client == B,
                  "the delete was blamed on client %d over client %d's lock; "
                  "expected A deleting B's", MD(0)->deleter, MD(0)->owner.client);
    ck_assert_msg(MD(0)->intruder.client == C &&
                  MD(0)->intruder.since_ns == 903 * MS,
                  "the delete let in client %d at %lld ns; expected C at "
                  "903 ms, whose key came after the del",
                  MD(0)->intruder.client, (long long)MD(0)->intruder.since_ns);
}
END_TEST

START_TEST(test_checker_stranger_release)
{
    begin();
    takes(0, A, 1);
    wants(90, C);
    gives_back(100, B);       /* B never acquired; v1-v3 delete anyway */
    key(150, "set");
    gets(151, C);
    unlocks(250, A);
    unlocked(251, A);
    assert_verdict(SIM_ANOM_ME | SIM_ANOM_MD, "a stranger deleted A's lock");
    ck_assert_msg(MD(0)->deleter == B && MD(0)->owner.client == A,
                  "the delete was blamed on client %d over client %d's lock; "
                  "expected B deleting A's", MD(0)->deleter, MD(0)->owner.client);
    ck_assert_msg(MD(0)->intruder.client == C, "the delete let in client %d; "
                  "expected C, who took the lock while A was inside",
                  MD(0)->intruder.client);
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
    ck_assert_msg(MD(0)->intruder.client == SIM_NO_CLIENT, "client %d is "
                  "said to have got in through the delete, but it entered "
                  "after A left", MD(0)->intruder.client);
    begin();
    takes(0, A, 1);
    gives_back(100, B);
    crashes(200, A);          /* A dies inside: its hold ends here */
    takes(300, C, 1);
    assert_verdict(SIM_ANOM_MD, "a stranger deleted A's lock, A crashed");
    ck_assert_msg(MD(0)->intruder.client == SIM_NO_CLIENT, "client %d is "
                  "said to have got in through the delete, but it entered "
                  "after A crashed", MD(0)->intruder.client);
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
    failover_loses_the_key(C); /* the new primary never had A's key */
    gives_back(400, A);       /* v1-v3: A's DEL removes C's key */
    assert_verdict(SIM_ANOM_ME | SIM_ANOM_MD, "A's DEL after the failover");
    ck_assert_msg(MD(0)->deleter == A && MD(0)->owner.client == C,
                  "the delete was blamed on client %d over client %d's lock; "
                  "expected A deleting C's", MD(0)->deleter, MD(0)->owner.client);
}
END_TEST

START_TEST(test_checker_unknown_outcome_keeps_owners_in_order)
{
    begin();
    wants(0, A);
    key(1, "set");            /* A's SET went through ... */
    key(1, "expire");
    fails(5, A);              /* ... its reply did not */
    wants(10, B);
    gets(301, B);             /* B got in at the expiry; the observer lags */
    key(302, "expired");
    key(303, "set");
    key(303, "expire");
    gives_back(400, D);       /* a stranger deletes B's key */
    assert_verdict(SIM_ANOM_MD, "a stranger deleted B's key after A's error");
    ck_assert_msg(MD(0)->owner.client == B && MD(0)->deleter == D,
                  "the delete was blamed on client %d over client %d's lock; "
                  "expected D deleting B's", MD(0)->deleter, MD(0)->owner.client);
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
    ck_assert_msg(MD(0)->owner.client == B, "the deleted key is said to be "
                  "client %d's; expected B's", MD(0)->owner.client);
}
END_TEST

/* A retried release (an error, then OK) is one deleter, not two. */
START_TEST(test_checker_retried_release_is_named)
{
    failover_loses_the_key(B);
    unlocks(400, A);
    record(401, A, 0, SIM_EV_RELEASE_ERROR, 0, "I/O error");
    gives_back(410, A);
    assert_verdict(SIM_ANOM_ME | SIM_ANOM_MD, "A's retried DEL after a failover");
    ck_assert_msg(MD(0)->deleter == A, "the delete was blamed on client %d; "
                  "expected A, whose two tries are one release", MD(0)->deleter);
}
END_TEST

/* A ZooKeeper queue's events where no node holds (a waiter's node seen
 * before the holder's, and gone after its end) make no key and show no
 * gap in the observer's stream: only the holder's node is the key. */
START_TEST(test_checker_queue_is_not_the_key)
{
    wants(0, B);
    key(1, "queued");
    wants(2, A);
    key(3, "create");
    gets(4, A);
    unlocks(300, A);
    key(301, "delete");
    unlocked(302, A);
    key(303, "gone");
    gives_up(400, B);
    assert_verdict(0, "a queue's events outside the holder's node");
    ck_assert_msg(v.n_keys == 1 && v.n_gaps == 0, "the queue's events made %zu keys and "
                  "%zu gaps; expected the holder's one key and no gap", v.n_keys, v.n_gaps);
}
END_TEST

Suite *checker_suite(void)
{
    const tcase_row tcases[] = {
        TCASE_ROW("mutual exclusion",
                  test_checker_sequential_holds, test_checker_expired_holder_overlaps,
                  test_checker_reentrant_nested_holds, test_checker_inner_release_keeps_the_hold,
                  test_checker_crash_ends_the_hold, test_checker_tie_is_no_overlap,
                  test_checker_every_overlap, test_checker_queue_is_not_the_key),
        TCASE_ROW("delete by a non-owner",
                  test_checker_holder_deletes_its_own_key,
                  test_checker_late_del_deletes_anothers_lock,
                  test_checker_intruder_before_the_del_is_heard, test_checker_stranger_release,
                  test_checker_nobody_entered_after_the_delete,
                  test_checker_expired_key_reacquired, test_checker_new_holder_deletes_its_own_key,
                  test_checker_observer_lag, test_checker_reentrant_unlock_script,
                  test_checker_failover_loses_the_key,
                  test_checker_unknown_outcome_keeps_owners_in_order,
                  test_checker_crash_while_polling, test_checker_retried_release_is_named),
    };

    return TABLE_SUITE("checker", tcases, add_story_tcase);
}
