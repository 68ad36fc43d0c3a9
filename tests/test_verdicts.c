/* test_verdicts: hand-made histories with a known truth, in
 * tests/histories, each read, judged and reported the way `sim check`
 * does, and held to its verdict, its sentences and its exit status.
 *
 * Each file is a case where a checker can go wrong: a deleter killed
 * before the observer speaks, a lost observer message, a crash that has
 * nothing to do with a stuck key, an acquire whose outcome was unknown, a
 * client past Z, a tie, a holder cut off from the lock's servers, a
 * server whose clock jumps (one server, and a node of a bare majority),
 * a ZooKeeper lock's queue, JSON the reader must take or refuse, a history
 * that cannot be judged, a client the header does not count, a directory
 * given for a file. A teacher can run `build/sim/sim check` on any
 * of them. Paths are from the repository's root, where make runs this. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checker.h"
#include "history.h"
#include "report.h"
#include "report_helpers.h"
#include "tcases.h"

#define DIR "tests/histories/"
#define SAYS 4

typedef struct expect {
    const char *file;
    int status;               /* sim check's exit status */
    const char *set;          /* the anomalies; NULL when status is 2 */
    const char *says[SAYS];   /* in the report, or in the refusal */
} expect;

static const expect cases[] = {
    { "md-deleter-killed.jsonl", 1, "ME MD",
      { "client A's release deleted client B's lock at 153 ms (it was killed "
        "before its release returned); B had held it since 102 ms; client C "
        "took the lock at 156 ms while B was still inside" } },
    { "md-lone-del-own-earlier.jsonl", 1, "MD",
      { "client A's lock was deleted at 200 ms by a client that cannot be "
        "named; A had held it since 102 ms" } },
    { "md-lone-del-other-earlier.jsonl", 1, "MD",
      { "client A's lock was deleted at 200 ms by a client that cannot be "
        "named; A had held it since 102 ms" } },
    { "md-lost-set.jsonl", 1, "ME MD",
      { "client A's release deleted client B's lock at 901 ms; B had held it "
        "since 752 ms; client C took the lock at 906 ms while B was still "
        "inside",
        "observer: the observer missed a key's creation: it reported "
        "\"expire\" at 1 ms while it had reported no key" } },
    { "dl-pexpire-failed-after-crash.jsonl", 1, "DL",
      { "client B waited 1200 ms and gave up at 2210 ms while client A's key, "
        "which no client held, had no TTL: deadlock (A's acquire ended in an "
        "error at 1003 ms after its key was written, so A never knew it held "
        "the lock)" } },
    { "dl-pexpire-failed.jsonl", 1, "DL",
      { "client B waited 1200 ms and gave up at 2210 ms while client A's key, "
        "which no client held, had no TTL: deadlock (A's acquire ended in an "
        "error at 1003 ms" } },
    { "unknown-acquire-proven-by-release.jsonl", 1, "ME",
      { "clients B and A both held the lock in [311 ms, 400 ms]; A's acquire "
        "ended in an error at 313 ms, but its release at 402 ms returned OK, "
        "and this stage's release checks the owner: the key was A's",
        "rule: an acquire or release that ended in an error or a crash may "
        "still have taken effect; the checker counts one only where later "
        "events prove it" } },
    { "unknown-acquire-proven-by-key.jsonl", 1, "ME",
      { "clients B and A both held the lock in [311 ms, 800 ms]; A's acquire "
        "ended in an error at 313 ms, but only that acquire could have made "
        "the key reported at 311 ms" } },
    { "client-30.jsonl", 1, "ME MD LU",
      { "clients A and AE both held the lock in [312 ms, 401 ms]",
        "lost updates: stock 10 -> 9 after 2 sales: 1 update lost",
        "client AE " } },
    { "thread-20.jsonl", 1, "ME",
      { "clients B and A:20 both held the lock in [312 ms, 500 ms]" } },
    { "tie-release-first.jsonl", 0, "-", { "no anomaly" } },
    { "tie-acquire-first.jsonl", 0, "-", { "no anomaly" } },
    { "json-valid.jsonl", 1, "ME",
      { "clients A and B both held the lock in [312 ms, 900 ms]" } },
    { "every-episode.jsonl", 1, "ME MD",
      { "client A's release deleted client B's lock at 901 ms",
        "client B's release deleted client C's lock at 1001 ms",
        "client D's release deleted client E's lock at 2901 ms",
        "clients E and F both held the lock in [2906 ms, 3000 ms]" } },
    { "format-1.jsonl", 1, "ME MD LU",
      { "v3-set-nx-px / slow-holder",
        "client A's release deleted client B's lock at 922 ms" } },
    { "st-dead-waiter.jsonl", 1, "ST",
      { "the lock was free from 301 ms to 1500 ms while client C waited for "
        "it, behind B, who asked at 40 ms and was killed waiting at 130 ms: "
        "1199 ms, longer than the 600 ms bound, and only then was it taken: "
        "stalled" } },
    { "st-free-lock-given-up.jsonl", 1, "ST",
      { "the lock was free from 301 ms to 1300 ms while client B waited for "
        "it: 999 ms, longer than the 600 ms bound, and nobody took it: "
        "stalled" } },
    { "st-ttl-wakeup.jsonl", 0, "-", { "no anomaly" } },
    { "st-slow-start.jsonl", 0, "-", { "no anomaly" } },
    { "partition-lease-ran-out.jsonl", 1, "ME LU",
      { "partition: A was cut off from the lock's servers at 30 ms, for 900 ms; its key "
        "expired at 302 ms while A was inside",
        "[ ] a client cut off from the lock's servers" } },
    { "partition-no-ttl.jsonl", 0, "-",
      { "partition: A was cut off from the lock's servers at 30 ms, for 900 ms; its key "
        "has no TTL and stayed, and B waited from 60 ms to 1087 ms" } },
    { "clock-jump.jsonl", 1, "ME LU",
      { "server: the server's clock jumped 600 ms forward at 34 ms; A's key expired at 36 ms",
        "} a server's clock jumped forward" } },
    { "clock-jump-majority.jsonl", 1, "ME LU",
      { "partition: A was cut off from nodes 3 and 4 at 1 ms, for 185 ms",
        "nodes: node 2's clock jumped 600 ms forward at 187 ms; A's key there expired at 190 ms",
        "majority: at 220 ms, B's key was on nodes 2, 3 and 4, a majority; A's on nodes 0 and 1",
        "release: client A's release at 431 ms returned NOT_OWNER: it deleted its own keys on "
        "nodes 0 and 1 only, no majority" } },
    { "zk-queue.jsonl", 0, "-", { "no anomaly" } },
    { "zk-fence.jsonl", 1, "ME",
      { "tokens: each is the czxid of its holder's node, the zxid ZooKeeper gave its create",
        "(A's 4294967302 is epoch 1, change 6)",
        "the fence held: client A's write with token 4294967302 was refused at 1030 ms: "
        "client B had read the stock with token 4294967305 at 905 ms" } },
    { "clean.jsonl", 0, "-",
      { "no anomaly: one holder at a time, no lock deleted by another, no "
        "deadlock" } },
    { "own-lease.jsonl", 0, "-",
      { "leases: A's own lease is 1200 ms, 4 times the run's 300 ms no anomaly",
        "the run ends at 1002 ms A's own lease is 1200 ms, 4 times the run's 300 ms" } },
    { "same-lease.jsonl", 0, "-",
      { "leases: every client's own lease is 3600 ms, 12 times the run's 300 ms no anomaly" } },
    { "empty.jsonl", 2, NULL, { "the file is empty" } },
    { "header-only.jsonl", 2, NULL, { "the history has no events" } },
    { "unknown-key-event.jsonl", 2, NULL,
      { "a key event \"rename_from\" at 100 ms: the checker does not know "
        "what it does to the lock key" } },
    { "unknown-type.jsonl", 2, NULL, { ":6: unknown event type \"dance\"" } },
    { "version-4.jsonl", 2, NULL, { ":1: saved in format version 4" } },
    { "client-past-count.jsonl", 2, NULL,
      { ":6: the event names client 7, but the header says the run had 3 (0 to 2)" } },
    { ".", 2, NULL, { "tests/histories/.: cannot read it: Is a directory: give the "
                      ".jsonl file that run --save wrote" } },
    { "t-ms-disagrees.jsonl", 2, NULL,
      { ":2: \"t_ms\" says 1.533 ms but \"t_ns\" says 1 ns: the two times disagree" } },
    { "json-duplicate-key.jsonl", 2, NULL,
      { ":10: the key \"client\" appears twice" } },
};
#define CASES (sizeof(cases) / sizeof(cases[0]))

