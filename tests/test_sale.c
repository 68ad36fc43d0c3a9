/* test_sale: flash sales on a real Redis Cluster with v5's lock on each
 * segment (sim/play/sale.c), judged from their histories.
 *
 * One cluster per tcase, started by its unchecked fixture; each test
 * sells a product of its own on it. The failover tcase kills a master:
 * its cluster serves that test alone. */
#define _GNU_SOURCE
#include <check.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rcluster.h"
#include "sale.h"
#include "tcases.h"

#define STAGE 5             /* a lock that is right on one master */
#define TCASE_TIMEOUT_S 300 /* a sale takes seconds; the failover's about ten */

static sim_rcluster fixture;

static void sale_setup(void)
{
    char err[512];

    if (sim_rcluster_start(&fixture, err, sizeof(err)) != 0) {
        fprintf(stderr, "tests: cannot start a Redis Cluster: %s\n", err);
        exit(EXIT_FAILURE);
    }
}

static void sale_teardown(void)
{
    sim_rcluster_stop(&fixture);
}

/* Plays a sale of product on the fixture with v5's buyers (next to this
 * binary: build/v5/buyer) and judges it into v. */
static void sell(const char *product, int segments, int first, const char *fault,
                 sim_sale_verdict *v)
{
    static char exe[PATH_MAX], buyer[PATH_MAX + 16];
    sim_sale_opts o;
    sim_sale_place place;
    char err[512];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

    ck_assert_msg(n > 0, "cannot read /proc/self/exe");
    exe[n] = '\0';
    snprintf(buyer, sizeof(buyer), "%s/v%d/buyer", dirname(exe), STAGE);
    sim_sale_defaults(&o);
    o.stage = STAGE;
    o.buyer = buyer;
    o.product = product;
    o.segments = segments;
    o.first = first;
    o.fault = fault;
    ck_assert_msg(sim_sale_play(&fixture, &o, v, &place, err, sizeof(err)) == 0,
                  "the sale could not be played: %s", err);
}

static void assert_clean(const sim_sale_verdict *v)
{
    ck_assert_msg(v->sold == v->meta.units, "sold %ld units of %ld; expected every one",
                  v->sold, v->meta.units);
    ck_assert_msg(v->oversold == 0 && v->lost_updates == 0 && v->stale_reads == 0,
                  "%ld units oversold (%ld lost updates, %ld stale reads); expected none with "
                  "a lock that works on one master", v->oversold, v->lost_updates, v->stale_reads);
    ck_assert_msg(v->double_holds == 0, "%ld double holds; expected none", v->double_holds);
    ck_assert_msg(v->false_soldouts == 0, "%d false sold-outs: buyer %d said sold out at %.3f s "
                  "while a segment had stock", v->false_soldouts, v->false_out[0].buyer,
                  (double)v->false_out[0].t_ns / 1e9);
    ck_assert_msg(v->soldouts == v->meta.buyers, "%d buyers said sold out, of %d",
                  v->soldouts, v->meta.buyers);
    ck_assert(sim_sale_clean(v));
}

START_TEST(test_sale_one_segment)
{
    static sim_sale_verdict v;

    sell("20001", 1, 0, "none", &v);
    assert_clean(&v);
}
END_TEST

START_TEST(test_sale_four_segments)
{
    static sim_sale_verdict v;
    int k;

    sell("20004", 4, 0, "none", &v);
    assert_clean(&v);
    for (k = 0; k < 4; k++)
        ck_assert_msg(v.seg[k].sold == 250 && v.seg[k].dry_ns >= 0, "segment %d sold %ld of "
                      "250 and %s", k, v.seg[k].sold, v.seg[k].dry_ns >= 0 ? "ran dry" : "never ran dry");
}
END_TEST

/* Giving up at the first empty segment: buyers leave while others hold
 * stock. */
START_TEST(test_sale_first_empty_lies)
{
    static sim_sale_verdict v;
    int k, held = 0;

    sell("20008", 8, 1, "none", &v);
    ck_assert_msg(v.false_soldouts > 0, "first=1 gave no false sold-out; expected buyers told "
                  "\"sold out\" while other segments held stock");
    for (k = 0; k < 8; k++)
        held += v.false_out[0].held[k] > 0;
    ck_assert_msg(held > 0, "the false sold-out names no segment with stock");
    ck_assert_msg(v.oversold == 0, "first=1 oversold %ld units", v.oversold);
}
END_TEST

/* One holder sleeps 1.5 s inside its segment's lock (below the 5 s
 * lease): its segment sells nothing meanwhile, every other one sells. */
START_TEST(test_sale_pause_stalls_one_segment)
{
    static sim_sale_verdict v;
    int k;

    sell("20032", 8, 0, "pause", &v);
    assert_clean(&v);
    ck_assert_msg(v.pause_ns >= 0 && v.fault_seg >= 0, "no holder paused");
    for (k = 0; k < 8; k++)
        if (k == v.fault_seg)
            ck_assert_msg(v.seg[k].paused_sales == 0, "segment %d sold %ld units while its "
                          "holder slept inside the lock", k, v.seg[k].paused_sales);
        else
            ck_assert_msg(v.seg[k].paused_sales > 0, "segment %d sold nothing while segment "
                          "%d's holder slept; expected the others to go on", k, v.fault_seg);
}
END_TEST

/* A master killed while its replica lags: the replica is promoted with
 * the older stock, and units sold on the dead master are sold again
 * under a lock that held all along. */
