/* sale_report: a flash sale's verdict told on a terminal (see sale_report.h). */
#include <stdio.h>
#include <string.h>

#include "sale_report.h"

static double sec(int64_t ns)
{
    return (double)ns / 1e9;
}

static void headline(FILE *f, const sim_sale_verdict *v, const char *stage_name)
{
    const sim_sale_meta *m = &v->meta;

    fprintf(f, "sale: stage %d (%s), %ld units over %d segment%s, %d buyers, %ld ms inside the "
            "lock%s%s%s\n", m->stage, stage_name, m->units, m->segments,
            m->segments == 1 ? "" : "s", m->buyers, m->pause_ms,
            m->first ? ", first=1 (sold out at the first empty segment)" : "",
            strcmp(m->fault, "none") != 0 ? ", fault=" : "",
            strcmp(m->fault, "none") != 0 ? m->fault : "");
    fprintf(f, "  sold %ld of %ld units in %.2f s: %.0f sales per second\n", v->sold, m->units,
            v->end_ns > v->start_ns ? sec(v->end_ns - v->start_ns) : 0.0, v->rate);
    /* What a sale costs a buyer: inside the lock, and the whole round
     * (the lock's wait, the round trips, the wait for a CPU). */
    if (v->holds > 0 && v->sold > 0)
        fprintf(f, "  a hold lasted %.1f ms on average (%ld ms of it the pause); a buyer's "
                "round per sale %.1f ms\n", (double)v->held_ns / 1e6 / (double)v->holds,
                m->pause_ms, (double)(v->end_ns - v->start_ns) / 1e6 * m->buyers / (double)v->sold);
}

static void pairs(FILE *f, const char *what, long count, const sim_sale_pair *p)
{
    long i;

    for (i = 0; i < count && i < SIM_SALE_EVIDENCE; i++, p++)
        fprintf(f, "    segment %d: %s: buyer %d at %.3f s, buyer %d at %.3f s\n", p->seg, what,
                p->buyer[0], sec(p->t_ns[0]), p->buyer[1], sec(p->t_ns[1]));
    if (count > SIM_SALE_EVIDENCE)
        fprintf(f, "    ... and %ld more\n", count - SIM_SALE_EVIDENCE);
}

static void oversell(FILE *f, const sim_sale_verdict *v)
{
    char what[96];
    long i;

    fprintf(f, "  oversold: %ld unit%s; lost updates: %ld (two sales wrote one stock value)\n",
            v->oversold, v->oversold == 1 ? "" : "s", v->lost_updates);
    for (i = 0; i < v->lost_updates && i < SIM_SALE_EVIDENCE; i++) {
        snprintf(what, sizeof(what), "stock %lld written twice", v->dup[i].value);
        pairs(f, what, 1, &v->dup[i]);
    }
    if (v->lost_updates > SIM_SALE_EVIDENCE)
        fprintf(f, "    ... and %ld more\n", v->lost_updates - SIM_SALE_EVIDENCE);
    if (v->stale_reads == 0)
        return;
    fprintf(f, "  lost writes: %ld read%s found more stock than the last acknowledged write "
            "left\n", v->stale_reads, v->stale_reads == 1 ? "" : "s");
    for (i = 0; i < v->stale_reads && i < SIM_SALE_EVIDENCE; i++)
        fprintf(f, "    segment %d: buyer %d wrote %lld at %.3f s (acknowledged); buyer %d read "
                "%lld at %.3f s\n", v->stale[i].seg, v->stale[i].buyer[0], v->stale[i].acked,
                sec(v->stale[i].t_ns[0]), v->stale[i].buyer[1], v->stale[i].value,
                sec(v->stale[i].t_ns[1]));
}

static void soldouts(FILE *f, const sim_sale_verdict *v)
{
    int i, k;

    fprintf(f, "  false sold-outs: %d of %d \"sold out\" answers came while a segment had stock\n",
            v->false_soldouts, v->soldouts);
    for (i = 0; i < v->false_soldouts && i < SIM_SALE_EVIDENCE; i++) {
        const sim_sale_false_out *o = &v->false_out[i];

        fprintf(f, "    buyer %d at %.3f s found segment %d empty; the others held:", o->buyer,
                sec(o->t_ns), o->seg);
        for (k = 0; k < v->meta.segments; k++)
            if (o->held[k] > 0)
                fprintf(f, " %d:%ld", k, o->held[k]);
        fprintf(f, "\n");
    }
    if (v->false_soldouts > SIM_SALE_EVIDENCE)
        fprintf(f, "    ... and %d more\n", v->false_soldouts - SIM_SALE_EVIDENCE);
}

