/* checker: the entry point. It has each client thread's events turned
 * into operations and holds (checker_ops.c), then hands them to the keys
 * (checker_keys.c) and to the rules (checker_rules.c), and keeps the
 * verdict. See checker.h for the rules themselves. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checker_internal.h"
#include "stage.h"
#include "util.h"

/* ---- the verdict's storage ----------------------------------------------- */

void *sim_checker_grow(chk *c, void *arr, size_t *cap, size_t need,
                       size_t size)
{
    size_t want = *cap ? *cap : 16;
    void *p;

    if (need <= *cap)
        return arr;
    while (want < need)
        want *= 2;
    if ((p = realloc(arr, want * size)) == NULL) {
        sim_checker_unjudged(c, "out of memory");
        return NULL;
    }
    *cap = want;
    return p;
}

/* The first reason wins: later ones often follow from it. */
void sim_checker_unjudged(chk *c, const char *fmt, ...)
{
    va_list ap;

    if (c->failed)
        return;
    c->failed = 1;
    c->v->anomalies |= SIM_ANOM_UNJUDGED;
    va_start(ap, fmt);
    vsnprintf(c->v->why, sizeof(c->v->why), fmt, ap);
    va_end(ap);
}

sim_episode *sim_checker_episode(chk *c, unsigned kind, int64_t at_ns)
{
    sim_verdict *v = c->v;
    sim_episode *p = sim_checker_grow(c, v->episodes, &c->cap_episodes,
                                      v->n_episodes + 1, sizeof(*p));

    if (p == NULL)
        return NULL;
    v->episodes = p;
    p = &v->episodes[v->n_episodes++];
    memset(p, 0, sizeof(*p));
    p->kind = kind;
    p->at_ns = at_ns;
    v->anomalies |= kind;
    return p;
}

void sim_checker_gap(chk *c, int kind, size_t at)
{
    sim_verdict *v = c->v;
    sim_gap *p = sim_checker_grow(c, v->gaps, &c->cap_gaps, v->n_gaps + 1,
                                  sizeof(*p));

    if (p == NULL)
        return;
    v->gaps = p;
    v->gaps[v->n_gaps++] = (sim_gap){ kind, at, c->ev[at].t_ns };
}

/* An event's time in ms from the history's first event, for reasons. */
long sim_checker_ms(const chk *c, size_t i)
{
    return (long)((c->ev[i].t_ns - c->ev[0].t_ns) / 1000000);
}

const char *sim_check_client_name(int client, char *buf, size_t len)
{
    char rev[16];
    int k = 0;

    if (client < 0) {
        snprintf(buf, len, "?");
        return buf;
    }
    /* Like spreadsheet columns: A..Z, AA..AZ, BA.. */
    for (long n = (long)client + 1; n > 0 && k < (int)sizeof(rev); n = (n - 1) / 26)
        rev[k++] = (char)('A' + (n - 1) % 26);
    for (size_t i = 0; i + 1 < len && k > 0; i++) {
        buf[i] = rev[--k];
        buf[i + 1] = '\0';
    }
    return buf;
}

/* ---- the whole check -------------------------------------------------------- */

static void check_damage(sim_verdict *v)
{
    sim_damage_evidence *s = &v->stock;

    s->lost = s->final + s->sold - s->initial;
    s->oversold = s->sold > s->initial ? s->sold - s->initial : 0;
    if (s->lost != 0 || s->oversold > 0)
        v->anomalies |= SIM_ANOM_LU;
}

/* The first read or write of the stock, before event i, that carried
 * token: it showed the resource that token. NONE_AT: none did. */
static size_t first_access(const chk *c, size_t i, int64_t token)
{
    for (size_t j = 0; j < i; j++)
        if ((c->ev[j].type == SIM_EV_STOCK_READ ||
             c->ev[j].type == SIM_EV_STOCK_WRITE) && c->ev[j].token == token)
            return j;
    return NONE_AT;
}

/* Each write the resource refused, with the access that had raised the
 * fence it met. */
static void find_refusals(chk *c)
{
    sim_verdict *v = c->v;
    size_t cap = 0;

    for (size_t i = 0; i < c->n && !c->failed; i++) {
        const sim_event *e = &c->ev[i];
        sim_refusal *r;
        size_t by;

        if (e->type != SIM_EV_STOCK_REFUSED)
            continue;
        r = sim_checker_grow(c, v->refusals, &cap, v->n_refusals + 1, sizeof(*r));
        if (r == NULL)
            return;
        v->refusals = r;
        r = &v->refusals[v->n_refusals++];
        *r = (sim_refusal){ i, e->t_ns, e->client, e->thread, e->token,
                            e->value, SIM_UNNAMED, 0, 0, NEVER };
        if ((by = first_access(c, i, e->value)) != NONE_AT) {
            r->by = c->ev[by].client;
            r->by_thread = c->ev[by].thread;
            r->by_type = c->ev[by].type;
            r->by_ns = c->ev[by].t_ns;
        }
    }
}

