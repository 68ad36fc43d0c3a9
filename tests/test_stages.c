/* test_stages: the list of stages (sim/stages.def), the answer key
 * (sim/play/scenarios.c) and the stage folders hold together. No Redis: only
 * the tables and the stages' sources are read.
 *
 * Everything that builds, tests, plays or diffs a stage takes it from
 * stages.def, so a line that breaks the rules below breaks all of them at
 * once: these tests say which rule, in a sentence. And since a stage is a
 * copy of its base with one idea changed, its helpers must stay the
 * base's: a fix made to one copy only fails here. */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "checker.h"
#include "scenarios.h"
#include "stage.h"
#include "tcases.h"

#ifndef SRCDIR
#define SRCDIR "." /* the repository root; make passes its own */
#endif

#define PATH_LEN 512

/* The numbers of the lines, in the order of the list. */
#define SIM_STAGE(n, folder, base, server, masters, adds) n,
static const int line_numbers[] = {
#include "stages.def"
};
#undef SIM_STAGE
#define LINES ((int)(sizeof(line_numbers) / sizeof(line_numbers[0])))

/* Stage numbers grow from line to line (a number may be skipped: a stage
 * written apart and not merged yet), the last is SIM_STAGES, each folder
 * is vN-<idea> with a lock.h and a lock.c, each stage is built on an
 * earlier one (or none) and talks to at least one master. */
START_TEST(test_stages_lines)
{
    char prefix[16], path[PATH_LEN];
    const char *files[] = { "lock.h", "lock.c" };
    int i, n;
    size_t f;

    ck_assert_msg(LINES >= 1, "sim/stages.def lists no stage");
    ck_assert_msg(line_numbers[LINES - 1] == SIM_STAGES, "the last line of sim/stages.def is "
                  "stage %d, but SIM_STAGES is %d", line_numbers[LINES - 1], SIM_STAGES);
    for (i = 0; i < LINES; i++) {
        const sim_stage *s = sim_stage_get(n = line_numbers[i]);

        ck_assert_msg(i == 0 || n > line_numbers[i - 1], "line %d of sim/stages.def is stage %d, "
                      "after stage %d; expected the numbers to grow", i + 1, n, line_numbers[i - 1]);
        ck_assert_msg(s != NULL && s->n == n, "stage %d of sim/stages.def is not found by its "
                      "number", n);
        snprintf(prefix, sizeof(prefix), "v%d-", n);
        ck_assert_msg(strncmp(s->dir, prefix, strlen(prefix)) == 0,
                      "stage %d's folder is %s; expected a name that begins with %s",
                      n, s->dir, prefix);
        ck_assert_msg(s->base >= 0 && s->base < n && (s->base == 0 || sim_stage_get(s->base)),
                      "stage %d (%s) is built on stage %d; expected an earlier stage of the "
                      "list, or 0 for none", n, s->dir, s->base);
        ck_assert_msg(s->masters >= 1, "stage %d (%s) talks to %d masters; expected 1 or more",
                      n, s->dir, s->masters);
        for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
            snprintf(path, sizeof(path), "%s/%s/%s", SRCDIR, s->dir, files[f]);
            ck_assert_msg(access(path, R_OK) == 0, "stage %d's line names the folder %s, "
                          "but %s cannot be read", n, s->dir, path);
        }
    }
    ck_assert_msg(sim_stage_get(0) == NULL && sim_stage_get(SIM_STAGES + 1) == NULL,
                  "sim_stage_get answers for a number that is not a stage");
}
END_TEST

/* A stage folder is what a student lists and copies: the contract, the
 * lock and its README, and nothing else (no leftover of a merge, no
 * second lock file to wonder about). */
START_TEST(test_stages_folder_holds_three_files)
{
    char path[PATH_LEN];
    int i;

    for (i = 0; i < LINES; i++) {
        const sim_stage *s = sim_stage_get(line_numbers[i]);
        struct dirent *e;
        DIR *d;

        snprintf(path, sizeof(path), "%s/%s", SRCDIR, s->dir);
        d = opendir(path);
        ck_assert_msg(d != NULL, "stage %d's folder %s cannot be listed", s->n, path);
        while ((e = readdir(d)) != NULL) {
            const char *name = e->d_name;
            int ok = strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
                     strcmp(name, "lock.h") == 0 || strcmp(name, "lock.c") == 0 ||
                     strcmp(name, "README.md") == 0;

            if (!ok)
                closedir(d);
            ck_assert_msg(ok, "%s holds %s; a stage folder holds lock.h, lock.c and README.md "
                          "only: remove it, or move it out of the stage", s->dir, name);
        }
        closedir(d);
    }
}
END_TEST

/* A stage keeps what its base can do: a line adds capabilities. */
START_TEST(test_stages_inherit_capabilities)
{
    int n;

    for (n = 1; n <= SIM_STAGES; n++) {
        const sim_stage *s = sim_stage_get(n);
        unsigned base;

        if (s == NULL)
            continue; /* a number the list skips */
        base = s->base > 0 ? sim_stage_get(s->base)->caps : 0;

        ck_assert_msg((s->caps & base) == base, "stage %d (%s) lacks capabilities %#x of "
                      "its base, stage %d", n, s->dir, base & ~s->caps, s->base);
    }
    ck_assert_msg(sim_stage_get(1)->caps == 0, "the first stage has capabilities %#x; "
                  "expected none (the naive lock)", sim_stage_get(1)->caps);
}
END_TEST

