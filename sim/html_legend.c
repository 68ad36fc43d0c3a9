/* html_legend: the timeline's legend: every symbol the picture may draw,
 * each with its one meaning, the anomalies in the report's own words. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>

#include "html_svg.h"

#define LEGEND_COL 250 /* an entry's width: its symbol and its words */

enum { SW_WAIT, SW_HOLD, SW_CS, SW_RELEASE, SW_NOT_OWNER, SW_PAUSE, SW_KILLED,
       SW_GAVE_UP, SW_SALE, SW_KEY, SW_KEY_NO_TTL, SW_FAULT, SW_OVERLAP, SW_ME,
       SW_MD, SW_DL, SW_COUNT };

static const char *const legend_words[SW_COUNT] = {
    [SW_WAIT] = "waiting for the lock",
    [SW_HOLD] = "holding the lock",
    [SW_CS] = "in its critical section",
    [SW_RELEASE] = "releasing",
    [SW_NOT_OWNER] = "release said NOT_OWNER",
    [SW_PAUSE] = "paused (SIGSTOP)",
    [SW_KILLED] = "killed (SIGKILL)",
    [SW_GAVE_UP] = "gave up waiting",
    [SW_SALE] = "stock read \u2192 written",
    [SW_KEY] = "A's key, with a TTL",
    [SW_KEY_NO_TTL] = "a key without a TTL",
    [SW_FAULT] = "a fault, and when",
    [SW_OVERLAP] = "two holders at once",
};

static void swatch(sim_svg *s, int kind, double x, double y)
{
    const char *a = sim_html_client_colour(0);
    char attrs[96];

    switch (kind) {
    case SW_WAIT: sim_svg_rect(s, x, y + 7, 26, 4, "fill=\"#78909c\""); break;
    case SW_HOLD: case SW_CS: case SW_KEY: case SW_KEY_NO_TTL:
        snprintf(attrs, sizeof(attrs), "fill=\"%s\" fill-opacity=\"%s\"", a,
                 kind == SW_HOLD ? "0.32" : kind == SW_CS ? "1" : "0.85");
        sim_svg_rect(s, x, y + 1, 26, 16, attrs);
        if (kind == SW_KEY_NO_TTL)
            sim_svg_rect(s, x, y + 1, 26, 16, "fill=\"url(#hatch)\"");
        break;
    case SW_RELEASE: sim_svg_rect(s, x, y + 4, 26, 10, "fill=\"#37474f\""); break;
    case SW_NOT_OWNER: sim_svg_rect(s, x, y + 4, 26, 10, "fill=\"#7b1fa2\""); break;
    case SW_PAUSE:
        sim_svg_rect(s, x, y, 26, 18, "fill=\"url(#hatch)\" stroke=\"#263238\"");
        break;
    case SW_KILLED: sim_svg_text(s, x + 13, y + 16, "cross", "middle", "\u2715"); break;
    case SW_GAVE_UP: sim_svg_rect(s, x + 12, y, 3, 18, "fill=\"#212121\""); break;
    case SW_SALE: sim_svg_text(s, x + 26, y + 14, "small", "end", "10\u21929"); break;
    case SW_FAULT:
        fprintf(s->f, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"#263238\"/>\n",
                x + 8, y + 2, x + 18, y + 2, x + 13, y + 11);
        break;
    case SW_OVERLAP:
        sim_svg_rect(s, x, y, 26, 18, "fill=\"#c62828\" fill-opacity=\"0.16\" stroke=\"#c62828\"");
        break;
    case SW_ME: sim_svg_rect(s, x, y + 3, 26, 12, "fill=\"#c62828\" rx=\"3\""); break;
    case SW_MD:
        fprintf(s->f, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" "
                "fill=\"#7b1fa2\"/>\n", x + 13, y + 1, x + 20, y + 9, x + 13, y + 17,
                x + 6, y + 9);
        break;
    default: sim_svg_rect(s, x + 7, y + 3, 12, 12, "fill=\"#212121\"");
    }
}

/* Every symbol the picture may draw, each with its one meaning; the
 * anomalies in the report's own words. */
int sim_svg_legend(sim_svg *s, int y, int draw)
{
    int cols = (s->width - 16) / LEGEND_COL, rows;
    char words[96];

    if (cols < 1)
        cols = 1;
    rows = (SW_COUNT + cols - 1) / cols;
    if (!draw)
        return rows;
    fputs("<g class=\"legend\">\n", s->f);
    for (int k = 0; k < SW_COUNT; k++) {
        double x = 8 + (k % cols) * LEGEND_COL, yy = y + (k / cols) * 24;
        unsigned kind = k == SW_ME ? SIM_ANOM_ME : k == SW_MD ? SIM_ANOM_MD : SIM_ANOM_DL;

        swatch(s, k, x, yy);
        if (k >= SW_ME)
            snprintf(words, sizeof(words), "%s: %s", sim_anomaly_name(kind),
                     sim_report_heading(kind));
        else
            snprintf(words, sizeof(words), "%s", legend_words[k]);
        sim_svg_text(s, x + 34, yy + 14, "legend", "start", words);
    }
    sim_svg_end(s);
    return rows;
}
