/* history: the shared journal, its snapshot, and its JSON-lines file.
 *
 * Writers in many processes share one mapped file. A writer takes a slot
 * with one atomic add, fills it, then sets the slot's ready flag with
 * release order; a reader copies only slots whose flag it sees set (acquire
 * order), so it never reads half an event, even from a client SIGKILLed in
 * the middle of a write (its slot simply stays unpublished). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "history.h"
#include "util.h"

#define TYPE_NAME_LEN 32   /* longest event type name, with room to spare */
#define SCRATCH_LEN 1024   /* an unknown string field, read and dropped */

static const char *type_names[SIM_EV_TYPE_COUNT] = {
    [SIM_EV_ACQUIRE_INVOKE] = "acquire-invoke",
    [SIM_EV_ACQUIRE_OK] = "acquire-ok",
    [SIM_EV_ACQUIRE_BUSY] = "acquire-busy",
    [SIM_EV_ACQUIRE_ERROR] = "acquire-error",
    [SIM_EV_CS_ENTER] = "cs-enter",
    [SIM_EV_CS_EXIT] = "cs-exit",
    [SIM_EV_RELEASE_INVOKE] = "release-invoke",
    [SIM_EV_RELEASE_OK] = "release-ok",
    [SIM_EV_RELEASE_NOT_OWNER] = "release-not-owner",
    [SIM_EV_RELEASE_ERROR] = "release-error",
    [SIM_EV_STOCK_READ] = "stock-read",
    [SIM_EV_STOCK_WRITE] = "stock-write",
    [SIM_EV_CRASH] = "crash",
    [SIM_EV_PAUSE_BEGIN] = "pause-begin",
    [SIM_EV_PAUSE_END] = "pause-end",
    [SIM_EV_FAILPOINT] = "failpoint",
    [SIM_EV_FAILOVER] = "failover",
    [SIM_EV_KEY] = "key",
    [SIM_EV_STOCK_INITIAL] = "stock-initial",
    [SIM_EV_STOCK_FINAL] = "stock-final",
};

int64_t sim_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

const char *sim_event_type_name(sim_event_type type)
{
    if ((int)type < 0 || type >= SIM_EV_TYPE_COUNT)
        return "unknown";
    return type_names[type];
}

int sim_event_type_parse(const char *name)
{
    for (int i = 0; i < SIM_EV_TYPE_COUNT; i++)
        if (strcmp(name, type_names[i]) == 0)
            return i;
    return -1;
}

/* ---- the shared mapping ------------------------------------------------ */

static sim_history *map_fd(int fd, const char *path, char *errstr, size_t len)
{
    void *p = mmap(NULL, sizeof(sim_history), PROT_READ | PROT_WRITE,
                   MAP_SHARED, fd, 0);

    close(fd);
    if (p == MAP_FAILED) {
        sim_error(errstr, len, "mmap %s: %s", path, strerror(errno));
        return NULL;
    }
    return p;
}

