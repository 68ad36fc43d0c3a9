/* report: a run's title, verdict and timeline, and the fault matrix.
 *
 * Students read this on a projector, so it favours sentences with names
 * and times over codes, and a timeline whose few symbols a legend explains
 * right under it. Everything fits in 72 columns except the matrix's
 * evidence, one line per anomaly in 78 (an 80-column terminal). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define WIDTH 72                    /* the whole line */
#define LABEL 12                    /* "client A    " */
#define COLS (WIDTH - LABEL)        /* one column per time slice */
#define TICK 10                     /* columns between time labels */
#define SENTENCE 256                /* one anomaly in words */
#define MAX_LANES SIM_CHECK_MAX_CLIENTS

/* ---- names and times ----------------------------------------------------- */

static char letter(int client)
{
    return client >= 0 && client < 26 ? (char)('A' + client) : '?';
}

/* "B", or "B:1" for a thread other than the main one. */
static const char *who(char *buf, size_t len, int client, int thread)
{
    if (thread == 0)
        snprintf(buf, len, "%c", letter(client));
    else
        snprintf(buf, len, "%c:%d", letter(client), thread);
    return buf;
}

static long ms(int64_t t_ns, int64_t t0_ns)
{
    return (long)((t_ns - t0_ns) / 1000000);
}

static const char *plural(long long n, const char *one, const char *many)
{
    return n == 1 || n == -1 ? one : many;
}

static void put_wrapped(FILE *out, const char *text, int at, int hang,
                        int width);

/* ---- sentences ----------------------------------------------------------- */

static void me_sentence(char *buf, size_t len, const sim_verdict *v,
                        int64_t t0)
{
    const sim_me_evidence *me = &v->me;
    char a[16], b[16];

    snprintf(buf, len, "clients %s and %s both held the lock in "
             "[%ld ms, %ld ms]", who(a, sizeof(a), me->a, me->a_thread),
             who(b, sizeof(b), me->b, me->b_thread), ms(me->from_ns, t0),
             ms(me->to_ns, t0));
}

static void md_sentence(char *buf, size_t len, const sim_verdict *v,
                        int64_t t0)
{
    const sim_md_evidence *md = &v->md;
    char x[16], y[16], z[16], then[SENTENCE / 2] = "";

    who(y, sizeof(y), md->owner, md->owner_thread);
    /* The harm done: someone got in while the owner was still working. */
    if (md->intruder != SIM_NO_CLIENT)
        snprintf(then, sizeof(then), "; client %s took the lock at %ld ms "
                 "while %s was still inside", who(z, sizeof(z), md->intruder,
                 md->intruder_thread), ms(md->intruder_ns, t0), y);
    if (md->deleter == SIM_NO_CLIENT)
        snprintf(buf, len, "client %s's lock was deleted at %ld ms while no "
                 "client was releasing; %s had held it since %ld ms%s", y,
                 ms(md->at_ns, t0), y, ms(md->owner_since_ns, t0), then);
    else
        snprintf(buf, len, "client %s's release deleted client %s's lock at "
                 "%ld ms; %s had held it since %ld ms%s",
                 who(x, sizeof(x), md->deleter, md->deleter_thread), y,
                 ms(md->at_ns, t0), y, ms(md->owner_since_ns, t0), then);
}

static void dl_sentence(char *buf, size_t len, const sim_verdict *v,
                        int64_t t0)
{
    const sim_dl_evidence *dl = &v->dl;
    char w[16];
    long waited = ms(dl->busy_ns, dl->invoke_ns);

    who(w, sizeof(w), dl->waiter, dl->waiter_thread);
    if (dl->self)
        snprintf(buf, len, "client %s waited %ld ms for the lock it already "
                 "held since %ld ms and gave up at %ld ms: self-deadlock", w,
                 waited, ms(dl->held_since_ns, t0), ms(dl->busy_ns, t0));
    else
        snprintf(buf, len, "client %s waited %ld ms and gave up at %ld ms "
                 "while crashed client %c's key had no TTL: deadlock (%c "
                 "crashed at %ld ms %s)", w, waited, ms(dl->busy_ns, t0),
                 letter(dl->crashed), letter(dl->crashed),
                 ms(dl->crash_ns, t0), dl->crashed_acquiring
                 ? "inside its acquire, after its key was written"
                 : "while holding the lock");
}

