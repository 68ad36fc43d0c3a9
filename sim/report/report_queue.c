/* report_queue: a ZooKeeper lock's queue of waiting nodes (v11), read
 * from the observer's "queued", "first", "left" and "gone", for both
 * pictures of a run. See lanes.h.
 *
 * A waiter is named only through the checker: by the owner of the key
 * that its own node's turn began (the "first" that carries its sequence
 * number). A node that never had its turn is named by no one: the time
 * it came and went alone would be a guess. */
#include <stdlib.h>
#include <string.h>

#include "lanes.h"

static int is_word(const sim_event *e, const char *word)
{
    return e->type == SIM_EV_KEY && e->node == 0 && strcmp(e->detail, word) == 0;
}

/* Who made the key that began at t_ns on node 0; SIM_UNNAMED. */
static int key_owner(const sim_verdict *v, int64_t t_ns)
{
    for (size_t k = 0; v != NULL && k < v->n_keys; k++)
        if (v->keys[k].node == 0 && v->keys[k].from_ns == t_ns)
            return v->keys[k].owner >= 0 ? v->keys[k].owner : SIM_UNNAMED;
    return SIM_UNNAMED;
}

/* The waiter that queued at ev[i]: until the first of its own node's
 * turn or departure after it. */
static sim_waiter waiter(const sim_event *ev, size_t n, size_t i, int64_t end,
                         const sim_verdict *v)
{
    sim_waiter w = { ev[i].token, ev[i].t_ns, end, SIM_UNNAMED };

    for (size_t j = i + 1; j < n; j++) {
        if (ev[j].token != w.seq)
            continue;
        if (is_word(&ev[j], "first")) {
            w.to = ev[j].t_ns;
            w.client = key_owner(v, ev[j].t_ns);
            break;
        }
        if (is_word(&ev[j], "left") || is_word(&ev[j], "gone")) {
            w.to = ev[j].t_ns;
            break;
        }
    }
    return w;
}

static int by_seq(const void *a, const void *b)
{
    const sim_waiter *x = a, *y = b;

    if (x->seq != y->seq)
        return (x->seq > y->seq) - (x->seq < y->seq);
    return (x->from > y->from) - (x->from < y->from);
}

int sim_lanes_queue(sim_queue *q, const sim_event *ev, size_t n, int64_t end,
                    const sim_verdict *v)
{
    size_t count = 0;

    memset(q, 0, sizeof(*q));
    for (size_t i = 0; i < n; i++)
        count += is_word(&ev[i], "queued");
    if (count == 0)
        return 0;
    if ((q->w = malloc(count * sizeof(*q->w))) == NULL)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (is_word(&ev[i], "queued"))
            q->w[q->n++] = waiter(ev, n, i, end, v);
    /* Places follow the sequence numbers: the lowest waiting node is the
     * next to hold. */
    qsort(q->w, q->n, sizeof(*q->w), by_seq);
    /* The most at once: someone queued, and the others then waiting. */
    for (size_t i = 0; i < q->n; i++) {
        int here = sim_queue_at(q, q->w[i].from, q->w[i].from, NULL, 0);

        if (here > q->longest)
            q->longest = here;
    }
    return 0;
}

int sim_queue_at(const sim_queue *q, int64_t from, int64_t to, size_t *who, int max)
{
    int here = 0;

    for (size_t i = 0; i < q->n; i++)
        if (q->w[i].from <= to && q->w[i].to > from) {
            if (here < max)
                who[here] = i;
            here++;
        }
    return here;
}

void sim_queue_free(sim_queue *q)
{
    free(q->w);
    memset(q, 0, sizeof(*q));
}