sim_history *sim_history_create(const char *path, char *errstr, size_t len)
{
    sim_history *h;
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

    if (fd < 0) {
        sim_error(errstr, len, "create %s: %s", path, strerror(errno));
        return NULL;
    }
    /* ftruncate fills with zeroes: every slot starts unpublished. */
    if (ftruncate(fd, (off_t)sizeof(sim_history)) != 0) {
        sim_error(errstr, len, "size %s: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    h = map_fd(fd, path, errstr, len);
    if (h != NULL)
        h->t0_ns = sim_now_ns();
    return h;
}

sim_history *sim_history_open(const char *path, char *errstr, size_t len)
{
    struct stat st;
    int fd = open(path, O_RDWR | O_CLOEXEC);

    if (fd < 0) {
        sim_error(errstr, len, "open %s: %s", path, strerror(errno));
        return NULL;
    }
    /* A file of another size is another program's: mapping it would let
     * us write past its end. */
    if (fstat(fd, &st) != 0 || (size_t)st.st_size != sizeof(sim_history)) {
        sim_error(errstr, len, "open %s: not a history file", path);
        close(fd);
        return NULL;
    }
    return map_fd(fd, path, errstr, len);
}

void sim_history_close(sim_history *h)
{
    if (h != NULL)
        munmap(h, sizeof(*h));
}

int sim_history_add(sim_history *h, int client, int thread,
                    sim_event_type type, int64_t value, const char *detail)
{
    unsigned slot = atomic_fetch_add_explicit(&h->reserved, 1,
                                              memory_order_relaxed);
    sim_event *e;

    if (slot >= SIM_HISTORY_MAX)
        return -1;
    e = &h->ev[slot];
    e->t_ns = sim_now_ns();
    e->client = client;
    e->thread = thread;
    e->type = type;
    e->value = value;
    snprintf(e->detail, sizeof(e->detail), "%s", detail ? detail : "");
    atomic_store_explicit(&h->ready[slot], 1, memory_order_release);
    return 0;
}

/* ---- sorting ------------------------------------------------------------ */

/* A merge sort by time: stable, so events stamped in the same nanosecond
 * keep the order their writers reserved them in (qsort promises nothing). */
static void merge_sort(sim_event *a, sim_event *tmp, size_t n)
{
    size_t mid = n / 2, i = 0, j = mid, k = 0;

    if (n < 2)
        return;
    merge_sort(a, tmp, mid);
    merge_sort(a + mid, tmp, n - mid);
    while (i < mid && j < n)
        tmp[k++] = a[j].t_ns < a[i].t_ns ? a[j++] : a[i++];
    while (i < mid)
        tmp[k++] = a[i++];
    while (j < n)
        tmp[k++] = a[j++];
    memcpy(a, tmp, n * sizeof(*a));
}

static int sort_events(sim_event *ev, size_t n)
{
    sim_event *tmp = malloc((n ? n : 1) * sizeof(*tmp));

    if (tmp == NULL)
        return -1;
    merge_sort(ev, tmp, n);
    free(tmp);
    return 0;
}

sim_event *sim_history_snapshot(const sim_history *h, size_t *n)
{
    unsigned reserved = atomic_load_explicit(&h->reserved,
                                             memory_order_acquire);
    size_t slots = reserved < SIM_HISTORY_MAX ? reserved : SIM_HISTORY_MAX;
    sim_event *out = malloc((slots ? slots : 1) * sizeof(*out));
    size_t k = 0;

    *n = 0;
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < slots; i++)
        if (atomic_load_explicit(&h->ready[i], memory_order_acquire))
            out[k++] = h->ev[i];
    if (sort_events(out, k) != 0) {
        free(out);
        return NULL;
    }
    *n = k;
    return out;
}

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
    fputs("{\"lockstep\":\"run\",\"stage\":", f);
    put_string(f, run->stage);
    fputs(",\"scenario\":", f);
    put_string(f, run->scenario);
    fputs(",\"what\":", f);
    put_string(f, run->what);
    fputs(",\"failpoint\":", f);
    put_string(f, run->failpoint);
    fprintf(f, ",\"lease_ms\":%ld,\"seed\":%lu,\"clients\":%d}\n",
            run->lease_ms, run->seed, run->clients);
}

/* t_ms is for a human reading the file; loading uses t_ns alone. */
static void put_event(FILE *f, const sim_event *e, int64_t t0_ns)
{
    int64_t rel = e->t_ns - t0_ns;

    fprintf(f, "{\"t_ms\":%.3f,\"t_ns\":%lld,\"client\":%d,\"thread\":%d,"
            "\"type\":", (double)rel / 1e6, (long long)rel, (int)e->client,
            (int)e->thread);
    put_string(f, sim_event_type_name((sim_event_type)e->type));
    fprintf(f, ",\"value\":%lld,\"detail\":", (long long)e->value);
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

/* ---- loading: a parser for the flat objects put_* writes ----------------- */

typedef struct parser {
    const char *p;     /* the next unread character of the line */
    char why[128];     /* what was wrong, when a call returned -1 */
} parser;

static int fail(parser *ps, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(ps->why, sizeof(ps->why), fmt, ap);
    va_end(ap);
    return -1;
}

static void skip_ws(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\r' || *ps->p == '\n')
        ps->p++;
}

static int expect(parser *ps, char c)
{
    skip_ws(ps);
    if (*ps->p != c)
        return fail(ps, "expected '%c'", c);
    ps->p++;
    return 0;
}

static int hex4(const char *s, unsigned *out)
{
    *out = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                   : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                   : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16;
        if (d == 16)
            return -1;
        *out = *out * 16 + d;
    }
    return 0;
}

/* One escape after the backslash: the escapes put_string writes, plus the
 * short ones any JSON tool writes. */
