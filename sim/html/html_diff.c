/* html_diff: what a stage changed on its base, side by side, as `make
 * diff to=N side=1` shows it. The diff is make diff's own: this module
 * runs tools/stagediff.sh (the script behind make diff) with side=rows,
 * which pairs the removed and added lines of each change with the same
 * code as the terminal's side by side (stagediff_side.awk), and draws
 * those rows as a table. So the page and the terminal show the same
 * hunks, the same context, the same pairs, and the same parts for a
 * stage whose diff tools/stagediff.parts cuts into parts; the whole files
 * come from the script's full=1. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "html_internal.h"
#include "util.h"

#define MAX_PARTS 16    /* parts of one stage's diff */
#define ARG 64          /* "to=6", "3:v3-set-nx-px:2" */

/* ---- running make diff ------------------------------------------------------------ */

/* The stage list as make passes it: "N:FOLDER:BASE" each, for every
 * number the list has (one it skips has no line). */
static void stage_args(char (*args)[ARG], const char **argv, size_t *n)
{
    for (int s = 1; s <= SIM_STAGES; s++) {
        const sim_stage *st = sim_stage_get(s);

        if (st == NULL)
            continue;
        snprintf(args[s - 1], ARG, "%d:%s:%d", st->n, st->dir, st->base);
        argv[(*n)++] = args[s - 1];
    }
}

/* Reads all of fd into a NUL-terminated buffer; NULL when out of memory. */
static char *read_all(int fd)
{
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap), *more;
    ssize_t got;

    while (buf != NULL && (got = read(fd, buf + n, cap - n - 1)) > 0) {
        n += (size_t)got;
        if (cap - n - 1 == 0) {
            if ((more = realloc(buf, cap * 2)) == NULL)
                free(buf);
            buf = more;
            cap *= 2;
        }
    }
    if (buf != NULL)
        buf[n] = '\0';
    return buf;
}

/* The output of `make diff to=STAGE part=PART full=FULL` (part 0: the
 * whole diff), stdout and stderr together; NULL with errstr when the
 * script failed, its last words in it. */
static char *make_diff(const char *src, int stage, int part, int full,
                       char *errstr, size_t len)
{
    char script[SIM_HTML_PATH], to[ARG], parts[ARG], whole[ARG], args[SIM_STAGES][ARG];
    const char *argv[SIM_STAGES + 10];
    size_t n = 0;
    int fd[2], status;
    pid_t pid;
    char *out;

    snprintf(script, sizeof(script), "%s/tools/stagediff.sh", src);
    snprintf(to, sizeof(to), "to=%d", stage);
    snprintf(parts, sizeof(parts), part > 0 ? "part=%d" : "part=", part);
    snprintf(whole, sizeof(whole), "full=%d", full);
    argv[n++] = "sh";
    argv[n++] = script;
    argv[n++] = to;
    argv[n++] = "side=rows";
    argv[n++] = parts;
    argv[n++] = whole;
    argv[n++] = "--";
    stage_args(args, argv, &n);
    argv[n] = NULL;
    if (pipe(fd) != 0) {
        sim_error(errstr, len, "make diff to=%d: cannot make a pipe", stage);
        return NULL;
    }
    if ((pid = fork()) == 0) {
        dup2(fd[1], STDOUT_FILENO);
        dup2(fd[1], STDERR_FILENO);
        close(fd[0]);
        close(fd[1]);
        execv("/bin/sh", (char *const *)argv);
        _exit(127);
    }
    close(fd[1]);
    out = pid > 0 ? read_all(fd[0]) : NULL;
    close(fd[0]);
    if (pid < 0 || waitpid(pid, &status, 0) != pid || out == NULL ||
        !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        sim_error(errstr, len, "make diff to=%d%s%s failed: %s", stage,
                  part > 0 ? " " : "", part > 0 ? parts : "",
                  out != NULL && out[0] != '\0' ? out : "run it in the terminal to see why");
        errstr[strcspn(errstr, "\n")] = '\0';
        free(out);
        return NULL;
    }
    return out;
}

/* ---- drawing its output ---------------------------------------------------------------- */