/* ---- the same evidence in short, for the matrix ------------------------- */

/* "A and B held the lock at once in [762 ms, 910 ms]". */
static void me_brief(char *buf, size_t len, const sim_verdict *v, int64_t t0)
{
    const sim_me_evidence *me = &v->me;
    char a[16], b[16];

    snprintf(buf, len, "%s and %s held the lock at once in [%ld ms, %ld ms]",
             who(a, sizeof(a), me->a, me->a_thread),
             who(b, sizeof(b), me->b, me->b_thread), ms(me->from_ns, t0),
             ms(me->to_ns, t0));
}

/* "A deleted B's lock at 910 ms; C got in at 914 ms". */
static void md_brief(char *buf, size_t len, const sim_verdict *v, int64_t t0)
{
    const sim_md_evidence *md = &v->md;
    char x[16], y[16], z[16], then[SENTENCE / 2] = "";

    who(y, sizeof(y), md->owner, md->owner_thread);
    if (md->intruder != SIM_NO_CLIENT)
        snprintf(then, sizeof(then), "; %s got in at %ld ms",
                 who(z, sizeof(z), md->intruder, md->intruder_thread),
                 ms(md->intruder_ns, t0));
    if (md->deleter == SIM_NO_CLIENT)
        snprintf(buf, len, "%s's lock was deleted at %ld ms, nobody "
                 "releasing%s", y, ms(md->at_ns, t0), then);
    else
        snprintf(buf, len, "%s deleted %s's lock at %ld ms%s",
                 who(x, sizeof(x), md->deleter, md->deleter_thread), y,
                 ms(md->at_ns, t0), then);
}

/* "B gave up at 1310 ms: crashed A's key had no TTL". */
static void dl_brief(char *buf, size_t len, const sim_verdict *v, int64_t t0)
{
    const sim_dl_evidence *dl = &v->dl;
    char w[16];

    who(w, sizeof(w), dl->waiter, dl->waiter_thread);
    if (dl->self)
        snprintf(buf, len, "%s gave up at %ld ms waiting for the lock it "
                 "held", w, ms(dl->busy_ns, t0));
    else
        snprintf(buf, len, "%s gave up at %ld ms: crashed %c's key had no "
                 "TTL", w, ms(dl->busy_ns, t0), letter(dl->crashed));
}

/* "stock 100 -> 98 after 3 sales: 1 update lost". */
static void stock_sentence(char *buf, size_t len, const sim_verdict *v)
{
    const sim_damage_evidence *s = &v->stock;
    int k = snprintf(buf, len, "stock %lld -> %lld after %lld %s: ",
                     (long long)s->initial, (long long)s->final,
                     (long long)s->sold, plural(s->sold, "sale", "sales"));

    if (k < 0 || (size_t)k >= len)
        return;
    buf += k;
    len -= (size_t)k;
    if (s->lost > 0)
        k = snprintf(buf, len, "%lld %s lost", (long long)s->lost,
                     plural(s->lost, "update", "updates"));
    else if (s->lost < 0)
        k = snprintf(buf, len, "the stock fell %lld more than the sales "
                     "recorded", (long long)-s->lost);
    else
        k = snprintf(buf, len, "no update lost");
    if (s->oversold > 0 && k >= 0 && (size_t)k < len)
        snprintf(buf + k, len - (size_t)k, ", oversold by %lld",
                 (long long)s->oversold);
}

typedef void sentence_fn(char *buf, size_t len, const sim_verdict *v,
                         int64_t t0);

static void damage_sentence(char *buf, size_t len, const sim_verdict *v,
                            int64_t t0)
{
    (void)t0;
    stock_sentence(buf, len, v);
}

