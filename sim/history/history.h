/* history: the journal of one simulated run.
 *
 * An append-only array of events in shared memory (a file mapped with
 * MAP_SHARED in the run's temp dir), written by every client process, the
 * keyspace observer and the nemesis. Each event is stamped with
 * CLOCK_MONOTONIC, which all processes on the machine share, so events from
 * different processes can be ordered by time. The checker reads only a
 * history, so a history saved to a file can be checked again later.
 *
 * API (see each declaration below for its contract):
 *
 *   int64_t      sim_now_ns(void);
 *   sim_history *sim_history_create(const char *path, char *errstr, size_t len);
 *   sim_history *sim_history_open(const char *path, char *errstr, size_t len);
 *   void         sim_history_close(sim_history *h);
 *   int          sim_history_add(sim_history *h, int client, int thread,
 *                                sim_event_type type, int64_t value,
 *                                const char *detail);
 *   int          sim_history_add_node(sim_history *h, int node,
 *                                     sim_event_type type, int64_t value,
 *                                     const char *detail);
 *   int          sim_history_add_link(sim_history *h, int client, int node,
 *                                     sim_event_type type, int64_t value,
 *                                     const char *detail);
 *   int          sim_history_add_node_at(sim_history *h, int64_t t_ns, int node,
 *                                        sim_event_type type, int64_t value,
 *                                        const char *detail);
 *   int          sim_history_add_node_token_at(sim_history *h, int64_t t_ns,
 *                                              int node, sim_event_type type,
 *                                              int64_t value, int64_t token,
 *                                              const char *detail);
 *   int          sim_history_add_token(sim_history *h, int client,
 *                                      int thread, sim_event_type type,
 *                                      int64_t value, int64_t token,
 *                                      const char *detail);
 *   int          sim_history_add_invoke(sim_history *h, int client,
 *                                       int thread, int64_t wait_ms,
 *                                       int64_t lease_ms);
 *   long         sim_history_lease_of(const sim_event *ev, size_t n,
 *                                     int client);
 *   sim_event   *sim_history_snapshot(const sim_history *h, size_t *n);
 *   int          sim_event_order(const sim_event *a, const sim_event *b);
 *   int          sim_history_sort(sim_event *ev, size_t n);
 *   const char  *sim_event_type_name(sim_event_type type);
 *   int          sim_event_type_parse(const char *name);
 *   int          sim_key_event_kind(const char *detail);
 *
 * Saving and loading the JSON-lines file: history_file.c, declared below.
 *
 * Times: a live history stamps absolute CLOCK_MONOTONIC ns and keeps the
 * run's start in h->t0_ns. A loaded history comes back with times relative
 * to the run's start, so its t0 is 0: pass 0 wherever a t0_ns is asked.
 *
 * Order: every array of events this module hands out (a snapshot, a
 * loaded file) is sorted by sim_event_order: by time, and for events
 * stamped in the same nanosecond by a fixed rule (see there), never by the
 * order they were written in. So a file whose lines were shuffled loads
 * as the same history. */
#ifndef SIM_HISTORY_H
#define SIM_HISTORY_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define SIM_HISTORY_MAX 65536  /* events per run: a run makes a few thousand */
#define SIM_DETAIL_LEN 128     /* room for a key event, failpoint or step name,
                                * and a lock's whole error line (v8's name
                                * nodes): DLOCK_ERRSTR_LEN in lock.h */
#define SIM_NO_CLIENT (-1)     /* the event comes from the observer or nemesis */
#define SIM_NAME_LEN 32        /* a stage or scenario name */
#define SIM_WHAT_LEN 128       /* a scenario's one-line statement */
#define SIM_HISTORY_NODES_MAX 64 /* nodes a saved history may name */
#define SIM_HISTORY_VERSION 3  /* the saved file's format: 3 adds "node" to
                                * events and "nodes" to the header, 2 added
                                * "version"; 1 and 2 still load (one node).
                                * An acquire-invoke's "lease_ms" came later
                                * without a new version: a reader that
                                * does not know it loses only the words
                                * about a client's own lease */

