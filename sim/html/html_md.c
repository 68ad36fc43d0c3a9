/* html_md: the Markdown the READMEs are written in, to HTML: headings,
 * paragraphs, lists (one level, items continued by indented lines),
 * fenced code (a diff's lines coloured), tables, block quotes; inline
 * code, bold, emphasis and links. Everything else is text, escaped. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_internal.h"

typedef struct md {
    FILE *f;
    sim_html_link_fn link;
    void *arg;
    int shift;       /* heading levels added */
    char *text;      /* the paragraph or list item being gathered */
    size_t len, cap;
    char list;       /* 'u', 'o' or 0: the open list */
    int item;        /* a list item is being gathered */
    int quote;       /* the paragraph is a block quote */
} md;

/* ---- inline ---------------------------------------------------------------------- */

/* The end of a span that starts at s and closes with delim, or NULL. */
static const char *closing(const char *s, const char *end, const char *delim)
{
    size_t d = strlen(delim);

    for (const char *p = s; p + d <= end; p++)
        if (memcmp(p, delim, d) == 0 && p > s)
            return p;
    return NULL;
}

static void link(FILE *f, const char *text, size_t n, const char *url,
                 size_t un, sim_html_link_fn fn, void *arg)
{
    char raw[SIM_HTML_PATH], buf[SIM_HTML_PATH];
    const char *href = NULL;

    snprintf(raw, sizeof(raw), "%.*s", (int)un, url);
    if (fn != NULL)
        href = fn(raw, buf, sizeof(buf), arg);
    else if (strncmp(raw, "http://", 7) == 0 || strncmp(raw, "https://", 8) == 0 ||
             raw[0] == '#')
        href = raw;
    if (href != NULL) {
        fputs("<a href=\"", f);
        sim_html_esc(f, href);
        fputs("\">", f);
    }
    sim_html_inline(f, text, n, fn, arg);
    if (href != NULL)
        fputs("</a>", f);
}

/* A [text](url) at s: 1 when written, *next past it. */
static int try_link(FILE *f, const char *s, const char *end, const char **next,
                    sim_html_link_fn fn, void *arg)
{
    const char *mid = closing(s + 1, end, "](");
    const char *close = mid != NULL ? memchr(mid + 2, ')', (size_t)(end - mid - 2)) : NULL;

    if (mid == NULL || close == NULL || memchr(s + 1, '\n', (size_t)(mid - s - 1)) != NULL)
        return 0;
    link(f, s + 1, (size_t)(mid - s - 1), mid + 2, (size_t)(close - mid - 2), fn, arg);
    *next = close + 1;
    return 1;
}

/* `code`, **bold** or *emphasis* at s: 1 when written. */
static int try_span(FILE *f, const char *s, const char *end, const char **next,
                    sim_html_link_fn fn, void *arg)
{
    const char *c;

    if (*s == '`' && (c = memchr(s + 1, '`', (size_t)(end - s - 1))) != NULL) {
        fputs("<code>", f);
        sim_html_escn(f, s + 1, (size_t)(c - s - 1));
        fputs("</code>", f);
        *next = c + 1;
        return 1;
    }
    if (s + 2 < end && s[0] == '*' && s[1] == '*' && !isspace((unsigned char)s[2]) &&
        (c = closing(s + 2, end, "**")) != NULL) {
        fputs("<strong>", f);
        sim_html_inline(f, s + 2, (size_t)(c - s - 2), fn, arg);
        fputs("</strong>", f);
        *next = c + 2;
        return 1;
    }
    if (s + 1 < end && s[0] == '*' && !isspace((unsigned char)s[1]) &&
        (c = closing(s + 1, end, "*")) != NULL && !isspace((unsigned char)c[-1])) {
        fputs("<em>", f);
        sim_html_inline(f, s + 1, (size_t)(c - s - 1), fn, arg);
        fputs("</em>", f);
        *next = c + 1;
        return 1;
    }
    return 0;
}

void sim_html_inline(FILE *f, const char *text, size_t n,
                     sim_html_link_fn fn, void *arg)
{
    const char *s = text, *end = text + n, *next;

    while (s < end) {
        if ((*s == '[' && try_link(f, s, end, &next, fn, arg)) ||
            ((*s == '`' || *s == '*') && try_span(f, s, end, &next, fn, arg))) {
            s = next;
            continue;
        }
        sim_html_escn(f, s, 1);
        s++;
    }
}

/* ---- blocks --------------------------------------------------------------------------- */

static void gather(md *m, const char *s, size_t n)
{
    if (m->len + n + 2 > m->cap) {
        size_t cap = (m->len + n + 2) * 2;
        char *p = realloc(m->text, cap);

        if (p == NULL)
            return;
        m->text = p;
        m->cap = cap;
    }
    if (m->len > 0)
        m->text[m->len++] = '\n';
    memcpy(m->text + m->len, s, n);
    m->len += n;
}

/* Writes what was gathered: a list item or a paragraph. */
static void flush(md *m)
{
    if (m->len == 0 && !m->item)
        return;
    fputs(m->item ? "<li>" : m->quote ? "<blockquote><p>" : "<p>", m->f);
    sim_html_inline(m->f, m->text, m->len, m->link, m->arg);
    fputs(m->item ? "</li>\n" : m->quote ? "</p></blockquote>\n" : "</p>\n", m->f);
    m->len = 0;
    m->item = m->quote = 0;
}

