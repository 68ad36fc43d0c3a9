/* html_svg: what the timeline's files share; nothing else includes it.
 * html_svg.c lays the picture out and draws the axes, the key and the
 * anomalies; html_faults.c the faults' marks; html_lanes.c draws the
 * client lanes from the history; html_queue.c a ZooKeeper lock's queue;
 * html_legend.c the legend. */
#ifndef SIM_HTML_SVG_H
#define SIM_HTML_SVG_H

#include <stdint.h>
#include <stdio.h>

#include "html_internal.h"

#define SIM_SVG_LABEL_W 130 /* the lanes' names, left of the drawing */
#define SIM_SVG_LANE_H 36   /* a client's or the key's lane */
#define SIM_SVG_BAND_H 24   /* a band inside a lane: holding, a key */
#define SIM_SVG_ROW_H 20    /* a row of fault marks or of anomaly intervals */
#define SIM_SVG_CHAR_W 7.0  /* a small label's letter, about, in px */
#define SIM_SVG_QUEUE_H 14  /* a place of a ZooKeeper lock's queue */
#define SIM_SVG_QUEUE_PLACES 3 /* places drawn: the last also says "more" */

/* The symbols a timeline may draw. Each drawing marks those it used,
 * and the legend under the picture explains those. */
enum { SIM_SW_WAIT, SIM_SW_HOLD, SIM_SW_CS, SIM_SW_RELEASE, SIM_SW_NOT_OWNER,
       SIM_SW_ERROR, SIM_SW_PAUSE, SIM_SW_CUT, SIM_SW_KILLED, SIM_SW_GAVE_UP, SIM_SW_SALE,
       SIM_SW_TOKEN, SIM_SW_KEY, SIM_SW_KEY_NO_TTL, SIM_SW_QUEUE, SIM_SW_QUEUE_MORE,
       SIM_SW_FAULT, SIM_SW_OVERLAP,
       SIM_SW_FENCE, SIM_SW_CLASH, SIM_SW_ME, SIM_SW_MD, SIM_SW_DL, SIM_SW_COUNT };

#define SIM_SVG_USE(s, sw) ((s)->used |= 1u << (sw))

/* A fault's mark on the time axis (html_faults.c). */
typedef struct sim_svg_mark {
    int64_t at, to;        /* to > at: a stretch (a pause) */
    int told;              /* has a label; else folded into the tooltip of
                            * the labelled mark nearest it, not drawn */
    int row;
    char label[SIM_DETAIL_LEN + SIM_REPORT_NAME + 4];
    char tip[SIM_REPORT_SENTENCE];
} sim_svg_mark;

/* The picture being drawn. */
typedef struct sim_svg {
    FILE *f;
    const sim_html_run *run;
    const sim_verdict *v;
    int64_t t0, end;       /* the span drawn, ns */
    double px_per_ns;
    int width, height;     /* the whole picture */
    int lanes;             /* client lanes */
    int nodes;             /* key lanes: the Redis nodes that hold the key */
    int sessions;          /* the keys are ZooKeeper nodes, bound to sessions */
    int y_clients;         /* the first client lane's top */
    unsigned used;         /* 1 << SIM_SW_*: the symbols drawn */
    double (*boxes)[4];    /* the labels claimed so far: x0 y0 x1 y1 */
    size_t n_boxes, cap_boxes;
    sim_svg_mark *faults;  /* the faults' marks; the caller frees them */
    size_t n_faults;
    int fault_rows;        /* rows their labels take */
} sim_svg;

/* Where time t is drawn (t clamped to the span). */
double sim_svg_x(const sim_svg *s, int64_t t);

/* A rectangle with its attributes; w is widened to stay visible. */
void sim_svg_rect(sim_svg *s, double x, double y, double w, double h,
                  const char *attrs);

/* A group of shapes that mean one thing: attrs (its class and data-),
 * and a tooltip (fmt NULL: none) that the browser shows on hover. Ended
 * by sim_svg_end. */
void sim_svg_group(sim_svg *s, const char *attrs, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void sim_svg_end(sim_svg *s);

/* A label, HTML-escaped; cls a class of the page's style. */
void sim_svg_text(sim_svg *s, double x, double y, const char *cls,
                  const char *anchor, const char *words);

/* Where a label would lie: box gets x0 y0 x1 y1, from its class's size,
 * estimated (the page's fonts are not known here, so it errs wide). */
void sim_svg_text_box(double x, double y, const char *cls, const char *anchor,
                      const char *words, double box[4]);

/* Claims box for a label: 1, or 0 when it would cover a label claimed
 * before (box is then not claimed). */
int sim_svg_claim(sim_svg *s, const double box[4]);

/* A label that moves right, past every label claimed before it, until
 * it covers none; then claimed and drawn. */
void sim_svg_label(sim_svg *s, double x, double y, const char *cls,
                   const char *words);

/* A cut link from x1 to x2 at height y: a dashed red line, broken at
 * its ends (the lane of a client cut off from the lock's servers). */
void sim_svg_cut(sim_svg *s, double x1, double x2, double y);

/* The fence's marks: F, a refused write (the fence held); T, a token
 * two holders shared (the fence failed): a ring cut through. */
void sim_svg_fence(sim_svg *s, double cx, double cy);
void sim_svg_clash(sim_svg *s, double cx, double cy);

/* html_legend.c: the legend of the symbols drawn, as HTML, after the
 * picture. */
void sim_svg_legend(sim_svg *s);

/* The first of rows whose drawing (ending at end[row]) leaves x free,
 * or else the one that frees first. */
int sim_svg_free_row(const double *end, int rows, double x);

/* html_faults.c: the faults' marks, collected (s->faults, the rows their
 * labels take in s->fault_rows) before the layout, then drawn from y on,
 * each a dashed guide down to y_guide_end. */
void sim_svg_collect_faults(sim_svg *s);
void sim_svg_draw_faults(sim_svg *s, int y, int y_guide_end);

/* html_lanes.c: every client lane, from the history, at y_clients. */
void sim_svg_client_lanes(sim_svg *s);

/* A ZooKeeper lock's queue (html_queue.c): the places it draws (0: no
 * queue, or a lock of several nodes), then the places from y down. */
struct sim_queue;
int sim_svg_queue_places(const sim_svg *s, const struct sim_queue *q);
void sim_svg_queue_lane(sim_svg *s, const struct sim_queue *q, int rows, int y);

#endif