static void assert_says(const expect *x, const char *what, const char *text)
{
    char *f = flat_text(text);

    for (int i = 0; i < SAYS && x->says[i] != NULL; i++)
        ck_assert_msg(strstr(f, x->says[i]) != NULL, "%s: the %s does not say "
                      "\"%s\"; it says:\n%s", x->file, what, x->says[i], text);
    free(f);
}

/* Reads, judges and reports one file the way `sim check` does: the
 * report (or the refusal) into *text, the exit status returned. */
static int sim_check_file(const char *path, sim_verdict *v, char **text)
{
    char why[512];
    sim_run_info info;
    size_t n, len;
    sim_event *ev = sim_history_load_run(path, &info, &n, why, sizeof(why));
    FILE *out = open_memstream(text, &len);
    int status;

    memset(v, 0, sizeof(*v));
    if (ev == NULL) {
        fprintf(out, "%s", why);
        fclose(out);
        return 2;
    }
    sim_check_run(&info, ev, n, v);
    if ((status = sim_verdict_status(v)) == 2)
        fprintf(out, "%s", v->why);
    else
        sim_report_run(out, &info, ev, n, 0, v);
    fclose(out);
    free(ev);
    return status;
}

START_TEST(test_verdicts_file)
{
    const expect *x = &cases[_i];
    char path[256], *text = NULL, set[64], want[64];
    sim_verdict v;
    int status;
    unsigned want_set = 0;

    snprintf(path, sizeof(path), DIR "%s", x->file);
    status = sim_check_file(path, &v, &text);
    ck_assert_msg(status == x->status, "%s: sim check would exit %d; expected "
                  "%d. It says:\n%s", x->file, status, x->status, text);
    if (x->set != NULL) {
        ck_assert_int_eq(sim_anomaly_parse(x->set, &want_set), 0);
        sim_anomaly_format(v.anomalies, set, sizeof(set));
        sim_anomaly_format(want_set, want, sizeof(want));
        ck_assert_msg(v.anomalies == want_set, "%s: the checker found %s; "
                      "expected %s. It says:\n%s", x->file, set, want, text);
    }
    assert_says(x, status == 2 ? "refusal" : "report", text);
    sim_verdict_free(&v);
    free(text);
}
END_TEST

