/* test_html: the report's web pages, written from hand-written histories
 * (story.h) and from folders the test makes, read back as text: data is
 * escaped, the timeline draws the history, the READMEs' Markdown and the
 * stage diffs come out as HTML, every row of the matrix has its story.
 * No Redis and no browser (make report-test loads the real site in
 * one). */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "html.h"
#include "pages.h"
#include "scenarios.h"
#include "stage.h"
#include "story.h"

static void put(const char *dir, const char *name, const char *content)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    ck_assert_msg((f = fopen(path, "w")) != NULL, "cannot write %s", path);
    fputs(content, f);
    fclose(f);
}

/* v3's slow holder: B takes the expired lock, A's late DEL deletes it,
 * C walks in beside B; 3 sales, 1 left of 10... and a failpoint whose
 * name is markup. */
static void slow_holder_story(void)
{
    begin();
    stock(SIM_EV_STOCK_INITIAL, 0, 10);
    takes(0, A, 1);
    record(50, A, 0, SIM_EV_FAILPOINT, 0, "x=<script>alert(1)</script>");
    wants(100, B);
    key(300, "expired");
    key(311, "set");
    key(311, "expire");
    gets(312, B);
    sells(800, A, 9);
    gives_back(900, A);
    takes(950, C, 1);
    sells(1000, B, 9);
    sells(1100, C, 8);
    stock(SIM_EV_STOCK_FINAL, 1300, 8);
    check();
}

/* The lines of the verdict the terminal prints for a run: each starts
 * two blanks in, a line it continues deeper. */
static size_t terminal_lines(const sim_html_run *r)
{
    char *out = NULL;
    size_t len = 0, n = 0;
    FILE *f = open_memstream(&out, &len);

    ck_assert(f != NULL);
    sim_report_verdict(f, r->cell.verdict, r->ev, r->n, r->cell.t0_ns);
    fclose(f);
    for (const char *p = out; *p != '\0'; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] != '\0'))
        n += strncmp(p, "  ", 2) == 0 && p[2] != ' ';
    free(out);
    return n;
}

/* The page of the run just checked (s and v), as stage played it with
 * info, written into tmp and read back from file: the run it drew. */
static sim_html_run run_page(const sim_run_info *info, int stage, const char *file)
{
    sim_html_run run = { { info->scenario, stage, v.anomalies, v.anomalies, 0, &v, 0 },
                         info, s.ev, s.n };
    char path[512], why[256];

    ck_assert_msg(sim_html_run_page(tmp, &run, path, sizeof(path), why, sizeof(why)) == 0,
                  "the run's page was not written: %s", why);
    read_back(file);
    return run;
}

START_TEST(test_html_run_page_draws_the_history)
{
    sim_run_info info = { "v3-set-nx-px", "slow-holder",
                          "a <b>bold</b> & \"quoted\" claim", "", 300, 7, 3, 1 };
    sim_html_run run;
    sim_verdict again;
    sim_run_info back;
    sim_event *ev;
    char path[512], why[256];
    size_t n;

    slow_holder_story();
    run = run_page(&info, 3, "v3-slow-holder.html");
    ck_assert_msg(count("<g class=\"lane client\"") == 3 && strstr(text, "data-clients=\"3\""),
                  "the timeline draws %zu client lanes; the run has 3",
                  count("<g class=\"lane client\""));
    has("data-kind=\"ME\" data-from=\"312\" data-to=\"900\"");
    has("data-kind=\"MD\" data-at=\"901\"");
    has("clients A and B both held the lock in [312 ms, 900 ms]");
    has("<li class=\"bad\" data-kind=\"ME\" data-at=\"952\"><strong>mutual exclusion "
        "lost</strong>: clients B and C both held the lock in [952 ms, 1300 ms]</li>");
    ck_assert_msg(count("<li class=") == terminal_lines(&run),
                  "the page tells %zu lines of the verdict; the terminal prints %zu",
                  count("<li class="), terminal_lines(&run));
    has("a &lt;b&gt;bold&lt;/b&gt; &amp; &quot;quoted&quot; claim");
    lacks("<b>bold");
    has("x=&lt;script&gt;alert(1)&lt;/script&gt;");
    lacks("<script");
    lacks("../index.html");  /* a page alone links to nothing but its history */
    snprintf(path, sizeof(path), "%s/v3-slow-holder.jsonl", tmp);
    ev = sim_history_load_run(path, &back, &n, why, sizeof(why));
    ck_assert_msg(ev != NULL, "the run's history cannot be read again: %s", why);
    sim_check_run(&back, ev, n, &again);
    ck_assert_msg(again.anomalies == v.anomalies,
                  "the saved history judges as %#x; the run was %#x",
                  again.anomalies, v.anomalies);
    sim_verdict_free(&again);
    free(ev);
}
END_TEST

