/* history_file: a history as JSON lines, written by hand and read with
 * cJSON, so that any valid JSON loads: keys in any order, nested values in
 * keys it does not know, every escape. cJSON keeps numbers as doubles and
 * lets a duplicate key through, so this module checks what it must: a
 * duplicate key is an error (the last one would silently win), and a
 * number must be an exact integer (below 2^53) where one is needed. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "util.h"

#define EXACT_LIMIT 9007199254740992.0 /* 2^53: doubles are exact below */
#define T_MS_SLACK_NS 1000.0   /* t_ms is written to 0.001 ms: half of that, twice over */
#define MANY_KEYS 32                   /* past this, duplicates are found
                                        * by sorting, not pairwise */

/* ---- saving ------------------------------------------------------------- */

static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;

        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void put_header(FILE *f, const sim_run_info *run)
{
    fprintf(f, "{\"lockstep\":\"run\",\"version\":%d,\"stage\":",
            SIM_HISTORY_VERSION);
    put_string(f, run->stage);
    fputs(",\"scenario\":", f);
    put_string(f, run->scenario);
    fputs(",\"what\":", f);
    put_string(f, run->what);
    fputs(",\"failpoint\":", f);
    put_string(f, run->failpoint);
    fprintf(f, ",\"lease_ms\":%ld,\"seed\":%lu,\"clients\":%d,\"nodes\":%d}\n",
            run->lease_ms, run->seed, run->clients, run->nodes > 0 ? run->nodes : 1);
}

/* t_ms is for a human reading the file; loading judges by t_ns, and
 * refuses a t_ms that says another time (times_agree). */
static void put_event(FILE *f, const sim_event *e, int64_t t0_ns)
{
    int64_t rel = e->t_ns - t0_ns;

    fprintf(f, "{\"t_ms\":%.3f,\"t_ns\":%lld,\"client\":%d,\"thread\":%d,"
            "\"type\":", (double)rel / 1e6, (long long)rel, (int)e->client,
            (int)e->thread);
    put_string(f, sim_event_type_name((sim_event_type)e->type));
    fprintf(f, ",\"node\":%d,\"value\":%lld", (int)e->node, (long long)e->value);
    if (e->token != 0)
        fprintf(f, ",\"token\":%lld", (long long)e->token);
    if (e->lease_ms != 0)
        fprintf(f, ",\"lease_ms\":%lld", (long long)e->lease_ms);
    fputs(",\"detail\":", f);
    put_string(f, e->detail);
    fputs("}\n", f);
}

int sim_history_save_run(const char *path, const sim_run_info *run,
                         const sim_event *ev, size_t n, int64_t t0_ns,
                         char *errstr, size_t len)
{
    FILE *f = fopen(path, "w");
    int failed;

    if (f == NULL) {
        sim_error(errstr, len, "save %s: %s", path, strerror(errno));
        return -1;
    }
    if (run != NULL)
        put_header(f, run);
    for (size_t i = 0; i < n; i++)
        put_event(f, &ev[i], t0_ns);
    failed = ferror(f);
    if (fclose(f) != 0 || failed) {
        sim_error(errstr, len, "save %s: write failed", path);
        return -1;
    }
    return 0;
}

int sim_history_save(const char *path, const sim_event *ev, size_t n,
                     int64_t t0_ns, char *errstr, size_t len)
{
    return sim_history_save_run(path, NULL, ev, n, t0_ns, errstr, len);
}

/* ---- loading ------------------------------------------------------------ */

/* cJSON allocates every node and string of a line, and the line is freed
 * right after: a bump arena, emptied after each line, saves a million
 * malloc and free pairs on a long history. What does not fit goes to
 * malloc, and only that is freed. */
#define ARENA_LEN 65536

static struct {
    char buf[ARENA_LEN];
    size_t used;
} arena;

