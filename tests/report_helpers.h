/* report_helpers: what the report's tests share (tests/test_report*.c):
 * the text the last report call printed, checks on that text, and the
 * stories more than one of them tells (on story.h's verbs). No Redis. */
#ifndef LOCKSTEP_REPORT_HELPERS_H
#define LOCKSTEP_REPORT_HELPERS_H

#include <check.h>
#include <stddef.h>
#include <stdio.h>

#include "report.h"
#include "story.h"

extern char *printed;     /* what the last report call printed */
extern size_t printed_len;

/* A stream that writes into printed, dropping what it held: fclose it,
 * then read printed. */
FILE *capture(void);

/* printed holds want, as it is. */
void assert_printed(const char *want);

/* text with every run of blanks and line breaks read as one space, in a
 * string of its own to free: sentences wrap at 72 columns. */
char *flat_text(const char *text);

/* printed holds want, as flat_text reads them. */
void assert_said(const char *want);

/* Where text lies in printed; fails the test when it is not there. */
size_t said_at(const char *text);

/* No line of printed is wider than width. */
void assert_narrow(size_t width);

/* Checks the story and prints its verdict into printed. */
void tell_verdict(void);

/* Checks the story and draws its timeline into printed, at a lease of
 * lease_ms (0: unknown). */
void draw_timeline_at(int clients, long lease_ms);

/* draw_timeline_at with the lease unknown. */
void draw_timeline(int clients);

/* A late delete: A's lease runs out at 300 ms while it works, and B
 * takes the lock; A's release at 900 ms deletes B's key, and C takes it
 * at 950 ms. Three sales, one lost: stock 100 -> 98. */
void late_delete_story(void);

/* A's lease runs out while its process is stopped inside; B takes the
 * lock; A wakes still inside, and its release finds B's key. */
void paused_holder_story(void);

/* The timeline's tests, added to the tcase "run"
 * (tests/test_report_timeline.c). */
void report_timeline_tests(TCase *run);

#endif
