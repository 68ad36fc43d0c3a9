/* html_lanes: the client lanes of a run's timeline, read from its
 * history: for each client, the stretches in which it waited for the
 * lock, held it, worked inside its critical section, released it (and
 * how the release ended), was paused, and the moment it was killed or
 * gave up. A client's threads share its lane. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_svg.h"

#define SALES_LABELLED 24 /* more sales than this: their numbers are noise */

/* What a lane shows over a stretch, in the order they are drawn. */
enum { K_WAIT, K_HOLD, K_CS, K_RELEASE, K_PAUSE, K_SALE, K_TOKEN,
       K_REFUSED, K_GAVE_UP, K_ERROR, K_KILLED, K_KINDS };

typedef struct stretch {
    int client;
    int kind;            /* K_* */
    int64_t from, to;    /* a moment: from == to */
    int ended;           /* K_RELEASE: the event type that ended it; -1 */
    int64_t read, wrote; /* K_SALE: the stock read, and written; K_TOKEN:
                          * the token drawn (wrote); K_REFUSED: which of
                          * the verdict's refusals (wrote) */
    int quiet;           /* its words in the bar would cover another's:
                          * its tooltip alone tells them */
} stretch;

/* One client thread's open stretches while the history is read. */
typedef struct thread_state {
    int client, thread;
    int64_t wait, hold, cs, release; /* since when; -1: not open */
    int64_t read;                    /* the stock it last read */
    int depth;                       /* holds open (a reentrant lock) */
} thread_state;

typedef struct lanes {
    sim_svg *s;
    stretch *st;
    size_t n, cap;
    thread_state *th;
    size_t n_th, cap_th;
    int64_t *paused;     /* per client: a pause's start + 1; 0: none */
    size_t sales;
} lanes;

/* ---- the history, read into stretches ---------------------------------------- */

/* arr with room for one more past its n elements: *cap grown when it
 * must be; NULL when out of memory (arr is then still valid). */
static void *room(void *arr, size_t n, size_t *cap, size_t size)
{
    void *p;

    if (n < *cap)
        return arr;
    if ((p = realloc(arr, (*cap * 2 + 16) * size)) != NULL)
        *cap = *cap * 2 + 16;
    return p;
}

static stretch *add(lanes *l, int client, int kind, int64_t from, int64_t to)
{
    stretch *p = room(l->st, l->n, &l->cap, sizeof(*p));

    if (p == NULL)
        return NULL;
    l->st = p;
    l->st[l->n] = (stretch){ client, kind, from, to, -1, 0, 0, 0 };
    return &l->st[l->n++];
}

static thread_state *thread_of(lanes *l, int client, int thread)
{
    thread_state *p;

    for (size_t i = 0; i < l->n_th; i++)
        if (l->th[i].client == client && l->th[i].thread == thread)
            return &l->th[i];
    if ((p = room(l->th, l->n_th, &l->cap_th, sizeof(*p))) == NULL)
        return NULL;
    l->th = p;
    l->th[l->n_th] = (thread_state){ client, thread, -1, -1, -1, -1, 0, 0 };
    return &l->th[l->n_th++];
}

/* Ends the stretch open since *since (if any) at t. */
static stretch *close_at(lanes *l, int client, int kind, int64_t *since,
                         int64_t t)
{
    stretch *s = NULL;

    if (*since >= 0)
        s = add(l, client, kind, *since, t);
    *since = -1;
    return s;
}

/* Whatever a thread has open ends at t: its client was killed, or the
 * run ended. */
static void close_thread(lanes *l, thread_state *t, int64_t at)
{
    close_at(l, t->client, K_WAIT, &t->wait, at);
    close_at(l, t->client, K_HOLD, &t->hold, at);
    close_at(l, t->client, K_CS, &t->cs, at);
    close_at(l, t->client, K_RELEASE, &t->release, at);
}

static void acquired(lanes *l, thread_state *t, const sim_event *e)
{
    stretch *token;

    close_at(l, t->client, K_WAIT, &t->wait, e->t_ns);
    if (e->type == SIM_EV_ACQUIRE_OK) {
        if (t->depth++ == 0)
            t->hold = e->t_ns;
        /* A stage that fences: the token this hold drew. */
        if (e->token > 0 && (token = add(l, t->client, K_TOKEN, e->t_ns, e->t_ns)) != NULL)
            token->wrote = e->token;
        return;
    }
    add(l, t->client, e->type == SIM_EV_ACQUIRE_BUSY ? K_GAVE_UP : K_ERROR,
        e->t_ns, e->t_ns);
}

