/* site_facts.js: what the report's browser test reads from the rendered
 * pages. The test (tests/run_site.c) writes a page that loads each page
 * of the site in a frame and each screenshot as an image, with this
 * script inlined; once all have loaded, the script writes one fact per
 * line into <pre id="facts">: a kind, then its fields, each field
 * URI-encoded so that a line splits at its blanks. The C test asserts on
 * these facts; the script judges nothing. */
(function () {
    'use strict';
    var out = [];
    var PLANNED_STAGES = 13, PLANNED_SCENARIOS = 13;  /* the matrix's room */

    function fact() {
        out.push(Array.prototype.map.call(arguments, function (v) {
            return encodeURIComponent(String(v));
        }).join(' '));
    }

    function attr(e, name) {
        var v = e.getAttribute(name);
        return v === null ? '' : v;
    }

    function words(e) {
        return e.textContent.replace(/\s+/g, ' ').trim();
    }

    function links(p, d) {
        d.querySelectorAll('[href], [src]').forEach(function (e) {
            var a = e.hasAttribute('href') ? 'href' : 'src';
            fact('link', p, attr(e, a), new URL(attr(e, a), d.baseURI).href);
        });
    }

    function cells(p, d) {
        d.querySelectorAll('td.cell').forEach(function (c) {
            var r = c.getBoundingClientRect(), marks = [];
            c.querySelectorAll('.mark').forEach(function (m) { marks.push(words(m)); });
            fact('cell', p, attr(c, 'data-stage'), attr(c, 'data-scenario'),
                 marks.join(' '), c.classList.contains('differs') ? 1 : 0,
                 Math.round(r.width), Math.round(r.height), attr(c, 'title'),
                 getComputedStyle(c).backgroundColor);
        });
    }

    /* A table's box in its page's viewport, rounded outward, and how
     * many of its cells' contents overflow them. */
    function box(p, kind, d, t) {
        var r = t.getBoundingClientRect(), w = d.defaultView, over = 0;
        t.querySelectorAll('td.cell').forEach(function (c) {
            var a = c.firstElementChild || c;
            if (a.scrollHeight > c.clientHeight + 1 || a.scrollWidth > c.clientWidth + 1)
                over++;
        });
        fact(kind, p, Math.floor(r.left), Math.floor(r.top), Math.ceil(r.right),
             Math.ceil(r.bottom), t.querySelectorAll('tbody tr').length,
             t.querySelectorAll('thead th.stage').length, over, w.innerWidth, w.innerHeight,
             d.documentElement.scrollWidth);
    }

    /* The legend under the grid: its box in the page's viewport, which
     * a projector shows whole or not at all. */
    function legend(p, kind, d) {
        var l = d.querySelector('dl.legend'), r, w = d.defaultView;
        if (!l)
            return;
        r = l.getBoundingClientRect();
        fact(kind, p, Math.floor(r.left), Math.floor(r.top), Math.ceil(r.right),
             Math.ceil(r.bottom), l.querySelectorAll('dt').length, w.innerWidth, w.innerHeight);
    }

    /* The matrix as the page draws it; then the same page with as many
     * stages and scenarios as the course plans (13 x 13), each new
     * column a copy of a row's fullest cell and each new row a copy of
     * the fullest row, the bar's links too: the room the design leaves. */
    function matrix(p, d) {
        var t = d.querySelector('table.matrix'), rows, bar, fullest, more, i;
        if (!t)
            return;
        box(p, 'matrix', d, t);
        legend(p, 'legend', d);
        rows = t.querySelectorAll('tr');
        rows.forEach(function (tr) {
            var best = tr.lastElementChild;
            tr.querySelectorAll('td.cell, th.stage').forEach(function (c) {
                if (c.querySelectorAll('.mark').length > best.querySelectorAll('.mark').length)
                    best = c;
            });
            for (i = tr.querySelectorAll('td.cell, th.stage').length; i < PLANNED_STAGES; i++)
                tr.appendChild(best.cloneNode(true));
        });
        fullest = t.querySelector('tbody tr');
        t.querySelectorAll('tbody tr').forEach(function (tr) {
            if (tr.querySelectorAll('.mark').length > fullest.querySelectorAll('.mark').length)
                fullest = tr;
        });
        for (more = PLANNED_SCENARIOS - t.querySelectorAll('tbody tr').length; more > 0; more--)
            t.querySelector('tbody').appendChild(fullest.cloneNode(true));
        bar = d.querySelector('header.bar');
        for (i = bar ? bar.querySelectorAll('a').length - 1 : PLANNED_STAGES;
             i < PLANNED_STAGES; i++)
            bar.appendChild(bar.lastElementChild.cloneNode(true));
        box(p, 'matrix-planned', d, t);
        legend(p, 'legend-planned', d);
    }

    /* Every two labels of a picture whose boxes, as the browser laid
     * them out, cover each other by more than a pixel each way (a line's
     * box and the next one's may touch). */
    function overlaps(p, s) {
        var t = Array.prototype.slice.call(s.querySelectorAll('text')), b, i, j, w, h;
        b = t.map(function (e) { return e.getBBox(); });
        for (i = 0; i < t.length; i++)
            for (j = i + 1; j < t.length; j++) {
                w = Math.min(b[i].x + b[i].width, b[j].x + b[j].width) - Math.max(b[i].x, b[j].x);
                h = Math.min(b[i].y + b[i].height, b[j].y + b[j].height) - Math.max(b[i].y, b[j].y);
                if (w > 1 && h > 1)
                    fact('overlap', p, words(t[i]), words(t[j]), Math.round(w), Math.round(h));
            }
    }

    function timelines(p, d) {
        d.querySelectorAll('svg.timeline').forEach(function (s) {
            var r = s.getBoundingClientRect();
            fact('svg', p, attr(s, 'data-clients'), Math.round(r.width), Math.round(r.height));
            s.querySelectorAll('g.lane.client').forEach(function (g) {
                var b = g.getBBox();
                fact('lane', p, attr(g, 'data-client'), Math.round(b.width), Math.round(b.height));
            });
            s.querySelectorAll('g.lane.key').forEach(function (g) {
                fact('keylane', p, attr(g, 'data-node'), g.querySelectorAll('g.key').length,
                     g.querySelectorAll('g.down').length);
            });
            overlaps(p, s);
            s.querySelectorAll('g.anomaly').forEach(function (g) {
                var b = g.getBBox();
                fact('anomaly', p, attr(g, 'data-kind'), attr(g, 'data-from'),
                     attr(g, 'data-to'), attr(g, 'data-at'), Math.round(b.width));
            });
        });
    }

    function page(frame) {
        var p = attr(frame, 'data-page'), d = null;
        try {
            d = frame.contentDocument;
        } catch (e) {
            d = null;
        }
        if (!d || !d.body || !d.body.firstElementChild) {
            fact('failed', p);
            return;
        }
        fact('page', p, d.title);
        fact('scripts', p, d.querySelectorAll('script').length);
        links(p, d);
        cells(p, d);
        timelines(p, d);
        d.querySelectorAll('ul.verdict li').forEach(function (li) { fact('verdict', p, words(li)); });
        d.querySelectorAll('[data-match]').forEach(function (e) { fact('match', p, attr(e, 'data-match')); });
        d.querySelectorAll('article.readme h1').forEach(function (h) { fact('readme', p, words(h)); });
        d.querySelectorAll('table.diff.changes').forEach(function (t) {
            fact('diff', p, t.querySelectorAll('td.del, td.add').length);
        });
        matrix(p, d);
    }

    /* A screenshot: its size, and how many pixels differ from its first:
     * a blank picture has none. */
    function png(img) {
        var c = document.createElement('canvas'), g, px, n = 0, i;
        c.width = img.naturalWidth;
        c.height = img.naturalHeight;
        if (c.width === 0 || c.height === 0) {
            fact('png', attr(img, 'data-png'), 0, 0, 0);
            return;
        }
        g = c.getContext('2d');
        g.drawImage(img, 0, 0);
        px = g.getImageData(0, 0, c.width, c.height).data;
        for (i = 0; i < px.length; i += 4)
            if (px[i] !== px[0] || px[i + 1] !== px[1] || px[i + 2] !== px[2])
                n++;
        fact('png', attr(img, 'data-png'), c.width, c.height, n);
    }

    window.addEventListener('load', function () {
        var pre = document.createElement('pre');
        document.querySelectorAll('iframe[data-page]').forEach(page);
        document.querySelectorAll('img[data-png]').forEach(png);
        fact('done');
        pre.id = 'facts';
        pre.textContent = '\n' + out.join('\n') + '\n';
        document.body.appendChild(pre);
    });
})();
