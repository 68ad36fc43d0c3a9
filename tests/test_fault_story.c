/* test_fault_story: a holder cut off from the lock's servers and a server
 * whose clock jumps, as the history keeps them and as the report and the
 * run page tell and draw them. No Redis: hand-written histories
 * (story.h); tests/histories has whole runs of both, which
 * tests/test_verdicts.c checks as `sim check` does.
 *
 * A cut is an event per node, begun and ended by the nemesis for one
 * client: the lanes read it as one stretch, the checker judges the run as
 * if it were not there, the story tells it once where it began, the
 * terminal breaks the time axis's rule from '[' to ']', and the page
 * draws it as a mark on the time axis and a broken line on the client's
 * lane. A clock jump is a node's event: told with what it did to the key
 * there, a '}' on the rule, a mark on the page's axis. */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "html.h"
#include "lanes.h"
#include "report.h"
#include "report_helpers.h"
#include "story.h"
#include "tcases.h"

/* A (v6-like) takes the lock at 0 ms and reads 10; cut off from node 0
 * (or from every node of a lock of `nodes`) at 30 ms until 930 ms; its
 * key expires at 300 ms; B, waiting since 60 ms, takes it at 310 ms. */
static void cut_story(int nodes)
{
    begin();
    stock(SIM_EV_STOCK_INITIAL, 0, 10);
    wants(1, A);
    for (int k = 0; k < nodes; k++) {
        key_on(2, k, "set");
        key_on(2, k, "expire");
    }
    gets(3, A);
    record(4, A, 0, SIM_EV_CS_ENTER, 0, "");
    reads(5, A, 10, 0);
    for (int k = 0; k < nodes; k++)
        cut_off(30, A, k);
    wants(60, B);
    for (int k = 0; k < nodes; k++)
        key_on(300, k, "expired");
    for (int k = 0; k < nodes; k++) {
        key_on(310, k, "set");
        key_on(310, k, "expire");
    }
    gets(311, B);
    reads(313, B, 10, 0);
    sells(610, B, 9);
    unlocks(612, B);
    for (int k = 0; k < nodes; k++)
        key_on(613, k, "del");
    unlocked(614, B);
    for (int k = 0; k < nodes; k++)
        heals(930, A, k);
    sells(1080, A, 9);
    record(1081, A, 0, SIM_EV_CS_EXIT, 0, "");
    unlocks(1082, A);
    not_owner(1090, A);
    stock(SIM_EV_STOCK_FINAL, 1100, 9);
}

static void tell(int nodes)
{
    sim_run_info info = { "v6-reentrant-watchdog", "partition", "cut", "", 300, 1, 2, nodes };
    FILE *f = capture();

    sim_report_run(f, &info, s.ev, s.n, 0, &v);
    fclose(f);
}

/* The rule under "time (ms)": the first line that starts with the
 * label's blanks and then the rule's own first column. */
static const char *rule_line(void)
{
    const char *at = strstr(printed, "time (ms)");

    ck_assert_msg(at != NULL && (at = strchr(at, '\n')) != NULL, "no time axis:\n%s", printed);
    return at + 1;
}

/* Every symbol on the rule but its own '-' and '+' is in the legend,
 * once, as "<symbol> <what it means>"; no letter is drawn there. */
static void assert_rule_explained(void)
{
    const char *rule = rule_line(), *legend = strstr(printed, "\nlegend ");
    size_t len = strcspn(rule, "\n");

    ck_assert_msg(legend != NULL, "no legend:\n%s", printed);
    for (size_t k = 12; k < len; k++) {
        char c = rule[k], item[4] = { ' ', c, ' ', '\0' };
        const char *at;

        if (c == '-' || c == '+' || c == ' ')
            continue;
        ck_assert_msg(!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')),
                      "the rule draws a letter '%c': letters name clients", c);
        at = strstr(legend, item);
        ck_assert_msg(at != NULL, "the rule draws '%c', and the legend does not say what "
                      "it means:\n%s", c, printed);
        ck_assert_msg(strstr(at + 1, item) == NULL, "the legend explains '%c' twice:\n%s",
                      c, printed);
    }
}

/* ---- the checker and the lanes ---------------------------------------------- */

