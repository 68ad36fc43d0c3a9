/* checker: reads a history and returns a verdict with its evidence.
 *
 * Jepsen's checker: it never talks to Redis and never prints; it only
 * replays the events of a history, so a saved run can be checked again
 * and gets the same verdict.
 *
 * API:
 *
 *   unsigned    sim_check(const sim_event *ev, size_t n, sim_verdict *v);
 *   unsigned    sim_check_run(const sim_run_info *run, const sim_event *ev,
 *                             size_t n, sim_verdict *v);
 *   void        sim_verdict_free(sim_verdict *v);
 *   int         sim_verdict_status(const sim_verdict *v);
 *   size_t      sim_verdict_count(const sim_verdict *v, unsigned kind);
 *   const sim_episode *sim_verdict_first(const sim_verdict *v,
 *                                        unsigned kind);
 *   int         sim_check_failpoint_fired(const sim_event *ev, size_t n,
 *                                         const char *name);
 *   const char *sim_check_client_name(int client, char *buf, size_t len);
 *   const char *sim_anomaly_name(unsigned anomaly);
 *   void        sim_anomaly_format(unsigned set, char *buf, size_t len);
 *   int         sim_anomaly_parse(const char *text, unsigned *set);
 *
 * What a history says. A client's events are stamped by the client around
 * its own command (invoke before sending, the outcome after the reply), so
 * they bound what Redis did: an acquire took effect, if at all, between
 * its invoke and its outcome. Key events come from the observer, a
 * subscriber that stamps each one when it arrives: in Redis's order, late
 * by a scheduling delay, and possibly missing (a subscriber can lose
 * messages). The checker assumes that delay is shorter than a key's life:
 * an operation that returned before the observer reported a key's
 * creation acted on nothing after it: it did not delete that key and did
 * not make a later one.
 *
 * Keys. The observer's events split the lock key's life into keys: a key
 * begins with a write on an absent key ("set", "hset", "hincrby", ...)
 * and ends with "del", "expired", "evicted", the failover step "promote"
 * (the new primary never had it), or its node's death or restart
 * ("node-down", "restart": it came back empty). An event that needs a key
 * while there is none (a "del", "expired" or "expire") or a "set" while
 * one exists shows a gap in the observer's stream: the checker supposes
 * the missing creation or end and reports the gap. A ZooKeeper lock's
 * node is a key the same way: "create" or "first" (a waiter's node
 * became the lowest) begins one, "delete" (a client's) or "expired" (it
 * went with its session) ends it. Its queue's events ("queued", "left",
 * "gone": a waiter's node) are none of the key's life, and are passed
 * over.
 *
 * Owners. A key's owner is the acquire that made it, found from the
 * windows alone, never from unrelated events: (1) each acquire-ok, in the
 * order they returned, owns the latest unowned key that appeared inside
 * its window (the simulator's clients record acquire-ok only after the
 * observer reported their key); (2) a key still unowned goes to the one
 * acquire that could have made it: invoked before the key appeared,
 * returned after the previous key appeared, not BUSY, and not yet owning
 * a key; when several could, the owner cannot be named.
 *
 * Unknown outcomes (Jepsen's "info"). An acquire that ended in an error,
 * or in its client's crash, may have taken the lock. The checker counts
 * it as taken only where the history proves it: (a) it is the one acquire
 * that could have made a key (rule 2), or (b) where the stage's release
 * checks the owner (v4 on, as the stage list says of the run header's
 * stage), its thread's next release returned OK. Such an acquire holds
 * the lock, without knowing it, until its key ends (or the next key
 * appears, for the observer may hear an end late), its thread invokes a
 * release, or its client crashes. A release that ended in an error or a crash may have
 * deleted the key.
 *
 * ME  mutual exclusion lost: two holds overlap. A hold runs from
 *     acquire-ok to the release-invoke that ends it, to the holder's
 *     crash, or to the end of the run; a thread that acquires again while
 *     holding nests and its hold ends at its outermost release-invoke. An
 *     unknowing hold (above) counts too, from its outcome or its key's
 *     creation, whichever came first. Each hold that begins while others
 *     hold is one episode, against the earliest of them, until the first
 *     of the two ends.
 * MD  lock deleted by a non-owner: a "del" ends a key whose owner still
 *     held the lock (its hold ended after the del was reported) and could
 *     not have sent that DEL itself (no release of its own between the
 *     key's creation and the del). The deleter is the one release that
 *     could have: invoked by the time the del was reported, returned (or
 *     crashed, or never returned) after the key appeared, and not
 *     NOT_OWNER; none, or several of different threads: "a client that
 *     cannot be named" (several tries of one thread are one release
 *     retried). The intruder is the owner of the next key, when it took
 *     the lock while the victim still held.
 * DL  deadlock: an acquire ended BUSY while (b) its own thread held the
 *     lock (self-deadlock), or (a) the key existed without a TTL, no live
 *     client held the lock, and the key's owner will never delete it: it
 *     crashed holding, crashed inside its acquire, never learned it held
 *     the lock (its acquire ended in an error and it never released), or
 *     its release failed; or the owner cannot be named.
 * ST  stalled: the lock was free, a live client was waiting for it, and
 *     nobody took it for longer than SIM_STALL_LEASES leases of the run
 *     (its header's lease; SIM_STALL_LEASE_MS when it has none). Free
 *     means no key on any node, once the first key of the run was made
 *     (before it the clients are still connecting: there is nothing to
 *     hand on yet); waiting runs from the acquire-invoke to
 *     its outcome, its client's crash or the run's end. No healthy stage
 *     leaves a free lock that long: a poller tries every retry interval,
 *     a woken waiter at once, and one that slept on a TTL tries again
 *     when that TTL, at most a lease, runs out. A queue (v9) that wakes
 *     only its first waiter does, when that waiter is dead: the evidence
 *     names a client whose acquire was invoked before the stalled one's
 *     and that crashed before the stall ended, the dead waiter ahead.
 * LU  lost updates: the stock does not show every sale. From
 *     stock-initial, stock-final and the count of stock-write events
 *     (sales): final + sold != initial means updates were lost (or the
 *     stock moved without a recorded sale), sold > initial is
 *     overselling. No verdict without initial and final. Two holders at
 *     once (ME) are what lose updates; ME without LU means the resource
 *     itself refused the stale writes.
 *
 * Refused writes are no anomaly but the fence at work, and no sale: a
 * stock-refused event says the resource turned down a write whose
 * fencing token was below the highest it had seen (its value). The
 * verdict keeps each one with the first read or write that showed the
 * resource that higher token, and whose it was. And where two holders
 * read or wrote the stock with the same token, the verdict keeps the
 * first such pair: no fence can tell them apart.
 *
 * Ties. Events stamped in the same nanosecond are simultaneous: a hold
 * that ends and one that begins at that instant do not overlap; a key
 * that appears or ends at the instant a waiter gives up does not count
 * as present; an operation's window includes both of its ends. So the
 * verdict never depends on the order of equal stamps, and with the
 * history's order (sim_event_order) not on the order of a file's lines.
 *
 * A history the checker cannot fully judge is never a clean verdict: it
 * sets SIM_ANOM_UNJUDGED and says why in one line (no events, a type or
 * key event it does not know, a client number below 0, a thread's steps
 * out of order, events after a crash, events out of time order).
 *
 * Nodes. A lock of several independent masters (the run header's
 * "nodes", or as many as the events name) has keys on each: every node's
 * keys are read apart, by the rules above, but for three. An acquire-ok
 * won a majority of the nodes, and the history cannot say which: on one
 * node the latest key of its window may be another client's, whose try
 * lost elsewhere, so only the one acquire that could have made a key
 * (rule 2, BUSY ones included, for a try that lost gave its keys back)
 * owns it. One key is no majority, so it proves no unknown acquire. And
 * an acquire deletes the keys of its own tries that lost: a del of a key
 * whose owner did not hold the lock yet, or never did, is no MD. DL (a)
 * needs a majority of stuck keys, which one node cannot tell: of several
 * nodes, only a self-deadlock (b) is judged.
 *
 * Each anomaly is kept as its own episode, in time order; the report
 * decides how many to print. The fault matrix shows ME, MD, DL, LU and ST
 * (SIM_ANOM_CELLS). An episode carries its kind, so another anomaly is
 * one more kind. */
