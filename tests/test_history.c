/* test_history: the shared journal, the history's order and its file.
 * No Redis: writers are forked processes, files are written by hand. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "story.h"
#include "tcases.h"

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

/* A reason too long for an event keeps what fits and says it was cut. */
START_TEST(test_history_add_cuts_with_dots)
{
    char err[256] = "", reason[2 * SIM_DETAIL_LEN];
    const char *path = temp_file();
    sim_history *h = sim_history_create(path, err, sizeof(err));
    sim_event *ev;
    size_t n;

    ck_assert_msg(h != NULL, "creating the history failed: %s", err);
    memset(reason, 'x', sizeof(reason) - 1);
    reason[sizeof(reason) - 1] = '\0';
    sim_history_add(h, 0, 0, SIM_EV_RELEASE_ERROR, 0, reason);
    sim_history_add(h, 0, 0, SIM_EV_RELEASE_ERROR, 0, "short");
    ev = sim_history_snapshot(h, &n);
    ck_assert_msg(ev != NULL && n == 2, "the history holds %zu events; expected 2", n);
    ck_assert_msg(strlen(ev[0].detail) == SIM_DETAIL_LEN - 1 &&
                  strcmp(ev[0].detail + SIM_DETAIL_LEN - 4, "...") == 0,
                  "a %zu-byte reason was kept as \"%.20s...%s\"; expected %d bytes "
                  "ending in \"...\"", strlen(reason), ev[0].detail,
                  ev[0].detail + SIM_DETAIL_LEN - 8, SIM_DETAIL_LEN - 1);
    ck_assert_msg(strcmp(ev[1].detail, "short") == 0,
                  "a short reason was kept as \"%s\"", ev[1].detail);
    free(ev);
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
    sim_run_info run = { "v8-redlock", "slow-holder",
                         "the holder's \"critical\" section outlives its lease",
                         "", 300, 7, 3, 5 }, back;
    char err[256] = "", first[64], second[64];
    sim_event *ev;
    size_t n;
    char *a, *b;

    begin();
    takes(0, A, 1);
    s.ev[s.n - 4].lease_ms = 3600;   /* A's own lease, on its invoke */
    record(5, A, 1, SIM_EV_ACQUIRE_ERROR, -3, "tab\there \\ \"quoted\"\n");
    s.ev[s.n++] = (sim_event){ .t_ns = 5500000, .client = SIM_NO_CLIENT, .node = 4,
                               .type = SIM_EV_RESTART, .value = 6379, .detail = "" };
    stock(SIM_EV_STOCK_INITIAL, 6, 100);
    reads(7, A, 100, 4);
    refused(8, A, 4, 5);
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
    ck_assert_msg(strstr(a, "\"type\":\"stock-refused\",\"node\":0,\"value\":5,\"token\":4,") != NULL,
                  "the refused write was not saved with its fence and token:\n%s", a);
    ck_assert_msg(strcmp(a, b) == 0, "saving a loaded history gave another "
                  "file:\n%s\nthen\n%s", a, b);
    free(a);
    free(b);
    free(ev);
    unlink(first);
    unlink(second);
}
END_TEST

/* Writes text to a fresh temp file; returns its path. */
static const char *write_text(const char *text)
{
    const char *path = temp_file();
    FILE *f = fopen(path, "w");

    ck_assert_msg(f != NULL, "could not write %s", path);
    fputs(text, f);
    fclose(f);
    return path;
}

static sim_event *load_path(const char *path, size_t *n, char *err,
                            size_t len)
{
    sim_event *ev;

    err[0] = '\0';
    ev = sim_history_load(path, n, err, len);
    ck_assert_msg((ev == NULL) == (err[0] != '\0'),
                  "load returned %p with the error \"%s\"", (void *)ev, err);
    return ev;
}

/* Loads text as a history file; returns the error, "" when it loaded. */
static const char *load_text(const char *text, char *err, size_t len)
{
    size_t n;

    free(load_path(write_text(text), &n, err, len));
    unlink(tmp_path);
    return err;
}