static int unescape(parser *ps, char *out)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *hit = *ps->p != '\0' ? strchr(from, *ps->p) : NULL;
    unsigned u;

    if (hit != NULL) {
        *out = to[hit - from];
        ps->p++;
        return 0;
    }
    if (*ps->p != 'u' || hex4(ps->p + 1, &u) != 0 || u == 0 || u >= 0x80)
        return fail(ps, "unsupported escape in a string");
    *out = (char)u;
    ps->p += 5;
    return 0;
}

static int parse_string(parser *ps, char *out, size_t cap)
{
    size_t k = 0;

    if (expect(ps, '"') != 0)
        return fail(ps, "expected a string");
    while (*ps->p != '"') {
        char c = *ps->p++;

        if (c == '\0')
            return fail(ps, "unterminated string");
        if (c == '\\' && unescape(ps, &c) != 0)
            return -1;
        if (k + 1 >= cap)
            return fail(ps, "string longer than %zu bytes", cap - 1);
        out[k++] = c;
    }
    ps->p++;
    out[k] = '\0';
    return 0;
}

static int parse_int(parser *ps, const char *key, int64_t lo, int64_t hi,
                     int64_t *out)
{
    char *end;
    long long v;

    skip_ws(ps);
    errno = 0;
    v = strtoll(ps->p, &end, 10);
    if (end == ps->p || errno != 0 || v < lo || v > hi)
        return fail(ps, "\"%s\" needs an integer in [%lld, %lld]", key,
                    (long long)lo, (long long)hi);
    ps->p = end;
    *out = v;
    return 0;
}

/* A value of a key this version does not know: read past it. */
static int skip_value(parser *ps)
{
    char scratch[SCRATCH_LEN];
    char *end;

    skip_ws(ps);
    if (*ps->p == '"')
        return parse_string(ps, scratch, sizeof(scratch));
    for (const char *lit = "null\0true\0false\0"; *lit; lit += strlen(lit) + 1)
        if (strncmp(ps->p, lit, strlen(lit)) == 0) {
            ps->p += strlen(lit);
            return 0;
        }
    strtod(ps->p, &end);
    if (end == ps->p)
        return fail(ps, "expected a value");
    ps->p = end;
    return 0;
}

static int parse_uint(parser *ps, const char *key, unsigned long *out)
{
    char *end;
    unsigned long long v;

    skip_ws(ps);
    errno = 0;
    v = strtoull(ps->p, &end, 10);
    if (end == ps->p || errno != 0 || *ps->p == '-')
        return fail(ps, "\"%s\" needs a non-negative integer", key);
    ps->p = end;
    *out = (unsigned long)v;
    return 0;
}

/* What one line held: a run header, or an event and which keys it had. */
typedef struct fields {
    int header;       /* the line was {"lockstep":"run", ...} */
    unsigned seen;    /* SEEN_* bits: the event's required keys present */
    sim_event e;
    sim_run_info run;
} fields;

#define SEEN_T 1u
#define SEEN_CLIENT 2u
#define SEEN_TYPE 4u
#define SEEN_ALL (SEEN_T | SEEN_CLIENT | SEEN_TYPE)

static int read_type(parser *ps, fields *f)
{
    char name[TYPE_NAME_LEN];
    int type;

    if (parse_string(ps, name, sizeof(name)) != 0)
        return -1;
    type = sim_event_type_parse(name);
    if (type < 0)
        return fail(ps, "unknown event type \"%s\"", name);
    f->e.type = type;
    f->seen |= SEEN_TYPE;
    return 0;
}

/* Returns 1 when key is not an event key, else 0 or -1 as it was read. */
static int read_event_field(parser *ps, const char *key, fields *f)
{
    int64_t v;

    if (strcmp(key, "type") == 0)
        return read_type(ps, f);
    if (strcmp(key, "detail") == 0)
        return parse_string(ps, f->e.detail, sizeof(f->e.detail));
    if (strcmp(key, "t_ns") == 0) {
        f->seen |= SEEN_T;
        return parse_int(ps, key, INT64_MIN, INT64_MAX, &f->e.t_ns);
    }
    if (strcmp(key, "value") == 0)
        return parse_int(ps, key, INT64_MIN, INT64_MAX, &f->e.value);
    if (strcmp(key, "client") == 0 || strcmp(key, "thread") == 0) {
        if (parse_int(ps, key, INT32_MIN, INT32_MAX, &v) != 0)
            return -1;
        if (key[0] == 'c') {
            f->e.client = (int32_t)v;
            f->seen |= SEEN_CLIENT;
        } else {
            f->e.thread = (int32_t)v;
        }
        return 0;
    }
    return 1;
}