/* A holds under a lease of its own, 12 of the run's; B asks with the
 * run's: A's lane and the verdict say A's, and nothing about B's. */
START_TEST(test_html_run_page_tells_a_clients_own_lease)
{
    sim_run_info info = { "v8-redlock", "failover", "own leases", "", 300, 1, 2, 1 };

    begin();
    takes(0, A, 1);
    s.ev[s.n - 4].lease_ms = 3600;  /* takes: invoke, set, expire, ok */
    wants(50, B);
    s.ev[s.n - 1].lease_ms = 300;
    gives_back(1000, A);
    gets(1003, B);
    gives_back(1100, B);
    check();
    run_page(&info, 8, "v8-failover.html");
    has("class=\"small own-lease\" text-anchor=\"start\">lease 3600 ms</text>");
    ck_assert_msg(count("own-lease") == 1, "%zu lanes tell an own lease; only A has one",
                  count("own-lease"));
    has("<strong>leases</strong>: A&#39;s own lease is 3600 ms, 12 times the run&#39;s 300 ms</li>");
}
END_TEST

/* A failover's six steps on one server: each mark on the time axis has
 * its words on the page, not only in a tooltip; the bookkeeping steps
 * are told in the tooltip of the labelled step next to them. */
START_TEST(test_html_every_fault_mark_has_a_label)
{
    static const char *const steps[] = { "replica lacks lock", "kill primary",
                                         "promote replica", "unpause replica",
                                         "clients follow" };
    sim_run_info info = { "v3-set-nx-px", "failover", "steps", "", 300, 1, 2, 1 };
    size_t marks = 0;

    begin();
    record(0, SIM_NO_CLIENT, 0, SIM_EV_FAILOVER, 7001, "hold replica");
    takes(1, A, 1);
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
        record(29 + (long)i / 2, SIM_NO_CLIENT, 0, SIM_EV_FAILOVER, 7001, steps[i]);
    takes(40, B, 1);
    gives_back(200, A);
    gives_back(400, B);
    check();
    run_page(&info, 3, "v3-failover.html");
    for (const char *p = text; (p = strstr(p, "<g class=\"fault\"")) != NULL; p++) {
        const char *end = strstr(p, "</g>"), *label = strstr(p, "<text");

        ck_assert_msg(end != NULL && label != NULL && label < end, "a fault's mark has "
                      "no label, only a tooltip: %.200s", p);
        marks++;
    }
    ck_assert_msg(marks == 3, "%zu fault marks; expected hold, kill and promote", marks);
    has("failover at 29 ms: kill primary; replica lacks lock at 29 ms");
    has("failover at 30 ms: promote replica; unpause replica at 30 ms; clients follow at 31 ms");
}
END_TEST

/* Of three nodes, node 2 is down from 10 ms to 200 ms and node 1 from
 * 300 ms to the end: each key lane draws its node's down time, as the
 * terminal's ':' does, and the others none. */
START_TEST(test_html_node_lanes_draw_down_time)
{
    sim_run_info info = { "v8-redlock", "restart", "down", "", 300, 1, 1, 3 };
    const char *lane1, *lane2;

    begin();
    node_down(10, 2);
    wants(20, A);
    key_on(21, 0, "set");
    key_on(21, 1, "set");
    gets(22, A);
    node_restarts(200, 2);
    node_down(300, 1);
    gives_back(400, A);
    check();
    run_page(&info, 8, "v8-restart.html");
    ck_assert_msg(count("<g class=\"down\">") == 2, "%zu down times drawn; the "
                  "history has 2", count("<g class=\"down\">"));
    has("node 2&#39;s server was down: 10 to 200 ms");
    has("node 1&#39;s server was down: 300 to the end, 402 ms");
    lane1 = strstr(text, "data-node=\"1\"");
    lane2 = strstr(text, "data-node=\"2\"");
    ck_assert_msg(lane1 != NULL && lane2 != NULL && strstr(lane1, "class=\"down\"") < lane2,
                  "node 1's down time is not drawn in node 1's lane");
}
END_TEST

/* v11's queue under the key lane (tests/histories/zk-queue.jsonl): a
 * band per node and place, named as the terminal names it; the third
 * place says "more" while four wait. */