#ifndef SIM_CHECKER_H
#define SIM_CHECKER_H

#include <stddef.h>
#include <stdint.h>

#include "history.h"

/* Anomalies, as bits of a set. */
#define SIM_ANOM_ME 1u        /* mutual exclusion lost */
#define SIM_ANOM_MD 2u        /* lock deleted by a non-owner */
#define SIM_ANOM_DL 4u        /* deadlock */
#define SIM_ANOM_LU 8u        /* lost updates (or overselling) */
#define SIM_ANOM_UNJUDGED 16u /* no verdict: sim_verdict.why says why */
#define SIM_ANOM_ST 32u       /* stalled: a free lock, waited for, untaken */
#define SIM_ANOM_CELLS (SIM_ANOM_ME | SIM_ANOM_MD | SIM_ANOM_DL | \
                        SIM_ANOM_LU | SIM_ANOM_ST | SIM_ANOM_UNJUDGED)

#define SIM_STALL_LEASES 2    /* ST: a free lock waited for this many leases */
#define SIM_STALL_LEASE_MS 300 /* the lease of a history that does not say */

#define SIM_UNNAMED (-2)      /* a client the history cannot name */
#define SIM_WHY_LEN 256       /* one line of reason */

/* How the history proves that an acquire whose outcome was unknown took
 * the lock. */
