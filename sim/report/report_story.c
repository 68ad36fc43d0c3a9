/* report_story: a run told in time order, one line each: every episode
 * of the verdict, every release result that matters, the fence's work
 * (a write the resource refused, a token two holders shared), what
 * happened to the lock's servers (a failover, a restart) and, for a lock
 * of several nodes, who held which when the story turned. The terminal and a page tell the same story from
 * here.
 *
 * A release result matters when it says more than "done": NOT_OWNER
 * means the lock was lost before the release came (the stage refused to
 * delete another's key), an error means nobody knows whether it deleted
 * anything. What the release found in Redis comes from the verdict's
 * keys; a client that slept through its lease is told waking up. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "report_internal.h"

#define PART (SIM_REPORT_SENTENCE / 2) /* a clause of a sentence */
#define NEVER INT64_MAX                /* a source with nothing left */

/* Each kind of line: what heads it, and its plural for "and 3 more ...
 * like these". The heading of an episode's kind comes from report_say,
 * but DL's, whose sentence ends in its own word "deadlock". */
static const struct {
    unsigned kind;
    const char *heading;
    const char *plural;
} kinds[] = {
    { SIM_ANOM_ME, NULL, NULL },
    { SIM_ANOM_MD, NULL, NULL },
    { SIM_ANOM_DL, NULL, NULL },
    { SIM_ANOM_ST, NULL, NULL },
    { SIM_REPORT_RELEASE, "release", "release results" },
    { SIM_REPORT_REFUSAL, "the fence held", "refused writes" },
    { SIM_REPORT_CLASH, "the fence failed", "shared tokens" },
    { SIM_REPORT_NODES, "nodes", "node lines" },
    { SIM_REPORT_MAJORITY, "majority", "majorities" },
    { SIM_REPORT_CUT, "partition", "partitions" },
};
#define KINDS (sizeof(kinds) / sizeof(kinds[0]))

static size_t slot(unsigned kind)
{
    size_t k = 0;

    while (k + 1 < KINDS && kinds[k].kind != kind)
        k++;
    return k;
}

static const char *heading(unsigned kind)
{
    return kinds[slot(kind)].heading != NULL ? kinds[slot(kind)].heading
           : sim_report_heading(kind);
}

static int worth_telling(const sim_event *e)
{
    return e->type == SIM_EV_RELEASE_NOT_OWNER ||
           e->type == SIM_EV_RELEASE_ERROR;
}

/* ---- what the release found ------------------------------------------------- */

/* The latest key made by t, of client c (or of anyone: c SIM_NO_CLIENT)
 * and, when alive, not ended by then; NULL when none. Every key is
 * looked at: their order is the checker's, not always by time. */
static const sim_key_span *latest_key(const sim_verdict *v, int c, int alive,
                                      int64_t t)
{
    const sim_key_span *found = NULL;

    for (size_t k = 0; k < v->n_keys; k++) {
        const sim_key_span *s = &v->keys[k];

        if (s->from_ns > t || (alive && s->to_ns <= t) ||
            (c != SIM_NO_CLIENT && s->owner != c))
            continue;
        if (found == NULL || s->from_ns > found->from_ns)
            found = s;
    }
    return found;
}

/* How a key ended, from the event stamped when it did: "expired", ... */
static const char *ended(const sim_event *ev, size_t n, int64_t at)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {            /* the first event at or after at */
        size_t mid = lo + (hi - lo) / 2;

        if (ev[mid].t_ns < at)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < n && ev[lo].t_ns == at; lo++) {
        if (ev[lo].type == SIM_EV_FAILOVER)
            return "was lost in the failover";
        if (ev[lo].type == SIM_EV_KEY && strcmp(ev[lo].detail, "expired") == 0)
            return "had expired";
        if (ev[lo].type == SIM_EV_KEY && (strcmp(ev[lo].detail, "del") == 0 ||
                                          strcmp(ev[lo].detail, "delete") == 0))
            return "had been deleted";
    }
    return "had ended";
}

/* "the lock was B's since 823 ms", or what happened to w's own key. */
static void found(char *buf, size_t len, const sim_verdict *v,
                  const sim_event *ev, size_t n, const sim_event *inv,
                  int64_t t0)
{
    const sim_key_span *k = latest_key(v, SIM_NO_CLIENT, 1, inv->t_ns);
    char o[SIM_REPORT_NAME], w[SIM_REPORT_NAME];

    sim_report_who(w, sizeof(w), inv->client, 0);
    if (k != NULL && k->owner >= 0) {
        sim_report_put(buf, len, "the lock was %s's since %ld ms",
                       sim_report_who(o, sizeof(o), k->owner, 0),
                       sim_report_ms(k->from_ns, t0));
    } else if (k != NULL) {
        sim_report_put(buf, len, "the lock was held by a client that "
                       "cannot be named since %ld ms",
                       sim_report_ms(k->from_ns, t0));
    } else if ((k = latest_key(v, inv->client, 0, inv->t_ns)) != NULL) {
        sim_report_put(buf, len, "there was no key: %s's own %s at %ld ms",
                       w, ended(ev, n, k->to_ns), sim_report_ms(k->to_ns, t0));
    } else {
        sim_report_put(buf, len, "there was no key");
    }
}

