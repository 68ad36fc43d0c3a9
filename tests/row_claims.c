/* row_claims: see row_claims.h. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "row_claims.h"

#define FACT_LEN 64
#define SENTENCE_LEN 1024
#define LETTERS 8   /* the clients a fact may name: A to H */

/* Each sentence exactly as docs/matrix.md tells it, its line breaks as spaces. */
static const row_claim claims[] = {
    { "baseline", "1 2 3 4 5 6 7 8 10 11",
      "Without faults every stage is a lock: eight clients sell exactly 100 items.",
      "overlaps 0; sales 100; stock 100 0; lost 0" },

    { "slow-holder", "2 3 4 5 8",
      "B takes the expired lock and reads the stock that A read, 10.",
      "read A 10; read B 10" },
    { "slow-holder", "2 3",
      "In v2 and v3 A's late `DEL` deletes B's lock and C walks in beside B.",
      "deleted A B; overlap B C" },
    { "slow-holder", "4 5 8",
      "v4, v5 and v8 refuse the foreign delete (`NOT_OWNER`), but A and B were inside "
      "together, and B, which works three leases as A did, outlasts its own lease in turn: "
      "C takes the lock while B is still inside.",
      "not-owner A; overlap A B; overlap B C; overlaps 2" },
    { "slow-holder", "2 3 4 5 8",
      "In all five A writes 9, C reads that 9 and writes 8, and B, last, writes the 9 of "
      "its early read over both: three sales, one unit gone, two updates lost (LU).",
      "wrote A 9; read C 9; wrote C 8; wrote B 9; order A C B; sales 3; stock 10 9; lost 2" },
    { "slow-holder", "6 7",
      "v6's watchdog (and v7's, which is v6's) keeps renewing, so the lease never runs out "
      "under a live holder, and A, B and C sell in turn, from 10 down to 7.",
      "overlaps 0; order A B C; sales 3; stock 10 7; lost 0" },
    { "slow-holder", "10 11",
      "In v10 and v11 the lease is the session, and the ZooKeeper library pings every third "
      "of it from a thread of its own: a live holder keeps its node however long it works, "
      "and A, B and C sell in turn, from 10 down to 7, as in v6.",
      "overlaps 0; order A B C; sales 3; stock 10 7; lost 0" },

    { "gc-pause", "2 3 4 5 6 7 8 10 11",
      "A read the stock, 10, before its pause; B takes the expired lock and reads 10 as well.",
      "read A 10; read B 10; overlap A B" },
    { "gc-pause", "2 3 4 5 6 8 10",
      "A wakes still inside and writes 9; B writes 9 later, over A's sale (LU).",
      "wrote A 9; wrote B 9; order A B" },
    { "gc-pause", "6",
      "In v6 C waits for B and sells from B's 9: three sales, from 10 down to 8, one update "
      "lost.",
      "overlaps 1; read C 9; order A B C; sales 3; stock 10 8; lost 1" },
    { "gc-pause", "2 3 4 5 8 10",
      "In v2 to v5, v8 and v10 C gets in beside B as in slow-holder, reads A's 9 and writes 8, "
      "and B's late 9 overwrites both: three sales, one unit gone, two updates lost.",
      "overlap B C; read C 9; wrote C 8; order A C B; sales 3; stock 10 9; lost 2" },
    { "gc-pause", "10",
      "In v10 it is A's release that lets C in: it opens a new session and deletes B's node "
      "by its path (MD).",
      "deleted A B; overlap B C" },
    { "gc-pause", "7",
      "Only a fencing token checked by the resource refuses A's stale write: in v7, A still "
      "wakes up believing it holds the lock (ME: no lease can prevent that), but A drew token "
      "1 and B token 2, B's read has shown the resource token 2, and A's write with token 1 "
      "is refused, so B and C sell in turn and no sale is lost.",
      "overlap A B; overlaps 1; token A 1; token B 2; refused A; order B C; sales 2; "
      "stock 10 8; lost 0" },
    { "gc-pause", "11",
      "v11's token is the `czxid` of the holder's node, and B's node was created after A's, so "
      "B's token is the higher one; B's read has shown it to the resource, A's write is "
      "refused, A's release of its own node, long gone, returns `NOT_OWNER`, and B and C sell "
      "in turn: no sale lost.",
      "overlap A B; overlaps 1; refused A; not-owner A; order B C; sales 2; stock 10 8; "
      "lost 0" },

    { "pause-in-release", "4",
      "Paused between them, the holder wakes to delete the lock that went to B meanwhile; C "
      "walks in beside B and both sell from the same stock, 9 (LU).",
      "deleted A B; overlap B C; read B 9; read C 9; lost 1" },

    { "stranger-unlock", "1 2 3",
      "v1 to v3 store `1`, so anyone's `DEL` removes the lock, C walks in beside A, and one "
      "of their two sales is lost.",
      "deleted B A; overlap A C; sales 2; lost 1" },
    { "stranger-unlock", "10",
      "v10 deletes its node by path, as v1 deletes its key: B's release deletes A's node, C "
      "walks in beside A, A's own release deletes C's node in turn, and one of the two sales "
      "is lost.",
      "deleted B A; overlap A C; deleted A C; sales 2; lost 1" },

    { "failover", "1 2 3 4 5 6 7",
      "Every stage of one server loses the lock, and A and B both sell from the same stock "
      "(LU).",
      "overlap A B; read A 10; read B 10; sales 2; lost 1" },
    { "failover", "7",
      "v7's fence fails with its counter: the increment that gave A token 1 was lost with the "
      "primary, so B draws token 1 as well, and the resource, which can only compare numbers, "
      "takes both writes.",
      "token A 1; token B 1; wrote A 9; wrote B 9" },

    { "restart", "1 2 3 4 5 6 7",
      "For the stages of one server that is the failover again: the lock is lost outright, "
      "and A and B both sell from the same stock.",
      "overlap A B; read A 10; read B 10; sales 2; lost 1" },
    { "restart", "7",
      "v7's counter is lost with the lock, so B draws A's token again and the resource takes "
      "both writes.",
      "token A 1; token B 1; wrote A 9; wrote B 9" },
    { "restart", "8",
      "B asks and wins nodes 0, 3 and 4, a majority that A's nodes 1 and 2 cannot stop: two "
      "holders, and a lost sale.",
      "overlap A B; overlaps 1; lost 1" },

    { "partition", "2 3 4 5 6 8 9 10",
      "In v2 to v6 and v8 to v10 B takes the lock, reads the stock that A read, 10, sells and "
      "leaves; A, still inside, writes 9 last, over B's sale (LU).",
      "read A 10; read B 10; wrote B 9; wrote A 9; order B A; overlap A B; overlaps 1; "
      "sales 2; stock 10 9; lost 1" },
    { "partition", "7",
      "In v7 A's write carries token 1 after B's read showed the resource token 2, and the "
      "fence refuses it.",
      "token A 1; token B 2; refused A; overlap A B; overlaps 1; sales 1; stock 10 9; lost 0" },
    { "partition", "11",
      "In v11 A's write carries the `czxid` of its expired node, lower than that of B's node, "
      "which B's read had shown the resource, and the fence refuses it.",
      "refused A; overlap A B; overlaps 1; sales 1; stock 10 9; lost 0" },

    { "clock-jump", "2 3 4 5 6 8 9",
      "In v2 to v6, v8 and v9 B reads the stock that A read, 10, and sells; A, still inside, "
      "writes 9 last (LU).",
      "read A 10; read B 10; wrote B 9; wrote A 9; order B A; overlap A B; overlaps 1; "
      "sales 2; stock 10 9; lost 1" },
    { "clock-jump", "7",
      "In v7 A's write with token 1 is refused: B's read had shown the resource token 2.",
      "token A 1; token B 2; refused A; overlap A B; overlaps 1; sales 1; stock 10 9; lost 0" },
};

