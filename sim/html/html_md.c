/* html_md: Markdown to HTML with cmark-gfm, the renderer GitHub uses for
 * READMEs, with its table, strikethrough and autolink extensions, so
 * that the site shows a README or a row's story as GitHub does. Two
 * hooks on the parsed tree, the site's only ones: a link goes where the
 * site keeps the page (or shows its text alone), and a diff block's
 * added and removed lines are coloured. A writer's raw HTML is shown as
 * text, never run. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmark-gfm.h>
#include <cmark-gfm-core-extensions.h>

#include "html_internal.h"

typedef struct hooks {
    sim_html_link_fn link;
    void *arg;
} hooks;

/* A diff's lines, each added or removed one in a span the style colours,
 * as one HTML block; NULL when out of memory. */
static char *diff_html(const char *code)
{
    char *html = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&html, &len);

    if (f == NULL)
        return NULL;
    fputs("<pre><code>", f);
    while (*code != '\0') {
        size_t n = strcspn(code, "\n");
        const char *cls = *code == '+' ? "add" : *code == '-' ? "del" : NULL;

        if (cls != NULL)
            fprintf(f, "<span class=\"%s\">", cls);
        sim_html_escn(f, code, n);
        fputs(cls != NULL ? "</span>\n" : "\n", f);
        code += n + (code[n] == '\n');
    }
    fputs("</code></pre>\n", f);
    fclose(f);
    return html;
}

/* Puts a node of type in place of node, with literal as its text. */
static void replace(cmark_node *node, cmark_node_type type, const char *literal)
{
    cmark_node *by = cmark_node_new(type);

    if (by == NULL)
        return;
    cmark_node_set_literal(by, literal);
    cmark_node_insert_before(node, by);
    cmark_node_free(node);
}

/* A link or an image the site has no page for: its text stays, in its
 * place. */
static void unwrap(cmark_node *node)
{
    cmark_node *c;

    while ((c = cmark_node_first_child(node)) != NULL)
        cmark_node_insert_before(node, c);
    cmark_node_free(node);
}

/* One node, after its children: the only place the tree changes. */
static void visit(cmark_node *node, const hooks *h)
{
    cmark_node_type type = cmark_node_get_type(node);
    char buf[SIM_HTML_PATH];
    const char *to;
    char *html;

    if ((type == CMARK_NODE_LINK || type == CMARK_NODE_IMAGE) && h->link != NULL) {
        if ((to = h->link(cmark_node_get_url(node), buf, sizeof(buf), h->arg)) == NULL)
            unwrap(node);
        else
            cmark_node_set_url(node, to);
    } else if (type == CMARK_NODE_CODE_BLOCK &&
               strncmp(cmark_node_get_fence_info(node), "diff", 4) == 0 &&
               (html = diff_html(cmark_node_get_literal(node))) != NULL) {
        replace(node, CMARK_NODE_HTML_BLOCK, html);
        free(html);
    } else if (type == CMARK_NODE_HTML_INLINE) {
        replace(node, CMARK_NODE_TEXT, cmark_node_get_literal(node));
    } else if (type == CMARK_NODE_HTML_BLOCK) {
        replace(node, CMARK_NODE_CODE_BLOCK, cmark_node_get_literal(node));
    }
}

/* Every node under node, children first; a node's next sibling is taken
 * before it is visited, which may replace it. */
static void walk(cmark_node *node, const hooks *h)
{
    cmark_node *c = cmark_node_first_child(node), *next;

    for (; c != NULL; c = next) {
        next = cmark_node_next(c);
        walk(c, h);
        visit(c, h);
    }
}

/* text (n bytes) rendered, the hooks applied; NULL when out of memory. */
static char *render(const char *text, size_t n, sim_html_link_fn link, void *arg)
{
    static const char *const extensions[] = { "table", "strikethrough", "autolink" };
    hooks h = { link, arg };
    cmark_parser *p;
    cmark_node *doc;
    char *html = NULL;

    cmark_gfm_core_extensions_ensure_registered();
    if ((p = cmark_parser_new(CMARK_OPT_DEFAULT)) == NULL)
        return NULL;
    for (size_t i = 0; i < sizeof(extensions) / sizeof(extensions[0]); i++) {
        cmark_syntax_extension *e = cmark_find_syntax_extension(extensions[i]);

        if (e != NULL)
            cmark_parser_attach_syntax_extension(p, e);
    }
    cmark_parser_feed(p, text, n);
    if ((doc = cmark_parser_finish(p)) != NULL) {
        walk(doc, &h);
        /* Unsafe only for the diff blocks made above: the writer's own
         * HTML is text by now. */
        html = cmark_render_html(doc, CMARK_OPT_UNSAFE, cmark_parser_get_syntax_extensions(p));
        cmark_node_free(doc);
    }
    cmark_parser_free(p);
    return html;
}

void sim_html_markdown(FILE *f, const char *text, sim_html_link_fn link, void *arg)
{
    char *html = render(text, strlen(text), link, arg);

    if (html != NULL)
        fputs(html, f);
    free(html);
}

void sim_html_inline(FILE *f, const char *text, size_t n, sim_html_link_fn link, void *arg)
{
    char *html = render(text, n, link, arg), *at, *end;

    if (html == NULL)
        return;
    /* One paragraph: its text, without the <p> the caller writes. */
    at = strncmp(html, "<p>", 3) == 0 ? html + 3 : html;
    end = at + strlen(at);
    while (end > at && end[-1] == '\n')
        end--;
    if (end - at >= 4 && strncmp(end - 4, "</p>", 4) == 0)
        end -= 4;
    fwrite(at, 1, (size_t)(end - at), f);
    free(html);
}
