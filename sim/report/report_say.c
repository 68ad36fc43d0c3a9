/* report_say: every episode in words, long for a run and short for the
 * matrix, and the reasoning behind an unknown outcome where a sentence
 * rests on one. Students read these on a projector: names and times,
 * never codes. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "report_internal.h"

#define PART (SIM_REPORT_SENTENCE / 2) /* a clause of a sentence */

void sim_report_put(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

const char *sim_report_who(char *buf, size_t len, int client, int thread)
{
    char name[SIM_REPORT_NAME];

    sim_check_client_name(client, name, sizeof(name));
    if (thread == 0 || client < 0)
        sim_report_put(buf, len, "%s", name);
    else
        sim_report_put(buf, len, "%s:%d", name, thread);
    return buf;
}

long sim_report_ms(int64_t t_ns, int64_t t0_ns)
{
    return (long)((t_ns - t0_ns) / 1000000);
}

/* The own lease every client that recorded one shares, when there are
 * at least two of them; 0 when they differ, or fewer told one. */
static long shared_lease(const sim_event *ev, size_t n, int clients)
{
    long same = 0;
    int told = 0;

    for (int c = 0; c < clients; c++) {
        long own = sim_history_lease_of(ev, n, c);

        if (own <= 0)
            continue;
        if (told++ > 0 && own != same)
            return 0;
        same = own;
    }
    return told > 1 ? same : 0;
}

int sim_report_leases(char *buf, size_t len, const sim_event *ev, size_t n,
                      long lease_ms)
{
    int clients = 0, told = 0;
    size_t used = 0;
    long same;

    if (len > 0)
        buf[0] = '\0';
    if (lease_ms <= 0 || ev == NULL)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (ev[i].client >= clients)
            clients = ev[i].client + 1;
    same = shared_lease(ev, n, clients);
    if (same > 0 && same != lease_ms) {
        snprintf(buf, len, "every client's own lease is %ld ms, %g times the run's %ld ms",
                 same, (double)same / (double)lease_ms, lease_ms);
        return 1;
    }
    for (int c = 0; c < clients && used < len; c++) {
        long own = sim_history_lease_of(ev, n, c);
        char who[SIM_REPORT_NAME];
        int k;

        if (own <= 0 || own == lease_ms)
            continue;
        sim_report_who(who, sizeof(who), c, 0);
        k = snprintf(buf + used, len - used, told ? "; %s's is %ld ms, %g times"
                     : "%s's own lease is %ld ms, %g times the run's %ld ms",
                     who, own, (double)own / (double)lease_ms, lease_ms);
        used = k < 0 ? len : used + (size_t)k;
        told++;
    }
    return told > 0;
}

/* Whether the stage of that folder keeps its lock in an ensemble and
 * draws tokens: v11, whose token is a zxid. */
static int zxid_tokens(const char *folder)
{
    for (int i = 1; i <= SIM_STAGES; i++) {
        const sim_stage *s = sim_stage_get(i);

        if (s != NULL && strcmp(s->dir, folder) == 0)
            return (s->caps & SIM_CAP_TOKEN) && strcmp(s->server, "zookeeper") == 0;
    }
    return 0;
}

int sim_report_tokens(char *buf, size_t len, const char *stage, const sim_event *ev,
                      size_t n)
{
    char who[SIM_REPORT_NAME];

    if (len > 0)
        buf[0] = '\0';
    if (stage == NULL || ev == NULL || !zxid_tokens(stage))
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (ev[i].type != SIM_EV_ACQUIRE_OK || ev[i].token <= 0)
            continue;
        sim_report_who(who, sizeof(who), ev[i].client, ev[i].thread);
        sim_report_put(buf, len, "each is the czxid of its holder's node, the zxid "
                       "ZooKeeper gave its create: the leader's epoch times 2^32 plus a "
                       "counter of changes (%s's %lld is epoch %lld, change %lld)", who,
                       (long long)ev[i].token, (long long)(ev[i].token >> 32),
                       (long long)(ev[i].token & 0xffffffffLL));
        return 1;
    }
    return 0;
}

static const char *plural(long long n, const char *one, const char *many)
{
    return n == 1 || n == -1 ? one : many;
}