/* Of a lock of several nodes, a release that returned NOT_OWNER may
 * still have deleted the keys its client had on some nodes (too few to be
 * a majority): "nodes 0 and 1" in buf, and 1; 0 when it deleted none.
 * Only the owner deletes its own key, so each of them that was there at
 * the invoke and ended in a "del" is this release's work. */
static int own_deleted(char *buf, size_t len, const sim_verdict *v, const sim_event *ev,
                       size_t n, const sim_event *inv)
{
    size_t used = 0;
    int count = 0, seen = 0;

    for (int pass = 0; pass < 2 && v->nodes > 1; pass++)
        for (size_t k = 0; k < v->n_keys; k++) {
            const sim_key_span *s = &v->keys[k];

            if (s->owner != inv->client || s->from_ns > inv->t_ns || s->to_ns <= inv->t_ns ||
                s->to_ns == INT64_MAX || !sim_report_key_ended(ev, n, s->node, s->to_ns, "del"))
                continue;
            if (pass == 0)
                count++;
            else if (used < len)
                used += (size_t)snprintf(buf + used, len - used, "%s%d", seen++ == 0 ?
                                         (count > 1 ? "nodes " : "node ") :
                                         seen == count ? " and " : ", ", s->node);
        }
    return count > 0;
}

/* ---- where the client was when it woke ----------------------------------------- */

/* Walking back from a release's outcome to the acquire that opened its
 * hold: where the thread stood at each event. */
enum { IN_RELEASE, HOLDING_AFTER, IN_CS, HOLDING_BEFORE };

static const char *const stood[] = {
    [IN_RELEASE] = "in the middle of its release",
    [HOLDING_AFTER] = "still holding the lock",
    [IN_CS] = "still inside its critical section",
    [HOLDING_BEFORE] = "still holding the lock",
};

/* The latest pause of the releasing client that ended inside the hold
 * its release (outcome at event i) ends: "woke at 971 ms from a pause
 * that began at 71 ms, still inside its critical section", or "". */
static void woke(char *buf, size_t len, const sim_event *ev, size_t i,
                 int64_t t0)
{
    const sim_event *r = &ev[i];
    size_t wake = SIZE_MAX;
    int where = IN_RELEASE, woke_where = IN_RELEASE;

    buf[0] = '\0';
    for (size_t j = i; j-- > 0;) {
        const sim_event *e = &ev[j];

        if (e->client != r->client)
            continue;
        if (e->type == SIM_EV_PAUSE_END && wake == SIZE_MAX) {
            wake = j;
            woke_where = where;
        }
        if (e->type == SIM_EV_PAUSE_BEGIN && wake != SIZE_MAX) {
            sim_report_put(buf, len, "woke at %ld ms from a pause that "
                           "began at %ld ms, %s; ",
                           sim_report_ms(ev[wake].t_ns, t0),
                           sim_report_ms(e->t_ns, t0), stood[woke_where]);
            return;
        }
        if (e->thread != r->thread)
            continue;
        if (e->type == SIM_EV_ACQUIRE_OK || e->type == SIM_EV_RELEASE_OK ||
            e->type == SIM_EV_RELEASE_NOT_OWNER)
            return;                /* the hold's start, or an earlier one */
        where = e->type == SIM_EV_RELEASE_INVOKE ? HOLDING_AFTER
                : e->type == SIM_EV_CS_EXIT ? IN_CS
                : e->type == SIM_EV_CS_ENTER ? HOLDING_BEFORE : where;
    }
}

/* ---- the release sentence ------------------------------------------------------ */

/* The release invoke that event i answers, or NULL. */
static const sim_event *invoke_of(const sim_event *ev, size_t i)
{
    for (size_t j = i; j-- > 0;)
        if (ev[j].client == ev[i].client && ev[j].thread == ev[i].thread &&
            ev[j].type == SIM_EV_RELEASE_INVOKE)
            return &ev[j];
    return NULL;
}

/* "; it tried again at 293 ms" when the thread's next step after the
 * failed release at event i is another release; else "". */
