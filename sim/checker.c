/* checker: replays a history once, in time order, and keeps the first
 * evidence of each anomaly.
 *
 * Two clocks meet here. Client events are stamped by the client around its
 * own command (invoke before sending, outcome after the reply), so they
 * bound what Redis did. Key events are stamped by the observer when the
 * keyspace notification arrives: in Redis's own order, but late by a
 * scheduling delay. The rules below use client events alone for holds
 * (ME), and match key incarnations to acquires by order, not by time
 * (MD), so that delay cannot fake an anomaly. */
#include <stdio.h>
#include <string.h>

#include "checker.h"

#define OKQ_LEN 64  /* acquire-oks whose key creation the observer has not
                     * reported yet: at most one per client in practice */

/* One client thread, as the replay knows it. */
typedef struct holder {
    int depth;        /* holds open: more than 1 when it re-entered */
    size_t ok;        /* the acquire-ok that opened its outermost hold */
    int acquiring;    /* an acquire invoked, its outcome not yet seen */
    size_t invoke;    /* that acquire-invoke */
    int releasing;    /* a release invoked, its outcome not yet seen */
    int released;     /* it has invoked a release at least once */
    size_t release;   /* its latest release-invoke */
} holder;

typedef struct replay {
    const sim_event *ev;
    sim_verdict *v;
    holder h[SIM_CHECK_MAX_CLIENTS][SIM_CHECK_MAX_THREADS];
    int crashed[SIM_CHECK_MAX_CLIENTS];          /* SIGKILLed: speaks no more */
    int crashed_holding[SIM_CHECK_MAX_CLIENTS];  /* ... while holding */
    int crashed_acquiring[SIM_CHECK_MAX_CLIENTS];/* ... inside an acquire */
    size_t crash[SIM_CHECK_MAX_CLIENTS];         /* its crash event */
    sim_key_state key;                           /* the current incarnation */
    size_t creation;                             /* its creation key event */
    size_t owner_ok;                             /* its owner's acquire-ok */
    size_t okq[OKQ_LEN];                         /* unmatched acquire-oks */
    int okn;
    int orphan;       /* an acquire ended without an ok before its key was
                       * reported: that key may be the next one created */
    int orphan_c, orphan_t;
    size_t orphan_invoke;
    int me_open;      /* the first overlap is found; its end is not */
    int holding;      /* holds open now, one per holder: ME when 2 or more */
} replay;

static int64_t t_of(const replay *r, size_t i)
{
    return r->ev[i].t_ns;
}

static int in_range(int client, int thread)
{
    return client >= 0 && client < SIM_CHECK_MAX_CLIENTS &&
           thread >= 0 && thread < SIM_CHECK_MAX_THREADS;
}

/* 1 while (c, t) is in the hold its acquire-ok ok opened. */
static int holds_since(const replay *r, int c, int t, size_t ok)
{
    return r->h[c][t].depth > 0 && r->h[c][t].ok == ok;
}

/* ---- ME: overlapping holds ----------------------------------------------- */

/* The earliest holder other than (c, t) that holds now, or 0 if none. */
static int other_holder(const replay *r, int c, int t, int *oc, int *ot)
{
    int found = 0;

    for (int i = 0; i < SIM_CHECK_MAX_CLIENTS; i++)
        for (int j = 0; j < SIM_CHECK_MAX_THREADS; j++) {
            const holder *h = &r->h[i][j];

            if (h->depth == 0 || (i == c && j == t))
                continue;
            if (!found || h->ok < r->h[*oc][*ot].ok) {
                *oc = i;
                *ot = j;
                found = 1;
            }
        }
    return found;
}

/* (c, t) just entered at event i: the first time someone else is inside
 * too is the ME evidence; its end comes when either of them leaves. */
static void check_overlap(replay *r, int c, int t, size_t i)
{
    sim_me_evidence *me = &r->v->me;
    int oc = 0, ot = 0;

    if ((r->v->anomalies & SIM_ANOM_ME) || !other_holder(r, c, t, &oc, &ot))
        return;
    r->v->anomalies |= SIM_ANOM_ME;
    me->a = oc;
    me->a_thread = ot;
    me->a_ok = r->h[oc][ot].ok;
    me->a_since_ns = t_of(r, me->a_ok);
    me->b = c;
    me->b_thread = t;
    me->b_ok = i;
    me->from_ns = t_of(r, i);
    me->to_ns = me->from_ns;
    r->me_open = 1;
}