static void *arena_alloc(size_t n)
{
    void *p;

    n = (n + 15) & ~(size_t)15;
    if (n > ARENA_LEN - arena.used)
        return malloc(n);
    p = arena.buf + arena.used;
    arena.used += n;
    return p;
}

static void arena_free(void *p)
{
    if ((char *)p < arena.buf || (char *)p >= arena.buf + ARENA_LEN)
        free(p);
}

typedef struct reader {
    const char *path;
    size_t lineno;
    char why[256];     /* what was wrong, when a call returned -1 */
} reader;

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The first key of o that appears twice, or NULL. */
static const char *duplicate_key(const cJSON *o)
{
    const cJSON *a, *b;
    const char **names;
    const char *dup = NULL;
    int n = cJSON_GetArraySize(o), k = 0;

    if (n <= MANY_KEYS) {
        for (a = o->child; a != NULL; a = a->next)
            for (b = a->next; b != NULL; b = b->next)
                if (strcmp(a->string, b->string) == 0)
                    return a->string;
        return NULL;
    }
    if ((names = malloc((size_t)n * sizeof(*names))) == NULL)
        return "(out of memory)";
    for (a = o->child; a != NULL; a = a->next)
        names[k++] = a->string;
    qsort(names, (size_t)n, sizeof(*names), by_name);
    for (k = 1; k < n && dup == NULL; k++)
        if (strcmp(names[k - 1], names[k]) == 0)
            dup = names[k];
    free(names);
    return dup;
}

/* The keys this reader knows, found in one pass over an object. */
enum { F_LOCKSTEP, F_VERSION, F_STAGE, F_SCENARIO, F_WHAT, F_FAILPOINT,
       F_LEASE, F_SEED, F_CLIENTS, F_NODES, F_T_NS, F_CLIENT, F_THREAD,
       F_TYPE, F_NODE, F_VALUE, F_TOKEN, F_DETAIL, F_T_MS, F_COUNT };

static const char *const field_names[F_COUNT] = {
    "lockstep", "version", "stage", "scenario", "what", "failpoint",
    "lease_ms", "seed", "clients", "nodes", "t_ns", "client", "thread",
    "type", "node", "value", "token", "detail", "t_ms",
};

typedef struct fields {
    const cJSON *at[F_COUNT];  /* each known key's value, NULL if absent */
} fields;

static int field_index(const char *name)
{
    for (int i = 0; i < F_COUNT; i++)
        if (field_names[i][0] == name[0] && strcmp(field_names[i], name) == 0)
            return i;
    return -1;
}

/* Files each known key of o; a key that appears twice is an error (the
 * last one would silently win). */
static int index_fields(reader *rd, const cJSON *o, fields *f)
{
    const char *dup = NULL;
    int unknown = 0;

    memset(f, 0, sizeof(*f));
    for (const cJSON *a = o->child; a != NULL && dup == NULL; a = a->next) {
        int k = field_index(a->string);

        if (k < 0)
            unknown++;
        else if (f->at[k] != NULL)
            dup = a->string;
        else
            f->at[k] = a;
    }
    /* Keys of a later format, or a human's notes: rare, and only then
     * compared with each other. */
    if (dup == NULL && unknown > 1)
        dup = duplicate_key(o);
    if (dup != NULL)
        return sim_error(rd->why, sizeof(rd->why), "the key \"%.40s\" appears twice", dup);
    return 0;
}

/* A \u0000 escape (not an escaped backslash before "u0000"): cJSON would
 * cut the string there, and a history cannot carry a NUL anyway. */
static int has_nul_escape(const char *line)
{
    for (const char *p = line; (p = strstr(p, "u0000")) != NULL; p++) {
        size_t at = (size_t)(p - line), slashes = 0;

        while (slashes < at && line[at - 1 - slashes] == '\\')
            slashes++;
        if (slashes % 2 == 1)
            return 1;
    }
    return 0;
}

