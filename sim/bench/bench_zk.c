/* bench_zk: the bench's ZooKeeper side: the ensemble, what its servers
 * counted (mntr.h), and a stage's requests replayed on one session of
 * the C client. See bench.h. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include "bench.h"
#include "history.h"
#include "util.h"

#define MNTR_LEN 65536   /* a 3.8 server's answer is about 17 KB */
#define MNTR_TRIES 5     /* each try waits a few hundred ms: a busy JVM may miss one */
#define ROOT "/lockstep" /* the stages' parent node, as their lock.c names it */
#define CHILD_PREFIX "_c_" /* v11's child: _c_<uuid>-lock-<sequence> (Curator's) */
#define UUID_TEXT "00000000-0000-4000-8000-000000000000" /* as long as a drawn one */
#define CONNECT_POLL_MS 1

int sim_bench_zookeeper(int stage)
{
    const sim_stage *s = sim_stage_get(stage);

    return s != NULL && strcmp(s->server, "zookeeper") == 0;
}

/* ---- the ensemble ------------------------------------------------------------ */

/* Node i's counters, asked again when a try gets no whole answer. */
static int ask_node(sim_bench *b, int i, char *text, sim_mntr *one, char *errstr,
                    size_t len)
{
    int tries, port = b->ens.port + i;

    for (tries = 0; tries < MNTR_TRIES; tries++) {
        b->zk_asked++; /* sent, so counted by the server, even when no answer comes */
        if (sim_ensemble_ask(port, "mntr", text, MNTR_LEN) != 0)
            continue;
        if (strlen(text) + 1 >= MNTR_LEN)
            return sim_error(errstr, len, "ZooKeeper node %d's mntr answer is longer than "
                             "%d bytes", i, MNTR_LEN);
        return sim_mntr_parse(text, one, errstr, len);
    }
    return sim_error(errstr, len, "ZooKeeper node %d (port %d) did not answer mntr %d times",
                     i, port, MNTR_TRIES);
}

int sim_bench_zk_counts(sim_bench *b, sim_mntr *sum, char *errstr, size_t len)
{
    char *text = malloc(MNTR_LEN);
    int i, rc = 0;

    if (text == NULL)
        return sim_error(errstr, len, "out of memory for an mntr answer");
    memset(sum, 0, sizeof(*sum));
    for (i = 0; i < b->ens.nodes && rc == 0; i++) {
        sim_mntr one = { 0, 0, 0, 0 };

        rc = ask_node(b, i, text, &one, errstr, len);
        sim_mntr_add(sum, &one);
    }
    sum->asked = b->zk_asked;
    free(text);
    return rc;
}

/* The most servers a ZooKeeper stage measured talks to; 0 for none. */
static int nodes_needed(const sim_bench *b)
{
    int s, n = 0;

    for (s = 1; s <= SIM_STAGES; s++) {
        if (sim_bench_wanted(b, s) && sim_bench_zookeeper(s) && sim_stage_get(s)->masters > n)
            n = sim_stage_get(s)->masters;
    }
    return n;
}

/* The server's version, as its zk_version says it: "3.8.0". */
static int read_version(sim_bench *b, char *errstr, size_t len)
{
    char *text = malloc(MNTR_LEN), value[64];
    int rc = -1;

    if (text == NULL)
        return sim_error(errstr, len, "out of memory for an mntr answer");
    b->zk_asked++;
    if (sim_ensemble_ask(b->ens.port + b->zk_follower, "mntr", text, MNTR_LEN) == 0 &&
        sim_mntr_value(text, "zk_version", value, sizeof(value)) == 0) {
        value[strcspn(value, "-, ")] = '\0';
        snprintf(b->zk_version, sizeof(b->zk_version), "%.*s",
                 (int)sizeof(b->zk_version) - 1, value);
        rc = 0;
    } else {
        sim_error(errstr, len, "ZooKeeper node %d did not say its version (mntr)",
                  b->zk_follower);
    }
    free(text);
    return rc;
}