/* 1 when stage s's lock.c calls dlock_failpoint("name"). */
static int calls_failpoint(const sim_stage *s, const char *name)
{
    char path[PATH_LEN], call[128], line[1024];
    int found = 0;
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s/lock.c", SRCDIR, s->dir);
    snprintf(call, sizeof(call), "dlock_failpoint(\"%s\")", name);
    f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot read %s", path);
    while (!found && fgets(line, sizeof(line), f) != NULL)
        found = strstr(line, call) != NULL;
    fclose(f);
    return found;
}

/* A scenario's failpoint fires where the stage has its step: the stages
 * whose capabilities give them the step (sim_stage_has_step, which the
 * matrix test, the matrix's "(-)" and the course's TASK.md go by) are
 * those whose lock.c calls it, and every step is named in words. */
START_TEST(test_stages_failpoint_steps)
{
    for (size_t i = 0; i < sim_scenario_count(); i++) {
        const sim_scenario *sc = sim_scenario_at(i);

        for (int a = 0; sc->actors[a].name != 0; a++) {
            char fp[64];

            if (sc->actors[a].failpoint == NULL)
                continue;
            snprintf(fp, sizeof(fp), "%.*s", (int)strcspn(sc->actors[a].failpoint, "="),
                     sc->actors[a].failpoint);
            ck_assert_msg(sim_stage_step(fp) != NULL, "scenario %s arms %s, a step "
                          "sim/base/stage.c does not name: add it to its steps", sc->name, fp);
            for (int k = 0; k < LINES; k++) {
                const sim_stage *s = sim_stage_get(line_numbers[k]);

                ck_assert_msg(sim_stage_has_step(s, fp) == calls_failpoint(s, fp),
                              "%s's lock.c %s dlock_failpoint(\"%s\"), but its capabilities "
                              "say it %s the %s (sim_stage_has_step)", s->dir,
                              calls_failpoint(s, fp) ? "calls" : "never calls", fp,
                              sim_stage_has_step(s, fp) ? "has" : "has no", sim_stage_step(fp));
            }
        }
    }
}
END_TEST

/* Every scenario has a cell for every stage that is built on no other
 * (the others answer like their base when they have none), and every
 * cell is a set of anomaly names. */
START_TEST(test_stages_answer_key)
{
    unsigned set;
    size_t i;
    int n;

    for (i = 0; i < sim_scenario_count(); i++) {
        const sim_scenario *s = sim_scenario_at(i);

        for (n = 1; n <= SIM_STAGES; n++) {
            const char *cell = s->expect[n - 1];

            if (sim_stage_get(n) == NULL) {
                ck_assert_msg(cell == NULL, "scenario %s has an answer for stage %d, which "
                              "sim/stages.def does not list", s->name, n);
                continue;
            }
            ck_assert_msg(cell != NULL || sim_stage_get(n)->base > 0,
                          "scenario %s has no answer for stage %d (%s), which is built on "
                          "no other stage: add its cell to the scenario's expect line in "
                          "sim/play/scenarios.c", s->name, n, sim_stage_name(n));
            ck_assert_msg(cell == NULL || sim_anomaly_parse(cell, &set) == 0,
                          "scenario %s's answer for stage %d is \"%s\"; expected anomaly "
                          "names (ME MD DL) or -", s->name, n, cell);
        }
    }
}
END_TEST

/* ---- the helpers the stages share ------------------------------------------------
 * A stage is a copy of its base with one idea changed: every function it
 * shares by name with its base is the same, byte for byte, unless a line
 * of tests/differs.def says why it differs. A helper fixed in one stage
 * and not in the others fails here; so does a reason that no longer holds. */

#define FUNCS_MAX 64
#define SOURCE_MAX (256 * 1024)

/* Where a stage's function differs from its base's, and why. */
static const struct differs {
    int stage;
    const char *func;
    const char *why;
} differs[] = {
#define STAGE_DIFFERS(stage, func, why) { stage, #func, why },
#include "differs.def"
#undef STAGE_DIFFERS
};

/* One function of a lock.c: its name and its text, signature to "}". */
typedef struct func {
    char name[64];
    const char *text;
    size_t len;
} func;

typedef struct source {
    char text[SOURCE_MAX];
    func f[FUNCS_MAX];
    int n;
} source;

static source sources[2];  /* a stage and its base */

static const char *why_differs(int stage, const char *name)
{
    size_t i;

    for (i = 0; i < sizeof(differs) / sizeof(differs[0]); i++) {
        if (differs[i].stage == stage && strcmp(differs[i].func, name) == 0)
            return differs[i].why;
    }
    return NULL;
}

/* The name of the function the line (n bytes) at column 0 defines, or ""
 * when it defines none ("__attribute__((weak)) void f(" names f). */