/* An integer field: 0 read, 1 absent (and not required), -1 wrong. */
static int get_int(reader *rd, const fields *f, int field, int required,
                   double lo, double hi, int64_t *out)
{
    const cJSON *item = f->at[field];
    const char *key = field_names[field];
    double d;

    if (item == NULL)
        return required ? sim_error(rd->why, sizeof(rd->why), "an event needs \"t_ns\", \"client\" "
                               "and \"type\"; this one has no \"%s\"", key) : 1;
    d = item->valuedouble;
    if (!cJSON_IsNumber(item) || !isfinite(d) || d != floor(d) ||
        fabs(d) >= EXACT_LIMIT || d < lo || d > hi)
        return sim_error(rd->why, sizeof(rd->why), "\"%s\" needs an integer from %.0f to %.0f", key,
                    lo, hi);
    *out = (int64_t)d;
    return 0;
}

/* Copies s into out, cut at a character boundary when it is too long. */
static void copy_cut(char *out, size_t cap, const char *s)
{
    size_t n = strlen(s);

    if (n >= cap) {
        n = cap - 1;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;        /* s[n] continues a character: cut before it */
    }
    memcpy(out, s, n);
    out[n] = '\0';
}

/* A string field: 0 read (or absent), -1 wrong. A header's names must
 * fit (they are matched later); an event's detail is cut to fit. */
static int get_string(reader *rd, const fields *f, int field, int cut,
                      char *out, size_t cap)
{
    const cJSON *item = f->at[field];
    const char *key = field_names[field];

    if (item == NULL)
        return 0;
    if (!cJSON_IsString(item))
        return sim_error(rd->why, sizeof(rd->why), "\"%s\" must be a string", key);
    if (!cut && strlen(item->valuestring) >= cap)
        return sim_error(rd->why, sizeof(rd->why), "\"%s\" is longer than %zu bytes", key, cap - 1);
    copy_cut(out, cap, item->valuestring);
    return 0;
}

/* The header's version: absent in the first format. */
static int read_version(reader *rd, const fields *f)
{
    int64_t v = 1;

    if (get_int(rd, f, F_VERSION, 0, 1, 1e9, &v) < 0)
        return -1;
    if (v > SIM_HISTORY_VERSION)
        return sim_error(rd->why, sizeof(rd->why), "saved in format version %lld; this program reads "
                    "versions 1 to %d: check it with a newer lockstep",
                    (long long)v, SIM_HISTORY_VERSION);
    return 0;
}

static int read_header(reader *rd, const fields *f, sim_run_info *run)
{
    const cJSON *tag = f->at[F_LOCKSTEP];
    int64_t lease = 0, seed = 0, clients = 0, nodes = 1;

    if (!cJSON_IsString(tag) || strcmp(tag->valuestring, "run") != 0)
        return sim_error(rd->why, sizeof(rd->why), "\"lockstep\" must be \"run\"");
    if (rd->lineno != 1)
        return sim_error(rd->why, sizeof(rd->why), "a run header may only be the first line");
    memset(run, 0, sizeof(*run));
    if (read_version(rd, f) != 0 ||
        get_string(rd, f, F_STAGE, 0, run->stage, sizeof(run->stage)) != 0 ||
        get_string(rd, f, F_SCENARIO, 0, run->scenario,
                   sizeof(run->scenario)) != 0 ||
        get_string(rd, f, F_WHAT, 0, run->what, sizeof(run->what)) != 0 ||
        get_string(rd, f, F_FAILPOINT, 0, run->failpoint,
                   sizeof(run->failpoint)) != 0 ||
        get_int(rd, f, F_LEASE, 0, 0, INT32_MAX, &lease) < 0 ||
        get_int(rd, f, F_SEED, 0, 0, EXACT_LIMIT - 1, &seed) < 0 ||
        get_int(rd, f, F_CLIENTS, 0, 0, INT32_MAX, &clients) < 0 ||
        get_int(rd, f, F_NODES, 0, 1, SIM_HISTORY_NODES_MAX, &nodes) < 0)
        return -1;
    run->lease_ms = (long)lease;
    run->seed = (unsigned long)seed;
    run->clients = (int)clients;
    run->nodes = (int)nodes;
    return 0;
}

