/* test_clock: the clock-jump fault moves one server's wall clock, and
 * only its own.
 *
 * Two redis-servers run under the clock library (sim/servers/clockshim.c,
 * build/clockshim.so next to this stage's folder of the build), as the
 * simulator starts the nodes of a clock-jump run. A key with a TTL on
 * each; node 0's clock jumps J ms forward: its key's PTTL is J ms
 * shorter (and no more than the time the test itself took between the
 * two readings), node 1's is not; a second jump past the TTL ends node
 * 0's key, and node 1's lives on. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "suites.h"

#define TTL_MS 60000   /* far longer than the test: only a jump ends it */
#define JUMP_MS 3000

/* Each node's key's PTTL, and the ms the two readings took between them. */
static void pttls(redisContext *c[2], long long ttl[2], long long *took)
{
    int64_t began = harness_now_ms();

    ttl[0] = harness_int(c[0], "PTTL k");
    ttl[1] = harness_int(c[1], "PTTL k");
    *took = harness_now_ms() - began;
}

START_TEST(test_clock_jump_moves_one_server)
{
    char shim[PATH_MAX], err[HARNESS_ERRSTR_LEN];
    long long before[2], after[2], took0, took1, between;
    redisContext *c[2];
    sim_cluster cl;
    int64_t since;

    harness_title("a clock jump of %d ms shortens that server's TTLs only", JUMP_MS);
    harness_clock_shim(shim, sizeof(shim));
    ck_assert_msg(sim_cluster_start_clock(&cl, 2, 0, shim, err, sizeof(err)) == 0,
                  "cannot start two servers under the clock library: %s", err);
    for (int i = 0; i < 2; i++) {
        c[i] = harness_connect(&cl.node[i]);
        harness_status(c[i], "SET k v PX %d", TTL_MS);
    }
    pttls(c, before, &took0);
    since = harness_now_ms();
    ck_assert_msg(sim_cluster_clock_jump(&cl, 0, JUMP_MS, err, sizeof(err)) == 0, "%s", err);
    pttls(c, after, &took1);
    /* Every ms that passed between the two readings of a key, at most. */
    between = harness_now_ms() - since + took0 + took1 + 2;
    ck_assert_msg(before[0] - after[0] >= JUMP_MS && before[0] - after[0] <= JUMP_MS + between,
                  "node 0's clock jumped %d ms: its key's PTTL went from %lld to %lld ms, "
                  "expected %d ms shorter (and at most %lld ms more)", JUMP_MS, before[0],
                  after[0], JUMP_MS, between);
    ck_assert_msg(before[1] - after[1] >= 0 && before[1] - after[1] <= between,
                  "node 1's clock did not jump, yet its key's PTTL went from %lld to %lld ms",
                  before[1], after[1]);
    ck_assert_msg(sim_cluster_clock_jump(&cl, 0, TTL_MS, err, sizeof(err)) == 0, "%s", err);
    ck_assert_msg(harness_int(c[0], "EXISTS k") == 0, "node 0's clock jumped past its "
                  "key's TTL, and the key is still there");
    ck_assert_msg(harness_int(c[1], "EXISTS k") == 1, "node 1's key is gone, though its "
                  "clock never jumped");
    for (int i = 0; i < 2; i++)
        redisFree(c[i]);
    sim_cluster_stop(&cl);
}
END_TEST

/* Servers started without the library: a jump is refused, in words. */
START_TEST(test_clock_jump_needs_the_library)
{
    char err[HARNESS_ERRSTR_LEN];
    sim_cluster cl;

    harness_title("a clock jump on a server without the clock library is refused");
    ck_assert_msg(sim_cluster_start(&cl, 1, 0, err, sizeof(err)) == 0, "%s", err);
    ck_assert_int_eq(sim_cluster_clock_jump(&cl, 0, JUMP_MS, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "clock library") != NULL, "the refusal says: %s", err);
    sim_cluster_stop(&cl);
}
END_TEST

Suite *clock_suite(void)
{
    const TTest *tests[] = { test_clock_jump_moves_one_server, test_clock_jump_needs_the_library };

    return OWN_SERVERS_SUITE("clock", "clock jump", tests);
}