static const struct {
    unsigned kind;
    const char *heading;  /* what the sentence proves */
    const char *plural;   /* "and 3 more ... like these" */
} kinds[] = {
    { SIM_ANOM_ME, "mutual exclusion lost", "overlaps" },
    { SIM_ANOM_MD, "lock deleted by a non-owner", "foreign deletes" },
    { SIM_ANOM_DL, "deadlock", "deadlocks" },
    { SIM_ANOM_ST, "stalled", "stalls" },
};

const char *sim_report_heading(unsigned kind)
{
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (kinds[i].kind == kind)
            return kinds[i].heading;
    return "anomaly";
}

const char *sim_report_plural(unsigned kind)
{
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (kinds[i].kind == kind)
            return kinds[i].plural;
    return "anomalies";
}

/* ---- an unknown outcome's reasoning ---------------------------------------- */

/* "; A's acquire ended in an error at 5 ms, but only it could have made
 * the key that appeared at 7 ms": why an acquire whose outcome was unknown
 * counts as having taken the lock. "" for an acquire that returned OK. */
static void reasoning(char *buf, size_t len, const sim_holder *h,
                      const sim_event *ev, int64_t t0)
{
    char w[SIM_REPORT_NAME], how[PART];

    buf[0] = '\0';
    if (h->proof == SIM_PROOF_NONE || h->client < 0)
        return;
    sim_report_who(w, sizeof(w), h->client, h->thread);
    if (h->ended == (size_t)-1 || ev == NULL)
        sim_report_put(how, sizeof(how), "%s's acquire never returned", w);
    else if (ev[h->ended].type == SIM_EV_CRASH)
        sim_report_put(how, sizeof(how), "%s crashed inside its acquire at %ld ms",
                 w, sim_report_ms(ev[h->ended].t_ns, t0));
    else
        sim_report_put(how, sizeof(how), "%s's acquire ended in an error at %ld ms",
                 w, sim_report_ms(ev[h->ended].t_ns, t0));
    if (h->proof == SIM_PROOF_RELEASE)
        sim_report_put(buf, len, "; %s, but its release at %ld ms returned OK, "
                 "and this stage's release checks the owner: the key was "
                 "%s's", how, ev != NULL ? sim_report_ms(ev[h->proof_at].t_ns,
                 t0) : 0L, w);
    else
        sim_report_put(buf, len, "; %s, but only that acquire could have made the "
                 "key reported at %ld ms", how, ev != NULL ?
                 sim_report_ms(ev[h->proof_at].t_ns, t0) : 0L);
}

/* ---- the long sentences ----------------------------------------------------- */

static void me_say(char *buf, size_t len, const sim_me_evidence *me,
                   const sim_event *ev, int64_t t0)
{
    char a[SIM_REPORT_NAME], b[SIM_REPORT_NAME], why_a[PART], why_b[PART];

    reasoning(why_a, sizeof(why_a), &me->a, ev, t0);
    reasoning(why_b, sizeof(why_b), &me->b, ev, t0);
    sim_report_put(buf, len, "clients %s and %s both held the lock in [%ld ms, "
             "%ld ms]%s%s", sim_report_who(a, sizeof(a), me->a.client,
             me->a.thread), sim_report_who(b, sizeof(b), me->b.client,
             me->b.thread), sim_report_ms(me->from_ns, t0),
             sim_report_ms(me->to_ns, t0), why_a, why_b);
}

static const char *release_how(int how)
{
    switch (how) {
    case SIM_RELEASE_FAILED:
        return " (its release ended in an error, but its DEL went through)";
    case SIM_RELEASE_CRASHED:
        return " (it was killed before its release returned)";
    default:
        return "";
    }
}

