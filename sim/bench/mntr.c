/* mntr: a ZooKeeper server's counters from its mntr answer. See mntr.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mntr.h"
#include "util.h"

/* The kinds of event a watch fires on, as mntr names their sums. */
static const char *const watch_keys[] = {
    "zk_sum_node_created_watch_count", "zk_sum_node_deleted_watch_count",
    "zk_sum_node_changed_watch_count", "zk_sum_node_children_watch_count",
};

int sim_mntr_value(const char *text, const char *key, char *out, size_t outlen)
{
    size_t klen = strlen(key), n;
    const char *line, *end;

    /* A key only at the start of a line, followed by its tab: never the
     * tail of a longer name, nor a value. */
    for (line = text; line != NULL && *line != '\0'; line = end ? end + 1 : NULL) {
        end = strchr(line, '\n');
        if (strncmp(line, key, klen) != 0 || line[klen] != '\t')
            continue;
        line += klen + 1;
        n = end != NULL ? (size_t)(end - line) : strlen(line);
        if (n > 0 && line[n - 1] == '\r')
            n--;
        snprintf(out, outlen, "%.*s", (int)n, line);
        return 0;
    }
    return -1;
}

/* A metric that is a count: a whole number >= 0. */
static int count(const char *text, const char *key, long long *v, char *errstr, size_t len)
{
    char value[64], *end;

    if (sim_mntr_value(text, key, value, sizeof(value)) != 0)
        return sim_error(errstr, len, "mntr has no %s: the bench needs ZooKeeper 3.6 or later",
                         key);
    errno = 0;
    *v = strtoll(value, &end, 10);
    if (errno != 0 || end == value || *end != '\0' || *v < 0)
        return sim_error(errstr, len, "mntr's %s is \"%s\", not a count", key, value);
    return 0;
}

int sim_mntr_parse(const char *text, sim_mntr *m, char *errstr, size_t len)
{
    long long w;
    size_t i;

    if (count(text, "zk_packets_received", &m->packets, errstr, len) != 0 ||
        count(text, "zk_connection_request_count", &m->sessions, errstr, len) != 0)
        return -1;
    m->watches = 0;
    for (i = 0; i < sizeof(watch_keys) / sizeof(watch_keys[0]); i++) {
        if (count(text, watch_keys[i], &w, errstr, len) != 0)
            return -1;
        m->watches += w;
    }
    return 0;
}

void sim_mntr_add(sim_mntr *sum, const sim_mntr *one)
{
    sum->packets += one->packets;
    sum->sessions += one->sessions;
    sum->watches += one->watches;
    sum->asked += one->asked;
}

int sim_mntr_delta_of(const sim_mntr *before, const sim_mntr *after, sim_mntr_delta *d,
                      char *errstr, size_t len)
{
    long long packets = after->packets - before->packets;
    long long asked = after->asked - before->asked;

    d->sessions = after->sessions - before->sessions;
    d->watches = after->watches - before->watches;
    if (packets < 0 || d->sessions < 0 || d->watches < 0)
        return sim_error(errstr, len, "a ZooKeeper server's counters went back (from %lld "
                         "packets to %lld): it restarted between two readings",
                         before->packets, after->packets);
    d->requests = packets - asked - 2 * d->sessions;
    if (asked < 0 || d->requests < 0)
        return sim_error(errstr, len, "%lld packets cannot hold %lld asked words and %lld "
                         "sessions' opens and closes: were the readings swapped?", packets,
                         asked, d->sessions);
    return 0;
}
