/* test_mntr: how the bench reads a ZooKeeper server's counters (mntr.h),
 * on a real answer and on answers changed line by line. No server: the
 * real one is tests/mntr-3.8.0.txt, what a follower of the simulator's
 * ensemble answered after three sessions made and deleted a node three
 * times, two of them watching it each time (six notifications). */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mntr.h"
#include "tcases.h"

#define ANSWER SRCDIR "/tests/mntr-3.8.0.txt"
#define ANSWER_MAX 65536

static char answer[ANSWER_MAX];
static char why[256];

/* The real answer, whole. */
static void load(void)
{
    FILE *f = fopen(ANSWER, "r");
    size_t n;

    ck_assert_msg(f != NULL, "cannot open %s", ANSWER);
    n = fread(answer, 1, sizeof(answer) - 1, f);
    fclose(f);
    ck_assert_msg(n > 0 && n < sizeof(answer) - 1, "%s: %zu bytes; expected a whole answer",
                  ANSWER, n);
    answer[n] = '\0';
}

/* The answer with the line of key replaced by line ("" drops it). */
static void replace_line(const char *key, const char *line)
{
    char *at = strstr(answer, key), *end;

    ck_assert_msg(at != NULL && (at == answer || at[-1] == '\n'), "%s: no line %s", ANSWER, key);
    end = strchr(at, '\n');
    ck_assert_msg(end != NULL, "%s: the line %s does not end", ANSWER, key);
    memmove(at + strlen(line), end + 1, strlen(end + 1) + 1);
    memcpy(at, line, strlen(line));
}

START_TEST(test_mntr_real_answer)
{
    sim_mntr m = { -1, -1, -1, 7 };
    char version[64];

    load();
    ck_assert_msg(sim_mntr_parse(answer, &m, why, sizeof(why)) == 0,
                  "the real answer did not parse: %s", why);
    ck_assert_msg(m.packets == 26 && m.sessions == 3,
                  "packets %lld and sessions %lld; the answer says zk_packets_received 26 and "
                  "zk_connection_request_count 3", m.packets, m.sessions);
    ck_assert_msg(m.watches == 6, "watches %lld; expected the sum of the four "
                  "zk_sum_node_*_watch_count, 6 (not their avg, 2.0, nor cnt, 3)", m.watches);
    ck_assert_msg(m.asked == 7, "parsing changed what the asker counted (%lld)", m.asked);
    ck_assert_msg(sim_mntr_value(answer, "zk_version", version, sizeof(version)) == 0 &&
                  strncmp(version, "3.8.0-", 6) == 0,
                  "zk_version read as \"%s\"; expected the line's whole value", version);
}
END_TEST

START_TEST(test_mntr_every_watch_kind_counts)
{
    sim_mntr m;

    load();
    replace_line("zk_sum_node_created_watch_count", "zk_sum_node_created_watch_count\t10\n");
    replace_line("zk_sum_node_children_watch_count", "zk_sum_node_children_watch_count\t100\n");
    replace_line("zk_sum_node_changed_watch_count", "zk_sum_node_changed_watch_count\t1000\n");
    ck_assert_msg(sim_mntr_parse(answer, &m, why, sizeof(why)) == 0, "%s", why);
    ck_assert_msg(m.watches == 1116, "created 10, deleted 6, children 100, changed 1000 "
                  "gave %lld watches; expected 1116", m.watches);
}
END_TEST

START_TEST(test_mntr_key_at_line_start_only)
{
    char value[32];
    sim_mntr m;

    /* A longer name that starts with the key, and the key inside a value:
     * neither is the key's line. */
    const char *text = "zk_packets_received_total\t999\n"
                       "zk_note\tzk_packets_received\t888\n"
                       "zk_packets_received\t5\r\n";

    ck_assert_msg(sim_mntr_value(text, "zk_packets_received", value, sizeof(value)) == 0 &&
                  strcmp(value, "5") == 0,
                  "zk_packets_received read as \"%s\"; expected 5 (its own line, no CR)", value);
    ck_assert_msg(sim_mntr_value(text, "zk_packets", value, sizeof(value)) != 0,
                  "zk_packets, a prefix of a name, was found as \"%s\"", value);
    load();
    replace_line("zk_packets_received", "zk_packets_received_total\t999\n"
                                        "zk_packets_received\t41\n");
    ck_assert_msg(sim_mntr_parse(answer, &m, why, sizeof(why)) == 0 && m.packets == 41,
                  "a longer name before the key: packets %lld; expected 41", m.packets);
}
END_TEST

