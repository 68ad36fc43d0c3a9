/* lanes: what each client's lane of a timeline shows, read once from a
 * history, for the terminal's timeline (report_timeline.c) and the run
 * page's picture (html_lanes.c) alike, so that the two can never tell a
 * client's life differently.
 *
 * A client's life is a list of stretches: it waited for the lock, held
 * it, was inside its critical section, released it (and how the release
 * ended), was paused, was cut off from the lock's servers; and of
 * moments: a sale (the stock it read and
 * wrote), a fencing token drawn, a write the fence refused, an acquire
 * that gave up or ended in an error, a kill, and the end of a pause
 * with what the client woke into. A client's threads share its lane.
 *
 * API:
 *
 *   int  sim_lanes_read(sim_lanes *l, const sim_event *ev, size_t n,
 *                       int clients, int64_t end, const sim_verdict *v);
 *   void sim_lanes_free(sim_lanes *l);
 *   int  sim_lanes_sessions(const sim_event *ev, size_t n);
 *   int  sim_lanes_queue(sim_queue *q, const sim_event *ev, size_t n,
 *                        int64_t end, const sim_verdict *v);
 *   int  sim_queue_at(const sim_queue *q, int64_t from, int64_t to,
 *                     size_t *who, int max);
 *   void sim_queue_free(sim_queue *q);
 *
 * The queue (report_queue.c): the nodes that wait behind a ZooKeeper
 * lock's holder (v11), as the observer saw them come and go, each named
 * by the client whose key its turn began. */
#ifndef SIM_LANES_H
#define SIM_LANES_H

#include <stddef.h>
#include <stdint.h>

#include "checker.h"
#include "history.h"

/* What a stretch is, in the order a picture draws them: the critical
 * section lies over the hold, a pause over both, a cut over all. */
enum {
    SIM_LANE_WAIT,     /* between an acquire's invoke and its outcome */
    SIM_LANE_HOLD,     /* from acquire-ok to the outermost release's invoke */
    SIM_LANE_CS,       /* inside the critical section */
    SIM_LANE_RELEASE,  /* from a release's invoke to its outcome (ended) */
    SIM_LANE_PAUSE,    /* the process stopped (SIGSTOP, or its own failpoint) */
    SIM_LANE_CUT,      /* cut off from nodes of the lock (read: a bit per
                        * node), its process running on */
    SIM_LANE_SALE,     /* a moment: read the stock (read), wrote it (wrote) */
    SIM_LANE_TOKEN,    /* a moment: the fencing token drawn (wrote) */
    SIM_LANE_REFUSED,  /* a moment: the verdict's refusal number wrote */
    SIM_LANE_GAVE_UP,  /* a moment: an acquire's budget ran out */
    SIM_LANE_ERROR,    /* a moment: an acquire ended in an error */
    SIM_LANE_KILLED,   /* a moment: SIGKILL */
    SIM_LANE_WOKE,     /* a moment: a pause (begun at read) ended; wrote is
                        * the stretch the client woke into, or -1: none */
    SIM_LANE_KINDS
};

typedef struct sim_stretch {
    int client;
    int kind;            /* SIM_LANE_* */
    int64_t from, to;    /* ns; a moment: from == to */
    int ended;           /* SIM_LANE_RELEASE: the event type that ended it;
                          * -1: it never returned */
    int64_t read, wrote; /* by kind, as the list above says */
} sim_stretch;

typedef struct sim_lanes {
    sim_stretch *st;     /* in the order they ended: a client's moments,
                          * and its releases' outcomes, in time order;
                          * the refused writes last */
    size_t n, cap;
    size_t sales;        /* SIM_LANE_SALE stretches */
} sim_lanes;

/* Reads the events of clients 0 .. clients - 1 (others are left out);
 * what is still open at end ends there. v gives the fence's refusals
 * (NULL: none). 0, or -1 when out of memory (l is then empty). */
int sim_lanes_read(sim_lanes *l, const sim_event *ev, size_t n, int clients,
                   int64_t end, const sim_verdict *v);

void sim_lanes_free(sim_lanes *l);

/* Whether the history's keys are ZooKeeper nodes, which go with their
 * maker's session rather than by a TTL (the observer names their
 * creation "create", or "first" when it found one already there). */
int sim_lanes_sessions(const sim_event *ev, size_t n);

/* One waiting node of a ZooKeeper lock's queue: from its "queued" to its
 * turn ("first"), to its "left" or "gone", or to the run's end. */
typedef struct sim_waiter {
    int64_t seq;         /* its sequence number (the events' token) */
    int64_t from, to;    /* ns */
    int client;          /* the owner, in the verdict, of the key its
                          * "first" began; SIM_UNNAMED: it had no turn,
                          * or its key's maker cannot be named */
} sim_waiter;

typedef struct sim_queue {
    sim_waiter *w;       /* in their places: by sequence number */
    size_t n;
    int longest;         /* the most that waited at once */
} sim_queue;

/* Reads node 0's queue events; a node still waiting at end waits until
 * then. 0 (q->n 0: the history has no queue), or -1 when out of memory
 * (q is then empty). */
int sim_lanes_queue(sim_queue *q, const sim_event *ev, size_t n, int64_t end,
                    const sim_verdict *v);

/* The nodes that waited at any moment of [from, to] (from == to: at that
 * instant), in their places: the first is the next to hold. How many;
 * the first max of them go into who, as indices into q->w. */
int sim_queue_at(const sim_queue *q, int64_t from, int64_t to, size_t *who, int max);

void sim_queue_free(sim_queue *q);

#endif
