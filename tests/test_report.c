/* test_report: a run's sentences and timeline, and the fault matrix, on
 * hand-written histories (story.h). No Redis. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "story.h"

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

/* Where text lies in printed; fails the test when it is not there. */
static size_t said_at(const char *text)
{
    const char *p = printed != NULL ? strstr(printed, text) : NULL;

    ck_assert_msg(p != NULL, "the report does not say \"%s\"; it printed:"
                  "\n%s", text, printed ? printed : "(nothing)");
    return (size_t)(p - printed);
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

/* Checks the story and prints its verdict into printed. */
static void tell_verdict(void)
{
    FILE *out;

    check();
    out = capture();
    sim_report_verdict(out, &v, s.ev, s.n, 0);
    fclose(out);
}

/* Checks the story and draws its timeline into printed, at a lease of
 * lease_ms (0: unknown). */
static void draw_timeline_at(int clients, long lease_ms)
{
    FILE *out;

    check();
    out = capture();
    sim_report_timeline(out, s.ev, s.n, 0, clients, lease_ms, &v);
    fclose(out);
}

static void draw_timeline(int clients)
{
    draw_timeline_at(clients, 0);
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
    assert_printed("                      F   A and B both used token 1 (B from "
                   "33 ms)\n");
    assert_narrow(78);
}
END_TEST

START_TEST(test_report_sentences)
{
    begin();
    takes(0, A, 1);
    key(300, "expired");
    takes(310, B, 1);
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

START_TEST(test_report_run_and_timeline)
{
    sim_run_info run = { "v3-set-nx-px", "slow-holder",
                         "the holder's critical section outlives its lease",
                         "", 300, 7, 3, 1 };
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
    late_delete_story();      /* 1300 ms: 25 ms a column */
    draw_timeline(3);
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
    begin();
    takes(0, A, 0);
    crashes(500, A);
    wants(510, B);
    gives_up(1700, B);
    draw_timeline(2);
    assert_printed("\nlock key    aaaa");
    assert_printed("%");
    assert_printed("@");
    assert_narrow(72);
}
END_TEST

START_TEST(test_report_failover_mark)
{
    begin();
    takes(0, A, 1);
    record(100, SIM_NO_CLIENT, 0, SIM_EV_FAILOVER, 7001, "promote replica");
    takes(150, C, 1);
    gives_back(590, A);
    draw_timeline(3);
    assert_printed("\nlock key    AAAAAAAAAA^");
    assert_printed("^ failover: the new primary has no key");
    assert_narrow(72);
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
    /* Each column as wide as its widest cell, two blanks apart. */
    assert_printed("scenario           v1   v2        v3   v4");
    assert_printed("slow-holder        -    ME MD LU\n");
    assert_printed("crash-mid-acquire  !DL            (-)\n");
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

/* A's lease runs out while its process is stopped inside; B takes the
 * lock; A wakes still inside, and its release finds B's key. */
static void paused_holder_story(void)
{
    begin();
    stock(SIM_EV_STOCK_INITIAL, 0, 10);
    takes(0, A, 1);
    record(3, A, 0, SIM_EV_CS_ENTER, 0, "");
    record(30, A, 0, SIM_EV_PAUSE_BEGIN, 900, "SIGSTOP");
    key(300, "expired");
    takes(780, B, 1);
    record(783, B, 0, SIM_EV_CS_ENTER, 0, "");
    record(929, A, 0, SIM_EV_PAUSE_END, 0, "SIGCONT");
    sells(930, A, 9);
    record(930, A, 0, SIM_EV_CS_EXIT, 0, "");
    unlocks(931, A);
    not_owner(932, A);
    sells(1500, B, 9);
    record(1500, B, 0, SIM_EV_CS_EXIT, 0, "");
    gives_back(1500, B);
    stock(SIM_EV_STOCK_FINAL, 1600, 9);
}

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

/* Every symbol in a lane of the last timeline printed is in its legend,
 * as one item: "<symbol> <what it means>", and only once; letters only
 * in the key lane, where they name clients. */
static void assert_legend_explains(void)
{
    const char *legend = strstr(printed, "\nlegend ");

    ck_assert_msg(legend != NULL, "the timeline has no legend:\n%s", printed);
    for (const char *line = printed; line < legend; ) {
        size_t len = strcspn(line, "\n");
        int key = strncmp(line, "lock key", 8) == 0;
        int lane = key || strncmp(line, "client ", 7) == 0 ||
                   strncmp(line, "anomaly", 7) == 0;

        for (size_t k = 12; lane && k < len; k++) {
            char c = line[k], item[4] = { ' ', c, ' ', '\0' };
            const char *at;

            if (c == ' ')
                continue;
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) {
                ck_assert_msg(key, "a letter '%c' in a lane other than the "
                              "key's: %.*s", c, (int)len, line);
                ck_assert_msg(strstr(legend, c <= 'Z' ? "A-Z " : "a-z ") !=
                              NULL, "the key lane draws '%c', and the legend "
                              "does not say what %s letters mean:\n%s", c,
                              c <= 'Z' ? "upper-case" : "lower-case", printed);
                continue;
            }
            at = strstr(legend, item);
            ck_assert_msg(at != NULL, "'%c' is drawn in \"%.*s\" but not in "
                          "the legend:\n%s", c, (int)len, line, printed);
            ck_assert_msg(strstr(at + 1, item) == NULL, "the legend explains "
                          "'%c' twice:\n%s", c, legend);
        }
        line += len + (line[len] == '\n');
    }
}

START_TEST(test_report_legend_explains_every_symbol)
{
    paused_holder_story();
    draw_timeline_at(2, 300);
    assert_legend_explains();
    late_delete_story();
    draw_timeline_at(3, 300);
    assert_legend_explains();
    begin();                  /* a crash, a deadlock, a key without TTL */
    takes(0, A, 0);
    crashes(500, A);
    wants(510, B);
    gives_up(1700, B);
    draw_timeline_at(2, 300);
    assert_legend_explains();
    begin();                  /* a key nobody's acquire made; a failover */
    key(10, "set");
    key(10, "expire");
    record(100, SIM_NO_CLIENT, 0, SIM_EV_FAILOVER, 7001, "promote replica");
    takes(150, C, 1);
    unlocks(400, C);
    record(401, C, 0, SIM_EV_RELEASE_ERROR, 0, "I/O error");
    draw_timeline_at(3, 300);
    assert_printed("?");
    assert_printed("/");
    assert_legend_explains();
    ck_assert_msg(strstr(printed, "B = ") == NULL, "the legend uses '=' for "
                  "\"means\", and '=' is a lane's symbol:\n%s", printed);
}
END_TEST

/* How many rows the last timeline was drawn in. */
static int rows_drawn(void)
{
    int rows = 0;

    for (const char *p = printed; (p = strstr(p, "time (ms)")) != NULL; p++)
        rows++;
    return rows;
}

/* Eight columns a lease whatever the run's length, rows of 60 columns,
 * and a scale that halves only for a run too long for three rows. */
START_TEST(test_report_columns_per_lease)
{
    late_delete_story();      /* 1300 ms */
    draw_timeline_at(3, 300);
    assert_said("one column is 37.5 ms: 8 columns, from one + to the next, "
                "are one 300 ms lease");
    ck_assert_msg(rows_drawn() == 1, "a run of 1300 ms (60 columns hold "
                  "2250 ms) is drawn in %d rows:\n%s", rows_drawn(), printed);
    begin();
    takes(0, A, 0);
    gives_back(3000, A);
    draw_timeline_at(1, 300);
    assert_said("one column is 37.5 ms");
    ck_assert_msg(rows_drawn() == 2, "a run of 3000 ms is drawn in %d rows; "
                  "expected 2 of 2250 ms", rows_drawn());
    assert_printed("\ntime (ms)   2250    2550");
    assert_narrow(72);
    begin();
    takes(0, A, 0);
    gives_back(8900, A);
    draw_timeline_at(1, 300);
    assert_said("one column is 75 ms: 8 columns, from one + to the next, "
                "are 2 leases of 300 ms");
    ck_assert_msg(rows_drawn() == 2, "a run of 8900 ms at 75 ms a column "
                  "is drawn in %d rows; expected 2", rows_drawn());
    assert_narrow(72);
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
    Suite *suite = suite_create("report");
    TCase *run = tcase_create("run");
    TCase *matrix = tcase_create("matrix");

    tcase_add_checked_fixture(run, NULL, free_printed);
    tcase_add_checked_fixture(matrix, NULL, free_printed);
    tcase_add_test(run, test_report_sentences);
    tcase_add_test(run, test_report_refused_write);
    tcase_add_test(run, test_report_token_clash);
    tcase_add_test(run, test_report_run_and_timeline);
    tcase_add_test(run, test_report_marks_every_overlap);
    tcase_add_test(run, test_report_key_without_ttl);
    tcase_add_test(run, test_report_failover_mark);
    tcase_add_test(run, test_report_fault_not_reachable);
    tcase_add_test(run, test_report_caps_each_kind);
    tcase_add_test(run, test_report_cannot_judge);
    tcase_add_test(run, test_report_unknown_outcome);
    tcase_add_test(run, test_report_release_not_owner);
    tcase_add_test(run, test_report_release_finds_no_key);
    tcase_add_test(run, test_report_caps_release_results);
    tcase_add_test(run, test_report_legend_explains_every_symbol);
    tcase_add_test(run, test_report_columns_per_lease);
    tcase_add_test(matrix, test_report_matrix);
    suite_add_tcase(suite, run);
    suite_add_tcase(suite, matrix);
    return suite;
}
