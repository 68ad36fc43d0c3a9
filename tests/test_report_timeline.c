/* test_report_timeline: a run drawn as a timeline, on hand-written
 * histories (story.h). No Redis. A lane per client, one for the lock key,
 * a ZooKeeper lock's queue under it (tests/histories/zk-queue.jsonl),
 * and one for the anomalies, marked wherever two held the lock at once; a
 * key without a TTL, a failover, a pause; every symbol drawn is in the
 * legend, once; eight columns a lease, the scale halving only for a run too
 * long for three rows; no line wider than 72 columns. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "report_helpers.h"
#include "tcases.h"

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
    failover_loses_the_key(C);
    gives_back(590, A);
    draw_timeline(3);
    assert_printed("\nlock key    AAAAAAAAAA^");
    assert_printed("^ failover: the new primary has no key");
    assert_narrow(72);
}
END_TEST

/* Every symbol in a lane of the last timeline printed is in its legend,
 * as one item: "<symbol> <what it means>", and only once; letters only
 * in the key lane and the queue's, where they name clients. The items
 * end where the scale's sentence begins, which names the axis's '+'. */
static void assert_legend_explains(void)
{
    const char *start = strstr(printed, "\nlegend "), *scale;
    char *legend;

    ck_assert_msg(start != NULL, "the timeline has no legend:\n%s", printed);
    scale = strstr(start, "one column is");
    legend = strndup(start, scale != NULL ? (size_t)(scale - start) : strlen(start));
    ck_assert_msg(legend != NULL, "out of memory");
    for (const char *line = printed; line < start; ) {
        size_t len = strcspn(line, "\n");
        int key = strncmp(line, "lock key", 8) == 0 || strncmp(line, "queue ", 6) == 0;
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
    free(legend);
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
    promotes(100);
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

/* v11's queue, a row a place under the lock key: dead B's node first
 * until its turn, C's behind it, D's third ('?': it gave up, and never
 * had a turn to name it by), '$' while E waits too. */
START_TEST(test_report_queue_rows)
{
    char why[512];
    sim_run_info run;
    size_t n;
    sim_event *ev = sim_history_load_run("tests/histories/zk-queue.jsonl", &run, &n, why,
                                         sizeof(why));
    FILE *out;

    ck_assert_msg(ev != NULL, "%s", why);
    begin();
    sim_check_run(&run, ev, n, &v);
    out = capture();
    sim_report_run(out, &run, ev, n, 0, &v);
    fclose(out);
    free(ev);
    assert_printed("\nlock key    aaaaaaaaaaaabbbbccc\n"
                   "queue 1      bbbbbbbbbbbbcccc\n"
                   "queue 2       ccccccccccc\n"
                   "queue 3       ?$$$$$$??\n"
                   "legend      ");
    assert_printed("\n            queue:    a-z that client's node waits; queue 1 holds next\n"
                   "                      ? a waiting node whose client cannot be named\n"
                   "                      $ more than 3 wait: the rest are not drawn\n");
    assert_legend_explains();
    assert_narrow(72);
}
END_TEST

/* A history without a queue draws no queue row, and a queue that never
 * holds two draws one row. */
START_TEST(test_report_queue_rows_only_as_many_as_wait)
{
    late_delete_story();
    draw_timeline_at(3, 300);
    ck_assert_msg(strstr(printed, "\nqueue ") == NULL && strstr(printed, "queue:") == NULL,
                  "a Redis lock's timeline draws a queue:\n%s", printed);
    begin();
    takes(0, A, 0);
    wants(10, B);
    record(11, SIM_NO_CLIENT, 0, SIM_EV_KEY, 0, "queued");
    s.ev[s.n - 1].token = 1;
    gives_back(300, A);
    record(303, SIM_NO_CLIENT, 0, SIM_EV_KEY, 0, "first");
    s.ev[s.n - 1].token = 1;
    gets(304, B);
    draw_timeline_at(2, 300);
    assert_printed("\nqueue 1     bbbbbbbbb\n");
    ck_assert_msg(strstr(printed, "\nqueue 2") == NULL, "one waiter drew two queue rows:\n%s",
                  printed);
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

void report_timeline_tests(TCase *run)
{
    const TTest *tests[] = {
        test_report_run_and_timeline, test_report_marks_every_overlap,
        test_report_key_without_ttl, test_report_failover_mark,
        test_report_legend_explains_every_symbol, test_report_columns_per_lease,
        test_report_queue_rows, test_report_queue_rows_only_as_many_as_wait,
    };

    ADD_TESTS(run, tests);
}
