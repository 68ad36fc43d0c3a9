/* failpoint: parses DLOCK_FAILPOINTS once and performs the armed action
 * when a stage reaches a named step. See failpoint.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "failpoint.h"
#include "util.h"

#define STOP_SEEN_TRIES 1000 /* helper: 1 ms polls for our own stop */

typedef enum action { ACT_STOP, ACT_SLEEP, ACT_CRASH } action;

typedef struct armed {
    char name[SIM_DETAIL_LEN];  /* the step, "release.after_get" */
    char text[SIM_DETAIL_LEN];  /* as written: "release.after_get=stop(900)" */
    action act;
    long ms;                    /* stop and sleep: how long */
} armed;

static armed table[SIM_FAILPOINT_MAX];
static int narmed;
static pthread_once_t loaded = PTHREAD_ONCE_INIT;

/* Set by sim_failpoint_attach inside the simulator. */
static sim_history *history;
static sim_control *control;
static int self = SIM_NO_CLIENT;

/* "crash", "stop(900)", "sleep(50)". */
static int parse_action(const char *s, armed *a, char *errstr, size_t len)
{
    char *end;

    if (strcmp(s, "crash") == 0) {
        a->act = ACT_CRASH;
        return 0;
    }
    if (strncmp(s, "stop(", 5) == 0)
        a->act = ACT_STOP;
    else if (strncmp(s, "sleep(", 6) == 0)
        a->act = ACT_SLEEP;
    else
        return sim_error(errstr, len, "unknown failpoint action '%s': use crash, stop(ms) or sleep(ms)", s);
    errno = 0;
    a->ms = strtol(strchr(s, '(') + 1, &end, 10);
    if (errno != 0 || a->ms <= 0 || strcmp(end, ")") != 0)
        return sim_error(errstr, len, "bad duration in '%s': give milliseconds > 0", s);
    return 0;
}

/* One "step=action" item of n bytes. */
static int parse_item(const char *item, size_t n, armed *a, char *errstr,
                      size_t len)
{
    const char *eq = memchr(item, '=', n);
    char action_text[SIM_DETAIL_LEN];

    if (n >= SIM_DETAIL_LEN)
        return sim_error(errstr, len, "failpoint '%.*s' is too long", (int)n, item);
    if (eq == NULL || eq == item)
        return sim_error(errstr, len, "failpoint '%.*s' is not step=action", (int)n, item);
    memset(a, 0, sizeof(*a));
    snprintf(a->text, sizeof(a->text), "%.*s", (int)n, item);
    snprintf(a->name, sizeof(a->name), "%.*s", (int)(eq - item), item);
    snprintf(action_text, sizeof(action_text), "%.*s", (int)(n - (eq - item) - 1), eq + 1);
    return parse_action(action_text, a, errstr, len);
}

static int parse(const char *spec, armed *out, int *count, char *errstr,
                 size_t len)
{
    const char *p = spec;

    *count = 0;
    while (*p != '\0') {
        size_t n = strcspn(p, ",");

        if (*count == SIM_FAILPOINT_MAX)
            return sim_error(errstr, len, "more than %d failpoints armed", SIM_FAILPOINT_MAX);
        if (parse_item(p, n, &out[*count], errstr, len) != 0)
            return -1;
        (*count)++;
        p += n + (p[n] == ',');
    }
    return 0;
}

int sim_failpoint_check(const char *spec, char *errstr, size_t len)
{
    armed scratch[SIM_FAILPOINT_MAX];
    int n;

    return parse(spec, scratch, &n, errstr, len);
}

static void load(void)
{
    const char *spec = getenv(SIM_FAILPOINT_ENV);
    char why[128];

    if (spec != NULL && parse(spec, table, &narmed, why, sizeof(why)) != 0)
        narmed = 0;
}

void sim_failpoint_attach(sim_history *h, sim_control *ctl, int client)
{
    history = h;
    control = ctl;
    self = client;
}

/* ---- the actions ------------------------------------------------------------ */

static void record(sim_event_type type, long value, const char *detail)
{
    /* The main thread is 0; a stage's own thread (v6's watchdog) is 1. */
    int thread = gettid() == getpid() ? 0 : 1;

    if (history != NULL)
        sim_history_add(history, self, thread, type, value, detail);
}

/* Whether /proc says the process is stopped: state 'T' after the name. */
static int is_stopped(const char *stat_path)
{
    char buf[256];
    const char *paren;
    ssize_t n;
    int fd = open(stat_path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return 0;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    paren = strrchr(buf, ')');
    return paren != NULL && paren[1] == ' ' && paren[2] == 'T';
}

/* Outside the simulator nobody else would send SIGCONT: a forked helper
 * waits until we are stopped (a SIGCONT sent before the stop would be
 * lost), waits ms, and resumes us. The child makes only system calls. */
static void stop_with_helper(long ms)
{
    char stat_path[64];
    pid_t me = getpid(), helper;
    int i;

    snprintf(stat_path, sizeof(stat_path), "/proc/%d/stat", (int)me);
    helper = fork();
    if (helper == 0) {
        for (i = 0; i < STOP_SEEN_TRIES && !is_stopped(stat_path); i++)
            sim_sleep_ms(1);
        sim_sleep_ms(ms);
        kill(me, SIGCONT);
        _exit(0);
    }
    if (helper < 0) {
        sim_sleep_ms(ms); /* no helper: at least the delay, by this thread */
        return;
    }
    kill(me, SIGSTOP);
    while (waitpid(helper, NULL, 0) < 0 && errno == EINTR)
        ;
}

/* Stops every thread of the process. In the simulator the nemesis sees
 * the stop (waitpid WUNTRACED), reads how long from the control block and
 * resumes us; it records the pause's end. */
static void stop_process(const armed *a)
{
    record(SIM_EV_PAUSE_BEGIN, a->ms, a->name);
    if (control == NULL) {
        stop_with_helper(a->ms);
        return;
    }
    atomic_store(&control->client[self].stop_ms, a->ms);
    sim_control_reach(control, self, SIM_PHASE_STOPPED);
    kill(getpid(), SIGSTOP);
}

static void fire(const armed *a)
{
    record(SIM_EV_FAILPOINT, a->ms, a->text);
    switch (a->act) {
    case ACT_STOP:
        stop_process(a);
        break;
    case ACT_SLEEP:
        sim_sleep_ms(a->ms);
        break;
    case ACT_CRASH:
        record(SIM_EV_CRASH, 0, a->name);
        kill(getpid(), SIGKILL);
        break;
    }
}

void dlock_failpoint(const char *name)
{
    int i;

    pthread_once(&loaded, load);
    for (i = 0; i < narmed; i++) {
        if (strcmp(table[i].name, name) == 0)
            fire(&table[i]);
    }
}
