/* bench_measure: one stage in one run: its commands, its limit, its
 * uncontended rate and its contended figures. See bench.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "client.h"
#include "history.h"
#include "util.h"

#define LOCK_NAME "lockstep:bench"
#define ADMIN_NAME "lockstep-bench" /* our own connections: left out of every count */
#define TIMEOUT_MS 2000      /* connect and command timeout, ours and the clients' */
#define HISTORY_ROOM (SIM_HISTORY_MAX / 10 * 9) /* the window ends here: the
                                 * clients' last calls after it need room */
#define WINDOW_POLL_MS 10    /* how often we look at the history's size */
#define READY_TIMEOUT_MS 20000 /* client programs up (sanitizer builds are slow) */
#define JOIN_TIMEOUT_MS 20000  /* clients done after the stop flag */
#define POLL_US 1000         /* how often we look at the clients while waiting */
#define SLOWLOG_MAX_LEN 2000000  /* room for every command of a contended window */
#define SLOWLOG_DEFAULT_US 10000 /* Redis's defaults, restored after each count */
#define SLOWLOG_DEFAULT_LEN 128
#define SCRIPT_ADDR "?:0"    /* SLOWLOG's address for a command run by a script */
#define ERR_LEN 512

/* A group of client processes of one stage, with their control block and
 * history, for one measurement. */
typedef struct session {
    sim_control *ctl;
    sim_history *h;
    char ctl_path[SIM_CONTROL_PATH_LEN];
    char h_path[SIM_CONTROL_PATH_LEN];
    pid_t pid[SIM_CLIENTS_MAX]; /* 0 once reaped */
    int n;
    int stage;
} session;