static void end_list(md *m)
{
    flush(m);
    if (m->list)
        fputs(m->list == 'u' ? "</ul>\n" : "</ol>\n", m->f);
    m->list = 0;
}

/* The marker of a list item at the start of a line, its length; 0 none. */
static size_t item_marker(const char *s, char *kind)
{
    size_t d = strspn(s, "0123456789");

    if ((s[0] == '-' || s[0] == '*') && s[1] == ' ') {
        *kind = 'u';
        return 2;
    }
    if (d > 0 && d < 4 && s[d] == '.' && s[d + 1] == ' ') {
        *kind = 'o';
        return d + 2;
    }
    return 0;
}

static void heading(md *m, const char *s, size_t n)
{
    size_t level = strspn(s, "#"), skip = level + strspn(s + level, " ");
    int h = (int)level + m->shift;

    end_list(m);
    if (h > 6)
        h = 6;
    fprintf(m->f, "<h%d id=\"", h);
    for (size_t i = skip; i < n; i++)
        if (isalnum((unsigned char)s[i]) || s[i] == ' ' || s[i] == '-')
            fputc(s[i] == ' ' ? '-' : tolower((unsigned char)s[i]), m->f);
    fputs("\">", m->f);
    sim_html_inline(m->f, s + skip, n - skip, m->link, m->arg);
    fprintf(m->f, "</h%d>\n", h);
}

/* A line of text: a new list item, the next line of one, or of a
 * paragraph. */
static void text_line(md *m, const char *s, size_t n)
{
    char kind = 0;
    size_t mark = item_marker(s, &kind), ind = strspn(s, " ");

    if (mark > 0) {
        flush(m);
        if (m->list != kind) {
            end_list(m);
            fputs(kind == 'u' ? "<ul>\n" : "<ol>\n", m->f);
            m->list = kind;
        }
        m->item = 1;
        gather(m, s + mark, n - mark);
    } else if (m->list && (ind >= 2 || m->item)) {
        gather(m, s + ind, n - ind);
    } else {
        if (m->list)
            end_list(m);
        if (s[0] == '>') {
            m->quote = 1;
            ind = 1 + (s[1] == ' ');
        }
        gather(m, s + ind, n - ind);
    }
}

/* ---- tables and code ------------------------------------------------------------ */

/* 1 for a table's separator row: only |, -, : and blanks. */
static int separator(const char *s, size_t n)
{
    return n > 0 && strspn(s, "|-: ") >= n && memchr(s, '-', n) != NULL;
}

/* One row: each cell between bars (a bar inside `code` is text). */
static void row(md *m, const char *s, size_t n, const char *tag)
{
    const char *end = s + n;

    while (end > s && (end[-1] == ' ' || end[-1] == '|'))
        end--;
    if (*s == '|')
        s++;
    fputs("<tr>", m->f);
    while (s <= end) {
        const char *c = s;
        int code = 0;

        while (c < end && (*c != '|' || code)) {
            if (*c == '`')
                code = !code;
            c++;
        }
        const char *e = c;

        while (s < c && *s == ' ')
            s++;
        while (e > s && e[-1] == ' ')
            e--;
        fprintf(m->f, "<%s>", tag);
        sim_html_inline(m->f, s, (size_t)(e - s), m->link, m->arg);
        fprintf(m->f, "</%s>", tag);
        s = c + 1;
    }
    fputs("</tr>\n", m->f);
}

/* The table's lines from text on; returns past them. */
static const char *table(md *m, const char *text)
{
    int line = 0;

    end_list(m);
    fputs("<table class=\"md\">\n", m->f);
    while (*text == '|') {
        size_t n = strcspn(text, "\n");

        if (!separator(text, n))
            row(m, text, n, line == 0 ? "th" : "td");
        line++;
        text += n + (text[n] == '\n');
    }
    fputs("</table>\n", m->f);
    return text;
}

/* A fenced block from its opening line on; returns past its closing
 * fence. A diff's added and removed lines are coloured. */
static const char *code(md *m, const char *text)
{
    size_t n = strcspn(text, "\n");
    int diff = n >= 7 && strncmp(text + 3, "diff", 4) == 0;

    end_list(m);
    text += n + (text[n] == '\n');
    fputs("<pre><code>", m->f);
    while (*text != '\0' && strncmp(text, "```", 3) != 0) {
        const char *cls = diff && *text == '+' ? "add" : diff && *text == '-' ? "del" : NULL;

        n = strcspn(text, "\n");
        if (cls != NULL)
            fprintf(m->f, "<span class=\"%s\">", cls);
        sim_html_escn(m->f, text, n);
        fputs(cls != NULL ? "</span>\n" : "\n", m->f);
        text += n + (text[n] == '\n');
    }
    fputs("</code></pre>\n", m->f);
    n = strcspn(text, "\n");
    return text + n + (text[n] == '\n');
}

void sim_html_markdown(FILE *f, const char *text, int shift,
                       sim_html_link_fn link, void *arg)
{
    md m = { .f = f, .link = link, .arg = arg, .shift = shift };

    while (*text != '\0') {
        size_t n = strcspn(text, "\n");

        if (strncmp(text, "```", 3) == 0) {
            text = code(&m, text);
            continue;
        }
        if (*text == '|') {
            text = table(&m, text);
            continue;
        }
        if (strspn(text, " \t") >= n)
            end_list(&m);
        else if (*text == '#')
            heading(&m, text, n);
        else
            text_line(&m, text, n);
        text += n + (text[n] == '\n');
    }
    end_list(&m);
    free(m.text);
}
