/* html_faults: the faults of a run's timeline (pauses, kills, failpoints,
 * a node's death and restart, the failover's steps, a client cut off
 * from the lock's servers, a node's clock that jumps) as marks on its
 * time axis, each with a label in a row where it covers no other, and a
 * tooltip that tells it in full. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_svg.h"

#define MARK_ROWS 8      /* rows for labels that would overlap: a fault on
                          * each of five nodes can fall within one label,
                          * and a failover's steps beside them */

/* The failover's steps that get a label; the others (the bookkeeping
 * around the kill and the promotion) are told in the tooltip of the
 * labelled step nearest them, so that no mark is left without words. */
static const char *const failover_told[] = { "hold replica", "kill primary",
                                             "promote replica" };

static int64_t pause_end(const sim_html_run *r, size_t i)
{
    for (size_t k = i + 1; k < r->n; k++)
        if (r->ev[k].type == SIM_EV_PAUSE_END && r->ev[k].client == r->ev[i].client)
            return r->ev[k].t_ns;
    return r->ev[r->n - 1].t_ns;
}

/* A cut of a client's links: its end (the client's next cut-end, or the
 * run's end), the nodes it cut (a bit each); 0 when event i is not the
 * first cut-begin of a cut. */
static int cut_of(const sim_html_run *r, size_t i, int64_t *end, unsigned *nodes)
{
    const sim_event *e = &r->ev[i];

    for (size_t k = i; k-- > 0;)
        if (r->ev[k].client == e->client && r->ev[k].type == SIM_EV_CUT_BEGIN)
            return 0;
        else if (r->ev[k].client == e->client && r->ev[k].type == SIM_EV_CUT_END)
            break;
    *end = r->ev[r->n - 1].t_ns;
    *nodes = 0;
    for (size_t k = i; k < r->n; k++) {
        if (r->ev[k].client != e->client)
            continue;
        if (r->ev[k].type == SIM_EV_CUT_END) {
            *end = r->ev[k].t_ns;
            break;
        }
        if (r->ev[k].type == SIM_EV_CUT_BEGIN && r->ev[k].node >= 0 && r->ev[k].node < 32)
            *nodes |= 1u << r->ev[k].node;
    }
    return 1;
}

static int cut_mark(const sim_svg *s, size_t i, sim_svg_mark *m, const char *who, long at)
{
    unsigned nodes;
    int all = s->nodes > 1 ? s->nodes : 1;

    if (!cut_of(s->run, i, &m->to, &nodes))
        return 0;
    if (nodes == (1u << all) - 1) {
        snprintf(m->label, sizeof(m->label), "%s cut off", who);
        snprintf(m->tip, sizeof(m->tip), "%s was cut off from the lock's servers at %ld ms, "
                 "until %ld ms: what it sent them and what they answered was lost", who, at,
                 sim_report_ms(m->to, s->t0));
    } else {
        char list[48] = "";
        size_t used = 0;

        for (int k = 0; k < all && used < sizeof(list); k++)
            if (nodes & (1u << k))
                used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%d",
                                         used ? ", " : "", k);
        snprintf(m->label, sizeof(m->label), "%s cut off from nodes %s", who, list);
        snprintf(m->tip, sizeof(m->tip), "%s was cut off from nodes %s at %ld ms, until "
                 "%ld ms: what it sent them and what they answered was lost", who, list, at,
                 sim_report_ms(m->to, s->t0));
    }
    return 1;
}

static int failover_is_told(const char *step)
{
    for (size_t i = 0; i < sizeof(failover_told) / sizeof(failover_told[0]); i++)
        if (strcmp(step, failover_told[i]) == 0)
            return 1;
    return 0;
}

/* One event as a fault mark; 0 when it is not a fault. */
static int fault_mark(const sim_svg *s, size_t i, sim_svg_mark *m)
{
    const sim_event *e = &s->run->ev[i];
    char who[SIM_REPORT_NAME];
    long at = sim_report_ms(e->t_ns, s->t0);

    memset(m, 0, sizeof(*m));
    m->at = m->to = e->t_ns;
    m->told = 1;
    sim_check_client_name(e->client, who, sizeof(who));
    switch (e->type) {
    case SIM_EV_PAUSE_BEGIN:
        m->to = pause_end(s->run, i);
        snprintf(m->label, sizeof(m->label), "%s paused", who);
        snprintf(m->tip, sizeof(m->tip), "the nemesis stopped %s's process "
                 "(SIGSTOP) at %ld ms, until %ld ms", who, at,
                 sim_report_ms(m->to, s->t0));
        return 1;
    case SIM_EV_CRASH:
        snprintf(m->label, sizeof(m->label), "%s killed", who);
        snprintf(m->tip, sizeof(m->tip), "%s's process was killed (SIGKILL) at "
                 "%ld ms", who, at);
        return 1;
    case SIM_EV_FAILPOINT:
        snprintf(m->label, sizeof(m->label), "%s: %s", who, e->detail);
        snprintf(m->tip, sizeof(m->tip), "%s reached the failpoint %s at %ld ms",
                 who, e->detail, at);
        return 1;
    case SIM_EV_NODE_DOWN:
        snprintf(m->label, sizeof(m->label), "node %d down", e->node);
        snprintf(m->tip, sizeof(m->tip), "node %d's server was killed at %ld ms "
                 "and stays down until it restarts", e->node, at);
        return 1;
    case SIM_EV_RESTART:
        snprintf(m->label, sizeof(m->label), "node %d restarts empty", e->node);
        snprintf(m->tip, sizeof(m->tip), "node %d's server came back at %ld ms "
                 "without the keys it had (no persistence)", e->node, at);
        return 1;
    case SIM_EV_CUT_BEGIN:
        return cut_mark(s, i, m, who, at);
    case SIM_EV_CLOCK_JUMP:
        if (strcmp(e->detail, "forward") != 0) { /* an ensemble's: "every server" */
            snprintf(m->label, sizeof(m->label), "clocks +%lld ms", (long long)e->value);
            snprintf(m->tip, sizeof(m->tip), "%s's wall clock jumped %lld ms forward at %ld ms",
                     e->detail, (long long)e->value, at);
            return 1;
        }
        if (s->nodes > 1)
            snprintf(m->label, sizeof(m->label), "node %d's clock +%lld ms", e->node,
                     (long long)e->value);
        else
            snprintf(m->label, sizeof(m->label), "clock +%lld ms", (long long)e->value);
        if (s->nodes > 1)
            snprintf(m->tip, sizeof(m->tip), "node %d's wall clock jumped %lld ms forward at "
                     "%ld ms: every TTL there ran that much shorter", e->node,
                     (long long)e->value, at);
        else
            snprintf(m->tip, sizeof(m->tip), "the server's wall clock jumped %lld ms forward "
                     "at %ld ms: every TTL there ran that much shorter", (long long)e->value, at);
        return 1;
    case SIM_EV_FAILOVER:
        m->told = failover_is_told(e->detail);
        snprintf(m->label, sizeof(m->label), "%s", e->detail);
        snprintf(m->tip, sizeof(m->tip), "failover at %ld ms: %s", at, e->detail);
        return 1;
    default:
        return 0;
    }
}

