/* test_libs: the libraries' drivers as the simulator reads them
 * (sim/play/libs.c, docs/drivers.md): their driver.conf lines, their
 * answer key beside their stage, and the lines it refuses. No server:
 * make libs-test plays the rows themselves. */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libs.h"
#include "tcases.h"

static sim_lib libs[SIM_LIBS_MAX];
static char dir[] = "/tmp/lockstep-libs-XXXXXX";

/* dir/<name>/driver.conf with text; LOCKSTEP_DRIVERS names dir. */
static void conf(const char *name, const char *text)
{
    char path[256];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    mkdir(path, 0700);
    strcat(path, "/driver.conf");
    ck_assert_ptr_nonnull(f = fopen(path, "w"));
    fputs(text, f);
    fclose(f);
    setenv("LOCKSTEP_DRIVERS", dir, 1);
}

static void setup(void)
{
    ck_assert_ptr_nonnull(mkdtemp(strcpy(dir, "/tmp/lockstep-libs-XXXXXX")));
}

static void teardown(void)
{
    char cmd[300];

    unsetenv("LOCKSTEP_DRIVERS");
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static const sim_lib *find(int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(libs[i].name, name) == 0)
            return &libs[i];
    ck_abort_msg("no library %s among the %d read", name, n);
    return NULL;
}

/* The repository's three, beside the stages docs/drivers.md names. */
START_TEST(test_libs_the_three)
{
    char why[256];
    int n;

    unsetenv("LOCKSTEP_DRIVERS");
    n = sim_libs_load(libs, why, sizeof(why));
    ck_assert_msg(n >= 3, "read %d libraries from drivers/: %s", n, n < 0 ? why : "");
    ck_assert_int_eq(find(n, "redis-py")->beside, 5);
    ck_assert_int_eq(find(n, "kazoo")->beside, 11);
    ck_assert_int_eq(find(n, "curator")->beside, 11);
    ck_assert_int_eq(find(n, "kazoo")->lease_ms, 1200);
    ck_assert_str_eq(libs[0].name, "redis-py"); /* v5's column comes first */
}
END_TEST

/* A cell line overrides its stage's key with its sentence; a scenario
 * that arms a failpoint is n/a; the others are the stage's. */
START_TEST(test_libs_key)
{
    const char *why;
    char err[256];

    conf("x", "run: true\nbeside: 5\ncell: reentrant | - | x is reentrant\n");
    ck_assert_int_eq(sim_libs_load(libs, err, sizeof(err)), 1);
    ck_assert_str_eq(sim_lib_key(&libs[0], sim_scenario_find("reentrant"), &why), "-");
    ck_assert_str_eq(why, "x is reentrant");
    ck_assert_str_eq(sim_lib_key(&libs[0], sim_scenario_find("gc-pause"), &why),
                     sim_scenario_key(sim_scenario_find("gc-pause"), 5));
    ck_assert_str_eq(why, "");
    ck_assert_str_eq(sim_lib_key(&libs[0], sim_scenario_find("crash-mid-acquire"), &why),
                     SIM_LIB_NA);
    ck_assert_msg(strstr(why, "acquire.after_setnx") != NULL, "n/a says: %s", why);
}
END_TEST

/* Each line it cannot use is named by its file and number. */
START_TEST(test_libs_refused)
{
    static const char *const bad[] = {
        "run: true\nbeside: 5\nbogus line\n",
        "run: true\nbeside: 5\ncell: no-such-scenario | - | why\n",
        "run: true\nbeside: 5\ncell: baseline | - |\n",
        "run: true\nbeside: 99\n",
        "beside: 5\n",
    };
    char err[256];

    conf("y", bad[_i]);
    ck_assert_int_eq(sim_libs_load(libs, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "/y/driver.conf") != NULL, "the error names no file: %s", err);
}
END_TEST

START_TEST(test_libs_installed)
{
    char err[256];

    conf("z", "run: true\nbeside: 5\ncheck: false\n");
    ck_assert_int_eq(sim_libs_load(libs, err, sizeof(err)), 1);
    ck_assert_int_eq(sim_lib_installed(&libs[0]), 0);
    strcpy(libs[0].check, "true");
    ck_assert_int_eq(sim_lib_installed(&libs[0]), 1);
}
END_TEST

Suite *libs_suite(void)
{
    const TTest *tests[] = { test_libs_the_three, test_libs_key, test_libs_installed };
    Suite *suite = suite_create("libs");
    TCase *tc = ADD_TCASE(suite, "driver.conf", tests);

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_libs_refused, 0, 5);
    return suite;
}
