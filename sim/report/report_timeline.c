/* report_timeline: a run drawn in rows of 60 columns, one lane per
 * client, one for the lock key (one per node, for a lock of several),
 * for a ZooKeeper lock's queue one per place (up to three), and one
 * marking every episode of the verdict, with a legend right under it of
 * every symbol drawn.
 *
 * Eight columns make one lease, whatever the run, so that one scenario
 * drawn for two stages compares column by column. A letter always names
 * a client (the key lane's owners); every other symbol has one meaning,
 * wherever it is drawn. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lanes.h"
#include "report_timeline.h"

/* Lane states, weakest first. A column shows the strongest state of any
 * moment in its time slice, so a short pause is never hidden behind the
 * state around it. */
static const char strength[] = " .=~#|";

static int power(char c)
{
    const char *p = c != '\0' ? strchr(strength, c) : NULL;

    return p != NULL ? (int)(p - strength) : 0;
}

/* Node k's key lane. */
static char *key_lane(const timeline *tl, int k)
{
    return lane(tl, tl->lanes + k);
}

/* Client c's marks of one moment, laid over its lane once it is painted. */
static char *over(const timeline *tl, int c)
{
    return lane(tl, tl->lanes + tl->nodes + 1 + c);
}

static int col(const timeline *tl, int64_t t)
{
    int64_t c = t <= tl->t0 ? 0 : (t - tl->t0) / tl->per_col;

    return c >= tl->width ? tl->width - 1 : (int)c;
}

static void paint(const timeline *tl, char *row, int64_t from, int64_t to,
                  char ch)
{
    for (int c = col(tl, from); c <= col(tl, to); c++)
        if (power(ch) > power(row[c]))
            row[c] = ch;
}

/* A mark of one moment (a crash, a release's answer, a wake) in its own
 * column: the column of its time, or the one after the lane's last mark,
 * so that two marks of one instant both show, in their order. Marks lie
 * over the lane's states, drawn after them. */
static void mark(timeline *tl, int c, int64_t t, char ch, int min_col)
{
    int at = col(tl, t), *next = &tl->next_mark[c];

    if (at < *next || at < min_col) {
        at = *next > min_col ? *next : min_col;
        tl->pushed = 1;
    }
    if (at >= tl->width)
        at = tl->width - 1;
    over(tl, c)[at] = ch;
    *next = at + 1;
}

/* ---- scale -------------------------------------------------------------------- */

/* A round number of ns per column (1, 2, 2.5, 3, 4 or 5 times a power of
 * ten) that fits the run in one row, for a history without its lease. */
static int64_t fit_column_ns(int64_t span)
{
    static const int tenths[] = { 10, 20, 25, 30, 40, 50 };

    for (int64_t base = 1000; base < INT64_MAX / 100; base *= 10)
        for (size_t i = 0; i < sizeof(tenths) / sizeof(tenths[0]); i++)
            if (base * tenths[i] / 10 * COLS >= span)
                return base * tenths[i] / 10;
    return INT64_MAX / COLS;
}

/* Eight columns a lease, or two leases (four, ...) for a run that would
 * need more than MAX_ROWS rows. */
static void choose_scale(timeline *tl, int64_t span, long lease_ms)
{
    tl->lease_ms = lease_ms;
    if (lease_ms <= 0) {
        tl->per_col = fit_column_ns(span > 0 ? span : 1);
        tl->tick = FIT_TICK;
        tl->leases = 0;
        return;
    }
    tl->tick = PER_LEASE;
    tl->leases = 1;
    while (span / (lease_ms * 1000000LL * tl->leases / PER_LEASE) >=
           (int64_t)MAX_ROWS * COLS)
        tl->leases *= 2;
    tl->per_col = lease_ms * 1000000LL * tl->leases / PER_LEASE;
}

/* ---- client lanes --------------------------------------------------------- */