typedef enum sim_event_type {
    /* A client's operations, Jepsen-style: invoke, then one outcome. */
    SIM_EV_ACQUIRE_INVOKE,
    SIM_EV_ACQUIRE_OK,
    SIM_EV_ACQUIRE_BUSY,      /* wait budget spent */
    SIM_EV_ACQUIRE_ERROR,     /* outcome unknown: detail says why */
    SIM_EV_CS_ENTER,          /* workload: critical section begins */
    SIM_EV_CS_EXIT,
    SIM_EV_RELEASE_INVOKE,
    SIM_EV_RELEASE_OK,
    SIM_EV_RELEASE_NOT_OWNER,
    SIM_EV_RELEASE_ERROR,     /* outcome unknown: detail says why */
    /* The resource: value is the stock the client read or wrote; token
     * the fencing token it sent along (stages that draw tokens). */
    SIM_EV_STOCK_READ,
    SIM_EV_STOCK_WRITE,       /* a sale: the client wrote read - 1 */
    SIM_EV_STOCK_REFUSED,     /* no sale: the resource refused the write,
                               * its token was below the highest the
                               * resource had seen; value: that highest */
    /* Faults, recorded by the nemesis (or the failpoint that fired). */
    SIM_EV_CRASH,             /* the client process was SIGKILLed */
    SIM_EV_PAUSE_BEGIN,       /* value: planned pause in ms */
    SIM_EV_PAUSE_END,
    SIM_EV_FAILPOINT,         /* detail: "<name>=<action>" */
    SIM_EV_FAILOVER,          /* detail: the step; value: new primary port.
                               * The step "promote" tells the checker the
                               * lock key was lost with the old primary. */
    SIM_EV_NODE_DOWN,         /* a node was killed, and stays down until it
                               * restarts; value: its port */
    SIM_EV_RESTART,           /* a node came back empty (no persistence):
                               * the key it held is gone; value: its port */
    SIM_EV_CUT_BEGIN,         /* the client is cut off from a node: what it
                               * sends there and what it would get back are
                               * dropped, its connections stay open; value:
                               * the planned length in ms, 0 unknown */
    SIM_EV_CUT_END,           /* the client's link to that node is back */
    SIM_EV_CLOCK_JUMP,        /* a node's wall clock jumped forward by value
                               * ms: its keys' TTLs ran that much shorter */
    /* The observer: a keyspace event on the lock key, stamped on arrival.
     * detail: set, expire, del, expired, hset, hincrby, ...; of a
     * ZooKeeper lock: create, first, delete, expired, and of its queue
     * (v11): queued, left, gone; token: the node's sequence number */
    SIM_EV_KEY,
    /* Bookkeeping by the simulator. value: the stock. */
    SIM_EV_STOCK_INITIAL,
    SIM_EV_STOCK_FINAL,
    SIM_EV_TYPE_COUNT
} sim_event_type;

typedef struct sim_event {
    int64_t t_ns;                 /* CLOCK_MONOTONIC when it happened */
    int32_t client;               /* 0 = A, 1 = B, ...; SIM_NO_CLIENT */
    int32_t thread;               /* thread within the client; 0 = main */
    int32_t type;                 /* a sim_event_type */
    int32_t node;                 /* the node of the lock a key event or a
                                   * node's fault is about; 0 when it has one */
    int64_t value;                /* stock, pause ms, port: see the type */
    int64_t token;                /* the fencing token of a client's step
                                   * (acquire-ok: the one it drew); 0: none */
    int64_t lease_ms;             /* acquire-invoke: the lease the client
                                   * asked for, which a scenario may set
                                   * apart from the run's; 0: not recorded */
    char detail[SIM_DETAIL_LEN];  /* words for the report, "" if none */
} sim_event;

/* The mapped region. Writers reserve a slot with an atomic counter, fill
 * it, then publish it by setting its flag, so a reader never sees half an
 * event. */
typedef struct sim_history {
    int64_t t0_ns;                        /* start of the run */
    atomic_uint reserved;                 /* slots handed out */
    atomic_uchar ready[SIM_HISTORY_MAX];  /* slot i is filled */
    sim_event ev[SIM_HISTORY_MAX];
} sim_history;

/* What a run was: the first line of a saved history, so that a file checked
 * again later gets the same title and the same "fault not reachable" note.
 * Zero-filled means unknown. */
typedef struct sim_run_info {
    char stage[SIM_NAME_LEN];           /* "v3-set-nx-px" */
    char scenario[SIM_NAME_LEN];        /* "slow-holder" */
    char what[SIM_WHAT_LEN];            /* the scenario's one-line statement */
    char failpoint[SIM_DETAIL_LEN];     /* failpoint armed, "" when none */
    long lease_ms;                      /* the lease the stage was given */
    unsigned long seed;                 /* the run's random seed */
    int clients;                        /* simulated client processes */
    int nodes;                          /* the lock's independent masters;
                                         * 0 (unknown) is one */
} sim_run_info;

/* The current CLOCK_MONOTONIC time in ns. */
int64_t sim_now_ns(void);

/* Creates the file at path, maps it shared and stamps t0. NULL on error
 * with a reason in errstr. */
sim_history *sim_history_create(const char *path, char *errstr, size_t len);

/* Maps an existing history file (in a client process). */
sim_history *sim_history_open(const char *path, char *errstr, size_t len);

/* Unmaps the history (the file stays). NULL is ok. */
void sim_history_close(sim_history *h);

/* Appends one event stamped now. Safe from any process and thread.
 * detail may be NULL; a longer one is cut to SIM_DETAIL_LEN - 1 bytes,
 * the last three "...".
 * Returns 0, or -1 when the history is full. */
int sim_history_add(sim_history *h, int client, int thread,
                    sim_event_type type, int64_t value, const char *detail);

/* The same for an event about one node of the lock, from the observer or
 * the nemesis (client SIM_NO_CLIENT). */
int sim_history_add_node(sim_history *h, int node, sim_event_type type,
                         int64_t value, const char *detail);

/* The same for an event about a client's link to one node (a cut: the
 * nemesis records it with the client's number and the node's). */
