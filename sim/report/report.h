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
 *   void sim_report_verdict(FILE *out, const sim_verdict *v,
 *                           const sim_event *ev, size_t n, int64_t t0_ns);
 *   void sim_report_account(const sim_run_info *run, const sim_verdict *v,
 *                           const sim_event *ev, size_t n, int64_t t0_ns,
 *                           sim_report_line_fn *fn, void *arg);
 *   size_t sim_report_story(const sim_verdict *v, const sim_event *ev,
 *                           size_t n, int64_t t0_ns, size_t cap,
 *                           sim_report_line_fn *fn, void *arg);
 *   void sim_report_timeline(FILE *out, const sim_event *ev, size_t n,
 *                            int64_t t0_ns, int clients, long lease_ms,
 *                            const sim_verdict *v);
 *   void sim_report_evidence(char *buf, size_t len, const sim_verdict *v,
 *                            int64_t t0_ns);
 *   int  sim_report_matrix(FILE *out, const sim_matrix_cell *cells,
 *                          size_t n);
 *   const char *sim_report_matrix_legend(size_t i, const char **mark);
 *   unsigned sim_report_cell_marks(const sim_matrix_cell *c);
 *   void sim_report_marks_format(unsigned marks, char *buf, size_t len);
 *
 * Times are printed in ms from t0_ns, the run's start: h->t0_ns for a live
 * history, 0 for one read back with sim_history_load. Clients are letters:
 * client 0 is A, 26 is AA; a thread other than 0 is written "B:1".
 *
 * A run's story is every episode of the verdict, every release result
 * that matters (NOT_OWNER: the lock was lost before the release; an
 * error: its outcome is unknown) and the fence's work (writes refused, a
 * token two holders shared), in time order, up to five of a kind in
 * full and then "and N more ... like these"; the matrix, whose lines must
 * fit a projector, tells the episodes, up to three per cell and kind. */
#ifndef SIM_REPORT_H
#define SIM_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "checker.h"
#include "history.h"
#include "stage.h"

#define SIM_REPORT_STAGES SIM_STAGES  /* matrix columns: every stage of sim/stages.def */
#define SIM_REPORT_SENTENCE 512       /* one line of a story, in words */
#define SIM_REPORT_CAP 5              /* lines of a kind a run tells in full */

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

/* The story (sim_report_story) one sentence a line; the gaps in the
 * observer's stream; the rule about unknown outcomes when a sentence
 * rests on one; the stock's numbers; one line saying so when there is no
 * anomaly, or why the history cannot be judged. ev may be NULL, n 0 (the
 * sentences then leave out what only the events say: the release results
 * and the events an unknown outcome's reasoning names). */
void sim_report_verdict(FILE *out, const sim_verdict *v, const sim_event *ev,
                        size_t n, int64_t t0_ns);

/* The kinds of a story's lines that are not episodes. */
#define SIM_REPORT_RELEASE 0         /* a release result */
#define SIM_REPORT_REFUSAL (1u << 8) /* a write the resource refused */
#define SIM_REPORT_CLASH (1u << 9)   /* two holders with one token */
#define SIM_REPORT_NOTE (1u << 10)   /* the rest of an account: a fault the
                                      * stage cannot reach, "no anomaly", a
                                      * gap, the rule, the stock */
#define SIM_REPORT_NODES (1u << 11)  /* a fault of the lock's server(s) */
#define SIM_REPORT_MAJORITY (1u << 12) /* who held which nodes, at a moment */
#define SIM_REPORT_CUT (1u << 13)    /* a client cut off from the lock's servers */

/* One line of a run's story. */
typedef struct sim_report_line {
    unsigned kind;         /* SIM_ANOM_ME, _MD or _DL, or SIM_REPORT_* */
    size_t more;           /* 0: text tells one; else "and <more> ..." */
    int64_t at_ns;         /* when (for a "more" line: the last one's) */
    const char *heading;   /* "mutual exclusion lost", "release", ...; ""
                            * where the sentence names its kind itself */
    char text[SIM_REPORT_SENTENCE];
} sim_report_line;

