/* checker: reads a history and returns a verdict with its evidence.
 *
 * Jepsen's checker: it never talks to Redis and never prints; it only
 * replays the events of a history (sorted by time, as sim_history_snapshot
 * and sim_history_load return them), so a saved run can be checked again.
 *
 * API:
 *
 *   unsigned    sim_check(const sim_event *ev, size_t n, sim_verdict *v);
 *   void        sim_check_key_trace(const sim_event *ev, size_t n,
 *                                   sim_key_state *out);
 *   void        sim_check_holders_trace(const sim_event *ev, size_t n,
 *                                       int *out);
 *   int         sim_check_failpoint_fired(const sim_event *ev, size_t n,
 *                                         const char *name);
 *   const char *sim_anomaly_name(unsigned anomaly);
 *   void        sim_anomaly_format(unsigned set, char *buf, size_t len);
 *   int         sim_anomaly_parse(const char *text, unsigned *set);
 *
 * The rules:
 *
 * ME  mutual exclusion lost: two holders' hold intervals overlap. A hold
 *     runs from acquire-ok to release-invoke, to the holder's crash, or to
 *     the end of the run. A holder is a client and thread; a thread that
 *     acquires again while holding nests (a depth count) and its hold ends
 *     at its outermost release-invoke.
 * MD  lock deleted by a non-owner: a "del" key event ends the key's
 *     incarnation while its owner still holds (has not invoked a release)
 *     and the deleter is someone else. An incarnation begins with a
 *     creation event ("set"; "hset" or "hincrby" on an absent key) and ends
 *     with "del", "expired", or a failover step "promote" (the new primary
 *     never had it). Its owner is matched to it first-in first-out among
 *     first-level acquire-oks, so the observer's lag cannot blame a holder
 *     for a delete that happened before its key existed; a key created
 *     during an acquire that then failed or crashed (outcome unknown) is
 *     that client's. The deleter is the client whose release is in
 *     flight, or else whose release returned last (the observer heard the
 *     del late). The intruder is the first holder other than the owner
 *     whose acquire-ok follows the del while the owner still holds (or
 *     precedes it, with no key of its own reported yet: its key can only
 *     have come after the del, which the observer heard late).
 * DL  deadlock: an acquire ended BUSY while (a) the key existed without a
 *     TTL (no "expire" after its creation), no live client held it, and a
 *     client had crashed holding it or in the middle of its acquire; or
 *     (b) the waiting client and thread itself held the lock.
 * DAMAGE  from stock-initial, stock-final and the count of stock-write
 *     events (sales): final + sold != initial is lost updates, sold >
 *     initial is overselling. No verdict without initial and final.
 *
 * The fault matrix shows only ME, MD and DL (SIM_ANOM_CELLS); DAMAGE is
 * evidence that the numbers went wrong too. */
#ifndef SIM_CHECKER_H
#define SIM_CHECKER_H

#include <stddef.h>
#include <stdint.h>

#include "history.h"

/* Anomalies, as bits of a set. */
#define SIM_ANOM_ME 1u      /* mutual exclusion lost */
#define SIM_ANOM_MD 2u      /* lock deleted by a non-owner */
#define SIM_ANOM_DL 4u      /* deadlock */
#define SIM_ANOM_DAMAGE 8u  /* lost updates or overselling */
#define SIM_ANOM_CELLS (SIM_ANOM_ME | SIM_ANOM_MD | SIM_ANOM_DL)

/* Clients are letters and threads few: events outside these ranges are
 * counted in sim_verdict.ignored and otherwise skipped. */
#define SIM_CHECK_MAX_CLIENTS 26
#define SIM_CHECK_MAX_THREADS 16

#define SIM_KEY_UNKNOWN (-2)  /* the key exists; its creator has not said so */

/* ME: the first moment two holders held the lock at once. */
typedef struct sim_me_evidence {
    int a, a_thread;        /* the holder that was inside first */
    int b, b_thread;        /* the holder that entered while a held */
    size_t a_ok, b_ok;      /* indices of their acquire-ok events */
    int64_t a_since_ns;     /* when a took the lock */
    int64_t from_ns, to_ns; /* the overlap: b's entry to the first exit */
} sim_me_evidence;

