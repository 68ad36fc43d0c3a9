/* lock_helpers: see lock_helpers.h. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "lock_helpers.h"

dlock *take(const char *who, const char *name, long lease_ms)
{
    dlock *l = harness_lock(harness_server(), name, lease_ms, 0);
    int rc = dlock_acquire(l);

    ck_assert_msg(rc == DLOCK_OK, "expected client %s to take the free lock '%s', got %s (%s)",
                  who, name, harness_result(rc), dlock_errstr(l));
    return l;
}

void release_ok(dlock *l, const char *who)
{
    int rc = dlock_release(l);

    ck_assert_msg(rc == DLOCK_OK, "expected client %s's release to return OK, got %s (%s)",
                  who, harness_result(rc), dlock_errstr(l));
}

int nodes_with(const char *key)
{
    int i, n = 0;

    for (i = 0; i < harness_nodes(); i++)
        n += harness_int(harness_node_redis(i), "EXISTS %s", key) == 1;
    return n;
}

long long exists(const char *key)
{
    int n = nodes_with(key);

    ck_assert_msg(n == 0 || n == harness_nodes(), "the key '%s' is on %d of the %d nodes; "
                  "expected all of them or none", key, n, harness_nodes());
    return n > 0;
}

void lock_value(const char *key, char *out, size_t len)
{
    redisContext *c = harness_redis();
    char type[16];
    redisReply *r;

    harness_str(c, type, sizeof(type), "TYPE %s", key);
    out[0] = '\0';
    if (strcmp(type, "string") == 0) {
        harness_str(c, out, len, "GET %s", key);
    } else if (strcmp(type, "hash") == 0) {
        r = redisCommand(c, "HGETALL %s", key);
        ck_assert_msg(r != NULL && r->type == REDIS_REPLY_ARRAY, "HGETALL %s failed", key);
        if (r->elements == 2)
            snprintf(out, len, "%s=%s", r->element[0]->str, r->element[1]->str);
        else
            snprintf(out, len, "(%zu hash fields)", r->elements / 2);
        freeReplyObject(r);
    }
}

long parse_owner(const char *owner, char *id)
{
    char *end;
    long tid;
    int i;

    for (i = 0; i < TOKEN_HEX; i++)
        if (!isxdigit((unsigned char)owner[i]) || isupper((unsigned char)owner[i]))
            return -1;
    if (owner[TOKEN_HEX] != ':' || !isdigit((unsigned char)owner[TOKEN_HEX + 1]))
        return -1;
    tid = strtol(owner + TOKEN_HEX + 1, &end, 10);
    if (*end != '\0' && *end != '=')
        return -1;
    memcpy(id, owner, TOKEN_HEX);
    id[TOKEN_HEX] = '\0';
    return tid;
}

static void *acquire_in_thread(void *arg)
{
    attempt *a = arg;

    a->rc = dlock_acquire(a->l);
    a->done_ms = harness_now_ms();
    if (a->rc == DLOCK_OK)
        a->release_rc = dlock_release(a->l);
    return NULL;
}

void run_in_thread(pthread_t *t, attempt *a)
{
    ck_assert_msg(pthread_create(t, NULL, acquire_in_thread, a) == 0,
                  "cannot start a thread");
}

void check_busy_while_held(void)
{
    dlock *a, *b;
    int rc;

    harness_title("a second client's try returns BUSY while the lock is held");
    a = take("A", "held", LEASE_MS);
    b = harness_lock(harness_server(), "held", LEASE_MS, 0);
    rc = dlock_acquire(b);
    ck_assert_msg(rc == DLOCK_BUSY, "expected BUSY while A holds the lock, got %s (%s)",
                  harness_result(rc), dlock_errstr(b));
    release_ok(a, "A");
    dlock_free(b);
    dlock_free(a);
}

dlock *wait_out_budget(dlock **a, const char *name, long budget_ms, long least_ms)
{
    int64_t t0, waited;
    dlock *b;
    int rc;

    *a = take("A", name, LEASE_MS);
    b = harness_lock(harness_server(), name, LEASE_MS, budget_ms);
    t0 = harness_now_ms();
    rc = dlock_acquire(b);
    waited = harness_now_ms() - t0;
    ck_assert_msg(rc == DLOCK_BUSY, "expected BUSY once the %ld ms budget ran out, got %s (%s)",
                  budget_ms, harness_result(rc), dlock_errstr(b));
    ck_assert_msg(waited >= least_ms && waited < budget_ms + 2000, "acquire with a %ld ms "
                  "budget returned BUSY after %lld ms; expected about %ld ms", budget_ms,
                  (long long)waited, budget_ms);
    return b;
}

void assert_error(dlock *l, int rc, const char *call, const char *situation)
{
    ck_assert_msg(rc == DLOCK_ERR, "expected %s to return ERR %s, got %s", call, situation,
                  harness_result(rc));
    ck_assert_msg(dlock_errstr(l)[0] != '\0', "%s returned ERR %s with an empty errstr; expected "
                  "a reason", call, situation);
    printf("  %s %s: \"%s\"\n", call, situation, dlock_errstr(l));
}

int refusing_port(int *port)
{
    struct sockaddr_in a;
    socklen_t alen = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_msg(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
                  getsockname(fd, (struct sockaddr *)&a, &alen) == 0,
                  "cannot reserve a port: %s", strerror(errno));
    *port = ntohs(a.sin_port);
    return fd;
}

long long connections_received(void)
{
    char value[32], err[HARNESS_ERRSTR_LEN];

    ck_assert_msg(sim_server_info_field(harness_redis(), "stats", "total_connections_received",
                                        value, sizeof(value), err, sizeof(err)) == 0, "%s", err);
    return atoll(value);
}

int kill_clients_by_last_command(const char *cmd)
{
    char want[64];
    const char *line;
    redisReply *r;
    int killed = 0;
    long long id;

    snprintf(want, sizeof(want), " cmd=%s ", cmd);
    r = redisCommand(harness_redis(), "CLIENT LIST");
    ck_assert_msg(r != NULL && r->type == REDIS_REPLY_STRING, "CLIENT LIST failed");
    for (line = r->str; line != NULL && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        const char *end = strchr(line, '\n');
        const char *hit = strstr(line, want);

        if (hit == NULL || (end != NULL && hit > end) || sscanf(line, "id=%lld", &id) != 1)
            continue;
        killed += harness_int(harness_redis(), "CLIENT KILL ID %lld", id) == 1;
    }
    freeReplyObject(r);
    return killed;
}

/* ---- many at once: client processes ---------------------------------------------- */

