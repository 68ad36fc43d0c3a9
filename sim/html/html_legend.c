/* html_legend: the timeline's legend, under the picture: every symbol it
 * drew, each with its one meaning, the anomalies and the fence in the
 * report's own words. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "html_svg.h"

/* The words of each symbol; the anomalies' are the report's. */
static const char *const legend_words[SIM_SW_COUNT] = {
    [SIM_SW_WAIT] = "waiting for the lock",
    [SIM_SW_HOLD] = "holding the lock",
    [SIM_SW_CS] = "inside its critical section",
    [SIM_SW_RELEASE] = "releasing",
    [SIM_SW_NOT_OWNER] = "its release said NOT_OWNER",
    [SIM_SW_ERROR] = "an error: its outcome is unknown",
    [SIM_SW_PAUSE] = "paused (SIGSTOP)",
    [SIM_SW_CUT] = "cut off from the lock's servers, or some of them: what it sends "
                    "there is lost",
    [SIM_SW_KILLED] = "killed (SIGKILL)",
    [SIM_SW_GAVE_UP] = "gave up waiting",
    [SIM_SW_SALE] = "the stock it read \u2192 wrote",
    [SIM_SW_TOKEN] = "the fencing token it drew",
    [SIM_SW_KEY] = "a client's key, with a TTL",
    [SIM_SW_KEY_NO_TTL] = "a key without a TTL",
    [SIM_SW_QUEUE] = "a client's node waiting in the queue: the top place holds next",
    [SIM_SW_QUEUE_MORE] = "more than 3 nodes wait: the rest are not drawn",
    [SIM_SW_FAULT] = "a fault, and when",
    [SIM_SW_OVERLAP] = "two holders at once",
};

static void swatch(sim_svg *s, int kind, double x, double y)
{
    const char *a = sim_html_client_colour(0);
    char attrs[96];

    switch (kind) {
    case SIM_SW_WAIT: sim_svg_rect(s, x, y + 7, 26, 4, "fill=\"#78909c\""); break;
    case SIM_SW_HOLD: case SIM_SW_CS: case SIM_SW_KEY: case SIM_SW_KEY_NO_TTL:
        snprintf(attrs, sizeof(attrs), "fill=\"%s\" fill-opacity=\"%s\"", a,
                 kind == SIM_SW_HOLD ? "0.32" : kind == SIM_SW_CS ? "1" : "0.85");
        sim_svg_rect(s, x, y + 1, 26, 16, attrs);
        if (kind == SIM_SW_KEY_NO_TTL)
            sim_svg_rect(s, x, y + 1, 26, 16, "fill=\"url(#hatch)\"");
        break;
    case SIM_SW_QUEUE: case SIM_SW_QUEUE_MORE:
        snprintf(attrs, sizeof(attrs), "fill=\"%s\" fill-opacity=\"%s\"",
                 kind == SIM_SW_QUEUE ? a : sim_html_client_colour(SIM_UNNAMED),
                 kind == SIM_SW_QUEUE ? "0.6" : "0.4");
        sim_svg_rect(s, x, y + 3, 26, 12, attrs);
        sim_svg_text(s, x + 3, y + 13, "small", "start", kind == SIM_SW_QUEUE ? "A" : "+");
        break;
    case SIM_SW_RELEASE: sim_svg_rect(s, x, y + 4, 26, 10, "fill=\"#37474f\""); break;
    case SIM_SW_NOT_OWNER: sim_svg_rect(s, x, y + 4, 26, 10, "fill=\"#7b1fa2\""); break;
    case SIM_SW_PAUSE:
        sim_svg_rect(s, x, y, 26, 18, "fill=\"url(#hatch)\" stroke=\"#263238\"");
        break;
    case SIM_SW_CUT: sim_svg_cut(s, x, x + 26, y + 3); break;
    case SIM_SW_KILLED: sim_svg_text(s, x + 13, y + 16, "cross", "middle", "\u2715"); break;
    case SIM_SW_GAVE_UP: sim_svg_rect(s, x + 12, y, 3, 18, "fill=\"#212121\""); break;
    case SIM_SW_ERROR: sim_svg_rect(s, x + 12, y, 3, 18, "fill=\"#e65100\""); break;
    case SIM_SW_SALE: sim_svg_text(s, x + 26, y + 14, "small", "end", "3\u21922"); break;
    case SIM_SW_FAULT:
        fprintf(s->f, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"#263238\"/>\n",
                x + 8, y + 2, x + 18, y + 2, x + 13, y + 11);
        break;
    case SIM_SW_TOKEN:
        snprintf(attrs, sizeof(attrs), "fill=\"%s\"", a);
        sim_svg_rect(s, x, y + 1, 26, 16, attrs);
        sim_svg_text(s, x + 4, y + 14, "in-bar", "start", "3");
        break;
    case SIM_SW_FENCE:
        sim_svg_fence(s, x + 13, y + 9);
        break;
    case SIM_SW_CLASH:
        sim_svg_clash(s, x + 13, y + 9);
        break;
    case SIM_SW_OVERLAP:
        sim_svg_rect(s, x, y, 26, 18, "fill=\"#c62828\" fill-opacity=\"0.16\" stroke=\"#c62828\"");
        break;
    case SIM_SW_ME: sim_svg_rect(s, x, y + 3, 26, 12, "fill=\"#c62828\" rx=\"3\""); break;
    case SIM_SW_MD:
        fprintf(s->f, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" "
                "fill=\"#7b1fa2\"/>\n", x + 13, y + 1, x + 20, y + 9, x + 13, y + 17,
                x + 6, y + 9);
        break;
    default: sim_svg_rect(s, x + 7, y + 3, 12, 12, "fill=\"#212121\"");
    }
}

/* What the terminal's matrix legend says a mark means. */
static const char *meaning_of(const char *want)
{
    const char *mark, *meaning;

    for (size_t i = 0; (meaning = sim_report_matrix_legend(i, &mark)) != NULL; i++)
        if (strcmp(mark, want) == 0)
            return meaning;
    return "";
}

/* The symbols drawn, each with its one meaning; the anomalies and the
 * fence in the report's own words. */
void sim_svg_legend(sim_svg *s)
{
    char words[128];

    fputs("<ul class=\"legend\">\n", s->f);
    for (int k = 0; k < SIM_SW_COUNT; k++) {
        unsigned kind = k == SIM_SW_ME ? SIM_ANOM_ME : k == SIM_SW_MD ? SIM_ANOM_MD
                        : SIM_ANOM_DL;

        if ((s->used & (1u << k)) == 0)
            continue;
        if (k == SIM_SW_FENCE || k == SIM_SW_CLASH)
            snprintf(words, sizeof(words), "%s: %s", k == SIM_SW_FENCE ? "F" : "T",
                     meaning_of(k == SIM_SW_FENCE ? "F" : "T"));
        else if (k >= SIM_SW_ME)
            snprintf(words, sizeof(words), "%s: %s", sim_anomaly_name(kind),
                     sim_report_heading(kind));
        else if (k == SIM_SW_KEY && s->sessions)
            snprintf(words, sizeof(words), "a client's node: it goes when its session ends");
        else
            snprintf(words, sizeof(words), "%s", legend_words[k]);
        fputs("<li><svg class=\"tl swatch\" width=\"30\" height=\"20\" "
              "viewBox=\"0 0 30 20\" aria-hidden=\"true\">", s->f);
        swatch(s, k, 2, 1);
        fputs("</svg>", s->f);
        sim_html_esc(s->f, words);
        fputs("</li>\n", s->f);
    }
    fputs("</ul>\n", s->f);
}