/* A line of the output: where it starts, how long it is. */
typedef struct span {
    const char *s;
    size_t n;
    long ln;           /* its line number in its file */
} span;

/* One side of a row: its number and its text, the part that differs
 * from the other side (o, when there is one) marked. */
static void side(FILE *f, const span *l, const span *o, const char *cls)
{
    size_t pre = 0, post = 0, n;

    if (l == NULL) {
        fputs("<td class=\"ln\"></td><td class=\"code\"></td>", f);
        return;
    }
    n = l->n;
    fprintf(f, "<td class=\"ln\">%ld</td><td class=\"code%s%s\">", l->ln,
            cls[0] ? " " : "", cls);
    if (o != NULL && cls[0] != '\0') {
        while (pre < n && pre < o->n && l->s[pre] == o->s[pre])
            pre++;
        while (post < n - pre && post < o->n - pre &&
               l->s[n - 1 - post] == o->s[o->n - 1 - post])
            post++;
    }
    if (o != NULL && cls[0] != '\0' && pre + post < n) {
        sim_html_escn(f, l->s, pre);
        fputs("<span class=\"chg\">", f);
        sim_html_escn(f, l->s + pre, n - pre - post);
        fputs("</span>", f);
        sim_html_escn(f, l->s + n - post, post);
    } else {
        sim_html_escn(f, l->s, n);
    }
    fputs("</td>", f);
}

/* "--- v5-lua-unlock/lock.c" and "+++ v6-.../lock.c": a file's table. */
static void file_head(FILE *f, const span *a, const span *b, const char *cls)
{
    const char *slash = memchr(b->s, '/', b->n);
    size_t skip = slash != NULL ? (size_t)(slash + 1 - b->s) : 0;

    fputs("<h4 class=\"file\"><code>", f);
    sim_html_escn(f, b->s + skip, strcspn(b->s + skip, " \n"));
    fprintf(f, "</code></h4>\n<table class=\"diff %s\"><colgroup><col style=\"width:3.6em\">"
            "<col><col style=\"width:3.6em\"><col></colgroup>\n<thead><tr>"
            "<th colspan=\"2\">", cls);
    sim_html_escn(f, a->s, a->n);
    fputs("</th><th colspan=\"2\">", f);
    sim_html_escn(f, b->s, b->n);
    fputs("</th></tr></thead>\n<tbody>\n", f);
}

/* The next line of text from *p; 0 at the end. */
static int next_line(const char **p, span *l)
{
    if (**p == '\0')
        return 0;
    l->s = *p;
    l->n = strcspn(*p, "\n");
    *p += l->n + ((*p)[l->n] == '\n');
    return 1;
}

/* The tab-separated fields of a row, up to max; how many. */
static int fields(const span *l, span *f, int max)
{
    const char *p = l->s, *end = l->s + l->n;
    int n = 0;

    while (n < max) {
        const char *tab = memchr(p, '\t', (size_t)(end - p));

        f[n].s = p;
        f[n].n = (size_t)((tab != NULL ? tab : end) - p);
        f[n].ln = strtol(p, NULL, 10);
        n++;
        if (tab == NULL)
            break;
        p = tab + 1;
    }
    return n;
}

/* One paired row: "|" a changed line, "<" left only, ">" right only,
 * " " the same on both sides. */
static void pair_row(FILE *f, char mark, const span *l, const span *r)
{
    fputs("<tr>", f);
    if (mark == ' ') {
        side(f, l, NULL, "");
        side(f, r, NULL, "");
    } else {
        side(f, mark == '>' ? NULL : l, mark == '|' ? r : NULL, "del");
        side(f, mark == '<' ? NULL : r, mark == '|' ? l : NULL, "add");
    }
    fputs("</tr>\n", f);
}

/* make diff's output as tables, one per file; what it says outside the
 * files (a part's title) is left out: the page says it as headings.
 * Returns the files drawn. */
