/* history: the shared journal, its snapshot, and the history's order.
 *
 * Writers in many processes share one mapped file. A writer takes a slot
 * with one atomic add, fills it, then sets the slot's ready flag with
 * release order; a reader copies only slots whose flag it sees set (acquire
 * order), so it never reads half an event, even from a client SIGKILLed in
 * the middle of a write (its slot simply stays unpublished). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "history.h"
#include "util.h"

static const char *type_names[SIM_EV_TYPE_COUNT] = {
    [SIM_EV_ACQUIRE_INVOKE] = "acquire-invoke",
    [SIM_EV_ACQUIRE_OK] = "acquire-ok",
    [SIM_EV_ACQUIRE_BUSY] = "acquire-busy",
    [SIM_EV_ACQUIRE_ERROR] = "acquire-error",
    [SIM_EV_CS_ENTER] = "cs-enter",
    [SIM_EV_CS_EXIT] = "cs-exit",
    [SIM_EV_RELEASE_INVOKE] = "release-invoke",
    [SIM_EV_RELEASE_OK] = "release-ok",
    [SIM_EV_RELEASE_NOT_OWNER] = "release-not-owner",
    [SIM_EV_RELEASE_ERROR] = "release-error",
    [SIM_EV_STOCK_READ] = "stock-read",
    [SIM_EV_STOCK_WRITE] = "stock-write",
    [SIM_EV_STOCK_REFUSED] = "stock-refused",
    [SIM_EV_CRASH] = "crash",
    [SIM_EV_PAUSE_BEGIN] = "pause-begin",
    [SIM_EV_PAUSE_END] = "pause-end",
    [SIM_EV_FAILPOINT] = "failpoint",
    [SIM_EV_FAILOVER] = "failover",
    [SIM_EV_NODE_DOWN] = "node-down",
    [SIM_EV_RESTART] = "restart",
    [SIM_EV_CUT_BEGIN] = "cut-begin",
    [SIM_EV_CUT_END] = "cut-end",
    [SIM_EV_CLOCK_JUMP] = "clock-jump",
    [SIM_EV_KEY] = "key",
    [SIM_EV_STOCK_INITIAL] = "stock-initial",
    [SIM_EV_STOCK_FINAL] = "stock-final",
};

int64_t sim_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

const char *sim_event_type_name(sim_event_type type)
{
    if ((int)type < 0 || type >= SIM_EV_TYPE_COUNT)
        return "unknown";
    return type_names[type];
}

int sim_event_type_parse(const char *name)
{
    /* A loaded file asks once per line: look at the first letter first. */
    for (int i = 0; i < SIM_EV_TYPE_COUNT; i++)
        if (name[0] == type_names[i][0] && strcmp(name, type_names[i]) == 0)
            return i;
    return -1;
}

/* ---- the shared mapping ------------------------------------------------ */

static sim_history *map_fd(int fd, const char *path, char *errstr, size_t len)
{
    void *p = mmap(NULL, sizeof(sim_history), PROT_READ | PROT_WRITE,
                   MAP_SHARED, fd, 0);

    close(fd);
    if (p == MAP_FAILED) {
        sim_error(errstr, len, "mmap %s: %s", path, strerror(errno));
        return NULL;
    }
    return p;
}