/* The numbers, in parentheses: they back the anomalies above them. */
static void damage_brief(char *buf, size_t len, const sim_verdict *v,
                         int64_t t0)
{
    char s[SENTENCE];

    (void)t0;
    stock_sentence(s, sizeof(s), v);
    snprintf(buf, len, "(%s)", s);
}

/* The anomalies in the order the report tells them. */
static const struct {
    unsigned bit;
    const char *heading;  /* what the sentence proves */
    sentence_fn *say;     /* the sentence of a run's verdict */
    sentence_fn *brief;   /* the matrix's line: short, names as letters */
} told[] = {
    { SIM_ANOM_ME, "mutual exclusion lost", me_sentence, me_brief },
    { SIM_ANOM_MD, "lock deleted by a non-owner", md_sentence, md_brief },
    { SIM_ANOM_DL, "deadlock", dl_sentence, dl_brief },
    { SIM_ANOM_DAMAGE, "resource damaged", damage_sentence, damage_brief },
};
#define TOLD (sizeof(told) / sizeof(told[0]))

void sim_report_evidence(char *buf, size_t len, const sim_verdict *v,
                         int64_t t0_ns)
{
    size_t used = 0;

    if (len == 0)
        return;
    buf[0] = '\0';
    for (size_t i = 0; i < TOLD && used < len; i++) {
        char s[SENTENCE];
        int k;

        if (!(v->anomalies & told[i].bit))
            continue;
        told[i].say(s, sizeof(s), v, t0_ns);
        k = snprintf(buf + used, len - used, "%s%s: %s", used ? "; " : "",
                     sim_anomaly_name(told[i].bit), s);
        used = k < 0 ? len : used + (size_t)k;
    }
}

void sim_report_verdict(FILE *out, const sim_verdict *v, int64_t t0_ns)
{
    char s[SENTENCE], line[SENTENCE + 64];

    for (size_t i = 0; i < TOLD; i++) {
        if (!(v->anomalies & told[i].bit))
            continue;
        told[i].say(s, sizeof(s), v, t0_ns);
        /* The DL sentence ends with its own word "deadlock". */
        if (told[i].bit == SIM_ANOM_DL)
            snprintf(line, sizeof(line), "%s", s);
        else
            snprintf(line, sizeof(line), "%s: %s", told[i].heading, s);
        fputs("  ", out);
        put_wrapped(out, line, 2, 4, WIDTH);
    }
    if ((v->anomalies & SIM_ANOM_CELLS) == 0)
        fprintf(out, "  no anomaly: one holder at a time, no lock deleted by "
                "another, no deadlock\n");
    if (v->stock_known && !(v->anomalies & SIM_ANOM_DAMAGE)) {
        stock_sentence(s, sizeof(s), v);
        fprintf(out, "  %s\n", s);
    }
}

void sim_report_title(FILE *out, const sim_run_info *run)
{
    char line[SIM_NAME_LEN * 2 + SIM_WHAT_LEN + 64];

    snprintf(line, sizeof(line), "%s / %s%s%s (lease %ld ms, seed %lu)",
             run->stage[0] ? run->stage : "?",
             run->scenario[0] ? run->scenario : "?", run->what[0] ? ": " : "",
             run->what, run->lease_ms, run->seed);
    put_wrapped(out, line, 0, 4, WIDTH);
}

/* ---- the timeline -------------------------------------------------------- */

/* Lane symbols, weakest first. A column shows the strongest state of any
 * moment in its time slice, so a short pause or a crash is never hidden
 * behind the state around it. */
static const char strength[] = " .=r#PX";

static int power(char c)
{
    const char *p = c != '\0' ? strchr(strength, c) : NULL;

    return p != NULL ? (int)(p - strength) : 0;
}

typedef struct thread_state {
    int acquiring;  /* between acquire-invoke and its outcome */
    int depth;      /* holds open */
    int cs;         /* inside the critical section */
    int releasing;  /* between release-invoke and its outcome */
} thread_state;