/* An event's t_ms, where it has one, is its t_ns in ms, as written to
 * three decimals: a file whose two times disagree was edited by hand in
 * one of them, and a verdict on t_ns would contradict the times a reader
 * of the file sees. */
static int times_agree(reader *rd, const fields *f, const sim_event *e)
{
    const cJSON *ms = f->at[F_T_MS];

    if (ms == NULL)
        return 0;
    if (!cJSON_IsNumber(ms) || !isfinite(ms->valuedouble))
        return sim_error(rd->why, sizeof(rd->why), "\"t_ms\" must be a number");
    if (fabs(ms->valuedouble * 1e6 - (double)e->t_ns) > T_MS_SLACK_NS)
        return sim_error(rd->why, sizeof(rd->why), "\"t_ms\" says %.3f ms but \"t_ns\" says %lld "
                         "ns: the two times disagree; fix one, or drop t_ms (t_ns is the one judged)",
                         ms->valuedouble, (long long)e->t_ns);
    return 0;
}

static int read_event(reader *rd, const fields *f, sim_event *e)
{
    const cJSON *type = f->at[F_TYPE];
    int64_t client = 0, thread = 0, node = 0;

    memset(e, 0, sizeof(*e));
    if (get_int(rd, f, F_T_NS, 1, -EXACT_LIMIT, EXACT_LIMIT, &e->t_ns) < 0 ||
        get_int(rd, f, F_CLIENT, 1, INT32_MIN, INT32_MAX, &client) < 0 ||
        get_int(rd, f, F_THREAD, 0, INT32_MIN, INT32_MAX, &thread) < 0 ||
        get_int(rd, f, F_NODE, 0, 0, SIM_HISTORY_NODES_MAX - 1, &node) < 0 ||
        get_int(rd, f, F_VALUE, 0, -EXACT_LIMIT, EXACT_LIMIT, &e->value) < 0 ||
        get_int(rd, f, F_TOKEN, 0, -EXACT_LIMIT, EXACT_LIMIT, &e->token) < 0 ||
        get_int(rd, f, F_LEASE, 0, 0, INT32_MAX, &e->lease_ms) < 0 ||
        get_string(rd, f, F_DETAIL, 1, e->detail, sizeof(e->detail)) != 0 ||
        times_agree(rd, f, e) != 0)
        return -1;
    if (type == NULL)
        return sim_error(rd->why, sizeof(rd->why), "an event needs \"t_ns\", \"client\" and \"type\"; "
                    "this one has no \"type\"");
    if (!cJSON_IsString(type))
        return sim_error(rd->why, sizeof(rd->why), "\"type\" must be a string");
    if ((e->type = sim_event_type_parse(type->valuestring)) < 0)
        return sim_error(rd->why, sizeof(rd->why), "unknown event type \"%.40s\"", type->valuestring);
    e->client = (int32_t)client;
    e->thread = (int32_t)thread;
    e->node = (int32_t)node;
    return 0;
}

/* An event's client must be one the run had: a client past the header's
 * count would be judged and drawn as a lane of its own, without a word. */
static int known_client(reader *rd, const sim_run_info *run, const sim_event *e)
{
    if (run->clients > 0 && e->client >= run->clients)
        return sim_error(rd->why, sizeof(rd->why), "the event names client %d, but the header says the run "
                    "had %d (0 to %d): fix the event or the header's \"clients\"",
                    (int)e->client, run->clients, run->clients - 1);
    return 0;
}

/* A growing array of loaded events. */
typedef struct events {
    sim_event *ev;
    size_t n, cap;
} events;

static int push(events *a, const sim_event *e)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 256;
        sim_event *ev = realloc(a->ev, cap * sizeof(*ev));

        if (ev == NULL)
            return -1;
        a->ev = ev;
        a->cap = cap;
    }
    a->ev[a->n++] = *e;
    return 0;
}