/* Loads one line that must hold one event, into e. */
static void load_one(const char *text, sim_event *e)
{
    char err[256];
    size_t n = 0;
    sim_event *ev = load_path(write_text(text), &n, err, sizeof(err));

    unlink(tmp_path);
    ck_assert_msg(ev != NULL && n == 1, "the line %s loaded %zu events (%s)",
                  text, n, err);
    *e = ev[0];
    free(ev);
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
    assert_bad(GOOD "{\"client\":0,\"type\":\"key\"}\n", 2, "no \"t_ns\"");
    assert_bad(GOOD "not json\n", 2, "not valid JSON");
    assert_bad(GOOD "{\"t_ns\":1,\"client\":0,\"type\":\"key\"\n", 2,
               "not valid JSON");
    assert_bad(GOOD "[1, 2]\n", 2, "a JSON object");
    assert_bad(GOOD "{\"lockstep\":\"run\"}\n", 2, "first line");
    assert_bad("{\"t_ns\":\"soon\",\"client\":0,\"type\":\"key\"}\n", 1,
               "integer");
    assert_bad("{\"t_ns\":1.5,\"client\":0,\"type\":\"key\"}\n", 1,
               "integer");
    assert_bad("{\"t_ns\":9007199254740993,\"client\":0,\"type\":\"key\"}\n", 1,
               "integer");
    assert_bad("{\"t_ns\":1,\"client\":4294967296,\"type\":\"key\"}\n", 1,
               "integer");
    assert_bad("{\"t_ns\":1,\"client\":0,\"type\":7}\n", 1, "string");
}
END_TEST

/* Any valid JSON loads: nested values in keys it does not know, long
 * keys, escapes; a duplicate key or a NUL does not. */
START_TEST(test_history_any_valid_json)
{
    char err[256];
    sim_event e;

    ck_assert_str_eq(load_text("{\"t_ns\":1,\"client\":0,\"type\":\"key\","
                               "\"detail\":\"del\",\"extra\":{\"a\":[1,{\"b\":null}]},"
                               "\"a_key_longer_than_thirty_one_bytes\":true}\n",
                               err, sizeof(err)), "");
    load_one("{\"type\":\"key\",\"detail\":\"caf\\u00e9 \\ud83d\\ude00\","
             "\"client\":-1,\"t_ns\":1e3}\n", &e);
    ck_assert_msg(strcmp(e.detail, "caf\xc3\xa9 \xf0\x9f\x98\x80") == 0 &&
                  e.t_ns == 1000, "escapes and 1e3 read as \"%s\" and %lld",
                  e.detail, (long long)e.t_ns);
    assert_bad(GOOD "{\"t_ns\":1,\"client\":1,\"type\":\"acquire-ok\","
               "\"client\":0}\n", 2, "\"client\" appears twice");
    assert_bad(GOOD "{\"t_ns\":1,\"client\":1,\"type\":\"key\",\"note\":1,"
               "\"note\":2}\n", 2, "\"note\" appears twice");
    assert_bad("{\"t_ns\":1,\"client\":0,\"type\":\"key\",\"detail\":"
               "\"a\\u0000b\"}\n", 1, "\\u0000");
    ck_assert_str_eq(load_text("{\"t_ns\":1,\"client\":0,\"type\":\"key\","
                               "\"detail\":\"a\\\\u0000b\"}\n", err,
                               sizeof(err)), "");
}
END_TEST

/* A detail too long for an event is cut at a character, not in one. */
START_TEST(test_history_long_detail)
{
    char text[4 * SIM_DETAIL_LEN + 128], detail[2 * SIM_DETAIL_LEN + 16] = "I/O error:";
    sim_event e;

    /* Two-byte characters from an even offset: the limit falls in one. */
    for (int i = 0; i < SIM_DETAIL_LEN; i++)
        strcat(detail, "\xc3\xa9");
    snprintf(text, sizeof(text), "{\"t_ns\":1,\"client\":0,\"type\":"
             "\"acquire-error\",\"detail\":\"%s\"}\n", detail);
    load_one(text, &e);
    ck_assert_msg(strlen(e.detail) == SIM_DETAIL_LEN - 2 &&
                  (unsigned char)e.detail[strlen(e.detail) - 1] == 0xa9,
                  "the detail was cut to \"%s\" (%zu bytes); expected %d "
                  "bytes ending on a whole character", e.detail,
                  strlen(e.detail), SIM_DETAIL_LEN - 2);
}
END_TEST

