/* report_links: a client cut off from the lock's servers, in words:
 * when and for how long, what became of its key meanwhile, and who
 * waited through it. The story (report_story.c) tells it in its time
 * order, at the cut's start. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "report_internal.h"

/* Event i begins a cut of its client: no earlier cut of that client is
 * still open (a cut of several nodes is an event per node). */
static int cut_begins(const sim_event *ev, size_t i)
{
    if (ev[i].type != SIM_EV_CUT_BEGIN)
        return 0;
    for (size_t j = i; j-- > 0;)
        if (ev[j].client == ev[i].client &&
            (ev[j].type == SIM_EV_CUT_BEGIN || ev[j].type == SIM_EV_CUT_END))
            return ev[j].type == SIM_EV_CUT_END;
    return 1;
}

/* The cut that event i begins: its nodes (a bit each) and its end, the
 * client's next cut-end (INT64_MAX: the run ended first). */
static unsigned cut_nodes(const sim_event *ev, size_t n, size_t i, int64_t *end)
{
    unsigned nodes = 0;

    *end = INT64_MAX;
    for (size_t j = i; j < n; j++) {
        if (ev[j].client != ev[i].client)
            continue;
        if (ev[j].type == SIM_EV_CUT_END) {
            *end = ev[j].t_ns;
            break;
        }
        if (ev[j].type == SIM_EV_CUT_BEGIN && ev[j].node >= 0 && ev[j].node < 32)
            nodes |= 1u << ev[j].node;
    }
    return nodes;
}

/* "the lock's servers", or "nodes 3 and 4" for some of several. */
static void which_nodes(char *buf, size_t len, unsigned nodes, int all)
{
    int count = 0, seen = 0;
    size_t used;

    for (int k = 0; k < 32; k++)
        count += (nodes >> k) & 1u;
    if (nodes == ((1u << all) - 1) || all < 2) {
        sim_report_put(buf, len, "the lock's servers");
        return;
    }
    used = (size_t)snprintf(buf, len, "%s", count > 1 ? "nodes " : "node ");
    for (int k = 0; k < all && used < len; k++)
        if (nodes & (1u << k))
            used += (size_t)snprintf(buf + used, len - used, "%s%d", seen++ == 0 ? ""
                                     : seen == count ? " and " : ", ", k);
}

/* When client's hold that t falls in ends: its next release, its crash,
 * or the run's end. */
static int64_t hold_end(const sim_event *ev, size_t n, int client, int64_t t)
{
    for (size_t j = 0; j < n; j++)
        if (ev[j].client == client && ev[j].t_ns > t &&
            (ev[j].type == SIM_EV_RELEASE_INVOKE || ev[j].type == SIM_EV_CRASH))
            return ev[j].t_ns;
    return n > 0 ? ev[n - 1].t_ns : t;
}

/* 1 when client was inside its critical section at t. */
static int inside_at(const sim_event *ev, size_t n, int client, int64_t t)
{
    int in = 0;

    for (size_t j = 0; j < n && ev[j].t_ns <= t; j++)
        if (ev[j].client == client &&
            (ev[j].type == SIM_EV_CS_ENTER || ev[j].type == SIM_EV_CS_EXIT))
            in = ev[j].type == SIM_EV_CS_ENTER;
    return in;
}

int sim_report_key_ended(const sim_event *ev, size_t n, int node, int64_t t,
                         const char *how)
{
    for (size_t j = 0; j < n; j++)
        if (ev[j].t_ns == t && ev[j].type == SIM_EV_KEY && ev[j].node == node &&
            strcmp(ev[j].detail, how) == 0)
            return 1;
    return 0;
}

/* What became of client's keys on the cut nodes during the cut (until
 * to, or the end of its hold if that came first): "; its key expired at
 * 300 ms while A was inside", "; its key has no TTL and stayed", "; its
 * key outlived the cut"; "" when it had none there. */
