/* report_timeline: a run drawn in 72 columns, one lane per client, one
 * for the lock key and one marking every episode of the verdict, with a
 * legend right under it that explains its few symbols. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"

#define LABEL 12                        /* "client A    " */
#define COLS (SIM_REPORT_WIDTH - LABEL) /* one column per time slice */
#define TICK 10                         /* columns between time labels */
#define MAX_LANES 52                    /* A..AZ: more would not fit a page */

/* Lane symbols, weakest first. A column shows the strongest state of any
 * moment in its time slice, so a short pause or a crash is never hidden
 * behind the state around it. */
static const char strength[] = " .=r#PX";

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
} lane_state;

typedef struct timeline {
    int64_t t0;       /* column 0 starts here */
    int64_t per_col;  /* ns of run per column */
    int64_t end;      /* the last event: the lanes stop there */
    int lanes;        /* client lanes drawn */
    int clients;      /* clients in the run: lanes past MAX_LANES are not */
    char (*lane)[COLS + 1];
    lane_state *st;
    int64_t *since;   /* when each lane last changed */
    char key[COLS + 1];
    char marks[COLS + 1];
    int failover;     /* a replica was promoted: the legend says '|' */
    int past_z;       /* a key of a client past Z: the legend says '+' */
} timeline;

static int col(const timeline *tl, int64_t t)
{
    int64_t c = t <= tl->t0 ? 0 : (t - tl->t0) / tl->per_col;

    return c >= COLS ? COLS - 1 : (int)c;
}

static void paint(const timeline *tl, char *lane, int64_t from, int64_t to,
                  char ch)
{
    for (int c = col(tl, from); c <= col(tl, to); c++)
        if (power(ch) > power(lane[c]))
            lane[c] = ch;
}

/* A round number of ns per column (1, 2, 2.5, 3, 4 or 5 times a power of
 * ten) that fits the run in COLS columns, so the time labels are round
 * too; 3 puts a label on each multiple of the default 300 ms lease. */
static int64_t column_ns(int64_t span)
{
    static const int tenths[] = { 10, 20, 25, 30, 40, 50 };

    for (int64_t base = 1000; base < INT64_MAX / 100; base *= 10)
        for (size_t i = 0; i < sizeof(tenths) / sizeof(tenths[0]); i++)
            if (base * tenths[i] / 10 * COLS >= span)
                return base * tenths[i] / 10;
    return INT64_MAX / COLS;
}

/* ---- client lanes --------------------------------------------------------- */

static char client_symbol(const lane_state *s)
{
    if (s->dead)
        return ' ';
    if (s->paused)
        return 'P';
    return s->cs > 0 ? '#' : s->releasing > 0 ? 'r' : s->depth > 0 ? '='
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

static void client_lane_event(timeline *tl, const sim_event *e)
{
    int c = e->client;

    if (c < 0 || c >= tl->lanes || tl->st[c].dead)
        return;
    if (e->type == SIM_EV_CRASH) {
        tl->st[c].dead = 1;
        paint(tl, tl->lane[c], e->t_ns, e->t_ns, 'X');
    } else {
        lane_event(&tl->st[c], e->type);
    }
}

/* Each lane is painted a stretch at a time: from its last change to the
 * next, in the symbol it showed meanwhile. */
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
            paint(tl, tl->lane[c], tl->since[c], ev[i].t_ns, ch);
        tl->since[c] = ev[i].t_ns;
        client_lane_event(tl, &ev[i]);
    }
    for (int c = 0; c < tl->lanes; c++) {
        char ch = client_symbol(&tl->st[c]);

        if (ch != ' ')
            paint(tl, tl->lane[c], tl->since[c], tl->end, ch);
    }
}

/* ---- the key and the anomalies ----------------------------------------------- */

/* Upper case: the owner's key has a TTL; lower case: it has none, and
 * will never go away by itself. */
static char key_symbol(timeline *tl, const sim_key_span *k, int ttl)
{
    if (k->owner < 0)
        return '?';
    if (k->owner >= 26) {
        tl->past_z = 1;
        return '+';
    }
    return (char)((ttl ? 'A' : 'a') + k->owner);
}

/* Each key from its creation to its end; a later key overwrites an
 * earlier one in a shared column (the column's last word). */
static void draw_key(timeline *tl, const sim_verdict *v, const sim_event *ev,
                     size_t n)
{
    memset(tl->key, ' ', COLS);
    memset(tl->key, '-', (size_t)col(tl, tl->end) + 1);
    for (size_t k = 0; k < v->n_keys; k++) {
        const sim_key_span *s = &v->keys[k];
        int64_t to = s->to_ns < tl->end ? s->to_ns : tl->end;

        for (int c = col(tl, s->from_ns); c <= col(tl, to); c++)
            tl->key[c] = key_symbol(tl, s, tl->t0 + (int64_t)(c + 1) *
                                    tl->per_col > s->ttl_ns);
    }
    /* The moment the old primary's keys were lost, drawn over the key. */
    for (size_t i = 0; i < n; i++)
        if (ev[i].type == SIM_EV_FAILOVER &&
            strncmp(ev[i].detail, "promote", 7) == 0) {
            tl->key[col(tl, ev[i].t_ns)] = '|';
            tl->failover = 1;
        }
}

/* ! every moment two or more held the lock, * each foreign delete, D each
 * give-up in a deadlock. */
