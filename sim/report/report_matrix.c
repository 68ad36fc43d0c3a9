/* report_matrix: the fault matrix, a row per scenario and a column per
 * stage, and the evidence of every cell under it, one short line per
 * episode so that a projector shows it whole. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "report_internal.h"

#define MATRIX_CAP 3  /* episodes of a kind per cell, then "and N more" */

/* ---- the fault matrix ----------------------------------------------------- */

#define MATRIX_GAP 2 /* blanks between columns, at any width: with one, "ME F ME LU"
                        * reads as one cell; eleven stages need a terminal of
                        * about 110 columns, and a narrower one wraps the rows */

/* The table's columns: each as wide as its widest text, so that a column
 * of "-" takes no room a column of "ME MD LU" needs. */
typedef struct layout {
    int label;                        /* the scenario names' column */
    int col[SIM_REPORT_STAGES + 1];   /* stage s's column: col[s] */
} layout;

static int cell_matches(const sim_matrix_cell *c)
{
    return (c->observed & SIM_ANOM_CELLS) == (c->expected & SIM_ANOM_CELLS);
}

unsigned sim_report_cell_marks(const sim_matrix_cell *c)
{
    const sim_verdict *v = c->verdict;
    unsigned marks = c->observed & SIM_ANOM_CELLS;

    if (v != NULL && v->n_refusals > 0)
        marks |= SIM_MARK_FENCE_HELD;
    if (v != NULL && v->token_clash)
        marks |= SIM_MARK_FENCE_FAILED;
    return marks;
}

void sim_report_marks_format(unsigned marks, char *buf, size_t len)
{
    size_t used;

    if (len == 0)
        return;
    sim_anomaly_format(marks & SIM_ANOM_CELLS, buf, len);
    used = strlen(buf);
    if (marks & SIM_MARK_FENCE_HELD)
        used += (size_t)snprintf(buf + used, len > used ? len - used : 0, " F");
    if ((marks & SIM_MARK_FENCE_FAILED) && used < len)
        snprintf(buf + used, len - used, " T");
}

static void cell_text(char *buf, size_t len, const sim_matrix_cell *c)
{
    char set[32];

    sim_report_marks_format(sim_report_cell_marks(c), set, sizeof(set));
    snprintf(buf, len, "%s%s%s%s", cell_matches(c) ? "" : "!",
             c->unreachable ? "(" : "", set, c->unreachable ? ")" : "");
}

/* 1 when cell i is the first of its scenario: it opens a row. */
static int opens_row(const sim_matrix_cell *cells, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (strcmp(cells[j].scenario, cells[i].scenario) == 0)
            return 0;
    return 1;
}

static const sim_matrix_cell *find_cell(const sim_matrix_cell *cells,
                                        size_t n, const char *scenario,
                                        int stage)
{
    for (size_t i = 0; i < n; i++)
        if (cells[i].stage == stage && strcmp(cells[i].scenario, scenario) == 0)
            return &cells[i];
    return NULL;
}

static int max_int(int a, int b)
{
    return a > b ? a : b;
}

static void measure(layout *lay, const sim_matrix_cell *cells, size_t n)
{
    char text[48];

    lay->label = (int)strlen("scenario");
    /* A column per stage of the list: a number it skips has none. */
    for (int s = 1; s <= SIM_REPORT_STAGES; s++)
        lay->col[s] = sim_stage_get(s) == NULL ? -1 : snprintf(text, sizeof(text), "v%d", s);
    for (size_t i = 0; i < n; i++) {
        int s = cells[i].stage;

        cell_text(text, sizeof(text), &cells[i]);
        lay->label = max_int(lay->label, (int)strlen(cells[i].scenario));
        if (s >= 1 && s <= SIM_REPORT_STAGES && lay->col[s] >= 0)
            lay->col[s] = max_int(lay->col[s], (int)strlen(text));
    }
}

