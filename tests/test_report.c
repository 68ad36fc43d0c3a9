/* test_report: a run told in sentences, and the fault matrix, on
 * hand-written histories (story.h). No Redis.
 *
 * The sentences say who held the lock together and when, whose release
 * deleted whose lock, a deadlock, the stock's numbers, the fence holding
 * or failing, what an error's unknown outcome may have done, a fault the
 * stage cannot reach; five of a kind are told, the rest counted. The
 * matrix has a column per stage, its evidence under it, and the cells
 * that differ from the answer key. The timeline's tests are in
 * tests/test_report_timeline.c; this file puts the suite together. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "report_helpers.h"
#include "tcases.h"

/* Prints the matrix of one cell, observed as the verdict v says. */
static void matrix_of(sim_matrix_cell *cell)
{
    FILE *out;

    cell->observed = v.anomalies;
    out = capture();
    sim_report_matrix(out, cell, 1);
    fclose(out);
}

/* The fence at work: the refused write in a sentence, the stock's numbers
 * with it, and its line in the matrix's evidence. */
START_TEST(test_report_refused_write)
{
    sim_matrix_cell cell = { .scenario = "gc-pause", .stage = 1,
                             .expected = SIM_ANOM_ME, .verdict = &v };

    fenced_pause_story();
    tell_verdict();
    assert_said("the fence held: client A's write with token 1 was refused at "
                "400 ms: client B had read the stock with token 2 at 315 ms");
    assert_said("stock 10 -> 9 after 1 sale and 1 refused write: no update lost");
    /* One story in time order: the overlap (310 ms), the refusal (400 ms),
     * A's release that found the lock gone (402 ms). */
    ck_assert_msg(said_at("clients A and B both held") < said_at("the fence "
                  "held") && said_at("the fence held") < said_at("release: "
                  "client A's release at 402 ms returned NOT_OWNER"), "the "
                  "fence's line is not told in time order:\n%s", printed);
    matrix_of(&cell);
    assert_printed("                      F   A's write refused at 400 ms: its "
                   "token 1 < B's 2\n");
    /* The cell itself says the fence held, and the legend says what F
     * means, and nothing else. */
    assert_printed("\ngc-pause  ME F\n");
    assert_printed("\nF   the fence held: the resource refused a stale write\n");
    assert_narrow(78);
}
END_TEST

/* The fence failing: two holders with one token, in a sentence. */
START_TEST(test_report_token_clash)
{
    sim_matrix_cell cell = { .scenario = "failover", .stage = 1,
                             .expected = SIM_ANOM_ME | SIM_ANOM_LU, .verdict = &v };

    fenced_failover_story();
    tell_verdict();
    assert_said("the fence failed: client B read the stock with token 1 at 33 "
                "ms, the token client A had used since 5 ms: the resource "
                "could not tell the two apart");
    matrix_of(&cell);
    assert_printed("                      T   A and B both used token 1 (B from "
                   "33 ms)\n");
    /* Not F, which says the fence held: T, the fence failed. */
    assert_printed("\nfailover  ME LU T\n");
    assert_printed("\nT   the fence failed: two holders used one token\n");
    assert_narrow(78);
}
END_TEST

START_TEST(test_report_sentences)
{
    lease_runs_out();
    gives_back(900, A);
    stock(SIM_EV_STOCK_INITIAL, 903, 100);
    stock(SIM_EV_STOCK_FINAL, 904, 98);
    tell_verdict();
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
    tell_verdict();
    assert_said("client B waited 1200 ms and gave up at 1310 ms while "
                   "crashed client A's key had no TTL: deadlock");
}
END_TEST