#define SIM_PROOF_NONE 0      /* its outcome was known: OK */
#define SIM_PROOF_KEY 1       /* only it could have made the key */
#define SIM_PROOF_RELEASE 2   /* its owner-checked release returned OK */

/* A client thread that held the lock, and since when. */
typedef struct sim_holder {
    int client, thread;   /* SIM_UNNAMED: cannot be named; SIM_NO_CLIENT:
                           * nobody (an intruder that does not exist) */
    size_t since;         /* the event that opened the hold: acquire-ok, or
                           * an unknown acquire's error or crash */
    int64_t since_ns;     /* when it held the lock from */
    int proof;            /* SIM_PROOF_*: nonzero for an unknown outcome */
    size_t proof_at;      /* the key's creation or the release-ok */
    size_t ended;         /* its acquire's outcome: acquire-ok, the error
                           * or the crash; SIZE_MAX: it never returned */
} sim_holder;

/* ME: b took the lock while a held it. */
typedef struct sim_me_evidence {
    sim_holder a, b;
    int64_t from_ns, to_ns; /* the overlap: b's entry to the first exit */
} sim_me_evidence;

/* How the release that deleted a key had ended. */
#define SIM_RELEASE_RETURNED 0  /* it had returned when the del came */
#define SIM_RELEASE_IN_FLIGHT 1 /* it had not returned yet */
#define SIM_RELEASE_FAILED 2    /* it ended in an error */
#define SIM_RELEASE_CRASHED 3   /* its client was killed before it returned */

/* MD: a delete of a key whose owner still held it. */
typedef struct sim_md_evidence {
    size_t del;                   /* the "del" key event */
    int64_t at_ns;                /* its time */
    int deleter, deleter_thread;  /* SIM_UNNAMED: none or several could */
    int deleter_how;              /* SIM_RELEASE_* */
    sim_holder owner;             /* whose key it was */
    sim_holder intruder;          /* who got in through the hole while the
                                   * owner still held; client SIM_NO_CLIENT:
                                   * nobody */
} sim_md_evidence;

