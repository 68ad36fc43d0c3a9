/* test_lock_owner: who may release. Where the release checks the owner, a
 * stranger's release returns NOT_OWNER and leaves the key alone, and the
 * key names its owner (128 random bits and the thread); before that, a
 * stranger's release deletes the holder's lock. Where the release is one
 * script, it is sent by its SHA and survives SCRIPT FLUSH, leaving no
 * error behind. */
#define _GNU_SOURCE
#include <string.h>
#include <unistd.h>

#include "lock_helpers.h"

START_TEST(test_lock_release_by_non_owner)
{
    char before[128], after[128];
    dlock *a, *b;
    int rc;

    harness_title(CAPS.owner_check ? "release by a non-owner returns NOT_OWNER, the key untouched"
                                   : "release by a non-owner deletes the holder's lock (the flaw)");
    a = take("A", "owned", LEASE_MS);
    lock_value("owned", before, sizeof(before));
    b = harness_lock(harness_server(), "owned", LEASE_MS, 0);
    rc = dlock_release(b); /* B never acquired */
    lock_value("owned", after, sizeof(after));
    if (CAPS.owner_check) {
        ck_assert_msg(rc == DLOCK_NOT_OWNER, "expected NOT_OWNER for B's release of A's lock, "
                      "got %s (%s)", harness_result(rc), dlock_errstr(b));
        ck_assert_msg(strcmp(before, after) == 0, "B's release changed A's key from '%s' to '%s'; "
                      "expected it untouched", before, after);
        release_ok(a, "A");
    } else {
        ck_assert_msg(rc == DLOCK_OK, "expected B's bare DEL to return OK, got %s (%s)",
                      harness_result(rc), dlock_errstr(b));
        ck_assert_msg(after[0] == '\0', "v%d's release is a bare DEL: expected it to delete A's "
                      "lock (the flaw), but the key still holds '%s'", CAPS.stage, after);
    }
    dlock_free(b);
    dlock_free(a);
}
END_TEST

/* The owner stored by a handle that holds lock name, parsed. */
static long owner_of(const char *name, char *id)
{
    char value[128];
    long tid;

    lock_value(name, value, sizeof(value));
    tid = parse_owner(value, id);
    ck_assert_msg(tid >= 0, "expected the owner '<32 hex digits>:<thread id>' in '%s', got '%s'",
                  name, value);
    return tid;
}

START_TEST(test_lock_owner_token)
{
    char value[128], id_a[TOKEN_HEX + 1], id_b[TOKEN_HEX + 1];
    dlock *a, *b;

    harness_title(CAPS.owner_check ? "the key names its owner: 128 random bits and the thread"
                                   : "the key stores \"1\": it cannot tell whose lock it is");
    a = take("A", "token-a", LEASE_MS);
    if (!CAPS.owner_check) {
        lock_value("token-a", value, sizeof(value));
        ck_assert_msg(strcmp(value, "1") == 0, "v%d stores no owner: expected the value \"1\", "
                      "got \"%s\"", CAPS.stage, value);
    } else {
        b = take("B", "token-b", LEASE_MS);
        ck_assert_msg(owner_of("token-a", id_a) == (long)gettid(),
                      "expected the thread id after ':' to be the acquiring thread's (%ld)",
                      (long)gettid());
        owner_of("token-b", id_b);
        ck_assert_msg(strcmp(id_a, id_b) != 0, "two handles drew the same id %s; expected 128 "
                      "fresh random bits each", id_a);
        release_ok(b, "B");
        dlock_free(b);
    }
    release_ok(a, "A");
    dlock_free(a);
}
END_TEST

static void flush_scripts(void)
{
    for (int i = 0; i < harness_nodes(); i++)
        harness_status(harness_node_redis(i), "SCRIPT FLUSH");
}

/* A NOSCRIPT that the fallback answered is no failure of the call: the
 * contract's errstr stays "" while no call has failed. */
static void no_error_left(dlock *l, const char *call)
{
    ck_assert_msg(dlock_errstr(l)[0] == '\0', "%s succeeded after SCRIPT FLUSH (EVALSHA answered "
                  "NOSCRIPT, EVAL worked), but dlock_errstr says \"%s\"; expected \"\": no call "
                  "has failed, so the fallback must clear what NOSCRIPT wrote", call, dlock_errstr(l));
}

START_TEST(test_lock_noscript_fallback)
{
    dlock *a;

    harness_title("release still works after SCRIPT FLUSH (EVALSHA, then EVAL on NOSCRIPT)");
    a = take("A", "flush", LEASE_MS);
    release_ok(a, "A"); /* the script is now cached */
    flush_scripts();
    ck_assert_msg(dlock_acquire(a) == DLOCK_OK, "A could not take the lock again: %s",
                  dlock_errstr(a));
    no_error_left(a, "dlock_acquire");
    flush_scripts();
    release_ok(a, "A");
    no_error_left(a, "dlock_release");
    ck_assert_msg(exists("flush") == 0, "expected no key after the release that followed SCRIPT FLUSH");
    /* NOSCRIPT is answered by the fallback, not a failure of the call. */
    ck_assert_msg(dlock_errstr(a)[0] == '\0', "the release after SCRIPT FLUSH succeeded, yet errstr "
                  "says \"%s\"; expected \"\": no call failed", dlock_errstr(a));
    dlock_free(a);
}
END_TEST

START_TEST(test_lock_script_sha)
{
    int scripts = CAPS.reentrant ? 3 : 1; /* v6: lock, unlock, renew */
    long evals, shas;
    dlock *a;
    int i;

    harness_title("after SCRIPT FLUSH each script is sent whole at most once (its SHA is right)");
    harness_status(harness_redis(), "SCRIPT FLUSH");
    harness_status(harness_redis(), "CONFIG RESETSTAT");
    a = harness_lock(harness_server(), "sha", LEASE_MS, 0);
    for (i = 0; i < 6; i++) {
        ck_assert_msg(dlock_acquire(a) == DLOCK_OK, "acquire %d failed: %s", i + 1, dlock_errstr(a));
        release_ok(a, "A");
    }
    evals = harness_calls(harness_redis(), "eval");
    shas = harness_calls(harness_redis(), "evalsha");
    ck_assert_msg(evals <= scripts, "6 acquire/release pairs sent EVAL %ld times; expected at most "
                  "%d (one NOSCRIPT fallback per script): is the built-in SHA the SHA1 of the "
                  "script's text?", evals, scripts);
    ck_assert_msg(shas >= 6, "expected at least 6 EVALSHA calls for 6 releases, Redis counted %ld",
                  shas);
    dlock_free(a);
}
END_TEST

void lock_owner_tests(TCase *owner)
{
    tcase_add_test(owner, test_lock_release_by_non_owner);
    tcase_add_test(owner, test_lock_owner_token);
}

void lock_script_tests(TCase *owner)
{
    if (CAPS.script_release) {
        tcase_add_test(owner, test_lock_noscript_fallback);
        tcase_add_test(owner, test_lock_script_sha);
    }
}