/* The header says which format wrote the file. */
START_TEST(test_history_versions)
{
    char err[256];

    ck_assert_str_eq(load_text("{\"lockstep\":\"run\",\"stage\":\"v1-setnx\"}\n"
                               GOOD, err, sizeof(err)), "");
    ck_assert_str_eq(load_text("{\"lockstep\":\"run\",\"version\":2}\n" GOOD,
                               err, sizeof(err)), "");
    ck_assert_str_eq(load_text("{\"lockstep\":\"run\",\"version\":3,\"nodes\":5}\n"
                               GOOD, err, sizeof(err)), "");
    assert_bad("{\"lockstep\":\"run\",\"version\":4}\n" GOOD, 1,
               "format version 4");
    assert_bad("{\"lockstep\":\"run\",\"version\":3,\"nodes\":0}\n" GOOD, 1,
               "\"nodes\" needs an integer");
    assert_bad("{\"lockstep\":\"run\",\"version\":0}\n" GOOD, 1, "integer");
    assert_bad(GOOD "{\"t_ns\":2,\"client\":-1,\"type\":\"key\",\"node\":-1}\n", 2,
               "\"node\" needs an integer");
}
END_TEST

/* An event of an earlier format is node 0's; one of format 3 says which. */
START_TEST(test_history_nodes)
{
    char err[256];
    sim_event *ev;
    size_t n;

    ev = load_path(write_text(GOOD "{\"t_ns\":2,\"client\":-1,\"type\":\"key\","
                              "\"node\":3,\"detail\":\"set\"}\n"), &n, err, sizeof(err));
    ck_assert_msg(ev != NULL && n == 2, "two events loaded as %zu (%s)", n, err);
    ck_assert_msg(ev[0].node == 0 && ev[1].node == 3, "the events' nodes came back as "
                  "%d and %d; expected 0 (none given) and 3", ev[0].node, ev[1].node);
    free(ev);
    unlink(tmp_path);
}
END_TEST

START_TEST(test_history_empty)
{
    char err[256];
    sim_event *ev;
    size_t n = 7;

    load_text("", err, sizeof(err));
    ck_assert_msg(strstr(err, "empty") != NULL && strchr(err, '\n') == NULL,
                  "an empty file gave \"%s\"; expected one line saying it is "
                  "empty", err);
    load_text("\n  \n", err, sizeof(err));
    ck_assert_msg(strstr(err, "empty") != NULL, "a file of blank lines gave "
                  "\"%s\"; expected it to be called empty", err);
    ev = load_path(write_text("{\"lockstep\":\"run\",\"version\":2}\n"), &n,
                   err, sizeof(err));
    ck_assert_msg(ev != NULL && n == 0, "a header alone loaded %zu events "
                  "(%s); expected 0, for the checker to refuse", n, err);
    free(ev);
    unlink(tmp_path);
}
END_TEST