START_TEST(test_report_fault_not_reachable)
{
    sim_run_info run = { "v3-set-nx-px", "crash-mid-acquire", "",
                         "acquire.after_setnx", 300, 1, 2, 1 };
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
        { "slow-holder", 2, 0, SIM_ANOM_ME | SIM_ANOM_MD | SIM_ANOM_LU, 0, &late, 0 },
        { "crash-mid-acquire", 3, 0, 0, 1, NULL, 0 },
        { "crash-mid-acquire", 1, 0, SIM_ANOM_DL | SIM_ANOM_ME, 0, &dead, 0 },
    };
    FILE *out;
    int matched;

    late_delete_story();
    cells[3].observed = check();
    late = v;                 /* the verdict moves to late */
    memset(&v, 0, sizeof(v));
    begin();
    takes(0, A, 0);
    crashes(100, A);
    wants(110, B);
    gives_up(1310, B);
    cells[5].observed = check();
    dead = v;
    memset(&v, 0, sizeof(v));
    out = capture();
    matched = sim_report_matrix(out, cells, 6);
    fclose(out);
    ck_assert_msg(matched == 5, "the matrix counted %d matching cells; "
                  "expected 5", matched);
    /* Each column as wide as its widest cell, one blank apart: two
     * would not fit 78 columns with every stage's (thirteen). */
    assert_printed("scenario          v1  v2       v3  v4");
    assert_printed("slow-holder       -   ME MD LU\n");
    assert_printed("crash-mid-acquire !DL          (-)\n");
    /* One line per anomaly, the lost updates with their numbers: fits a
     * projector. */
    /* In time order, as they happened. */
    assert_printed("\nv2 slow-holder        ME  A and B held the lock at once "
                   "in [312 ms, 900 ms]\n"
                   "                      MD  A deleted B's lock at 901 ms; "
                   "C got in at 952 ms\n"
                   "                      ME  B and C held the lock at once "
                   "in [952 ms, 1300 ms]\n"
                   "                      LU  stock 100 -> 98 after 3 sales: "
                   "1 update lost\n");
    assert_printed("\nv1 crash-mid-acquire  DL  B gave up at 1310 ms: crashed "
                   "A's key had no TTL\n"
                   "                      !   differs from the answer key, "
                   "which says ME DL\n");
    ck_assert_msg(strstr(printed, "v1 baseline") == NULL, "a cell without "
                  "an anomaly has evidence lines:\n%s", printed);
    assert_printed("\n5/6 cells match the answer key\n");
    /* A column per stage: the scenario's name, then eight cells of
     * "!ME MD LU" and a gap, a hundred columns at most; the evidence
     * lines wrap at 78. */
    assert_narrow(100);
    sim_verdict_free(&late);
    sim_verdict_free(&dead);
}
END_TEST

/* n clients, each taking the key the one before let expire; with
 * releases, each releases after its own key expired (NOT_OWNER). */
static void expiring_crowd(int n, int releases)
{
    begin();
    for (int i = 0; i < n; i++) {
        takes(i * 400, i, 1);
        key(i * 400 + 300, "expired");
        if (releases) {
            unlocks(i * 400 + 350, i);
            not_owner(i * 400 + 351, i);
        }
    }
}

/* Eight clients, none leaving: seven overlaps, five told, then the
 * count. */
START_TEST(test_report_caps_each_kind)
{
    expiring_crowd(8, 0);
    tell_verdict();
    ck_assert_msg(sim_verdict_count(&v, SIM_ANOM_ME) == 7, "the checker "
                  "kept %zu overlaps; expected 7",
                  sim_verdict_count(&v, SIM_ANOM_ME));
    assert_said("clients A and B both held the lock in [402 ms, 3100 ms]");
    assert_said("clients A and F both held the lock in [2002 ms, 3100 ms]");
    ck_assert_msg(strstr(printed, "[2402 ms") == NULL, "the sixth overlap "
                  "is told in full:\n%s", printed);
    assert_said("mutual exclusion lost: and 2 more overlaps like these");
}
END_TEST

START_TEST(test_report_cannot_judge)
{
    char line[512];

    begin();
    takes(0, A, 1);
    key(10, "rename_from");
    tell_verdict();
    assert_said("cannot judge this history: a key event \"rename_from\" at "
                "10 ms");
    ck_assert_msg(strstr(printed, "no anomaly") == NULL, "a history that "
                  "cannot be judged is called clean:\n%s", printed);
    sim_report_evidence(line, sizeof(line), &v, 0);
    ck_assert_msg(strstr(line, "cannot judge") != NULL, "the evidence line "
                  "\"%s\" does not say the history cannot be judged", line);
}
END_TEST