static void released(lanes *l, thread_state *t, const sim_event *e)
{
    stretch *s = close_at(l, t->client, K_RELEASE, &t->release, e->t_ns);

    if (s != NULL)
        s->ended = e->type;
}

static void sale(lanes *l, thread_state *t, const sim_event *e)
{
    stretch *s = add(l, t->client, K_SALE, e->t_ns, e->t_ns);

    if (s != NULL) {
        s->read = t->read;
        s->wrote = e->value;
    }
    l->sales++;
}

static void thread_event(lanes *l, thread_state *t, const sim_event *e)
{
    switch (e->type) {
    case SIM_EV_ACQUIRE_INVOKE: t->wait = e->t_ns; break;
    case SIM_EV_ACQUIRE_OK:
    case SIM_EV_ACQUIRE_BUSY:
    case SIM_EV_ACQUIRE_ERROR: acquired(l, t, e); break;
    case SIM_EV_CS_ENTER: t->cs = e->t_ns; break;
    case SIM_EV_CS_EXIT: close_at(l, t->client, K_CS, &t->cs, e->t_ns); break;
    case SIM_EV_STOCK_READ: t->read = e->value; break;
    case SIM_EV_STOCK_WRITE: sale(l, t, e); break;
    case SIM_EV_RELEASE_INVOKE:
        /* The outermost release ends the hold; a retry finds it ended. */
        if (t->depth > 0 && --t->depth == 0)
            close_at(l, t->client, K_HOLD, &t->hold, e->t_ns);
        t->release = e->t_ns;
        break;
    case SIM_EV_RELEASE_OK:
    case SIM_EV_RELEASE_NOT_OWNER:
    case SIM_EV_RELEASE_ERROR: released(l, t, e); break;
    default: break;
    }
}

static void client_event(lanes *l, const sim_event *e)
{
    thread_state *t;

    if (e->type == SIM_EV_PAUSE_BEGIN) {
        l->paused[e->client] = e->t_ns + 1;
    } else if (e->type == SIM_EV_PAUSE_END) {
        int64_t since = l->paused[e->client] - 1;

        close_at(l, e->client, K_PAUSE, &since, e->t_ns);
        l->paused[e->client] = 0;
    } else if (e->type == SIM_EV_CRASH) {
        for (size_t k = 0; k < l->n_th; k++)
            if (l->th[k].client == e->client)
                close_thread(l, &l->th[k], e->t_ns);
        add(l, e->client, K_KILLED, e->t_ns, e->t_ns);
    } else if ((t = thread_of(l, e->client, e->thread)) != NULL) {
        thread_event(l, t, e);
    }
}

static int read_history(lanes *l)
{
    const sim_html_run *r = l->s->run;

    if ((l->paused = calloc((size_t)l->s->lanes, sizeof(*l->paused))) == NULL)
        return -1;
    for (size_t i = 0; i < r->n; i++)
        if (r->ev[i].client >= 0 && r->ev[i].client < l->s->lanes)
            client_event(l, &r->ev[i]);
    for (size_t k = 0; k < l->n_th; k++)
        close_thread(l, &l->th[k], l->s->end);
    for (int c = 0; c < l->s->lanes; c++) {
        int64_t since = l->paused[c] - 1;

        if (l->paused[c] > 0)
            close_at(l, c, K_PAUSE, &since, l->s->end);
    }
    /* The fence at work: each write the resource refused, as the
     * verdict tells it. */
    for (size_t i = 0; i < l->s->v->n_refusals; i++) {
        const sim_refusal *r = &l->s->v->refusals[i];
        stretch *st;

        if (r->client >= 0 && r->client < l->s->lanes &&
            (st = add(l, r->client, K_REFUSED, r->at_ns, r->at_ns)) != NULL)
            st->wrote = (int64_t)i;
    }
    return 0;
}

/* ---- drawing --------------------------------------------------------------------- */

static const char *release_fill(int ended)
{
    switch (ended) {
    case SIM_EV_RELEASE_NOT_OWNER: return "#7b1fa2";
    case SIM_EV_RELEASE_ERROR: return "#e65100";
    default: return "#37474f";
    }
}