/* How a contention client ended: its exit status. 1 is left to a
 * failed check inside the child. */
enum { CLIENT_OK, CLIENT_NO_CONNECTION = 2, CLIENT_ACQUIRE, CLIENT_RELEASE, CLIENT_READ,
       CLIENT_WRITE, CLIENT_ENDS };

static const char *const client_end[CLIENT_ENDS] = {
    "", "", "could not connect", "acquire failed", "release failed",
    "reading the counter failed", "writing the counter failed",
};

/* One round under the lock: read the counter, write it one higher. */
static int increment(const counter_store *store, void *conn, dlock *l)
{
    long long n;
    int status = CLIENT_OK;

    if (dlock_acquire(l) != DLOCK_OK)
        return CLIENT_ACQUIRE;
    if ((n = store->get(conn)) < 0)
        status = CLIENT_READ;
    else if (store->set(conn, n + 1) != 0)
        status = CLIENT_WRITE;
    if (dlock_release(l) != DLOCK_OK && status == CLIENT_OK)
        status = CLIENT_RELEASE;
    return status;
}

/* One client process: rounds increments. Returns its exit status. */
static int contend(const counter_store *store, int rounds)
{
    void *conn = store->open();
    dlock_config cfg;
    dlock *l;
    int i, status = CLIENT_OK;

    harness_config(&cfg, harness_server(), 30000, 30000);
    l = dlock_new("counter-lock", &cfg);
    if (conn == NULL || l == NULL)
        return CLIENT_NO_CONNECTION;
    for (i = 0; i < rounds && status == CLIENT_OK; i++)
        status = increment(store, conn, l);
    dlock_free(l);
    store->close(conn);
    return status;
}

/* Waits for client i and fails the test unless it ended well. */
static void client_ended_well(pid_t pid, int i)
{
    int status;

    ck_assert_msg(waitpid(pid, &status, 0) == pid, "waitpid failed");
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == CLIENT_OK,
                  "client %d ended with status %d (%s)", i, status,
                  WIFEXITED(status) && WEXITSTATUS(status) < CLIENT_ENDS
                      ? client_end[WEXITSTATUS(status)] : "killed");
}

