/* report: a run's title and its verdict in sentences (the timeline and
 * the matrix have files of their own; report_internal.h lists them).
 *
 * Students read this on a projector, so it favours sentences with names
 * and times over codes. Everything fits in 72 columns except the matrix's
 * evidence, one line per episode in 78 (an 80-column terminal). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

#define EVIDENCE_CAP 3  /* episodes of a kind in a one-line evidence */
#define GAP_CAP 3       /* gaps in the observer's stream told in full */

/* A counter per kind of episode: ME, MD, DL. */
static size_t *slot(size_t counts[3], unsigned kind)
{
    return &counts[kind == SIM_ANOM_ME ? 0 : kind == SIM_ANOM_MD ? 1 : 2];
}

void sim_report_wrapped(FILE *out, const char *text, int at, int hang,
                        int width)
{
    int start = at;

    while (*text != '\0') {
        int word = (int)strcspn(text, " ");

        /* "900 ms" stays on one line: a number without its unit misleads. */
        if (strncmp(text + word, " ms", 3) == 0)
            word += 3 + (int)strcspn(text + word + 3, " ");

        if (at > start && at + 1 + word > width) {
            fprintf(out, "\n%*s", hang, "");
            at = start = hang;
        } else if (at > start) {
            fputc(' ', out);
            at++;
        }
        fprintf(out, "%.*s", word, text);
        at += word;
        text += word;
        text += strspn(text, " ");
    }
    fputc('\n', out);
}

/* One line without trailing blanks (they would only wrap on a narrow
 * terminal). */
void sim_report_trimmed(FILE *out, const char *text)
{
    int end = (int)strlen(text);

    while (end > 0 && text[end - 1] == ' ')
        end--;
    fprintf(out, "%.*s\n", end, text);
}

/* "  heading: sentence", wrapped under itself. */
static void say_line(FILE *out, const char *heading, const char *text)
{
    char line[SIM_REPORT_SENTENCE + 64];

    snprintf(line, sizeof(line), "%s%s%s", heading, heading[0] ? ": " : "",
             text);
    fputs("  ", out);
    sim_report_wrapped(out, line, 2, 4, SIM_REPORT_WIDTH);
}

/* Each episode in time order, SIM_REPORT_CAP of a kind in full; then how
 * many more of each kind there were. */
static void tell_episodes(FILE *out, const sim_verdict *v, const sim_event *ev,
                          int64_t t0)
{
    static const unsigned order[] = { SIM_ANOM_ME, SIM_ANOM_MD, SIM_ANOM_DL };
    char s[SIM_REPORT_SENTENCE], more[64];
    size_t told[3] = { 0, 0, 0 };

    for (size_t i = 0; i < v->n_episodes; i++) {
        const sim_episode *e = &v->episodes[i];

        if ((*slot(told, e->kind))++ >= SIM_REPORT_CAP)
            continue;
        sim_report_say(s, sizeof(s), e, ev, t0);
        /* The DL sentence ends with its own word "deadlock". */
        say_line(out, e->kind == SIM_ANOM_DL ? "" : sim_report_heading(e->kind), s);
    }
    for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
        size_t n = sim_verdict_count(v, order[k]);

        if (n <= SIM_REPORT_CAP)
            continue;
        snprintf(more, sizeof(more), "and %zu more %s like these",
                 n - SIM_REPORT_CAP, sim_report_plural(order[k]));
        say_line(out, sim_report_heading(order[k]), more);
    }
}

static void tell_gaps(FILE *out, const sim_verdict *v, const sim_event *ev,
                      int64_t t0)
{
    char s[SIM_REPORT_SENTENCE];

    for (size_t i = 0; i < v->n_gaps && i < GAP_CAP; i++) {
        sim_report_gap(s, sizeof(s), &v->gaps[i], ev, t0);
        say_line(out, "observer", s);
    }
    if (v->n_gaps > GAP_CAP) {
        snprintf(s, sizeof(s), "and %zu more gaps like these",
                 v->n_gaps - GAP_CAP);
        say_line(out, "observer", s);
    }
}

void sim_report_verdict(FILE *out, const sim_verdict *v, const sim_event *ev,
                        int64_t t0_ns)
{
    char s[SIM_REPORT_SENTENCE];

    if (v->anomalies & SIM_ANOM_UNJUDGED) {
        say_line(out, "cannot judge this history", v->why);
        return;
    }
    tell_episodes(out, v, ev, t0_ns);
    if ((v->anomalies & SIM_ANOM_CELLS) == 0)
        fprintf(out, "  no anomaly: one holder at a time, no lock deleted by "
                "another, no deadlock\n");
    tell_gaps(out, v, ev, t0_ns);
    if (v->unknown_used)
        say_line(out, "rule", "an acquire or release that ended in an error "
                 "or a crash may still have taken effect; the checker counts "
                 "one only where later events prove it");
    if (v->stock_known) {
        sim_report_stock(s, sizeof(s), v);
        say_line(out, v->anomalies & SIM_ANOM_LU ? "lost updates" : "", s);
    }
}