/* The history's order does not depend on the order of the lines. */
START_TEST(test_history_order_ignores_lines)
{
    sim_event shuffled[STORY_MAX];

    begin();
    takes(0, A, 1);
    key(300, "expired");
    wants(310, B);
    key(311, "set");
    unlocks(400, A);          /* a tie: B's ok in the same nanosecond */
    gets(400, B);
    key(401, "hincrby");      /* and three key events in one */
    key(401, "del");
    key(401, "expire");
    ck_assert_int_eq(sim_history_sort(s.ev, s.n), 0);
    for (unsigned seed = 1; seed <= 20; seed++) {
        memcpy(shuffled, s.ev, s.n * sizeof(s.ev[0]));
        for (size_t i = s.n - 1; i > 0; i--) {
            size_t j = (size_t)rand_r(&seed) % (i + 1);
            sim_event t = shuffled[i];

            shuffled[i] = shuffled[j];
            shuffled[j] = t;
        }
        ck_assert_int_eq(sim_history_sort(shuffled, s.n), 0);
        ck_assert_msg(memcmp(shuffled, s.ev, s.n * sizeof(s.ev[0])) == 0,
                      "shuffle %u sorted to another order", seed);
    }
    /* The rule: a thread's steps in its order, key events after client
     * events, and a key's write, then its TTL, then its end. */
    ck_assert_msg(s.ev[s.n - 3].type == SIM_EV_KEY &&
                  strcmp(s.ev[s.n - 3].detail, "hincrby") == 0 &&
                  strcmp(s.ev[s.n - 2].detail, "expire") == 0 &&
                  strcmp(s.ev[s.n - 1].detail, "del") == 0,
                  "key events of one nanosecond are not write, TTL, end");
}
END_TEST

/* v11's node events carry the node's sequence number as their token, as
 * the observer writes them, and keep it through a file; in one
 * nanosecond a queue's event comes after the holder's node's write and
 * end, and before a node's death, whatever order they were written in. */
START_TEST(test_history_queue_events)
{
    char err[256] = "";
    const char *path = temp_file();
    sim_history *h = sim_history_create(path, err, sizeof(err));
    const char *want[] = { "first", "delete", "left", "queued" };
    sim_event *ev, *back;
    size_t n, m;

    ck_assert_msg(h != NULL, "creating the history failed: %s", err);
    sim_history_add_node_token_at(h, 5000, 0, SIM_EV_NODE_DOWN, 2181, 0, "");
    sim_history_add_node_token_at(h, 5000, 0, SIM_EV_KEY, 2181, 9, "queued");
    sim_history_add_node_token_at(h, 5000, 0, SIM_EV_KEY, 2181, 4, "left");
    sim_history_add_node_token_at(h, 5000, 0, SIM_EV_KEY, 2181, 2, "delete");
    sim_history_add_node_token_at(h, 5000, 0, SIM_EV_KEY, 2181, 3, "first");
    ev = sim_history_snapshot(h, &n);
    sim_history_close(h);
    ck_assert_msg(ev != NULL && n == 5, "the snapshot holds %zu events; 5 were added", n);
    for (size_t i = 0; i < 4; i++)
        ck_assert_msg(ev[i].type == SIM_EV_KEY && strcmp(ev[i].detail, want[i]) == 0,
                      "event %zu of one nanosecond is \"%s\"; expected \"%s\"", i,
                      ev[i].detail, want[i]);
    ck_assert_msg(ev[4].type == SIM_EV_NODE_DOWN, "a node's death does not come after "
                  "the key's and the queue's events of its nanosecond");
    ck_assert_int_eq(sim_key_event_kind("queued"), SIM_KEY_QUEUE);
    ck_assert_int_eq(sim_key_event_kind("left"), SIM_KEY_QUEUE);
    ck_assert_int_eq(sim_key_event_kind("gone"), SIM_KEY_QUEUE);
    ck_assert_msg(sim_history_save(path, ev, n, 0, err, sizeof(err)) == 0, "%s", err);
    back = sim_history_load(path, &m, err, sizeof(err));
    ck_assert_msg(back != NULL && m == n, "reading the file back: %s", err);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(back[i].token == ev[i].token, "\"%s\" came back with token %lld; "
                      "it was saved with %lld", back[i].detail, (long long)back[i].token,
                      (long long)ev[i].token);
    free(ev);
    free(back);
    unlink(path);
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
    const tcase_row tcases[] = {
        TCASE_ROW("shared journal",
                  test_history_writers_in_many_processes, test_history_full,
                  test_history_add_cuts_with_dots, test_history_order_ignores_lines,
                  test_history_queue_events),
        TCASE_ROW("file",
                  test_history_round_trip, test_history_malformed_line,
                  test_history_any_valid_json, test_history_long_detail, test_history_versions,
                  test_history_nodes, test_history_empty, test_history_type_names),
    };

    return TABLE_SUITE("history", tcases, add_tcase);
}