/* A stretch's symbol, strongest last: " .=~#|" (lanes.h's kinds). */
static char stretch_symbol(int kind)
{
    switch (kind) {
    case SIM_LANE_WAIT: return '.';
    case SIM_LANE_HOLD: return '=';
    case SIM_LANE_RELEASE: return '~';
    case SIM_LANE_CS: return '#';
    case SIM_LANE_PAUSE: return '|';
    default: return ' ';
    }
}

/* The marks a moment leaves in its lane: a crash; a release that found
 * the lock lost; an operation whose outcome is unknown; and, where a
 * pause ends, what the client woke into (inside, holding, releasing),
 * at least a column after the pause began so that both show. */
static void moment_mark(timeline *tl, const sim_stretch *s)
{
    if (s->kind == SIM_LANE_KILLED)
        mark(tl, s->client, s->to, '%', 0);
    else if (s->kind == SIM_LANE_RELEASE && s->ended == SIM_EV_RELEASE_NOT_OWNER)
        mark(tl, s->client, s->to, '0', 0);
    else if (s->kind == SIM_LANE_ERROR ||
             (s->kind == SIM_LANE_RELEASE && s->ended == SIM_EV_RELEASE_ERROR))
        mark(tl, s->client, s->to, '/', 0);
    else if (s->kind == SIM_LANE_WOKE && s->wrote >= 0)
        mark(tl, s->client, s->to, stretch_symbol((int)s->wrote), col(tl, s->read) + 1);
}

/* A client cut off from the lock's servers: on the time axis, the rule
 * broken from '[' to ']' (its own lane goes on showing what it did). */
static void cut_mark(timeline *tl, const sim_stretch *s)
{
    int from = col(tl, s->from), to = col(tl, s->to);

    for (int c = from + 1; c < to; c++)
        if (tl->faults[c] == ' ')
            tl->faults[c] = RULE_GAP;
    tl->faults[from] = '[';
    if (to > from)
        tl->faults[to] = ']';
}

/* Each lane's stretches, painted (a column shows the strongest of its
 * moments), then its moments' marks over them, in the order they came:
 * the stretches the run page draws too (lanes.h). */
static void draw_clients(timeline *tl, const sim_event *ev, size_t n, const sim_verdict *v)
{
    sim_lanes l;

    if (sim_lanes_read(&l, ev, n, tl->lanes, tl->end, v) != 0)
        return;
    for (size_t i = 0; i < l.n; i++) {
        const sim_stretch *s = &l.st[i];

        if (stretch_symbol(s->kind) != ' ')
            paint(tl, lane(tl, s->client), s->from, s->to, stretch_symbol(s->kind));
        if (s->kind == SIM_LANE_CUT)
            cut_mark(tl, s);
        moment_mark(tl, s);
    }
    for (int c = 0; c < tl->lanes; c++) {
        const char *marks = over(tl, c);
        char *row = lane(tl, c);

        for (int k = 0; k < tl->width; k++)
            if (marks[k] != ' ')
                row[k] = marks[k];
    }
    sim_lanes_free(&l);
}

/* ---- the key and the anomalies ----------------------------------------------- */

/* A client's letter in the key lane and the queue's: upper case when its
 * key has a TTL, lower case when it has none (it never goes away by
 * itself; a ZooKeeper node goes with its session). */
static char owner_symbol(int owner, int ttl)
{
    if (owner < 0)
        return '?';
    if (owner >= 26)
        return '&';
    return (char)((ttl ? 'A' : 'a') + owner);
}


/* ':' while a node is down: from its death to its restart, or to the
 * run's end. */
static void draw_down(timeline *tl, const sim_event *ev, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t j = i + 1;
        int k = ev[i].node;

        if (ev[i].type != SIM_EV_NODE_DOWN || k >= tl->nodes)
            continue;
        while (j < n && !(ev[j].type == SIM_EV_RESTART && ev[j].node == k))
            j++;
        for (int c = col(tl, ev[i].t_ns); c <= col(tl, j < n ? ev[j].t_ns : tl->end); c++)
            key_lane(tl, k)[c] = ':';
    }
}