int sim_bench_zk_start(sim_bench *b, char *errstr, size_t len)
{
    int nodes = nodes_needed(b), leader;

    if (nodes == 0)
        return 0;
    if (nodes < 2)
        return sim_error(errstr, len, "a ZooKeeper stage of %d server: the bench needs a "
                         "follower", nodes);
    if (sim_ensemble_start(&b->ens, b->cl.dir, nodes, errstr, len) != 0)
        return -1;
    /* Their pings would count as the stages' requests. */
    sim_ensemble_waker_stop(&b->ens);
    if ((leader = sim_ensemble_leader(&b->ens)) < 0)
        return sim_error(errstr, len, "the ZooKeeper ensemble on ports %d-%d has no leader",
                         b->ens.port, b->ens.port + nodes - 1);
    /* The uncontended client and the replay talk to one follower, as two
     * clients in three of an ensemble of three do. */
    b->zk_follower = leader == 0 ? 1 : 0;
    return read_version(b, errstr, len);
}

void sim_bench_zk_stop(sim_bench *b)
{
    sim_ensemble_stop(&b->ens);
}

/* ---- a stage's requests --------------------------------------------------------- */

/* One request of a pair: ZooKeeper's name of it, and its path. */
static int add_request(sim_bench_pair *t, const char *op, const char *path, char *errstr,
                       size_t len)
{
    sim_bench_command *c = &t->cmd[t->n];

    if ((c->argv[0] = strdup(op)) == NULL || (c->argv[1] = strdup(path)) == NULL) {
        free(c->argv[0]);
        c->argv[0] = NULL;
        return sim_error(errstr, len, "out of memory");
    }
    c->argc = 2;
    c->len[0] = strlen(op);
    c->len[1] = strlen(path);
    t->n++;
    return 0;
}

int sim_bench_zk_pair(int stage, const char *lock, sim_bench_pair *t, char *errstr,
                      size_t len)
{
    char path[256], child[320];

    memset(t, 0, sizeof(*t));
    snprintf(path, sizeof(path), "%s/%s", ROOT, lock);
    if ((sim_stage_get(stage)->caps & SIM_CAP_QUEUE) == 0)
        /* v10: the lock's ephemeral node, made and deleted. */
        return add_request(t, "create", path, errstr, len) != 0 ||
               add_request(t, "delete", path, errstr, len) != 0 ? -1 : 0;
    /* v11: our sequential node in the lock's container (zoo_create2 makes
     * it: its stat gives the token), the children to see that ours is the
     * lowest, and our node deleted. */
    snprintf(child, sizeof(child), "%s/%s%s-lock-", path, CHILD_PREFIX, UUID_TEXT);
    if (add_request(t, "create2", child, errstr, len) != 0 ||
        add_request(t, "getChildren", path, errstr, len) != 0)
        return -1;
    strcat(child, "<sequence>");
    return add_request(t, "delete", child, errstr, len);
}

/* ---- the replay: one session, synchronous calls ------------------------------------ */

/* The C client logs through this: only report modules print. */
static void quiet(const char *message)
{
    (void)message;
}

/* Session events only: the replay sets no watch. */
static void no_watch(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
    (void)zh;
    (void)type;
    (void)state;
    (void)path;
    (void)ctx;
}