typedef void sim_report_line_fn(const sim_report_line *line, void *arg);

/* The story of a run, in time order: each episode of v, each release
 * result that matters, each write the resource refused and the first
 * token two holders shared, each fault of the lock's servers (those in a
 * row told in one line; headed "server" for a lock of one), each client
 * cut off from them (headed "partition"), and for a
 * lock of several nodes who held which nodes when the story turned, cap of a kind in full, then one "and N more
 * ... like these" line per kind that had more. fn gets each line. Returns
 * the lines told. The terminal (sim_report_verdict) tells it with cap
 * SIM_REPORT_CAP; a page can tell it in full. */
size_t sim_report_story(const sim_verdict *v, const sim_event *ev, size_t n,
                        int64_t t0_ns, size_t cap, sim_report_line_fn *fn,
                        void *arg);

/* A run's account, a line at a time to fn: the fault not reachable
 * (run may be NULL), then what sim_report_verdict prints. The terminal
 * prints it; a page lists it: one account, two renderings. */
void sim_report_account(const sim_run_info *run, const sim_verdict *v,
                        const sim_event *ev, size_t n, int64_t t0_ns,
                        sim_report_line_fn *fn, void *arg);

/* The ASCII timeline: a time axis, one lane per client (clients: at
 * least this many lanes), the lock key's lane, a lane marking every
 * episode of the verdict, and a legend of every symbol drawn. Eight
 * columns make one lease (lease_ms), so runs of one scenario compare
 * across stages; a run longer than a row of 60 columns goes on in
 * another row, and one longer than three rows is drawn at two (four,
 * ...) leases per eight columns, as the legend then says. lease_ms 0:
 * unknown, the run is fit in one row. v NULL: the timeline checks the
 * history itself, for the key's owners, and marks nothing. */
void sim_report_timeline(FILE *out, const sim_event *ev, size_t n,
                         int64_t t0_ns, int clients, long lease_ms,
                         const sim_verdict *v);

/* The verdict's episodes in the sentences of a run's verdict (three of a
 * kind at most), or why it cannot be judged, on one line, "; " between
 * them, "" when there is no anomaly: for a message that must stand alone,
 * such as a failed test's. */
void sim_report_evidence(char *buf, size_t len, const sim_verdict *v,
                         int64_t t0_ns);

/* What a cell shows beside its anomalies: the fence's work, one mark
 * for each outcome. Neither is an anomaly, so neither is in the answer
 * key: the key judges the lock, these tell whether the resource saved
 * the stock from it. */
#define SIM_MARK_FENCE_HELD (1u << 16)   /* F: the resource refused a stale write */
#define SIM_MARK_FENCE_FAILED (1u << 17) /* T: two holders used one token */
#define SIM_MARK_FENCE (SIM_MARK_FENCE_HELD | SIM_MARK_FENCE_FAILED)

/* The cell's marks: its anomalies (SIM_ANOM_CELLS of observed) and
 * SIM_MARK_FENCE_* from its verdict. */
unsigned sim_report_cell_marks(const sim_matrix_cell *c);

/* Marks as the matrix writes them: "ME LU T", "ME F", "-". */
void sim_report_marks_format(unsigned marks, char *buf, size_t len);

/* The fault matrix: rows = scenarios in order of first appearance,
 * a column per stage, each as wide as its widest cell, each cell's
 * marks ("ME MD", "DL", "-", "?" when its history could not be
 * judged, "ME F" where the fence held), "!" before a cell that differs
 * from the answer key (its anomalies do), "(-)" for
 * a fault the stage cannot reach; then each cell's evidence under the
 * table, one short line per episode (78 columns at most), the stock's
 * numbers under them; and the last line "63/63 cells match the answer
 * key". Returns the matching count. */
int sim_report_matrix(FILE *out, const sim_matrix_cell *cells, size_t n);

/* The matrix legend's i-th entry: its meaning, the mark into *mark;
 * NULL past the last. */
const char *sim_report_matrix_legend(size_t i, const char **mark);

#endif