START_TEST(test_sale_failover_oversells)
{
    static sim_sale_verdict v;

    sell("20016", 8, 0, "failover", &v);
    ck_assert_msg(v.kill_ns >= 0 && v.promoted_ns > v.kill_ns, "the failover did not happen");
    ck_assert_msg(v.stale_reads > 0, "no read found the stock that acknowledged writes had "
                  "taken: no write was lost");
    ck_assert_msg(v.stale[0].value > v.stale[0].acked && v.stale[0].t_ns[1] > v.kill_ns,
                  "the lost write's evidence does not hold");
    ck_assert_msg(v.oversold > 0 && v.lost_updates > 0, "no unit oversold after the lost "
                  "writes (%ld stale reads)", v.stale_reads);
    ck_assert_msg(v.double_holds == 0, "%ld double holds: the lock failed, not the store",
                  v.double_holds);
    ck_assert_msg(v.died == 0, "%d buyers died in the failover (buyer %d, exit status %d); "
                  "expected each to see I/O errors and go on", v.died, v.died_buyer,
                  v.died_status);
}
END_TEST

/* ---- the judge, on histories written by hand ------------------------------- */

/* Loads and judges a history of 4 units over 2 segments, 2 buyers, whose
 * events are lines. */
static void judge(const char *lines, sim_sale_verdict *v)
{
    char path[] = "/tmp/lockstep-sale-XXXXXX", err[256];
    sim_sale_log log;
    FILE *f;
    int fd = mkstemp(path);

    ck_assert_msg(fd >= 0 && (f = fdopen(fd, "w")) != NULL, "cannot write a history");
    fprintf(f, "sale units=4 segments=2 buyers=2 stage=5 pause=2 first=0 fault=none t0=1000\n%s",
            lines);
    fclose(f);
    ck_assert_msg(sim_sale_log_load(&log, path, err, sizeof(err)) == 0, "%s", err);
    unlink(path);
    sim_sale_judge(&log, v);
    sim_sale_log_free(&log);
}

/* Buyer 0 sells segment 0 dry, buyer 1 segment 1; both say sold out
 * after seeing both empty. Times in ns after t0 = 1000. */
#define CLEAN_SALE \
    "1100 0 0 L 0\n1200 0 0 R 2\n1300 0 0 S 1\n1400 0 0 U 0\n" \
    "1500 0 0 L 0\n1600 0 0 R 1\n1700 0 0 S 0\n1800 0 0 U 0\n" \
    "1150 1 1 L 0\n1250 1 1 R 2\n1350 1 1 S 1\n1450 1 1 U 0\n" \
    "1550 1 1 L 0\n1650 1 1 R 1\n1750 1 1 S 0\n1850 1 1 U 0\n"

START_TEST(test_sale_judge_clean)
{
    static sim_sale_verdict v;

    judge(CLEAN_SALE "1900 0 1 O 2\n1950 1 0 O 2\n", &v);
    ck_assert_msg(sim_sale_clean(&v), "a clean history judged unclean: sold %ld, oversold %ld, "
                  "false sold-outs %d", v.sold, v.oversold, v.false_soldouts);
    ck_assert_int_eq(v.seg[0].dry_ns, 700);
    ck_assert_int_eq(v.holds, 4);
}
END_TEST

/* A stock value written twice is a unit sold twice; a read above the
 * last acknowledged write is a lost write; a lock taken while held is a
 * double hold; a sold-out while segment 1 holds stock is false; a buyer
 * that died before "sold out" is told. */
START_TEST(test_sale_judge_anomalies)
{
    static sim_sale_verdict v;

    judge("1100 0 0 L 0\n1200 0 0 R 2\n1300 0 0 S 1\n1400 0 0 U 0\n"
          "1500 1 0 L 0\n1600 1 0 R 2\n1700 1 0 S 1\n1750 0 0 L 0\n1800 1 0 U 0\n"
          "1900 0 0 R 1\n2000 0 0 S 0\n2100 0 0 U 0\n2200 0 0 O 1\n2300 1 0 D 141\n", &v);
    ck_assert_msg(v.lost_updates == 1 && v.oversold == 1 && v.dup[0].value == 1,
                  "stock 1 written twice: %ld lost updates, %ld oversold", v.lost_updates,
                  v.oversold);
    ck_assert_msg(v.stale_reads == 1 && v.stale[0].value == 2 && v.stale[0].acked == 1,
                  "the read of 2 after the write of 1: %ld stale reads", v.stale_reads);
    ck_assert_msg(v.double_holds == 1 && v.dbl[0].buyer[0] == 1 && v.dbl[0].buyer[1] == 0,
                  "buyer 0 took the lock while buyer 1 held it: %ld double holds",
                  v.double_holds);
    ck_assert_msg(v.false_soldouts == 1 && v.false_out[0].held[1] == 2,
                  "sold out while segment 1 held 2: %d false sold-outs", v.false_soldouts);
    ck_assert_msg(v.died == 1 && v.died_buyer == 1 && v.died_status == 141,
                  "buyer 1 died of SIGPIPE: %d deaths told", v.died);
    ck_assert(!sim_sale_clean(&v));
}
END_TEST

Suite *sale_suite(void)
{
    const TTest *const sales[] = {
        test_sale_one_segment, test_sale_four_segments, test_sale_first_empty_lies,
        test_sale_pause_stalls_one_segment,
    };
    const TTest *const failover[] = { test_sale_failover_oversells };
    const TTest *const judged[] = { test_sale_judge_clean, test_sale_judge_anomalies };
    Suite *s = suite_create("sale");
    TCase *tc = ADD_TCASE(s, "judge", judged);

    tc = ADD_TCASE(s, "sales", sales);

    tcase_add_unchecked_fixture(tc, sale_setup, sale_teardown);
    tcase_set_timeout(tc, TCASE_TIMEOUT_S);
    tc = ADD_TCASE(s, "failover", failover);
    tcase_add_unchecked_fixture(tc, sale_setup, sale_teardown);
    tcase_set_timeout(tc, TCASE_TIMEOUT_S);
    return s;
}
