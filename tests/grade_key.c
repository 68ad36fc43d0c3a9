/* grade_key: the cells of the fault matrix that tell a stage from its
 * base, for the course's exercises and their grader (build/grade_key).
 *
 *   grade_key N
 *
 * A student starts stage N from its base's lock.c, and N's row of the
 * matrix grades the attempt. The base's lock fails a cell of that row
 * when the row says something of N that it does not say of the base:
 *
 *   key      the answer key's cell differs (sim/play/scenarios.c)
 *   story    README.md's story of the row states a fact of N's cell that
 *            it does not state of the base's (tests/row_claims.c): the
 *            matrix test checks it on N's run
 *   servers  N's lock talks to other servers than its base's (more
 *            masters, another kind): the base's lock takes no lock there,
 *            so every cell where something must happen fails, one with
 *            anomalies to show or a crowd that must sell its stock
 *
 * One line per such cell, tab-separated: the scenario, the reason, the
 * base's key, N's key, what the scenario shows. A key is written as the
 * matrix writes it: "(-)" where the scenario's failpoint marks a step
 * the stage does not have. Nothing for a stage built on no other.
 *
 *   grade_key -f N
 *
 * The scenarios' failpoints instead, one line each, tab-separated: the
 * failpoint, the scenario that arms it, 1 when stage N has its step (its
 * lock must call it there) or 0 (its lock must not), the step in words.
 * A bad argument: one line on stderr, exit 2. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "row_claims.h"
#include "scenarios.h"
#include "stage.h"

/* 1 when some sentence of the row's story speaks of stage n's cell and
 * not of stage b's. */
static int story_differs(const sim_scenario *s, int n, int b)
{
    for (size_t i = 0; i < row_claims_count(); i++) {
        const row_claim *c = row_claim_at(i);

        if (strcmp(c->scenario, s->name) == 0 && row_claim_speaks_of(c, n) &&
            !row_claim_speaks_of(c, b))
            return 1;
    }
    return 0;
}

/* 1 when a lock that never takes the lock fails the cell: it expects
 * anomalies, or a crowd loops until the stock is sold. */
static int needs_a_lock(const sim_scenario *s, int n)
{
    if (sim_scenario_expected(s, n) != 0)
        return 1;
    for (int i = 0; s->actors[i].name != 0; i++)
        if (s->actors[i].plan == SIM_PLAN_LOOP)
            return 1;
    return 0;
}

/* The failpoint scenario s arms, without its action; NULL: none. */
static const char *failpoint(const sim_scenario *s, char *buf, size_t len)
{
    for (int i = 0; s->actors[i].name != 0; i++)
        if (s->actors[i].failpoint != NULL) {
            snprintf(buf, len, "%.*s", (int)strcspn(s->actors[i].failpoint, "="),
                     s->actors[i].failpoint);
            return buf;
        }
    return NULL;
}

/* Stage st's key of s, "(-)" where its failpoint cannot fire. */
static const char *key(const sim_scenario *s, const sim_stage *st, char *buf, size_t len)
{
    char fp[64];
    const char *k = sim_scenario_key(s, st->n);

    if (failpoint(s, fp, sizeof(fp)) != NULL && !sim_stage_has_step(st, fp)) {
        snprintf(buf, len, "(%s)", k);
        return buf;
    }
    return k;
}

static void print_failpoints(const sim_stage *st)
{
    char fp[64];

    for (size_t i = 0; i < sim_scenario_count(); i++) {
        const sim_scenario *s = sim_scenario_at(i);

        if (failpoint(s, fp, sizeof(fp)) != NULL)
            printf("%s\t%s\t%d\t%s\n", fp, s->name, sim_stage_has_step(st, fp),
                   sim_stage_step(fp) != NULL ? sim_stage_step(fp) : "a step of the protocol");
    }
}

static const char *reason(const sim_scenario *s, const sim_stage *st, const sim_stage *base)
{
    if (strcmp(sim_scenario_key(s, st->n), sim_scenario_key(s, base->n)) != 0)
        return "key";
    if (story_differs(s, st->n, base->n))
        return "story";
    if ((st->masters != base->masters || strcmp(st->server, base->server) != 0) &&
        needs_a_lock(s, st->n))
        return "servers";
    return NULL;
}

int main(int argc, char **argv)
{
    const sim_stage *st, *base;
    char *end;
    long n;

    int fps = argc == 3 && strcmp(argv[1], "-f") == 0;
    char bk[32], nk[32];

    n = argc == 2 + fps ? strtol(argv[1 + fps], &end, 10) : 0;
    if (argc != 2 + fps || *end != '\0' || (st = sim_stage_get((int)n)) == NULL) {
        fprintf(stderr, "usage: grade_key [-f] N, N a stage of sim/stages.def\n");
        return 2;
    }
    if (fps) {
        print_failpoints(st);
        return 0;
    }
    if ((base = sim_stage_get(st->base)) == NULL)
        return 0;
    for (size_t i = 0; i < sim_scenario_count(); i++) {
        const sim_scenario *s = sim_scenario_at(i);
        const char *why = reason(s, st, base);

        if (why != NULL)
            printf("%s\t%s\t%s\t%s\t%s\n", s->name, why, key(s, base, bk, sizeof(bk)),
                   key(s, st, nk, sizeof(nk)), s->shows);
    }
    return 0;
}