size_t row_claims_count(void)
{
    return sizeof(claims) / sizeof(claims[0]);
}

const row_claim *row_claim_at(size_t i)
{
    return i < row_claims_count() ? &claims[i] : NULL;
}

int row_claim_speaks_of(const row_claim *c, int stage)
{
    const char *p = c->stages;
    char *end;

    while (*p != '\0') {
        long n = strtol(p, &end, 10);

        if (end == p)
            return 0;
        if (n == stage)
            return 1;
        p = end;
    }
    return 0;
}

/* ---- what a history shows ------------------------------------------------------ */

static int letter(int client)
{
    return client >= 0 && client < 26 ? 'A' + client : '?';
}

/* The client a fact names: "A" to "H", else -1. */
static int client_of(const char *word)
{
    return strlen(word) == 1 && word[0] >= 'A' && word[0] < 'A' + LETTERS ? word[0] - 'A' : -1;
}

static size_t count_type(const sim_event *ev, size_t n, int type)
{
    size_t k = 0;

    for (size_t i = 0; i < n; i++)
        k += ev[i].type == type;
    return k;
}

/* The first event of a client of a type (and of a value, when want_value). */
static const sim_event *first(const sim_event *ev, size_t n, int client, int type,
                              int want_value, int64_t value)
{
    for (size_t i = 0; i < n; i++)
        if (ev[i].client == client && ev[i].type == type &&
            (!want_value || ev[i].value == value))
            return &ev[i];
    return NULL;
}

