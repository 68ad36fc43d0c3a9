/* html_svg: a run's timeline as an SVG picture, drawn from its history
 * and its verdict, never from the terminal's drawing.
 *
 * From the top: the time in milliseconds; the faults (pauses, kills,
 * failpoints, the failover's steps) as marks on it; one lane per client
 * (html_lanes.c); the lock key's lane: whose key, with or without a TTL;
 * the anomalies: each episode of the verdict, as an interval or a mark,
 * and every moment two clients held the lock as a red band across the
 * lanes; the time in leases; a legend.
 *
 * The scale is fixed in leases, so a scenario is as wide on every stage,
 * unless a run is too long for a page. Elements carry their meaning in
 * classes and data- attributes (a lane's client, an episode's interval
 * in ms), which is what the site's browser test reads. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_svg.h"
#include "lanes.h"
#include "scenarios.h"

#define PX_PER_LEASE 200 /* the scale, unless the run is too long */
#define MAX_PLOT 1500    /* the widest drawing a page shows whole */
#define MIN_PLOT 600
#define RIGHT_PAD 100     /* room for a label past the run's end */
#define ROW_H SIM_SVG_ROW_H
#define ME_ROWS 4

double sim_svg_x(const sim_svg *s, int64_t t)
{
    if (t < s->t0)
        t = s->t0;
    if (t > s->end)
        t = s->end;
    return SIM_SVG_LABEL_W + (double)(t - s->t0) * s->px_per_ns;
}

void sim_svg_rect(sim_svg *s, double x, double y, double w, double h,
                  const char *attrs)
{
    fprintf(s->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" %s/>\n",
            x, y, w < 2 ? 2 : w, h, attrs);
}

void sim_svg_text(sim_svg *s, double x, double y, const char *cls,
                  const char *anchor, const char *words)
{
    fprintf(s->f, "<text x=\"%.1f\" y=\"%.1f\" class=\"%s\" text-anchor=\"%s\">",
            x, y, cls, anchor);
    sim_html_esc(s->f, words);
    fputs("</text>\n", s->f);
}

/* Letters in a UTF-8 string: "\u2192" is one. */
static size_t letters(const char *w)
{
    size_t n = 0;

    for (; *w != '\0'; w++)
        n += ((unsigned char)*w & 0xC0) != 0x80;
    return n;
}

void sim_svg_text_box(double x, double y, const char *cls, const char *anchor,
                      const char *words, double box[4])
{
    /* px of the font, and of an average letter, for each class a label
     * in a lane may have (html_page.c's style) */
    double size = strncmp(cls, "small", 5) == 0 ? 12 : strcmp(cls, "cross") == 0 ? 22 : 13;
    double letter = strcmp(cls, "cross") == 0 ? 16 : strncmp(cls, "small", 5) == 0 ?
                    SIM_SVG_CHAR_W : 9.0;
    double w = letter * (double)letters(words);

    /* 2 px to spare on each side: a bold digit or an arrow is wider than
     * the average letter */
    box[0] = (strcmp(anchor, "end") == 0 ? x - w : strcmp(anchor, "middle") == 0 ?
              x - w / 2 : x) - 2;
    box[2] = box[0] + w + 4;
    box[1] = y - size;
    box[3] = y + size * 0.3;
}

/* The first claimed box that box covers, or NULL. */
static const double *covered(const sim_svg *s, const double box[4])
{
    for (size_t i = 0; i < s->n_boxes; i++) {
        const double *b = s->boxes[i];

        if (box[0] < b[2] && b[0] < box[2] && box[1] < b[3] && b[1] < box[3])
            return b;
    }
    return NULL;
}

int sim_svg_claim(sim_svg *s, const double box[4])
{
    if (covered(s, box) != NULL)
        return 0;
    if (s->n_boxes == s->cap_boxes) {
        size_t cap = s->cap_boxes * 2 + 32;
        double (*b)[4] = realloc(s->boxes, cap * sizeof(*b));

        if (b == NULL)
            return 1;   /* drawn all the same, only not kept apart */
        s->boxes = b;
        s->cap_boxes = cap;
    }
    memcpy(s->boxes[s->n_boxes++], box, sizeof(double) * 4);
    return 1;
}

void sim_svg_label(sim_svg *s, double x, double y, const char *cls,
                   const char *words)
{
    double box[4];
    const double *b;

    sim_svg_text_box(x, y, cls, "start", words, box);
    while ((b = covered(s, box)) != NULL) {
        double by = b[2] + 3 - box[0];

        box[0] += by;
        box[2] += by;
    }
    sim_svg_claim(s, box);
    sim_svg_text(s, box[0], y, cls, "start", words);
}