static void md_say(char *buf, size_t len, const sim_md_evidence *md,
                   const sim_event *ev, int64_t t0)
{
    char x[SIM_REPORT_NAME], y[SIM_REPORT_NAME], z[SIM_REPORT_NAME];
    char victim[PART], then[PART] = "", why[PART];
    long at = sim_report_ms(md->at_ns, t0);

    sim_report_who(y, sizeof(y), md->owner.client, md->owner.thread);
    if (md->owner.client == SIM_UNNAMED)
        sim_report_put(victim, sizeof(victim), "the lock of a client that cannot "
                 "be named");
    else
        sim_report_put(victim, sizeof(victim), "client %s's lock", y);
    /* The harm done: someone got in while the owner was still working. */
    if (md->intruder.client != SIM_NO_CLIENT)
        sim_report_put(then, sizeof(then), "; client %s took the lock at %ld ms "
                 "while %s was still inside", sim_report_who(z, sizeof(z),
                 md->intruder.client, md->intruder.thread),
                 sim_report_ms(md->intruder.since_ns, t0), y);
    reasoning(why, sizeof(why), &md->owner, ev, t0);
    if (md->deleter == SIM_UNNAMED)
        sim_report_put(buf, len, "%s was deleted at %ld ms by a client that "
                 "cannot be named", victim, at);
    else
        sim_report_put(buf, len, "client %s's release deleted %s at %ld ms%s",
                 sim_report_who(x, sizeof(x), md->deleter, md->deleter_thread),
                 victim, at, release_how(md->deleter_how));
    if (md->owner.client != SIM_UNNAMED)
        sim_report_put(buf + strlen(buf), len - strlen(buf), "; %s had held it "
                 "since %ld ms%s%s", y, sim_report_ms(md->owner.since_ns, t0),
                 why, then);
}

/* Why the key stayed, for the end of a DL sentence. */
static void stuck_why(char *buf, size_t len, const sim_dl_evidence *dl,
                      const char *o, int64_t t0)
{
    long at = sim_report_ms(dl->stuck_ns, t0);

    switch (dl->stuck) {
    case SIM_STUCK_CRASHED:
        sim_report_put(buf, len, "%s crashed at %ld ms while holding the lock", o, at);
        break;
    case SIM_STUCK_CRASHED_ACQUIRING:
        sim_report_put(buf, len, "%s crashed at %ld ms inside its acquire, after "
                 "its key was written", o, at);
        break;
    case SIM_STUCK_ACQUIRE_FAILED:
        sim_report_put(buf, len, "%s's acquire ended in an error at %ld ms after "
                 "its key was written, so %s never knew it held the lock",
                 o, at, o);
        break;
    case SIM_STUCK_RELEASE_FAILED:
        sim_report_put(buf, len, "%s's release ended in an error at %ld ms and "
                 "left its key", o, at);
        break;
    default:
        sim_report_put(buf, len, "which client made the key cannot be named");
    }
}

static void dl_say(char *buf, size_t len, const sim_dl_evidence *dl,
                   int64_t t0)
{
    char w[SIM_REPORT_NAME], o[SIM_REPORT_NAME], why[PART], whose[PART];
    long waited = sim_report_ms(dl->busy_ns, dl->invoke_ns);

    sim_report_who(w, sizeof(w), dl->waiter, dl->waiter_thread);
    if (dl->self) {
        sim_report_put(buf, len, "client %s waited %ld ms for the lock it already "
                 "held since %ld ms and gave up at %ld ms: self-deadlock", w,
                 waited, sim_report_ms(dl->held_since_ns, t0),
                 sim_report_ms(dl->busy_ns, t0));
        return;
    }
    sim_report_who(o, sizeof(o), dl->owner, dl->owner_thread);
    stuck_why(why, sizeof(why), dl, o, t0);
    if (dl->owner == SIM_UNNAMED)
        sim_report_put(whose, sizeof(whose), "a key that no client held");
    else if (dl->stuck <= SIM_STUCK_CRASHED_ACQUIRING)
        sim_report_put(whose, sizeof(whose), "crashed client %s's key", o);
    else
        sim_report_put(whose, sizeof(whose), "client %s's key, which no client "
                 "held,", o);
    sim_report_put(buf, len, "client %s waited %ld ms and gave up at %ld ms while "
             "%s had no TTL: deadlock (%s)", w, waited,
             sim_report_ms(dl->busy_ns, t0), whose, why);
}

/* ", behind B, who asked at 35 ms and was killed waiting at 121 ms": the
 * dead waiter ahead, when the history shows one. */