/* A cut changes nothing the checker judges: the same verdict without it. */
START_TEST(test_fault_story_cut_is_no_operation)
{
    unsigned with, without;
    size_t kept = 0;

    cut_story(1);
    with = check();
    for (size_t i = 0; i < s.n; i++)
        if (s.ev[i].type != SIM_EV_CUT_BEGIN && s.ev[i].type != SIM_EV_CUT_END)
            s.ev[kept++] = s.ev[i];
    s.n = kept;
    without = check();
    ck_assert_msg(with == without && with == (SIM_ANOM_ME | SIM_ANOM_LU), "with the cut the "
                  "checker found %s, without it %s; expected ME LU both times",
                  set_text(with), set_text(without));
    begin();
    record(10, SIM_NO_CLIENT, 0, SIM_EV_CUT_BEGIN, 0, "black hole");
    gets(20, A);
    ck_assert_msg(check() & SIM_ANOM_UNJUDGED, "a cut that names no client was judged");
}
END_TEST

/* A cut of five nodes, an event each, is one stretch of the client's
 * lane with all five nodes; one still open at the end closes there. */
START_TEST(test_fault_story_lanes_read_a_cut_once)
{
    sim_lanes l;
    size_t cuts = 0;

    cut_story(5);
    check();
    ck_assert_int_eq(sim_lanes_read(&l, s.ev, s.n, 2, s.ev[s.n - 1].t_ns, &v), 0);
    for (size_t i = 0; i < l.n; i++)
        if (l.st[i].kind == SIM_LANE_CUT) {
            cuts++;
            ck_assert_msg(l.st[i].client == A && l.st[i].from == 30 * MS &&
                          l.st[i].to == 930 * MS && l.st[i].read == 0x1f,
                          "the cut reads as client %d, %lld to %lld ms, nodes 0x%llx; "
                          "expected A, 30 to 930 ms, nodes 0x1f", l.st[i].client,
                          (long long)(l.st[i].from / MS), (long long)(l.st[i].to / MS),
                          (long long)l.st[i].read);
        }
    ck_assert_msg(cuts == 1, "the cut of five nodes reads as %zu stretches", cuts);
    sim_lanes_free(&l);
    begin();
    takes(0, A, 1);
    cut_off(50, A, 0);
    sells(400, A, 9);
    check();
    ck_assert_int_eq(sim_lanes_read(&l, s.ev, s.n, 1, 500 * MS, &v), 0);
    cuts = 0;
    for (size_t i = 0; i < l.n; i++)
        cuts += l.st[i].kind == SIM_LANE_CUT && l.st[i].to == 500 * MS;
    ck_assert_msg(cuts == 1, "a cut still open at the run's end does not end there");
    sim_lanes_free(&l);
}
END_TEST

/* ---- the story ---------------------------------------------------------------- */

START_TEST(test_fault_story_tells_the_cut)
{
    cut_story(1);
    check();
    tell(1);
    assert_said("partition: A was cut off from the lock's servers at 30 ms, for 900 ms; "
                "its key expired at 300 ms while A was inside");
    /* Told once: the nodes of a lock of several are one cut. */
    cut_story(5);
    check();
    tell(5);
    assert_said("partition: A was cut off from the lock's servers at 30 ms, for 900 ms; "
                "its keys expired at 300 ms while A was inside");
    ck_assert_msg(strstr(strstr(printed, "  partition:") + 1, "  partition:") == NULL,
                  "a cut of five nodes is told more than once:\n%s", printed);
}
END_TEST

/* A key that outlives the cut, and a cut the run's end cut short. */
START_TEST(test_fault_story_tells_what_the_key_did)
{
    begin();
    takes(0, A, 1);
    cut_off(30, A, 0);
    heals(130, A, 0);
    key(290, "expired");
    cut_off(400, A, 0);
    sells(500, A, 9);
    check();
    tell(1);
    assert_said("A was cut off from the lock's servers at 30 ms, for 100 ms; its key outlived "
                "the cut");
    assert_said("A was cut off from the lock's servers at 400 ms, until the end of the run");
}
END_TEST

START_TEST(test_fault_story_tells_the_jump)
{
    begin();
    takes(0, A, 1);
    clock_jumps(40, 0, 600);
    key(41, "expired");
    takes(70, B, 1);
    check();
    tell(1);
    assert_said("server: the server's clock jumped 600 ms forward at 40 ms; A's key expired "
                "at 41 ms");
    begin();
    takes(0, A, 0);
    clock_jumps(40, 0, 600);
    check();
    tell(1);
    assert_said("server: the server's clock jumped 600 ms forward at 40 ms; A's key has no TTL and "
                "stayed");
}
END_TEST