/* Each key from its creation to its end, in its node's lane. A column
 * shows the first key that began in it: one that begins where another
 * began already is drawn from the next column, if it is still there
 * then. So a short key is not hidden by the next one, and none is drawn
 * past its end. */
static void draw_key(timeline *tl, const sim_verdict *v, const sim_event *ev,
                     size_t n)
{
    int next[SIM_HISTORY_NODES_MAX] = { 0 };

    for (int k = 0; k < tl->nodes; k++)
        memset(key_lane(tl, k), '_', (size_t)col(tl, tl->end) + 1);
    draw_down(tl, ev, n);
    for (size_t k = 0; k < v->n_keys; k++) {
        const sim_key_span *s = &v->keys[k];
        int64_t to = s->to_ns < tl->end ? s->to_ns : tl->end;
        int from = col(tl, s->from_ns), last = col(tl, to);

        if (s->node >= tl->nodes)
            continue;
        if (from < next[s->node])
            from = next[s->node];
        if (from > last)
            continue;
        for (int c = from; c <= last; c++)
            key_lane(tl, s->node)[c] = owner_symbol(s->owner, tl->t0 + (int64_t)(c + 1) *
                                                    tl->per_col > s->ttl_ns);
        next[s->node] = from + 1;
    }
    /* The moment a node's server lost its keys, drawn over its lane: the
     * old primary's in a failover, a node's own in a restart. */
    for (size_t i = 0; i < n; i++) {
        if (ev[i].node >= tl->nodes)
            continue;
        if (ev[i].type == SIM_EV_FAILOVER &&
            strncmp(ev[i].detail, "promote", 7) == 0)
            key_lane(tl, ev[i].node)[col(tl, ev[i].t_ns)] = '^';
        if (ev[i].type == SIM_EV_RESTART)
            key_lane(tl, ev[i].node)[col(tl, ev[i].t_ns)] = '>';
    }
}

/* ---- the queue --------------------------------------------------------------- */

/* How many waited at any moment of column c's time. */
static int waiting(const timeline *tl, const sim_queue *q, int c, size_t *who)
{
    int64_t from = tl->t0 + (int64_t)c * tl->per_col;

    return sim_queue_at(q, from, from + tl->per_col - 1, who, QUEUE_ROWS);
}

/* v11's waiting nodes under the key lane, a row per place: the first is
 * the next to hold. As many rows as ever waited in one column, up to
 * QUEUE_ROWS; where more wait, the last row shows '$' (not '+', the time
 * axis's mark). */
static void draw_queue(timeline *tl, const sim_event *ev, size_t n, const sim_verdict *v)
{
    size_t who[QUEUE_ROWS];
    int here, last = col(tl, tl->end);
    sim_queue q;

    if (tl->nodes > 1 || sim_lanes_queue(&q, ev, n, tl->end, v) != 0)
        return;
    for (int c = 0; c <= last && q.n > 0; c++)
        if ((here = waiting(tl, &q, c, who)) > tl->queue_rows)
            tl->queue_rows = here < QUEUE_ROWS ? here : QUEUE_ROWS;
    for (int c = 0; c <= last && q.n > 0; c++) {
        here = waiting(tl, &q, c, who);
        for (int p = 0; p < here && p < tl->queue_rows; p++)
            tl->queue[p * (tl->width + 1) + c] =
                p == QUEUE_ROWS - 1 && here > QUEUE_ROWS ? '$' : owner_symbol(q.w[who[p]].client, 0);
    }
    sim_queue_free(&q);
}

/* '}' on the time axis where a node's clock jumped forward, a column on
 * when a cut's mark is there. */