static void dead_ahead(char *buf, size_t len, const sim_st_evidence *st,
                       int64_t t0)
{
    char d[SIM_REPORT_NAME];

    buf[0] = '\0';
    if (st->dead == SIM_NO_CLIENT)
        return;
    sim_report_put(buf, len, ", behind %s, who asked at %ld ms and was killed "
             "waiting at %ld ms", sim_report_who(d, sizeof(d), st->dead,
             st->dead_thread), sim_report_ms(st->dead_invoke_ns, t0),
             sim_report_ms(st->dead_crash_ns, t0));
}

static void st_say(char *buf, size_t len, const sim_st_evidence *st,
                   int64_t t0)
{
    char w[SIM_REPORT_NAME], ahead[PART];

    dead_ahead(ahead, sizeof(ahead), st, t0);
    sim_report_put(buf, len, "the lock was free from %ld ms to %ld ms while "
             "client %s waited for it%s: %ld ms, longer than the %ld ms "
             "bound, and %s: stalled", sim_report_ms(st->from_ns, t0),
             sim_report_ms(st->to_ns, t0), sim_report_who(w, sizeof(w),
             st->waiter, st->waiter_thread), ahead,
             sim_report_ms(st->to_ns, st->from_ns), sim_report_ms(st->bound_ns, 0),
             st->taken ? "only then was it taken" : "nobody took it");
}

void sim_report_say(char *buf, size_t len, const sim_episode *e,
                    const sim_event *ev, int64_t t0_ns)
{
    if (e->kind == SIM_ANOM_ME)
        me_say(buf, len, &e->me, ev, t0_ns);
    else if (e->kind == SIM_ANOM_MD)
        md_say(buf, len, &e->md, ev, t0_ns);
    else if (e->kind == SIM_ANOM_ST)
        st_say(buf, len, &e->st, t0_ns);
    else
        dl_say(buf, len, &e->dl, t0_ns);
}

/* ---- the short ones, for the matrix ------------------------------------------- */

/* "A and B held the lock at once in [762 ms, 910 ms]". */
static void me_brief(char *buf, size_t len, const sim_me_evidence *me,
                     int64_t t0)
{
    char a[SIM_REPORT_NAME], b[SIM_REPORT_NAME];

    sim_report_put(buf, len, "%s and %s held the lock at once in [%ld ms, %ld ms]",
             sim_report_who(a, sizeof(a), me->a.client, me->a.thread),
             sim_report_who(b, sizeof(b), me->b.client, me->b.thread),
             sim_report_ms(me->from_ns, t0), sim_report_ms(me->to_ns, t0));
}

/* "A deleted B's lock at 910 ms; C got in at 914 ms". */
static void md_brief(char *buf, size_t len, const sim_md_evidence *md,
                     int64_t t0)
{
    char x[SIM_REPORT_NAME], y[SIM_REPORT_NAME], z[SIM_REPORT_NAME];
    char then[PART] = "";

    sim_report_who(y, sizeof(y), md->owner.client, md->owner.thread);
    if (md->intruder.client != SIM_NO_CLIENT)
        sim_report_put(then, sizeof(then), "; %s got in at %ld ms",
                 sim_report_who(z, sizeof(z), md->intruder.client,
                                md->intruder.thread),
                 sim_report_ms(md->intruder.since_ns, t0));
    if (md->deleter == SIM_UNNAMED)
        sim_report_put(x, sizeof(x), "someone");
    else
        sim_report_who(x, sizeof(x), md->deleter, md->deleter_thread);
    sim_report_put(buf, len, "%s deleted %s%s lock at %ld ms%s", x,
             md->owner.client == SIM_UNNAMED ? "an unnamed client's" : y,
             md->owner.client == SIM_UNNAMED ? "" : "'s",
             sim_report_ms(md->at_ns, t0), then);
}

