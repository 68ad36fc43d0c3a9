/* sale_judge: the verdict on one flash sale (see sale_judge.h). */
#include <stdlib.h>
#include <string.h>

#include "sale_judge.h"

/* What the judge keeps while it walks the history. */
typedef struct walk {
    int holder[SIM_SALE_MAX_SEGMENTS];     /* buyer, -1: free */
    int64_t held_at[SIM_SALE_MAX_SEGMENTS];
    /* per segment, per stock value: who wrote it first, and when */
    int *writer[SIM_SALE_MAX_SEGMENTS];
    int64_t *written_at[SIM_SALE_MAX_SEGMENTS];
    int64_t last_write_ns[SIM_SALE_MAX_SEGMENTS];
    int last_writer[SIM_SALE_MAX_SEGMENTS];
} walk;

static void keep(sim_sale_pair *arr, long count, const sim_sale_pair *p)
{
    if (count <= SIM_SALE_EVIDENCE)
        arr[count - 1] = *p;
}

/* S: segment e->seg now holds e->value; a value written before is a unit
 * sold twice. */
static void on_sale(sim_sale_verdict *v, walk *w, const sim_sale_event *e)
{
    sim_sale_segment *s = &v->seg[e->seg];
    long long val = e->value;

    v->sold++;
    s->sold++;
    s->left = (long)val;
    if (val == 0 && s->dry_ns < 0)
        s->dry_ns = e->t_ns;
    if (v->pause_ns >= 0 && e->t_ns >= v->pause_ns && e->t_ns < v->pause_ns + v->pause_ms * 1000000)
        s->paused_sales++;
    if (v->start_ns < 0)
        v->start_ns = e->t_ns;
    v->end_ns = e->t_ns;
    if (val >= 0 && val < s->initial) {
        if (w->writer[e->seg][val] >= 0) {
            sim_sale_pair p = { e->seg, val, val, { w->writer[e->seg][val], e->buyer },
                                { w->written_at[e->seg][val], e->t_ns } };

            keep(v->dup, ++v->lost_updates, &p);
        } else {
            w->writer[e->seg][val] = e->buyer;
            w->written_at[e->seg][val] = e->t_ns;
        }
    }
    w->last_write_ns[e->seg] = e->t_ns;
    w->last_writer[e->seg] = e->buyer;
}

/* R: more than the last write left means the store lost that write.
 * Less means a write whose reply never came (an unknown outcome, logged
 * as a failed step) did land: the store is the truth from here on. */
static void on_read(sim_sale_verdict *v, walk *w, const sim_sale_event *e)
{
    sim_sale_segment *s = &v->seg[e->seg];

    if (e->value < s->left)
        s->left = (long)e->value;
    if (e->value > s->left) {
        sim_sale_pair p = { e->seg, e->value, s->left, { w->last_writer[e->seg], e->buyer },
                            { w->last_write_ns[e->seg], e->t_ns } };

        keep(v->stale, ++v->stale_reads, &p);
        s->left = (long)e->value;
    }
}

static void on_lock(sim_sale_verdict *v, walk *w, const sim_sale_event *e)
{
    if (w->holder[e->seg] >= 0 && w->holder[e->seg] != e->buyer) {
        sim_sale_pair p = { e->seg, 0, 0, { w->holder[e->seg], e->buyer },
                            { w->held_at[e->seg], e->t_ns } };

        keep(v->dbl, ++v->double_holds, &p);
    }
    w->holder[e->seg] = e->buyer;
    w->held_at[e->seg] = e->t_ns;
    if (v->start_ns < 0)
        v->start_ns = e->t_ns;
}

static void on_unlock(sim_sale_verdict *v, walk *w, const sim_sale_event *e)
{
    if (w->holder[e->seg] != e->buyer)
        return;
    v->holds++;
    v->held_ns += e->t_ns - w->held_at[e->seg];
    w->holder[e->seg] = -1;
}

static void on_soldout(sim_sale_verdict *v, const sim_sale_event *e)
{
    sim_sale_false_out *f;
    int k, stock = 0;

    v->soldouts++;
    for (k = 0; k < v->meta.segments; k++)
        stock |= v->seg[k].left > 0;
    if (!stock)
        return;
    if (v->false_soldouts++ >= SIM_SALE_EVIDENCE)
        return;
    f = &v->false_out[v->false_soldouts - 1];
    f->buyer = e->buyer;
    f->seg = e->seg;
    f->t_ns = e->t_ns;
    for (k = 0; k < v->meta.segments; k++)
        f->held[k] = v->seg[k].left;
}

