/* report_timeline: a run drawn in rows of 60 columns, one lane per
 * client, one for the lock key (one per node, for a lock of several) and
 * one marking every episode of the verdict, with a legend right under it
 * of every symbol drawn.
 *
 * Eight columns make one lease, whatever the run, so that one scenario
 * drawn for two stages compares column by column. A letter always names
 * a client (the key lane's owners); every other symbol has one meaning,
 * wherever it is drawn. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

#define LABEL 12                        /* "client A    " */
#define COLS (SIM_REPORT_WIDTH - LABEL) /* columns of a row */
#define PER_LEASE 8                     /* columns per lease: a tick each */
#define FIT_TICK 10                     /* columns per tick, lease unknown */
#define MAX_ROWS 3                      /* more: two leases a tick, ... */
#define MAX_LANES 52                    /* A..AZ: more would not fit a page */
#define SLACK 8                         /* columns for marks pushed past the end */

/* Lane states, weakest first. A column shows the strongest state of any
 * moment in its time slice, so a short pause is never hidden behind the
 * state around it. */
static const char strength[] = " .=~#|";

static int power(char c)
{
    const char *p = c != '\0' ? strchr(strength, c) : NULL;

    return p != NULL ? (int)(p - strength) : 0;
}

/* A client's threads, summed: the lane shows the strongest. */
typedef struct lane_state {
    int acquiring;  /* acquires between invoke and outcome */
    int depth;      /* holds open */
    int cs;         /* inside the critical section */
    int releasing;  /* releases between invoke and outcome */
    int paused;
    int dead;
    int pause_col;  /* the column its pause began in */
    int next_mark;  /* the first column a mark of this lane may take */
} lane_state;

typedef struct timeline {
    int64_t t0;       /* column 0 starts here */
    int64_t per_col;  /* ns of run per column */
    int64_t end;      /* the last event: the lanes stop there */
    long lease_ms;    /* 0: unknown */
    int leases;       /* leases per tick (lease known) */
    int tick;         /* columns per tick */
    int width;        /* columns drawn: the run and SLACK */
    int lanes;        /* client lanes drawn */
    int clients;      /* clients in the run: lanes past MAX_LANES are not */
    int nodes;        /* key lanes: one per node of the lock */
    int sessions;     /* the keys are ZooKeeper nodes, bound to sessions */
    char *cells;      /* rows of width + 1: the lanes, the keys, the marks,
                       * then each lane's marks of one moment */
    lane_state *st;
    int64_t *since;   /* when each lane last changed */
    char *key;        /* node k's lane: key + k * (width + 1) */
    char *marks;
    int pushed;       /* a mark took a later column than its moment's */
} timeline;

