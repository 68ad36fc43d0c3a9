/* report_nodes: a lock of several nodes in words: what happened to each
 * node (a lock of one server: to the server), and who held which of them
 * when the story turned. The story
 * (report_story.c) tells both in its time order. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "report_internal.h"

/* " and lost A's key" for the key node k lost at t (it ended then), ""
 * for none. */
static void key_lost(char *buf, size_t len, const sim_verdict *v, int k, int64_t t)
{
    char who[SIM_REPORT_NAME];

    buf[0] = '\0';
    for (size_t i = 0; i < v->n_keys; i++)
        if (v->keys[i].node == k && v->keys[i].to_ns == t)
            sim_report_put(buf, len, " and lost %s's key", sim_report_who(who,
                           sizeof(who), v->keys[i].owner, 0));
}

/* What a clock jump at t did to the key node k held then: "; A's key
 * there expired at 125 ms", "" when it held none. An ensemble's node
 * (sessions) has no TTL and goes with its session: "; A's node went with
 * its session at ...", or outlived the jump. */
static void jump_did(char *buf, size_t len, const sim_verdict *v, const sim_event *ev,
                     size_t n, int k, int64_t t, int64_t t0, int sessions)
{
    const char *there = v->nodes > 1 ? " there" : "";
    char who[SIM_REPORT_NAME];

    buf[0] = '\0';
    for (size_t i = 0; i < v->n_keys; i++) {
        const sim_key_span *s = &v->keys[i];
        int expired;

        if (s->node != k || s->from_ns > t || s->to_ns <= t)
            continue;
        sim_report_who(who, sizeof(who), s->owner, 0);
        expired = s->to_ns != INT64_MAX && sim_report_key_ended(ev, n, k, s->to_ns, "expired");
        if (sessions && expired)
            sim_report_put(buf, len, "; %s's node went with its session at %ld ms", who,
                           sim_report_ms(s->to_ns, t0));
        else if (sessions)
            sim_report_put(buf, len, "; %s's node and its session outlived it: ZooKeeper "
                           "times sessions by the monotonic clock", who);
        else if (s->ttl_ns > t)
            sim_report_put(buf, len, "; %s's key%s has no TTL and stayed", who, there);
        else if (expired)
            sim_report_put(buf, len, "; %s's key%s expired at %ld ms", who, there,
                           sim_report_ms(s->to_ns, t0));
        else
            sim_report_put(buf, len, "; %s's key%s outlived it", who, there);
    }
}

/* "node 2's clock jumped 600 ms forward at 120 ms; A's key there
 * expired at 125 ms", "the server's ..." for a lock of one, and "every
 * server's ..." for an ensemble's jump (its detail names whose clocks). */
static void jump_say(char *buf, size_t len, const sim_verdict *v, const sim_event *ev,
                     size_t n, const sim_event *e, int64_t t0)
{
    char did[SIM_REPORT_SENTENCE / 2], whose[32];
    int ensemble = strcmp(e->detail, "forward") != 0;

    jump_did(did, sizeof(did), v, ev, n, e->node, e->t_ns, t0, ensemble);
    if (ensemble)
        sim_report_put(whose, sizeof(whose), "%s's", e->detail);
    else if (v->nodes < 2)
        sim_report_put(whose, sizeof(whose), "the server's");
    else
        sim_report_put(whose, sizeof(whose), "node %d's", e->node);
    sim_report_put(buf, len, "%s clock jumped %lld ms forward at %ld ms%s", whose,
                   (long long)e->value, sim_report_ms(e->t_ns, t0), did);
}

int sim_report_node_fault(char *buf, size_t len, const sim_verdict *v,
                          const sim_event *ev, size_t n, const sim_event *e,
                          int64_t t0_ns)
{
    int promote = e->type == SIM_EV_FAILOVER && strncmp(e->detail, "promote", 7) == 0;
    const char *what = e->type == SIM_EV_NODE_DOWN ? "went down"
                       : e->type == SIM_EV_RESTART ? "restarted empty"
                       : promote ? "failed over to a replica without the key" : NULL;
    char lost[SIM_REPORT_NAME + 24];

    if (e->type == SIM_EV_CLOCK_JUMP) {
        jump_say(buf, len, v, ev, n, e, t0_ns);
        return 1;
    }
    if (what == NULL)
        return 0;
    key_lost(lost, sizeof(lost), v, e->node, e->t_ns);
    /* One server: the drawing's '^' or '>' alone would leave the reader
     * to find when the lock's only copy went. */
    if (v->nodes < 2)
        sim_report_put(buf, len, "the %s %s at %ld ms%s", promote ? "primary" : "server",
                       what, sim_report_ms(e->t_ns, t0_ns), lost);
    else
        sim_report_put(buf, len, "node %d %s at %ld ms%s", e->node, what,
                       sim_report_ms(e->t_ns, t0_ns), lost);
    return 1;
}