static int64_t stock_at(const sim_event *ev, size_t n, int type)
{
    const sim_event *e = first(ev, n, SIM_NO_CLIENT, type, 0, 0);

    return e != NULL ? e->value : -1;
}

static size_t episodes(const sim_verdict *v, unsigned kind)
{
    size_t k = 0;

    for (size_t i = 0; i < v->n_episodes; i++)
        k += v->episodes[i].kind == kind;
    return k;
}

static int overlapped(const sim_verdict *v, int x, int y)
{
    for (size_t i = 0; i < v->n_episodes; i++) {
        const sim_episode *e = &v->episodes[i];

        if (e->kind == SIM_ANOM_ME &&
            ((e->me.a.client == x && e->me.b.client == y) ||
             (e->me.a.client == y && e->me.b.client == x)))
            return 1;
    }
    return 0;
}

static int deleted(const sim_verdict *v, int deleter, int owner)
{
    for (size_t i = 0; i < v->n_episodes; i++) {
        const sim_episode *e = &v->episodes[i];

        if (e->kind == SIM_ANOM_MD && e->md.deleter == deleter && e->md.owner.client == owner)
            return 1;
    }
    return 0;
}

/* Appends to a line, keeping it terminated when it is full. */
static void add(char *out, size_t len, const char *fmt, ...)
{
    size_t used = strlen(out);
    va_list ap;

    if (used + 1 >= len)
        return;
    va_start(ap, fmt);
    vsnprintf(out + used, len - used, fmt, ap);
    va_end(ap);
}

/* A client's step in the summary: "A9", "A(refused)". */
static int step(const sim_event *e, char *out, size_t len)
{
    if (e->type == SIM_EV_STOCK_READ || e->type == SIM_EV_STOCK_WRITE)
        snprintf(out, len, " %c%lld", letter(e->client), (long long)e->value);
    else if (e->type == SIM_EV_STOCK_REFUSED)
        snprintf(out, len, " %c(refused)", letter(e->client));
    else
        return 0;
    return 1;
}

/* The first few reads (reads) or writes (!reads), " ..." after them when
 * there are more. */
static void steps(const sim_event *ev, size_t n, int reads, char *out, size_t len)
{
    size_t shown = 0;
    char one[32];

    for (size_t i = 0; i < n; i++) {
        if ((ev[i].type == SIM_EV_STOCK_READ) != reads || !step(&ev[i], one, sizeof(one)))
            continue;
        if (shown++ == 6) {
            add(out, len, " ...");
            return;
        }
        add(out, len, "%s", one);
    }
}

void row_claims_summary(const sim_event *ev, size_t n, const sim_verdict *v,
                        char *out, size_t len)
{
    out[0] = '\0';
    add(out, len, "reads");
    steps(ev, n, 1, out, len);
    add(out, len, "; writes");
    steps(ev, n, 0, out, len);
    add(out, len, "; overlaps");
    for (size_t i = 0; i < v->n_episodes; i++)
        if (v->episodes[i].kind == SIM_ANOM_ME)
            add(out, len, " %c%c", letter(v->episodes[i].me.a.client),
                letter(v->episodes[i].me.b.client));
    add(out, len, "%s; %zu sales, %lld -> %lld", episodes(v, SIM_ANOM_ME) ? "" : " none",
        count_type(ev, n, SIM_EV_STOCK_WRITE), (long long)stock_at(ev, n, SIM_EV_STOCK_INITIAL),
        (long long)stock_at(ev, n, SIM_EV_STOCK_FINAL));
}