/* Returns 1 when key is not a header key, else 0 or -1 as it was read. */
static int read_header_field(parser *ps, const char *key, fields *f)
{
    sim_run_info *r = &f->run;
    char tag[8];
    int64_t v;

    if (strcmp(key, "lockstep") == 0) {
        if (parse_string(ps, tag, sizeof(tag)) != 0 || strcmp(tag, "run") != 0)
            return fail(ps, "\"lockstep\" must be \"run\"");
        f->header = 1;
        return 0;
    }
    if (strcmp(key, "stage") == 0)
        return parse_string(ps, r->stage, sizeof(r->stage));
    if (strcmp(key, "scenario") == 0)
        return parse_string(ps, r->scenario, sizeof(r->scenario));
    if (strcmp(key, "what") == 0)
        return parse_string(ps, r->what, sizeof(r->what));
    if (strcmp(key, "failpoint") == 0)
        return parse_string(ps, r->failpoint, sizeof(r->failpoint));
    if (strcmp(key, "seed") == 0)
        return parse_uint(ps, key, &r->seed);
    if (strcmp(key, "lease_ms") == 0 || strcmp(key, "clients") == 0) {
        if (parse_int(ps, key, 0, INT32_MAX, &v) != 0)
            return -1;
        if (key[0] == 'l')
            r->lease_ms = (long)v;
        else
            r->clients = (int)v;
        return 0;
    }
    return 1;
}

/* One line: a flat JSON object of known and unknown keys. */
static int parse_object(parser *ps, fields *f)
{
    char key[TYPE_NAME_LEN];
    int rc;

    memset(f, 0, sizeof(*f));
    if (expect(ps, '{') != 0)
        return fail(ps, "expected '{' to open an object");
    skip_ws(ps);
    if (*ps->p == '}')
        return fail(ps, "empty object");
    do {
        if (parse_string(ps, key, sizeof(key)) != 0 || expect(ps, ':') != 0)
            return -1;
        rc = read_event_field(ps, key, f);
        if (rc == 1)
            rc = read_header_field(ps, key, f);
        if (rc == 1)
            rc = skip_value(ps);
        if (rc != 0)
            return -1;
        skip_ws(ps);
    } while (*ps->p == ',' && ps->p++);
    if (expect(ps, '}') != 0)
        return fail(ps, "expected ',' or '}' after a value");
    skip_ws(ps);
    if (*ps->p != '\0')
        return fail(ps, "text after the object");
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

static int blank(const char *s)
{
    return s[strspn(s, " \t\r\n")] == '\0';
}

/* Checks one parsed line and files it as the header or an event. */
static int take_line(parser *ps, const fields *f, size_t lineno, events *a,
                     sim_run_info *run)
{
    if (f->header) {
        if (lineno != 1)
            return fail(ps, "a run header may only be the first line");
        if (run != NULL)
            *run = f->run;
        return 0;
    }
    if ((f->seen & SEEN_ALL) != SEEN_ALL)
        return fail(ps, "an event needs \"t_ns\", \"client\" and \"type\"");
    if (push(a, &f->e) != 0)
        return fail(ps, "out of memory");
    return 0;
}

static int load_lines(FILE *in, const char *path, sim_run_info *run,
                      events *a, char *errstr, size_t len)
{
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    int rc = 0;

    while (rc == 0 && getline(&line, &cap, in) >= 0) {
        parser ps = { line, "" };
        fields f;

        lineno++;
        if (blank(line))
            continue;
        if (parse_object(&ps, &f) != 0 ||
            take_line(&ps, &f, lineno, a, run) != 0) {
            sim_error(errstr, len, "%s:%zu: %s", path, lineno, ps.why);
            rc = -1;
        }
    }
    free(line);
    return rc;
}

sim_event *sim_history_load_run(const char *path, sim_run_info *run,
                                size_t *n, char *errstr, size_t len)
{
    events a = { NULL, 0, 0 };
    FILE *in = fopen(path, "r");
    int rc;

    *n = 0;
    if (run != NULL)
        memset(run, 0, sizeof(*run));
    if (in == NULL) {
        sim_error(errstr, len, "load %s: %s", path, strerror(errno));
        return NULL;
    }
    rc = load_lines(in, path, run, &a, errstr, len);
    fclose(in);
    if (rc == 0 && ((a.ev == NULL && (a.ev = malloc(sizeof(sim_event))) == NULL)
                    || sort_events(a.ev, a.n) != 0)) {
        sim_error(errstr, len, "load %s: out of memory", path);
        rc = -1;
    }
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