/* Accesses of the stock (pointers into the history) by their token, and
 * in the history's order within one. */
static int by_token(const void *a, const void *b)
{
    const sim_event *x = *(const sim_event *const *)a, *y = *(const sim_event *const *)b;

    SIM_CMP(x->token, y->token);
    SIM_CMP(x, y);
    return 0;
}

static int same_thread(const sim_event *a, const sim_event *b)
{
    return a->client == b->client && a->thread == b->thread;
}

/* The first access, in time, by a thread other than the token's first
 * user: two holders the resource could not tell apart. */
static void find_clash(chk *c)
{
    const sim_event **u = malloc((c->n + 1) * sizeof(*u));
    size_t n = 0, first = 0, clash = NONE_AT, with = 0;

    if (u == NULL) {
        sim_checker_unjudged(c, "out of memory");
        return;
    }
    for (size_t i = 0; i < c->n; i++)
        if ((c->ev[i].type == SIM_EV_STOCK_READ ||
             c->ev[i].type == SIM_EV_STOCK_WRITE) && c->ev[i].token > 0)
            u[n++] = &c->ev[i];
    qsort(u, n, sizeof(*u), by_token);
    for (size_t k = 0; k < n; k++) {
        size_t at = (size_t)(u[k] - c->ev);

        if (k > 0 && u[k]->token != u[k - 1]->token)
            first = k;
        if (!same_thread(u[k], u[first]) && (clash == NONE_AT || at < clash)) {
            clash = at;
            with = (size_t)(u[first] - c->ev);
        }
    }
    free(u);
    if (clash != NONE_AT) {
        c->v->token_clash = 1;
        c->v->clash = (sim_token_clash){ c->ev[clash].token, c->ev[with].client,
            c->ev[with].thread, c->ev[with].t_ns, c->ev[clash].client,
            c->ev[clash].thread, c->ev[clash].type, c->ev[clash].t_ns };
    }
}

static int by_time(const void *a, const void *b)
{
    const sim_episode *x = a, *y = b;

    SIM_CMP(x->at_ns, y->at_ns);
    SIM_CMP(x->kind, y->kind);
    /* Episodes are zeroed before they are filled: the bytes order ties. */
    return memcmp(x, y, sizeof(*x));
}

/* The keys of node c->node, added to the report's lanes. */
static void publish_keys(chk *c)
{
    sim_verdict *v = c->v;
    sim_key_span *p;

    if (c->n_keys == 0 ||
        (p = realloc(v->keys, (v->n_keys + c->n_keys) * sizeof(*p))) == NULL)
        return;
    v->keys = p;
    for (size_t k = 0; k < c->n_keys; k++) {
        const chk_key *key = &c->keys[k];
        long o = key->owner;

        v->keys[v->n_keys++] = (sim_key_span){ key->seen_ns, key->end_ns,
            key->ttl_ns, o >= 0 ? c->th[c->ops[o].th].client : SIM_UNNAMED,
            c->node };
    }
}

/* Each node's keys in turn: who made them, and which were deleted from
 * under a holder. Of one node, its keys also prove unknown acquires and
 * leave waiters deadlocked; of several, a majority does that, which one
 * node's keys cannot tell: a waiter is deadlocked there by itself only. */
static void judge_keys(chk *c)
{
    if (c->nodes > 1)
        sim_checker_unknowing_holds(c);
    for (c->node = 0; c->node < c->nodes && !c->failed; c->node++) {
        c->n_keys = c->n_cands = 0;
        sim_checker_keys_build(c);
        if (c->nodes == 1)
            sim_checker_keys_attribute(c);
        else
            sim_checker_keys_attribute_node(c);
        sim_checker_foreign_deletes(c);
        if (c->nodes == 1)
            sim_checker_deadlocks(c);
        publish_keys(c);
    }
    if (c->nodes > 1) {
        c->n_keys = 0;
        sim_checker_deadlocks(c);
    }
}

/* The run's nodes, or as many as its events name. */
static int count_nodes(const sim_run_info *run, const sim_event *ev, size_t n)
{
    int nodes = run != NULL && run->nodes > 0 ? run->nodes : 1;

    for (size_t i = 0; i < n; i++)
        if (ev[i].node >= nodes)
            nodes = ev[i].node + 1;
    return nodes;
}

static void judge(chk *c)
{
    int have_initial = 0, have_final = 0;

    if (c->n == 0) {
        sim_checker_unjudged(c, "the history has no events");
        return;
    }
    c->v->start_ns = c->ev[0].t_ns;
    c->v->end_ns = c->ev[c->n - 1].t_ns;
    c->v->nodes = c->nodes;
    if (sim_checker_operations(c, &have_initial, &have_final) != 0)
        return;
    judge_keys(c);
    sim_checker_mutual_exclusion(c);
    sim_checker_stalls(c);
    find_refusals(c);
    find_clash(c);
    if (c->failed)
        return;
    if (c->v->n_episodes > 1)
        qsort(c->v->episodes, c->v->n_episodes, sizeof(*c->v->episodes),
              by_time);
    c->v->stock_known = have_initial && have_final;
    if (c->v->stock_known)
        check_damage(c->v);
}