/* MD: the first delete of a key whose owner still held it, and who got
 * in through the hole it left. */
typedef struct sim_md_evidence {
    size_t del;                   /* index of the "del" key event */
    int64_t at_ns;                /* its time */
    int deleter, deleter_thread;  /* SIM_NO_CLIENT: no release was seen */
    int deleter_in_flight;        /* 1: its release had not returned yet */
    int owner, owner_thread;      /* whose lock it was */
    size_t owner_ok;              /* the owner's acquire-ok */
    int64_t owner_since_ns;       /* its time */
    int intruder, intruder_thread; /* the first other holder to take the
                                    * lock after the del while the owner
                                    * still held; SIM_NO_CLIENT: nobody */
    size_t intruder_ok;           /* its acquire-ok */
    int64_t intruder_ns;          /* its time */
} sim_md_evidence;

/* DL: the first acquire that gave up for a reason that cannot pass. */
typedef struct sim_dl_evidence {
    int self;                   /* 1: (b) the waiter held the lock itself */
    int waiter, waiter_thread;  /* who gave up */
    size_t invoke, busy;        /* indices of its acquire-invoke and BUSY */
    int64_t invoke_ns, busy_ns;
    int64_t held_since_ns;      /* (b): when the waiter had taken the lock */
    int crashed;                /* (a): whose key stayed; else SIM_NO_CLIENT */
    int crashed_acquiring;      /* (a): it crashed inside its acquire */
    size_t crash;               /* (a): index of its crash event */
    int64_t crash_ns;
} sim_dl_evidence;

/* DAMAGE, and the plain numbers of the resource when they are known. */
typedef struct sim_damage_evidence {
    int64_t initial, final; /* stock before and after the run */
    int64_t sold;           /* stock-write events */
    int64_t lost;           /* final + sold - initial: sales overwritten */
    int64_t oversold;       /* sold - initial, when positive */
} sim_damage_evidence;

typedef struct sim_verdict {
    unsigned anomalies;          /* SIM_ANOM_* bits */
    sim_me_evidence me;          /* valid when SIM_ANOM_ME is set */
    sim_md_evidence md;          /* valid when SIM_ANOM_MD is set */
    sim_dl_evidence dl;          /* valid when SIM_ANOM_DL is set */
    int stock_known;             /* initial and final were recorded */
    sim_damage_evidence stock;   /* valid when stock_known */
    int64_t start_ns, end_ns;    /* first and last event: the run's span */
    int clients;                 /* highest client seen + 1 */
    size_t ignored;              /* events with a client or thread out of range */
} sim_verdict;

/* The lock key as the checker sees it after one event. */
typedef struct sim_key_state {
    int present;       /* an incarnation exists */
    int ttl;           /* it has a time to live */
    int owner;         /* its owner, SIM_KEY_UNKNOWN, or SIM_NO_CLIENT */
    int owner_thread;
} sim_key_state;

/* Checks a history sorted by time. Fills v and returns v->anomalies. */
unsigned sim_check(const sim_event *ev, size_t n, sim_verdict *v);

/* The key's state after each event, as the checker tracks it: out must
 * hold n entries. The report draws the key's lane from it. */
void sim_check_key_trace(const sim_event *ev, size_t n, sim_key_state *out);

/* How many holders held the lock after each event, by ME's rule (a paused
 * holder still holds): out must hold n entries. The report marks every
 * moment two or more held it, not only ME's first overlap. */
void sim_check_holders_trace(const sim_event *ev, size_t n, int *out);

/* 1 when a failpoint event named name ("acquire.after_setnx", matching the
 * detail "<name>=<action>") is in the history; name NULL or "": any. */
int sim_check_failpoint_fired(const sim_event *ev, size_t n, const char *name);

/* "ME", "MD", "DL", "DAMAGE" for one bit; "?" otherwise. */
const char *sim_anomaly_name(unsigned anomaly);

/* A set as the matrix writes it: "ME MD", "DL", "-" when empty. */
void sim_anomaly_format(unsigned set, char *buf, size_t len);

/* The reverse, for answer-key tables: "ME MD" or "-" to bits. Returns 0,
 * or -1 when a word is not an anomaly name. */
int sim_anomaly_parse(const char *text, unsigned *set);

#endif