/* "B gave up at 1310 ms: crashed A's key had no TTL". */
static void dl_brief(char *buf, size_t len, const sim_dl_evidence *dl,
                     int64_t t0)
{
    static const char *const why[] = {
        [SIM_STUCK_CRASHED] = "",
        [SIM_STUCK_CRASHED_ACQUIRING] = "",
        [SIM_STUCK_ACQUIRE_FAILED] = " (its acquire failed)",
        [SIM_STUCK_RELEASE_FAILED] = " (its release failed)",
        [SIM_STUCK_UNNAMED] = "",
    };
    char w[SIM_REPORT_NAME], o[SIM_REPORT_NAME];
    long at = sim_report_ms(dl->busy_ns, t0);

    sim_report_who(w, sizeof(w), dl->waiter, dl->waiter_thread);
    sim_report_who(o, sizeof(o), dl->owner, dl->owner_thread);
    if (dl->self)
        sim_report_put(buf, len, "%s gave up at %ld ms waiting for the lock it "
                 "held", w, at);
    else if (dl->owner == SIM_UNNAMED)
        sim_report_put(buf, len, "%s gave up at %ld ms: a key nobody held had no "
                 "TTL", w, at);
    else
        sim_report_put(buf, len, "%s gave up at %ld ms: %s%s's key had no TTL%s",
                 w, at, dl->stuck <= SIM_STUCK_CRASHED_ACQUIRING ? "crashed "
                 : "", o, why[dl->stuck]);
}

/* "C waited on a free lock 1170 ms from 310 ms, behind dead B". */
static void st_brief(char *buf, size_t len, const sim_st_evidence *st,
                     int64_t t0)
{
    char w[SIM_REPORT_NAME], d[SIM_REPORT_NAME], ahead[PART] = "";

    if (st->dead != SIM_NO_CLIENT)
        sim_report_put(ahead, sizeof(ahead), ", behind dead %s",
                 sim_report_who(d, sizeof(d), st->dead, st->dead_thread));
    sim_report_put(buf, len, "%s waited on a free lock %ld ms from %ld ms%s",
             sim_report_who(w, sizeof(w), st->waiter, st->waiter_thread),
             sim_report_ms(st->to_ns, st->from_ns),
             sim_report_ms(st->from_ns, t0), ahead);
}

void sim_report_brief(char *buf, size_t len, const sim_episode *e,
                      int64_t t0_ns)
{
    if (e->kind == SIM_ANOM_ME)
        me_brief(buf, len, &e->me, t0_ns);
    else if (e->kind == SIM_ANOM_MD)
        md_brief(buf, len, &e->md, t0_ns);
    else if (e->kind == SIM_ANOM_ST)
        st_brief(buf, len, &e->st, t0_ns);
    else
        dl_brief(buf, len, &e->dl, t0_ns);
}

/* ---- numbers and gaps ------------------------------------------------------ */

void sim_report_stock(char *buf, size_t len, const sim_verdict *v)
{
    const sim_damage_evidence *s = &v->stock;
    long long refused = (long long)v->n_refusals;
    char also[64] = "";
    int k;

    if (refused > 0)
        snprintf(also, sizeof(also), " and %lld refused %s", refused,
                 plural(refused, "write", "writes"));
    k = snprintf(buf, len, "stock %lld -> %lld after %lld %s%s: ",
                 (long long)s->initial, (long long)s->final,
                 (long long)s->sold, plural(s->sold, "sale", "sales"), also);

    if (k < 0 || (size_t)k >= len)
        return;
    buf += k;
    len -= (size_t)k;
    if (s->lost > 0)
        k = snprintf(buf, len, "%lld %s lost", (long long)s->lost,
                     plural(s->lost, "update", "updates"));
    else if (s->lost < 0)
        k = snprintf(buf, len, "the stock fell %lld more than the sales "
                     "recorded", (long long)-s->lost);
    else
        k = snprintf(buf, len, "no update lost");
    if (s->oversold > 0 && k >= 0 && (size_t)k < len)
        sim_report_put(buf + k, len - (size_t)k, ", oversold by %lld",
                 (long long)s->oversold);
}

/* ---- the fence ------------------------------------------------------------- */

/* "read the stock", "written the stock": what showed the resource the
 * newer token. */
static const char *access_words(int type)
{
    return type == SIM_EV_STOCK_WRITE ? "written" : "read";
}