static int draw(FILE *f, const char *out, const char *cls)
{
    const char *p = out;
    span l, x[5];
    int files = 0, open = 0;

    while (next_line(&p, &l)) {
        int n = fields(&l, x, 5);
        char mark = l.n > 1 && l.s[1] == '\t' ? l.s[0] : '\0';

        if (mark == 'H' && n == 3) {
            if (open)
                fputs("</tbody></table>\n", f);
            file_head(f, &x[1], &x[2], cls);
            open = 1;
            files++;
        } else if (open && mark == '@' && n == 3) {
            fprintf(f, "<tr class=\"skip\"><td colspan=\"2\">line %ld</td><td colspan=\"2\">"
                    "line %ld</td></tr>\n", x[1].ln, x[2].ln);
        } else if (open && n == 5 && mark != '\0' && strchr(" |<>", mark) != NULL) {
            x[2].ln = x[1].ln;
            x[4].ln = x[3].ln;
            pair_row(f, mark, &x[2], &x[4]);
        }
    }
    if (open)
        fputs("</tbody></table>\n", f);
    return files;
}

/* One make diff, drawn; 0 or -1 with errstr. */
static int one(FILE *f, const char *src, int stage, int part, int full,
               char *errstr, size_t len)
{
    char *out = make_diff(src, stage, part, full, errstr, len);

    if (out == NULL)
        return -1;
    if (draw(f, out, full ? "whole" : "changes") == 0)
        fputs("<p>No source file changed.</p>\n", f);
    free(out);
    return 0;
}

/* The parts make diff lists for a stage ("  make diff to=6 part=2   the
 * watchdog: ..."): their titles into titles; how many. */
static int parts(const char *out, int stage, char (*titles)[SIM_REPORT_SENTENCE])
{
    const char *p = out;
    char head[ARG];
    span l;
    int n = 0;

    snprintf(head, sizeof(head), "  make diff to=%d part=", stage);
    while (next_line(&p, &l) && n < MAX_PARTS) {
        const char *t;

        if (l.n <= strlen(head) || strncmp(l.s, head, strlen(head)) != 0)
            continue;
        t = l.s + strlen(head) + strspn(l.s + strlen(head), "0123456789");
        t += strspn(t, " ");
        snprintf(titles[n++], SIM_REPORT_SENTENCE, "%.*s", (int)(l.n - (size_t)(t - l.s)), t);
    }
    return n;
}

/* A stage told in parts: each part its own heading and its own slice. */
static int in_parts(FILE *f, const char *src, int stage, int n,
                    char (*titles)[SIM_REPORT_SENTENCE], char *errstr, size_t len)
{
    fputs("<p>It brings several ideas at once; here they are one at a time, "
          "each part the change from the code with the parts before it:</p>\n<ol>", f);
    for (int k = 1; k <= n; k++) {
        fprintf(f, "<li><a href=\"#part-%d\">", k);
        sim_html_esc(f, titles[k - 1]);
        fputs("</a></li>", f);
    }
    fputs("</ol>\n", f);
    for (int k = 1; k <= n; k++) {
        fprintf(f, "<h3 id=\"part-%d\" class=\"part\">Part %d of %d: ", k, k, n);
        sim_html_esc(f, titles[k - 1]);
        fprintf(f, " <small><code>make diff to=%d part=%d side=1</code></small></h3>\n",
                stage, k);
        if (one(f, src, stage, k, 0, errstr, len) != 0)
            return -1;
    }
    return 0;
}

int sim_html_diff(FILE *f, const char *src, int stage, char *errstr, size_t len)
{
    char titles[MAX_PARTS][SIM_REPORT_SENTENCE];
    char *out = make_diff(src, stage, 0, 0, errstr, len);
    int n, rc = 0;

    if (out == NULL)
        return -1;
    if ((n = parts(out, stage, titles)) > 0)
        rc = in_parts(f, src, stage, n, titles, errstr, len);
    else if (draw(f, out, "changes") == 0)
        fputs("<p>No source file changed.</p>\n", f);
    free(out);
    if (rc != 0)
        return -1;
    fprintf(f, "<details><summary>the whole files, side by side "
            "(<code>make diff to=%d side=1 full=1</code>)</summary>\n", stage);
    rc = one(f, src, stage, 0, 1, errstr, len);
    fputs("</details>\n", f);
    return rc;
}