/* One line of the table: a label, then a text per stage (NULL: none). */
static void table_line(FILE *out, const layout *lay, const char *label,
                       char text[][48])
{
    char row[1024];
    int at = snprintf(row, sizeof(row), "%-*s", lay->label, label);

    for (int s = 1; s <= SIM_REPORT_STAGES && at < (int)sizeof(row); s++) {
        if (lay->col[s] >= 0)
            at += snprintf(row + at, sizeof(row) - (size_t)at, "%*s%-*s", MATRIX_GAP,
                           "", lay->col[s], text[s]);
    }
    sim_report_trimmed(out, row);
}

static void matrix_header(FILE *out, const layout *lay)
{
    char text[SIM_REPORT_STAGES + 1][48];

    for (int s = 1; s <= SIM_REPORT_STAGES; s++)
        snprintf(text[s], sizeof(text[s]), "v%d", s);
    table_line(out, lay, "scenario", text);
}

static void matrix_row(FILE *out, const layout *lay, const sim_matrix_cell *cells,
                       size_t n, const char *scenario)
{
    char text[SIM_REPORT_STAGES + 1][48];

    for (int s = 1; s <= SIM_REPORT_STAGES; s++) {
        const sim_matrix_cell *c = find_cell(cells, n, scenario, s);

        text[s][0] = '\0';
        if (c != NULL)
            cell_text(text[s], sizeof(text[s]), c);
    }
    table_line(out, lay, scenario, text);
}

#define EVIDENCE_LABEL 22  /* "v1 crash-mid-acquire" and a gap */
#define EVIDENCE_CODE 4    /* "ME" and a gap */
#define EVIDENCE_WIDTH 78  /* room for the longest line of text (52) */

/* One line of a cell's evidence: its label (blank after the first line),
 * a code, and the text, wrapped under itself if it must. */
static void evidence_line(FILE *out, const char *label, const char *code,
                          const char *text)
{
    /* A blank after each field, even a label too long for its column. */
    int at = fprintf(out, "%-*s %-*s ", EVIDENCE_LABEL - 1, label,
                     EVIDENCE_CODE - 1, code);

    sim_report_wrapped(out, text, at, at, EVIDENCE_WIDTH);
}

/* A cell's episodes in time order, MATRIX_CAP of a kind, then how many
 * more of each kind; label is cleared once printed. */
static void matrix_episodes(FILE *out, const sim_matrix_cell *c, char *label)
{
    static const unsigned kinds[] = { SIM_ANOM_ME, SIM_ANOM_MD, SIM_ANOM_DL, SIM_ANOM_ST };
    const sim_verdict *v = c->verdict;
    char text[SIM_REPORT_SENTENCE];
    size_t told[4] = { 0, 0, 0, 0 };

    for (size_t i = 0; i < v->n_episodes; i++) {
        const sim_episode *e = &v->episodes[i];
        size_t k = e->kind == SIM_ANOM_ME ? 0 : e->kind == SIM_ANOM_MD ? 1 :
                   e->kind == SIM_ANOM_ST ? 3 : 2;

        if (told[k]++ >= MATRIX_CAP)
            continue;
        sim_report_brief(text, sizeof(text), e, c->t0_ns);
        evidence_line(out, label, sim_anomaly_name(e->kind), text);
        label[0] = '\0';
    }
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        if (told[k] <= MATRIX_CAP)
            continue;
        snprintf(text, sizeof(text), "and %zu more like it", told[k] - MATRIX_CAP);
        evidence_line(out, label, sim_anomaly_name(kinds[k]), text);
    }
}

/* The fence: the writes the resource refused (F), MATRIX_CAP of them,
 * then how many more, and two holders with one token (T); label is
 * cleared once printed. */
static void matrix_refusals(FILE *out, const sim_verdict *v, int64_t t0,
                            char *label)
{
    char text[SIM_REPORT_SENTENCE];
    size_t i;

    for (i = 0; i < v->n_refusals && i < MATRIX_CAP; i++) {
        sim_report_refusal_brief(text, sizeof(text), &v->refusals[i], t0);
        evidence_line(out, label, "F", text);
        label[0] = '\0';
    }
    if (v->n_refusals > i) {
        snprintf(text, sizeof(text), "and %zu more like it", v->n_refusals - i);
        evidence_line(out, label, "", text);
    }
    if (v->token_clash) {
        sim_report_clash_brief(text, sizeof(text), &v->clash, t0);
        evidence_line(out, label, "T", text);
        label[0] = '\0';
    }
}