int sim_history_add_link(sim_history *h, int client, int node,
                         sim_event_type type, int64_t value, const char *detail);

/* The same, stamped t_ns (sim_now_ns's clock) rather than now: for what
 * the observer saw at t_ns and could only name later (a snapshot sorts
 * the events by time). */
int sim_history_add_node_at(sim_history *h, int64_t t_ns, int node, sim_event_type type,
                            int64_t value, const char *detail);

/* The same with a token: of a ZooKeeper lock's node (v11's key events),
 * its sequence number, so that a waiter's "queued" and the "first" of
 * the same node can be told apart from the others' (the first node of a
 * lock is number 0). */
int sim_history_add_node_token_at(sim_history *h, int64_t t_ns, int node,
                                  sim_event_type type, int64_t value, int64_t token,
                                  const char *detail);

/* The same for a step that carried a fencing token (0: none). */
int sim_history_add_token(sim_history *h, int client, int thread,
                          sim_event_type type, int64_t value, int64_t token,
                          const char *detail);

/* An acquire-invoke: value the wait budget, lease_ms the lease asked for. */
int sim_history_add_invoke(sim_history *h, int client, int thread,
                           int64_t wait_ms, int64_t lease_ms);

/* The lease client asked for on its first acquire that recorded one, in
 * ms; 0 when none did (a history saved before leases were recorded). */
long sim_history_lease_of(const sim_event *ev, size_t n, int client);

/* Copies the published events, sorted by sim_event_order, into a new
 * array; *n gets their count. The caller frees the array. NULL only when
 * out of memory. */
sim_event *sim_history_snapshot(const sim_history *h, size_t *n);

/* The history's order, as a comparison (<0, 0, >0): by time; events
 * stamped in the same nanosecond by a rank that follows one thread's life
 * (acquire-invoke, its outcome, cs-enter, stock-read, stock-write or
 * stock-refused, cs-exit, release-invoke, its outcome, failpoint, pause,
 * crash), then key events (a write, a TTL change, an end, a queue's:
 * sim_key_event_kind), then the nemesis's and the simulator's; then by
 * client, thread, node, type, value, token and detail. A total order
 * that never looks at where an event came from. */
int sim_event_order(const sim_event *a, const sim_event *b);

/* Sorts ev by sim_event_order. 0, or -1 when out of memory (ev is then
 * unchanged). */
int sim_history_sort(sim_event *ev, size_t n);

/* "acquire-ok", "key", ...: the names used in saved files and reports. */
const char *sim_event_type_name(sim_event_type type);
int sim_event_type_parse(const char *name); /* -1 when unknown */

/* What a keyspace event (a key event's detail) does to the lock key. */
#define SIM_KEY_WRITE 0    /* set, hset, hincrby, create...: creates or changes it */
#define SIM_KEY_TTL 1      /* expire, persist: sets or drops its TTL */
#define SIM_KEY_END 2      /* del, delete, expired, evicted: it is gone */
#define SIM_KEY_QUEUE 3    /* queued, left, gone: a waiter's node, not the key */
int sim_key_event_kind(const char *detail); /* -1: not a word we know */

/* ---- the file (history_file.c) ------------------------------------------
 *
 * JSON lines: an optional first line describing the run,
 *   {"lockstep":"run","version":3,"stage":...,"clients":3,"nodes":1}
 * then one object per event,
 *   {"t_ms":1.5,"t_ns":1500000,"client":0,"thread":0,"type":"acquire-ok",
 *    "node":0,"value":0,"detail":""}
 * with "token" after "value" where the step carried a fencing token, or
 * a ZooKeeper node's key event its sequence number (but the first, 0).
 * A file of an earlier format has no "node": every event is node 0's.
 * Reading takes any valid JSON: keys in any order, keys it does not know
 * (of any value), any escape; it refuses a duplicate key, a number that is
 * not an exact integer where one is needed, and a header of a newer
 * format. */

/* Writes events as JSON lines: one object per event, times in ns (and, for
 * a reader, in ms) from t0. Returns 0, or -1 with errstr. */
int sim_history_save(const char *path, const sim_event *ev, size_t n,
                     int64_t t0_ns, char *errstr, size_t len);

/* The same, preceded by one header line describing the run. */
int sim_history_save_run(const char *path, const sim_run_info *run,
                         const sim_event *ev, size_t n, int64_t t0_ns,
                         char *errstr, size_t len);

/* Reads a file written by sim_history_save. Returns a new array sorted by
 * sim_event_order (times relative to the run's start), or NULL with
 * errstr naming the file and line that could not be read, in one line:
 * "h.jsonl:7: unknown event type "foo"". An empty file is an error; a
 * header without events loads as 0 events (the checker refuses those). */
sim_event *sim_history_load(const char *path, size_t *n, char *errstr,
                            size_t len);

/* The same, filling run from the header line (zeroes when the file has
 * none). run may be NULL. */
sim_event *sim_history_load_run(const char *path, sim_run_info *run,
                                size_t *n, char *errstr, size_t len);

#endif