static void draw_jumps(timeline *tl, const sim_event *ev, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int c = col(tl, ev[i].t_ns);

        if (ev[i].type != SIM_EV_CLOCK_JUMP)
            continue;
        if ((tl->faults[c] == '[' || tl->faults[c] == ']') && c + 1 < tl->width) {
            c++;
            tl->pushed = 1;
        }
        tl->faults[c] = '}';
    }
}

/* ! every moment two or more held the lock, * each foreign delete, @ each
 * give-up in a deadlock, = each moment a free lock stalled a waiter. */
static int draw_marks(timeline *tl, const sim_verdict *v)
{
    memset(tl->marks, ' ', (size_t)tl->width);
    for (size_t i = 0; i < v->n_overlaps; i++)
        for (int c = col(tl, v->overlaps[i].from_ns);
             c <= col(tl, v->overlaps[i].to_ns); c++)
            tl->marks[c] = '!';
    for (size_t i = 0; i < v->n_episodes; i++) {
        const sim_episode *e = &v->episodes[i];

        if (e->kind == SIM_ANOM_MD)
            tl->marks[col(tl, e->md.at_ns)] = '*';
        if (e->kind == SIM_ANOM_DL)
            tl->marks[col(tl, e->dl.busy_ns)] = '@';
        if (e->kind == SIM_ANOM_ST)
            for (int c = col(tl, e->st.from_ns); c <= col(tl, e->st.to_ns); c++)
                tl->marks[c] = '-';
    }
    return (v->anomalies & (SIM_ANOM_ME | SIM_ANOM_MD | SIM_ANOM_DL | SIM_ANOM_ST)) != 0;
}

/* ---- printing ---------------------------------------------------------------- */

/* A lane's columns [from, from + COLS): its label, then its text. */
static void put_lane(FILE *out, const char *label, const char *text,
                     int from, int width)
{
    char row[COLS + 1];
    int len = width - from < COLS ? width - from : COLS;

    memcpy(row, text + from, (size_t)len);
    row[len] = '\0';
    fprintf(out, "%-*s", LABEL, label);
    sim_report_trimmed(out, row);
}

static void draw_axis(FILE *out, const timeline *tl, int from)
{
    char labels[COLS + 1], rule[COLS + 1];

    memset(labels, ' ', COLS);
    memset(rule, '-', COLS);
    labels[COLS] = rule[COLS] = '\0';
    for (int c = 0; c < COLS; c += tl->tick) {
        char num[24];
        int k = snprintf(num, sizeof(num), "%g",
                         (double)(from + c) * (double)tl->per_col / 1e6);

        if (k > 0 && c + k <= COLS && k < tl->tick)
            memcpy(labels + c, num, (size_t)k);
        rule[c] = '+';
    }
    for (int c = 0; c < COLS && from + c < tl->width; c++) {
        char f = tl->faults[from + c];

        if (f == RULE_GAP && rule[c] != '+')
            rule[c] = ' ';
        else if (f != ' ' && f != RULE_GAP)
            rule[c] = f;
    }
    fprintf(out, "%-*s", LABEL, "time (ms)");
    sim_report_trimmed(out, labels);
    fprintf(out, "%-*s", LABEL, "");
    sim_report_trimmed(out, rule);
}

/* The columns that hold anything: the run, and marks pushed past it. */
static int used_columns(const timeline *tl)
{
    int used = col(tl, tl->end) + 1;

    for (int c = 0; c < tl->lanes; c++)
        for (int k = used; k < tl->width; k++)
            if (lane(tl, c)[k] != ' ')
                used = k + 1;
    return used;
}

