/* report: a run's title and its verdict in sentences (the timeline and
 * the matrix have files of their own; report_internal.h lists them).
 *
 * Students read this on a projector, so it favours sentences with names
 * and times over codes. Everything fits in 72 columns except the matrix's
 * evidence, one line per episode in 78 (an 80-column terminal). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

#define EVIDENCE_CAP 3  /* episodes of a kind in a one-line evidence */
#define GAP_CAP 3       /* gaps in the observer's stream told in full */

/* A counter per kind of episode: ME, MD, DL, ST. */
static size_t *slot(size_t counts[4], unsigned kind)
{
    return &counts[kind == SIM_ANOM_ME ? 0 : kind == SIM_ANOM_MD ? 1 :
                   kind == SIM_ANOM_ST ? 3 : 2];
}

void sim_report_wrapped(FILE *out, const char *text, int at, int hang,
                        int width)
{
    int start = at;

    while (*text != '\0') {
        int word = (int)strcspn(text, " ");

        /* "900 ms" stays on one line: a number without its unit misleads. */
        if (strncmp(text + word, " ms", 3) == 0)
            word += 3 + (int)strcspn(text + word + 3, " ");

        if (at > start && at + 1 + word > width) {
            fprintf(out, "\n%*s", hang, "");
            at = start = hang;
        } else if (at > start) {
            fputc(' ', out);
            at++;
        }
        fprintf(out, "%.*s", word, text);
        at += word;
        text += word;
        text += strspn(text, " ");
    }
    fputc('\n', out);
}

/* One line without trailing blanks (they would only wrap on a narrow
 * terminal). */
void sim_report_trimmed(FILE *out, const char *text)
{
    int end = (int)strlen(text);

    while (end > 0 && text[end - 1] == ' ')
        end--;
    fprintf(out, "%.*s\n", end, text);
}

/* "  heading: sentence", wrapped under itself. */
static void say_line(FILE *out, const char *heading, const char *text)
{
    char line[SIM_REPORT_SENTENCE + 64];

    snprintf(line, sizeof(line), "%s%s%s", heading, heading[0] ? ": " : "",
             text);
    fputs("  ", out);
    sim_report_wrapped(out, line, 2, 4, SIM_REPORT_WIDTH);
}

/* One line of the account, under its heading. */
static void say_story_line(const sim_report_line *line, void *out)
{
    say_line(out, line->heading, line->text);
}

/* A line of the account that is not part of the story. */
static void note(sim_report_line_fn *fn, void *arg, const char *heading,
                 const char *text)
{
    sim_report_line line = { SIM_REPORT_NOTE, 0, 0, heading, "" };

    sim_report_put(line.text, sizeof(line.text), "%s", text);
    fn(&line, arg);
}

static void tell_gaps(const sim_verdict *v, const sim_event *ev, int64_t t0,
                      sim_report_line_fn *fn, void *arg)
{
    char s[SIM_REPORT_SENTENCE];

    for (size_t i = 0; i < v->n_gaps && i < GAP_CAP; i++) {
        sim_report_gap(s, sizeof(s), &v->gaps[i], ev, t0);
        note(fn, arg, "observer", s);
    }
    if (v->n_gaps > GAP_CAP) {
        snprintf(s, sizeof(s), "and %zu more gaps like these",
                 v->n_gaps - GAP_CAP);
        note(fn, arg, "observer", s);
    }
}