/* An unknown outcome's reasoning is in the sentence, the rule under it. */
START_TEST(test_report_unknown_outcome)
{
    begin();
    takes(0, B, 1);
    key(300, "expired");
    wants(310, A);
    key(311, "set");
    fails(313, A);
    unlocks(800, B);
    not_owner(801, B);
    tell_verdict();
    assert_said("clients B and A both held the lock in [311 ms, 800 ms]; A's "
                "acquire ended in an error at 313 ms, but only that acquire "
                "could have made the key reported at 311 ms");
    assert_said("rule: an acquire or release that ended in an error or a "
                "crash may still have taken effect");
}
END_TEST

START_TEST(test_report_release_not_owner)
{
    paused_holder_story();
    tell_verdict();
    assert_said("release: client A woke at 929 ms from a pause that began at "
                "30 ms, still inside its critical section; its release at "
                "932 ms returned NOT_OWNER and deleted nothing: the lock was "
                "B's since 781 ms");
    ck_assert_msg(said_at("clients A and B both held") < said_at("release: "),
                  "the release at 932 ms is told before the overlap that "
                  "began at 782 ms; expected time order:\n%s", printed);
    draw_timeline_at(2, 300);
    /* 37.5 ms a column: A is paused from column 0 to 24, wakes inside in
     * column 24, and its release's answer takes the column after. */
    assert_printed("\nclient A    ||||||||||||||||||||||||#0\n");
    assert_printed("0 its release returned NOT_OWNER");
    assert_printed("two marks of one moment: the later is drawn a column on");
    assert_narrow(72);
}
END_TEST

/* A release that finds no key at all says what became of its own. */
START_TEST(test_report_release_finds_no_key)
{
    begin();
    takes(0, A, 1);
    key(300, "expired");
    unlocks(400, A);
    not_owner(401, A);
    tell_verdict();
    assert_said("client A's release at 401 ms returned NOT_OWNER and deleted "
                "nothing: there was no key: A's own had expired at 300 ms");
    begin();
    takes(0, A, 1);
    unlocks(100, A);
    record(101, A, 0, SIM_EV_RELEASE_ERROR, 0, "I/O error: Connection reset");
    unlocks(110, A);
    key(111, "del");
    unlocked(112, A);
    tell_verdict();
    assert_said("client A's release ended in an error at 101 ms (I/O error: "
                "Connection reset): whether it deleted the key is unknown; it "
                "tried again at 110 ms");
}
END_TEST

START_TEST(test_report_caps_release_results)
{
    expiring_crowd(7, 1);
    tell_verdict();
    assert_said("client E's release at 1951 ms returned NOT_OWNER");
    ck_assert_msg(strstr(printed, "client F's release") == NULL, "the sixth "
                  "release result is told in full:\n%s", printed);
    assert_said("release: and 2 more release results like these");
}
END_TEST

static void free_printed(void)
{
    free(printed);
    printed = NULL;
    sim_verdict_free(&v);
}

Suite *report_suite(void)
{
    const TTest *run_tests[] = {
        test_report_sentences, test_report_refused_write, test_report_token_clash,
        test_report_fault_not_reachable, test_report_caps_each_kind, test_report_cannot_judge,
        test_report_unknown_outcome, test_report_release_not_owner,
        test_report_release_finds_no_key, test_report_caps_release_results,
    };
    const TTest *matrix_tests[] = { test_report_matrix };
    Suite *suite = suite_create("report");
    TCase *run = ADD_TCASE(suite, "run", run_tests);
    TCase *matrix = ADD_TCASE(suite, "matrix", matrix_tests);

    report_timeline_tests(run);
    tcase_add_checked_fixture(run, NULL, free_printed);
    tcase_add_checked_fixture(matrix, NULL, free_printed);
    return suite;
}
