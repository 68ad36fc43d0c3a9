/* test_nodes: the checker and the report on a lock of several nodes
 * (v8's five), on hand-written histories (story.h). No Redis.
 *
 * Each node's keys are read apart. What a lock of several nodes adds: an
 * acquire's try that wins too few nodes makes keys and deletes them again
 * inside its own acquire; an acquire-ok won some majority the history
 * cannot name; a node can die or restart empty and lose its key. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "story.h"
#include "tcases.h"

#define NODES 5
#define ME(k) (&episode(SIM_ANOM_ME, k)->me)
#define MD(k) (&episode(SIM_ANOM_MD, k)->md)

/* A's acquire at ms: its SET lands on each node in on[] (NODES flags),
 * with a TTL, and it returns OK once the observer reported them all. */
static void takes_nodes(long ms, int c, const int *on)
{
    wants(ms, c);
    for (int k = 0; k < NODES; k++)
        if (on[k]) {
            key_on(ms + 1, k, "set");
            key_on(ms + 1, k, "expire");
        }
    gets(ms + 2, c);
}

/* c's release deletes its key on each node in on[]: NOT_OWNER when that
 * is no majority. */
static void releases_nodes(long ms, int c, const int *on)
{
    int n = 0;

    unlocks(ms, c);
    for (int k = 0; k < NODES; k++)
        if (on[k]) {
            key_on(ms + 1, k, "del");
            n++;
        }
    if (2 * n > NODES)
        unlocked(ms + 2, c);
    else
        not_owner(ms + 2, c);
}

/* The owner of the key node k held at t, from the verdict's lanes; -1: no
 * key there. */
static int owner_at(int node, long ms)
{
    for (size_t i = 0; i < v.n_keys; i++)
        if (v.keys[i].node == node && v.keys[i].from_ns <= ms * MS &&
            ms * MS < v.keys[i].to_ns)
            return v.keys[i].owner;
    return -1;
}

/* B's try wins nodes 3 and 4 while A wins 0, 1 and 2; B deletes its two
 * keys again after A already holds: that is no foreign delete. */
START_TEST(test_nodes_split_vote)
{
    const int a[NODES] = { 1, 1, 1, 0, 0 }, all[NODES] = { 1, 1, 1, 1, 1 };

    begin();
    wants(0, B);
    key_on(1, 3, "set");
    key_on(1, 4, "set");
    takes_nodes(1, A, a);
    key_on(5, 3, "del");      /* B's try lost: it gives its keys back ... */
    key_on(5, 4, "del");
    releases_nodes(50, A, a);
    for (int k = 0; k < NODES; k++)  /* ... and wins all five on its next try */
        key_on(61, k, "set");
    gets(62, B);
    releases_nodes(100, B, all);
    assert_verdict(0, "B's losing try deleted its own keys while A held the lock");
    ck_assert_msg(v.nodes == NODES, "the verdict counts %d nodes; the events name %d",
                  v.nodes, NODES);
    /* Both acquires were in flight when the first keys appeared: whose
     * each was cannot be told. B's second try came after A's OK. */
    ck_assert_msg(owner_at(0, 10) == SIM_UNNAMED && owner_at(3, 2) == SIM_UNNAMED &&
                  owner_at(3, 70) == B, "the lanes say node 0 was %d's and node 3 %d's, "
                  "then %d's; expected unnamed, unnamed and B's", owner_at(0, 10),
                  owner_at(3, 2), owner_at(3, 70));
}
END_TEST

/* A takes a bare majority (3 and 4 down); node 0 restarts empty, 3 and 4
 * come back, and B wins 0, 3 and 4. */
static void restart_story(void)
{
    const int a[NODES] = { 1, 1, 1, 0, 0 }, b[NODES] = { 1, 0, 0, 1, 1 };

    begin();
    node_down(0, 3);
    node_down(0, 4);
    takes_nodes(10, A, a);
    node_restarts(40, 0);
    node_restarts(45, 3);
    node_restarts(50, 4);
    takes_nodes(60, B, b);
}

/* The restart: two holders, no foreign delete. */
START_TEST(test_nodes_restart_loses_a_vote)
{
    const int b[NODES] = { 1, 0, 0, 1, 1 }, a_left[NODES] = { 0, 1, 1, 0, 0 };

    restart_story();
    releases_nodes(200, A, a_left);  /* A deletes its keys on 1 and 2: not a majority */
    releases_nodes(400, B, b);
    assert_verdict(SIM_ANOM_ME, "B won node 0, restarted empty, and the two A never had");
    ck_assert_msg(ME(0)->a.client == A && ME(0)->b.client == B, "the overlap is %d and %d's; "
                  "expected A and B", ME(0)->a.client, ME(0)->b.client);
    ck_assert_msg(owner_at(0, 30) == A && owner_at(0, 41) == -1 && owner_at(0, 100) == B &&
                  owner_at(1, 100) == A && owner_at(4, 100) == B, "the lanes at 100 ms say "
                  "node 0 %d, node 1 %d, node 4 %d; expected B, A, B", owner_at(0, 100),
                  owner_at(1, 100), owner_at(4, 100));
}
END_TEST

/* A stage whose release does not check the owner, on five nodes: C, which
 * never took the lock, deletes A's keys while A holds: MD, as on one. */
