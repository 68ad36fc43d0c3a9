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
 *   story    docs/matrix.md's story of the row states a fact of N's cell that
 *            it does not state of the base's (tests/row_claims.c): the
 *            matrix test checks it on N's run
 *   servers  N's lock talks to other servers than its base's (more
 *            masters, another kind): the base's lock takes no lock there,
 *            so every cell where something must happen fails, one with
 *            anomalies to show or a crowd that must sell its stock
 *
 * One line per such cell, tab-separated: the scenario, the reason, the
 * base's key, N's key, what the scenario shows. A key of "-" is written
 * "(-)" where the stage's lock.c has no step for the scenario's failpoint,
 * as the matrix writes it. Nothing for a stage built
 * on no other. A bad argument: one line on stderr, exit 2. */
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

#ifndef SRCDIR
#define SRCDIR "." /* the repository root; make passes its own */
#endif

/* 1 when stage st's lock.c has the step where the scenario's failpoint
 * fires (its dlock_failpoint("<name>") call), or the scenario arms none. */
static int reaches(const sim_scenario *s, const sim_stage *st)
{
    char path[512], call[128], line[1024];
    int found = 0;
    FILE *f;

    for (int i = 0; s->actors[i].name != 0; i++) {
        const char *fp = s->actors[i].failpoint;

        if (fp == NULL || fp[0] == '\0')
            continue;
        snprintf(call, sizeof(call), "dlock_failpoint(\"%.*s\")", (int)strcspn(fp, "="), fp);
        snprintf(path, sizeof(path), "%s/%s/lock.c", SRCDIR, sim_stage_name(st->n));
        if ((f = fopen(path, "r")) == NULL)
            return 1; /* said as the key has it */
        while (!found && fgets(line, sizeof(line), f) != NULL)
            found = strstr(line, call) != NULL;
        fclose(f);
        return found;
    }
    return 1;
}

/* A stage's key as the matrix writes it. */
static const char *shown(const sim_scenario *s, const sim_stage *st)
{
    const char *key = sim_scenario_key(s, st->n);

    return strcmp(key, "-") == 0 && !reaches(s, st) ? "(-)" : key;
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

    n = argc == 2 ? strtol(argv[1], &end, 10) : 0;
    if (argc != 2 || *end != '\0' || (st = sim_stage_get((int)n)) == NULL) {
        fprintf(stderr, "usage: grade_key N, N a stage of sim/stages.def\n");
        return 2;
    }
    if ((base = sim_stage_get(st->base)) == NULL)
        return 0;
    for (size_t i = 0; i < sim_scenario_count(); i++) {
        const sim_scenario *s = sim_scenario_at(i);
        const char *why = reason(s, st, base);

        if (why != NULL)
            printf("%s\t%s\t%s\t%s\t%s\n", s->name, why, shown(s, base), shown(s, st),
                   s->shows);
    }
    return 0;
}