void sim_svg_cut(sim_svg *s, double x1, double x2, double y)
{
    fprintf(s->f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#b71c1c\" "
            "stroke-width=\"3\" stroke-dasharray=\"6 4\"/>\n<line x1=\"%.1f\" y1=\"%.1f\" "
            "x2=\"%.1f\" y2=\"%.1f\" stroke=\"#b71c1c\" stroke-width=\"2\"/>\n<line "
            "x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#b71c1c\" "
            "stroke-width=\"2\"/>\n", x1, y, x2 > x1 + 2 ? x2 : x1 + 2, y, x1, y - 3, x1, y + 3,
            x2, y - 3, x2, y + 3);
}

void sim_svg_fence(sim_svg *s, double cx, double cy)
{
    fprintf(s->f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"7\" fill=\"#00695c\"/>\n",
            cx, cy);
}

void sim_svg_clash(sim_svg *s, double cx, double cy)
{
    fprintf(s->f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"6\" fill=\"#fff\" "
            "stroke=\"#00695c\" stroke-width=\"3\"/>\n<line x1=\"%.1f\" y1=\"%.1f\" "
            "x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c62828\" stroke-width=\"3\"/>\n",
            cx, cy, cx - 7, cy + 7, cx + 7, cy - 7);
}

void sim_svg_group(sim_svg *s, const char *attrs, const char *fmt, ...)
{
    char buf[SIM_REPORT_SENTENCE * 2];
    va_list ap;

    fprintf(s->f, "<g%s%s>", attrs != NULL ? " " : "", attrs != NULL ? attrs : "");
    if (fmt == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    fputs("<title>", s->f);
    sim_html_esc(s->f, buf);
    fputs("</title>\n", s->f);
}

void sim_svg_end(sim_svg *s)
{
    fputs("</g>\n", s->f);
}

/* ---- the lock key ------------------------------------------------------------- */

static void key_span(sim_svg *s, const sim_key_span *k, double y)
{
    int64_t to = k->to_ns < s->end ? k->to_ns : s->end;
    int64_t ttl = k->ttl_ns < to ? (k->ttl_ns > k->from_ns ? k->ttl_ns : k->from_ns) : to;
    double x = sim_svg_x(s, k->from_ns), w = sim_svg_x(s, to) - x;
    double xt = sim_svg_x(s, ttl), band = y + (SIM_SVG_LANE_H - SIM_SVG_BAND_H) / 2.0;
    char who[SIM_REPORT_NAME], attrs[160], until[48], since[48], label[48];
    const char *colour = sim_html_client_colour(k->owner);

    sim_check_client_name(k->owner, who, sizeof(who));
    if (k->to_ns == INT64_MAX)
        snprintf(until, sizeof(until), "the end of the run");
    else
        snprintf(until, sizeof(until), "%ld ms", sim_report_ms(k->to_ns, s->t0));
    if (s->sessions)
        snprintf(since, sizeof(since), "bound to its session");
    else if (k->ttl_ns == INT64_MAX)
        snprintf(since, sizeof(since), "never a TTL");
    else if (ttl > k->from_ns)
        snprintf(since, sizeof(since), "a TTL from %ld ms", sim_report_ms(ttl, s->t0));
    else
        snprintf(since, sizeof(since), "with a TTL");
    snprintf(attrs, sizeof(attrs), "class=\"key\" data-owner=\"%s\" data-ttl=\"%s\"",
             who, k->ttl_ns == INT64_MAX ? "no" : "yes");
    sim_svg_group(s, attrs, "%s's %s: %ld ms to %s, %s", who, s->sessions ? "node" : "key",
                  sim_report_ms(k->from_ns, s->t0), until, since);
    snprintf(attrs, sizeof(attrs), "fill=\"%s\" fill-opacity=\"0.85\"", colour);
    sim_svg_rect(s, x, band, w, SIM_SVG_BAND_H, attrs);
    if (xt < x + w - 0.5 || s->sessions)
        SIM_SVG_USE(s, SIM_SW_KEY);
    /* Without a TTL: hatched, for it will never go away by itself. A
     * ZooKeeper node has none either, but goes with its session. */
    if (s->sessions)
        xt = x;
    if (xt > x + 0.5) {
        SIM_SVG_USE(s, SIM_SW_KEY_NO_TTL);
        sim_svg_rect(s, x, band, xt - x, SIM_SVG_BAND_H, "fill=\"url(#hatch)\"");
    }
    snprintf(label, sizeof(label), k->ttl_ns == INT64_MAX && w >= 90 ? "%s, no TTL"
             : "%s", who);
    if (w >= 16)
        sim_svg_text(s, x + 5, band + SIM_SVG_BAND_H - 6, xt > x + 20 ? "on-hatch"
                     : "in-bar", "start", label);
    sim_svg_end(s);
}

/* The node whose key a span is: 0 for a lock of one server; for one of
 * several (v8) the history names the node of every key event. */
static int key_node(const sim_key_span *k)
{
    return k->node;
}

/* Each time node was down, from its death to its restart or the run's
 * end: a grey stretch that says so, as the terminal's ':' does. */
static void down_times(sim_svg *s, int y, int node)
{
    const sim_html_run *r = s->run;

    for (size_t i = 0; i < r->n; i++) {
        size_t j = i + 1;
        double x, w;

        if (r->ev[i].type != SIM_EV_NODE_DOWN || r->ev[i].node != node)
            continue;
        while (j < r->n && !(r->ev[j].type == SIM_EV_RESTART && r->ev[j].node == node))
            j++;
        x = sim_svg_x(s, r->ev[i].t_ns);
        w = sim_svg_x(s, j < r->n ? r->ev[j].t_ns : s->end) - x;
        sim_svg_group(s, "class=\"down\"", "node %d's server was down: %ld to %s%ld ms",
                      node, sim_report_ms(r->ev[i].t_ns, s->t0), j < r->n ? "" : "the end, ",
                      sim_report_ms(j < r->n ? r->ev[j].t_ns : s->end, s->t0));
        sim_svg_rect(s, x, y + 6, w, SIM_SVG_LANE_H - 12,
                     "fill=\"#b0bec5\" stroke=\"#546e7a\" stroke-dasharray=\"4 3\"");
        if (w >= 40)
            sim_svg_label(s, x + 5, y + SIM_SVG_LANE_H / 2.0 + 5, "small", "down");
        sim_svg_end(s);
    }
}

/* One node's key lane at y: whose key it held, and when. */
static void key_lane(sim_svg *s, int y, int node)
{
    char label[32];

    fprintf(s->f, "<g class=\"lane key\" data-node=\"%d\">\n", node);
    sim_svg_rect(s, SIM_SVG_LABEL_W, y + 2, sim_svg_x(s, s->end) - SIM_SVG_LABEL_W,
                 SIM_SVG_LANE_H - 4, "class=\"track\" fill=\"#eef1f3\"");
    snprintf(label, sizeof(label), s->nodes > 1 ? "node %d key" : "lock key", node);
    sim_svg_text(s, 8, y + 21, "lane-label", "start", label);
    down_times(s, y, node);
    for (size_t k = 0; k < s->v->n_keys; k++)
        if (key_node(&s->v->keys[k]) == node)
            key_span(s, &s->v->keys[k], y);
    sim_svg_end(s);
}

/* A key lane per node, from y on. */
static void key_lanes(sim_svg *s, int y)
{
    for (int node = 0; node < s->nodes; node++)
        key_lane(s, y + node * SIM_SVG_LANE_H, node);
}

/* ---- the anomalies ------------------------------------------------------------- */

/* The red bands: every moment two or more held the lock, across the
 * client lanes and the key's. */
static void overlaps(sim_svg *s, int y_end)
{
    for (size_t i = 0; i < s->v->n_overlaps; i++) {
        const sim_span *o = &s->v->overlaps[i];
        double x = sim_svg_x(s, o->from_ns), w = sim_svg_x(s, o->to_ns) - x;
        char attrs[96];

        snprintf(attrs, sizeof(attrs), "class=\"overlap\" data-from=\"%ld\" data-to=\"%ld\"",
                 sim_report_ms(o->from_ns, s->t0), sim_report_ms(o->to_ns, s->t0));
        SIM_SVG_USE(s, SIM_SW_OVERLAP);
        sim_svg_group(s, attrs, "two or more clients held the lock: %ld to %ld ms",
                      sim_report_ms(o->from_ns, s->t0), sim_report_ms(o->to_ns, s->t0));
        sim_svg_rect(s, x, s->y_clients, w, y_end - s->y_clients,
                     "fill=\"#c62828\" fill-opacity=\"0.16\" stroke=\"#c62828\" "
                     "stroke-width=\"1\"");
        sim_svg_end(s);
    }
}

/* ME episodes: one row each where they would overlap. */
static int me_rows(const sim_svg *s, int *row)
{
    double end[ME_ROWS];
    int rows = 0;

    for (int r = 0; r < ME_ROWS; r++)
        end[r] = -1e9;
    for (size_t i = 0; i < s->v->n_episodes; i++) {
        const sim_episode *e = &s->v->episodes[i];

        if (e->kind != SIM_ANOM_ME)
            continue;
        row[i] = sim_svg_free_row(end, ME_ROWS, sim_svg_x(s, e->me.from_ns) - 2);
        end[row[i]] = sim_svg_x(s, e->me.to_ns) + 34;
        if (row[i] + 1 > rows)
            rows = row[i] + 1;
    }
    return rows;
}

static void me_bar(sim_svg *s, const sim_episode *e, double y)
{
    const sim_me_evidence *me = &e->me;
    double x = sim_svg_x(s, me->from_ns), w = sim_svg_x(s, me->to_ns) - x;
    char brief[SIM_REPORT_SENTENCE], attrs[128], a[SIM_REPORT_NAME], b[SIM_REPORT_NAME];
    char pair[2 * SIM_REPORT_NAME + 2];

    sim_report_brief(brief, sizeof(brief), e, s->t0);
    snprintf(attrs, sizeof(attrs), "class=\"anomaly me\" data-kind=\"ME\" "
             "data-from=\"%ld\" data-to=\"%ld\"", sim_report_ms(me->from_ns, s->t0),
             sim_report_ms(me->to_ns, s->t0));
    SIM_SVG_USE(s, SIM_SW_ME);
    sim_svg_group(s, attrs, "ME: %s", brief);
    sim_svg_rect(s, x, y + 2, w, ROW_H - 4, "fill=\"#c62828\" rx=\"3\"");
    snprintf(pair, sizeof(pair), "%s+%s",
             sim_report_who(a, sizeof(a), me->a.client, me->a.thread),
             sim_report_who(b, sizeof(b), me->b.client, me->b.thread));
    if (w >= 36)
        sim_svg_text(s, x + 4, y + ROW_H - 5, "in-bar", "start", pair);
    else
        sim_svg_label(s, x + w + 3, y + ROW_H - 5, "small", pair);
    sim_svg_end(s);
}

/* ST: a bar over the stretch the free lock was waited for, its kind
 * beside it. */
static void stall_bar(sim_svg *s, const sim_episode *e, double y)
{
    double x = sim_svg_x(s, e->st.from_ns), w = sim_svg_x(s, e->st.to_ns) - x;
    char brief[SIM_REPORT_SENTENCE], attrs[128];

    sim_report_brief(brief, sizeof(brief), e, s->t0);
    snprintf(attrs, sizeof(attrs), "class=\"anomaly st\" data-kind=\"ST\" data-from=\"%ld\" "
             "data-to=\"%ld\"", sim_report_ms(e->st.from_ns, s->t0),
             sim_report_ms(e->st.to_ns, s->t0));
    sim_svg_group(s, attrs, "ST: %s", brief);
    sim_svg_rect(s, x, y + 6, w > 2 ? w : 2, 6, "fill=\"#546e7a\"");
    sim_svg_text(s, x + 4, y + 14, "mark-label", "start", "ST");
    sim_svg_end(s);
}

/* MD and DL: a mark at the moment, its kind beside it. */
static void episode_mark(sim_svg *s, const sim_episode *e, double y)
{
    int md = e->kind == SIM_ANOM_MD;
    int64_t at = md ? e->md.at_ns : e->dl.busy_ns;
    double x = sim_svg_x(s, at);
    char brief[SIM_REPORT_SENTENCE], attrs[128];

    sim_report_brief(brief, sizeof(brief), e, s->t0);
    snprintf(attrs, sizeof(attrs), "class=\"anomaly %s\" data-kind=\"%s\" data-at=\"%ld\"",
             md ? "md" : "dl", md ? "MD" : "DL", sim_report_ms(at, s->t0));
    SIM_SVG_USE(s, md ? SIM_SW_MD : SIM_SW_DL);
    sim_svg_group(s, attrs, "%s: %s", md ? "MD" : "DL", brief);
    if (md)
        fprintf(s->f, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" "
                "fill=\"#7b1fa2\"/>\n", x, y + 1, x + 7, y + 9, x, y + 17, x - 7, y + 9);
    else
        sim_svg_rect(s, x - 6, y + 3, 12, 12, "fill=\"#212121\"");
    sim_svg_label(s, x + 9, y + 14, "mark-label", md ? "MD" : "DL");
    sim_svg_end(s);
}

/* Two holders with one token: where the fence could not tell them
 * apart, a mark beside the anomalies (the fence failed, T). */
static void clash_mark(sim_svg *s, double y)
{
    double x = sim_svg_x(s, s->v->clash.b_ns);
    char brief[SIM_REPORT_SENTENCE];

    sim_report_clash_brief(brief, sizeof(brief), &s->v->clash, s->t0);
    SIM_SVG_USE(s, SIM_SW_CLASH);
    sim_svg_group(s, "class=\"clash\"", "T: %s", brief);
    sim_svg_clash(s, x, y + 9);
    sim_svg_label(s, x + 9, y + 14, "mark-label", "T");
    sim_svg_end(s);
}

/* The anomalies' lane: MD and DL marks on top, the ME intervals under
 * them, the stock's numbers last when updates were lost. */
static void anomaly_lane(sim_svg *s, int y, int rows, const int *row)
{
    const sim_verdict *v = s->v;
    char stock[SIM_REPORT_SENTENCE], line[SIM_REPORT_SENTENCE + 32];

    fputs("<g class=\"lane anomalies\">\n", s->f);
    sim_svg_text(s, 8, y + 15, "lane-label", "start", "anomalies");
    if ((v->anomalies & SIM_ANOM_CELLS) == 0)
        sim_svg_text(s, SIM_SVG_LABEL_W + 4, y + 14, "clean", "start", "none");
    for (size_t i = 0; i < v->n_episodes; i++) {
        if (v->episodes[i].kind == SIM_ANOM_ME)
            me_bar(s, &v->episodes[i], y + ROW_H * (1 + row[i]));
        else if (v->episodes[i].kind == SIM_ANOM_ST)
            stall_bar(s, &v->episodes[i], y);
        else
            episode_mark(s, &v->episodes[i], y);
    }
    if (v->token_clash)
        clash_mark(s, y);
    if (v->anomalies & SIM_ANOM_LU) {
        sim_report_stock(stock, sizeof(stock), v);
        snprintf(line, sizeof(line), "LU: %s", stock);
        sim_svg_text(s, SIM_SVG_LABEL_W + 4, y + ROW_H * (1 + rows) + 13, "lu",
                     "start", line);
    }
    sim_svg_end(s);
}

/* ---- the axes ----------------------------------------------------------------- */

/* A round step in ms that puts labels at least 70 px apart. */
static long ms_step(const sim_svg *s)
{
    static const long steps[] = { 10, 20, 25, 50, 100, 200, 250, 500, 1000,
                                  2000, 2500, 5000, 10000, 20000, 50000 };

    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
        if ((double)steps[i] * 1e6 * s->px_per_ns >= 70)
            return steps[i];
    return 100000;
}

/* Milliseconds on top, a light line through the lanes at each label. */
static void ms_axis(sim_svg *s, int y_top, int y_end)
{
    long step = ms_step(s), span = sim_report_ms(s->end, s->t0);
    char label[32];

    fputs("<g class=\"axis ms\">\n", s->f);
    sim_svg_text(s, 8, y_top + 12, "axis", "start", "time (ms)");
    for (long t = 0; t <= span; t += step) {
        double x = sim_svg_x(s, s->t0 + (int64_t)t * 1000000);

        fprintf(s->f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#e3e8eb\"/>\n",
                x, y_top + 16, x, y_end);
        snprintf(label, sizeof(label), "%ld", t);
        sim_svg_text(s, x, y_top + 12, "axis", "middle", label);
    }
    sim_svg_end(s);
}

/* Leases at the bottom, a dashed line through the lanes at each. */
static void lease_axis(sim_svg *s, int y_top, int y)
{
    long lease = s->run->info->lease_ms;
    double per = (double)lease * 1e6 * s->px_per_ns;
    int every = per >= 40 ? 1 : per >= 16 ? 5 : 10;
    char label[SIM_DETAIL_LEN + SIM_REPORT_NAME + 4];

    if (lease <= 0)
        return;
    fputs("<g class=\"axis leases\">\n", s->f);
    snprintf(label, sizeof(label), "L = %ld ms", lease);
    sim_svg_text(s, 8, y + 14, "axis", "start", label);
    for (long k = 0; (double)k * per <= (double)(s->end - s->t0) * s->px_per_ns; k++) {
        double x = sim_svg_x(s, s->t0 + (int64_t)k * lease * 1000000);

        fprintf(s->f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#90a4ae\" "
                "stroke-dasharray=\"2 4\"/>\n", x, y_top, x, y + 2);
        if (k % every != 0)
            continue;
        snprintf(label, sizeof(label), "%ld L", k);
        sim_svg_text(s, x, y + 14, "axis", "middle", label);
    }
    sim_svg_end(s);
}

/* ---- the picture ------------------------------------------------------------------ */

static void scale(sim_svg *s, const sim_html_run *r)
{
    long lease = r->info->lease_ms > 0 ? r->info->lease_ms : SIM_DEFAULT_LEASE_MS;
    double span_ms, plot;

    s->t0 = r->cell.t0_ns;
    s->end = r->n > 0 ? r->ev[r->n - 1].t_ns : s->t0;
    if (s->end <= s->t0)
        s->end = s->t0 + 1000000;
    span_ms = (double)(s->end - s->t0) / 1e6;
    plot = span_ms / (double)lease * PX_PER_LEASE;
    plot = plot < MIN_PLOT ? MIN_PLOT : plot > MAX_PLOT ? MAX_PLOT : plot;
    s->px_per_ns = plot / (double)(s->end - s->t0);
    s->width = SIM_SVG_LABEL_W + (int)plot + RIGHT_PAD;
    s->lanes = r->info->clients > 0 ? r->info->clients : 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->ev[i].client >= s->lanes)
            s->lanes = r->ev[i].client + 1;
}