/* Why a key without TTL stayed. */
#define SIM_STUCK_CRASHED 0       /* its owner crashed holding it */
#define SIM_STUCK_CRASHED_ACQUIRING 1 /* ... inside its acquire */
#define SIM_STUCK_ACQUIRE_FAILED 2 /* its acquire ended in an error */
#define SIM_STUCK_RELEASE_FAILED 3 /* its release ended in an error */
#define SIM_STUCK_UNNAMED 4       /* its owner cannot be named */

/* DL: an acquire that gave up for a reason that cannot pass. */
typedef struct sim_dl_evidence {
    int self;                   /* 1: (b) the waiter held the lock itself */
    int waiter, waiter_thread;  /* who gave up */
    size_t invoke, busy;        /* its acquire-invoke and BUSY */
    int64_t invoke_ns, busy_ns;
    int64_t held_since_ns;      /* (b): when the waiter had taken the lock */
    int owner, owner_thread;    /* (a): whose key stayed; SIM_UNNAMED */
    int stuck;                  /* (a): SIM_STUCK_* */
    size_t stuck_at;            /* (a): the crash or error that left it */
    int64_t stuck_ns;
} sim_dl_evidence;

/* ST: a free lock that a live client waited for, and nobody took. */
typedef struct sim_st_evidence {
    int waiter, waiter_thread;  /* who waited */
    size_t invoke;              /* its acquire-invoke */
    int64_t invoke_ns;
    int64_t from_ns, to_ns;     /* free and waited for: from the later of the
                                 * key's end and the invoke, to the first of
                                 * the next key, the waiter's outcome, its
                                 * crash and the run's end */
    int64_t bound_ns;           /* the bound it went past */
    int taken;                  /* 1: a key ended the stall (someone took it) */
    int dead, dead_thread;      /* a waiter ahead that crashed waiting;
                                 * SIM_NO_CLIENT: none in the history */
    int64_t dead_invoke_ns, dead_crash_ns;
} sim_st_evidence;

/* One anomaly. */
typedef struct sim_episode {
    unsigned kind;       /* SIM_ANOM_ME, SIM_ANOM_MD, SIM_ANOM_DL or SIM_ANOM_ST */
    int64_t at_ns;       /* when it happened: the episodes' order */
    union {
        sim_me_evidence me;
        sim_md_evidence md;
        sim_dl_evidence dl;
        sim_st_evidence st;
    };
} sim_episode;

/* What the observer's stream lacks. */
#define SIM_GAP_NO_CREATION 0 /* an event needed a key, and none was made */
#define SIM_GAP_NO_END 1      /* a key was made over one that never ended */
#define SIM_GAP_NO_KEY 2      /* an acquire-ok whose key was never reported */
#define SIM_GAP_NO_OBSERVER 3 /* acquire-oks, and no key event at all */

typedef struct sim_gap {
    int kind;                 /* SIM_GAP_* */
    size_t at;                /* the event that shows it */
    int64_t at_ns;
} sim_gap;

/* LU, and the plain numbers of the resource when they are known. */
typedef struct sim_damage_evidence {
    int64_t initial, final; /* stock before and after the run */
    int64_t sold;           /* stock-write events */
    int64_t lost;           /* final + sold - initial: sales overwritten */
    int64_t oversold;       /* sold - initial, when positive */
} sim_damage_evidence;

/* A write the resource refused: its token was below the fence, the
 * highest token the resource had seen. */
typedef struct sim_refusal {
    size_t at;                /* the stock-refused event */
    int64_t at_ns;
    int client, thread;       /* whose write it was */
    int64_t token;            /* the token it carried */
    int64_t fence;            /* the highest token the resource had seen */
    int by, by_thread;        /* who had shown it that token first;
                               * SIM_UNNAMED: no access in the history */
    int by_type;              /* SIM_EV_STOCK_READ or SIM_EV_STOCK_WRITE */
    int64_t by_ns;            /* when */
} sim_refusal;

/* Two holders whose accesses to the stock carried the same token, as
 * after a failover that lost the counter's increment. */