START_TEST(test_html_queue_lane)
{
    sim_run_info info;
    char why[256];
    size_t n;
    sim_event *ev = sim_history_load_run(SRCDIR "/tests/histories/zk-queue.jsonl", &info, &n,
                                         why, sizeof(why));

    ck_assert_msg(ev != NULL && n <= STORY_MAX, "%s", why);
    begin();
    memcpy(s.ev, ev, n * sizeof(*ev));
    s.n = n;
    free(ev);
    check();
    run_page(&info, 11, "v11-hand-made.html");
    ck_assert_msg(count("<g class=\"lane queue\">") == 1 && count("<g class=\"waiter") == 6,
                  "%zu queue lanes, %zu bands; expected 1 and 6",
                  count("<g class=\"lane queue\">"), count("<g class=\"waiter"));
    has("B&#39;s node waits, place 1: 41 to 452 ms");
    has("C&#39;s node waits, place 2: 81 to 452 ms");
    has("C&#39;s node waits, place 1: 452 to 601 ms");
    has("a node whose client cannot be named waits, place 3: 101 to 126 ms");
    has("more than 3 nodes wait: 126 to 301 ms");
    has("a node whose client cannot be named waits, place 3: 301 to 401 ms");
    has("a client&#39;s node waiting in the queue: the top place holds next");
    has("more than 3 nodes wait: the rest are not drawn");
}
END_TEST

/* make diff of the repository, in the test's own: its script and awk
 * files linked, a table of parts that cuts no stage. */
static void link_make_diff(const char *src)
{
    static const char *const files[] = { "stagediff.sh", "stagelist.sh", "stagediff_side.awk",
                                         "stagediff_units.awk", "stagediff_parts.awk" };
    char dir[512], from[512], to[600];

    snprintf(dir, sizeof(dir), "%s/tools", src);
    ck_assert(mkdir(dir, 0755) == 0);
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        snprintf(from, sizeof(from), "%s/tools/%s", SRCDIR, files[i]);
        snprintf(to, sizeof(to), "%s/%s", dir, files[i]);
        ck_assert_msg(symlink(from, to) == 0, "cannot link %s to %s", to, from);
    }
    put(dir, "stagediff.parts", "# no stage in parts\n");
}

/* A repository of the test's own in tmp/src: a page of stories with one,
 * and every stage of the list with a README and a lock.c that differs
 * from its base's in one line (stage 2's README in the Markdown the
 * stages use); lock.h the same everywhere; make diff. */
static void make_src(void)
{
    static const char *const crafted =
        "# v2-expire: a crafted stage\n\nGoal: *one* idea.\n\n## What changed\n\n"
        "- one item\n  continued here\n- two `a|b` <tag> **bold**\n\n"
        "| col | `x\\|y` |\n|---|---|\n| 1 | 2 |\n\n"
        "```diff\n-old line\n+new line\n```\n\n"
        "See [v1](../v1-setnx/README.md), [lock.c](lock.c) and "
        "[the web](https://example.org/x).\n";
    char src[256], dir[512], readme[256], lock[64];

    snprintf(src, sizeof(src), "%s/src", tmp);
    ck_assert(mkdir(src, 0755) == 0);
    put(src, "README.md", "# the front page\n\nSee [the stories](docs/matrix.md#the-story-of-each-row), "
        "[v2](v2-expire/README.md) and the [Makefile](Makefile).\n");
    snprintf(dir, sizeof(dir), "%s/docs", src);
    ck_assert(mkdir(dir, 0755) == 0);
    put(dir, "matrix.md", "## The story of each row\n\n- **baseline.** A story with\n"
        "  `code` in it.\n- **other.** Not this one.\n");
    for (int st = 1; st <= SIM_STAGES; st++) {
        snprintf(dir, sizeof(dir), "%s/%s", src, sim_stage_name(st));
        ck_assert(mkdir(dir, 0755) == 0);
        snprintf(readme, sizeof(readme), "# %s: a stage\n\nText.\n", sim_stage_name(st));
        put(dir, "README.md", st == 2 ? crafted : readme);
        snprintf(lock, sizeof(lock), "int a;\nint b%d;\nint c;\n", st);
        put(dir, "lock.c", lock);
        put(dir, "lock.h", "int lock(void);\n");
    }
    link_make_diff(src);
}