/* One line: the header or an event. */
static int read_line(reader *rd, const char *line, size_t len, events *a,
                     sim_run_info *run)
{
    const char *end = NULL;
    cJSON *o = cJSON_ParseWithLengthOpts(line, len + 1, &end, 1);
    fields f;
    sim_event e;
    int rc;

    if (o == NULL)
        return sim_error(rd->why, sizeof(rd->why), "not valid JSON (at column %ld)",
                    (long)((end != NULL ? end : line) - line) + 1);
    if (!cJSON_IsObject(o))
        rc = sim_error(rd->why, sizeof(rd->why), "expected a JSON object, one per line");
    else if ((rc = index_fields(rd, o, &f)) != 0)
        ;
    else if (has_nul_escape(line))
        rc = sim_error(rd->why, sizeof(rd->why), "a string holds \\u0000, which a history cannot carry");
    else if (f.at[F_LOCKSTEP] != NULL)
        rc = read_header(rd, &f, run);
    else if ((rc = read_event(rd, &f, &e)) == 0 && (rc = known_client(rd, run, &e)) == 0 &&
             push(a, &e) != 0)
        rc = sim_error(rd->why, sizeof(rd->why), "out of memory");
    cJSON_Delete(o);
    arena.used = 0;
    return rc;
}

static int blank(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
        s++;
    return *s == '\0';
}

/* Every line into a; 1 when the file had none that was not blank. */
static int read_lines(FILE *in, reader *rd, sim_run_info *run, events *a)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    int rc = 0, empty = 1, err = 0;

    cJSON_Hooks hooks = { arena_alloc, arena_free };

    cJSON_InitHooks(&hooks);
    while (rc == 0 && (got = getline(&line, &cap, in)) >= 0) {
        rd->lineno++;
        if (blank(line))
            continue;
        empty = 0;
        rc = read_line(rd, line, (size_t)got, a, run);
    }
    err = errno;
    cJSON_InitHooks(NULL);
    free(line);
    /* getline stops the same way at the end and on an error: a directory
     * or an unreadable file must not pass for an empty one. */
    if (rc == 0 && ferror(in))
        rc = sim_error(rd->why, sizeof(rd->why), "cannot read it: %s%s", strerror(err),
                  err == EISDIR ? ": give the .jsonl file that run --save wrote" : "");
    return rc != 0 ? -1 : empty;
}

sim_event *sim_history_load_run(const char *path, sim_run_info *run,
                                size_t *n, char *errstr, size_t len)
{
    reader rd = { path, 0, "" };
    events a = { NULL, 0, 0 };
    sim_run_info ignored;
    FILE *in = fopen(path, "r");
    int rc;

    *n = 0;
    run = run != NULL ? run : &ignored;
    memset(run, 0, sizeof(*run));
    if (in == NULL) {
        sim_error(errstr, len, "load %s: %s", path, strerror(errno));
        return NULL;
    }
    rc = read_lines(in, &rd, run, &a);
    fclose(in);
    if (rc < 0 && rd.lineno == 0)
        sim_error(errstr, len, "%s: %s", path, rd.why);
    else if (rc < 0)
        sim_error(errstr, len, "%s:%zu: %s", path, rd.lineno, rd.why);
    else if (rc == 1)
        sim_error(errstr, len, "%s: the file is empty: a history has one "
                  "JSON object per line", path);
    else if ((a.ev == NULL && (a.ev = malloc(sizeof(sim_event))) == NULL) ||
             sim_history_sort(a.ev, a.n) != 0)
        rc = sim_error(errstr, len, "load %s: out of memory", path);
    if (rc != 0) {
        free(a.ev);
        return NULL;
    }
    *n = a.n;
    return a.ev;
}

sim_event *sim_history_load(const char *path, size_t *n, char *errstr,
                            size_t len)
{
    return sim_history_load_run(path, NULL, n, errstr, len);
}