/* ---- one fact ------------------------------------------------------------------- */

/* Whether the named clients' writes were taken in this order. */
static int in_order(const sim_event *ev, size_t n, char words[][FACT_LEN], int nwords)
{
    const sim_event *last = NULL;

    for (int w = 1; w < nwords; w++) {
        const sim_event *e = first(ev, n, client_of(words[w]), SIM_EV_STOCK_WRITE, 0, 0);

        if (e == NULL || (last != NULL && e <= last))
            return 0;
        last = e;
    }
    return 1;
}

/* 1: holds, 0: does not, -1: not a fact of the language. */
static int holds(char words[][FACT_LEN], int nw, const sim_event *ev, size_t n,
                 const sim_verdict *v)
{
    const char *verb = words[0];
    int x = nw > 1 ? client_of(words[1]) : -1, y = nw > 2 ? client_of(words[2]) : -1;
    long a = nw > 1 ? atol(words[1]) : 0, b = nw > 2 ? atol(words[2]) : 0;
    int64_t initial = stock_at(ev, n, SIM_EV_STOCK_INITIAL);
    int64_t final = stock_at(ev, n, SIM_EV_STOCK_FINAL);
    int64_t sold = (int64_t)count_type(ev, n, SIM_EV_STOCK_WRITE);
    const sim_event *e;

    if (strcmp(verb, "read") == 0 && nw == 3 && x >= 0)
        return first(ev, n, x, SIM_EV_STOCK_READ, 1, b) != NULL;
    if (strcmp(verb, "wrote") == 0 && nw == 3 && x >= 0)
        return first(ev, n, x, SIM_EV_STOCK_WRITE, 1, b) != NULL;
    if (strcmp(verb, "refused") == 0 && nw == 2 && x >= 0)
        return first(ev, n, x, SIM_EV_STOCK_REFUSED, 0, 0) != NULL;
    if (strcmp(verb, "not-owner") == 0 && nw == 2 && x >= 0)
        return first(ev, n, x, SIM_EV_RELEASE_NOT_OWNER, 0, 0) != NULL;
    if (strcmp(verb, "token") == 0 && nw == 3 && x >= 0)
        return (e = first(ev, n, x, SIM_EV_ACQUIRE_OK, 0, 0)) != NULL && e->token == b;
    if (strcmp(verb, "order") == 0 && nw >= 3) {
        for (int w = 1; w < nw; w++)
            if (client_of(words[w]) < 0)
                return -1;
        return in_order(ev, n, words, nw);
    }
    if (strcmp(verb, "overlap") == 0 && nw == 3 && x >= 0 && y >= 0)
        return overlapped(v, x, y);
    if (strcmp(verb, "deleted") == 0 && nw == 3 && x >= 0 && y >= 0)
        return deleted(v, x, y);
    if (strcmp(verb, "overlaps") == 0 && nw == 2)
        return (long)episodes(v, SIM_ANOM_ME) == a;
    if (strcmp(verb, "sales") == 0 && nw == 2)
        return sold == a;
    if (strcmp(verb, "stock") == 0 && nw == 3)
        return initial == a && final == b;
    if (strcmp(verb, "lost") == 0 && nw == 2)
        return initial >= 0 && final >= 0 && final + sold - initial == a;
    return -1;
}

/* Splits one fact into words; the count, or -1 when it has too many. */
static int split(const char *fact, size_t len, char words[][FACT_LEN], int max)
{
    int nw = 0;
    size_t i = 0;

    while (i < len) {
        size_t j;

        while (i < len && fact[i] == ' ')
            i++;
        for (j = i; j < len && fact[j] != ' '; j++)
            ;
        if (j == i)
            break;
        if (nw == max || j - i >= FACT_LEN)
            return -1;
        memcpy(words[nw], fact + i, j - i);
        words[nw++][j - i] = '\0';
        i = j;
    }
    return nw;
}