START_TEST(test_nodes_foreign_delete)
{
    const int all[NODES] = { 1, 1, 1, 1, 1 };

    begin();
    takes_nodes(0, A, all);
    unlocks(20, C);
    for (int k = 0; k < NODES; k++)
        key_on(21, k, "del");
    unlocked(22, C);
    releases_nodes(50, A, all);
    check();
    ck_assert_msg(v.anomalies & SIM_ANOM_MD, "C's release deleted A's keys on five nodes; "
                  "the checker found \"%s\", expected MD", set_text(v.anomalies));
    ck_assert_msg(MD(0)->owner.client == A && MD(0)->deleter == C, "the delete is told as "
                  "%d's key deleted by %d; expected A's by C", MD(0)->owner.client,
                  MD(0)->deleter);
}
END_TEST

/* One key of an acquire that ended in an error proves nothing on several
 * nodes: one vote is no majority. */
START_TEST(test_nodes_one_key_proves_nothing)
{
    const int all[NODES] = { 1, 1, 1, 1, 1 };

    begin();
    wants(0, A);
    key_on(1, 2, "set");
    key_on(1, 2, "expire");
    fails(5, A);              /* too few nodes answered */
    takes_nodes(400, B, all);
    releases_nodes(500, B, all);
    assert_verdict(0, "A's error left one key, and B took the lock later");
}
END_TEST

/* 1 when text says want, its lines read as one (sentences wrap). */
static int said(const char *text, const char *want)
{
    char flat[4096];
    size_t k = 0;

    for (size_t i = 0; text[i] != '\0' && k + 1 < sizeof(flat); i++)
        if (!((text[i] == ' ' || text[i] == '\n') && k > 0 && flat[k - 1] == ' '))
            flat[k++] = text[i] == '\n' ? ' ' : text[i];
    flat[k] = '\0';
    return strstr(flat, want) != NULL;
}

/* The run's story in words and five lanes, one per node. */
START_TEST(test_nodes_report)
{
    sim_run_info run = { "v8-redlock", "restart", "", "", 300, 1, 2, NODES };
    char *text = NULL;
    size_t len = 0;
    FILE *out;

    restart_story();
    unlocks(200, A);
    not_owner(202, A);
    check();
    out = open_memstream(&text, &len);
    sim_report_run(out, &run, s.ev, s.n, 0, &v);
    fclose(out);
    ck_assert_msg(said(text, "node 0 restarted empty at 40 ms and lost A's key") &&
                  said(text, "B's key was on nodes 0, 3 and 4, a majority; A's on nodes 1 "
                       "and 2"), "the report does not tell the restart and the majority; "
                  "it printed:\n%s", text);
    /* In time order: the nodes' faults before the overlap, who held which
     * nodes right after it, A's release last. */
    ck_assert_msg(strstr(text, "  nodes: ") != NULL && strstr(text, "  majority: ") != NULL &&
                  strstr(text, "  nodes: ") < strstr(text, "  mutual exclusion lost: ") &&
                  strstr(text, "  mutual exclusion lost: ") < strstr(text, "  majority: ") &&
                  strstr(text, "  majority: ") < strstr(text, "  release: "), "the story is "
                  "not told in time order (nodes, the overlap, the majority, the release):\n%s",
                  text);
    for (int k = 0; k < NODES; k++) {
        char lane[24];

        snprintf(lane, sizeof(lane), "\nnode %d  ", k);
        ck_assert_msg(strstr(text, lane) != NULL, "the timeline has no lane for node %d:\n%s",
                      k, text);
    }
    free(text);
}
END_TEST

/* A lock of one server says when its only copy of the key went: the
 * failover's promotion, or the restart, with the key it took along,
 * before the overlap it led to. */
START_TEST(test_nodes_one_server_fault)
{
    sim_run_info run = { "v3-set-nx-px", "restart", "", "", 300, 1, 2, 1 };
    char *text = NULL;
    size_t len = 0;
    FILE *out;

    for (int restart = 0; restart < 2; restart++) {
        begin();
        takes(0, A, 1);
        if (restart)
            node_restarts(40, 0);
        else
            promotes(40);
        takes(50, B, 1);
        gives_back(300, A);
        check();
        out = open_memstream(&text, &len);
        sim_report_run(out, &run, s.ev, s.n, 0, &v);
        fclose(out);
        ck_assert_msg(said(text, restart ? "server: the server restarted empty at 40 ms "
                           "and lost A's key" : "server: the primary failed over to a "
                           "replica without the key at 40 ms and lost A's key"),
                      "the report does not tell when the server lost the key:\n%s", text);
        ck_assert_msg(strstr(text, "  server: ") < strstr(text, "  mutual exclusion lost: "),
                      "the server's fault is not told before the overlap:\n%s", text);
        free(text);
        text = NULL;
    }
}
END_TEST

Suite *nodes_suite(void)
{
    const TTest *tests[] = {
        test_nodes_split_vote, test_nodes_restart_loses_a_vote, test_nodes_foreign_delete,
        test_nodes_one_key_proves_nothing, test_nodes_report, test_nodes_one_server_fault,
    };

    return ONE_TCASE_SUITE("nodes", "several nodes", tests, NULL);
}