START_TEST(test_mntr_missing_metric)
{
    sim_mntr m;

    load();
    replace_line("zk_sum_node_deleted_watch_count", "");
    ck_assert_msg(sim_mntr_parse(answer, &m, why, sizeof(why)) == -1,
                  "an answer without zk_sum_node_deleted_watch_count parsed");
    ck_assert_msg(strstr(why, "zk_sum_node_deleted_watch_count") != NULL &&
                  strstr(why, "3.6") != NULL,
                  "the error \"%s\" does not name the metric and the version that has it", why);
}
END_TEST

START_TEST(test_mntr_not_a_count)
{
    static const char *const bad[] = { "abc", "-3", "12x", "" };
    char line[64];
    sim_mntr m;
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        load();
        snprintf(line, sizeof(line), "zk_packets_received\t%s\n", bad[i]);
        replace_line("zk_packets_received", line);
        ck_assert_msg(sim_mntr_parse(answer, &m, why, sizeof(why)) == -1,
                      "zk_packets_received \"%s\" parsed as %lld", bad[i], m.packets);
        ck_assert_msg(strstr(why, "not a count") != NULL, "the error for \"%s\" is \"%s\"",
                      bad[i], why);
    }
}
END_TEST

/* ---- between two readings ------------------------------------------------------------ */

START_TEST(test_mntr_delta_leaves_out_ours_and_sessions)
{
    /* Three servers asked once more each (3 words); two sessions opened
     * and closed (4 packets); 50 requests. */
    sim_mntr before = { 1000, 10, 40, 12 }, after = { 1000 + 3 + 4 + 50, 12, 47, 15 };
    sim_mntr_delta d;

    ck_assert_msg(sim_mntr_delta_of(&before, &after, &d, why, sizeof(why)) == 0, "%s", why);
    ck_assert_msg(d.requests == 50 && d.sessions == 2 && d.watches == 7,
                  "requests %lld, sessions %lld, watches %lld; expected 50, 2 and 7",
                  d.requests, d.sessions, d.watches);
}
END_TEST

START_TEST(test_mntr_sum_over_servers)
{
    sim_mntr sum = { 0, 0, 0, 0 }, one;
    int i;

    for (i = 0; i < 3; i++) {
        load();
        ck_assert_msg(sim_mntr_parse(answer, &one, why, sizeof(why)) == 0, "%s", why);
        one.asked = 0;
        sim_mntr_add(&sum, &one);
    }
    ck_assert_msg(sum.packets == 78 && sum.sessions == 9 && sum.watches == 18,
                  "three servers of 26 packets, 3 sessions and 6 watches summed to %lld, %lld "
                  "and %lld", sum.packets, sum.sessions, sum.watches);
}
END_TEST

START_TEST(test_mntr_delta_refuses_a_restart)
{
    sim_mntr before = { 1000, 10, 40, 12 }, restarted = { 20, 1, 0, 15 };
    sim_mntr after = { 1002, 12, 40, 15 }; /* 2 packets: not even our 3 words */
    sim_mntr_delta d;

    ck_assert_msg(sim_mntr_delta_of(&before, &restarted, &d, why, sizeof(why)) == -1 &&
                  strstr(why, "restarted") != NULL,
                  "counters that went back gave no error about a restart: \"%s\"", why);
    ck_assert_msg(sim_mntr_delta_of(&before, &after, &d, why, sizeof(why)) == -1,
                  "2 packets held 3 asked words and 2 sessions: %lld requests", d.requests);
}
END_TEST

Suite *mntr_suite(void)
{
    const tcase_row tcases[] = {
        TCASE_ROW("parse",
                  test_mntr_real_answer, test_mntr_every_watch_kind_counts,
                  test_mntr_key_at_line_start_only, test_mntr_missing_metric,
                  test_mntr_not_a_count),
        TCASE_ROW("delta",
                  test_mntr_delta_leaves_out_ours_and_sessions, test_mntr_sum_over_servers,
                  test_mntr_delta_refuses_a_restart),
    };

    return TABLE_SUITE("mntr", tcases, add_tcase);
}
