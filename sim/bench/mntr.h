/* mntr: what a ZooKeeper server counted, read from its answer to the
 * four-letter word `mntr` (one "zk_<name>\t<value>" line per metric),
 * and what the clients did between two readings. The bench's ZooKeeper
 * counterpart of Redis's SLOWLOG and INFO commandstats; it never talks
 * to a server (bench_zk.c asks) and never prints.
 *
 * From ZooKeeper 3.6 on, a server counts:
 *
 *   zk_packets_received          every packet read from a client
 *                                connection: each request, a session's
 *                                open and close, a ping, and each
 *                                four-letter word (ours too)
 *   zk_connection_request_count  the sessions opened through it
 *   zk_sum_node_<kind>_watch_count
 *                                the watches it triggered, summed over
 *                                the events that triggered any, for each
 *                                kind of event (created, deleted,
 *                                changed, children): each one a
 *                                notification sent to a client
 *
 * Every counter only grows while the server runs; a server restarted in
 * between starts again from 0, and the difference says so.
 *
 * Errors, hiredis-style: 0 or -1 with one line of reason in errstr. */
#ifndef SIM_MNTR_H
#define SIM_MNTR_H

#include <stddef.h>

/* One server's counters, or their sum over the servers of an ensemble. */
typedef struct sim_mntr {
    long long packets;  /* zk_packets_received */
    long long sessions; /* zk_connection_request_count */
    long long watches;  /* the four zk_sum_node_*_watch_count together */
    long long asked;    /* four-letter words we sent, as the asker counts
                         * them: each one is a packet too */
} sim_mntr;

/* What the clients did between two readings. */
typedef struct sim_mntr_delta {
    long long requests; /* packets but ours, the sessions' opens and their
                         * closes: the clients' requests (pings included) */
    long long sessions; /* sessions opened */
    long long watches;  /* watch notifications sent */
} sim_mntr_delta;

/* The value of metric key ("zk_version") in an mntr answer, into out
 * (cut to outlen - 1). 0, or -1 when no line names it. */
int sim_mntr_value(const char *text, const char *key, char *out, size_t outlen);

/* The counters of one answer into *m (m->asked untouched). 0, or -1 with
 * errstr naming the metric that is missing or not a count. */
int sim_mntr_parse(const char *text, sim_mntr *m, char *errstr, size_t len);

/* Adds one server's counters to a sum. */
void sim_mntr_add(sim_mntr *sum, const sim_mntr *one);

/* after - before, when every session opened in between was closed again
 * before after was read (the clients exited): each session costs one
 * open and one close packet, and each word we asked one packet. 0, or -1
 * with errstr when a counter went back (a server restarted) or the
 * packets do not cover what is subtracted. */
int sim_mntr_delta_of(const sim_mntr *before, const sim_mntr *after, sim_mntr_delta *d,
                      char *errstr, size_t len);

#endif
