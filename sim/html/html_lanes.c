/* html_lanes: the client lanes of a run's timeline, drawn from the
 * stretches and moments that lanes.h reads from its history, the same
 * that the terminal's timeline draws: for each client, when it waited
 * for the lock, held it, worked inside its critical section, released it
 * (and how the release ended), was paused or cut off from the lock's
 * servers, and the moment it was killed or gave up. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_svg.h"
#include "lanes.h"

#define SALES_LABELLED 24 /* more sales than this: their numbers are noise */

/* The run's lanes (lanes.h), and which of their words keep quiet. */
typedef struct lanes {
    sim_svg *s;
    sim_lanes m;         /* every client's stretches and moments */
    unsigned char *quiet; /* per stretch: its words in the bar would cover
                          * another's, so only its tooltip tells them */
} lanes;

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
static void release_bar(sim_svg *s, const sim_stretch *st, double x, double w,
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
static void span(sim_svg *s, const sim_stretch *st, double y, const char *who)
{
    double x = sim_svg_x(s, st->from), w = sim_svg_x(s, st->to) - x;
    const char *colour = sim_html_client_colour(st->client);
    long from = sim_report_ms(st->from, s->t0), to = sim_report_ms(st->to, s->t0);

    SIM_SVG_USE(s, st->kind == SIM_LANE_WAIT ? SIM_SW_WAIT : st->kind == SIM_LANE_HOLD ? SIM_SW_HOLD
                : st->kind == SIM_LANE_CS ? SIM_SW_CS : SIM_SW_PAUSE);
    if (st->kind == SIM_LANE_WAIT) {
        sim_svg_group(s, "class=\"wait\"", "%s waits for the lock: %ld to %ld ms",
                      who, from, to);
        sim_svg_rect(s, x, y + SIM_SVG_LANE_H / 2.0 - 2, w, 4, "fill=\"#78909c\"");
        sim_svg_end(s);
    } else if (st->kind == SIM_LANE_HOLD) {
        sim_svg_group(s, NULL, "%s holds the lock: %ld to %ld ms", who, from, to);
        band(s, x, w, y, "hold", colour, "0.32");
    } else if (st->kind == SIM_LANE_CS) {
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
static void instant(lanes *l, const sim_stretch *st, double y, const char *who)
{
    sim_svg *s = l->s;
    int quiet = l->quiet[st - l->m.st];
    double x = sim_svg_x(s, st->from);
    long at = sim_report_ms(st->from, s->t0);
    char words[48], words2[SIM_REPORT_SENTENCE];

    if (st->kind == SIM_LANE_SALE && l->m.sales <= SALES_LABELLED) {
        if (!quiet)
            SIM_SVG_USE(s, SIM_SW_SALE);
        snprintf(words, sizeof(words), "%lld\u2192%lld", (long long)st->read,
                 (long long)st->wrote);
        sim_svg_group(s, "class=\"sale\"", "%s read the stock %lld and wrote "
                      "%lld at %ld ms", who, (long long)st->read,
                      (long long)st->wrote, at);
        if (!quiet)
            sim_svg_text(s, x - 3, y + SIM_SVG_LANE_H / 2.0 + 5, "in-bar", "end", words);
        sim_svg_end(s);
    } else if (st->kind == SIM_LANE_TOKEN) {
        if (!quiet)
            SIM_SVG_USE(s, SIM_SW_TOKEN);
        snprintf(words, sizeof(words), "token %lld", (long long)st->wrote);
        sim_svg_group(s, "class=\"token\"", "%s drew the fencing token %lld with "
                      "the lock at %ld ms", who, (long long)st->wrote, at);
        if (!quiet)
            sim_svg_text(s, x + 4, y + SIM_SVG_LANE_H / 2.0 + 5, "in-bar", "start", words);
        sim_svg_end(s);
    } else if (st->kind == SIM_LANE_REFUSED) {
        sim_report_refusal_brief(words2, sizeof(words2), &s->v->refusals[st->wrote], s->t0);
        SIM_SVG_USE(s, SIM_SW_FENCE);
        sim_svg_group(s, "class=\"refused\"", "F: %s", words2);
        /* The fence's mark, as the legend and the anomalies' lane draw it. */
        sim_svg_fence(s, x, y + SIM_SVG_LANE_H / 2.0);
        sim_svg_label(s, x + 9, y + SIM_SVG_LANE_H - 7, "small", "refused");
        sim_svg_end(s);
    } else if (st->kind == SIM_LANE_GAVE_UP) {
        SIM_SVG_USE(s, SIM_SW_GAVE_UP);
        sim_svg_group(s, "class=\"gave-up\"", "%s's acquire gave up at %ld ms: "
                      "its wait budget was spent", who, at);
        moment(s, x, y, "#212121", "gave up");
    } else if (st->kind == SIM_LANE_ERROR) {
        SIM_SVG_USE(s, SIM_SW_ERROR);
        sim_svg_group(s, "class=\"acquire-error\"", "%s's acquire ended in an "
                      "error at %ld ms", who, at);
        moment(s, x, y, "#e65100", "error");
    } else if (st->kind == SIM_LANE_KILLED) {
        SIM_SVG_USE(s, SIM_SW_KILLED);
        sim_svg_group(s, "class=\"killed\"", "%s was killed (SIGKILL) at %ld ms",
                      who, at);
        sim_svg_text(s, x, y + SIM_SVG_LANE_H - 9, "cross", "middle", "\u2715");
        sim_svg_label(s, x + 10, y + SIM_SVG_LANE_H - 10, "small", "killed");
        sim_svg_end(s);
    }
}

/* A client cut off from the lock's servers: a broken line along the top
 * of its lane, over whatever it did meanwhile (it ran on). */
static void cut_line(sim_svg *s, const sim_stretch *st, double y, const char *who)
{
    double x = sim_svg_x(s, st->from), x2 = sim_svg_x(s, st->to);
    char where[64] = "the lock's servers";
    size_t used = 0;
    int all = s->nodes > 1 ? s->nodes : 1, count = 0, seen = 0;

    for (int k = 0; k < all; k++)
        count += (int)((st->read >> k) & 1);
    if (count < all) {
        used = (size_t)snprintf(where, sizeof(where), count > 1 ? "nodes " : "node ");
        for (int k = 0; k < all && used < sizeof(where); k++)
            if ((st->read >> k) & 1)
                used += (size_t)snprintf(where + used, sizeof(where) - used, "%s%d",
                                         seen++ == 0 ? "" : seen == count ? " and " : ", ", k);
    }
    SIM_SVG_USE(s, SIM_SW_CUT);
    sim_svg_group(s, "class=\"cut\"", "%s is cut off from %s: %ld to %ld ms; what it "
                  "sends them and what they answer is lost, and its process runs on", who,
                  where, sim_report_ms(st->from, s->t0), sim_report_ms(st->to, s->t0));
    sim_svg_cut(s, x, x2, y + 4);
    sim_svg_end(s);
}

static void draw(lanes *l, const sim_stretch *st, double y)
{
    double x = sim_svg_x(l->s, st->from);
    char who[SIM_REPORT_NAME];

    sim_check_client_name(st->client, who, sizeof(who));
    if (st->kind == SIM_LANE_CUT)
        cut_line(l->s, st, y, who);
    else if (st->kind == SIM_LANE_RELEASE)
        release_bar(l->s, st, x, sim_svg_x(l->s, st->to) - x, y, who);
    else if (st->kind == SIM_LANE_WAIT || st->kind == SIM_LANE_HOLD || st->kind == SIM_LANE_CS ||
             st->kind == SIM_LANE_PAUSE)
        span(l->s, st, y, who);
    else
        instant(l, st, y, who);
}

/* The words a token or a sale writes in its bar, where it sits in
 * instant(); 0 when it writes none. */
static int in_bar_words(const lanes *l, const sim_stretch *st, double y, double box[4])
{
    double x = sim_svg_x(l->s, st->from);
    char words[48];

    if (st->kind == SIM_LANE_TOKEN) {
        snprintf(words, sizeof(words), "token %lld", (long long)st->wrote);
        sim_svg_text_box(x + 4, y + SIM_SVG_LANE_H / 2.0 + 5, "in-bar", "start", words, box);
        return 1;
    }
    if (st->kind == SIM_LANE_SALE && l->m.sales <= SALES_LABELLED) {
        snprintf(words, sizeof(words), "%lld\u2192%lld", (long long)st->read,
                 (long long)st->wrote);
        sim_svg_text_box(x - 3, y + SIM_SVG_LANE_H / 2.0 + 5, "in-bar", "end", words, box);
        return 1;
    }
    return 0;
}

/* A kill's cross is drawn whatever it covers: it claims its room before
 * any words. */
static void claim_crosses(lanes *l, int c, double y)
{
    double box[4];

    for (size_t i = 0; i < l->m.n; i++)
        if (l->m.st[i].client == c && l->m.st[i].kind == SIM_LANE_KILLED) {
            sim_svg_text_box(sim_svg_x(l->s, l->m.st[i].from), y + SIM_SVG_LANE_H - 9, "cross",
                             "middle", "\u2715", box);
            sim_svg_claim(l->s, box);
        }
}

/* The words in a lane's bars claim their room first, after the kills'
 * crosses, tokens before sales: they cannot move out of their bar, the
 * words beside a bar can (sim_svg_label). One that would cover another
 * keeps quiet (a ZooKeeper token, a czxid, is ten digits wide). */
static void claim_in_bar(lanes *l, int c, double y)
{
    static const int first[] = { SIM_LANE_TOKEN, SIM_LANE_SALE };
    double box[4];

    claim_crosses(l, c, y);
    for (size_t k = 0; k < sizeof(first) / sizeof(first[0]); k++)
        for (size_t i = 0; i < l->m.n; i++)
            if (l->m.st[i].client == c && l->m.st[i].kind == first[k] &&
                in_bar_words(l, &l->m.st[i], y, box))
                l->quiet[i] = !sim_svg_claim(l->s, box);
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
    for (int k = 0; k < SIM_LANE_KINDS; k++)
        for (size_t i = 0; i < l->m.n; i++)
            if (l->m.st[i].client == c && l->m.st[i].kind == k)
                draw(l, &l->m.st[i], y);
    fputs("</g>\n", s->f);
}

void sim_svg_client_lanes(sim_svg *s)
{
    lanes l = { .s = s };

    if (sim_lanes_read(&l.m, s->run->ev, s->run->n, s->lanes, s->end, s->v) == 0 &&
        (l.quiet = calloc(l.m.n + 1, 1)) != NULL)
        for (int c = 0; c < s->lanes; c++)
            lane(&l, c);
    free(l.quiet);
    sim_lanes_free(&l.m);
}