static void retried(char *buf, size_t len, const sim_event *ev, size_t n,
                    size_t i, int64_t t0)
{
    buf[0] = '\0';
    for (size_t j = i + 1; j < n; j++) {
        if (ev[j].client != ev[i].client || ev[j].thread != ev[i].thread)
            continue;
        if (ev[j].type == SIM_EV_RELEASE_INVOKE)
            sim_report_put(buf, len, "; it tried again at %ld ms",
                           sim_report_ms(ev[j].t_ns, t0));
        return;
    }
}

/* "client A woke at 971 ms ...; its release at 972 ms returned NOT_OWNER
 * and deleted nothing: the lock was B's since 823 ms". */
static void release_say(char *buf, size_t len, const sim_verdict *v,
                        const sim_event *ev, size_t n, size_t i, int64_t t0)
{
    const sim_event *r = &ev[i], *inv = invoke_of(ev, i);
    char w[SIM_REPORT_NAME], pause[PART], who[PART], what[PART] = "";

    sim_report_who(w, sizeof(w), r->client, r->thread);
    woke(pause, sizeof(pause), ev, i, t0);
    if (pause[0] != '\0')
        sim_report_put(who, sizeof(who), "client %s %sits", w, pause);
    else
        sim_report_put(who, sizeof(who), "client %s's", w);
    if (r->type == SIM_EV_RELEASE_ERROR) {
        retried(what, sizeof(what), ev, n, i, t0);
        sim_report_put(buf, len, "%s release ended in an error at %ld ms "
                       "(%s): whether it deleted the key is unknown%s", who,
                       sim_report_ms(r->t_ns, t0),
                       r->detail[0] ? r->detail : "no reason recorded", what);
        return;
    }
    if (inv != NULL && own_deleted(what, sizeof(what), v, ev, n, inv)) {
        sim_report_put(buf, len, "%s release at %ld ms returned NOT_OWNER: it deleted "
                       "its own keys on %s only, no majority", who,
                       sim_report_ms(r->t_ns, t0), what);
        return;
    }
    if (inv != NULL)
        found(what, sizeof(what), v, ev, n, inv, t0);
    sim_report_put(buf, len, "%s release at %ld ms returned NOT_OWNER and "
                   "deleted nothing%s%s", who, sim_report_ms(r->t_ns, t0),
                   what[0] ? ": " : "", what);
}

/* ---- the story ---------------------------------------------------------------- */

/* A story being told: where it comes from, where it goes, and how many
 * of each kind it met. */
typedef struct story {
    const sim_verdict *v;
    const sim_event *ev;
    size_t n;
    int64_t t0;
    size_t cap;
    sim_report_line_fn *fn;
    void *arg;
    size_t seen[KINDS];
    int64_t last[KINDS];
    size_t told;
} story;

/* Where the story is in each of its sources. */
typedef struct cursor {
    size_t e, r, i, f;  /* the next episode, refusal, release, node fault */
    size_t k;           /* the next cut of a client's links */
    int clash;          /* the shared token is still to be told */
    int64_t majority;   /* when who held which nodes is told; NEVER: told */
} cursor;

/* The next source of the story's next line: the one whose next line
 * comes first; an episode first among lines of one instant, then who
 * held which nodes then, the fence, a release, a node's fault, a cut. */
enum { EPISODE, MAJORITY, REFUSAL, CLASH, RELEASE_EVENT, NODE_FAULT, CUT, NONE };

static int next_source(const story *st, const cursor *at_now)
{
    const cursor *c = at_now;
    int64_t at[NONE] = {
        c->e < st->v->n_episodes ? st->v->episodes[c->e].at_ns : NEVER,
        c->majority,
        c->r < st->v->n_refusals ? st->v->refusals[c->r].at_ns : NEVER,
        c->clash ? st->v->clash.b_ns : NEVER,
        c->i < st->n ? st->ev[c->i].t_ns : NEVER,
        c->f < st->n ? st->ev[c->f].t_ns : NEVER,
        c->k < st->n ? st->ev[c->k].t_ns : NEVER,
    };
    int best = NONE;

    for (int k = 0; k < NONE; k++)
        if (at[k] != NEVER && (best == NONE || at[k] < at[best]))
            best = k;
    return best;
}

/* One line of a kind at a time: told while its kind is under the cap. */
static void tell(story *st, unsigned kind, int64_t at, sim_report_line *line)
{
    size_t k = slot(kind);

    st->last[k] = at;
    if (st->seen[k]++ >= st->cap)
        return;
    line->kind = kind;
    line->more = 0;
    line->at_ns = at;
    /* The DL and ST sentences end with their own words. */
    line->heading = kind == SIM_ANOM_DL || kind == SIM_ANOM_ST ? "" :
                    kind == SIM_REPORT_NODES && st->v->nodes < 2 ? "server" : heading(kind);
    st->fn(line, st->arg);
    st->told++;
}

