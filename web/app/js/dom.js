// Building the page. Every piece of text goes in as a text node or a property, never as HTML, so
// nothing the API returns (names, descriptions, logs) can inject markup or script.

// h('a', {href: '/x', class: 'c', on: {click: fn}, aria: {label: 'l'}}, 'text', child, [more])
// Props: class, text, on (event listeners), aria (aria-* attributes), data (data-*
// attributes); a prop whose value is false, null or undefined is left out; anything else is an
// attribute (or a property for value/checked/selected/disabled/hidden).
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') el.className = value;
    else if (name === 'text') el.textContent = value;
    else if (name === 'on') for (const [ev, fn] of Object.entries(value)) el.addEventListener(ev, fn);
    else if (name === 'aria') for (const [k, v] of Object.entries(value)) { if (v !== undefined && v !== null) el.setAttribute(`aria-${k}`, String(v)); }
    else if (name === 'data') for (const [k, v] of Object.entries(value)) el.dataset[k] = v;
    else if (['value', 'checked', 'selected', 'disabled', 'hidden', 'open'].includes(name)) el[name] = value;
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

// Appends strings (as text), nodes and nested arrays; skips null, undefined and false.
export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

// Replaces the element's children.
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

let uniqueCounter = 0;
// A fresh element id, for label/for and aria-describedby pairs.
export function uid(prefix = 'id') {
  uniqueCounter += 1;
  return `${prefix}-${uniqueCounter}`;
}

// A labelled form field: <div class="field" data-field=name><label/>control<p hint/></div>.
// `control` is an input, select or textarea; it gets an id and, with a hint, aria-describedby.
// data-field ties the field to the server's validation errors (forms.js).
export function field(label, control, { name, hint } = {}) {
  control.id = control.id || uid('f');
  if (name && !control.name) control.name = name;
  const wrapper = h('div', { class: 'field', data: { field: name || control.name || '' } },
    h('label', { for: control.id, text: label }), control);
  if (hint) {
    const hintEl = h('p', { class: 'hint', id: uid('hint'), text: hint });
    control.setAttribute('aria-describedby', hintEl.id);
    wrapper.append(hintEl);
  }
  return wrapper;
}

// <select> with options [{value, label}] or plain strings; `selected` picks the initial value.
export function select(options, selected, props = {}) {
  const el = h('select', props);
  for (const option of options) {
    const o = typeof option === 'string' ? { value: option, label: option } : option;
    el.append(h('option', { value: o.value, selected: o.value === selected }, o.label));
  }
  if (selected !== undefined) el.value = selected;
  return el;
}

// A table in a scrollable, keyboard-focusable wrapper (phone widths scroll sideways).
export function table(caption, headers, rows) {
  const thead = h('thead', {}, h('tr', {}, headers.map((hd) => {
    const spec = typeof hd === 'string' ? { label: hd } : hd;
    return h('th', { scope: 'col', class: spec.num ? 'num' : null }, spec.label);
  })));
  const tbody = h('tbody', {}, rows);
  const t = h('table', {}, h('caption', { class: 'sr-only', text: caption }), thead, tbody);
  return h('div', { class: 'table-wrap', tabindex: '0', role: 'region', aria: { label: caption } }, t);
}

// Announces a short message to everyone (visually and to screen readers).
let toastTimer = null;
export function toast(message) {
  const el = document.getElementById('toast');
  el.textContent = message;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.textContent = ''; }, 4000);
}
