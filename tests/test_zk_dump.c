/* test_zk_dump: whether a ZooKeeper server's dump lists a session
 * (zk_dump.h), on real answers of the simulator's servers (3.8): a
 * leader's whole dump, a follower's, a leader's after a session expired,
 * and a leader's torn dump, which lists one session of the three its
 * tracker held. That one was asked when A's release deleted its node
 * under two busy loops, and told A's session (0x10000c8dc980000, open)
 * expired. No server. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tcases.h"
#include "zk_dump.h"

/* A leader, four sessions in five buckets that hold any. */
static const char leader[] =
    "SessionTracker dump:\n"
    "Session Sets (10)/(4):\n"
    "0 expire at Fri Nov 27 07:06:09 UTC 2026:\n"
    "0 expire at Fri Nov 27 07:06:10 UTC 2026:\n"
    "1 expire at Fri Nov 27 07:06:10 UTC 2026:\n"
    "\t0x10000cd06450001\n"
    "2 expire at Fri Nov 27 07:06:10 UTC 2026:\n"
    "\t0x30000cd060e0001\n"
    "\t0x30000cd060e0002\n"
    "0 expire at Fri Nov 27 07:06:18 UTC 2026:\n"
    "0 expire at Fri Nov 27 07:06:18 UTC 2026:\n"
    "0 expire at Fri Nov 27 07:06:18 UTC 2026:\n"
    "0 expire at Fri Nov 27 07:06:19 UTC 2026:\n"
    "0 expire at Fri Nov 27 07:06:19 UTC 2026:\n"
    "1 expire at Fri Nov 27 07:06:19 UTC 2026:\n"
    "\t0x30000cd060e0000\n"
    "ephemeral nodes dump:\n"
    "Sessions with Ephemerals (1):\n"
    "0x30000cd060e0002:\n"
    "\t/lockstep/stock\n";

/* A follower of a failover's ensemble. */
static const char follower[] =
    "SessionTracker dump:\n"
    "Global Sessions(2):\n"
    "0x20000ccf5dd0000\t10000ms\n"
    "0x30000ccf6400000\t3600ms\n"
    "ephemeral nodes dump:\n"
    "Sessions with Ephemerals (0):\n";

/* A gc-pause's leader just after the paused holder's session
 * (0x10000cd06450000) expired: only the observer's is left. */
static const char expired[] =
    "SessionTracker dump:\n"
    "Session Sets (4)/(1):\n"
    "0 expire at Fri Nov 27 07:06:18 UTC 2026:\n"
    "0 expire at Fri Nov 27 07:06:18 UTC 2026:\n"
    "0 expire at Fri Nov 27 07:06:18 UTC 2026:\n"
    "1 expire at Fri Nov 27 07:06:19 UTC 2026:\n"
    "\t0x30000cd060e0000\n"
    "ephemeral nodes dump:\n"
    "Sessions with Ephemerals (0):\n";

/* Torn: three sessions tracked, one listed. */
static const char torn[] =
    "SessionTracker dump:\n"
    "Session Sets (12)/(3):\n"
    "0 expire at Fri Nov 27 07:01:37 UTC 2026:\n"
    "0 expire at Fri Nov 27 07:01:37 UTC 2026:\n"
    "0 expire at Fri Nov 27 07:01:37 UTC 2026:\n"
    "0 expire at Fri Nov 27 07:01:37 UTC 2026:\n"
    "0 expire at Fri Nov 27 07:01:37 UTC 2026:\n"
    "0 expire at Fri Nov 27 07:01:46 UTC 2026:\n"
    "0 expire at Fri Nov 27 07:01:46 UTC 2026:\n"
    "0 expire at Fri Nov 27 07:01:46 UTC 2026:\n"
    "0 expire at Fri Nov 27 07:01:46 UTC 2026:\n"
    "0 expire at Fri Nov 27 07:01:47 UTC 2026:\n"
    "0 expire at Fri Nov 27 07:01:47 UTC 2026:\n"
    "1 expire at Fri Nov 27 07:01:47 UTC 2026:\n"
    "\t0x30000c8dccc0000\n";

static void expect(const char *dump, const char *which, int64_t session, int want)
{
    int got = sim_zk_dump_lists(dump, session);

    ck_assert_msg(got == want, "%s dump, session 0x%llx: %d; expected %d", which,
                  (unsigned long long)session, got, want);
}

START_TEST(test_zk_dump_leader_lists_each_session)
{
    expect(leader, "a leader's", INT64_C(0x10000cd06450001), 1);
    expect(leader, "a leader's", INT64_C(0x30000cd060e0002), 1);
    expect(leader, "a leader's", INT64_C(0x30000cd060e0000), 1);
    /* a prefix of a listed one is another session */
    expect(leader, "a leader's", INT64_C(0x30000cd060e), 0);
}
END_TEST

START_TEST(test_zk_dump_follower_lists_each_session)
{
    expect(follower, "a follower's", INT64_C(0x20000ccf5dd0000), 1);
    expect(follower, "a follower's", INT64_C(0x30000ccf6400000), 1);
    expect(follower, "a follower's", INT64_C(0x30000ccf6400001), 0);
}
END_TEST

START_TEST(test_zk_dump_expired_session_not_listed)
{
    expect(expired, "an expiry's", INT64_C(0x10000cd06450000), 0);
    expect(expired, "an expiry's", INT64_C(0x30000cd060e0000), 1);
}
END_TEST

/* The run's A: not listed, yet open. The dump cannot say so. */
START_TEST(test_zk_dump_torn_says_nothing_of_the_missing)
{
    expect(torn, "a torn", INT64_C(0x10000c8dc980000), -1);
    expect(torn, "a torn", INT64_C(0x30000c8dccc0000), 1);
}
END_TEST

/* The ephemeral part names sessions too, open or not: it is not asked. */
START_TEST(test_zk_dump_ephemerals_are_not_sessions)
{
    char dump[sizeof(expired) + 64];

    snprintf(dump, sizeof(dump), "%s0x10000cd06450000:\n\t/lockstep/stock\n", expired);
    expect(dump, "an expiry's", INT64_C(0x10000cd06450000), 0);
}
END_TEST

START_TEST(test_zk_dump_not_a_dump)
{
    expect("", "an empty", 1, -1);
    expect("This ZooKeeper instance is not currently serving requests\n", "a starting server's",
           1, -1);
    expect("dump is not executed because it is not in the whitelist.\n", "a refused", 1, -1);
    expect("SessionTracker dump:\nSession Sets (0)/(0):\nephemeral nodes dump:\n", "an empty "
           "server's", 1, 0);
}
END_TEST

Suite *zk_dump_suite(void)
{
    const tcase_row tcases[] = {
        TCASE_ROW("lists",
                  test_zk_dump_leader_lists_each_session, test_zk_dump_follower_lists_each_session,
                  test_zk_dump_expired_session_not_listed),
        TCASE_ROW("torn",
                  test_zk_dump_torn_says_nothing_of_the_missing,
                  test_zk_dump_ephemerals_are_not_sessions, test_zk_dump_not_a_dump),
    };

    return TABLE_SUITE("zk_dump", tcases, add_tcase);
}