int sim_svg_free_row(const double *end, int rows, double x)
{
    int best = 0;

    for (int r = 0; r < rows; r++)
        if (end[r] < x)
            return r;
    for (int r = 1; r < rows; r++)
        if (end[r] < end[best])
            best = r;
    return best;
}

/* Each mark in a row where its label does not cover another's. */
static void place(sim_svg *s)
{
    double end[MARK_ROWS];

    for (int r = 0; r < MARK_ROWS; r++)
        end[r] = -1e9;
    s->fault_rows = 1;
    for (size_t i = 0; i < s->n_faults; i++) {
        sim_svg_mark *m = &s->faults[i];
        double x = sim_svg_x(s, m->at);

        m->row = sim_svg_free_row(end, MARK_ROWS, x);
        end[m->row] = x + 14 + SIM_SVG_CHAR_W * (double)strlen(m->label);
        if (m->row + 1 > s->fault_rows)
            s->fault_rows = m->row + 1;
    }
}

/* Each mark without a label joins the tooltip of the labelled one
 * nearest in time, and is not drawn; with no labelled mark, it is one. */
static void fold_untold(sim_svg *s)
{
    size_t kept = 0;

    for (size_t i = 0; i < s->n_faults; i++) {
        sim_svg_mark *m = &s->faults[i], *near = NULL;
        size_t used;

        for (size_t j = 0; j < s->n_faults && !m->told; j++)
            if (s->faults[j].told && (near == NULL || llabs(s->faults[j].at - m->at) <
                                      llabs(near->at - m->at)))
                near = &s->faults[j];
        if (near == NULL) {
            m->told = 1;
            continue;
        }
        used = strlen(near->tip);
        snprintf(near->tip + used, sizeof(near->tip) - used, "; %s at %ld ms",
                 m->label, sim_report_ms(m->at, s->t0));
    }
    for (size_t i = 0; i < s->n_faults; i++)
        if (s->faults[i].told)
            s->faults[kept++] = s->faults[i];
    s->n_faults = kept;
}

void sim_svg_collect_faults(sim_svg *s)
{
    s->n_faults = 0;
    s->fault_rows = 1;
    if ((s->faults = calloc(s->run->n + 1, sizeof(*s->faults))) == NULL)
        return;
    for (size_t i = 0; i < s->run->n; i++)
        if (fault_mark(s, i, &s->faults[s->n_faults]))
            s->n_faults++;
    fold_untold(s);
    place(s);
}

static void draw_fault(sim_svg *s, const sim_svg_mark *m, int y, int y_guide_end)
{
    double x = sim_svg_x(s, m->at), x2 = sim_svg_x(s, m->to);
    double ty = y + m->row * SIM_SVG_ROW_H;

    SIM_SVG_USE(s, SIM_SW_FAULT);
    sim_svg_group(s, "class=\"fault\"", "%s", m->tip);
    fprintf(s->f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%d\" "
            "stroke=\"#455a64\" stroke-width=\"1.2\" stroke-dasharray=\"3 3\"/>\n",
            x, ty + 10, x, y_guide_end);
    if (x2 > x + 1)
        sim_svg_rect(s, x, ty + 4, x2 - x, 4, "fill=\"#455a64\"");
    fprintf(s->f, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"#263238\"/>\n",
            x - 5, ty + 2, x + 5, ty + 2, x, ty + 11);
    sim_svg_text(s, x + 7, ty + 12, "small", "start", m->label);
    sim_svg_end(s);
}

void sim_svg_draw_faults(sim_svg *s, int y, int y_guide_end)
{
    for (size_t i = 0; i < s->n_faults; i++)
        draw_fault(s, &s->faults[i], y, y_guide_end);
}
