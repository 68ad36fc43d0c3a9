/* zk_dump: whether a ZooKeeper server's dump lists a session. See
 * zk_dump.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zk_dump.h"

#define TRACKER "SessionTracker dump:"
#define EPHEMERALS "ephemeral nodes dump:"
#define LEADER_SETS "Sets ("       /* "Session Sets (<buckets>)/(<sessions>):" */
#define FOLLOWER_SETS "Sessions("  /* "Global Sessions(<sessions>):" */

/* Whether the line at line (up to end) is the session: "0x<hex>" alone,
 * after a TAB on a leader, or before one on a follower. */
static int names(const char *line, const char *end, const char *want)
{
    size_t n = strlen(want);

    if (line < end && *line == '\t')
        line++;
    return (size_t)(end - line) >= n && strncmp(line, want, n) == 0 &&
           (line + n == end || line[n] == '\t' || line[n] == '\r');
}

/* How many sessions the tracker's part lists, and whether one is want;
 * a bucket's header ("<n> expire at ...:") is no session. */
static int count(const char *from, const char *end, const char *want, int *listed)
{
    const char *line, *eol;
    int sessions = 0;

    *listed = 0;
    for (line = from; line < end; line = eol + 1) {
        if ((eol = memchr(line, '\n', (size_t)(end - line))) == NULL)
            eol = end;
        if (strncmp(line, "0x", 2) == 0 || strncmp(line, "\t0x", 3) == 0) {
            sessions++;
            *listed |= names(line, eol, want);
        }
    }
    return sessions;
}

int sim_zk_dump_lists(const char *dump, int64_t session)
{
    const char *tracker = strstr(dump, TRACKER), *end, *sets, *line;
    char want[32];
    int buckets, tracked, listed;

    if (tracker == NULL)
        return -1;
    if ((end = strstr(tracker, EPHEMERALS)) == NULL)
        end = tracker + strlen(tracker);
    snprintf(want, sizeof(want), "0x%llx", (unsigned long long)session);
    if ((sets = strstr(tracker, LEADER_SETS)) != NULL && sets < end &&
        sscanf(sets, LEADER_SETS "%d)/(%d):", &buckets, &tracked) == 2)
        line = sets;
    else if ((sets = strstr(tracker, FOLLOWER_SETS)) != NULL && sets < end &&
             sscanf(sets, FOLLOWER_SETS "%d):", &tracked) == 1)
        line = sets;
    else
        return -1;
    if ((line = strchr(line, '\n')) == NULL || line > end)
        return tracked == 0 ? 0 : -1;
    if (count(line + 1, end, want, &listed) != tracked)
        return listed ? 1 : -1;
    return listed;
}