typedef struct timeline {
    int64_t t0;       /* column 0 starts here */
    int64_t per_col;  /* ns of run per column */
    int64_t end;      /* the last event: the lanes stop there */
    int lanes;        /* client lanes drawn */
    char lane[MAX_LANES][COLS + 1];
    char key[COLS + 1];
    char marks[COLS + 1];
    thread_state th[MAX_LANES][SIM_CHECK_MAX_THREADS];
    int paused[MAX_LANES];
    int dead[MAX_LANES];
    int failover;     /* a replica was promoted: the legend says '|' */
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

static char client_symbol(const timeline *tl, int c)
{
    int acq = 0, hold = 0, cs = 0, rel = 0;

    if (tl->dead[c])
        return ' ';
    if (tl->paused[c])
        return 'P';
    for (int t = 0; t < SIM_CHECK_MAX_THREADS; t++) {
        acq |= tl->th[c][t].acquiring;
        hold |= tl->th[c][t].depth > 0;
        cs |= tl->th[c][t].cs;
        rel |= tl->th[c][t].releasing;
    }
    return cs ? '#' : rel ? 'r' : hold ? '=' : acq ? '.' : ' ';
}

static void thread_event(thread_state *s, int type)
{
    switch (type) {
    case SIM_EV_ACQUIRE_INVOKE: s->acquiring = 1; break;
    case SIM_EV_ACQUIRE_OK: s->acquiring = 0; s->depth++; break;
    case SIM_EV_ACQUIRE_BUSY:
    case SIM_EV_ACQUIRE_ERROR: s->acquiring = 0; break;
    case SIM_EV_CS_ENTER: s->cs = 1; break;
    case SIM_EV_CS_EXIT: s->cs = 0; break;
    case SIM_EV_RELEASE_INVOKE:
        s->releasing = 1;
        if (s->depth > 0)
            s->depth--;
        break;
    case SIM_EV_RELEASE_OK:
    case SIM_EV_RELEASE_NOT_OWNER:
    case SIM_EV_RELEASE_ERROR: s->releasing = 0; break;
    default: break;
    }
}

static void client_lane_event(timeline *tl, const sim_event *e)
{
    int c = e->client;

    if (c < 0 || c >= tl->lanes || tl->dead[c])
        return;
    if (e->type == SIM_EV_CRASH) {
        tl->dead[c] = 1;
        paint(tl, tl->lane[c], e->t_ns, e->t_ns, 'X');
    } else if (e->type == SIM_EV_PAUSE_BEGIN || e->type == SIM_EV_PAUSE_END) {
        tl->paused[c] = e->type == SIM_EV_PAUSE_BEGIN;
    } else if (e->thread >= 0 && e->thread < SIM_CHECK_MAX_THREADS) {
        thread_event(&tl->th[c][e->thread], e->type);
    }
}

static void draw_clients(timeline *tl, const sim_event *ev, size_t n)
{
    int64_t prev = tl->t0;

    for (size_t i = 0; i < n; i++) {
        for (int c = 0; c < tl->lanes; c++) {
            char ch = client_symbol(tl, c);

            if (ch != ' ')
                paint(tl, tl->lane[c], prev, ev[i].t_ns, ch);
        }
        client_lane_event(tl, &ev[i]);
        prev = ev[i].t_ns;
    }
}

/* Upper case: the owner's key has a TTL; lower case: it has none, and
 * will never go away by itself. */
static char key_symbol(const sim_key_state *k)
{
    if (!k->present)
        return '-';
    if (k->owner < 0 || k->owner >= 26)
        return '?';
    return k->ttl ? letter(k->owner) : (char)(letter(k->owner) - 'A' + 'a');
}

/* The columns from event i to the next one: the checker's state after
 * an event lasts that long. Later events overwrite earlier ones in a
 * shared column (the column's last word). */
static void fill_after(const timeline *tl, char *lane, const sim_event *ev,
                       size_t n, size_t i, char ch)
{
    int64_t until = i + 1 < n ? ev[i + 1].t_ns : ev[i].t_ns;

    for (int c = col(tl, ev[i].t_ns); c <= col(tl, until); c++)
        lane[c] = ch;
}

static void draw_key(timeline *tl, const sim_event *ev, size_t n,
                     const sim_key_state *trace)
{
    memset(tl->key, ' ', COLS);
    memset(tl->key, '-', (size_t)col(tl, tl->end) + 1);
    for (size_t i = 0; i < n; i++)
        fill_after(tl, tl->key, ev, n, i,
                   trace != NULL ? key_symbol(&trace[i]) : '?');
    /* The moment the old primary's keys were lost, drawn over the key. */
    for (size_t i = 0; i < n; i++)
        if (ev[i].type == SIM_EV_FAILOVER &&
            strncmp(ev[i].detail, "promote", 7) == 0) {
            tl->key[col(tl, ev[i].t_ns)] = '|';
            tl->failover = 1;
        }
}

/* Every moment two or more held the lock, not only ME's first overlap:
 * in a late-DEL run the holder let in by the delete overlaps too.
 * holders is the checker's count after each event (NULL: out of memory,
 * so the first overlap alone). */
static void draw_overlaps(timeline *tl, const sim_event *ev, size_t n,
                          const int *holders, const sim_verdict *v)
{
    if (holders == NULL)
        for (int c = col(tl, v->me.from_ns); c <= col(tl, v->me.to_ns); c++)
            tl->marks[c] = '!';
    for (size_t i = 0; holders != NULL && i < n; i++)
        if (holders[i] >= 2)
            fill_after(tl, tl->marks, ev, n, i, '!');
}

/* Where the verdict's evidence lies: ! two holders at once, * the first
 * foreign delete, D the first give-up in a deadlock. */
static int draw_marks(timeline *tl, const sim_event *ev, size_t n,
                      const int *holders, const sim_verdict *v)
{
    if (v == NULL || (v->anomalies & SIM_ANOM_CELLS) == 0)
        return 0;
    if (v->anomalies & SIM_ANOM_ME)
        draw_overlaps(tl, ev, n, holders, v);
    if (v->anomalies & SIM_ANOM_MD)
        tl->marks[col(tl, v->md.at_ns)] = '*';
    if (v->anomalies & SIM_ANOM_DL)
        tl->marks[col(tl, v->dl.busy_ns)] = 'D';
    return 1;
}

/* One line without trailing blanks (they would only wrap on a narrow
 * terminal). */
static void put_trimmed(FILE *out, const char *text)
{
    int end = (int)strlen(text);

    while (end > 0 && text[end - 1] == ' ')
        end--;
    fprintf(out, "%.*s\n", end, text);
}

/* A lane: its label in the first LABEL columns, then its text. */
static void put_lane(FILE *out, const char *label, const char *text)
{
    fprintf(out, "%-*s", LABEL, label);
    put_trimmed(out, text);
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
    if (tl->failover)
        put_lane(out, "", "          | failover: the replica became primary");
    if (marks)
        put_lane(out, "", "anomaly: ! two holders  * another's lock deleted  "
                 "D deadlock");
    fprintf(out, "%-*sone column = %g ms; the run ends at %ld ms\n", LABEL, "",
            (double)tl->per_col / 1e6, ms(tl->end, tl->t0));
}

static void init_timeline(timeline *tl, const sim_event *ev, size_t n,
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
    tl->lanes = clients < MAX_LANES ? clients : MAX_LANES;
    for (int c = 0; c < MAX_LANES; c++)
        memset(tl->lane[c], ' ', COLS);
    memset(tl->marks, ' ', COLS);
}

void sim_report_timeline(FILE *out, const sim_event *ev, size_t n,
                         int64_t t0_ns, int clients, const sim_verdict *v)
{
    timeline tl;
    sim_key_state *keys = malloc((n ? n : 1) * sizeof(*keys));
    int *holders = malloc((n ? n : 1) * sizeof(*holders));
    int marks;

    init_timeline(&tl, ev, n, t0_ns, clients);
    if (keys != NULL)
        sim_check_key_trace(ev, n, keys);
    if (holders != NULL)
        sim_check_holders_trace(ev, n, holders);
    draw_clients(&tl, ev, n);
    draw_key(&tl, ev, n, keys);
    marks = draw_marks(&tl, ev, n, holders, v);
    free(keys);
    free(holders);
    draw_axis(out, &tl);
    for (int c = 0; c < tl.lanes; c++) {
        char label[LABEL + 1];

        snprintf(label, sizeof(label), "client %c", letter(c));
        put_lane(out, label, tl.lane[c]);
    }
    put_lane(out, "lock key", tl.key);
    if (marks)
        put_lane(out, "anomaly", tl.marks);
    draw_legend(out, &tl, marks);
}

void sim_report_run(FILE *out, const sim_run_info *run, const sim_event *ev,
                    size_t n, int64_t t0_ns, const sim_verdict *v)
{
    if (run != NULL) {
        sim_report_title(out, run);
        /* The armed step does not exist in this stage: that absence is
         * the fix, and the clean run below is its proof. */
        if (run->failpoint[0] != '\0' &&
            !sim_check_failpoint_fired(ev, n, run->failpoint))
            fprintf(out, "  fault not reachable: this stage has no such step "
                    "(%s)\n", run->failpoint);
    }
    sim_report_verdict(out, v, t0_ns);
    fputc('\n', out);
    sim_report_timeline(out, ev, n, t0_ns, run != NULL ? run->clients : 0, v);
}

/* ---- the fault matrix ----------------------------------------------------- */

#define ROW_LABEL 20  /* scenario names are shorter */
#define CELL 8        /* "!ME MD" and a gap */

static int cell_matches(const sim_matrix_cell *c)
{
    return (c->observed & SIM_ANOM_CELLS) == (c->expected & SIM_ANOM_CELLS);
}

static void cell_text(char *buf, size_t len, const sim_matrix_cell *c)
{
    char set[32];

    sim_anomaly_format(c->observed & SIM_ANOM_CELLS, set, sizeof(set));
    snprintf(buf, len, "%s%s%s%s", cell_matches(c) ? "" : "!",
             c->unreachable ? "(" : "", set, c->unreachable ? ")" : "");
}

/* 1 when cell i is the first of its scenario: it opens a row. */
static int opens_row(const sim_matrix_cell *cells, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (strcmp(cells[j].scenario, cells[i].scenario) == 0)
            return 0;
    return 1;
}

static const sim_matrix_cell *find_cell(const sim_matrix_cell *cells,
                                        size_t n, const char *scenario,
                                        int stage)
{
    for (size_t i = 0; i < n; i++)
        if (cells[i].stage == stage && strcmp(cells[i].scenario, scenario) == 0)
            return &cells[i];
    return NULL;
}

static void matrix_row(FILE *out, const sim_matrix_cell *cells, size_t n,
                       const char *scenario)
{
    char row[ROW_LABEL + SIM_REPORT_STAGES * CELL + 1];

    memset(row, ' ', sizeof(row) - 1);
    row[sizeof(row) - 1] = '\0';
    memcpy(row, scenario, strnlen(scenario, ROW_LABEL - 1));
    for (int s = 1, col = 0; s <= SIM_REPORT_STAGES; s++) {
        const sim_matrix_cell *c = find_cell(cells, n, scenario, s);
        char text[48] = "";

        if (sim_stage_get(s) == NULL)
            continue; /* a number the stage list skips: no column */
        if (c != NULL)
            cell_text(text, sizeof(text), c);
        memcpy(row + ROW_LABEL + col++ * CELL, text,
               strnlen(text, CELL - 1));
    }
    put_trimmed(out, row);
}

/* Prints text from column at on (the caller is there already), wrapping
 * at width; a continued line starts at column hang. */
static void put_wrapped(FILE *out, const char *text, int at, int hang,
                        int width)
{
    int start = at;

    while (*text != '\0') {
        int word = (int)strcspn(text, " ");

        /* "900 ms" stays on one line: a number without its unit misleads. */
        if (strncmp(text + word, " ms", 3) == 0)
            word += 3 + (int)strcspn(text + word + 3, " ");

        if (at > start && at + 1 + word > width) {
            fprintf(out, "\n%*s", hang, "");
            at = start = hang;
        } else if (at > start) {
            fputc(' ', out);
            at++;
        }
        fprintf(out, "%.*s", word, text);
        at += word;
        text += word;
        text += strspn(text, " ");
    }
    fputc('\n', out);
}

#define EVIDENCE_LABEL 22  /* "v1 crash-mid-acquire" and a gap */
#define EVIDENCE_CODE 4    /* "ME" and a gap */
#define EVIDENCE_WIDTH 78  /* room for the longest line of text (52) */

/* One line of a cell's evidence: its label (blank after the first line),
 * a code, and the text, wrapped under itself if it must. */
static void evidence_line(FILE *out, const char *label, const char *code,
                          const char *text)
{
    /* A blank after each field, even a label too long for its column. */
    int at = fprintf(out, "%-*s %-*s ", EVIDENCE_LABEL - 1, label,
                     EVIDENCE_CODE - 1, code);

    put_wrapped(out, text, at, at, EVIDENCE_WIDTH);
}

/* A cell's anomalies, one short line each, the stock's numbers under
 * them, and "!" when the cell differs from the answer key. */
static void matrix_evidence(FILE *out, const sim_matrix_cell *c)
{
    char label[SIM_NAME_LEN + 8], text[SENTENCE], want[32];

    snprintf(label, sizeof(label), "v%d %s", c->stage, c->scenario);
    for (size_t i = 0; c->verdict != NULL && i < TOLD; i++) {
        if (!(c->verdict->anomalies & told[i].bit))
            continue;
        told[i].brief(text, sizeof(text), c->verdict, c->t0_ns);
        evidence_line(out, label, told[i].bit & SIM_ANOM_CELLS ?
                      sim_anomaly_name(told[i].bit) : "", text);
        label[0] = '\0';
    }
    if (!cell_matches(c)) {
        sim_anomaly_format(c->expected & SIM_ANOM_CELLS, want, sizeof(want));
        snprintf(text, sizeof(text), "differs from the answer key, which "
                 "says %s", want);
        evidence_line(out, label, "!", text);
    }
}

static void matrix_legend(FILE *out)
{
    fprintf(out, "ME  mutual exclusion lost     MD  lock deleted by a non-owner\n"
            "DL  deadlock                   -   none\n"
            "(-) fault not reachable: this stage has no such step\n"
            "!   differs from the answer key\n");
}

int sim_report_matrix(FILE *out, const sim_matrix_cell *cells, size_t n)
{
    int matched = 0;

    fprintf(out, "%-*s", ROW_LABEL, "scenario");
    for (int s = 1; s < SIM_REPORT_STAGES; s++)
        if (sim_stage_get(s) != NULL)
            fprintf(out, "v%-*d", CELL - 1, s);
    fprintf(out, "v%d\n", SIM_REPORT_STAGES);
    for (size_t i = 0; i < n; i++)
        if (opens_row(cells, i))
            matrix_row(out, cells, n, cells[i].scenario);
    fputc('\n', out);
    matrix_legend(out);
    fprintf(out, "\nevidence:\n");
    for (size_t i = 0; i < n; i++)
        if (opens_row(cells, i))
            for (int s = 1; s <= SIM_REPORT_STAGES; s++) {
                const sim_matrix_cell *c = find_cell(cells, n,
                                                     cells[i].scenario, s);
                if (c != NULL)
                    matrix_evidence(out, c);
            }
    for (size_t i = 0; i < n; i++)
        matched += cell_matches(&cells[i]);
    fprintf(out, "\n%d/%zu cells match the answer key\n", matched, n);
    return matched;
}