typedef struct sim_token_clash {
    int64_t token;
    int a, a_thread;          /* the first to use the token */
    int64_t a_ns;
    int b, b_thread;          /* another thread that used it after a */
    int b_type;               /* its access: SIM_EV_STOCK_READ or _WRITE */
    int64_t b_ns;
} sim_token_clash;

/* One key as the checker sees it, for the report's key lane. */
typedef struct sim_key_span {
    int64_t from_ns, to_ns; /* to_ns INT64_MAX: it outlived the run */
    int64_t ttl_ns;         /* when it got a TTL; INT64_MAX: never */
    int owner;              /* a client; SIM_UNNAMED */
    int node;               /* the node that held it */
} sim_key_span;

/* A stretch of time in which two or more held the lock. */
typedef struct sim_span {
    int64_t from_ns, to_ns;
} sim_span;

typedef struct sim_verdict {
    unsigned anomalies;          /* SIM_ANOM_* bits */
    char why[SIM_WHY_LEN];       /* SIM_ANOM_UNJUDGED: why, in one line */
    sim_episode *episodes;       /* every anomaly, in time order */
    size_t n_episodes;
    sim_gap *gaps;               /* the observer's gaps, in time order */
    size_t n_gaps;
    int unknown_used;            /* evidence rests on an unknown outcome */
    sim_refusal *refusals;       /* writes the resource refused, in time
                                  * order: the fence held */
    size_t n_refusals;
    int token_clash;             /* two holders shared a token: clash */
    sim_token_clash clash;       /* the first such pair in time */
    int stock_known;             /* initial and final were recorded */
    sim_damage_evidence stock;   /* valid when stock_known */
    int64_t start_ns, end_ns;    /* first and last event: the run's span */
    int clients;                 /* highest client seen + 1 */
    int nodes;                   /* the lock's nodes */
    sim_key_span *keys;          /* every key: node 0's in time order, then
                                  * node 1's, ... */
    size_t n_keys;
    sim_span *overlaps;          /* every moment two or more held it */
    size_t n_overlaps;
} sim_verdict;

/* Checks a history sorted by sim_event_order (as sim_history_snapshot
 * and sim_history_load return it). Fills v, which the caller frees with
 * sim_verdict_free, and returns v->anomalies. The stage is unknown, so a
 * release-ok proves nothing about ownership. */
unsigned sim_check(const sim_event *ev, size_t n, sim_verdict *v);

/* The same for a run whose header names its stage (run may be NULL). */
unsigned sim_check_run(const sim_run_info *run, const sim_event *ev,
                       size_t n, sim_verdict *v);

/* Frees what a check allocated; the verdict reads as empty after. */
void sim_verdict_free(sim_verdict *v);

/* sim check's exit status: 0 clean, 1 an anomaly (lost updates included), 2 a
 * history it cannot judge. */
int sim_verdict_status(const sim_verdict *v);

/* How many episodes of one kind, and the first of them (NULL: none). */
size_t sim_verdict_count(const sim_verdict *v, unsigned kind);
const sim_episode *sim_verdict_first(const sim_verdict *v, unsigned kind);

/* 1 when a failpoint event named name ("acquire.after_setnx", matching the
 * detail "<name>=<action>") is in the history; name NULL or "": any. */
int sim_check_failpoint_fired(const sim_event *ev, size_t n, const char *name);

/* A client's name: 0 is "A", 25 "Z", 26 "AA", then "AB", ...; SIM_UNNAMED
 * and other negative numbers "?". Returns buf. */
const char *sim_check_client_name(int client, char *buf, size_t len);

/* "ME", "MD", "DL", "LU", "ST", "?" (unjudged) for one bit; "?" otherwise. */
const char *sim_anomaly_name(unsigned anomaly);

/* A set as the matrix writes it: "ME MD", "DL", "-" when empty. */
void sim_anomaly_format(unsigned set, char *buf, size_t len);

/* The reverse, for answer-key tables: "ME MD" or "-" to bits. Returns 0,
 * or -1 when a word is not an anomaly name. */
int sim_anomaly_parse(const char *text, unsigned *set);

#endif