void sim_report_account(const sim_run_info *run, const sim_verdict *v,
                        const sim_event *ev, size_t n, int64_t t0_ns,
                        sim_report_line_fn *fn, void *arg)
{
    char s[SIM_REPORT_SENTENCE];

    /* The armed step does not exist in this stage: that absence is the
     * fix, and the clean run below is its proof. */
    if (run != NULL && run->failpoint[0] != '\0' &&
        !sim_check_failpoint_fired(ev, n, run->failpoint)) {
        sim_report_put(s, sizeof(s), "this stage has no such step (%s)",
                       run->failpoint);
        note(fn, arg, "fault not reachable", s);
    }
    if (v->anomalies & SIM_ANOM_UNJUDGED) {
        note(fn, arg, "cannot judge this history", v->why);
        return;
    }
    /* The title gives the run's lease; a scenario may give a client its
     * own, which explains a key that outlives the run's lease by far. */
    if (run != NULL && sim_report_leases(s, sizeof(s), ev, n, run->lease_ms))
        note(fn, arg, "leases", s);
    if (run != NULL && sim_report_tokens(s, sizeof(s), run->stage, ev, n))
        note(fn, arg, "tokens", s);
    sim_report_story(v, ev, n, t0_ns, SIM_REPORT_CAP, fn, arg);
    if ((v->anomalies & SIM_ANOM_CELLS) == 0)
        note(fn, arg, "no anomaly", "one holder at a time, no lock deleted "
             "by another, no deadlock");
    tell_gaps(v, ev, t0_ns, fn, arg);
    if (v->unknown_used)
        note(fn, arg, "rule", "an acquire or release that ended in an error "
             "or a crash may still have taken effect; the checker counts "
             "one only where later events prove it");
    if (v->stock_known) {
        sim_report_stock(s, sizeof(s), v);
        note(fn, arg, v->anomalies & SIM_ANOM_LU ? "lost updates" : "", s);
    }
}

void sim_report_verdict(FILE *out, const sim_verdict *v, const sim_event *ev,
                        size_t n, int64_t t0_ns)
{
    sim_report_account(NULL, v, ev, n, t0_ns, say_story_line, out);
}

void sim_report_evidence(char *buf, size_t len, const sim_verdict *v,
                         int64_t t0_ns)
{
    size_t used = 0, told[4] = { 0, 0, 0, 0 };
    char s[SIM_REPORT_SENTENCE];

    if (len == 0)
        return;
    buf[0] = '\0';
    if (v->anomalies & SIM_ANOM_UNJUDGED) {
        snprintf(buf, len, "cannot judge the history: %s", v->why);
        return;
    }
    for (size_t i = 0; i < v->n_episodes && used < len; i++) {
        int k;

        if ((*slot(told, v->episodes[i].kind))++ >= EVIDENCE_CAP)
            continue;
        sim_report_say(s, sizeof(s), &v->episodes[i], NULL, t0_ns);
        k = snprintf(buf + used, len - used, "%s%s: %s", used ? "; " : "",
                     sim_anomaly_name(v->episodes[i].kind), s);
        used = k < 0 ? len : used + (size_t)k;
    }
    if ((v->anomalies & SIM_ANOM_LU) && used < len) {
        sim_report_stock(s, sizeof(s), v);
        snprintf(buf + used, len - used, "%sLU: %s", used ? "; " : "", s);
    }
}

void sim_report_title(FILE *out, const sim_run_info *run)
{
    char line[SIM_NAME_LEN * 2 + SIM_WHAT_LEN + 64];

    snprintf(line, sizeof(line), "%s / %s%s%s (lease %ld ms, seed %lu)",
             run->stage[0] ? run->stage : "?",
             run->scenario[0] ? run->scenario : "?", run->what[0] ? ": " : "",
             run->what, run->lease_ms, run->seed);
    sim_report_wrapped(out, line, 0, 4, SIM_REPORT_WIDTH);
}

void sim_report_run(FILE *out, const sim_run_info *run, const sim_event *ev,
                    size_t n, int64_t t0_ns, const sim_verdict *v)
{
    if (run != NULL)
        sim_report_title(out, run);
    sim_report_account(run, v, ev, n, t0_ns, say_story_line, out);
    fputc('\n', out);
    sim_report_timeline(out, ev, n, t0_ns, run != NULL ? run->clients : 0,
                        run != NULL ? run->lease_ms : 0, v);
}