/* A release: its bar, and how it ended when that matters. */
static void release_bar(sim_svg *s, const stretch *st, double x, double w,
                        double y, const char *who)
{
    char attrs[96];
    long from = sim_report_ms(st->from, s->t0), to = sim_report_ms(st->to, s->t0);

    SIM_SVG_USE(s, st->ended == SIM_EV_RELEASE_NOT_OWNER ? SIM_SW_NOT_OWNER
                : st->ended == SIM_EV_RELEASE_ERROR ? SIM_SW_ERROR : SIM_SW_RELEASE);
    if (st->ended == SIM_EV_RELEASE_NOT_OWNER)
        sim_svg_group(s, "class=\"release not-owner\"", "%s's release returned "
                      "NOT_OWNER at %ld ms: the key was no longer %s's, and "
                      "nothing was deleted", who, to, who);
    else if (st->ended == SIM_EV_RELEASE_ERROR)
        sim_svg_group(s, "class=\"release error\"", "%s's release ended in an "
                      "error at %ld ms", who, to);
    else
        sim_svg_group(s, "class=\"release\"", "%s releases the lock: %ld to "
                      "%ld ms%s", who, from, to, st->ended < 0 ? " (it never "
                      "returned)" : "");
    snprintf(attrs, sizeof(attrs), "fill=\"%s\"%s", release_fill(st->ended),
             st->ended < 0 ? " fill-opacity=\"0.45\"" : "");
    sim_svg_rect(s, x, y + 8, w, SIM_SVG_LANE_H - 16, attrs);
    /* Above the bar's middle and below it: a release that failed and its
     * retry a few ms later keep their words apart. */
    if (st->ended == SIM_EV_RELEASE_NOT_OWNER)
        sim_svg_label(s, x + w + 3, y + 12, "small", "NOT_OWNER");
    else if (st->ended == SIM_EV_RELEASE_ERROR)
        sim_svg_label(s, x + w + 3, y + SIM_SVG_LANE_H - 3, "small", "error");
    sim_svg_end(s);
}

/* A moment: a tick and a word. */
static void moment(sim_svg *s, double x, double y, const char *fill,
                   const char *words)
{
    char attrs[96];

    snprintf(attrs, sizeof(attrs), "fill=\"%s\"", fill);
    sim_svg_rect(s, x - 1.5, y + 3, 3, SIM_SVG_LANE_H - 6, attrs);
    sim_svg_label(s, x + 4, y + SIM_SVG_LANE_H - 7, "small", words);
    sim_svg_end(s);
}

/* A band across a lane: holding, or inside the critical section. */
static void band(sim_svg *s, double x, double w, double y, const char *cls,
                 const char *fill, const char *opacity)
{
    char attrs[128];

    snprintf(attrs, sizeof(attrs), "class=\"%s\" fill=\"%s\" fill-opacity=\"%s\"",
             cls, fill, opacity);
    sim_svg_rect(s, x, y + (SIM_SVG_LANE_H - SIM_SVG_BAND_H) / 2.0, w,
                 SIM_SVG_BAND_H, attrs);
    sim_svg_end(s);
}

/* A stretch with its duration: waiting, holding, inside, paused. */
static void span(sim_svg *s, const stretch *st, double y, const char *who)
{
    double x = sim_svg_x(s, st->from), w = sim_svg_x(s, st->to) - x;
    const char *colour = sim_html_client_colour(st->client);
    long from = sim_report_ms(st->from, s->t0), to = sim_report_ms(st->to, s->t0);

    SIM_SVG_USE(s, st->kind == K_WAIT ? SIM_SW_WAIT : st->kind == K_HOLD ? SIM_SW_HOLD
                : st->kind == K_CS ? SIM_SW_CS : SIM_SW_PAUSE);
    if (st->kind == K_WAIT) {
        sim_svg_group(s, "class=\"wait\"", "%s waits for the lock: %ld to %ld ms",
                      who, from, to);
        sim_svg_rect(s, x, y + SIM_SVG_LANE_H / 2.0 - 2, w, 4, "fill=\"#78909c\"");
        sim_svg_end(s);
    } else if (st->kind == K_HOLD) {
        sim_svg_group(s, NULL, "%s holds the lock: %ld to %ld ms", who, from, to);
        band(s, x, w, y, "hold", colour, "0.32");
    } else if (st->kind == K_CS) {
        sim_svg_group(s, NULL, "%s is inside its critical section: %ld to %ld ms",
                      who, from, to);
        band(s, x, w, y, "cs", colour, "1");
    } else {
        sim_svg_group(s, "class=\"pause\"", "%s's process is stopped (SIGSTOP): "
                      "%ld to %ld ms", who, from, to);
        sim_svg_rect(s, x, y + 1, w, SIM_SVG_LANE_H - 2,
                     "fill=\"url(#hatch)\" stroke=\"#263238\"");
        sim_svg_label(s, x + 4, y + SIM_SVG_LANE_H - 9, "small", "paused");
        sim_svg_end(s);
    }
}