void sim_report_evidence(char *buf, size_t len, const sim_verdict *v,
                         int64_t t0_ns)
{
    size_t used = 0, told[3] = { 0, 0, 0 };
    char s[SIM_REPORT_SENTENCE];

    if (len == 0)
        return;
    buf[0] = '\0';
    if (v->anomalies & SIM_ANOM_UNJUDGED) {
        snprintf(buf, len, "cannot judge the history: %s", v->why);
        return;
    }
    for (size_t i = 0; i < v->n_episodes && used < len; i++) {
        int k;

        if ((*slot(told, v->episodes[i].kind))++ >= EVIDENCE_CAP)
            continue;
        sim_report_say(s, sizeof(s), &v->episodes[i], NULL, t0_ns);
        k = snprintf(buf + used, len - used, "%s%s: %s", used ? "; " : "",
                     sim_anomaly_name(v->episodes[i].kind), s);
        used = k < 0 ? len : used + (size_t)k;
    }
    if ((v->anomalies & SIM_ANOM_LU) && used < len) {
        sim_report_stock(s, sizeof(s), v);
        snprintf(buf + used, len - used, "%sLU: %s", used ? "; " : "", s);
    }
}

/* ---- a lock of several nodes -------------------------------------------- */

/* "A's key" for the key node k lost at t (it ended then), "" for none. */
static void key_lost(char *buf, size_t len, const sim_verdict *v, int k, int64_t t)
{
    char who[SIM_REPORT_NAME];

    buf[0] = '\0';
    for (size_t i = 0; i < v->n_keys; i++)
        if (v->keys[i].node == k && v->keys[i].to_ns == t)
            sim_report_put(buf, len, " and lost %s's key", sim_report_who(who,
                           sizeof(who), v->keys[i].owner, 0));
}

/* What happened to the nodes, in order: "node 3 went down at 0 ms; node
 * 0 restarted empty at 210 ms and lost A's key; ...". */
static void tell_node_faults(FILE *out, const sim_verdict *v, const sim_event *ev,
                             size_t n, int64_t t0)
{
    char s[SIM_REPORT_SENTENCE] = "", lost[SIM_REPORT_NAME + 24];
    size_t used = 0;

    for (size_t i = 0; i < n && used < sizeof(s); i++) {
        const sim_event *e = &ev[i];
        int promote = e->type == SIM_EV_FAILOVER && strncmp(e->detail, "promote", 7) == 0;
        const char *what = e->type == SIM_EV_NODE_DOWN ? "went down"
                           : e->type == SIM_EV_RESTART ? "restarted empty"
                           : promote ? "failed over to a replica without the key" : NULL;

        if (what == NULL)
            continue;
        key_lost(lost, sizeof(lost), v, e->node, e->t_ns);
        used += (size_t)snprintf(s + used, sizeof(s) - used, "%snode %d %s at %ld ms%s",
                                 used ? "; " : "", e->node, what,
                                 sim_report_ms(e->t_ns, t0), lost);
    }
    if (used > 0)
        say_line(out, "nodes", s);
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

/* The majority at the moment that tells the story: the first time two
 * held the lock at once, or else the first time a waiter gave up. */
static void tell_majority(FILE *out, const sim_verdict *v, const sim_event *ev,
                          size_t n, int64_t t0)
{
    const sim_episode *me = sim_verdict_first(v, SIM_ANOM_ME);
    char s[SIM_REPORT_SENTENCE], at[SIM_REPORT_SENTENCE / 2], who[SIM_REPORT_NAME];
    int64_t t = -1;

    if (me != NULL) {
        t = me->me.from_ns;
        sim_report_put(at, sizeof(at), "at %ld ms", sim_report_ms(t, t0));
    }
    for (size_t i = 0; me == NULL && i < n; i++)
        if (ev[i].type == SIM_EV_ACQUIRE_BUSY) {
            t = ev[i].t_ns;
            sim_report_put(at, sizeof(at), "when %s gave up at %ld ms",
                           sim_report_who(who, sizeof(who), ev[i].client, ev[i].thread),
                           sim_report_ms(t, t0));
            break;
        }
    if (t < 0)
        return;
    majority_at(s + strlen(at) + 2, sizeof(s) - strlen(at) - 2, v, t);
    if (s[strlen(at) + 2] == '\0')
        return;
    memcpy(s, at, strlen(at));
    memcpy(s + strlen(at), ", ", 2);
    say_line(out, "majority", s);
}

void sim_report_title(FILE *out, const sim_run_info *run)
{
    char line[SIM_NAME_LEN * 2 + SIM_WHAT_LEN + 64];

    snprintf(line, sizeof(line), "%s / %s%s%s (lease %ld ms, seed %lu)",
             run->stage[0] ? run->stage : "?",
             run->scenario[0] ? run->scenario : "?", run->what[0] ? ": " : "",
             run->what, run->lease_ms, run->seed);
    sim_report_wrapped(out, line, 0, 4, SIM_REPORT_WIDTH);
}

void sim_report_run(FILE *out, const sim_run_info *run, const sim_event *ev,
                    size_t n, int64_t t0_ns, const sim_verdict *v)
{
    if (run != NULL) {
        sim_report_title(out, run);
        /* The armed step does not exist in this stage: that absence is
         * the fix, and the clean run below is its proof. */
        if (run->failpoint[0] != '\0' &&
            !sim_check_failpoint_fired(ev, n, run->failpoint))
            fprintf(out, "  fault not reachable: this stage has no such step "
                    "(%s)\n", run->failpoint);
    }
    sim_report_verdict(out, v, ev, t0_ns);
    if (v->nodes > 1 && !(v->anomalies & SIM_ANOM_UNJUDGED)) {
        tell_node_faults(out, v, ev, n, t0_ns);
        tell_majority(out, v, ev, n, t0_ns);
    }
    fputc('\n', out);
    sim_report_timeline(out, ev, n, t0_ns, run != NULL ? run->clients : 0, v);
}