/* Stages whose release compares the owner before it deletes (v4 on):
 * their release returns OK only for the caller's own key. The run's header
 * names the stage; the stage list says what it can do. */
static int release_checks_owner(const sim_run_info *run)
{
    int n;

    for (n = 1; run != NULL && n <= SIM_STAGES; n++) {
        if (strcmp(run->stage, sim_stage_name(n)) == 0)
            return (sim_stage_get(n)->caps & SIM_CAP_OWNER) != 0;
    }
    return 0;
}

unsigned sim_check_run(const sim_run_info *run, const sim_event *ev,
                       size_t n, sim_verdict *v)
{
    chk c;

    memset(v, 0, sizeof(*v));
    memset(&c, 0, sizeof(c));
    c.ev = ev;
    c.n = n;
    c.v = v;
    c.release_checks_owner = release_checks_owner(run);
    c.nodes = count_nodes(run, ev, n);
    c.lease_ms = run != NULL && run->lease_ms > 0 ? run->lease_ms : SIM_STALL_LEASE_MS;
    judge(&c);
    if (c.failed) {
        /* No half verdict: only the reason stands. */
        char why[SIM_WHY_LEN];

        memcpy(why, v->why, sizeof(why));
        sim_verdict_free(v);
        v->anomalies = SIM_ANOM_UNJUDGED;
        memcpy(v->why, why, sizeof(why));
    }
    free(c.th);
    free(c.th_of);
    free(c.ops);
    free(c.keys);
    free(c.cands);
    free(c.holds);
    return v->anomalies;
}

unsigned sim_check(const sim_event *ev, size_t n, sim_verdict *v)
{
    return sim_check_run(NULL, ev, n, v);
}

void sim_verdict_free(sim_verdict *v)
{
    free(v->episodes);
    free(v->gaps);
    free(v->keys);
    free(v->overlaps);
    free(v->refusals);
    memset(v, 0, sizeof(*v));
}

int sim_verdict_status(const sim_verdict *v)
{
    if (v->anomalies & SIM_ANOM_UNJUDGED)
        return 2;
    return v->anomalies != 0 ? 1 : 0;
}

size_t sim_verdict_count(const sim_verdict *v, unsigned kind)
{
    size_t k = 0;

    for (size_t i = 0; i < v->n_episodes; i++)
        k += v->episodes[i].kind == kind;
    return k;
}

const sim_episode *sim_verdict_first(const sim_verdict *v, unsigned kind)
{
    for (size_t i = 0; i < v->n_episodes; i++)
        if (v->episodes[i].kind == kind)
            return &v->episodes[i];
    return NULL;
}

int sim_check_failpoint_fired(const sim_event *ev, size_t n, const char *name)
{
    size_t len = name != NULL ? strlen(name) : 0;

    for (size_t i = 0; i < n; i++) {
        const char *d = ev[i].detail;

        if (ev[i].type != SIM_EV_FAILPOINT)
            continue;
        if (len == 0 || (strncmp(d, name, len) == 0 &&
                         (d[len] == '=' || d[len] == '\0')))
            return 1;
    }
    return 0;
}

/* ---- names ---------------------------------------------------------------- */

static const struct {
    unsigned bit;
    const char *name;
} anomaly_names[] = {
    { SIM_ANOM_ME, "ME" },
    { SIM_ANOM_MD, "MD" },
    { SIM_ANOM_DL, "DL" },
    { SIM_ANOM_LU, "LU" },
    { SIM_ANOM_ST, "ST" },
    { SIM_ANOM_UNJUDGED, "?" },
};
#define ANOMALY_COUNT (sizeof(anomaly_names) / sizeof(anomaly_names[0]))

const char *sim_anomaly_name(unsigned anomaly)
{
    for (size_t i = 0; i < ANOMALY_COUNT; i++)
        if (anomaly_names[i].bit == anomaly)
            return anomaly_names[i].name;
    return "?";
}

void sim_anomaly_format(unsigned set, char *buf, size_t len)
{
    size_t used = 0;

    if (len == 0)
        return;
    snprintf(buf, len, "-");
    for (size_t i = 0; i < ANOMALY_COUNT && used < len; i++)
        if (set & anomaly_names[i].bit)
            used += (size_t)snprintf(buf + used, len - used, "%s%s",
                                     used ? " " : "", anomaly_names[i].name);
}

int sim_anomaly_parse(const char *text, unsigned *set)
{
    char word[16];
    int n, pos = 0;

    *set = 0;
    while (sscanf(text + pos, " %15s%n", word, &n) == 1) {
        size_t i = 0;

        pos += n;
        if (strcmp(word, "-") == 0)
            continue;
        while (i < ANOMALY_COUNT && strcmp(word, anomaly_names[i].name) != 0)
            i++;
        if (i == ANOMALY_COUNT)
            return -1;
        *set |= anomaly_names[i].bit;
    }
    return 0;
}