/* A moment: a sale (the stock read, and written), a give-up, an
 * acquire's error, a kill. */
static void instant(lanes *l, const stretch *st, double y, const char *who)
{
    sim_svg *s = l->s;
    double x = sim_svg_x(s, st->from);
    long at = sim_report_ms(st->from, s->t0);
    char words[48], words2[SIM_REPORT_SENTENCE];
    double box[4];

    if (st->kind == K_SALE && l->sales <= SALES_LABELLED) {
        if (!st->quiet)
            SIM_SVG_USE(s, SIM_SW_SALE);
        snprintf(words, sizeof(words), "%lld\u2192%lld", (long long)st->read,
                 (long long)st->wrote);
        sim_svg_group(s, "class=\"sale\"", "%s read the stock %lld and wrote "
                      "%lld at %ld ms", who, (long long)st->read,
                      (long long)st->wrote, at);
        if (!st->quiet)
            sim_svg_text(s, x - 3, y + SIM_SVG_LANE_H / 2.0 + 5, "in-bar", "end", words);
        sim_svg_end(s);
    } else if (st->kind == K_TOKEN) {
        if (!st->quiet)
            SIM_SVG_USE(s, SIM_SW_TOKEN);
        snprintf(words, sizeof(words), "token %lld", (long long)st->wrote);
        sim_svg_group(s, "class=\"token\"", "%s drew the fencing token %lld with "
                      "the lock at %ld ms", who, (long long)st->wrote, at);
        if (!st->quiet)
            sim_svg_text(s, x + 4, y + SIM_SVG_LANE_H / 2.0 + 5, "in-bar", "start", words);
        sim_svg_end(s);
    } else if (st->kind == K_REFUSED) {
        sim_report_refusal_brief(words2, sizeof(words2), &s->v->refusals[st->wrote], s->t0);
        SIM_SVG_USE(s, SIM_SW_FENCE);
        sim_svg_group(s, "class=\"refused\"", "F: %s", words2);
        /* The fence's mark, as the legend and the anomalies' lane draw it. */
        sim_svg_fence(s, x, y + SIM_SVG_LANE_H / 2.0);
        sim_svg_label(s, x + 9, y + SIM_SVG_LANE_H - 7, "small", "refused");
        sim_svg_end(s);
    } else if (st->kind == K_GAVE_UP) {
        SIM_SVG_USE(s, SIM_SW_GAVE_UP);
        sim_svg_group(s, "class=\"gave-up\"", "%s's acquire gave up at %ld ms: "
                      "its wait budget was spent", who, at);
        moment(s, x, y, "#212121", "gave up");
    } else if (st->kind == K_ERROR) {
        SIM_SVG_USE(s, SIM_SW_ERROR);
        sim_svg_group(s, "class=\"acquire-error\"", "%s's acquire ended in an "
                      "error at %ld ms", who, at);
        moment(s, x, y, "#e65100", "error");
    } else if (st->kind == K_KILLED) {
        SIM_SVG_USE(s, SIM_SW_KILLED);
        sim_svg_group(s, "class=\"killed\"", "%s was killed (SIGKILL) at %ld ms",
                      who, at);
        sim_svg_text_box(x, y + SIM_SVG_LANE_H - 9, "cross", "middle", "\u2715", box);
        sim_svg_claim(s, box);
        sim_svg_text(s, x, y + SIM_SVG_LANE_H - 9, "cross", "middle", "\u2715");
        sim_svg_label(s, x + 10, y + SIM_SVG_LANE_H - 10, "small", "killed");
        sim_svg_end(s);
    }
}

