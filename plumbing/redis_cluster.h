/* redis_cluster.h: a Redis Cluster seen from a client, written once.
 *
 * A cluster cuts the key space into 16384 slots; each master serves a
 * range of them, and a key lives in the slot of its hash tag: the part
 * of the key between the first '{' and the next '}', when that part is
 * not empty, or the whole key. Keys that share a tag share a slot, so
 * one script may touch them all; a script over keys of two slots fails
 * with CROSSSLOT. Debian's hiredis (0.14) knows nothing of this: the
 * slot map, the routing and the redirects are the client's own job, and
 * this file does it:
 *
 *   the slot map   CLUSTER SLOTS, asked from any node that answers
 *   MOVED slot h:p the slot has a new master for good (a failover, a
 *                  resharding done): ask for the map again, send there
 *   ASK slot h:p   the slot is moving: this one key is on h:p already;
 *                  send ASKING then the command there, once, and keep
 *                  the map as it is
 *
 * A lock needs no more than a provider (redis.h): redis_cluster_provider
 * connects a stage's lock to the master of its key's slot, and the
 * plumbing drops that connection after an I/O error, MOVED or ASK, so
 * the next call asks the provider again, which reads the map anew. That
 * follows MOVED; it cannot follow ASK, which redirects one command, not
 * the connection: while a lock's slot migrates, a call that meets ASK
 * fails (errstr names it) until the migration ends. redis_cluster_command
 * follows both.
 *
 * Errors, hiredis-style: 0 or a pointer, -1 or NULL with one line of
 * reason in the caller's errstr. */
#ifndef DLOCK_REDIS_CLUSTER_H
#define DLOCK_REDIS_CLUSTER_H

#include <pthread.h>
#include <stddef.h>
#include <hiredis/hiredis.h>

#include "redis.h"

#define REDIS_CLUSTER_SLOTS 16384
#define REDIS_CLUSTER_MAX_NODES 16 /* seeds and masters; a test cluster has 6 */
#define REDIS_CLUSTER_HOST_LEN 64

/* Where a master listens. */
typedef struct redis_cluster_addr {
    char host[REDIS_CLUSTER_HOST_LEN];
    int port;
} redis_cluster_addr;

/* A cluster as one client sees it. Threads may share it: the map is
 * read and replaced under mu. */
typedef struct redis_cluster {
    redis_cluster_addr seed[REDIS_CLUSTER_MAX_NODES]; /* whom to ask for the map */
    int seeds;
    const char *password;          /* AUTH on every connection; NULL: none */
    long timeout_ms;               /* connect and command timeout */
    redis_cluster_addr master[REDIS_CLUSTER_MAX_NODES]; /* from the last map */
    int masters;
    unsigned char slot[REDIS_CLUSTER_SLOTS]; /* index into master; 255: unserved */
    int have_map;                  /* 0 until the first CLUSTER SLOTS */
    long refreshes;                /* maps read so far (a test sees MOVED followed) */
    pthread_mutex_t mu;
} redis_cluster;

/* One key's way into the cluster: a lock's provider argument. */
typedef struct redis_cluster_route {
    redis_cluster *cluster;
    int slot;
    int connects;                  /* after the first, each one reads the map
                                    * again: the plumbing only asks again after
                                    * an error, a MOVED or an ASK */
} redis_cluster_route;

/* CRC16 (XMODEM: polynomial 0x1021, initial 0), as Redis computes it. */
unsigned redis_cluster_crc16(const char *buf, size_t len);

/* The slot of key: CRC16 of its hash tag (or of the whole key) mod 16384. */
int redis_cluster_keyslot(const char *key);

/* Seeds the cluster with the nodes at host:port[i], i < n. No I/O. */
void redis_cluster_init(redis_cluster *c, const char *host, const int *port, int n,
                        const char *password, long timeout_ms);
void redis_cluster_destroy(redis_cluster *c);

/* Reads the slot map (CLUSTER SLOTS) from the first seed or known master
 * that answers. */
int redis_cluster_refresh(redis_cluster *c, char *errstr, size_t len);

/* The master that serves slot by the map (read first when there is
 * none). */
int redis_cluster_master_of(redis_cluster *c, int slot, redis_cluster_addr *out,
                            char *errstr, size_t len);

/* A new connection to host:port, with the cluster's timeouts and AUTH. */
redisContext *redis_cluster_connect_addr(redis_cluster *c, const redis_cluster_addr *a,
                                         char *errstr, size_t len);

/* The provider for a lock whose key is route's: set route->cluster and
 * route->slot (redis_cluster_keyslot of the lock's key), then put
 * redis_cluster_provider(route) into the lock's config. */
struct dlock_provider redis_cluster_provider(redis_cluster_route *route);

/* One command about a key of route's slot, sent to the master of that
 * slot over *conn (kept between calls; NULL at first, set here). MOVED: the map is read again
 * and the command sent to the new master, up to a few times; ASK: ASKING
 * and the command go to the node named, once. The reply (an error reply
 * too, CROSSSLOT say), or NULL with errstr after an I/O error, which
 * frees *conn. The caller frees the reply. */
redisReply *redis_cluster_command(redis_cluster_route *route, redisContext **conn,
                                  char *errstr, size_t len, const char *fmt, ...);

#endif