static double seconds(int64_t ns)
{
    return (double)ns / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Nearest-rank percentile of n sorted samples; NAN when there are none. */
static double percentile(const double *sorted, size_t n, double p)
{
    size_t rank;

    if (n == 0)
        return NAN;
    rank = (size_t)ceil(p / 100.0 * (double)n);
    return sorted[rank > 0 ? rank - 1 : 0];
}

static double median(double *v, int n)
{
    qsort(v, n, sizeof(v[0]), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- talking to the servers ------------------------------------------------------ */

/* One command on one of our connections; NULL with errstr on an error
 * reply or a broken connection. */
static redisReply *ask(redisContext *c, char *errstr, size_t len,
                       const char *fmt, ...)
{
    char text[96];
    redisReply *r;
    va_list ap, again;

    va_start(ap, fmt);
    va_copy(again, ap);
    vsnprintf(text, sizeof(text), fmt, again); /* the command, for the error */
    va_end(again);
    r = redisvCommand(c, fmt, ap);
    va_end(ap);
    if (r == NULL) {
        sim_error(errstr, len, "%s: %s", text, c->errstr);
        return NULL;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        sim_error(errstr, len, "%s: %s", text, r->str);
        freeReplyObject(r);
        return NULL;
    }
    return r;
}

/* The same, for commands whose reply we do not need. */
static int tell(redisContext *c, char *errstr, size_t len, const char *fmt,
                const char *arg)
{
    redisReply *r = ask(c, errstr, len, fmt, arg);

    freeReplyObject(r);
    return r == NULL ? -1 : 0;
}

redisContext *sim_bench_connect(const sim_server *s, char *errstr, size_t len)
{
    redisContext *c = sim_server_connect(s, TIMEOUT_MS, errstr, len);

    if (c == NULL)
        return NULL;
    if (tell(c, errstr, len, "CLIENT SETNAME %s", ADMIN_NAME) != 0 ||
        tell(c, errstr, len, "CONFIG SET notify-keyspace-events %s", "") != 0) {
        redisFree(c);
        return NULL;
    }
    return c;
}

/* Logs every command from now on, from an empty log. */
static int slowlog_on(sim_bench *b, char *errstr, size_t len)
{
    char n[16];

    snprintf(n, sizeof(n), "%d", SLOWLOG_MAX_LEN);
    if (tell(b->adm, errstr, len, "CONFIG SET slowlog-max-len %s", n) != 0 ||
        tell(b->adm, errstr, len, "CONFIG SET slowlog-log-slower-than %s", "0") != 0)
        return -1;
    return tell(b->adm, errstr, len, "SLOWLOG %s", "RESET");
}

/* Back to Redis's defaults, and the log's memory freed. */
static int slowlog_off(sim_bench *b, char *errstr, size_t len)
{
    char us[16], n[16];

    snprintf(us, sizeof(us), "%d", SLOWLOG_DEFAULT_US);
    snprintf(n, sizeof(n), "%d", SLOWLOG_DEFAULT_LEN);
    if (tell(b->adm, errstr, len, "CONFIG SET slowlog-log-slower-than %s", us) != 0 ||
        tell(b->adm, errstr, len, "SLOWLOG %s", "RESET") != 0)
        return -1;
    return tell(b->adm, errstr, len, "CONFIG SET slowlog-max-len %s", n);
}

/* A SLOWLOG entry: id, time, duration, argv, client address, client name.
 * 0 for a client's command, 1 for a script's, 2 for ours (skipped). */
static int entry_origin(const redisReply *e)
{
    if (e->type != REDIS_REPLY_ARRAY || e->elements < 6 ||
        e->element[3]->type != REDIS_REPLY_ARRAY ||
        e->element[4]->type != REDIS_REPLY_STRING ||
        e->element[5]->type != REDIS_REPLY_STRING)
        return -1;
    if (strcmp(e->element[5]->str, ADMIN_NAME) == 0)
        return 2;
    return strcmp(e->element[4]->str, SCRIPT_ADDR) == 0 ? 1 : 0;
}

/* The whole log (newest first), checked to be whole. */
static redisReply *slowlog_get(sim_bench *b, char *errstr, size_t len)
{
    redisReply *r = ask(b->adm, errstr, len, "SLOWLOG GET %d", -1);

    if (r != NULL && r->type != REDIS_REPLY_ARRAY) {
        freeReplyObject(r);
        r = NULL;
        sim_error(errstr, len, "SLOWLOG GET: not an array");
    }
    if (r != NULL && r->elements >= SLOWLOG_MAX_LEN) {
        freeReplyObject(r);
        r = NULL;
        sim_error(errstr, len, "SLOWLOG overflowed %d entries: shorten SIM_BENCH_WINDOW_MS",
              SLOWLOG_MAX_LEN);
    }
    return r;
}

/* Top-level and script-internal commands in the log since slowlog_on. */
static int slowlog_count(sim_bench *b, long long *top, long long *internal,
                         char *errstr, size_t len)
{
    redisReply *r = slowlog_get(b, errstr, len);
    size_t i;

    if (r == NULL)
        return -1;
    *top = *internal = 0;
    for (i = 0; i < r->elements; i++) {
        int origin = entry_origin(r->element[i]);

        *top += origin == 0;
        *internal += origin == 1;
    }
    freeReplyObject(r);
    return 0;
}

/* The sum of calls in INFO commandstats, leaving out the commands only we
 * send (info, slowlog, config, client): every command the clients made
 * the server run, those run inside scripts included. */
static int commandstats(sim_bench *b, long long *calls, char *errstr, size_t len)
{
    static const char *const ours[] = { "info", "slowlog", "config", "client" };
    redisReply *r = ask(b->adm, errstr, len, "INFO %s", "commandstats");
    const char *p;
    size_t i;

    if (r == NULL)
        return -1;
    *calls = 0;
    for (p = r->str; (p = strstr(p, "cmdstat_")) != NULL; p++) {
        const char *name = p + strlen("cmdstat_"), *n = strstr(p, "calls=");
        int skip = 0;

        for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
            skip |= strncmp(name, ours[i], strlen(ours[i])) == 0;
        if (n != NULL && !skip)
            *calls += atoll(n + strlen("calls="));
    }
    freeReplyObject(r);
    return 0;
}

/* ---- client sessions ------------------------------------------------------------- */

static void fill_control(sim_bench *b, session *s, int kind)
{
    sim_control *ctl = s->ctl;
    int i;

    snprintf(ctl->history_path, sizeof(ctl->history_path), "%s", s->h_path);
    snprintf(ctl->lock_name, sizeof(ctl->lock_name), "%s", LOCK_NAME);
    ctl->lease_ms = SIM_BENCH_LEASE_MS;
    ctl->retry_ms = SIM_BENCH_RETRY_MS;
    ctl->timeout_ms = TIMEOUT_MS;
    ctl->resource_port = b->cl.resource.port;
    atomic_store(&ctl->primary_port, b->cl.primary.port);
    ctl->nclients = s->n;
    for (i = 0; i < s->n; i++) {
        ctl->client[i].plan.kind = kind;
        ctl->client[i].plan.wait_ms = SIM_BENCH_WAIT_MS;
        ctl->client[i].plan.lease_ms = SIM_BENCH_LEASE_MS;
    }
}

/* n processes of the stage's client program, each waiting for its start
 * flag once it is ready. */
static int session_start(sim_bench *b, session *s, int stage, int kind, int n,
                         char *errstr, size_t len)
{
    char program[PATH_MAX + 32];
    int i, id = ++b->sessions;

    memset(s, 0, sizeof(*s));
    s->n = n;
    s->stage = stage;
    snprintf(s->h_path, sizeof(s->h_path), "%s/bench-%d.history", b->cl.dir, id);
    snprintf(s->ctl_path, sizeof(s->ctl_path), "%s/bench-%d.control", b->cl.dir, id);
    snprintf(program, sizeof(program), "%s/v%d/client", b->build_dir, stage);
    if ((s->h = sim_history_create(s->h_path, errstr, len)) == NULL ||
        (s->ctl = sim_client_control_create(s->ctl_path, errstr, len)) == NULL)
        return -1;
    fill_control(b, s, kind);
    for (i = 0; i < n; i++) {
        s->pid[i] = sim_client_spawn(program, s->ctl_path, i, NULL, errstr, len);
        if (s->pid[i] < 0) {
            s->pid[i] = 0;
            return -1;
        }
    }
    return 0;
}

/* Reaps the clients that ended; one that failed fails the session. */
static int session_poll(session *s, int *running, char *errstr, size_t len)
{
    int i, status = 0;

    *running = 0;
    for (i = 0; i < s->n; i++) {
        sim_client_state st;

        if (s->pid[i] == 0)
            continue;
        st = sim_client_poll(s->pid[i], &status);
        if (st == SIM_CLIENT_RUNNING || st == SIM_CLIENT_STOPPED) {
            (*running)++;
            continue;
        }
        s->pid[i] = 0;
        if (st == SIM_CLIENT_KILLED)
            return sim_error(errstr, len, "v%d client %s died of signal %d (%s)",
                         s->stage, sim_client_name(i), status, strsignal(status));
        if (status != 0)
            return sim_error(errstr, len, "v%d client %s exited with status %d (its error is above)",
                         s->stage, sim_client_name(i), status);
    }
    return 0;
}

static int all_ready(const session *s)
{
    int i;

    for (i = 0; i < s->n; i++) {
        if (sim_client_reached(s->ctl, i, SIM_PHASE_READY) == 0)
            return 0;
    }
    return 1;
}

/* Waits until every client is up, so start-up never eats a window. */
static int session_ready(session *s, char *errstr, size_t len)
{
    int64_t start = sim_now_ns();
    int running;

    while (!all_ready(s)) {
        if (session_poll(s, &running, errstr, len) != 0)
            return -1;
        if (running < s->n)
            return sim_error(errstr, len, "v%d client ended before it was ready", s->stage);
        if ((sim_now_ns() - start) / 1000000 > READY_TIMEOUT_MS)
            return sim_error(errstr, len, "v%d clients not ready after %d ms",
                         s->stage, READY_TIMEOUT_MS);
        usleep(POLL_US);
    }
    return 0;
}

static int64_t session_go(session *s)
{
    int i;

    for (i = 0; i < s->n; i++)
        atomic_store(&s->ctl->client[i].go, 1);
    return sim_now_ns();
}

/* Waits until every client has exited on its own. */
static int session_join(session *s, char *errstr, size_t len)
{
    int64_t start = sim_now_ns();
    int running = 1;

    while (running > 0) {
        if (session_poll(s, &running, errstr, len) != 0)
            return -1;
        if (running > 0 && (sim_now_ns() - start) / 1000000 > JOIN_TIMEOUT_MS)
            return sim_error(errstr, len, "v%d clients still running %d ms after the stop",
                         s->stage, JOIN_TIMEOUT_MS);
        if (running > 0)
            usleep(POLL_US);
    }
    return 0;
}

/* Kills what still runs, unmaps and removes the session's files. */
static void session_end(session *s)
{
    int i;

    if (s->ctl != NULL)
        atomic_store(&s->ctl->stop, 1);
    for (i = 0; i < s->n; i++) {
        sim_client_kill(s->pid[i]);
        s->pid[i] = 0;
    }
    sim_client_control_close(s->ctl);
    sim_history_close(s->h);
    s->ctl = NULL;
    s->h = NULL;
    if (s->ctl_path[0])
        unlink(s->ctl_path);
    if (s->h_path[0])
        unlink(s->h_path);
}

/* Hands an uncontended client a batch of n pairs and waits until it has
 * done them; *ns gets the time the client took, measured by itself. We
 * look once a millisecond, as the idle client does during our replay, so
 * each side's slices bear the same small cost of the other's polling. */
static int batch(session *s, long long n, int64_t *ns, char *errstr, size_t len)
{
    sim_client_slot *slot = &s->ctl->client[0];
    long long target = atomic_load(&slot->bench_target) + n;
    int64_t before = atomic_load(&slot->bench_ns), start = sim_now_ns();
    int running;

    atomic_store(&slot->bench_target, target);
    while (atomic_load(&slot->bench_done) < target) {
        if (session_poll(s, &running, errstr, len) != 0)
            return -1;
        if (running == 0)
            return sim_error(errstr, len, "v%d client ended in a batch", s->stage);
        if ((sim_now_ns() - start) / 1000000 > JOIN_TIMEOUT_MS)
            return sim_error(errstr, len, "v%d client did not finish %lld pairs in %d ms",
                         s->stage, n, JOIN_TIMEOUT_MS);
        usleep(POLL_US);
    }
    *ns = atomic_load(&slot->bench_ns) - before;
    return 0;
}

/* One uncontended client of the stage, started and waiting for batches. */
static int solo_start(sim_bench *b, session *s, int stage, char *errstr, size_t len)
{
    if (session_start(b, s, stage, SIM_PLAN_BENCH_SOLO, 1, errstr, len) != 0 ||
        session_ready(s, errstr, len) != 0)
        return -1;
    session_go(s);
    return 0;
}

static int solo_stop(session *s, char *errstr, size_t len)
{
    atomic_store(&s->ctl->stop, 1);
    return session_join(s, errstr, len);
}

/* A new client of the stage does n pairs and exits. */
static int run_pairs(sim_bench *b, int stage, long long n, char *errstr, size_t len)
{
    int64_t ns;
    session s;
    int rc;

    rc = solo_start(b, &s, stage, errstr, len);
    if (rc == 0)
        rc = batch(&s, n, &ns, errstr, len);
    if (rc == 0)
        rc = solo_stop(&s, errstr, len);
    session_end(&s);
    return rc;
}

/* ---- capture: the stage's commands ------------------------------------------------- */

void sim_bench_pair_free(sim_bench_pair *t)
{
    int i, j;

    for (i = 0; i < t->n; i++) {
        for (j = 0; j < t->cmd[i].argc; j++)
            free(t->cmd[i].argv[j]);
    }
    memset(t, 0, sizeof(*t));
}

/* Copies a logged argv. SLOWLOG shortens what it would not keep whole
 * ("... (12 more bytes)"): such a command cannot be replayed. */
static int copy_command(sim_bench_command *c, const redisReply *argv, char *errstr, size_t len)
{
    size_t i;

    if (argv->elements == 0 || argv->elements > SIM_BENCH_ARGS_MAX)
        return sim_error(errstr, len, "a command with %zu arguments", argv->elements);
    for (i = 0; i < argv->elements; i++) {
        const redisReply *a = argv->element[i];

        if (a->type != REDIS_REPLY_STRING || strstr(a->str, " more bytes)") ||
            strstr(a->str, " more arguments)"))
            return sim_error(errstr, len, "SLOWLOG shortened a command; cannot replay it");
        if ((c->argv[i] = malloc(a->len + 1)) == NULL)
            return sim_error(errstr, len, "out of memory");
        memcpy(c->argv[i], a->str, a->len + 1);
        c->len[i] = a->len;
        c->argc = (int)i + 1;
    }
    return 0;
}

static int same_command(const sim_bench_command *a, const sim_bench_command *b)
{
    int i;

    if (a->argc != b->argc)
        return 0;
    for (i = 0; i < a->argc; i++) {
        if (a->len[i] != b->len[i] || memcmp(a->argv[i], b->argv[i], a->len[i]) != 0)
            return 0;
    }
    return 1;
}

/* The log of two pairs, oldest first, into a trace of both. */
static int parse_log(const redisReply *r, sim_bench_pair *two, char *errstr, size_t len)
{
    size_t i;

    memset(two, 0, sizeof(*two));
    for (i = r->elements; i-- > 0;) {
        const redisReply *e = r->element[i];
        int origin = entry_origin(e);

        if (origin < 0)
            return sim_error(errstr, len, "SLOWLOG entry of an unknown shape");
        two->internal += origin == 1;
        if (origin != 0)
            continue;
        if (two->n == SIM_BENCH_SEQ_MAX)
            return sim_error(errstr, len, "more than %d commands in two pairs", SIM_BENCH_SEQ_MAX);
        if (copy_command(&two->cmd[two->n++], e->element[3], errstr, len) != 0)
            return -1;
    }
    return 0;
}

/* Two warm pairs must be the same commands twice; the second is the
 * pair. Anything else (a first-use step, a retry) is not one pair's cost. */
static int split_pairs(sim_bench_pair *two, sim_bench_pair *one, char *errstr, size_t len)
{
    int half = two->n / 2, i;

    if (two->n == 0 || two->n % 2 != 0 || two->internal % 2 != 0)
        return sim_error(errstr, len, "two pairs logged %d commands and %d in scripts: not twice the same",
                     two->n, two->internal);
    for (i = 0; i < half; i++) {
        if (!same_command(&two->cmd[i], &two->cmd[half + i]))
            return sim_error(errstr, len, "the second pair's commands differ from the first's");
    }
    memset(one, 0, sizeof(*one));
    one->n = half;
    one->internal = two->internal / 2;
    for (i = 0; i < half; i++) {
        one->cmd[i] = two->cmd[half + i];
        memset(&two->cmd[half + i], 0, sizeof(sim_bench_command));
    }
    two->n = half;
    return 0;
}

/* A first pair warms the server (a script stage's NOSCRIPT and EVAL
 * happen there), then two pairs of a new client are logged. */
static int capture(sim_bench *b, int stage, sim_bench_pair *t, char *errstr, size_t len)
{
    char ignored[ERR_LEN];
    redisReply *r = NULL;
    sim_bench_pair two = { 0 };
    int rc;

    if (run_pairs(b, stage, 1, errstr, len) != 0 || slowlog_on(b, errstr, len) != 0)
        return -1;
    rc = run_pairs(b, stage, 2, errstr, len);
    if (rc == 0)
        rc = (r = slowlog_get(b, errstr, len)) == NULL ? -1 : 0;
    /* Off in any case; its own error matters only when nothing failed. */
    if (slowlog_off(b, rc == 0 ? errstr : ignored, rc == 0 ? len : sizeof(ignored)) != 0)
        rc = -1;
    if (rc == 0)
        rc = parse_log(r, &two, errstr, len);
    freeReplyObject(r);
    if (rc == 0)
        rc = split_pairs(&two, t, errstr, len);
    sim_bench_pair_free(&two);
    return rc;
}

/* ---- limit: the commands alone ----------------------------------------------------- */

/* One pass over the pair's commands; each one's time added to ns[]. */
static int replay_once(redisContext *c, const sim_bench_pair *t, int64_t *ns,
                       char *errstr, size_t len)
{
    int i;

    for (i = 0; i < t->n; i++) {
        const sim_bench_command *cmd = &t->cmd[i];
        int64_t start = sim_now_ns();
        redisReply *r = redisCommandArgv(c, cmd->argc, (const char **)cmd->argv, cmd->len);

        ns[i] += sim_now_ns() - start;
        if (r == NULL || r->type == REDIS_REPLY_ERROR) {
            sim_error(errstr, len, "replaying %s: %s", cmd->argv[0],
                  r == NULL ? c->errstr : r->str);
            freeReplyObject(r);
            return -1;
        }
        freeReplyObject(r);
    }
    return 0;
}

/* The pair replayed for ms: pairs done, their time, each command's. */
static int replay(redisContext *c, const sim_bench_pair *t, long ms, long long *pairs,
                  int64_t *elapsed, int64_t *ns, char *errstr, size_t len)
{
    int64_t start = sim_now_ns(), end = start;

    *pairs = 0;
    while (end - start < ms * 1000000LL) {
        if (replay_once(c, t, ns, errstr, len) != 0)
            return -1;
        ++*pairs;
        end = sim_now_ns();
    }
    *elapsed = end - start;
    return 0;
}

/* Each slice's rates, and the time each command took in all of them. */
typedef struct slices {
    int n;
    double replay[SIM_BENCH_SLICES], stage[SIM_BENCH_SLICES]; /* pairs/s */
    double ratio[SIM_BENCH_SLICES];   /* stage / replay, slice by slice */
    long long pairs;
    int64_t cmd_ns[SIM_BENCH_SEQ_MAX];
} slices;

/* A slice of the replay, then as many pairs through the stage. */
static int slice(redisContext *c, session *s, const sim_bench_pair *t, long ms,
                 slices *sl, char *errstr, size_t len)
{
    long long pairs;
    int64_t replay_ns, stage_ns;

    if (replay(c, t, ms, &pairs, &replay_ns, sl->cmd_ns, errstr, len) != 0 ||
        batch(s, pairs, &stage_ns, errstr, len) != 0)
        return -1;
    sl->replay[sl->n] = pairs / seconds(replay_ns);
    sl->stage[sl->n] = pairs / seconds(stage_ns);
    sl->ratio[sl->n] = sl->stage[sl->n] / sl->replay[sl->n];
    sl->n++;
    sl->pairs += pairs;
    return 0;
}

/* The limit and the stage in alternating slices: the commands replayed
 * raw on a connection like the stage's, then the same number of pairs by
 * the stage's own client, and again. A slow stretch of the machine (on a
 * virtual machine a slice now and then runs at a fifth of the speed)
 * skews a slice or two: the medians leave them out. The ratio is taken
 * slice by slice, so a drift slower than a slice cancels in it. */
static int uncontended(sim_bench *b, int stage, sim_bench_stage *sr, char *errstr, size_t len)
{
    redisContext *c = sim_server_connect(&b->cl.primary, TIMEOUT_MS, errstr, len);
    slices sl;
    session s;
    int i, rc;

    if (c == NULL)
        return -1;
    memset(&sl, 0, sizeof(sl));
    rc = solo_start(b, &s, stage, errstr, len);
    if (rc == 0)
        rc = slice(c, &s, &sr->pair, SIM_BENCH_WARM_MS, &sl, errstr, len);
    memset(&sl, 0, sizeof(sl));
    for (i = 0; i < SIM_BENCH_SLICES && rc == 0; i++)
        rc = slice(c, &s, &sr->pair, SIM_BENCH_SLICE_MS, &sl, errstr, len);
    if (rc == 0)
        rc = solo_stop(&s, errstr, len);
    session_end(&s);
    redisFree(c);
    if (rc != 0)
        return -1;
    sr->fig[SIM_BENCH_LIMIT] = median(sl.replay, sl.n);
    sr->fig[SIM_BENCH_SOLO] = median(sl.stage, sl.n);
    sr->fig[SIM_BENCH_RATIO] = median(sl.ratio, sl.n);
    for (i = 0; i < sr->pair.n; i++)
        sr->cmd_rate[i] = sl.cmd_ns[i] > 0 ? sl.pairs / seconds(sl.cmd_ns[i]) : NAN;
    return 0;
}

/* ---- contended: 8 clients, the history ------------------------------------------------ */

/* What the history of a contended window says. */
typedef struct tally {
    int64_t go, stop;            /* the window */
    double *handoff, *wait;      /* samples, ms */
    size_t nhandoff, nwait;
    long rewon;                  /* the releaser took the lock again */
    long served[SIM_CLIENTS_MAX]; /* acquisitions in the window, per client */
    int64_t invoked[SIM_CLIENTS_MAX]; /* the open acquire call's start, 0 = none */
    int last_releaser;           /* the release not yet followed by an acquire */
    int64_t released;
} tally;

/* An acquire call ends: its wait counts when it began in the window. */
static void end_call(tally *t, const sim_event *e)
{
    int64_t began = t->invoked[e->client];

    if (began != 0 && began >= t->go && began < t->stop)
        t->wait[t->nwait++] = (double)(e->t_ns - began) / 1e6;
    t->invoked[e->client] = 0;
}

/* The lock changed hands (or did not) when an acquire returned OK. */
static void acquired(tally *t, const sim_event *e, sim_bench_stage *sr)
{
    int in_window = e->t_ns >= t->go && e->t_ns < t->stop;

    sr->acquisitions++;
    if (in_window)
        t->served[e->client]++;
    if (in_window && t->last_releaser >= 0) {
        if (t->last_releaser == e->client)
            t->rewon++;
        else
            t->handoff[t->nhandoff++] = (double)(e->t_ns - t->released) / 1e6;
    }
    t->last_releaser = -1;
}

static void tally_event(tally *t, const sim_event *e, sim_bench_stage *sr)
{
    if (e->client < 0 || e->client >= SIM_CLIENTS_MAX)
        return;
    switch (e->type) {
    case SIM_EV_ACQUIRE_INVOKE:
        t->invoked[e->client] = e->t_ns;
        break;
    case SIM_EV_ACQUIRE_OK:
        end_call(t, e);
        acquired(t, e, sr);
        break;
    case SIM_EV_ACQUIRE_BUSY:
    case SIM_EV_ACQUIRE_ERROR:
        end_call(t, e);
        sr->busy += e->type == SIM_EV_ACQUIRE_BUSY;
        sr->errors += e->type == SIM_EV_ACQUIRE_ERROR;
        break;
    case SIM_EV_RELEASE_INVOKE:
        t->last_releaser = e->client;
        t->released = e->t_ns;
        break;
    case SIM_EV_RELEASE_NOT_OWNER:
    case SIM_EV_RELEASE_ERROR:
        sr->errors++;
        break;
    default:
        break;
    }
}

/* The history's figures: rates and fairness over the window, waits of the
 * calls made in it (the last of which may end after it). */
static void tally_figures(tally *t, int n, sim_bench_stage *sr)
{
    long in_window = 0, least = LONG_MAX, most = 0;
    int i;

    for (i = 0; i < n; i++) {
        in_window += t->served[i];
        least = t->served[i] < least ? t->served[i] : least;
        most = t->served[i] > most ? t->served[i] : most;
    }
    qsort(t->handoff, t->nhandoff, sizeof(double), cmp_double);
    qsort(t->wait, t->nwait, sizeof(double), cmp_double);
    sr->fig[SIM_BENCH_ACQ_RATE] = in_window / seconds(t->stop - t->go);
    sr->fig[SIM_BENCH_HANDOFF_P50] = percentile(t->handoff, t->nhandoff, 50);
    sr->fig[SIM_BENCH_HANDOFF_P99] = percentile(t->handoff, t->nhandoff, 99);
    sr->fig[SIM_BENCH_WAIT_P50] = percentile(t->wait, t->nwait, 50);
    sr->fig[SIM_BENCH_WAIT_P99] = percentile(t->wait, t->nwait, 99);
    sr->fig[SIM_BENCH_WAIT_MAX] = t->nwait ? t->wait[t->nwait - 1] : NAN;
    sr->fig[SIM_BENCH_REWON] = t->rewon + t->nhandoff > 0
        ? (double)t->rewon / (double)(t->rewon + t->nhandoff) : NAN;
    sr->fig[SIM_BENCH_LEAST] = (double)least;
    sr->fig[SIM_BENCH_MOST] = (double)most;
}

static int analyse(const session *s, int64_t go, int64_t stop, sim_bench_stage *sr,
                   char *errstr, size_t len)
{
    tally t;
    sim_event *ev;
    size_t n, i;

    if (atomic_load(&s->h->reserved) > SIM_HISTORY_MAX)
        return sim_error(errstr, len, "v%d: the history is full (%d events): shorten SIM_BENCH_WINDOW_MS",
                     s->stage, SIM_HISTORY_MAX);
    if ((ev = sim_history_snapshot(s->h, &n)) == NULL)
        return sim_error(errstr, len, "out of memory for the history");
    memset(&t, 0, sizeof(t));
    t.go = go;
    t.stop = stop;
    t.last_releaser = -1;
    t.handoff = malloc((n + 1) * sizeof(double));
    t.wait = malloc((n + 1) * sizeof(double));
    if (t.handoff != NULL && t.wait != NULL) {
        for (i = 0; i < n; i++)
            tally_event(&t, &ev[i], sr);
        tally_figures(&t, s->n, sr);
    }
    free(ev);
    free(t.handoff);
    free(t.wait);
    return t.handoff != NULL && t.wait != NULL ? 0 : sim_error(errstr, len, "out of memory");
}

/* The counter on the resource server: set before, read after. */
static int counter(sim_bench *b, int set, long long *value, char *errstr, size_t len)
{
    redisReply *r = set ? ask(b->res, errstr, len, "SET %s 0", SIM_STOCK_KEY)
                        : ask(b->res, errstr, len, "GET %s", SIM_STOCK_KEY);

    if (r == NULL)
        return -1;
    *value = r->type == REDIS_REPLY_STRING ? atoll(r->str) : 0;
    freeReplyObject(r);
    return 0;
}

/* The window itself: go, wait, stop, and every client out. A machine
 * fast enough to fill the history (three events per acquisition) gets a
 * shorter window; the rates are per second of the window it got. */
static int window(sim_bench *b, session *s, int64_t *go, int64_t *stop,
                  char *errstr, size_t len)
{
    if (session_ready(s, errstr, len) != 0 || slowlog_on(b, errstr, len) != 0)
        return -1;
    *go = session_go(s);
    while (sim_now_ns() - *go < SIM_BENCH_WINDOW_MS * 1000000LL &&
           atomic_load(&s->h->reserved) < HISTORY_ROOM)
        sim_sleep_ms(WINDOW_POLL_MS);
    atomic_store(&s->ctl->stop, 1);
    *stop = sim_now_ns();
    return session_join(s, errstr, len);
}

static int contended(sim_bench *b, int stage, sim_bench_stage *sr, char *errstr, size_t len)
{
    long long before = 0, after = 0, internal = 0;
    int64_t go = 0, stop = 0;
    session s;
    int rc;

    if (counter(b, 1, &sr->counter, errstr, len) != 0 ||
        commandstats(b, &before, errstr, len) != 0)
        return -1;
    rc = session_start(b, &s, stage, SIM_PLAN_BENCH_RMW, SIM_BENCH_CONTENDERS, errstr, len);
    if (rc == 0)
        rc = window(b, &s, &go, &stop, errstr, len);
    if (rc == 0)
        rc = slowlog_count(b, &sr->round_trips, &internal, errstr, len);
    if (rc == 0 && (rc = slowlog_off(b, errstr, len)) == 0 &&
        (rc = commandstats(b, &after, errstr, len)) == 0 &&
        (rc = counter(b, 0, &sr->counter, errstr, len)) == 0)
        rc = analyse(&s, go, stop, sr, errstr, len);
    session_end(&s);
    if (rc != 0)
        return -1;
    sr->commands = after - before;
    sr->window_ms = (double)(stop - go) / 1e6;
    sr->fig[SIM_BENCH_RTT_ACQ] = sr->acquisitions ? (double)sr->round_trips / sr->acquisitions : NAN;
    sr->fig[SIM_BENCH_CMDS_ACQ] = sr->acquisitions ? (double)sr->commands / sr->acquisitions : NAN;
    return 0;
}

/* ---- one stage, one run ----------------------------------------------------------- */

/* No key left behind; with scripts, no cached script either: each stage
 * starts on a clean server, and its first pair loads what it needs. */
static int reset(sim_bench *b, int scripts, char *errstr, size_t len)
{
    if (tell(b->adm, errstr, len, "FLUSHALL %s", "SYNC") != 0)
        return -1;
    return scripts ? tell(b->adm, errstr, len, "SCRIPT FLUSH %s", "SYNC") : 0;
}

int sim_bench_measure(sim_bench *b, int run, int stage, char *errstr,
                      size_t len)
{
    sim_bench_stage *sr = &b->result[run][stage - 1];
    int f;

    for (f = 0; f < SIM_BENCH_FIGURES; f++)
        sr->fig[f] = NAN;
    sim_bench_progress(b, run, stage, "capture");
    if (reset(b, 1, errstr, len) != 0 || capture(b, stage, &sr->pair, errstr, len) != 0)
        return -1;
    sim_bench_progress(b, run, stage, "uncontended");
    if (reset(b, 0, errstr, len) != 0 || uncontended(b, stage, sr, errstr, len) != 0)
        return -1;
    sim_bench_progress(b, run, stage, "contended");
    if (reset(b, 0, errstr, len) != 0 || contended(b, stage, sr, errstr, len) != 0)
        return -1;
    sr->done = 1;
    return 0;
}