static void close_hold(replay *r, int c, int t, size_t i)
{
    const sim_me_evidence *me = &r->v->me;

    r->h[c][t].depth = 0;
    r->holding--;
    if (r->me_open && ((me->a == c && me->a_thread == t) ||
                       (me->b == c && me->b_thread == t))) {
        r->v->me.to_ns = t_of(r, i);
        r->me_open = 0;
    }
}

/* ---- the key's incarnations ---------------------------------------------- */

/* An acquire-ok opened a hold: it owns the key the observer reported
 * without an owner (if its acquire began before that key appeared), or
 * else the next key the observer will report. */
static void match_ok(replay *r, int c, int t, size_t i)
{
    if (r->key.present && r->key.owner == SIM_KEY_UNKNOWN &&
        r->h[c][t].invoke < r->creation) {
        r->key.owner = c;
        r->key.owner_thread = t;
        r->owner_ok = i;
        return;
    }
    if (r->okn == OKQ_LEN) {
        memmove(r->okq, r->okq + 1, (OKQ_LEN - 1) * sizeof(r->okq[0]));
        r->okn--;
    }
    r->okq[r->okn++] = i;
}

/* 1 when a live client other than the orphan was inside an acquire
 * invoked before event i: it may be the one that created the key. */
static int another_creator(const replay *r, size_t i)
{
    for (int c = 0; c < SIM_CHECK_MAX_CLIENTS; c++)
        for (int t = 0; t < SIM_CHECK_MAX_THREADS; t++) {
            const holder *h = &r->h[c][t];

            if (h->acquiring && h->invoke < i && !r->crashed[c] &&
                !(c == r->orphan_c && t == r->orphan_t))
                return 1;
        }
    return 0;
}

static void new_incarnation(replay *r, size_t i)
{
    int orphan = r->orphan;

    r->orphan = 0;              /* it could only have made this key */
    r->creation = i;
    r->key.present = 1;
    r->key.ttl = 0;
    r->key.owner = SIM_KEY_UNKNOWN;
    r->key.owner_thread = 0;
    if (r->okn == 0 && orphan && r->orphan_invoke < i &&
        !another_creator(r, i)) {
        r->key.owner = r->orphan_c;
        r->key.owner_thread = r->orphan_t;
        r->owner_ok = r->orphan_invoke;
    } else if (r->okn > 0) {
        const sim_event *e = &r->ev[r->okq[0]];

        r->key.owner = e->client;
        r->key.owner_thread = e->thread;
        r->owner_ok = r->okq[0];
        memmove(r->okq, r->okq + 1, (size_t)(r->okn - 1) * sizeof(r->okq[0]));
        r->okn--;
    }
}

/* Once a key is gone, queued acquire-oks of holders that left already are
 * stale: the observer missed their key, and none can be matched later. */
static void end_incarnation(replay *r)
{
    int k = 0;

    r->key.present = 0;
    r->key.ttl = 0;
    r->key.owner = SIM_NO_CLIENT;
    r->key.owner_thread = 0;
    for (int j = 0; j < r->okn; j++) {
        const sim_event *e = &r->ev[r->okq[j]];

        if (r->h[e->client][e->thread].depth > 0)
            r->okq[k++] = r->okq[j];
    }
    r->okn = k;
}

/* ---- MD: a delete by someone other than the owner ------------------------ */

/* Who sent the delete: the earliest release still in flight, or else the
 * release that returned last. */
static void find_deleter(const replay *r, sim_md_evidence *md)
{
    size_t best = 0;
    int in_flight = 0;

    md->deleter = SIM_NO_CLIENT;
    md->deleter_thread = 0;
    for (int i = 0; i < SIM_CHECK_MAX_CLIENTS; i++)
        for (int j = 0; j < SIM_CHECK_MAX_THREADS; j++) {
            const holder *h = &r->h[i][j];
            int better;

            if (!h->released || r->crashed[i])
                continue;
            better = md->deleter == SIM_NO_CLIENT ||
                     (h->releasing && !in_flight) ||
                     (h->releasing == in_flight &&
                      (in_flight ? h->release < best : h->release > best));
            if (better) {
                md->deleter = i;
                md->deleter_thread = j;
                best = h->release;
                in_flight = h->releasing;
            }
        }
    md->deleter_in_flight = in_flight;
}

/* The owner of the key a "del" removed, or 0 when it has none that holds.
 * A key the observer never saw created belongs to the newest unmatched
 * acquire-ok (the creation was missed, e.g. while re-subscribing). */
