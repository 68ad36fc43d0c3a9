/* sale_page: the sale bench's page (see sale_page.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "sale_page.h"
#include "util.h"

#define W 640
#define H 360
#define LEFT 70
#define BOTTOM 50
#define TOP 20
#define RIGHT 110

static const char *const colour[SIM_SALE_BENCH_STAGES] = { "#1f77b4", "#d62728", "#2ca02c",
                                                          "#9467bd" };

static double top_rate(const sim_sale_bench *b)
{
    double top = 1;
    int s, i;

    for (s = 0; s < b->stages; s++)
        for (i = 0; i < b->ks; i++)
            if (b->rate[s][i] > top)
                top = b->rate[s][i];
    return top;
}

/* x: the K's place in the list, evenly spaced: K doubles from one to
 * the next (a log scale, without libm). */
static double x_of(const sim_sale_bench *b, int i)
{
    return LEFT + (b->ks > 1 ? (double)i / (b->ks - 1) : 0) * (W - LEFT - RIGHT);
}

static double y_of(double rate, double top)
{
    return TOP + (1 - rate / top) * (H - TOP - BOTTOM);
}

static void axes(FILE *f, const sim_sale_bench *b, double top)
{
    int i, t;

    fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#000'/>\n", LEFT, H - BOTTOM,
            W - RIGHT, H - BOTTOM);
    fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#000'/>\n", LEFT, TOP, LEFT,
            H - BOTTOM);
    for (i = 0; i < b->ks; i++)
        fprintf(f, "<text x='%.0f' y='%d' text-anchor='middle'>%d</text>\n", x_of(b, i),
                H - BOTTOM + 18, b->k[i]);
    fprintf(f, "<text x='%d' y='%d' text-anchor='middle'>segments (K)</text>\n",
            (W - RIGHT + LEFT) / 2, H - 10);
    for (t = 0; t <= 4; t++)
        fprintf(f, "<text x='%d' y='%.0f' text-anchor='end'>%.0f</text>\n", LEFT - 6,
                y_of(top * t / 4, top) + 4, top * t / 4);
    fprintf(f, "<text x='14' y='%d' transform='rotate(-90 14 %d)' text-anchor='middle'>sales "
            "per second</text>\n", (H - BOTTOM + TOP) / 2, (H - BOTTOM + TOP) / 2);
}

static void lines(FILE *f, const sim_sale_bench *b, double top)
{
    int s, i;

    for (s = 0; s < b->stages; s++) {
        fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='2' points='", colour[s]);
        for (i = 0; i < b->ks; i++)
            fprintf(f, "%.0f,%.0f ", x_of(b, i), y_of(b->rate[s][i], top));
        fprintf(f, "'/>\n");
        for (i = 0; i < b->ks; i++)
            fprintf(f, "<circle cx='%.0f' cy='%.0f' r='4' fill='%s'><title>v%d, K=%d: %.0f "
                    "sales/s</title></circle>\n", x_of(b, i), y_of(b->rate[s][i], top),
                    colour[s], b->stage[s], b->k[i], b->rate[s][i]);
        fprintf(f, "<text x='%d' y='%.0f' fill='%s'>v%d</text>\n", W - RIGHT + 10,
                y_of(b->rate[s][b->ks - 1], top) + 4, colour[s], b->stage[s]);
    }
}

static void table(FILE *f, const sim_sale_bench *b)
{
    int s, i;

    fprintf(f, "<table border='1' cellpadding='4'><tr><th>segments</th>");
    for (s = 0; s < b->stages; s++)
        fprintf(f, "<th>v%d sales/s</th><th>runs' range</th><th>v%d &times; K=1</th>",
                b->stage[s], b->stage[s]);
    fprintf(f, "</tr>\n");
    for (i = 0; i < b->ks; i++) {
        fprintf(f, "<tr><td>%d</td>", b->k[i]);
        for (s = 0; s < b->stages; s++)
            fprintf(f, "<td>%.0f%s</td><td>%.0f-%.0f</td><td>%.1f</td>", b->rate[s][i],
                    b->unclean[s][i] ? " (not clean)" : "", b->lo[s][i], b->hi[s][i],
                    b->rate[s][0] > 0 ? b->rate[s][i] / b->rate[s][0] : 0.0);
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</table>\n");
}

int sim_sale_page(const char *dir, const sim_sale_bench *b, char *errstr, size_t len)
{
    char path[512];
    double top = top_rate(b) * 1.1;
    FILE *f;

    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return sim_error(errstr, len, "mkdir %s: %s", dir, strerror(errno));
    snprintf(path, sizeof(path), "%s/index.html", dir);
    if ((f = fopen(path, "w")) == NULL)
        return sim_error(errstr, len, "cannot write %s: %s", path, strerror(errno));
    fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>lockstep: the "
            "segmented sale</title></head><body>\n<h1>The segmented sale: sales per second "
            "against segments</h1>\n<p>%ld units, %d buyers, %ld ms inside the lock, a "
            "polling lock's retry every %ld ms, the median of %d runs each, on a Redis Cluster "
            "of three masters and three replicas; %d CPUs, load %.1f at the start.</p>\n",
            b->units, b->buyers, b->pause_ms, b->retry_ms, b->runs, b->cpus, b->load);
    fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' "
            "font-family='sans-serif' font-size='12'>\n", W, H);
    axes(f, b, top);
    lines(f, b, top);
    fprintf(f, "</svg>\n");
    table(f, b);
    fprintf(f, "</body></html>\n");
    if (fclose(f) != 0)
        return sim_error(errstr, len, "write %s: %s", path, strerror(errno));
    return 0;
}
