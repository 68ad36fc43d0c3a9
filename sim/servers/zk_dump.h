/* zk_dump: whether a ZooKeeper server's answer to the four-letter word
 * `dump` lists a session. The observer asks it when a holder's node goes,
 * to tell a release (the session is open) from a session that ended. It
 * never talks to a server (zk_observer.c asks) and never prints.
 *
 * The answer's first part is the server's session tracker:
 *
 *   a leader, or a server alone:
 *     SessionTracker dump:
 *     Session Sets (<buckets>)/(<sessions>):
 *     <n> expire at <date>:
 *     <TAB>0x<session>            (n lines, one per session in the bucket)
 *     ...
 *   a follower:
 *     SessionTracker dump:
 *     Global Sessions(<sessions>):
 *     0x<session><TAB><timeout>ms
 *
 * then "ephemeral nodes dump:", whose sessions are not open ones.
 *
 * A leader prints its buckets without the tracker's lock: a session
 * touched meanwhile (each request and ping moves it to a later bucket)
 * can go from a bucket not printed yet to one already printed, or to one
 * the dump never knew, and is left out. Under load that happened once in
 * every few runs: "Session Sets (12)/(3)" with one session listed. The
 * header's second count is how many sessions the tracker holds, so a
 * dump that lists fewer (or more) is torn, and says nothing about the
 * sessions it left out. A follower's list is a copy: never torn. */
#ifndef SIM_ZK_DUMP_H
#define SIM_ZK_DUMP_H

#include <stdint.h>

/* 1 when the dump lists session as open; 0 when a whole dump does not
 * list it; -1 when it is torn (ask again) or not a dump at all. */
int sim_zk_dump_lists(const char *dump, int64_t session);

#endif