static int deleted_owner(const replay *r, int *c, int *t, size_t *ok)
{
    if (r->key.present && r->key.owner >= 0) {
        *c = r->key.owner;
        *t = r->key.owner_thread;
        *ok = r->owner_ok;
    } else if (!r->key.present && r->okn > 0) {
        *ok = r->okq[r->okn - 1];
        *c = r->ev[*ok].client;
        *t = r->ev[*ok].thread;
    } else {
        return 0;
    }
    return holds_since(r, *c, *t, *ok);
}

/* (c, t) took the lock at its acquire-ok i: the first holder to do so
 * after the wrong delete, while the deleted lock's owner is still inside,
 * is the one the delete let in. */
static void check_intruder(replay *r, int c, int t, size_t i)
{
    sim_md_evidence *md = &r->v->md;

    if (!(r->v->anomalies & SIM_ANOM_MD) || md->intruder != SIM_NO_CLIENT ||
        (c == md->owner && t == md->owner_thread) ||
        !holds_since(r, md->owner, md->owner_thread, md->owner_ok))
        return;
    md->intruder = c;
    md->intruder_thread = t;
    md->intruder_ok = i;
    md->intruder_ns = t_of(r, i);
}

/* An acquire-ok that came after the owner's and still waits for its key
 * was stamped before the del, but its key can only follow the del: the
 * observer heard the del late, and that holder got in through it. */
static void queued_intruder(replay *r)
{
    for (int j = 0; j < r->okn; j++) {
        const sim_event *e = &r->ev[r->okq[j]];

        if (r->okq[j] > r->v->md.owner_ok &&
            holds_since(r, e->client, e->thread, r->okq[j])) {
            check_intruder(r, e->client, e->thread, r->okq[j]);
            return;
        }
    }
}

static void check_delete(replay *r, size_t i)
{
    sim_md_evidence md;
    int c, t;
    size_t ok;

    if ((r->v->anomalies & SIM_ANOM_MD) || !deleted_owner(r, &c, &t, &ok))
        return;
    memset(&md, 0, sizeof(md));
    find_deleter(r, &md);
    if (md.deleter == c && md.deleter_thread == t)
        return;
    md.del = i;
    md.at_ns = t_of(r, i);
    md.owner = c;
    md.owner_thread = t;
    md.owner_ok = ok;
    md.owner_since_ns = t_of(r, ok);
    md.intruder = SIM_NO_CLIENT;
    r->v->md = md;
    r->v->anomalies |= SIM_ANOM_MD;
    queued_intruder(r);
}

static int is_word(const char *detail, const char *word)
{
    return strcmp(detail, word) == 0;
}

static void key_event(replay *r, size_t i)
{
    const char *d = r->ev[i].detail;

    /* SET ... NX notifies only when it wrote: a new key every time. */
    if (is_word(d, "set") ||
        (!r->key.present && (is_word(d, "hset") || is_word(d, "hincrby") ||
                             is_word(d, "hsetnx"))))
        new_incarnation(r, i);
    else if (is_word(d, "expire") || is_word(d, "pexpire"))
        r->key.ttl = r->key.present;
    else if (is_word(d, "persist"))
        r->key.ttl = 0;
    else if (is_word(d, "del")) {
        check_delete(r, i);
        end_incarnation(r);
    } else if (is_word(d, "expired") || is_word(d, "evicted"))
        end_incarnation(r);
}

/* ---- DL: giving up where waiting could never succeed ---------------------- */

/* The crashed client that left the key: its owner if it crashed, else the
 * latest crash of a holder or of a client inside its acquire. */
static int crashed_culprit(const replay *r)
{
    int who = SIM_NO_CLIENT;

    if (r->key.owner >= 0 && r->crashed[r->key.owner])
        return r->key.owner;
    for (int i = 0; i < SIM_CHECK_MAX_CLIENTS; i++)
        if ((r->crashed_holding[i] || r->crashed_acquiring[i]) &&
            (who == SIM_NO_CLIENT || r->crash[i] > r->crash[who]))
            who = i;
    return who;
}

static void check_deadlock(replay *r, int c, int t, size_t i)
{
    const holder *h = &r->h[c][t];
    sim_dl_evidence *dl = &r->v->dl;
    int culprit = SIM_NO_CLIENT;

    if (r->v->anomalies & SIM_ANOM_DL)
        return;
    if (h->depth == 0) {
        if (!r->key.present || r->key.ttl || r->holding > 0)
            return;
        if ((culprit = crashed_culprit(r)) == SIM_NO_CLIENT)
            return;
    }
    r->v->anomalies |= SIM_ANOM_DL;
    memset(dl, 0, sizeof(*dl));
    dl->self = h->depth > 0;
    dl->waiter = c;
    dl->waiter_thread = t;
    dl->invoke = h->acquiring ? h->invoke : i;
    dl->busy = i;
    dl->invoke_ns = t_of(r, dl->invoke);
    dl->busy_ns = t_of(r, i);
    dl->held_since_ns = dl->self ? t_of(r, h->ok) : 0;
    dl->crashed = culprit;
    if (culprit != SIM_NO_CLIENT) {
        dl->crashed_acquiring = !r->crashed_holding[culprit];
        dl->crash = r->crash[culprit];
        dl->crash_ns = t_of(r, dl->crash);
    }
}