int sim_bench_zk_open(sim_bench_zk *z, int port, const char *password, long timeout_ms,
                      char *errstr, size_t len)
{
    unsigned char id[16];
    char host[32];
    int64_t deadline = sim_now_ns() + (int64_t)timeout_ms * 1000000;
    int i;

    memset(z, 0, sizeof(*z));
    /* The stage's node data: its client's random id in hex and a thread id. */
    if (getrandom(id, sizeof(id), 0) != (ssize_t)sizeof(id))
        return sim_error(errstr, len, "cannot read the OS random source");
    for (i = 0; i < (int)sizeof(id); i++)
        sprintf(z->owner + 2 * i, "%02x", id[i]);
    snprintf(z->owner + 2 * sizeof(id), sizeof(z->owner) - 2 * sizeof(id), ":%ld",
             (long)gettid());
    snprintf(host, sizeof(host), "127.0.0.1:%d", port);
    z->zh = zookeeper_init2(host, no_watch, SIM_BENCH_LEASE_MS, NULL, NULL, 0, quiet);
    if (z->zh == NULL)
        return sim_error(errstr, len, "cannot open a ZooKeeper session to %s", host);
    sim_ensemble_add_auth(z->zh, password);
    while (zoo_state(z->zh) != ZOO_CONNECTED_STATE) {
        if (sim_now_ns() > deadline) {
            sim_bench_zk_close(z);
            return sim_error(errstr, len, "no ZooKeeper session to %s within %ld ms", host,
                             timeout_ms);
        }
        sim_sleep_ms(CONNECT_POLL_MS);
    }
    return 0;
}

void sim_bench_zk_close(sim_bench_zk *z)
{
    if (z->zh != NULL)
        zookeeper_close(z->zh);
    z->zh = NULL;
}

/* The parents a first create finds missing, as the stage makes them:
 * ROOT, and for a sequential child the lock's node as a container. */
static int make_parents(sim_bench_zk *z, const char *child)
{
    char parent[320];
    int rc = zoo_create(z->zh, ROOT, NULL, -1, &ZOO_CREATOR_ALL_ACL, ZOO_PERSISTENT, NULL, 0);

    snprintf(parent, sizeof(parent), "%.*s", (int)(strrchr(child, '/') - child), child);
    if ((rc == ZOK || rc == ZNODEEXISTS) && strcmp(parent, ROOT) != 0)
        rc = zoo_create(z->zh, parent, NULL, -1, &ZOO_CREATOR_ALL_ACL, ZOO_CONTAINER, NULL, 0);
    return rc == ZNODEEXISTS ? ZOK : rc;
}

/* One create of the stage's node, ephemeral or ephemeral sequential. */
static int create_once(sim_bench_zk *z, const char *path, int sequential)
{
    int len = (int)strlen(z->owner);
    struct Stat st;

    if (sequential)
        return zoo_create2(z->zh, path, z->owner, len, &ZOO_CREATOR_ALL_ACL,
                           ZOO_EPHEMERAL_SEQUENTIAL, z->node, sizeof(z->node), &st);
    return zoo_create(z->zh, path, z->owner, len, &ZOO_CREATOR_ALL_ACL, ZOO_EPHEMERAL,
                      z->node, sizeof(z->node));
}

/* One create, its parents made first when they are missing. */
static int create(sim_bench_zk *z, const char *path, int sequential)
{
    int rc = create_once(z, path, sequential);

    if (rc == ZNONODE && (rc = make_parents(z, path)) == ZOK)
        rc = create_once(z, path, sequential);
    return rc;
}

/* One request, as the stage sends it; the delete takes the node the
 * pair's create made. */
static int request(sim_bench_zk *z, const sim_bench_command *c)
{
    struct String_vector kids = { 0, NULL };
    int rc;

    if (strcmp(c->argv[0], "create") == 0 || strcmp(c->argv[0], "create2") == 0)
        return create(z, c->argv[1], strcmp(c->argv[0], "create2") == 0);
    if (strcmp(c->argv[0], "delete") == 0)
        return zoo_delete(z->zh, z->node, -1);
    rc = zoo_get_children(z->zh, c->argv[1], 0, &kids);
    deallocate_String_vector(&kids);
    return rc;
}

int sim_bench_zk_replay(sim_bench_zk *z, const sim_bench_pair *t, int64_t *ns, char *errstr,
                        size_t len)
{
    int i, rc;

    for (i = 0; i < t->n; i++) {
        int64_t start = sim_now_ns();

        rc = request(z, &t->cmd[i]);
        ns[i] += sim_now_ns() - start;
        if (rc != ZOK)
            return sim_error(errstr, len, "replaying %s %s: %s", t->cmd[i].argv[0],
                             t->cmd[i].argv[1], zerror(rc));
    }
    return 0;
}