static char *lane(const timeline *tl, int c)
{
    return tl->cells + (size_t)c * (size_t)(tl->width + 1);
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
    lane_state *s = &tl->st[c];
    int at = col(tl, t);

    if (at < s->next_mark || at < min_col) {
        at = s->next_mark > min_col ? s->next_mark : min_col;
        tl->pushed = 1;
    }
    if (at >= tl->width)
        at = tl->width - 1;
    over(tl, c)[at] = ch;
    s->next_mark = at + 1;
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

static char client_symbol(const lane_state *s)
{
    if (s->dead)
        return ' ';
    if (s->paused)
        return '|';
    return s->cs > 0 ? '#' : s->releasing > 0 ? '~' : s->depth > 0 ? '='
           : s->acquiring > 0 ? '.' : ' ';
}

static void lane_event(lane_state *s, int type)
{
    switch (type) {
    case SIM_EV_ACQUIRE_INVOKE: s->acquiring++; break;
    case SIM_EV_ACQUIRE_OK: s->acquiring--; s->depth++; break;
    case SIM_EV_ACQUIRE_BUSY:
    case SIM_EV_ACQUIRE_ERROR: s->acquiring--; break;
    case SIM_EV_CS_ENTER: s->cs++; break;
    case SIM_EV_CS_EXIT: s->cs--; break;
    case SIM_EV_RELEASE_INVOKE:
        s->releasing++;
        if (s->depth > 0)
            s->depth--;
        break;
    case SIM_EV_RELEASE_OK:
    case SIM_EV_RELEASE_NOT_OWNER:
    case SIM_EV_RELEASE_ERROR: s->releasing--; break;
    case SIM_EV_PAUSE_BEGIN: s->paused = 1; break;
    case SIM_EV_PAUSE_END: s->paused = 0; break;
    default: break;
    }
}

/* The marks an event leaves in its lane: a crash; a release that found
 * the lock lost; an operation whose outcome is unknown; and, where a
 * pause ends, what the client woke into (inside, holding, releasing),
 * at least a column after the pause began so that both show. */
static void client_lane_event(timeline *tl, const sim_event *e)
{
    lane_state *s = &tl->st[e->client];

    if (s->dead)
        return;
    lane_event(s, e->type);
    switch (e->type) {
    case SIM_EV_CRASH:
        s->dead = 1;
        mark(tl, e->client, e->t_ns, '%', 0);
        break;
    case SIM_EV_RELEASE_NOT_OWNER:
        mark(tl, e->client, e->t_ns, '0', 0);
        break;
    case SIM_EV_ACQUIRE_ERROR:
    case SIM_EV_RELEASE_ERROR:
        mark(tl, e->client, e->t_ns, '/', 0);
        break;
    case SIM_EV_PAUSE_BEGIN:
        s->pause_col = col(tl, e->t_ns);
        break;
    case SIM_EV_PAUSE_END:
        if (client_symbol(s) != ' ')
            mark(tl, e->client, e->t_ns, client_symbol(s), s->pause_col + 1);
        break;
    default:
        break;
    }
}

/* Each lane is painted a stretch at a time: from its last change to the
 * next, in the symbol it showed meanwhile; then the event's marks. */
static void draw_clients(timeline *tl, const sim_event *ev, size_t n)
{
    for (int c = 0; c < tl->lanes; c++)
        tl->since[c] = tl->t0;
    for (size_t i = 0; i < n; i++) {
        int c = ev[i].client;
        char ch;

        if (c < 0 || c >= tl->lanes)
            continue;
        if ((ch = client_symbol(&tl->st[c])) != ' ')
            paint(tl, lane(tl, c), tl->since[c], ev[i].t_ns, ch);
        tl->since[c] = ev[i].t_ns;
        client_lane_event(tl, &ev[i]);
    }
    for (int c = 0; c < tl->lanes; c++) {
        const char *marks = over(tl, c);
        char ch = client_symbol(&tl->st[c]), *row = lane(tl, c);

        if (ch != ' ')
            paint(tl, row, tl->since[c], tl->end, ch);
        for (int k = 0; k < tl->width; k++)
            if (marks[k] != ' ')
                row[k] = marks[k];
    }
}

/* ---- the key and the anomalies ----------------------------------------------- */

/* Upper case: the owner's key has a TTL; lower case: it has none, and
 * will never go away by itself. */
static char key_symbol(const sim_key_span *k, int ttl)
{
    if (k->owner < 0)
        return '?';
    if (k->owner >= 26)
        return '&';
    return (char)((ttl ? 'A' : 'a') + k->owner);
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
            key_lane(tl, s->node)[c] = key_symbol(s, tl->t0 + (int64_t)(c + 1) *
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

/* ! every moment two or more held the lock, * each foreign delete, @ each
 * give-up in a deadlock. */
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
    }
    return (v->anomalies & (SIM_ANOM_ME | SIM_ANOM_MD | SIM_ANOM_DL)) != 0;
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
        if (marks)
            put_lane(out, "anomaly", tl->marks, from, used);
    }
}

/* ---- the legend ---------------------------------------------------------------- */

typedef struct symbol {
    char ch;
    const char *means;
} symbol;

static const symbol client_symbols[] = {
    { '.', "waiting" }, { '=', "holding the lock" },
    { '#', "in its critical section" }, { '~', "releasing" },
    { '|', "paused (SIGSTOP)" }, { '%', "crashed (SIGKILL)" },
    { '0', "its release returned NOT_OWNER" },
    { '/', "its acquire or release ended in an error" }, { 0, NULL } };
static const symbol key_symbols[] = {
    { '_', "no key" }, { '?', "a key whose maker cannot be named" },
    { '&', "the key of a client past Z" },
    { '^', "failover: the new primary has no key" },
    { '>', "restart: the node came back empty" },
    { ':', "the node is down" }, { 0, NULL } };
static const symbol mark_symbols[] = {
    { '!', "two holders" }, { '*', "a lock deleted by a non-owner" },
    { '@', "a waiter gave up: deadlock" }, { 0, NULL } };

/* Items side by side, wrapped under the first; "" ends them. *left is
 * the lane label column's text: "legend" on the legend's first line. */
static void put_items(FILE *out, const char **left, const char *label,
                      const char *const *items)
{
    int at = fprintf(out, "%-*s%-10s", LABEL, *left, label), start = at;

    *left = "";
    for (; **items != '\0'; items++) {
        int len = (int)strlen(*items);

        if (at > start && at + 2 + len > SIM_REPORT_WIDTH) {
            fprintf(out, "\n%*s", start, "");
            at = start;
        }
        at += fprintf(out, "%s%s", at > start ? "  " : "", *items);
    }
    fputc('\n', out);
}

/* The symbols of a table that are in text (n bytes), "c means" each,
 * after first (NULL: none). */
static void legend_group(FILE *out, const char **left, const char *label,
                         const symbol *table, const char *text, size_t n,
                         const char *first)
{
    char items[16][64];
    const char *list[17];
    int k = 0;

    if (first != NULL)
        snprintf(items[k++], sizeof(items[0]), "%s", first);
    for (; table->ch != 0; table++)
        if (memchr(text, table->ch, n) != NULL)
            snprintf(items[k++], sizeof(items[0]), "%c %s", table->ch,
                     table->means);
    for (int i = 0; i < k; i++)
        list[i] = items[i];
    list[k] = "";
    if (k > 0)
        put_items(out, left, label, list);
}

