// A small Markdown renderer that builds DOM nodes directly. Text only ever becomes text nodes,
// so HTML in a tool's description or overview is shown as written and never interpreted; link
// targets are limited to http, https, mailto and paths on this site.
//
// Supported: # headings, paragraphs, - / * / + and 1. lists, > quotes, ``` fenced code, ---
// rules, `code`, **bold**, *italic* / _italic_, [links](https://...). Headings are shifted
// down by `headingOffset` levels so a tool's "# Title" does not compete with the page's h1.

import { h } from './dom.js';

const SAFE_URL = /^(https?:\/\/|mailto:|\/(?!\/))/i;

export function renderMarkdown(source, { headingOffset = 2 } = {}) {
  const root = h('div', { class: 'markdown' });
  const lines = String(source || '').replace(/\r\n?/g, '\n').split('\n');
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (/^\s*$/.test(line)) { i += 1; continue; }

    const fence = /^\s*(```|~~~)\s*([\w+-]*)\s*$/.exec(line);
    if (fence) {
      const code = [];
      i += 1;
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) { code.push(lines[i]); i += 1; }
      i += 1;  // the closing fence (or the end)
      root.append(h('pre', {}, h('code', { class: fence[2] ? `language-${fence[2]}` : null }, code.join('\n'))));
      continue;
    }
    const heading = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const level = Math.min(6, heading[1].length + headingOffset);
      root.append(inline(h(`h${level}`), heading[2]));
      i += 1;
      continue;
    }
    if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) {
      root.append(h('hr'));
      i += 1;
      continue;
    }
    if (/^\s{0,3}>/.test(line)) {
      const quoted = [];
      while (i < lines.length && /^\s{0,3}>/.test(lines[i])) { quoted.push(lines[i].replace(/^\s{0,3}>\s?/, '')); i += 1; }
      const inner = renderMarkdown(quoted.join('\n'), { headingOffset });
      root.append(h('blockquote', {}, Array.from(inner.childNodes)));
      continue;
    }
    const bullet = /^\s{0,3}([-*+]|\d{1,9}[.)])\s+/;
    if (bullet.test(line)) {
      const ordered = /^\s{0,3}\d/.test(line);
      const list = h(ordered ? 'ol' : 'ul');
      while (i < lines.length && bullet.test(lines[i]) && /^\s{0,3}\d/.test(lines[i]) === ordered) {
        let text = lines[i].replace(bullet, '');
        i += 1;
        // Continuation lines: indented and not a new item.
        while (i < lines.length && /^\s{2,}\S/.test(lines[i]) && !bullet.test(lines[i])) { text += ` ${lines[i].trim()}`; i += 1; }
        list.append(inline(h('li'), text));
      }
      root.append(list);
      continue;
    }
    const para = [];
    while (i < lines.length && !/^\s*$/.test(lines[i]) && !/^\s*(```|~~~|#{1,6}\s|>)/.test(lines[i]) && !bullet.test(lines[i])) {
      para.push(lines[i].trim());
      i += 1;
    }
    root.append(inline(h('p'), para.join(' ')));
  }
  return root;
}

// Appends the inline Markdown of `text` to `parent` and returns parent.
function inline(parent, text) {
  let plain = '';
  const flush = () => { if (plain) { parent.append(document.createTextNode(plain)); plain = ''; } };
  let i = 0;
  while (i < text.length) {
    const rest = text.slice(i);
    let m;
    if (rest[0] === '\\' && rest.length > 1 && /[\\`*_[\]()#+\-.!>]/.test(rest[1])) {
      plain += rest[1];
      i += 2;
    } else if ((m = /^(`+)([\s\S]*?[^`])\1(?!`)/.exec(rest))) {
      flush();
      parent.append(h('code', {}, m[2].trim()));
      i += m[0].length;
    } else if ((m = /^(\*\*|__)(?=\S)([\s\S]*?\S)\1/.exec(rest))) {
      flush();
      parent.append(inline(h('strong'), m[2]));
      i += m[0].length;
    } else if ((m = /^([*_])(?=\S)([\s\S]*?\S)\1(?![*_\w])/.exec(rest))) {
      flush();
      parent.append(inline(h('em'), m[2]));
      i += m[0].length;
    } else if ((m = /^\[([^\]]+)\]\(\s*([^\s)]+)(?:\s+"[^"]*")?\s*\)/.exec(rest))) {
      flush();
      if (SAFE_URL.test(m[2])) {
        const external = /^https?:/i.test(m[2]);
        parent.append(inline(h('a', { href: m[2], rel: external ? 'noopener noreferrer nofollow' : null }), m[1]));
      } else {
        inline(parent, m[1]);  // an unsafe target: keep the words, drop the link
      }
      i += m[0].length;
    } else {
      plain += rest[0];
      i += 1;
    }
  }
  flush();
  return parent;
}