void sim_report_refusal(char *buf, size_t len, const sim_refusal *r,
                        int64_t t0_ns)
{
    char w[SIM_REPORT_NAME], by[SIM_REPORT_NAME];

    sim_report_who(w, sizeof(w), r->client, r->thread);
    sim_report_who(by, sizeof(by), r->by, r->by_thread);
    if (r->by == SIM_UNNAMED)
        sim_report_put(buf, len, "client %s's write with token %lld was refused "
                       "at %ld ms: the resource had seen token %lld", w,
                       (long long)r->token, sim_report_ms(r->at_ns, t0_ns),
                       (long long)r->fence);
    else
        sim_report_put(buf, len, "client %s's write with token %lld was refused "
                       "at %ld ms: client %s had %s the stock with token %lld "
                       "at %ld ms", w, (long long)r->token,
                       sim_report_ms(r->at_ns, t0_ns), by, access_words(r->by_type),
                       (long long)r->fence, sim_report_ms(r->by_ns, t0_ns));
}

void sim_report_refusal_brief(char *buf, size_t len, const sim_refusal *r,
                              int64_t t0_ns)
{
    char w[SIM_REPORT_NAME], by[SIM_REPORT_NAME + 3] = "";

    sim_report_who(w, sizeof(w), r->client, r->thread);
    /* "< B's 2", or "< 2" where no access in the history showed the token. */
    if (r->by != SIM_UNNAMED) {
        sim_report_who(by, SIM_REPORT_NAME, r->by, r->by_thread);
        strcat(by, "'s ");
    }
    sim_report_put(buf, len, "%s's write refused at %ld ms: its token %lld < %s%lld", w,
                   sim_report_ms(r->at_ns, t0_ns), (long long)r->token, by,
                   (long long)r->fence);
}

void sim_report_clash(char *buf, size_t len, const sim_token_clash *k,
                      int64_t t0_ns)
{
    char a[SIM_REPORT_NAME], b[SIM_REPORT_NAME];

    sim_report_who(a, sizeof(a), k->a, k->a_thread);
    sim_report_who(b, sizeof(b), k->b, k->b_thread);
    sim_report_put(buf, len, "client %s %s the stock with token %lld at %ld ms, "
                   "the token client %s had used since %ld ms: the resource "
                   "could not tell the two apart", b,
                   k->b_type == SIM_EV_STOCK_WRITE ? "wrote" : "read",
                   (long long)k->token, sim_report_ms(k->b_ns, t0_ns), a,
                   sim_report_ms(k->a_ns, t0_ns));
}

void sim_report_clash_brief(char *buf, size_t len, const sim_token_clash *k,
                            int64_t t0_ns)
{
    char a[SIM_REPORT_NAME], b[SIM_REPORT_NAME];

    sim_report_who(a, sizeof(a), k->a, k->a_thread);
    sim_report_who(b, sizeof(b), k->b, k->b_thread);
    sim_report_put(buf, len, "%s and %s both used token %lld (%s from %ld ms)",
                   a, b, (long long)k->token, b, sim_report_ms(k->b_ns, t0_ns));
}

void sim_report_gap(char *buf, size_t len, const sim_gap *g,
                    const sim_event *ev, int64_t t0_ns)
{
    char w[SIM_REPORT_NAME] = "?";
    long at = sim_report_ms(g->at_ns, t0_ns);

    if (ev != NULL)
        sim_report_who(w, sizeof(w), ev[g->at].client, ev[g->at].thread);
    switch (g->kind) {
    case SIM_GAP_NO_CREATION:
        sim_report_put(buf, len, "the observer missed a key's creation: it "
                 "reported \"%s\" at %ld ms while it had reported no key",
                 ev != NULL ? ev[g->at].detail : "?", at);
        break;
    case SIM_GAP_NO_END:
        sim_report_put(buf, len, "the observer missed a key's end: it "
                 "reported \"set\" at %ld ms while the key before it had "
                 "not ended", at);
        break;
    case SIM_GAP_NO_KEY:
        sim_report_put(buf, len, "the observer missed a key's creation: client "
                 "%s's acquire at %ld ms returned OK, and no key it reported "
                 "can be %s's", w, at, w);
        break;
    default:
        sim_report_put(buf, len, "the history has no key events (no observer): a "
                 "lock deleted by a non-owner, or a key that stays, cannot "
                 "be seen");
    }
}
