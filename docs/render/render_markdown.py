#!/usr/bin/env python3
"""Renders a Markdown file of docs/ into a standalone HTML page for the edge to serve.

    render_markdown.py SOURCE.md OUT_DIR

writes OUT_DIR/index.html and OUT_DIR/docs.css. The page links its stylesheet and holds no script
and no inline style, so it renders under the edge's Content-Security-Policy (default-src 'self').
Covers the Markdown docs/ uses: # headings (with anchors), paragraphs, - and 1. lists, pipe
tables, ``` fences, `code`, **bold**, *italic* and [links](target). Everything else is text,
escaped: the page shows what the file says and never interprets HTML in it.
"""
import html
import os
import re
import sys

CSS = """body{font:16px/1.5 system-ui,sans-serif;color:#1d2330;max-width:72rem;margin:0 auto;padding:1rem 1.5rem 4rem}
h1,h2,h3{line-height:1.25}h2{margin-top:2.5rem;border-bottom:1px solid #d9dde5;padding-bottom:.3rem}
code{font:.9em ui-monospace,monospace;background:#f1f3f7;padding:.1em .3em;border-radius:3px}
pre{background:#f1f3f7;padding:.8rem 1rem;overflow-x:auto;border-radius:4px}pre code{padding:0;background:none}
table{border-collapse:collapse;margin:1rem 0;width:100%}th,td{border:1px solid #d9dde5;padding:.35rem .6rem;text-align:left;vertical-align:top}
th{background:#f6f7fa}a{color:#2450b2}nav{margin-bottom:1rem}
"""


def slug(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def inline(text):
    """Inline Markdown of one line or cell, escaped."""
    out = []
    # Code spans first: nothing inside them is Markdown.
    for i, part in enumerate(re.split(r"(`[^`]*`)", text)):
        if i % 2 == 1:
            out.append("<code>" + html.escape(part[1:-1]) + "</code>")
            continue
        part = html.escape(part, quote=True)
        part = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", part)
        part = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"<em>\1</em>", part)

        def link(m):
            target = m.group(2)
            if not re.match(r"^(https?://|mailto:|#|/(?!/))", html.unescape(target)):
                return m.group(1)
            return '<a href="%s">%s</a>' % (target, m.group(1))

        part = re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", link, part)
        out.append(part)
    return "".join(out)


def cells(row):
    row = row.strip()
    if row.startswith("|"):
        row = row[1:]
    if row.endswith("|") and not row.endswith("\\|"):
        row = row[:-1]
    # A pipe escaped as \| belongs to the cell.
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", row)]


def render(source):
    lines = source.replace("\r\n", "\n").split("\n")
    body = []
    title = "Toolgate"
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        fence = re.match(r"^\s*```\s*([\w+-]*)\s*$", line)
        if fence:
            code = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                code.append(lines[i])
                i += 1
            i += 1
            body.append("<pre><code>%s</code></pre>" % html.escape("\n".join(code)))
            continue
        heading = re.match(r"^(#{1,6})\s+(.*?)\s*$", line)
        if heading:
            level, text = len(heading.group(1)), heading.group(2)
            if level == 1:
                title = text
            body.append('<h%d id="%s">%s</h%d>' % (level, slug(text), inline(text), level))
            i += 1
            continue
        if line.lstrip().startswith("|") and i + 1 < len(lines) and re.match(
                r"^\s*\|?\s*:?-{3,}", lines[i + 1]):
            head = cells(line)
            i += 2
            rows = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append(cells(lines[i]))
                i += 1
            out = ["<table><thead><tr>"]
            out += ["<th>%s</th>" % inline(c) for c in head]
            out.append("</tr></thead><tbody>")
            for r in rows:
                out.append("<tr>" + "".join("<td>%s</td>" % inline(c) for c in r) + "</tr>")
            out.append("</tbody></table>")
            body.append("".join(out))
            continue
        item = re.match(r"^(\s*)([-*+]|\d+\.)\s+(.*)$", line)
        if item:
            tag = "ol" if item.group(2)[0].isdigit() else "ul"
            items = []
            while i < len(lines):
                m = re.match(r"^\s*([-*+]|\d+\.)\s+(.*)$", lines[i])
                if m:
                    items.append(m.group(2))
                elif lines[i].strip() and lines[i].startswith(" ") and items:
                    items[-1] += " " + lines[i].strip()  # a continuation line
                else:
                    break
                i += 1
            body.append("<%s>%s</%s>" % (tag, "".join("<li>%s</li>" % inline(t) for t in items), tag))
            continue
        para = []
        while i < len(lines) and lines[i].strip() and not re.match(
                r"^(#{1,6}\s|\s*```|\s*\||\s*([-*+]|\d+\.)\s)", lines[i]):
            para.append(lines[i].strip())
            i += 1
        if not para:  # a line no rule took: keep it as text
            para.append(lines[i].strip())
            i += 1
        body.append("<p>%s</p>" % inline(" ".join(para)))
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        "<title>%s</title>\n"
        '<link rel="stylesheet" href="/docs/docs.css">\n</head>\n<body>\n'
        '<nav><a href="/">Toolgate</a> · <a href="/api/v1/openapi.json">openapi.json</a></nav>\n'
        "%s\n</body>\n</html>\n" % (html.escape(title), "\n".join(body)))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: render_markdown.py SOURCE.md OUT_DIR")
    with open(sys.argv[1], encoding="utf-8") as f:
        page = render(f.read())
    os.makedirs(sys.argv[2], exist_ok=True)
    with open(os.path.join(sys.argv[2], "index.html"), "w", encoding="utf-8") as f:
        f.write(page)
    with open(os.path.join(sys.argv[2], "docs.css"), "w", encoding="utf-8") as f:
        f.write(CSS)


if __name__ == "__main__":
    main()