static void keys_meanwhile(char *buf, size_t len, const sim_verdict *v, const sim_event *ev,
                           size_t n, int client, unsigned nodes, int64_t from, int64_t to,
                           int64_t t0)
{
    int alive = 0, expired = 0, no_ttl = 0;
    int64_t end = hold_end(ev, n, client, from), first = INT64_MAX;

    if (to < end)
        end = to;
    char who[SIM_REPORT_NAME];

    buf[0] = '\0';
    for (size_t k = 0; k < v->n_keys; k++) {
        const sim_key_span *s = &v->keys[k];

        if (s->owner != client || s->node < 0 || s->node >= 32 || !(nodes & (1u << s->node)) ||
            s->from_ns > from || s->to_ns <= from)
            continue;
        alive++;
        no_ttl += s->ttl_ns > end;
        if (s->to_ns <= end && sim_report_key_ended(ev, n, s->node, s->to_ns, "expired")) {
            expired++;
            first = s->to_ns < first ? s->to_ns : first;
        }
    }
    sim_report_who(who, sizeof(who), client, 0);
    if (expired > 0)
        sim_report_put(buf, len, "; its %s expired at %ld ms while %s was %s",
                       alive > 1 ? "keys" : "key", sim_report_ms(first, t0), who,
                       inside_at(ev, n, client, first) ? "inside" : "still holding the lock");
    else if (alive > 0 && no_ttl == alive)
        sim_report_put(buf, len, "; its %s no TTL and stayed", alive > 1 ? "keys have" : "key has");
    else if (alive > 0)
        sim_report_put(buf, len, "; its %s the cut", alive > 1 ? "keys outlived" : "key outlived");
}

/* ", and B waited from 60 ms to 1101 ms": every other client whose
 * acquire was waiting when the cut ended, and when that wait ended. */
static void waiters(char *buf, size_t len, const sim_event *ev, size_t n, int client,
                    int64_t from, int64_t to, int64_t t0)
{
    size_t used = 0;

    buf[0] = '\0';
    for (size_t j = 0; j < n && used < len; j++) {
        char who[SIM_REPORT_NAME];
        int64_t out = INT64_MAX;

        if (ev[j].type != SIM_EV_ACQUIRE_INVOKE || ev[j].client == client || ev[j].t_ns > to)
            continue;
        for (size_t k = j + 1; k < n && out == INT64_MAX; k++)
            if (ev[k].client == ev[j].client && ev[k].thread == ev[j].thread &&
                (ev[k].type == SIM_EV_ACQUIRE_OK || ev[k].type == SIM_EV_ACQUIRE_BUSY ||
                 ev[k].type == SIM_EV_ACQUIRE_ERROR || ev[k].type == SIM_EV_CRASH))
                out = ev[k].t_ns;
        if (out < to || out < from)
            continue;
        sim_report_who(who, sizeof(who), ev[j].client, ev[j].thread);
        if (out == INT64_MAX)
            used += (size_t)snprintf(buf + used, len - used, ", and %s waited from %ld ms "
                                     "to the end of the run", who, sim_report_ms(ev[j].t_ns, t0));
        else
            used += (size_t)snprintf(buf + used, len - used, ", and %s waited from %ld ms "
                                     "to %ld ms", who, sim_report_ms(ev[j].t_ns, t0),
                                     sim_report_ms(out, t0));
    }
}

int sim_report_cut(char *buf, size_t len, const sim_verdict *v, const sim_event *ev,
                   size_t n, size_t i, int64_t t0_ns)
{
    char who[SIM_REPORT_NAME], where[SIM_REPORT_NAME * 2], span[64];
    char keys[SIM_REPORT_SENTENCE / 2], waited[SIM_REPORT_SENTENCE / 2];
    int64_t end;
    unsigned nodes;

    if (!cut_begins(ev, i))
        return 0;
    nodes = cut_nodes(ev, n, i, &end);
    sim_report_who(who, sizeof(who), ev[i].client, 0);
    which_nodes(where, sizeof(where), nodes, v->nodes);
    if (end == INT64_MAX)
        sim_report_put(span, sizeof(span), "until the end of the run");
    else
        sim_report_put(span, sizeof(span), "for %ld ms", (long)((end - ev[i].t_ns) / 1000000));
    keys_meanwhile(keys, sizeof(keys), v, ev, n, ev[i].client, nodes, ev[i].t_ns, end, t0_ns);
    waiters(waited, sizeof(waited), ev, n, ev[i].client, ev[i].t_ns,
            end == INT64_MAX ? (n > 0 ? ev[n - 1].t_ns : ev[i].t_ns) : end, t0_ns);
    sim_report_put(buf, len, "%s was cut off from %s at %ld ms, %s%s%s", who, where,
                   sim_report_ms(ev[i].t_ns, t0_ns), span, keys,
                   strstr(keys, "stayed") != NULL ? waited : "");
    return 1;
}