/* An acquire of (c, t) ended without an ok (a crash, an error). A key
 * nobody claimed that appeared during it is most likely its own, and must
 * not be matched to the next acquire-ok, which is someone else's. When no
 * such key was reported yet, the observer may report it next: remember
 * the acquire as an orphan for new_incarnation. */
static void claim_unknown_key(replay *r, int c, int t, size_t i)
{
    const holder *h = &r->h[c][t];

    if (!h->acquiring)
        return;
    if (r->key.present && r->key.owner == SIM_KEY_UNKNOWN &&
        r->creation > h->invoke) {
        r->key.owner = c;
        r->key.owner_thread = t;
        r->owner_ok = i;
        return;
    }
    r->orphan = 1;
    r->orphan_c = c;
    r->orphan_t = t;
    r->orphan_invoke = h->invoke;
}

/* ---- the replay ---------------------------------------------------------- */

static void crash_client(replay *r, int c, size_t i)
{
    r->crashed[c] = 1;
    r->crash[c] = i;
    for (int t = 0; t < SIM_CHECK_MAX_THREADS; t++) {
        holder *h = &r->h[c][t];

        if (h->depth > 0) {
            r->crashed_holding[c] = 1;
            close_hold(r, c, t, i);
        }
        if (h->acquiring) {
            r->crashed_acquiring[c] = 1;
            /* SETNX went through and the reply died with the process. */
            claim_unknown_key(r, c, t, i);
        }
        h->acquiring = 0;
        h->releasing = 0;
    }
}

static void acquire_event(replay *r, int c, int t, size_t i)
{
    holder *h = &r->h[c][t];

    switch (r->ev[i].type) {
    case SIM_EV_ACQUIRE_INVOKE:
        h->acquiring = 1;
        h->invoke = i;
        return;
    case SIM_EV_ACQUIRE_OK:
        h->acquiring = 0;
        if (h->depth++ > 0)
            return;             /* re-entered: the same hold goes on */
        r->holding++;
        h->ok = i;
        check_overlap(r, c, t, i);
        check_intruder(r, c, t, i);
        match_ok(r, c, t, i);
        return;
    case SIM_EV_ACQUIRE_BUSY:
        check_deadlock(r, c, t, i);
        h->acquiring = 0;
        return;
    default:                    /* an error: the outcome is unknown */
        claim_unknown_key(r, c, t, i);
        h->acquiring = 0;
        return;
    }
}

static void release_event(replay *r, int c, int t, size_t i)
{
    holder *h = &r->h[c][t];

    if (r->ev[i].type != SIM_EV_RELEASE_INVOKE) {
        h->releasing = 0;
        return;
    }
    h->releasing = 1;
    h->released = 1;
    h->release = i;
    if (h->depth > 0 && --h->depth == 0)
        close_hold(r, c, t, i);
}

/* An event of a client's own: skipped after its crash, or out of range. */
static void client_event(replay *r, size_t i)
{
    const sim_event *e = &r->ev[i];

    if (!in_range(e->client, e->thread)) {
        r->v->ignored++;
        return;
    }
    if (r->crashed[e->client])
        return;
    if (e->type <= SIM_EV_ACQUIRE_ERROR)
        acquire_event(r, e->client, e->thread, i);
    else if (e->type >= SIM_EV_RELEASE_INVOKE &&
             e->type <= SIM_EV_RELEASE_ERROR)
        release_event(r, e->client, e->thread, i);
    else if (e->type == SIM_EV_STOCK_WRITE)
        r->v->stock.sold++;
}

static void step(replay *r, size_t i, int *have_initial, int *have_final)
{
    const sim_event *e = &r->ev[i];

    if (in_range(e->client, 0) && e->client >= r->v->clients)
        r->v->clients = e->client + 1;
    switch (e->type) {
    case SIM_EV_KEY:
        key_event(r, i);
        break;
    case SIM_EV_CRASH:
        if (in_range(e->client, 0) && !r->crashed[e->client])
            crash_client(r, e->client, i);
        break;
    case SIM_EV_FAILOVER:
        if (strncmp(e->detail, "promote", 7) == 0) {
            end_incarnation(r);
            r->okn = 0;
        }
        break;
    case SIM_EV_STOCK_INITIAL:
        if (!*have_initial)
            r->v->stock.initial = e->value;
        *have_initial = 1;
        break;
    case SIM_EV_STOCK_FINAL:
        r->v->stock.final = e->value;
        *have_final = 1;
        break;
    default:
        if (e->type >= 0 && e->type <= SIM_EV_STOCK_WRITE)
            client_event(r, i);
        break;
    }
}

