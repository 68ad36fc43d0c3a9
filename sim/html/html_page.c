/* html_page: the frame every page of the site shares: its head with the
 * style written into it (a page must open alone, from a mail), the bar
 * that links the pages, and the colours that mean the same everywhere.
 *
 * Sized for a projector: large type, strong colours, and every colour
 * doubled by a word or a shape, for those who cannot tell red from
 * green. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>

#include "html_internal.h"

static const char style[] =
    ":root{--me:#c62828;--md:#7b1fa2;--dl:#212121;--lu:#e65100;"
    "--ok:#2e7d32;--grey:#757575;--fence:#00695c}\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0;font:18px/1.5 system-ui,'DejaVu Sans','Segoe UI',"
    "Helvetica,Arial,sans-serif;color:#1a1a1a;background:#fff}\n"
    "header.bar{background:#263238;color:#eceff1;padding:.45em 1.5em;"
    "display:flex;flex-wrap:wrap;gap:.4em 1.1em;align-items:baseline}\n"
    "header.bar a{color:#fff;text-decoration:none}\n"
    "header.bar a:hover{text-decoration:underline}\n"
    "header.bar .home{font-weight:700;font-size:1.15em;margin-right:.6em}\n"
    "header.bar .stages{color:#b0bec5}\n"
    "main{padding:.6em 1.5em 3em;max-width:1700px}\n"
    "h1{font-size:1.6em;margin:.25em 0 .1em}\n"
    "h2{font-size:1.35em;margin:1.4em 0 .4em;border-bottom:2px solid #e0e0e0}\n"
    "h3{font-size:1.12em;margin:1.1em 0 .3em}\n"
    "p.lead{font-size:1em;margin:.2em 0 .5em;color:#37474f}\n"
    "code,pre,.mono{font-family:'DejaVu Sans Mono',Menlo,Consolas,monospace;"
    "font-size:.88em}\n"
    "code{background:#f1f3f4;padding:.05em .3em;border-radius:4px}\n"
    "pre{background:#f5f6f7;padding:.7em 1em;border-radius:6px;"
    "overflow-x:auto;line-height:1.35}\n"
    "pre code{background:none;padding:0;font-size:1em}\n"
    "pre .add{color:#1b5e20;background:#e6f4ea;display:inline-block;width:100%}\n"
    "pre .del{color:#b71c1c;background:#fdecea;display:inline-block;width:100%}\n"
    /* A table of the site's own (class md) and a README's, as cmark-gfm
     * writes it (no class). */
    "table.md,article.readme table{border-collapse:collapse;margin:.6em 0;font-size:.92em}\n"
    "table.md th,table.md td,article.readme th,article.readme td{border:1px solid #cfd8dc;"
    "padding:.3em .6em;vertical-align:top;text-align:left}\n"
    "table.md th,article.readme th{background:#eceff1}\n"
    "article.readme img{max-width:100%;height:auto;border:1px solid #cfd8dc}\n"
    "table.params{border-collapse:collapse;font-size:.92em}\n"
    "table.params th{text-align:left;padding:.15em 1em .15em 0;color:#546e7a;"
    "font-weight:600}\n"
    "table.params td{padding:.15em 0}\n"
    /* The matrix: compact, so that 13 stages by 13 scenarios still fit
     * a 1400 x 1000 projector with their legend under them (the report's
     * test measures both): a fixed label column, the stages sharing the
     * rest, a cell's badges two lines at most. */
    "table.matrix{border-collapse:separate;border-spacing:2px;margin:.2em 0;"
    "table-layout:fixed;width:100%;max-width:1500px;font-size:.9em}\n"
    "table.matrix th{padding:.1em .2em;text-align:center;line-height:1.2}\n"
    "table.matrix thead th:first-child{width:17em;text-align:left}\n"
    "table.matrix th a{color:inherit}\n"
    "table.matrix th.row{text-align:left}\n"
    "table.matrix th.row small{display:block;font-weight:400;color:#546e7a;"
    "font-size:.7em;line-height:1.1}\n"
    "th.stage small{display:block;font-weight:400;color:#546e7a;font-size:.7em;"
    "overflow-wrap:anywhere}\n"
    "td.cell{height:2.6em;text-align:center;border-radius:7px;"
    "font-weight:700;position:relative;border:2px solid transparent;padding:0}\n"
    "td.cell a{display:block;color:inherit;text-decoration:none;"
    "padding:.1em;line-height:1.2}\n"
    "td.cell a:hover{text-decoration:underline}\n"
    /* Badges two to a line even in the column of a thirteenth stage. */
    "td.cell .mark{font-size:.78em;margin:.04em;padding:.05em .18em}\n"
    "td.cell .mark.none{font-size:1.25em}\n"
    "td.cell.none{background:#e8f5e9;color:var(--ok)}\n"
    "td.cell.lu{background:#fff3e0}\n"
    "td.cell.dl{background:#e0e0e0}\n"
    "td.cell.st{background:#eceff1}\n"
    "td.cell.md{background:#f3e5f5}\n"
    "td.cell.me{background:#ffebee}\n"
    /* Two holders, but the resource refused the stale write: not the
     * red of a lost sale. */
    "td.cell.fence:not(.lu){background:#e0f2f1}\n"
    "td.cell.unjudged{background:#fafafa;color:var(--grey)}\n"
    "td.cell.unreachable{background:#f5f5f5;color:var(--grey);"
    "font-weight:400}\n"
    "td.cell.unreachable .mark.none{color:var(--grey)}\n"
    "td.cell.differs{border:3px dashed #000}\n"
    "td.cell .differs-mark{position:absolute;top:-.55em;right:-.45em;"
    "background:#000;color:#fff;border-radius:50%;width:1.4em;height:1.4em;"
    "line-height:1.4em;font-size:.8em}\n"
    ".mark{display:inline-block;padding:.05em .35em;margin:.1em;"
    "border-radius:4px;color:#fff;font-size:.95em;letter-spacing:.03em}\n"
    ".mark.ME{background:var(--me)}.mark.MD{background:var(--md)}"
    ".mark.DL{background:var(--dl)}.mark.LU{background:var(--lu)}"
    ".mark.st{background:#546e7a}"
    ".mark.unjudged{background:var(--grey)}.mark.fence{background:var(--fence)}"
    ".mark.clash{background:#fff;color:var(--me);"
    "box-shadow:inset 0 0 0 2px var(--fence)}\n"
    ".mark.none{color:var(--ok);font-size:1.3em}\n"
    ".mark.differs{background:#000;border-radius:50%;min-width:1.5em;"
    "text-align:center}\n"
    /* Four marks to a line, so that the legend fits under the grid on a
     * 1400 x 1000 projector too. */
    "dl.legend{display:grid;grid-template-columns:repeat(4,2.6em minmax(0,1fr));"
    "gap:0 .5em;font-size:.8em;line-height:1.15;margin:.4em 0;align-items:center;"
    "max-width:1500px}\n"
    "dl.legend dt{text-align:center}\n"
    "dl.legend dd{margin:0}\n"
    "ul.evidence{margin:.2em 0 .6em;padding-left:1.2em;font-size:.92em}\n"
    "ul.evidence li{margin:.15em 0}\n"
    ".story{max-width:62em}\n"
    ".match{font-weight:700}.match.bad{color:var(--me)}\n"
    /* A run. */
    "ul.verdict{list-style:none;padding:0;margin:.5em 0 1em;max-width:70em}\n"
    "ul.verdict li{border-left:6px solid #b0bec5;padding:.3em .8em;"
    "margin:.35em 0;background:#fafafa}\n"
    "ul.verdict li.bad{border-color:var(--me);background:#fff5f5}\n"
    "ul.verdict li.clean{border-color:var(--ok);background:#f4fbf4}\n"
    "ul.verdict li.fence{border-color:#00695c;background:#f0f8f7}\n"
    "ul.verdict li.release{border-color:var(--md);background:#faf5fc}\n"
    "figure.timeline{margin:.6em 0;overflow-x:auto}\n"
    ".tl{font-family:system-ui,'DejaVu Sans',sans-serif;"
    "background:#fff}\n"
    "svg.timeline{max-width:100%;height:auto}\n"
    "ul.legend{list-style:none;padding:0;margin:.2em 0 1em;display:flex;"
    "flex-wrap:wrap;gap:.3em 1.4em;font-size:.85em;max-width:90em}\n"
    "ul.legend li{display:flex;align-items:center;gap:.4em}\n"
    ".tl text{font-size:14px;fill:#263238}\n"
    ".tl text.lane-label{font-size:16px;font-weight:600}\n"
    ".tl text.axis{font-size:13px;fill:#546e7a}\n"
    ".tl text.small{font-size:12px}\n"
    ".tl text.legend{font-size:14px}\n"
    ".tl text.in-bar{font-size:13px;font-weight:700;fill:#fff}\n"
    ".tl text.on-hatch{font-size:13px;font-weight:700;fill:#000;"
    "paint-order:stroke;stroke:#fff;stroke-width:3px}\n"
    ".tl text.cross{font-size:22px;font-weight:700;fill:#c62828}\n"
    ".tl text.mark-label{font-size:13px;font-weight:700}\n"
    ".tl text.lu{font-size:14px;font-weight:600;fill:#e65100}\n"
    ".tl text.clean{font-size:14px;fill:#2e7d32;font-weight:600}\n"
    /* A stage. */
    "article.readme{max-width:62em}\n"
    "table.diff{width:100%;border-collapse:collapse;table-layout:fixed;"
    "font-family:'DejaVu Sans Mono',Menlo,Consolas,monospace;font-size:.74em;"
    "margin:.3em 0 1em;border:1px solid #cfd8dc}\n"
    "table.diff th{background:#eceff1;text-align:left;padding:.3em .5em}\n"
    "table.diff td{padding:0 .4em;vertical-align:top}\n"
    "table.diff td.ln{width:3.6em;text-align:right;color:#90a4ae;"
    "user-select:none}\n"
    "table.diff td.code{white-space:pre-wrap;word-break:break-word;tab-size:4}\n"
    "table.diff td.del{background:#fdecea}\n"
    "table.diff td.add{background:#e6f4ea}\n"
    "table.diff td.del .chg{background:#f5b7b1}\n"
    "table.diff td.add .chg{background:#a5d6a7}\n"
    "table.diff tr.skip td{background:#f3f6fb;color:#607d8b;text-align:center;"
    "font-style:italic;padding:.15em}\n"
    "details{margin:.3em 0 1em}\n"
    "details summary{cursor:pointer;color:#37474f}\n"
    ".print-only{display:none}\n"
    /* Print: landscape, A4 or Letter alike (the timelines are wide); no
     * navigation; the colours kept; the matrix and its legend on the
     * first sheet, the stories from the next; a run's story under its
     * timeline; what the screen shows on hover, said in words (the
     * matrix's evidence under each row's story). */
    "@page{size:landscape;margin:10mm}\n"
    "@media print{\n"
    "*{-webkit-print-color-adjust:exact;print-color-adjust:exact}\n"
    "body{font-size:10pt}\n"
    "header.bar,.screen-only,details{display:none}\n"
    ".print-only{display:inline}\n"
    "main{padding:0;max-width:none}\n"
    "a{color:inherit;text-decoration:none}\n"
    "h1{font-size:14pt;margin:0 0 .1em}\n"
    "h2{font-size:13pt;margin:.8em 0 .3em}\n"
    "h1,h2,h3{break-after:avoid}\n"
    "p.lead{font-size:9.5pt;margin:0 0 .3em}\n"
    /* The grid and its legend on one sheet, A4's or Letter's, whichever
     * is shorter (A4 landscape: 190 mm inside the margins). */
    "table.matrix{font-size:8.5pt;max-width:none;break-inside:avoid;border-spacing:2px}\n"
    "table.matrix thead th:first-child{width:15em}\n"
    "table.matrix th.row small{font-size:.72em;line-height:1.1}\n"
    "td.cell{height:1.8em}\n"
    "td.cell a{padding:0;line-height:1.1}\n"
    "td.cell .mark{font-size:.78em;margin:.03em;padding:0 .2em}\n"
    "dl.legend{font-size:7.5pt;margin:.3em 0;gap:.1em .5em;break-inside:avoid;"
    "break-after:page}\n"
    "ul.verdict li,ul.evidence li,table.params tr{break-inside:avoid}\n"
    "p:has(> a[href*=\"#row-\"]){display:none}\n"
    "figure.timeline{overflow:visible;break-inside:avoid;margin:.3em 0}\n"
    /* Small enough that the story starts under it on the same sheet. */
    "svg.timeline{width:auto;height:auto;max-width:100%;max-height:95mm}\n"
    ".tl text.axis{font-size:16px;fill:#263238}\n"
    "ul.legend{font-size:8.5pt}\n"
    "ul.verdict{max-width:none}\n"
    "table.params{font-size:8pt}\n"
    "table.diff{font-size:7pt}\n"

    "}\n";