static void defs(sim_svg *s)
{
    fprintf(s->f, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"tl timeline\" "
            "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" data-clients=\"%d\" "
            "data-lease-ms=\"%ld\" data-end-ms=\"%ld\" role=\"img\">\n",
            s->width, s->height, s->width, s->height, s->lanes,
            s->run->info->lease_ms, sim_report_ms(s->end, s->t0));
    fputs("<defs><pattern id=\"hatch\" width=\"8\" height=\"8\" "
          "patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
          "<rect width=\"8\" height=\"8\" fill=\"#fff\" fill-opacity=\"0.55\"/>"
          "<rect width=\"3\" height=\"8\" fill=\"#263238\" fill-opacity=\"0.75\"/>"
          "</pattern></defs>\n", s->f);
}

void sim_html_timeline(FILE *f, const sim_html_run *run)
{
    sim_svg s = { .f = f, .run = run, .v = run->cell.verdict, .nodes = 1 };
    int *row = calloc(s.v->n_episodes + 1, sizeof(*row));
    int rows, y_faults, y_key, y_anom, y_lease, places;
    sim_queue q;

    if (row == NULL || sim_lanes_queue(&q, run->ev, run->n, run->n > 0 ? run->ev[run->n - 1].t_ns
                                       : run->cell.t0_ns, s.v) != 0) {
        free(row);
        return;
    }
    /* A lane per node of a lock of several; one for a verdict that
     * could not name them. */
    if (s.v->nodes > 1 && s.v->nodes <= SIM_HISTORY_NODES_MAX)
        s.nodes = s.v->nodes;
    s.sessions = sim_lanes_sessions(run->ev, run->n);
    scale(&s, run);
    sim_svg_collect_faults(&s);
    rows = me_rows(&s, row);
    y_faults = 24;
    s.y_clients = y_faults + s.fault_rows * SIM_SVG_ROW_H + 6;
    y_key = s.y_clients + s.lanes * SIM_SVG_LANE_H + 6;
    places = sim_svg_queue_places(&s, &q);
    y_anom = y_key + s.nodes * SIM_SVG_LANE_H + places * SIM_SVG_QUEUE_H + 8;
    y_lease = y_anom + ROW_H * (1 + rows + ((s.v->anomalies & SIM_ANOM_LU) != 0)) + 6;
    s.height = y_lease + 24;
    defs(&s);
    ms_axis(&s, 4, y_lease);
    lease_axis(&s, s.y_clients, y_lease);
    sim_svg_draw_faults(&s, y_faults, y_anom - 8);
    sim_svg_client_lanes(&s);
    key_lanes(&s, y_key);
    sim_svg_queue_lane(&s, &q, places, y_key + SIM_SVG_LANE_H);
    overlaps(&s, y_anom - 8);
    anomaly_lane(&s, y_anom, rows, row);
    fputs("</svg>\n", f);
    sim_svg_legend(&s);
    free(s.faults);
    free(s.boxes);
    free(row);
    sim_queue_free(&q);
}