static void check_damage(sim_verdict *v)
{
    sim_damage_evidence *s = &v->stock;

    s->lost = s->final + s->sold - s->initial;
    s->oversold = s->sold > s->initial ? s->sold - s->initial : 0;
    if (s->lost != 0 || s->oversold > 0)
        v->anomalies |= SIM_ANOM_DAMAGE;
}

/* keys and holders, when not NULL, get the state after each event. */
static void replay_all(const sim_event *ev, size_t n, sim_verdict *v,
                       sim_key_state *keys, int *holders)
{
    static const sim_key_state no_key = { 0, 0, SIM_NO_CLIENT, 0 };
    replay r;
    int have_initial = 0, have_final = 0;

    memset(&r, 0, sizeof(r));
    memset(v, 0, sizeof(*v));
    r.ev = ev;
    r.v = v;
    r.key = no_key;
    for (size_t i = 0; i < n; i++) {
        step(&r, i, &have_initial, &have_final);
        if (keys != NULL)
            keys[i] = r.key;
        if (holders != NULL)
            holders[i] = r.holding;
    }
    if (n > 0) {
        v->start_ns = ev[0].t_ns;
        v->end_ns = ev[n - 1].t_ns;
    }
    if (r.me_open)
        v->me.to_ns = v->end_ns;
    v->stock_known = have_initial && have_final;
    if (v->stock_known)
        check_damage(v);
}

unsigned sim_check(const sim_event *ev, size_t n, sim_verdict *v)
{
    replay_all(ev, n, v, NULL, NULL);
    return v->anomalies;
}

void sim_check_key_trace(const sim_event *ev, size_t n, sim_key_state *out)
{
    sim_verdict v;

    replay_all(ev, n, &v, out, NULL);
}

void sim_check_holders_trace(const sim_event *ev, size_t n, int *out)
{
    sim_verdict v;

    replay_all(ev, n, &v, NULL, out);
}

int sim_check_failpoint_fired(const sim_event *ev, size_t n, const char *name)
{
    size_t len = name != NULL ? strlen(name) : 0;

    for (size_t i = 0; i < n; i++) {
        const char *d = ev[i].detail;

        if (ev[i].type != SIM_EV_FAILPOINT)
            continue;
        if (len == 0 || (strncmp(d, name, len) == 0 &&
                         (d[len] == '=' || d[len] == '\0')))
            return 1;
    }
    return 0;
}

/* ---- names ---------------------------------------------------------------- */

static const struct {
    unsigned bit;
    const char *name;
} anomaly_names[] = {
    { SIM_ANOM_ME, "ME" },
    { SIM_ANOM_MD, "MD" },
    { SIM_ANOM_DL, "DL" },
    { SIM_ANOM_DAMAGE, "DAMAGE" },
};
#define ANOMALY_COUNT (sizeof(anomaly_names) / sizeof(anomaly_names[0]))

const char *sim_anomaly_name(unsigned anomaly)
{
    for (size_t i = 0; i < ANOMALY_COUNT; i++)
        if (anomaly_names[i].bit == anomaly)
            return anomaly_names[i].name;
    return "?";
}

void sim_anomaly_format(unsigned set, char *buf, size_t len)
{
    size_t used = 0;

    if (len == 0)
        return;
    snprintf(buf, len, "-");
    for (size_t i = 0; i < ANOMALY_COUNT && used < len; i++)
        if (set & anomaly_names[i].bit)
            used += (size_t)snprintf(buf + used, len - used, "%s%s",
                                     used ? " " : "", anomaly_names[i].name);
}

int sim_anomaly_parse(const char *text, unsigned *set)
{
    char word[16];
    int n, pos = 0;

    *set = 0;
    while (sscanf(text + pos, " %15s%n", word, &n) == 1) {
        size_t i = 0;

        pos += n;
        if (strcmp(word, "-") == 0)
            continue;
        while (i < ANOMALY_COUNT && strcmp(word, anomaly_names[i].name) != 0)
            i++;
        if (i == ANOMALY_COUNT)
            return -1;
        *set |= anomaly_names[i].bit;
    }
    return 0;
}