/* One fact of flen characters: 0 holds, 1 does not, -1 unreadable. */
static int check_one(const char *fact, size_t flen, const sim_event *ev, size_t n,
                     const sim_verdict *v, char *why, size_t len)
{
    char words[LETTERS + 1][FACT_LEN], shows[512];
    int nw = split(fact, flen, words, LETTERS + 1);
    int ok = nw > 0 ? holds(words, nw, ev, n, v) : -1;

    if (ok == 1)
        return 0;
    if (ok < 0) {
        snprintf(why, len, "\"%.*s\" is not a fact row_claims.h can check", (int)flen, fact);
        return -1;
    }
    row_claims_summary(ev, n, v, shows, sizeof(shows));
    snprintf(why, len, "\"%.*s\" does not hold: the history shows %s", (int)flen, fact, shows);
    return 1;
}

int row_claims_check(const char *facts, const sim_event *ev, size_t n,
                     const sim_verdict *v, char *why, size_t len)
{
    const char *p = facts;

    while (*p != '\0') {
        const char *end;
        size_t flen;
        int rc;

        while (*p == ' ')
            p++;
        end = strchr(p, ';');
        flen = end != NULL ? (size_t)(end - p) : strlen(p);
        if ((rc = check_one(p, flen, ev, n, v, why, len)) != 0)
            return rc;
        p = end != NULL ? end + 1 : p + flen;
    }
    return 0;
}

/* ---- the stories' sentences ----------------------------------------------------- */

/* The words that make a sentence speak of sales, at the start of a word. */
static const char *const sales_words[] = {
    "writ", "wrote", "overwrit", "sale", "sell", "sold", "read", "unit", "update",
    "stock", "beside", "together",
};

int row_claims_names_sales(const char *sentence)
{
    for (const char *p = sentence; *p != '\0'; p++) {
        if (p != sentence && isalnum((unsigned char)p[-1]))
            continue;
        for (size_t w = 0; w < sizeof(sales_words) / sizeof(sales_words[0]); w++)
            if (strncasecmp(p, sales_words[w], strlen(sales_words[w])) == 0)
                return 1;
    }
    return 0;
}

/* The next sentence of a story from *at, its white space made single
 * spaces; 0 when there is none. A sentence ends at a '.' followed by
 * white space or by the end. */
static int next_sentence(const char **at, const char *end, char *out, size_t len)
{
    const char *p = *at;
    size_t k = 0;

    while (p < end && isspace((unsigned char)*p))
        p++;
    if (p == end)
        return 0;
    while (p < end) {
        char c = isspace((unsigned char)*p) ? ' ' : *p;

        if (!(c == ' ' && k > 0 && out[k - 1] == ' ') && k + 1 < len)
            out[k++] = c;
        p++;
        if (c == '.' && (p == end || isspace((unsigned char)*p)))
            break;
    }
    while (k > 0 && out[k - 1] == ' ')
        k--;
    out[k] = '\0';
    *at = p;
    return 1;
}

static const row_claim *claim_of(const char *scenario, const char *sentence)
{
    for (size_t i = 0; i < row_claims_count(); i++)
        if (strcmp(claims[i].scenario, scenario) == 0 && strcmp(claims[i].sentence, sentence) == 0)
            return &claims[i];
    return NULL;
}

static int story_has(const char *story, size_t n, const char *sentence)
{
    const char *at = story, *end = story + n;
    char s[SENTENCE_LEN];

    while (next_sentence(&at, end, s, sizeof(s)))
        if (strcmp(s, sentence) == 0)
            return 1;
    return 0;
}

int row_claims_story(const char *scenario, const char *story, size_t n,
                     char *why, size_t len)
{
    const char *at = story, *end = story + n;
    char s[SENTENCE_LEN];

    while (next_sentence(&at, end, s, sizeof(s)))
        if (row_claims_names_sales(s) && claim_of(scenario, s) == NULL) {
            snprintf(why, len, "the story of %s says \"%s\", which names a sale, and no claim "
                     "of tests/row_claims.c checks it against the runs", scenario, s);
            return -1;
        }
    for (size_t i = 0; i < row_claims_count(); i++)
        if (strcmp(claims[i].scenario, scenario) == 0 && !story_has(story, n, claims[i].sentence)) {
            snprintf(why, len, "tests/row_claims.c checks \"%s\" against the runs, but the "
                     "story of %s no longer says it", claims[i].sentence, scenario);
            return -1;
        }
    return 0;
}