/* "nodes 0, 3 and 4": the nodes whose owner is who, in a phrase. */
static int nodes_of(char *buf, size_t len, const int *owner, int nodes, int who)
{
    int count = 0, seen = 0;
    size_t used = 0;

    for (int k = 0; k < nodes; k++)
        count += owner[k] == who;
    for (int k = 0; k < nodes && used < len; k++)
        if (owner[k] == who)
            used += (size_t)snprintf(buf + used, len - used, "%s%d", seen++ == 0 ?
                                     (count > 1 ? "nodes " : "node ") :
                                     seen == count ? " and " : ", ", k);
    return count;
}

/* "B's key was on nodes 0, 3 and 4, a majority; A's on nodes 1 and 2":
 * who had which nodes at t, the most first. */
static void majority_at(char *buf, size_t len, const sim_verdict *v, int64_t t)
{
    int owner[SIM_HISTORY_NODES_MAX], told[SIM_HISTORY_NODES_MAX] = { 0 };
    int nodes = v->nodes < SIM_HISTORY_NODES_MAX ? v->nodes : SIM_HISTORY_NODES_MAX;
    size_t used = 0;

    for (int k = 0; k < nodes; k++) {
        owner[k] = SIM_NO_CLIENT;
        for (size_t i = 0; i < v->n_keys; i++)
            if (v->keys[i].node == k && v->keys[i].from_ns <= t && t < v->keys[i].to_ns)
                owner[k] = v->keys[i].owner;
    }
    buf[0] = '\0';
    for (int most = nodes; most > 0 && used < len; most--)
        for (int k = 0; k < nodes && used < len; k++) {
            char who[SIM_REPORT_NAME], on[SIM_REPORT_NAME * 2];

            if (owner[k] == SIM_NO_CLIENT || told[k] ||
                nodes_of(on, sizeof(on), owner, nodes, owner[k]) != most)
                continue;
            for (int j = k; j < nodes; j++)
                told[j] |= owner[j] == owner[k];
            used += (size_t)snprintf(buf + used, len - used, "%s%s's %s on %s%s",
                                     used ? "; " : "", sim_report_who(who, sizeof(who),
                                     owner[k], 0), used ? "" : "key was", on,
                                     2 * most > nodes ? ", a majority" : "");
        }
}

int sim_report_majority(char *buf, size_t len, const sim_verdict *v,
                        const sim_event *ev, size_t n, int64_t t0_ns,
                        int64_t *at_ns)
{
    const sim_episode *me = sim_verdict_first(v, SIM_ANOM_ME);
    char at[SIM_REPORT_SENTENCE / 2], who[SIM_REPORT_NAME];
    char held[SIM_REPORT_SENTENCE];
    int64_t t = -1;

    if (v->nodes < 2)
        return 0;
    if (me != NULL) {
        t = me->me.from_ns;
        sim_report_put(at, sizeof(at), "at %ld ms", sim_report_ms(t, t0_ns));
    }
    for (size_t i = 0; me == NULL && ev != NULL && i < n; i++)
        if (ev[i].type == SIM_EV_ACQUIRE_BUSY) {
            t = ev[i].t_ns;
            sim_report_put(at, sizeof(at), "when %s gave up at %ld ms",
                           sim_report_who(who, sizeof(who), ev[i].client, ev[i].thread),
                           sim_report_ms(t, t0_ns));
            break;
        }
    if (t < 0)
        return 0;
    majority_at(held, sizeof(held), v, t);
    if (held[0] == '\0')
        return 0;
    sim_report_put(buf, len, "%s, %s", at, held);
    *at_ns = t;
    return 1;
}
