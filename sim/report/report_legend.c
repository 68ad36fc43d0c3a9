/* report_legend: the legend under a run's ASCII timeline (report_timeline.c
 * draws the lanes): each symbol the lanes show, once, with what it means,
 * and what a column is worth. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "report_timeline.h"

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
static const symbol queue_symbols[] = {
    { '?', "a waiting node whose client cannot be named" },
    { '&', "the node of a client past Z" },
    { '$', "more than 3 wait: the rest are not drawn" }, { 0, NULL } };
/* On the time axis's rule; '[' is told with its ']' as one item. */
static const symbol axis_symbols[] = {
    { '[', "] a client cut off from the lock's servers" },
    { '}', "a server's clock jumped forward" }, { 0, NULL } };
static const symbol mark_symbols[] = {
    { '!', "two holders" }, { '*', "a lock deleted by a non-owner" },
    { '@', "a waiter gave up: deadlock" },
    { '-', "a free lock a live waiter waited for: stalled" }, { 0, NULL } };

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

/* A ZooKeeper lock's queue (v11): its places' rows, one text. */
static void legend_queue(FILE *out, const char **left, const timeline *tl)
{
    size_t size = (size_t)tl->queue_rows * (size_t)(tl->width + 1);
    int letters = 0;

    for (size_t c = 0; c < size; c++)
        letters |= tl->queue[c] >= 'a' && tl->queue[c] <= 'z';
    if (tl->queue_rows > 0)
        legend_group(out, left, "queue:", queue_symbols, tl->queue, size,
                     letters ? "a-z that client's node waits; queue 1 holds next"
                             : "queue 1 holds next");
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

void sim_report_legend(FILE *out, const timeline *tl, int marks)
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
    legend_group(out, &left, "time:", axis_symbols, tl->faults, (size_t)tl->width, NULL);
    legend_group(out, &left, "clients:", client_symbols, drawn, k,
                 "(blank) idle");
    legend_key(out, &left, tl);
    legend_queue(out, &left, tl);
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
    if (tl->own_leases[0] != '\0') {
        fprintf(out, "%-*s", LABEL, "");
        sim_report_wrapped(out, tl->own_leases, LABEL, LABEL, SIM_REPORT_WIDTH);
    }
}
