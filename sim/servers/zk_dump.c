/* zk_dump: whether a ZooKeeper server's dump lists a session. See
 * zk_dump.h. */
#include <stdio.h>
#include <string.h>

#include "zk_dump.h"

#define TRACKER "SessionTracker dump:"
#define EPHEMERALS "ephemeral nodes dump:"
#define LEADER_SETS "Sets ("       /* "Session Sets (<buckets>)/(<sessions>):" */
#define FOLLOWER_SETS "Sessions("  /* "Global Sessions(<sessions>):" */

/* Where the tracker's header is, and how many sessions it says it
 * tracks: a leader's, or a follower's. NULL when neither comes before
 * end. */
static const char *header(const char *tracker, const char *end, int *tracked)
{
    const char *at;
    int buckets;

    if ((at = strstr(tracker, LEADER_SETS)) != NULL && at < end &&
        sscanf(at, LEADER_SETS "%d)/(%d):", &buckets, tracked) == 2)
        return at;
    if ((at = strstr(tracker, FOLLOWER_SETS)) != NULL && at < end &&
        sscanf(at, FOLLOWER_SETS "%d):", tracked) == 1)
        return at;
    return NULL;
}

/* How many sessions the lines from..end list ("0x<hex>", after a TAB on
 * a leader, before one on a follower), and whether one is want; a
 * bucket's header ("<n> expire at ...:") is no session. */
static int count(const char *from, const char *end, const char *want, int *listed)
{
    size_t n = strlen(want);
    const char *line, *eol, *id;
    int sessions = 0;

    *listed = 0;
    for (line = from; line < end; line = eol + 1) {
        if ((eol = memchr(line, '\n', (size_t)(end - line))) == NULL)
            eol = end;
        id = line + (*line == '\t');
        if (strncmp(id, "0x", 2) != 0)
            continue;
        sessions++;
        *listed |= (size_t)(eol - id) >= n && strncmp(id, want, n) == 0 &&
                   (id + n == eol || id[n] == '\t' || id[n] == '\r');
    }
    return sessions;
}

int sim_zk_dump_lists(const char *dump, int64_t session)
{
    const char *tracker = strstr(dump, TRACKER), *end, *list;
    char want[32];
    int tracked, listed;

    if (tracker == NULL)
        return -1;
    if ((end = strstr(tracker, EPHEMERALS)) == NULL)
        end = tracker + strlen(tracker);
    if ((list = header(tracker, end, &tracked)) == NULL)
        return -1;
    if ((list = strchr(list, '\n')) == NULL || list > end)
        return tracked == 0 ? 0 : -1;
    snprintf(want, sizeof(want), "0x%llx", (unsigned long long)session);
    if (count(list + 1, end, want, &listed) != tracked)
        return listed ? 1 : -1;
    return listed;
}