START_TEST(test_html_stage_pages_render_markdown_and_diff)
{
    sim_run_info info = { "v1-setnx", "baseline", "no faults", "", 300, 1, 1, 1 };
    sim_html_about about = { 300, 1, 6, 0, "redis-server v=<7>", "abc", 1.5 };
    sim_html_run run;
    char site[256], src[256], why[256];

    make_src();
    begin();
    takes(0, A, 1);
    gives_back(100, A);
    check();
    run = (sim_html_run){ { "baseline", 1, v.anomalies, 0, 0, &v, 0 }, &info, s.ev, s.n };
    snprintf(site, sizeof(site), "%s/site", tmp);
    snprintf(src, sizeof(src), "%s/src", tmp);
    ck_assert_msg(sim_html_site(site, src, &about, &run, 1, why, sizeof(why)) == 0,
                  "the site was not written: %s", why);
    read_back("site/stages/v2-expire.html");
    /* As GitHub renders it (cmark-gfm): a pipe in a table's code is
     * escaped, the writer's <tag> is text; links turned inward, a diff's
     * lines coloured. */
    has("<h1>v2-expire: a crafted stage</h1>");
    has("<em>one</em>");
    has("<li>one item\ncontinued here</li>");
    has("<code>a|b</code> &lt;tag&gt; <strong>bold</strong>");
    has("<th>col</th>\n<th><code>x|y</code></th>");
    has("<td>1</td>\n<td>2</td>");
    has("<span class=\"del\">-old line</span>");
    has("<span class=\"add\">+new line</span>");
    has("<a href=\"../stages/v1-setnx.html\">v1</a>");
    has("<a href=\"https://example.org/x\">the web</a>");
    lacks("href=\"lock.c\"");
    /* The diff against its base, as make diff shows it: the changed
     * line, its changed part; no table for the file that did not change. */
    has("<th colspan=\"2\">v1-setnx/lock.c</th><th colspan=\"2\">v2-expire/lock.c</th>");
    has("int b<span class=\"chg\">1</span>;");
    has("int b<span class=\"chg\">2</span>;");
    lacks("v2-expire/lock.h");
    read_back("site/stages/v1-setnx.html");
    has("built on no other");
    /* The repository's own pages, rendered, their links turned inward. */
    read_back("site/guide/readme.html");
    has("<h1>the front page</h1>");
    has("<a href=\"../guide/matrix.html#the-story-of-each-row\">the stories</a>");
    has("<a href=\"../stages/v2-expire.html\">v2</a>");
    has("the Makefile.");
    read_back("site/guide/matrix.html");
    has("<li><strong>baseline.</strong> A story with");
    read_back("site/index.html");
    has("A story with\n<code>code</code> in it.");
    lacks("Not this one");
    has("redis-server v=&lt;7&gt;");
    has("data-matched=\"1\" data-cells=\"1\"");
}
END_TEST

/* The matrix page of the real repository: every scenario of the table
 * finds its story in docs/matrix.md. */
START_TEST(test_html_readme_tells_every_row)
{
    sim_html_about about = { 300, 1, 6, 0, "", "", 1 };
    sim_run_info info[64];
    sim_html_run runs[64];
    char site[256], why[256], row[128];
    size_t n = sim_scenario_count();

    ck_assert(n <= 64);
    begin();
    takes(0, A, 1);
    gives_back(100, A);
    check();
    for (size_t i = 0; i < n; i++) {
        const sim_scenario *sc = sim_scenario_at(i);

        info[i] = (sim_run_info){ "v1-setnx", "", "", "", 300, 1, 1, 1 };
        snprintf(info[i].scenario, sizeof(info[i].scenario), "%s", sc->name);
        snprintf(info[i].what, sizeof(info[i].what), "%s", sc->shows);
        runs[i] = (sim_html_run){ { sc->name, 1, v.anomalies, 0, 0, &v, 0 }, &info[i],
                                  s.ev, s.n };
    }
    snprintf(site, sizeof(site), "%s/site", tmp);
    ck_assert_msg(sim_html_site(site, SRCDIR, &about, runs, n, why, sizeof(why)) == 0,
                  "the site was not written: %s", why);
    read_back("site/index.html");
    for (size_t i = 0; i < n; i++) {
        snprintf(row, sizeof(row), "id=\"row-%s\"", sim_scenario_at(i)->name);
        has(row);
    }
    ck_assert_msg(strstr(text, "no-story") == NULL, SIM_HTML_STORIES " tells "
                  "no story of a row: %.160s", strstr(text, "no-story"));
    /* The stages' diffs are make diff's: v4's SET with its token whole,
     * v6's in the parts make diff cuts it into, each a slice of its own. */
    read_back("site/stages/v4-owner-check.html");
    has("token</span>, l-&gt;r.cfg.lease_ms);</td>");
    read_back("site/stages/v6-reentrant-watchdog.html");
    has("Part 1 of 3: hold counts in a hash");
    has("Part 2 of 3: the watchdog");
    has("Part 3 of 3: no polling");
    ck_assert_msg(count("<table class=\"diff changes\">") >= 3,
                  "v6's page shows %zu slices of its diff; expected one per part at least",
                  count("<table class=\"diff changes\">"));
}
END_TEST

Suite *html_suite(void)
{
    const TTest *tests[] = {
        test_html_run_page_draws_the_history, test_html_run_page_tells_a_clients_own_lease,
        test_html_every_fault_mark_has_a_label, test_html_node_lanes_draw_down_time,
        test_html_queue_lane,
        test_html_stage_pages_render_markdown_and_diff, test_html_readme_tells_every_row,
    };

    return PAGES_SUITE("html", tests, remove_tmp);
}