/* One "and N more ... like these" line for each kind that had more. */
static void tell_more(story *st)
{
    sim_report_line line;

    for (size_t k = 0; k < KINDS; k++) {
        if (st->seen[k] <= st->cap)
            continue;
        line.kind = kinds[k].kind;
        line.more = st->seen[k] - st->cap;
        line.at_ns = st->last[k];
        line.heading = heading(kinds[k].kind);
        sim_report_put(line.text, sizeof(line.text), "and %zu more %s like "
                       "these", line.more, kinds[k].plural != NULL ?
                       kinds[k].plural : sim_report_plural(kinds[k].kind));
        st->fn(&line, st->arg);
        st->told++;
    }
}

/* Moves c->i to the next release result worth telling, c->f to the next
 * node's fault, c->k to the next cut. */
static void skip(const story *st, cursor *c)
{
    char scratch[SIM_REPORT_SENTENCE];

    while (c->i < st->n && !worth_telling(&st->ev[c->i]))
        c->i++;
    while (c->f < st->n && !sim_report_node_fault(scratch, sizeof(scratch), st->v, st->ev,
                                                  st->n, &st->ev[c->f], st->t0))
        c->f++;
    while (c->k < st->n && !sim_report_cut(scratch, sizeof(scratch), st->v, st->ev, st->n,
                                           c->k, st->t0))
        c->k++;
}

/* The node faults from c->f on that come before anything else, in one
 * line: "node 3 went down at 9 ms; node 0 restarted empty at 140 ms and
 * lost A's key". */
static void node_faults(story *st, cursor *c, sim_report_line *line)
{
    int64_t first = st->ev[c->f].t_ns;
    size_t used = 0;

    line->text[0] = '\0';
    do {
        char one[SIM_REPORT_SENTENCE];

        sim_report_node_fault(one, sizeof(one), st->v, st->ev, st->n, &st->ev[c->f++],
                              st->t0);
        if (used < sizeof(line->text))
            used += (size_t)snprintf(line->text + used, sizeof(line->text) - used,
                                     "%s%s", used ? "; " : "", one);
        skip(st, c);
    } while (next_source(st, c) == NODE_FAULT);
    tell(st, SIM_REPORT_NODES, first, line);
}

size_t sim_report_story(const sim_verdict *v, const sim_event *ev, size_t n,
                        int64_t t0_ns, size_t cap, sim_report_line_fn *fn,
                        void *arg)
{
    story st = { v, ev, ev != NULL ? n : 0, t0_ns, cap, fn, arg,
                 { 0 }, { 0 }, 0 };
    cursor c = { 0, 0, 0, 0, 0, v->token_clash, NEVER };
    sim_report_line line, majority;

    if (sim_report_majority(majority.text, sizeof(majority.text), v, st.ev,
                            st.n, t0_ns, &c.majority) == 0)
        c.majority = NEVER;
    for (;;) {
        skip(&st, &c);
        switch (next_source(&st, &c)) {
        case EPISODE:
            sim_report_say(line.text, sizeof(line.text), &v->episodes[c.e], ev,
                           t0_ns);
            tell(&st, v->episodes[c.e].kind, v->episodes[c.e].at_ns, &line);
            c.e++;
            break;
        case MAJORITY:
            tell(&st, SIM_REPORT_MAJORITY, c.majority, &majority);
            c.majority = NEVER;
            break;
        case REFUSAL:
            sim_report_refusal(line.text, sizeof(line.text), &v->refusals[c.r],
                               t0_ns);
            tell(&st, SIM_REPORT_REFUSAL, v->refusals[c.r++].at_ns, &line);
            break;
        case CLASH:
            sim_report_clash(line.text, sizeof(line.text), &v->clash, t0_ns);
            tell(&st, SIM_REPORT_CLASH, v->clash.b_ns, &line);
            c.clash = 0;
            break;
        case RELEASE_EVENT:
            release_say(line.text, sizeof(line.text), v, ev, st.n, c.i, t0_ns);
            tell(&st, SIM_REPORT_RELEASE, ev[c.i++].t_ns, &line);
            break;
        case NODE_FAULT:
            node_faults(&st, &c, &line);
            break;
        case CUT:
            sim_report_cut(line.text, sizeof(line.text), v, ev, st.n, c.k, t0_ns);
            tell(&st, SIM_REPORT_CUT, ev[c.k++].t_ns, &line);
            break;
        default:
            tell_more(&st);
            return st.told;
        }
    }
}