/* The same instant in either line order: the same verdict, both ways. */
START_TEST(test_verdicts_ties_agree)
{
    sim_verdict a, b;
    char *ta = NULL, *tb = NULL;

    sim_check_file(DIR "tie-release-first.jsonl", &a, &ta);
    sim_check_file(DIR "tie-acquire-first.jsonl", &b, &tb);
    ck_assert_msg(a.anomalies == b.anomalies && a.n_episodes == b.n_episodes,
                  "the tie's verdict depends on the line order:\n%s\n%s", ta,
                  tb);
    sim_verdict_free(&a);
    sim_verdict_free(&b);
    free(ta);
    free(tb);
}
END_TEST

/* ST's bound is two of the run's leases: the dead waiter's stall of
 * 1199 ms is one under a lease of 300 ms, and none under 1000 ms. */
START_TEST(test_verdicts_stall_bound_is_the_lease)
{
    char why[512];
    sim_run_info info;
    sim_verdict v;
    size_t n;
    sim_event *ev = sim_history_load_run(DIR "st-dead-waiter.jsonl", &info, &n, why,
                                         sizeof(why));

    ck_assert_msg(ev != NULL, "%s", why);
    info.lease_ms = 1000;
    sim_check_run(&info, ev, n, &v);
    ck_assert_msg(v.anomalies == 0, "a 1199 ms stall under a 1000 ms lease was judged "
                  "0x%x; expected clean: the bound is %d leases", v.anomalies,
                  SIM_STALL_LEASES);
    sim_verdict_free(&v);
    info.lease_ms = 300;
    sim_check_run(&info, ev, n, &v);
    ck_assert_msg(v.anomalies == SIM_ANOM_ST && v.n_episodes == 1 &&
                  v.episodes[0].st.waiter == 2 && v.episodes[0].st.dead == 1,
                  "under a 300 ms lease expected one ST of C behind dead B, got 0x%x",
                  v.anomalies);
    sim_verdict_free(&v);
    free(ev);
}
END_TEST