static int draw_marks(timeline *tl, const sim_verdict *v)
{
    memset(tl->marks, ' ', COLS);
    for (size_t i = 0; i < v->n_overlaps; i++)
        for (int c = col(tl, v->overlaps[i].from_ns);
             c <= col(tl, v->overlaps[i].to_ns); c++)
            tl->marks[c] = '!';
    for (size_t i = 0; i < v->n_episodes; i++) {
        const sim_episode *e = &v->episodes[i];

        if (e->kind == SIM_ANOM_MD)
            tl->marks[col(tl, e->md.at_ns)] = '*';
        if (e->kind == SIM_ANOM_DL)
            tl->marks[col(tl, e->dl.busy_ns)] = 'D';
    }
    return (v->anomalies & (SIM_ANOM_ME | SIM_ANOM_MD | SIM_ANOM_DL)) != 0;
}

/* ---- printing ---------------------------------------------------------------- */

/* A lane: its label in the first LABEL columns, then its text. */
static void put_lane(FILE *out, const char *label, const char *text)
{
    fprintf(out, "%-*s", LABEL, label);
    sim_report_trimmed(out, text);
}

static void draw_axis(FILE *out, const timeline *tl)
{
    char labels[COLS + 1], rule[COLS + 1];

    memset(labels, ' ', COLS);
    memset(rule, '-', COLS);
    labels[COLS] = rule[COLS] = '\0';
    for (int c = 0; c < COLS; c += TICK) {
        char num[16];
        int k = snprintf(num, sizeof(num), "%g",
                         (double)c * (double)tl->per_col / 1e6);

        if (k > 0 && c + k <= COLS)
            memcpy(labels + c, num, (size_t)k);
        rule[c] = '+';
    }
    put_lane(out, "time (ms)", labels);
    put_lane(out, "", rule);
}

static void draw_legend(FILE *out, const timeline *tl, int marks)
{
    put_lane(out, "legend", ". waiting  = holding  # critical section  "
             "r releasing");
    put_lane(out, "", "P paused   X crashed  (blank) idle");
    put_lane(out, "", "lock key: B = B's key with a TTL, b = without TTL, "
             "- none");
    if (tl->past_z)
        put_lane(out, "", "          + the key of a client past Z");
    if (tl->failover)
        put_lane(out, "", "          | failover: the replica became primary");
    if (marks)
        put_lane(out, "", "anomaly: ! two holders  * another's lock deleted  "
                 "D deadlock");
    if (tl->clients > tl->lanes)
        fprintf(out, "%-*s%d more clients are not drawn\n", LABEL, "",
                tl->clients - tl->lanes);
    fprintf(out, "%-*sone column = %g ms; the run ends at %ld ms\n", LABEL, "",
            (double)tl->per_col / 1e6, sim_report_ms(tl->end, tl->t0));
}

static int init_timeline(timeline *tl, const sim_event *ev, size_t n,
                         int64_t t0, int clients)
{
    int64_t end = n > 0 ? ev[n - 1].t_ns : t0;

    memset(tl, 0, sizeof(*tl));
    tl->t0 = t0;
    tl->end = end;
    tl->per_col = column_ns(end > t0 ? end - t0 : 1);
    for (size_t i = 0; i < n; i++)
        if (ev[i].client >= clients)
            clients = ev[i].client + 1;
    tl->clients = clients;
    tl->lanes = clients < MAX_LANES ? clients : MAX_LANES;
    tl->lane = malloc((size_t)(tl->lanes + 1) * sizeof(*tl->lane));
    tl->st = calloc((size_t)tl->lanes + 1, sizeof(*tl->st));
    tl->since = calloc((size_t)tl->lanes + 1, sizeof(*tl->since));
    if (tl->lane == NULL || tl->st == NULL || tl->since == NULL)
        return -1;
    for (int c = 0; c < tl->lanes; c++)
        memset(tl->lane[c], ' ', COLS);
    return 0;
}

static void print_timeline(FILE *out, timeline *tl, const sim_event *ev,
                           size_t n, const sim_verdict *v, int marked)
{
    int marks;

    draw_clients(tl, ev, n);
    draw_key(tl, v, ev, n);
    marks = marked && draw_marks(tl, v);
    draw_axis(out, tl);
    for (int c = 0; c < tl->lanes; c++) {
        char label[LABEL + 1], name[SIM_REPORT_NAME];

        snprintf(label, sizeof(label), "client %s",
                 sim_check_client_name(c, name, sizeof(name)));
        tl->lane[c][COLS] = '\0';
        put_lane(out, label, tl->lane[c]);
    }
    tl->key[COLS] = tl->marks[COLS] = '\0';
    put_lane(out, "lock key", tl->key);
    if (marks)
        put_lane(out, "anomaly", tl->marks);
    draw_legend(out, tl, marks);
}

void sim_report_timeline(FILE *out, const sim_event *ev, size_t n,
                         int64_t t0_ns, int clients, const sim_verdict *v)
{
    sim_verdict own;
    timeline tl;

    /* Without a verdict, the key lane still needs to know each owner. */
    if (v == NULL)
        sim_check(ev, n, &own);
    if (init_timeline(&tl, ev, n, t0_ns, clients) != 0)
        fprintf(out, "  (no timeline: out of memory)\n");
    else
        print_timeline(out, &tl, ev, n, v != NULL ? v : &own, v != NULL);
    free(tl.lane);
    free(tl.st);
    free(tl.since);
    if (v == NULL)
        sim_verdict_free(&own);
}