/* An ensemble's jump moves every server's clock; its nodes have no TTL
 * and go with their sessions: the sentence says what A's node did. */
START_TEST(test_fault_story_tells_an_ensembles_jump)
{
    begin();
    wants(0, A);
    key(1, "create");
    gets(2, A);
    record(40, SIM_NO_CLIENT, 0, SIM_EV_CLOCK_JUMP, 600, "every server");
    check();
    tell(1);
    assert_said("server: every server's clock jumped 600 ms forward at 40 ms; A's node and its "
                "session outlived it: ZooKeeper times sessions by the monotonic clock");
    begin();
    wants(0, A);
    key(1, "create");
    gets(2, A);
    record(40, SIM_NO_CLIENT, 0, SIM_EV_CLOCK_JUMP, 600, "every server");
    key(340, "expired");
    check();
    tell(1);
    assert_said("server: every server's clock jumped 600 ms forward at 40 ms; A's node went "
                "with its session at 340 ms");
}
END_TEST

/* ---- the drawings ------------------------------------------------------------- */

START_TEST(test_fault_story_terminal_draws_both_on_the_axis)
{
    const char *rule;

    cut_story(1);
    s.n--;                     /* the jump before the final stock */
    clock_jumps(1095, 0, 600);
    stock(SIM_EV_STOCK_FINAL, 1100, 9);
    check();
    tell(1);
    rule = rule_line();
    /* 37.5 ms a column: the cut from column 0 (30 ms) to 24 (930 ms),
     * the rule broken between them but for its ticks, the jump at 29. */
    ck_assert_msg(strncmp(rule, "            [       +       +       ]----}-", 42) == 0,
                  "the rule does not show the cut and the jump:\n%s", printed);
    assert_rule_explained();
    assert_said("time: [ ] a client cut off from the lock's servers");
    assert_said("} a server's clock jumped forward");
}
END_TEST

START_TEST(test_fault_story_page_marks_both)
{
    sim_run_info info = { "v8-redlock", "clock-jump", "cut and jump", "", 300, 1, 2, 5 };
    char tmp[] = "/tmp/lockstep-faults.XXXXXX", path[512], why[256];
    sim_html_run run;
    FILE *f;
    char *page = NULL;
    size_t len = 0;

    ck_assert_msg(mkdtemp(tmp) != NULL, "cannot make a temp folder");
    cut_story(5);
    s.n--;                     /* the jump before the final stock */
    clock_jumps(1095, 2, 600);
    stock(SIM_EV_STOCK_FINAL, 1100, 9);
    check();
    run = (sim_html_run){ { info.scenario, 8, v.anomalies, v.anomalies, 0, &v, 0 },
                          &info, s.ev, s.n };
    ck_assert_msg(sim_html_run_page(tmp, &run, path, sizeof(path), why, sizeof(why)) == 0,
                  "the run's page was not written: %s", why);
    ck_assert((f = fopen(path, "r")) != NULL);
    ck_assert(getdelim(&page, &len, '\0', f) > 0);
    fclose(f);
    ck_assert_msg(strstr(page, ">A cut off</text>") != NULL, "no mark of the cut on the "
                  "time axis");
    ck_assert_msg(strstr(page, ">node 2&#39;s clock +600 ms</text>") != NULL,
                  "no mark of the jump on the time axis");
    ck_assert_msg(strstr(page, "<g class=\"cut\"><title>A is cut off from the lock&#39;s "
                         "servers: 30 to 930 ms") != NULL, "A's lane draws no cut");
    ck_assert_msg(strstr(page, "cut off from the lock&#39;s servers, or some of them") != NULL,
                  "the legend does not explain the cut");
    unlink(path);
    path[strlen(path) - 4] = '\0';
    strcat(path, "jsonl");
    unlink(path);
    rmdir(tmp);
    free(page);
}
END_TEST

Suite *fault_story_suite(void)
{
    const TTest *tests[] = {
        test_fault_story_cut_is_no_operation, test_fault_story_lanes_read_a_cut_once,
        test_fault_story_tells_the_cut, test_fault_story_tells_what_the_key_did,
        test_fault_story_tells_the_jump, test_fault_story_tells_an_ensembles_jump,
        test_fault_story_terminal_draws_both_on_the_axis, test_fault_story_page_marks_both,
    };

    return ONE_TCASE_SUITE("fault story", "cut and clock jump", tests, NULL);
}
