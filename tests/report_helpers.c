/* report_helpers: see report_helpers.h. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "report_helpers.h"

char *printed;
size_t printed_len;

FILE *capture(void)
{
    free(printed);
    printed = NULL;
    return open_memstream(&printed, &printed_len);
}

void assert_printed(const char *want)
{
    ck_assert_msg(printed != NULL && strstr(printed, want) != NULL,
                  "the report does not say \"%s\"; it printed:\n%s", want,
                  printed ? printed : "(nothing)");
}

char *flat_text(const char *text)
{
    char *flat = malloc(strlen(text) + 1);
    size_t k = 0;

    ck_assert_msg(flat != NULL, "out of memory");
    for (; *text != '\0'; text++)
        if (*text != ' ' && *text != '\n')
            flat[k++] = *text;
        else if (k > 0 && flat[k - 1] != ' ')
            flat[k++] = ' ';
    flat[k] = '\0';
    return flat;
}

void assert_said(const char *want)
{
    char *flat = flat_text(printed != NULL ? printed : "");

    ck_assert_msg(strstr(flat, want) != NULL, "the report does not say "
                  "\"%s\"; it printed:\n%s", want, printed ? printed : "(nothing)");
    free(flat);
}

size_t said_at(const char *text)
{
    const char *p = printed != NULL ? strstr(printed, text) : NULL;

    ck_assert_msg(p != NULL, "the report does not say \"%s\"; it printed:"
                  "\n%s", text, printed ? printed : "(nothing)");
    return (size_t)(p - printed);
}

void assert_narrow(size_t width)
{
    for (const char *line = printed; *line; ) {
        size_t len = strcspn(line, "\n");

        ck_assert_msg(len <= width, "a line of %zu columns is wider than "
                      "%zu:\n%.*s", len, width, (int)len, line);
        line += len + (line[len] == '\n');
    }
}

void tell_verdict(void)
{
    FILE *out;

    check();
    out = capture();
    sim_report_verdict(out, &v, s.ev, s.n, 0);
    fclose(out);
}

void draw_timeline_at(int clients, long lease_ms)
{
    FILE *out;

    check();
    out = capture();
    sim_report_timeline(out, s.ev, s.n, 0, clients, lease_ms, &v);
    fclose(out);
}

void draw_timeline(int clients)
{
    draw_timeline_at(clients, 0);
}

void late_delete_story(void)
{
    begin();
    stock(SIM_EV_STOCK_INITIAL, 0, 100);
    takes(0, A, 1);
    wants(100, B);
    key(300, "expired");      /* A's lease runs out inside */
    key(311, "set");
    key(311, "expire");
    gets(312, B);
    sells(800, A, 99);
    gives_back(900, A);       /* A's DEL removes B's key */
    takes(950, C, 1);
    sells(1000, B, 99);
    sells(1100, C, 98);
    stock(SIM_EV_STOCK_FINAL, 1300, 98);
}

void paused_holder_story(void)
{
    begin();
    stock(SIM_EV_STOCK_INITIAL, 0, 10);
    takes(0, A, 1);
    record(3, A, 0, SIM_EV_CS_ENTER, 0, "");
    record(30, A, 0, SIM_EV_PAUSE_BEGIN, 900, "SIGSTOP");
    key(300, "expired");
    takes(780, B, 1);
    record(783, B, 0, SIM_EV_CS_ENTER, 0, "");
    record(929, A, 0, SIM_EV_PAUSE_END, 0, "SIGCONT");
    sells(930, A, 9);
    record(930, A, 0, SIM_EV_CS_EXIT, 0, "");
    unlocks(931, A);
    not_owner(932, A);
    sells(1500, B, 9);
    record(1500, B, 0, SIM_EV_CS_EXIT, 0, "");
    gives_back(1500, B);
    stock(SIM_EV_STOCK_FINAL, 1600, 9);
}
