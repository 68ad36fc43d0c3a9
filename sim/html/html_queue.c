/* html_queue: a ZooKeeper lock's queue (v11) under the key lane of a
 * run's picture: a thin row per place, the first the next to hold, each
 * waiting node a band in its client's colour, as the key lane draws the
 * holder's; the terminal's timeline draws the same queue (lanes.h). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include "html_svg.h"
#include "lanes.h"

#define NONE ((size_t)-1)   /* nobody in the place */
#define MORE ((size_t)-2)   /* the last place drawn, with more behind it */

static int by_time(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;

    return (*x > *y) - (*x < *y);
}

/* Every moment the queue changed, in order; how many, or -1. */
static long changes(const sim_queue *q, int64_t **at)
{
    long n = 0;

    if ((*at = malloc((2 * q->n + 1) * sizeof(**at))) == NULL)
        return -1;
    for (size_t i = 0; i < q->n; i++) {
        (*at)[n++] = q->w[i].from;
        (*at)[n++] = q->w[i].to;
    }
    qsort(*at, (size_t)n, sizeof(**at), by_time);
    return n;
}

/* Who is in place p at an instant where here wait, of rows drawn. */
static size_t in_place(const size_t *who, int here, int p, int rows)
{
    if (p >= here)
        return NONE;
    return p == rows - 1 && here > rows ? MORE : who[p];
}

/* One node's stretch in a place, or the last place's "more". */
static void band(sim_svg *s, const sim_queue *q, size_t w, int p, int64_t from,
                 int64_t to, int y)
{
    double x = sim_svg_x(s, from), width = sim_svg_x(s, to) - x, top = y + p * SIM_SVG_QUEUE_H;
    char who[SIM_REPORT_NAME], attrs[96], letter[SIM_REPORT_NAME];
    int client = w == MORE ? SIM_UNNAMED : q->w[w].client;

    if (w == NONE || width <= 0)
        return;
    SIM_SVG_USE(s, w == MORE ? SIM_SW_QUEUE_MORE : SIM_SW_QUEUE);
    sim_check_client_name(client, who, sizeof(who));
    if (w == MORE)
        sim_svg_group(s, "class=\"waiter more\"", "more than %d nodes wait: %ld to %ld ms",
                      SIM_SVG_QUEUE_PLACES, sim_report_ms(from, s->t0),
                      sim_report_ms(to, s->t0));
    else if (client >= 0)
        sim_svg_group(s, "class=\"waiter\"", "%s's node waits, place %d: %ld to %ld ms", who,
                      p + 1, sim_report_ms(from, s->t0), sim_report_ms(to, s->t0));
    else
        sim_svg_group(s, "class=\"waiter\"", "a node whose client cannot be named waits, "
                      "place %d: %ld to %ld ms", p + 1, sim_report_ms(from, s->t0),
                      sim_report_ms(to, s->t0));
    snprintf(attrs, sizeof(attrs), "fill=\"%s\" fill-opacity=\"%s\"",
             sim_html_client_colour(client), w == MORE ? "0.4" : "0.6");
    sim_svg_rect(s, x, top + 1, width, SIM_SVG_QUEUE_H - 2, attrs);
    snprintf(letter, sizeof(letter), "%s", w == MORE ? "+" : who);
    if (width >= 12)
        sim_svg_text(s, x + 3, top + SIM_SVG_QUEUE_H - 3, "small", "start", letter);
    sim_svg_end(s);
}

int sim_svg_queue_places(const sim_svg *s, const sim_queue *q)
{
    if (s->nodes != 1)
        return 0;
    return q->longest < SIM_SVG_QUEUE_PLACES ? q->longest : SIM_SVG_QUEUE_PLACES;
}

void sim_svg_queue_lane(sim_svg *s, const sim_queue *q, int rows, int y)
{
    size_t who[SIM_SVG_QUEUE_PLACES], cur[SIM_SVG_QUEUE_PLACES];
    int64_t since[SIM_SVG_QUEUE_PLACES] = { 0 }, *at;
    long n = rows > 0 ? changes(q, &at) : -1;

    if (n < 0)
        return;
    fputs("<g class=\"lane queue\">\n", s->f);
    sim_svg_text(s, 8, y + 2 + SIM_SVG_QUEUE_H, "lane-label", "start", "queue");
    for (int p = 0; p < rows; p++)
        cur[p] = NONE;
    for (long i = 0; i <= n; i++) {
        int64_t t = i < n ? at[i] : s->end;
        int here = i < n ? sim_queue_at(q, t, t, who, SIM_SVG_QUEUE_PLACES) : 0;

        for (int p = 0; p < rows; p++) {
            size_t w = in_place(who, here, p, rows);

            if (w == cur[p])
                continue;
            if (cur[p] != NONE)
                band(s, q, cur[p], p, since[p], t, y);
            cur[p] = w;
            since[p] = t;
        }
    }
    sim_svg_end(s);
    free(at);
}
