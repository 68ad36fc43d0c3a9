/* libs: the libraries' drivers and their answer key. See libs.h. */
#define _GNU_SOURCE
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libs.h"
#include "stage.h"
#include "util.h"

#ifndef SIM_DRIVERS_DIR
#define SIM_DRIVERS_DIR "drivers"
#endif
#define LINE_LEN 1024

static const char *drivers_dir(void)
{
    const char *d = getenv("LOCKSTEP_DRIVERS");

    return d != NULL && d[0] != '\0' ? d : SIM_DRIVERS_DIR;
}

static char *trim(char *s)
{
    size_t n;

    s += strspn(s, " \t");
    n = strlen(s);
    while (n > 0 && strchr(" \t\n", s[n - 1]) != NULL)
        s[--n] = '\0';
    return s;
}

/* "scenario | key | why" into a cell. */
static int parse_cell(sim_lib *lib, char *text)
{
    char *key = strchr(text, '|'), *why;
    sim_lib_cell *c;

    if (key == NULL || (why = strchr(key + 1, '|')) == NULL || lib->ncells == SIM_LIB_CELLS)
        return -1;
    *key++ = '\0';
    *why++ = '\0';
    c = &lib->cells[lib->ncells++];
    snprintf(c->scenario, sizeof(c->scenario), "%s", trim(text));
    snprintf(c->key, sizeof(c->key), "%s", trim(key));
    snprintf(c->why, sizeof(c->why), "%s", trim(why));
    return sim_scenario_find(c->scenario) != NULL && c->why[0] != '\0' ? 0 : -1;
}

static int parse_line(sim_lib *lib, char *line)
{
    char *colon = strchr(line, ':'), *value;

    if (line[0] == '#' || trim(line)[0] == '\0')
        return 0;
    if (colon == NULL)
        return -1;
    *colon = '\0';
    value = trim(colon + 1);
    if (strcmp(line, "run") == 0)
        snprintf(lib->run, sizeof(lib->run), "%s", value);
    else if (strcmp(line, "beside") == 0)
        lib->beside = atoi(value);
    else if (strcmp(line, "package") == 0)
        snprintf(lib->package, sizeof(lib->package), "%s", value);
    else if (strcmp(line, "lease") == 0)
        lib->lease_ms = atol(value);
    else if (strcmp(line, "check") == 0)
        snprintf(lib->check, sizeof(lib->check), "%s", value);
    else if (strcmp(line, "build") == 0)
        return 0; /* make's (drivers/drivers.mk) */
    else if (strcmp(line, "cell") == 0)
        return parse_cell(lib, value);
    else
        return -1;
    return 0;
}

static int load_one(sim_lib *lib, const char *dir, const char *name, char *errstr, size_t len)
{
    char path[PATH_MAX], line[LINE_LEN];
    int lineno = 0;
    FILE *f;

    memset(lib, 0, sizeof(*lib));
    snprintf(lib->name, sizeof(lib->name), "%s", name);
    snprintf(lib->dir, sizeof(lib->dir), "%s/%s", dir, name);
    snprintf(path, sizeof(path), "%s/driver.conf", lib->dir);
    if ((f = fopen(path, "r")) == NULL)
        return 1; /* a folder without one is no driver's */
    while (fgets(line, sizeof(line), f) != NULL) {
        lineno++;
        if (parse_line(lib, line) != 0) {
            fclose(f);
            return sim_error(errstr, len, "%s:%d: not a line of driver.conf (docs/drivers.md)",
                             path, lineno);
        }
    }
    fclose(f);
    if (lib->run[0] == '\0' || sim_stage_get(lib->beside) == NULL)
        return sim_error(errstr, len, "%s: needs run: and beside: <a stage's number>", path);
    return 0;
}

/* By the stage they stand beside, then by name: the columns' order. */
static int by_place(const void *a, const void *b)
{
    const sim_lib *x = a, *y = b;

    return x->beside != y->beside ? x->beside - y->beside : strcmp(x->name, y->name);
}

int sim_libs_load(sim_lib *libs, char *errstr, size_t len)
{
    DIR *d = opendir(drivers_dir());
    struct dirent *e;
    int n = 0, rc = 0;

    if (d == NULL)
        return 0;
    while (rc >= 0 && n < SIM_LIBS_MAX && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if ((rc = load_one(&libs[n], drivers_dir(), e->d_name, errstr, len)) == 0)
            n++;
    }
    closedir(d);
    if (rc < 0)
        return -1;
    qsort(libs, (size_t)n, sizeof(*libs), by_place);
    return n;
}

/* The failpoint a scenario arms, or NULL. */
static const char *armed(const sim_scenario *s)
{
    for (const sim_actor *a = s->actors; a->name != 0; a++)
        if (a->failpoint != NULL)
            return a->failpoint;
    return NULL;
}

const char *sim_lib_key(const sim_lib *lib, const sim_scenario *s, const char **why)
{
    static char na[256];
    const char *fp = armed(s);

    if (fp != NULL) {
        snprintf(na, sizeof(na), "its failpoint, %.*s, is a step of a stage's own lock.c: "
                 "the simulator has no hook inside a library", (int)strcspn(fp, "="), fp);
        *why = na;
        return SIM_LIB_NA;
    }
    for (int i = 0; i < lib->ncells; i++) {
        if (strcmp(lib->cells[i].scenario, s->name) == 0) {
            *why = lib->cells[i].why;
            return lib->cells[i].key;
        }
    }
    *why = "";
    return sim_scenario_key(s, lib->beside);
}

int sim_lib_installed(const sim_lib *lib)
{
    char cmd[LINE_LEN];

    if (lib->check[0] == '\0')
        return 1;
    snprintf(cmd, sizeof(cmd), "(%s) >/dev/null 2>&1", lib->check);
    return system(cmd) == 0;
}
