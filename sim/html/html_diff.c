/* html_diff: what a stage changed on its base, side by side, as `make
 * diff to=N side=1` shows it. The diff is make diff's own: this module
 * runs tests/stagediff.sh (the script behind make diff), reads its
 * unified output and draws it as a table, pairing the removed and added
 * lines of a change in order as stagediff_side.awk does. So the page
 * and the terminal show the same hunks, the same context, and the same
 * parts for a stage whose diff tests/stagediff.parts cuts into parts;
 * the whole files come from the script's full=1. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "html_internal.h"
#include "util.h"

#define MAX_PAIR 512    /* removed (or added) lines of one change */
#define MAX_PARTS 16    /* parts of one stage's diff */
#define ARG 64          /* "to=6", "3:v3-set-nx-px:2" */

/* ---- running make diff ------------------------------------------------------------ */

/* The stage list as make passes it: "N:FOLDER:BASE" each. */
static void stage_args(char (*args)[ARG], const char **argv, size_t *n)
{
    for (int s = 1; s <= SIM_STAGES; s++) {
        const sim_stage *st = sim_stage_get(s);

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

    snprintf(script, sizeof(script), "%s/tests/stagediff.sh", src);
    snprintf(to, sizeof(to), "to=%d", stage);
    snprintf(parts, sizeof(parts), part > 0 ? "part=%d" : "part=", part);
    snprintf(whole, sizeof(whole), "full=%d", full);
    argv[n++] = "sh";
    argv[n++] = script;
    argv[n++] = to;
    argv[n++] = "side=";
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

/* The lines of a change waiting for their pairs. */
typedef struct change {
    span minus[MAX_PAIR], plus[MAX_PAIR];
    size_t nminus, nplus;
} change;

/* The pending removed and added lines, paired off in order. */
static void flush(FILE *f, change *c)
{
    for (size_t i = 0; i < c->nminus || i < c->nplus; i++) {
        const span *l = i < c->nminus ? &c->minus[i] : NULL;
        const span *r = i < c->nplus ? &c->plus[i] : NULL;

        fputs("<tr>", f);
        side(f, l, r, "del");
        side(f, r, l, "add");
        fputs("</tr>\n", f);
    }
    c->nminus = c->nplus = 0;
}

static void context_row(FILE *f, const span *l, const span *r)
{
    fputs("<tr>", f);
    side(f, l, NULL, "");
    side(f, r, NULL, "");
    fputs("</tr>\n", f);
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

/* A hunk from its "@@ -a,b +c,d @@" line on: its rows, up to where its
 * counts end. */
static void hunk(FILE *f, const char **p, const span *at, change *c)
{
    long a = 0, na = 1, b = 0, nb = 1;
    span l;

    if (sscanf(at->s, "@@ -%ld,%ld +%ld,%ld", &a, &na, &b, &nb) < 4 &&
        sscanf(at->s, "@@ -%ld +%ld,%ld", &a, &b, &nb) < 3 &&
        sscanf(at->s, "@@ -%ld,%ld +%ld", &a, &na, &b) < 3)
        sscanf(at->s, "@@ -%ld +%ld", &a, &b);
    fprintf(f, "<tr class=\"skip\"><td colspan=\"2\">line %ld</td><td colspan=\"2\">"
            "line %ld</td></tr>\n", a + (na == 0), b + (nb == 0));
    a += na == 0;
    b += nb == 0;
    while ((na > 0 || nb > 0) && next_line(p, &l)) {
        span t = { l.s + 1, l.n ? l.n - 1 : 0, 0 };

        if (l.n > 0 && l.s[0] == '\\')
            continue;
        if (l.n > 0 && l.s[0] == '-' && c->nminus < MAX_PAIR) {
            t.ln = a++, na--;
            c->minus[c->nminus++] = t;
        } else if (l.n > 0 && l.s[0] == '+' && c->nplus < MAX_PAIR) {
            t.ln = b++, nb--;
            c->plus[c->nplus++] = t;
        } else {
            span r = t;

            flush(f, c);
            t.ln = a++, r.ln = b++;
            na--, nb--;
            context_row(f, &t, &r);
        }
    }
    flush(f, c);
}

/* make diff's output as tables, one per file; what it says outside the
 * files (a part's title) is left out: the page says it as headings.
 * Returns the files drawn. */
static int draw(FILE *f, const char *out, const char *cls)
{
    change c = { .nminus = 0 };
    const char *p = out;
    span l, a = { 0 };
    int files = 0, open = 0;

    while (next_line(&p, &l)) {
        if (l.n > 4 && strncmp(l.s, "--- ", 4) == 0) {
            a = (span){ l.s + 4, l.n - 4, 0 };
        } else if (l.n > 4 && strncmp(l.s, "+++ ", 4) == 0 && a.s != NULL) {
            span b = { l.s + 4, l.n - 4, 0 };

            if (open)
                fputs("</tbody></table>\n", f);
            file_head(f, &a, &b, cls);
            open = 1;
            files++;
        } else if (open && l.n > 3 && strncmp(l.s, "@@ ", 3) == 0) {
            hunk(f, &p, &l, &c);
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
