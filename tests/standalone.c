/* standalone.c: one check of a stage built apart from the tree, from its
 * folder and its kind's plumbing alone (tests/standalone.sh builds it with
 * them). It knows only lock.h, and needs no server: a handle with no name
 * is refused with a reason, a good one starts with an empty errstr, and a
 * server that is not there is an error that says so. 0 when all hold; else
 * 1, with what went wrong on stderr. */
#include <stdio.h>
#include <string.h>

#include "lock.h"

static int failed;

static void check(int ok, const char *what, const char *errstr)
{
    if (!ok) {
        fprintf(stderr, "standalone: %s (errstr \"%s\")\n", what, errstr);
        failed = 1;
    }
}

int main(void)
{
    dlock_config cfg;
    dlock *l;
    int rc;

    dlock_config_init(&cfg);
    cfg.port = 1; /* nothing listens there */
    cfg.timeout_ms = 500;
    l = dlock_new("", &cfg);
    if (l == NULL)
        return fprintf(stderr, "standalone: dlock_new returned NULL\n"), 1;
    rc = dlock_acquire(l);
    check(rc == DLOCK_ERR && strstr(dlock_errstr(l), "name") != NULL,
          "a lock with an empty name: expected DLOCK_ERR and a reason that names the name",
          dlock_errstr(l));
    dlock_free(l);
    l = dlock_new("standalone", &cfg);
    if (l == NULL)
        return fprintf(stderr, "standalone: dlock_new returned NULL\n"), 1;
    check(dlock_errstr(l)[0] == '\0', "a new handle: expected errstr \"\"", dlock_errstr(l));
    rc = dlock_acquire(l);
    check(rc == DLOCK_ERR && dlock_errstr(l)[0] != '\0',
          "acquire with no server: expected DLOCK_ERR and a reason", dlock_errstr(l));
    dlock_free(l);
    return failed;
}