static void def_name(const char *line, size_t n, char *name, size_t len)
{
    const char *open, *end, *weak = "__attribute__((weak)) ";

    name[0] = '\0';
    if (n > strlen(weak) && strncmp(line, weak, strlen(weak)) == 0) {
        line += strlen(weak);
        n -= strlen(weak);
    }
    if (n == 0 || !isalpha((unsigned char)line[0]) || strncmp(line, "typedef", 7) == 0 ||
        (open = memchr(line, '(', n)) == NULL || memchr(line, ';', n) != NULL ||
        memchr(line, '=', (size_t)(open - line)) != NULL)
        return;
    for (end = open; end > line && (isalnum((unsigned char)end[-1]) || end[-1] == '_'); end--)
        ;
    snprintf(name, len, "%.*s", (int)(open - end), end);
}

/* A definition runs from its first line to the first line that is "}";
 * its body opens with the first line that is "{". */
static void scan(source *src)
{
    char *line = src->text, *next, *brace;
    char name[64];

    for (; *line != '\0' && src->n < FUNCS_MAX; line = next) {
        next = strchr(line, '\n') != NULL ? strchr(line, '\n') + 1 : line + strlen(line);
        def_name(line, (size_t)(next - line), name, sizeof(name));
        brace = strstr(line, "\n{\n");
        if (name[0] == '\0' || brace == NULL || memchr(line, ';', (size_t)(brace - line)))
            continue;
        next = strstr(brace, "\n}\n");
        ck_assert_msg(next != NULL, "%s opens and never closes", name);
        next += 3;
        snprintf(src->f[src->n].name, sizeof(src->f[src->n].name), "%s", name);
        src->f[src->n].text = line;
        src->f[src->n].len = (size_t)(next - line);
        src->n++;
    }
}

static void load(source *src, int stage)
{
    char path[PATH_LEN];
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "%s/%s/lock.c", SRCDIR, sim_stage_name(stage));
    f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot read %s", path);
    n = fread(src->text, 1, sizeof(src->text) - 1, f);
    fclose(f);
    ck_assert_msg(n < sizeof(src->text) - 1, "%s is longer than %d bytes", path, SOURCE_MAX);
    src->text[n] = '\0';
    src->n = 0;
    scan(src);
    ck_assert_msg(src->n > 0, "found no function in %s", path);
}

static const func *find(const source *src, const char *name)
{
    int i;

    for (i = 0; i < src->n; i++) {
        if (strcmp(src->f[i].name, name) == 0)
            return &src->f[i];
    }
    return NULL;
}

/* Each stage against its base, function by function. */
START_TEST(test_stages_shared_helpers_match)
{
    int n, i, compared = 0;

    for (n = 1; n <= SIM_STAGES; n++) {
        const sim_stage *s = sim_stage_get(n);

        if (s == NULL || s->base == 0)
            continue;
        load(&sources[0], n);
        load(&sources[1], s->base);
        for (i = 0; i < sources[0].n; i++) {
            const func *f = &sources[0].f[i], *b = find(&sources[1], f->name);
            const char *why = why_differs(n, f->name);
            int same;

            if (b == NULL)
                continue;
            same = f->len == b->len && memcmp(f->text, b->text, f->len) == 0;
            compared++;
            ck_assert_msg(same || why != NULL,
                          "%s() of stage %d (%s) differs from that of its base, stage %d, and "
                          "nothing says why: make the two the same, or give the reason in "
                          "tests/differs.def", f->name, n, s->dir, s->base);
            ck_assert_msg(!same || why == NULL,
                          "%s() of stage %d is its base's again, yet tests/differs.def "
                          "says \"%s\": remove that line",
                          f->name, n, why);
        }
    }
    ck_assert_msg(compared > 0 || SIM_STAGES == 1,
                  "no function of any stage was compared with its base's");
}
END_TEST

/* Every line of tests/differs.def names a stage built on another and a
 * function both have: a reason for nothing would hide nothing. */
START_TEST(test_stages_differs_table_is_current)
{
    size_t i;

    for (i = 0; i < sizeof(differs) / sizeof(differs[0]); i++) {
        const sim_stage *s = sim_stage_get(differs[i].stage);

        ck_assert_msg(s != NULL && s->base > 0, "tests/differs.def names stage %d, which "
                      "is not built on another stage", differs[i].stage);
        load(&sources[0], s->n);
        load(&sources[1], s->base);
        ck_assert_msg(find(&sources[0], differs[i].func) != NULL &&
                      find(&sources[1], differs[i].func) != NULL,
                      "tests/differs.def gives a reason for %s() of stage %d, but stage %d "
                      "or its base has no such function", differs[i].func, s->n, s->n);
    }
}
END_TEST

Suite *stages_suite(void)
{
    const tcase_row tcases[] = {
        TCASE_ROW("the list",
                  test_stages_lines, test_stages_folder_holds_three_files,
                  test_stages_inherit_capabilities, test_stages_answer_key,
                  test_stages_failpoint_steps),
        TCASE_ROW("shared helpers",
                  test_stages_shared_helpers_match, test_stages_differs_table_is_current),
    };

    return TABLE_SUITE("stages", tcases, add_tcase);
}