/* Colours for clients A, B, C...: far apart, none of them the red of an
 * anomaly. */
static const char *const colours[] = {
    "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b",
    "#17becf", "#bcbd22", "#e377c2", "#7f7f7f",
};

const char *sim_html_client_colour(int client)
{
    size_t n = sizeof(colours) / sizeof(colours[0]);

    return client < 0 ? "#9e9e9e" : colours[(size_t)client % n];
}

/* The bar: the matrix, then each stage of the list by its number (its
 * name on hover), so that it stays one line with many more stages. */
static void bar(FILE *f, const char *root)
{
    fprintf(f, "<header class=\"bar\"><a class=\"home\" href=\"%sindex.html\">"
            "lockstep: the fault matrix</a>\n<span class=\"stages\">stages:</span>\n",
            root);
    for (int s = 1; s <= SIM_STAGES; s++) {
        if (sim_stage_get(s) == NULL)
            continue; /* a number the stage list skips */
        fprintf(f, "<a href=\"%sstages/", root);
        sim_html_esc(f, sim_stage_name(s));
        fputs(".html\" title=\"", f);
        sim_html_esc(f, sim_stage_name(s));
        fprintf(f, "\">v%d</a>\n", s);
    }
    fprintf(f, "<a href=\"%sguide/readme.html\">the guide</a>\n</header>\n", root);
}

void sim_html_head(FILE *f, const char *title, const char *root)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<title>", f);
    sim_html_esc(f, title);
    fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", style);
    if (root != NULL)
        bar(f, root);
    fputs("<main>\n", f);
}

void sim_html_foot(FILE *f)
{
    fputs("</main>\n</body>\n</html>\n", f);
}