void count_in_processes(const counter_store *store, int clients, int rounds)
{
    pid_t *pids = calloc((size_t)clients, sizeof(*pids));
    long long counter;
    void *conn;
    int i;

    harness_title("%d client processes x %d locked increments: the counter ends at %d",
                  clients, rounds, clients * rounds);
    ck_assert_msg(pids != NULL, "out of memory for %d clients", clients);
    fflush(stdout);
    for (i = 0; i < clients; i++) {
        pids[i] = fork();
        ck_assert_msg(pids[i] >= 0, "fork: %s", strerror(errno));
        if (pids[i] == 0)
            _exit(contend(store, rounds));
    }
    for (i = 0; i < clients; i++)
        client_ended_well(pids[i], i);
    free(pids);
    ck_assert_msg((conn = store->open()) != NULL, "cannot connect to read the counter");
    counter = store->get(conn);
    store->close(conn);
    ck_assert_msg(counter == (long long)clients * rounds, "%d clients x %d increments under "
                  "the lock left the counter at %lld; expected %d (an update was lost: two "
                  "holders at once)", clients, rounds, counter, clients * rounds);
}

/* ---- many at once: threads on one handle -------------------------------------------- */

/* What the threads of count_in_threads share: the handle, and a counter
 * they increment under the lock by a read, a yield and a write, so that
 * two holders at once lose an update. */
typedef struct shared {
    dlock *l;
    int rounds;              /* increments per thread */
    atomic_long counter;
    atomic_int inside;       /* threads inside the critical section now */
    atomic_int overlaps;     /* entries that found another thread inside */
    atomic_int errors;       /* acquires or releases that did not return OK */
    pthread_mutex_t mu;      /* guards first_error */
    char first_error[256];   /* the first failed call, in words */
} shared;

static void shared_failed(shared *sh, const char *call, int rc)
{
    pthread_mutex_lock(&sh->mu);
    if (atomic_fetch_add(&sh->errors, 1) == 0)
        snprintf(sh->first_error, sizeof(sh->first_error), "%s returned %s (%s)", call,
                 harness_result(rc), dlock_errstr(sh->l));
    pthread_mutex_unlock(&sh->mu);
}

static void *increment_rounds(void *arg)
{
    shared *sh = arg;
    long n;
    int i, rc;

    for (i = 0; i < sh->rounds; i++) {
        if ((rc = dlock_acquire(sh->l)) != DLOCK_OK) {
            shared_failed(sh, "acquire", rc);
            return NULL;
        }
        if (atomic_fetch_add(&sh->inside, 1) != 0)
            atomic_fetch_add(&sh->overlaps, 1);
        n = atomic_load(&sh->counter);
        sched_yield(); /* a second holder now would read the same n */
        atomic_store(&sh->counter, n + 1);
        atomic_fetch_sub(&sh->inside, 1);
        if ((rc = dlock_release(sh->l)) != DLOCK_OK) {
            shared_failed(sh, "release", rc);
            return NULL;
        }
    }
    return NULL;
}

void count_in_threads(dlock *l, int threads, int rounds)
{
    pthread_t *t = calloc((size_t)threads, sizeof(*t));
    shared sh;
    int i;

    harness_title("%d threads share one handle, %d locked increments each: the counter ends "
                  "at %d", threads, rounds, threads * rounds);
    ck_assert_msg(t != NULL, "out of memory for %d threads", threads);
    memset(&sh, 0, sizeof(sh));
    sh.l = l;
    sh.rounds = rounds;
    pthread_mutex_init(&sh.mu, NULL);
    for (i = 0; i < threads; i++)
        ck_assert_msg(pthread_create(&t[i], NULL, increment_rounds, &sh) == 0,
                      "cannot start a thread");
    for (i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    free(t);
    pthread_mutex_destroy(&sh.mu);
    ck_assert_msg(atomic_load(&sh.errors) == 0, "%d of the threads' calls on the shared handle "
                  "failed, the first: %s; expected none", atomic_load(&sh.errors), sh.first_error);
    ck_assert_msg(atomic_load(&sh.overlaps) == 0, "two threads of the shared handle were inside "
                  "at once %d times; expected at most one holder", atomic_load(&sh.overlaps));
    ck_assert_msg(atomic_load(&sh.counter) == threads * rounds, "%d threads x %d locked "
                  "increments left the counter at %ld; expected %d", threads, rounds,
                  atomic_load(&sh.counter), threads * rounds);
}