/* A cell's episodes, one short line each, the stock's numbers under
 * them, and "!" when the cell differs from the answer key. */
static void matrix_evidence(FILE *out, const sim_matrix_cell *c)
{
    char label[SIM_NAME_LEN + 8], text[SIM_REPORT_SENTENCE], want[32];
    const sim_verdict *v = c->verdict;

    snprintf(label, sizeof(label), "v%d %s", c->stage, c->scenario);
    if (v != NULL)
        matrix_episodes(out, c, label);
    if (v != NULL && (v->anomalies & SIM_ANOM_UNJUDGED)) {
        sim_report_put(text, sizeof(text), "cannot judge: %s", v->why);
        evidence_line(out, label, "?", text);
        label[0] = '\0';
    }
    if (v != NULL && (v->anomalies & SIM_ANOM_LU)) {
        sim_report_stock(text, sizeof(text), v);
        evidence_line(out, label, "LU", text);
        label[0] = '\0';
    }
    if (v != NULL)
        matrix_refusals(out, v, c->t0_ns, label);
    if (!cell_matches(c)) {
        sim_anomaly_format(c->expected & SIM_ANOM_CELLS, want, sizeof(want));
        snprintf(text, sizeof(text), "differs from the answer key, which "
                 "says %s", want);
        evidence_line(out, label, "!", text);
    }
}

/* The marks of a cell and what each means: the terminal's legend and
 * the web page's. */
static const struct {
    const char *mark, *meaning;
} legend[] = {
    { "ME", "mutual exclusion lost" },
    { "MD", "lock deleted by a non-owner" },
    { "DL", "deadlock" },
    { "LU", "lost updates: sales the stock does not show" },
    { "ST", "stalled: the lock stayed free while a live client waited" },
    { "-", "none" },
    { "F", "the fence held: the resource refused a stale write" },
    { "T", "the fence failed: two holders used one token" },
    { "?", "the history could not be judged" },
    { "(-)", "fault not reachable: this stage has no such step" },
    { "!", "differs from the answer key" },
};

const char *sim_report_matrix_legend(size_t i, const char **mark)
{
    if (i >= sizeof(legend) / sizeof(legend[0]))
        return NULL;
    *mark = legend[i].mark;
    return legend[i].meaning;
}

/* The four anomalies two a line, the rest one a line. */
static void matrix_legend(FILE *out)
{
    for (size_t i = 0; i < sizeof(legend) / sizeof(legend[0]); i++) {
        if (i < 4 && i % 2 == 0)
            fprintf(out, "%-3s %-25s ", legend[i].mark, legend[i].meaning);
        else
            fprintf(out, "%-3s %s\n", legend[i].mark, legend[i].meaning);
    }
}

int sim_report_matrix(FILE *out, const sim_matrix_cell *cells, size_t n)
{
    int matched = 0;
    layout lay;

    measure(&lay, cells, n);
    matrix_header(out, &lay);
    for (size_t i = 0; i < n; i++)
        if (opens_row(cells, i))
            matrix_row(out, &lay, cells, n, cells[i].scenario);
    fputc('\n', out);
    matrix_legend(out);
    fprintf(out, "\nevidence:\n");
    for (size_t i = 0; i < n; i++)
        if (opens_row(cells, i))
            for (int s = 1; s <= SIM_REPORT_STAGES; s++) {
                const sim_matrix_cell *c = find_cell(cells, n,
                                                     cells[i].scenario, s);
                if (c != NULL)
                    matrix_evidence(out, c);
            }
    for (size_t i = 0; i < n; i++)
        matched += cell_matches(&cells[i]);
    fprintf(out, "\n%d/%zu cells match the answer key\n", matched, n);
    return matched;
}