sim_history *sim_history_create(const char *path, char *errstr, size_t len)
{
    sim_history *h;
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

    if (fd < 0) {
        sim_error(errstr, len, "create %s: %s", path, strerror(errno));
        return NULL;
    }
    /* ftruncate fills with zeroes: every slot starts unpublished. */
    if (ftruncate(fd, (off_t)sizeof(sim_history)) != 0) {
        sim_error(errstr, len, "size %s: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    h = map_fd(fd, path, errstr, len);
    if (h != NULL)
        h->t0_ns = sim_now_ns();
    return h;
}

sim_history *sim_history_open(const char *path, char *errstr, size_t len)
{
    struct stat st;
    int fd = open(path, O_RDWR | O_CLOEXEC);

    if (fd < 0) {
        sim_error(errstr, len, "open %s: %s", path, strerror(errno));
        return NULL;
    }
    /* A file of another size is another program's: mapping it would let
     * us write past its end. */
    if (fstat(fd, &st) != 0 || (size_t)st.st_size != sizeof(sim_history)) {
        sim_error(errstr, len, "open %s: not a history file", path);
        close(fd);
        return NULL;
    }
    return map_fd(fd, path, errstr, len);
}

void sim_history_close(sim_history *h)
{
    if (h != NULL)
        munmap(h, sizeof(*h));
}

/* detail into a slot's field; one too long for it keeps what fits and
 * ends in "...", so that every reader sees where it was cut. */
static void put_detail(char *dst, const char *detail)
{
    size_t n = detail != NULL ? strlen(detail) : 0;

    if (n < SIM_DETAIL_LEN) {
        memcpy(dst, detail != NULL ? detail : "", n + 1);
        return;
    }
    memcpy(dst, detail, SIM_DETAIL_LEN - 4);
    memcpy(dst + SIM_DETAIL_LEN - 4, "...", 4);
}

/* Fills the next slot, stamped t_ns (0: now), and publishes it. */
static int add_at(sim_history *h, int64_t t_ns, int client, int thread, int node,
                  sim_event_type type, int64_t value, int64_t token,
                  int64_t lease_ms, const char *detail)
{
    unsigned slot = atomic_fetch_add_explicit(&h->reserved, 1,
                                              memory_order_relaxed);
    sim_event *e;

    if (slot >= SIM_HISTORY_MAX)
        return -1;
    e = &h->ev[slot];
    e->t_ns = t_ns != 0 ? t_ns : sim_now_ns();
    e->client = client;
    e->thread = thread;
    e->type = type;
    e->node = node;
    e->value = value;
    e->token = token;
    e->lease_ms = lease_ms;
    put_detail(e->detail, detail);
    atomic_store_explicit(&h->ready[slot], 1, memory_order_release);
    return 0;
}

static int add(sim_history *h, int client, int thread, int node,
               sim_event_type type, int64_t value, int64_t token,
               int64_t lease_ms, const char *detail)
{
    return add_at(h, 0, client, thread, node, type, value, token, lease_ms, detail);
}

int sim_history_add(sim_history *h, int client, int thread,
                    sim_event_type type, int64_t value, const char *detail)
{
    return add(h, client, thread, 0, type, value, 0, 0, detail);
}

int sim_history_add_token(sim_history *h, int client, int thread,
                          sim_event_type type, int64_t value, int64_t token,
                          const char *detail)
{
    return add(h, client, thread, 0, type, value, token, 0, detail);
}

int sim_history_add_invoke(sim_history *h, int client, int thread,
                           int64_t wait_ms, int64_t lease_ms)
{
    return add(h, client, thread, 0, SIM_EV_ACQUIRE_INVOKE, wait_ms, 0,
               lease_ms, "");
}

long sim_history_lease_of(const sim_event *ev, size_t n, int client)
{
    for (size_t i = 0; i < n; i++)
        if (ev[i].client == client && ev[i].type == SIM_EV_ACQUIRE_INVOKE &&
            ev[i].lease_ms > 0)
            return (long)ev[i].lease_ms;
    return 0;
}

int sim_history_add_node(sim_history *h, int node, sim_event_type type,
                         int64_t value, const char *detail)
{
    return add(h, SIM_NO_CLIENT, 0, node, type, value, 0, 0, detail);
}

int sim_history_add_link(sim_history *h, int client, int node,
                         sim_event_type type, int64_t value, const char *detail)
{
    return add(h, client, 0, node, type, value, 0, 0, detail);
}

int sim_history_add_node_at(sim_history *h, int64_t t_ns, int node, sim_event_type type,
                            int64_t value, const char *detail)
{
    return sim_history_add_node_token_at(h, t_ns, node, type, value, 0, detail);
}

int sim_history_add_node_token_at(sim_history *h, int64_t t_ns, int node,
                                  sim_event_type type, int64_t value, int64_t token,
                                  const char *detail)
{
    return add_at(h, t_ns, SIM_NO_CLIENT, 0, node, type, value, token, 0, detail);
}

/* ---- order ------------------------------------------------------------ */

/* The rank of a type among events stamped in the same nanosecond: one
 * thread's steps in the order it takes them, its crash last; key events
 * after client events, the holder's before the queue's (a waiter's node
 * whose turn came is a "first", a write); the nemesis and the
 * simulator's numbers after them. */
static const unsigned char type_rank[SIM_EV_TYPE_COUNT] = {
    [SIM_EV_STOCK_INITIAL] = 0,
    [SIM_EV_ACQUIRE_INVOKE] = 1,
    [SIM_EV_ACQUIRE_OK] = 2,
    [SIM_EV_ACQUIRE_BUSY] = 2,
    [SIM_EV_ACQUIRE_ERROR] = 2,
    [SIM_EV_CS_ENTER] = 3,
    [SIM_EV_STOCK_READ] = 4,
    [SIM_EV_STOCK_WRITE] = 5,
    [SIM_EV_STOCK_REFUSED] = 5,
    [SIM_EV_CS_EXIT] = 6,
    [SIM_EV_RELEASE_INVOKE] = 7,
    [SIM_EV_RELEASE_OK] = 8,
    [SIM_EV_RELEASE_NOT_OWNER] = 8,
    [SIM_EV_RELEASE_ERROR] = 8,
    [SIM_EV_FAILPOINT] = 9,
    [SIM_EV_PAUSE_BEGIN] = 10,
    [SIM_EV_PAUSE_END] = 10,
    [SIM_EV_CUT_BEGIN] = 10,
    [SIM_EV_CUT_END] = 10,
    [SIM_EV_CRASH] = 11,
    [SIM_EV_KEY] = 12,          /* + the key event's kind: 12 .. 15 */
    [SIM_EV_FAILOVER] = 16,
    [SIM_EV_NODE_DOWN] = 16,
    [SIM_EV_RESTART] = 16,
    [SIM_EV_CLOCK_JUMP] = 16,
    [SIM_EV_STOCK_FINAL] = 17,
};

static const struct {
    const char *word;
    int kind;
} key_words[] = {
    { "set", SIM_KEY_WRITE },          { "hset", SIM_KEY_WRITE },
    { "hsetnx", SIM_KEY_WRITE },       { "hincrby", SIM_KEY_WRITE },
    { "hincrbyfloat", SIM_KEY_WRITE }, { "hdel", SIM_KEY_WRITE },
    { "expire", SIM_KEY_TTL },         { "pexpire", SIM_KEY_TTL },
    { "persist", SIM_KEY_TTL },        { "del", SIM_KEY_END },
    { "expired", SIM_KEY_END },        { "evicted", SIM_KEY_END },
    /* A ZooKeeper lock's node (zk_observer.h): it appears holding the
     * lock, or a waiter's node becomes the lowest; a client deletes it;
     * "expired" too, when it went with its session. */
    { "create", SIM_KEY_WRITE },       { "first", SIM_KEY_WRITE },
    { "delete", SIM_KEY_END },
    /* Its queue (v11): a node that is not the lowest appears; a waiting
     * node went while a lower one stayed, so it never held ("left"), or
     * went at a look that found every lower one gone too, so it may
     * have held in between, unseen ("gone"). */
    { "queued", SIM_KEY_QUEUE },       { "left", SIM_KEY_QUEUE },
    { "gone", SIM_KEY_QUEUE },
};

int sim_key_event_kind(const char *detail)
{
    for (size_t i = 0; i < sizeof(key_words) / sizeof(key_words[0]); i++)
        if (strcmp(detail, key_words[i].word) == 0)
            return key_words[i].kind;
    return -1;
}

static int rank(const sim_event *e)
{
    int kind;

    if (e->type < 0 || e->type >= SIM_EV_TYPE_COUNT)
        return 255;
    if (e->type != SIM_EV_KEY)
        return type_rank[e->type];
    kind = sim_key_event_kind(e->detail);
    return type_rank[SIM_EV_KEY] + (kind < 0 ? SIM_KEY_END : kind);
}

int sim_event_order(const sim_event *a, const sim_event *b)
{
    SIM_CMP(a->t_ns, b->t_ns);
    SIM_CMP(rank(a), rank(b));
    SIM_CMP(a->client, b->client);
    SIM_CMP(a->thread, b->thread);
    SIM_CMP(a->node, b->node);
    SIM_CMP(a->type, b->type);
    SIM_CMP(a->value, b->value);
    SIM_CMP(a->token, b->token);
    SIM_CMP(a->lease_ms, b->lease_ms);
    return strncmp(a->detail, b->detail, sizeof(a->detail));
}

/* A merge sort that skips halves already in order: a saved history comes
 * back sorted, and costs one comparison per event. */
static void merge_sort(sim_event *a, sim_event *tmp, size_t n)
{
    size_t mid = n / 2, i = 0, j = mid, k = 0;

    if (n < 2)
        return;
    merge_sort(a, tmp, mid);
    merge_sort(a + mid, tmp, n - mid);
    if (sim_event_order(&a[mid - 1], &a[mid]) <= 0)
        return;
    while (i < mid && j < n)
        tmp[k++] = sim_event_order(&a[j], &a[i]) < 0 ? a[j++] : a[i++];
    while (i < mid)
        tmp[k++] = a[i++];
    while (j < n)
        tmp[k++] = a[j++];
    memcpy(a, tmp, n * sizeof(*a));
}

int sim_history_sort(sim_event *ev, size_t n)
{
    sim_event *tmp;
    size_t i = 1;

    while (i < n && sim_event_order(&ev[i - 1], &ev[i]) <= 0)
        i++;
    if (i >= n)
        return 0;
    if ((tmp = malloc(n * sizeof(*tmp))) == NULL)
        return -1;
    merge_sort(ev, tmp, n);
    free(tmp);
    return 0;
}

sim_event *sim_history_snapshot(const sim_history *h, size_t *n)
{
    unsigned reserved = atomic_load_explicit(&h->reserved,
                                             memory_order_acquire);
    size_t slots = reserved < SIM_HISTORY_MAX ? reserved : SIM_HISTORY_MAX;
    sim_event *out = malloc((slots ? slots : 1) * sizeof(*out));
    size_t k = 0;

    *n = 0;
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < slots; i++)
        if (atomic_load_explicit(&h->ready[i], memory_order_acquire))
            out[k++] = h->ev[i];
    if (sim_history_sort(out, k) != 0) {
        free(out);
        return NULL;
    }
    *n = k;
    return out;
}
