/* history_sale: the journal of one flash sale (make sale).
 *
 * Each buyer process writes its own file, a line per step, stamped with
 * CLOCK_MONOTONIC (all processes on the machine share it); the sale
 * merges them after the buyers ended into one file: a first line with
 * the sale's settings, then every event in time order. The judge reads
 * only that file, so a saved sale can be judged again.
 *
 *   sale units=S segments=K buyers=B stage=N pause=MS first=0|1 fault=F t0=NS
 *   <t_ns> <buyer> <segment> <op> <value>
 *
 * Ops, one letter each:
 *
 *   L  took segment's lock          U  about to release it
 *   N  the release found the lock no longer ours (DLOCK_NOT_OWNER)
 *   R  read the stock (value)       S  sold one: wrote value = stock - 1
 *   E  found the segment empty      B  lock busy: moved on to another segment
 *   O  said "sold out" (segment: the last one it found empty; value: how
 *      many segments it had seen empty)
 *   X  a step failed (value: which: SIM_SALE_STEP_*); the sale went on
 *   H  the holder's pause began (fault=pause; value: its length in ms)
 *   F  the nemesis acted (buyer -1; value: SIM_SALE_FAULT_*; segment: the
 *      segment whose master it hit)
 *   D  the buyer's process ended before it said "sold out" (written by
 *      the sale; segment 0; value: its exit code, or 128 + the signal
 *      that killed it): its history stops there
 *
 * Errors, hiredis-style: 0, or -1 with one line of reason in errstr. */
#ifndef SIM_HISTORY_SALE_H
#define SIM_HISTORY_SALE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SIM_SALE_MAX_SEGMENTS 64
#define SIM_SALE_MAX_BUYERS 64

/* What failed, in an X event. */
enum { SIM_SALE_STEP_LOCK = 1, SIM_SALE_STEP_READ, SIM_SALE_STEP_WRITE, SIM_SALE_STEP_UNLOCK,
       SIM_SALE_STEP_GAVE_UP };

/* What the nemesis did, in an F event. */
enum { SIM_SALE_FAULT_CUT = 1,    /* the master's replica was cut off */
       SIM_SALE_FAULT_KILL,       /* the master was killed */
       SIM_SALE_FAULT_PROMOTED }; /* its replica serves the slot now */

typedef struct sim_sale_event {
    int64_t t_ns;   /* since the sale's t0 once loaded */
    int buyer;      /* -1: the nemesis */
    int seg;
    char op;
    long long value;
} sim_sale_event;

/* The sale's settings: the log's first line. */
typedef struct sim_sale_meta {
    long units;
    int segments;
    int buyers;
    int stage;
    long pause_ms;
    int first;
    char fault[16];  /* "none", "failover", "pause" */
    int64_t t0_ns;   /* the sale's start, CLOCK_MONOTONIC */
} sim_sale_meta;

/* Where a segment lives, for the table: its master's node and port;
 * node -1 when unknown (a history loaded
 * from a file). */
typedef struct sim_sale_place {
    int node[SIM_SALE_MAX_SEGMENTS];
    int slot[SIM_SALE_MAX_SEGMENTS];
} sim_sale_place;

/* A loaded sale. */
typedef struct sim_sale_log {
    sim_sale_meta meta;
    sim_sale_event *ev;
    size_t n;
} sim_sale_log;

int64_t sim_sale_now_ns(void);

/* A buyer's line, written as it happens (the file is the buyer's own). */
void sim_sale_log_event(FILE *f, int buyer, int seg, char op, long long value);

/* The stock segment k starts with: units / segments, the first
 * units % segments one more. */
long sim_sale_initial_stock(const sim_sale_meta *m, int seg);

/* Merges the files (the buyers', and the nemesis's when it exists) into
 * out: the settings, then every event in time order. */
int sim_sale_log_merge(const sim_sale_meta *m, const char *const *files, int nfiles,
                       const char *out, char *errstr, size_t len);

/* Loads a merged file; times become relative to t0. Free with
 * sim_sale_log_free. */
int sim_sale_log_load(sim_sale_log *log, const char *path, char *errstr, size_t len);
void sim_sale_log_free(sim_sale_log *log);

#endif