static void legend_key(FILE *out, const char **left, const timeline *tl)
{
    /* Every node's lane, one after the other: one text to look in. */
    size_t size = (size_t)tl->nodes * (size_t)(tl->width + 1);
    const char *label = tl->nodes > 1 ? "nodes:" : "lock key:";
    const char *letters[3];
    int n = 0, upper = 0, lower = 0;

    for (size_t c = 0; c < size; c++) {
        upper |= tl->key[c] >= 'A' && tl->key[c] <= 'Z';
        lower |= tl->key[c] >= 'a' && tl->key[c] <= 'z';
    }
    if (upper)
        letters[n++] = "A-Z that client's key, with a TTL";
    if (lower)
        letters[n++] = tl->sessions ? "a-z that client's node: it goes with its session"
                                    : "a-z that client's key, no TTL: it never expires";
    letters[n] = "";
    if (n > 0)
        put_items(out, left, label, letters);
    legend_group(out, left, n > 0 ? "" : label, key_symbols, tl->key, size,
                 NULL);
}

/* What a column is worth: "one column is 37.5 ms: 8 columns, from one +
 * to the next, are one 300 ms lease". */
static void legend_scale(FILE *out, const timeline *tl)
{
    char line[SIM_REPORT_SENTENCE], worth[128];
    long end = sim_report_ms(tl->end, tl->t0);

    if (tl->leases == 0)
        sim_report_put(worth, sizeof(worth), "(the lease is not known)");
    else if (tl->leases == 1)
        sim_report_put(worth, sizeof(worth), ": %d columns, from one + to "
                       "the next, are one %ld ms lease", tl->tick,
                       tl->lease_ms);
    else
        sim_report_put(worth, sizeof(worth), ": %d columns, from one + to "
                       "the next, are %d leases of %ld ms (a run this long "
                       "does not fit %d rows at one lease)", tl->tick,
                       tl->leases, tl->lease_ms, MAX_ROWS);
    sim_report_put(line, sizeof(line), "one column is %g ms%s%s; the run ends "
                   "at %ld ms", (double)tl->per_col / 1e6,
                   worth[0] == ':' ? "" : " ", worth, end);
    fprintf(out, "%-*s", LABEL, "");
    sim_report_wrapped(out, line, LABEL, LABEL, SIM_REPORT_WIDTH);
}

static void draw_legend(FILE *out, const timeline *tl, int marks)
{
    const char *left = "legend";
    char drawn[16];
    size_t k = 0;

    /* Which client symbols appear in any lane. */
    for (const symbol *s = client_symbols; s->ch != 0; s++)
        for (int c = 0; c < tl->lanes; c++)
            if (memchr(lane(tl, c), s->ch, (size_t)tl->width) != NULL) {
                drawn[k++] = s->ch;
                break;
            }
    legend_group(out, &left, "clients:", client_symbols, drawn, k,
                 "(blank) idle");
    legend_key(out, &left, tl);
    if (marks)
        legend_group(out, &left, "anomaly:", mark_symbols, tl->marks,
                     (size_t)tl->width, NULL);
    fprintf(out, "%-*sa letter always names a client; a column of the key "
            "lane\n%-*sshows the first key made in it\n", LABEL, "", LABEL,
            "");
    if (tl->pushed)
        fprintf(out, "%-*stwo marks of one moment: the later is drawn a "
                "column on\n", LABEL, "");
    if (tl->clients > tl->lanes)
        fprintf(out, "%-*s%d more clients are not drawn\n", LABEL, "",
                tl->clients - tl->lanes);
    legend_scale(out, tl);
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
    tl->width = (int)((tl->end - t0) / tl->per_col) + 1 + SLACK;
    for (size_t i = 0; i < n; i++) {
        if (ev[i].client >= clients)
            clients = ev[i].client + 1;
        tl->sessions |= ev[i].type == SIM_EV_KEY && (strcmp(ev[i].detail, "create") == 0 ||
                                                     strcmp(ev[i].detail, "first") == 0);
    }
    tl->clients = clients;
    tl->lanes = clients < MAX_LANES ? clients : MAX_LANES;
    tl->nodes = nodes > 1 && nodes <= SIM_HISTORY_NODES_MAX ? nodes : 1;
    rows = 2 * (size_t)tl->lanes + (size_t)tl->nodes + 1;
    tl->cells = malloc(rows * (size_t)(tl->width + 1));
    tl->st = calloc((size_t)tl->lanes + 1, sizeof(*tl->st));
    tl->since = calloc((size_t)tl->lanes + 1, sizeof(*tl->since));
    if (tl->cells == NULL || tl->st == NULL || tl->since == NULL)
        return -1;
    memset(tl->cells, ' ', rows * (size_t)(tl->width + 1));
    tl->key = lane(tl, tl->lanes);
    tl->marks = lane(tl, tl->lanes + tl->nodes);
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
        draw_clients(&tl, ev, n);
        draw_key(&tl, v != NULL ? v : &own, ev, n);
        marks = v != NULL && draw_marks(&tl, v);
        draw_rows(out, &tl, marks);
        draw_legend(out, &tl, marks);
    }
    free(tl.cells);
    free(tl.st);
    free(tl.since);
    if (v == NULL)
        sim_verdict_free(&own);
}
