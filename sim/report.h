/* report: the only module of the simulator that prints.
 *
 * Everything goes to a FILE * the caller gives (stdout for a run, a memory
 * stream in a test). It reads a history and a verdict; it never decides
 * anything the checker did not.
 *
 * API:
 *
 *   void sim_report_run(FILE *out, const sim_run_info *run,
 *                       const sim_event *ev, size_t n, int64_t t0_ns,
 *                       const sim_verdict *v);
 *   void sim_report_title(FILE *out, const sim_run_info *run);
 *   void sim_report_verdict(FILE *out, const sim_verdict *v, int64_t t0_ns);
 *   void sim_report_timeline(FILE *out, const sim_event *ev, size_t n,
 *                            int64_t t0_ns, int clients,
 *                            const sim_verdict *v);
 *   void sim_report_evidence(char *buf, size_t len, const sim_verdict *v,
 *                            int64_t t0_ns);
 *   int  sim_report_matrix(FILE *out, const sim_matrix_cell *cells,
 *                          size_t n);
 *   const char *sim_report_matrix_legend(size_t i, const char **mark);
 *
 * Times are printed in ms from t0_ns, the run's start: h->t0_ns for a live
 * history, 0 for one read back with sim_history_load. Clients are letters:
 * client 0 is A, 26 is AA; a thread other than 0 is written "B:1".
 *
 * Every episode of the verdict is told, in time order, up to five of a
 * kind in full and then "and N more ... like these"; the matrix, whose
 * lines must fit a projector, tells up to three per cell and kind. */
#ifndef SIM_REPORT_H
#define SIM_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "checker.h"
#include "history.h"
#include "stage.h"

#define SIM_REPORT_STAGES SIM_STAGES  /* matrix columns: every stage of sim/stages.def */

/* One cell of the fault matrix, as plain data. */
typedef struct sim_matrix_cell {
    const char *scenario;  /* the row: cells of one scenario share a row */
    int stage;             /* the column: 1..SIM_REPORT_STAGES */
    unsigned observed;     /* SIM_ANOM_* bits found; the cell shows ME MD DL */
    unsigned expected;     /* SIM_ANOM_* bits of the answer key */
    int unreachable;       /* the scenario's failpoint is not in this stage */
    const sim_verdict *verdict; /* its evidence; NULL: none */
    int64_t t0_ns;         /* the run's start, for the evidence's times */
} sim_matrix_cell;

/* One run, in order: the title; "fault not reachable: this stage has no
 * such step" when run->failpoint is armed but never fired; the verdict in
 * sentences; the timeline. run may be NULL (no title). ev is the history
 * the verdict was made from. */
void sim_report_run(FILE *out, const sim_run_info *run, const sim_event *ev,
                    size_t n, int64_t t0_ns, const sim_verdict *v);

/* "v3-set-nx-px / slow-holder: <what> (lease 300 ms, seed 7)". */
void sim_report_title(FILE *out, const sim_run_info *run);

/* One sentence per episode with its evidence, in time order; the gaps
 * in the observer's stream; the rule about unknown outcomes when a
 * sentence rests on one; the stock's numbers; one line saying so when
 * there is no anomaly, or why the history cannot be judged. ev may be
 * NULL (the sentences then leave out the events an unknown outcome's
 * reasoning names). */
void sim_report_verdict(FILE *out, const sim_verdict *v, const sim_event *ev,
                        int64_t t0_ns);

/* The ASCII timeline, 72 columns: a time axis, one lane per client
 * (clients: at least this many lanes), the lock key's lane, a lane marking
 * every episode of the verdict, and a legend. v NULL: the timeline checks
 * the history itself, for the key's owners, and marks nothing. */
void sim_report_timeline(FILE *out, const sim_event *ev, size_t n,
                         int64_t t0_ns, int clients, const sim_verdict *v);

/* The verdict's episodes in the sentences of a run's verdict (three of a
 * kind at most), or why it cannot be judged, on one line, "; " between
 * them, "" when there is no anomaly: for a message that must stand alone,
 * such as a failed test's. */
void sim_report_evidence(char *buf, size_t len, const sim_verdict *v,
                         int64_t t0_ns);

/* The fault matrix: rows = scenarios in order of first appearance,
 * a column per stage, each as wide as its widest cell, each cell's
 * anomalies ("ME MD", "DL", "-", "?" when its history could not be
 * judged), "!" before a cell that differs from the answer key, "(-)" for
 * a fault the stage cannot reach; then each cell's evidence under the
 * table, one short line per episode (78 columns at most), the stock's
 * numbers under them; and the last line "63/63 cells match the answer
 * key". Returns the matching count. */
int sim_report_matrix(FILE *out, const sim_matrix_cell *cells, size_t n);

/* The matrix legend's i-th entry: its meaning, the mark into *mark;
 * NULL past the last. */
const char *sim_report_matrix_legend(size_t i, const char **mark);

#endif