static void draw(lanes *l, const stretch *st, double y)
{
    double x = sim_svg_x(l->s, st->from);
    char who[SIM_REPORT_NAME];

    sim_check_client_name(st->client, who, sizeof(who));
    if (st->kind == K_RELEASE)
        release_bar(l->s, st, x, sim_svg_x(l->s, st->to) - x, y, who);
    else if (st->kind == K_WAIT || st->kind == K_HOLD || st->kind == K_CS ||
             st->kind == K_PAUSE)
        span(l->s, st, y, who);
    else
        instant(l, st, y, who);
}

/* The words a token or a sale writes in its bar, where it sits in
 * instant(); 0 when it writes none. */
static int in_bar_words(const lanes *l, const stretch *st, double y, double box[4])
{
    double x = sim_svg_x(l->s, st->from);
    char words[48];

    if (st->kind == K_TOKEN) {
        snprintf(words, sizeof(words), "token %lld", (long long)st->wrote);
        sim_svg_text_box(x + 4, y + SIM_SVG_LANE_H / 2.0 + 5, "in-bar", "start", words, box);
        return 1;
    }
    if (st->kind == K_SALE && l->sales <= SALES_LABELLED) {
        snprintf(words, sizeof(words), "%lld\u2192%lld", (long long)st->read,
                 (long long)st->wrote);
        sim_svg_text_box(x - 3, y + SIM_SVG_LANE_H / 2.0 + 5, "in-bar", "end", words, box);
        return 1;
    }
    return 0;
}

/* The words in a lane's bars claim their room first, tokens before
 * sales: they cannot move out of their bar, the words beside a bar can
 * (sim_svg_label). One that would cover another keeps quiet. */
static void claim_in_bar(lanes *l, int c, double y)
{
    static const int first[] = { K_TOKEN, K_SALE };
    double box[4];

    for (size_t k = 0; k < sizeof(first) / sizeof(first[0]); k++)
        for (size_t i = 0; i < l->n; i++)
            if (l->st[i].client == c && l->st[i].kind == first[k] &&
                in_bar_words(l, &l->st[i], y, box))
                l->st[i].quiet = !sim_svg_claim(l->s, box);
}

/* One client's lane: its name, a track, then its stretches by kind, so
 * that the critical section lies over the hold and a pause over both. */
static void lane(lanes *l, int c)
{
    sim_svg *s = l->s;
    double y = s->y_clients + c * SIM_SVG_LANE_H;
    char who[SIM_REPORT_NAME], label[SIM_REPORT_NAME + 8], attrs[64];
    /* A client given a lease of its own says it under its name: the
     * lease axis below counts the run's. */
    long own = sim_history_lease_of(s->run->ev, s->run->n, c);
    int apart = own > 0 && own != s->run->info->lease_ms;

    sim_check_client_name(c, who, sizeof(who));
    fprintf(s->f, "<g class=\"lane client\" data-client=\"%s\">\n", who);
    sim_svg_rect(s, SIM_SVG_LABEL_W, y + 2, sim_svg_x(s, s->end) - SIM_SVG_LABEL_W,
                 SIM_SVG_LANE_H - 4, "class=\"track\" fill=\"#f4f6f7\"");
    snprintf(attrs, sizeof(attrs), "fill=\"%s\"", sim_html_client_colour(c));
    sim_svg_rect(s, 8, y + 9, 14, 14, attrs);
    snprintf(label, sizeof(label), "client %s", who);
    sim_svg_text(s, 28, y + (apart ? 16 : 21), "lane-label", "start", label);
    if (apart) {
        snprintf(label, sizeof(label), "lease %ld ms", own);
        sim_svg_text(s, 28, y + 32, "small own-lease", "start", label);
    }
    claim_in_bar(l, c, y);
    for (int k = 0; k < K_KINDS; k++)
        for (size_t i = 0; i < l->n; i++)
            if (l->st[i].client == c && l->st[i].kind == k)
                draw(l, &l->st[i], y);
    fputs("</g>\n", s->f);
}

void sim_svg_client_lanes(sim_svg *s)
{
    lanes l;

    memset(&l, 0, sizeof(l));
    l.s = s;
    if (read_history(&l) == 0)
        for (int c = 0; c < s->lanes; c++)
            lane(&l, c);
    free(l.st);
    free(l.th);
    free(l.paused);
}