/* The report of a history told as stage's: what it says. */
static char *told_as(const char *stage, const sim_run_info *info, const sim_event *ev,
                     size_t n)
{
    sim_run_info as = *info;
    char *text = NULL;
    size_t len;
    sim_verdict v;
    FILE *out = open_memstream(&text, &len);

    snprintf(as.stage, sizeof(as.stage), "%s", stage);
    sim_check_run(&as, ev, n, &v);
    sim_report_run(out, &as, ev, n, 0, &v);
    fclose(out);
    sim_verdict_free(&v);
    return text;
}

/* Only a stage whose lock lives in an ensemble has zxids for tokens: the
 * same history told as v7's, whose token comes from a counter of its
 * own, says nothing of them, nor does v10's, which draws none. */
START_TEST(test_verdicts_zxid_tokens_only_on_zookeeper)
{
    const char *others[] = { "v7-fencing-token", "v10-zookeeper-ephemeral" };
    char why[512], *text;
    sim_run_info info;
    size_t n;
    sim_event *ev = sim_history_load_run(DIR "zk-fence.jsonl", &info, &n, why, sizeof(why));

    ck_assert_msg(ev != NULL, "%s", why);
    text = told_as(info.stage, &info, ev, n);
    ck_assert_msg(strstr(text, "czxid") != NULL, "v11's report names no czxid:\n%s", text);
    free(text);
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        text = told_as(others[i], &info, ev, n);
        ck_assert_msg(strstr(text, "czxid") == NULL && strstr(text, "the fence held") != NULL,
                      "told as %s, the report should tell the fence and no czxid:\n%s",
                      others[i], text);
        free(text);
    }
    free(ev);
}
END_TEST

/* v11's queue is not the lock key's life: the history without its
 * "queued" and "left" has the same keys, owners and verdict. */
START_TEST(test_verdicts_queue_changes_nothing)
{
    char why[512];
    sim_run_info info;
    sim_verdict a, b;
    size_t n, m = 0, queue = 0;
    sim_event *ev = sim_history_load_run(DIR "zk-queue.jsonl", &info, &n, why, sizeof(why));

    ck_assert_msg(ev != NULL, "%s", why);
    sim_check_run(&info, ev, n, &a);
    for (size_t i = 0; i < n; i++) {
        if (ev[i].type == SIM_EV_KEY && sim_key_event_kind(ev[i].detail) == SIM_KEY_QUEUE)
            queue++;
        else
            ev[m++] = ev[i];
    }
    sim_check_run(&info, ev, m, &b);
    ck_assert_msg(queue == 6, "the fixture has %zu queue events; expected 6", queue);
    ck_assert_msg(sim_verdict_status(&a) == sim_verdict_status(&b) &&
                  a.anomalies == b.anomalies && a.n_episodes == b.n_episodes &&
                  a.n_gaps == b.n_gaps && a.n_keys == b.n_keys && a.n_keys == 3,
                  "with its queue: status %d, anomalies 0x%x, %zu keys (%s); without: "
                  "status %d, anomalies 0x%x, %zu keys", sim_verdict_status(&a),
                  a.anomalies, a.n_keys, a.why, sim_verdict_status(&b), b.anomalies,
                  b.n_keys);
    for (size_t k = 0; k < a.n_keys; k++)
        ck_assert_msg(a.keys[k].owner == b.keys[k].owner &&
                      a.keys[k].from_ns == b.keys[k].from_ns &&
                      a.keys[k].to_ns == b.keys[k].to_ns,
                      "key %zu differs with the queue and without it", k);
    ck_assert_msg(a.keys[1].owner == 1 && a.keys[2].owner == 2, "dead B's node and C's "
                  "are owned by %d and %d; expected B (1) and C (2)", a.keys[1].owner,
                  a.keys[2].owner);
    sim_verdict_free(&a);
    sim_verdict_free(&b);
    free(ev);
}
END_TEST

Suite *verdicts_suite(void)
{
    const TTest *tests[] = {
        test_verdicts_ties_agree, test_verdicts_stall_bound_is_the_lease,
        test_verdicts_queue_changes_nothing, test_verdicts_zxid_tokens_only_on_zookeeper,
    };
    TCase *files;
    Suite *suite = ONE_TCASE_SUITE("verdicts", "hand-made histories", tests, &files);

    /* A test for each file of the cases table. */
    tcase_add_loop_test(files, test_verdicts_file, 0, (int)CASES);
    return suite;
}