static void faults(FILE *f, const sim_sale_verdict *v)
{
    if (v->double_holds > 0) {
        fprintf(f, "  double holds: %ld (a lock taken while another buyer held it)\n",
                v->double_holds);
        pairs(f, "held by both", v->double_holds, v->dbl);
    } else {
        fprintf(f, "  double holds: 0 (no segment's lock was ever held by two buyers)\n");
    }
    if (v->kill_ns >= 0)
        fprintf(f, "  failover: segment %d's master lost its replica's link at %.3f s, was "
                "killed at %.3f s; its replica served the slot from %.3f s\n", v->fault_seg,
                sec(v->cut_ns), sec(v->kill_ns), v->promoted_ns >= 0 ? sec(v->promoted_ns) : -1.0);
    if (v->pause_ns >= 0)
        fprintf(f, "  pause: a holder of segment %d slept %ld ms inside its lock from %.3f s\n",
                v->fault_seg, v->pause_ms, sec(v->pause_ns));
    fprintf(f, "  lock busy (moved on): %ld; failed steps: %ld%s\n", v->busy, v->errors,
            v->gave_up ? " (some buyers gave up)" : "");
    if (v->died > 0)
        fprintf(f, "  buyers lost: %d ended before \"sold out\" (buyer %d: exit status %d%s); "
                "their histories stop there\n", v->died, v->died_buyer, v->died_status,
                v->died_status > 128 ? ", 128 + the signal that killed it" : "");
}

static void segments(FILE *f, const sim_sale_verdict *v, const sim_sale_place *place)
{
    int k;

    fprintf(f, "  segment  master  slot   stock  sold  ran dry%s\n",
            v->pause_ns >= 0 ? "   sold during the pause" : "");
    for (k = 0; k < v->meta.segments; k++) {
        const sim_sale_segment *s = &v->seg[k];
        char dry[32];

        if (s->dry_ns >= 0)
            snprintf(dry, sizeof(dry), "%.3f s", sec(s->dry_ns));
        else
            snprintf(dry, sizeof(dry), "never");
        if (place != NULL && place->node[k] >= 0)
            fprintf(f, "  %7d  node%d  %5d", k, place->node[k], place->slot[k]);
        else
            fprintf(f, "  %7d  %5s  %5s", k, "-", "-");
        fprintf(f, "  %5ld  %4ld  %-9s", s->initial, s->sold, dry);
        if (v->pause_ns >= 0)
            fprintf(f, " %5ld%s", s->paused_sales, k == v->fault_seg ? " (paused)" : "");
        fprintf(f, "\n");
    }
}

void sim_sale_report(FILE *f, const sim_sale_verdict *v, const sim_sale_place *place,
                     const char *stage_name)
{
    headline(f, v, stage_name);
    oversell(f, v);
    soldouts(f, v);
    faults(f, v);
    segments(f, v, place);
    fprintf(f, "  verdict: %s\n", sim_sale_clean(v) ? "clean: every unit sold once, every "
            "\"sold out\" true" : "NOT clean (see above)");
}

void sim_sale_bench_table(FILE *f, const sim_sale_bench *b)
{
    int i, s;

    fprintf(f, "sale bench: %ld units, %d buyers, %ld ms inside the lock, retry %ld ms, median "
            "of %d runs; %d CPUs, load %.1f at the start\n", b->units, b->buyers, b->pause_ms,
            b->retry_ms, b->runs, b->cpus, b->load);
    fprintf(f, "  segments");
    for (s = 0; s < b->stages; s++)
        fprintf(f, "   v%d sales/s (runs' range)  x K=1", b->stage[s]);
    fprintf(f, "\n");
    for (i = 0; i < b->ks; i++) {
        fprintf(f, "  %8d", b->k[i]);
        for (s = 0; s < b->stages; s++)
            fprintf(f, "   %11.0f (%4.0f-%4.0f)  %5.1f%s", b->rate[s][i], b->lo[s][i],
                    b->hi[s][i], b->rate[s][0] > 0 ? b->rate[s][i] / b->rate[s][0] : 0.0,
                    b->unclean[s][i] ? "!" : " ");
        fprintf(f, "\n");
    }
    for (s = 0; s < b->stages; s++)
        for (i = 0; i < b->ks; i++)
            if (b->unclean[s][i])
                fprintf(f, "  ! v%d at K=%d: %d run(s) not clean\n", b->stage[s], b->k[i],
                        b->unclean[s][i]);
}