static void draw_rows(FILE *out, const timeline *tl, int marks)
{
    int used = used_columns(tl);

    for (int from = 0; from < used; from += COLS) {
        if (from > 0)
            fputc('\n', out);
        draw_axis(out, tl, from);
        for (int c = 0; c < tl->lanes; c++) {
            char label[LABEL + 1], name[SIM_REPORT_NAME];

            snprintf(label, sizeof(label), "client %s",
                     sim_check_client_name(c, name, sizeof(name)));
            put_lane(out, label, lane(tl, c), from, used);
        }
        for (int k = 0; k < tl->nodes; k++) {
            char label[LABEL + 16];

            snprintf(label, sizeof(label), "node %d", k);
            put_lane(out, tl->nodes > 1 ? label : "lock key", key_lane(tl, k),
                     from, used);
        }
        for (int p = 0; p < tl->queue_rows; p++) {
            char label[LABEL + 16];

            snprintf(label, sizeof(label), "queue %d", p + 1);
            put_lane(out, label, tl->queue + p * (tl->width + 1), from, used);
        }
        if (marks)
            put_lane(out, "anomaly", tl->marks, from, used);
    }
}

/* ---- the whole ------------------------------------------------------------------ */

static int init_timeline(timeline *tl, const sim_event *ev, size_t n,
                         int64_t t0, int clients, long lease_ms, int nodes)
{
    int64_t end = n > 0 ? ev[n - 1].t_ns : t0;
    size_t rows;

    memset(tl, 0, sizeof(*tl));
    tl->t0 = t0;
    tl->end = end > t0 ? end : t0;
    choose_scale(tl, tl->end - t0, lease_ms);
    sim_report_leases(tl->own_leases, sizeof(tl->own_leases), ev, n, lease_ms);
    tl->width = (int)((tl->end - t0) / tl->per_col) + 1 + SLACK;
    for (size_t i = 0; i < n; i++)
        if (ev[i].client >= clients)
            clients = ev[i].client + 1;
    tl->sessions = sim_lanes_sessions(ev, n);
    tl->clients = clients;
    tl->lanes = clients < MAX_LANES ? clients : MAX_LANES;
    tl->nodes = nodes > 1 && nodes <= SIM_HISTORY_NODES_MAX ? nodes : 1;
    rows = 2 * (size_t)tl->lanes + (size_t)tl->nodes + 2 + QUEUE_ROWS;
    tl->cells = malloc(rows * (size_t)(tl->width + 1));
    tl->next_mark = calloc((size_t)tl->lanes + 1, sizeof(*tl->next_mark));
    if (tl->cells == NULL || tl->next_mark == NULL)
        return -1;
    memset(tl->cells, ' ', rows * (size_t)(tl->width + 1));
    tl->key = lane(tl, tl->lanes);
    tl->marks = lane(tl, tl->lanes + tl->nodes);
    tl->faults = lane(tl, 2 * tl->lanes + tl->nodes + 1);
    tl->queue = lane(tl, 2 * tl->lanes + tl->nodes + 2);
    return 0;
}

void sim_report_timeline(FILE *out, const sim_event *ev, size_t n,
                         int64_t t0_ns, int clients, long lease_ms,
                         const sim_verdict *v)
{
    sim_verdict own;
    timeline tl;
    int marks;

    /* Without a verdict, the key lane still needs to know each owner. */
    if (v == NULL)
        sim_check(ev, n, &own);
    if (init_timeline(&tl, ev, n, t0_ns, clients, lease_ms,
                      (v != NULL ? v : &own)->nodes) != 0) {
        fprintf(out, "  (no timeline: out of memory)\n");
    } else {
        draw_clients(&tl, ev, n, v != NULL ? v : &own);
        draw_jumps(&tl, ev, n);
        draw_key(&tl, v != NULL ? v : &own, ev, n);
        draw_queue(&tl, ev, n, v != NULL ? v : &own);
        marks = v != NULL && draw_marks(&tl, v);
        draw_rows(out, &tl, marks);
        sim_report_legend(out, &tl, marks);
    }
    free(tl.cells);
    free(tl.next_mark);
    if (v == NULL)
        sim_verdict_free(&own);
}
