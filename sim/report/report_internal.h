/* report_internal: what the report's files share; nothing else includes
 * it.
 *
 *   report.c           a run: its title, its verdict in sentences, the
 *                      observer's gaps, one line for a failed test
 *   report_say.c       the sentences: one per episode, long for a run and
 *                      short for the matrix, and the stock's numbers
 *   report_story.c     a run's story: the episodes and the release
 *                      results that matter, in time order
 *   report_nodes.c     a lock of several nodes: each node's fault, and
 *                      who held which nodes when the story turned
 *   report_links.c     a client cut off from the lock's servers
 *   report_timeline.c  the ASCII timeline's lanes
 *   report_legend.c    the legend under them (report_timeline.h)
 *   report_matrix.c    the fault matrix and its evidence */
#ifndef SIM_REPORT_INTERNAL_H
#define SIM_REPORT_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "report.h"

#define SIM_REPORT_WIDTH 72     /* a run's lines */
#define SIM_REPORT_NAME 32      /* "B:1", "AB:12" */

/* "B", or "B:1" for a thread other than the main one; "?" unnamed. */
const char *sim_report_who(char *buf, size_t len, int client, int thread);

/* snprintf into a buffer where a long sentence may be cut: the cut is
 * expected, so the compiler need not warn about it. */
void sim_report_put(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ms from t0. */
long sim_report_ms(int64_t t_ns, int64_t t0_ns);

/* Prints text from column at on (the caller is there already), wrapping
 * at width; a continued line starts at column hang. */
void sim_report_wrapped(FILE *out, const char *text, int at, int hang,
                        int width);

/* One line without trailing blanks. */
void sim_report_trimmed(FILE *out, const char *text);

/* An episode in words: long (a run's verdict) or short (the matrix, names
 * as letters). ev is the history (the reasoning about an unknown outcome
 * names the events it rests on); it may be NULL. */
void sim_report_say(char *buf, size_t len, const sim_episode *e,
                    const sim_event *ev, int64_t t0_ns);
void sim_report_brief(char *buf, size_t len, const sim_episode *e,
                      int64_t t0_ns);

/* "mutual exclusion lost", ... for an episode's kind; and its plural
 * for "and 3 more foreign deletes like these". */
const char *sim_report_heading(unsigned kind);
const char *sim_report_plural(unsigned kind);

/* "stock 100 -> 98 after 3 sales: 1 update lost"; with "and 1 refused
 * write" after the sales when the resource refused any. */
void sim_report_stock(char *buf, size_t len, const sim_verdict *v);

/* A write the resource refused, in words: long (a run's verdict) or
 * short (the matrix). */
void sim_report_refusal(char *buf, size_t len, const sim_refusal *r,
                        int64_t t0_ns);
void sim_report_refusal_brief(char *buf, size_t len, const sim_refusal *r,
                              int64_t t0_ns);

/* Two holders with one token, in words: long and short. */
void sim_report_clash(char *buf, size_t len, const sim_token_clash *k,
                      int64_t t0_ns);
void sim_report_clash_brief(char *buf, size_t len, const sim_token_clash *k,
                            int64_t t0_ns);

/* A node's fault (it went down, restarted empty, failed over, or its
 * clock jumped), in words: "node 0 restarted empty at 140 ms and lost
 * A's key", "node 2's clock jumped 600 ms forward at 120 ms; A's key
 * there expired at 125 ms", and 1; 0 when e is no such fault. A lock of
 * one server says "the primary" (a failover) or "the server" for node
 * 0. ev (n events) is the history e is in. */
int sim_report_node_fault(char *buf, size_t len, const sim_verdict *v,
                          const sim_event *ev, size_t n, const sim_event *e,
                          int64_t t0_ns);

/* A client cut off from the lock's servers, told where event i (the
 * first cut-begin of a cut) is: "A was cut off from the lock's servers
 * at 30 ms, for 900 ms; its key expired at 300 ms while A was inside",
 * and 1; 0 when event i begins no cut. A cut that leaves the client's
 * key in place names who waited through it. */
int sim_report_cut(char *buf, size_t len, const sim_verdict *v, const sim_event *ev,
                   size_t n, size_t i, int64_t t0_ns);

/* 1 when the key that ended at t on node ended as how says ("expired",
 * "del": the key event stamped then). */
int sim_report_key_ended(const sim_event *ev, size_t n, int node, int64_t t,
                         const char *how);

/* Who held which nodes when the story turned (the first time two held
 * the lock, or else the first time a waiter gave up): "at 260 ms, B's
 * key was on nodes 0, 3 and 4, a majority; A's on nodes 1 and 2", that
 * moment in *at_ns, and 1; 0 when there is no such moment or the lock
 * has one node. */
int sim_report_majority(char *buf, size_t len, const sim_verdict *v,
                        const sim_event *ev, size_t n, int64_t t0_ns,
                        int64_t *at_ns);

/* The clients whose own lease (recorded on their acquire-invoke) is not
 * the run's lease_ms: "A's own lease is 3600 ms, 12 times the run's 300
 * ms; B's is 1200 ms, 4 times", or "every client's own lease is 3600
 * ms, 12 times the run's 300 ms" when they all share one, and 1; "" and
 * 0 when every client's is the run's, or none was recorded. */
int sim_report_leases(char *buf, size_t len, const sim_event *ev, size_t n,
                      long lease_ms);

/* What a token of a stage whose lock lives in a ZooKeeper ensemble is
 * (stage: its folder, as the run's header names it): its node's czxid,
 * read apart on the first holder's, "A's 4294967302 is epoch 1, change
 * 6"; and 1. "" and 0 for any other stage, or a run where no holder
 * drew one. */
int sim_report_tokens(char *buf, size_t len, const char *stage, const sim_event *ev,
                      size_t n);

/* A gap in the observer's stream, in words. */
void sim_report_gap(char *buf, size_t len, const sim_gap *g,
                    const sim_event *ev, int64_t t0_ns);

#endif