static void on_fault(sim_sale_verdict *v, const sim_sale_event *e)
{
    v->fault_seg = e->seg;
    if (e->value == SIM_SALE_FAULT_CUT)
        v->cut_ns = e->t_ns;
    else if (e->value == SIM_SALE_FAULT_KILL)
        v->kill_ns = e->t_ns;
    else if (e->value == SIM_SALE_FAULT_PROMOTED)
        v->promoted_ns = e->t_ns;
}

static void on_event(sim_sale_verdict *v, walk *w, const sim_sale_event *e)
{
    switch (e->op) {
    case 'L': on_lock(v, w, e); break;
    case 'U': on_unlock(v, w, e); break;
    case 'R': on_read(v, w, e); break;
    case 'S': on_sale(v, w, e); break;
    case 'O': on_soldout(v, e); break;
    case 'B': v->busy++; break;
    case 'X': v->errors++; v->gave_up += e->value == SIM_SALE_STEP_GAVE_UP; break;
    case 'F': on_fault(v, e); break;
    case 'D':
        if (v->died++ == 0) {
            v->died_buyer = e->buyer;
            v->died_status = (int)e->value;
        }
        break;
    default: break;
    }
}

/* The pause's window is known before the walk: sales inside it count. */
static void find_pause(sim_sale_verdict *v, const sim_sale_log *log)
{
    size_t i;

    for (i = 0; i < log->n; i++)
        if (log->ev[i].op == 'H') {
            v->pause_ns = log->ev[i].t_ns;
            v->pause_ms = (long)log->ev[i].value;
            v->fault_seg = log->ev[i].seg;
            return;
        }
}

static int walk_init(walk *w, const sim_sale_verdict *v)
{
    int k;
    long i;

    memset(w, 0, sizeof(*w));
    for (k = 0; k < v->meta.segments; k++) {
        w->holder[k] = -1;
        w->last_writer[k] = -1;
        w->writer[k] = malloc(((size_t)v->seg[k].initial + 1) * sizeof(int));
        w->written_at[k] = malloc(((size_t)v->seg[k].initial + 1) * sizeof(int64_t));
        if (w->writer[k] == NULL || w->written_at[k] == NULL)
            return -1;
        for (i = 0; i <= v->seg[k].initial; i++)
            w->writer[k][i] = -1;
    }
    return 0;
}

static void walk_free(walk *w)
{
    int k;

    for (k = 0; k < SIM_SALE_MAX_SEGMENTS; k++) {
        free(w->writer[k]);
        free(w->written_at[k]);
    }
}

void sim_sale_judge(const sim_sale_log *log, sim_sale_verdict *v)
{
    walk w;
    size_t i;
    int k;

    memset(v, 0, sizeof(*v));
    v->meta = log->meta;
    v->start_ns = v->end_ns = v->cut_ns = v->kill_ns = v->promoted_ns = v->pause_ns = -1;
    v->fault_seg = -1;
    for (k = 0; k < v->meta.segments; k++) {
        v->seg[k].initial = v->seg[k].left = sim_sale_initial_stock(&v->meta, k);
        v->seg[k].dry_ns = -1;
    }
    find_pause(v, log);
    if (walk_init(&w, v) == 0)
        for (i = 0; i < log->n; i++)
            if (log->ev[i].seg >= 0 && log->ev[i].seg < v->meta.segments)
                on_event(v, &w, &log->ev[i]);
    walk_free(&w);
    /* Each stock value written twice is a unit two buyers were sold; a
     * sale that went past S without one (a broken count) counts too. */
    v->oversold = v->sold > v->meta.units ? v->sold - v->meta.units : 0;
    if (v->lost_updates > v->oversold)
        v->oversold = v->lost_updates;
    if (v->end_ns > v->start_ns)
        v->rate = (double)v->sold * 1e9 / (double)(v->end_ns - v->start_ns);
}

int sim_sale_clean(const sim_sale_verdict *v)
{
    return v->sold == v->meta.units && v->oversold == 0 && v->lost_updates == 0 &&
           v->stale_reads == 0 && v->double_holds == 0 && v->false_soldouts == 0 &&
           v->gave_up == 0 && v->died == 0;
}
