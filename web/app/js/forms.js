// Showing the server's answers on forms: a 422's field errors next to their fields, everything
// else in one notice at the top of the form.

import { h, replace, uid } from './dom.js';

// The notice area of a form, created on first use as its first child.
function noticeOf(form) {
  let notice = form.querySelector(':scope > .form-notice');
  if (!notice) {
    notice = h('div', { class: 'form-notice', role: 'alert' });
    form.prepend(notice);
  }
  return notice;
}

export function clearErrors(form) {
  for (const el of form.querySelectorAll('.field-error')) el.remove();
  for (const el of form.querySelectorAll('[aria-invalid="true"]')) {
    el.removeAttribute('aria-invalid');
    const ids = (el.getAttribute('aria-describedby') || '').split(' ').filter((id) => id && !id.startsWith('err-'));
    if (ids.length) el.setAttribute('aria-describedby', ids.join(' ')); else el.removeAttribute('aria-describedby');
  }
  const notice = form.querySelector(':scope > .form-notice');
  if (notice) notice.replaceChildren();
}

// The field wrapper for a server field name: exact ("examples[1].event"), else the longest
// prefix that names a field ("examples").
function fieldFor(form, name) {
  const fields = Array.from(form.querySelectorAll('[data-field]'));
  const exact = fields.find((f) => f.dataset.field === name);
  if (exact) return exact;
  let best = null;
  for (const f of fields) {
    const key = f.dataset.field;
    if (key && (name.startsWith(`${key}[`) || name.startsWith(`${key}.`)) && (!best || key.length > best.dataset.field.length)) best = f;
  }
  return best;
}

// Marks a field invalid with a message below it; returns false when no field has that name.
export function fieldError(form, name, message) {
  const wrapper = fieldFor(form, name);
  if (!wrapper) return false;
  const control = wrapper.querySelector('input, select, textarea');
  const shown = wrapper.dataset.field === name ? message : `${name}: ${message}`;
  const err = h('p', { class: 'field-error', id: uid('err') }, shown);
  wrapper.append(err);
  if (control) {
    control.setAttribute('aria-invalid', 'true');
    const ids = (control.getAttribute('aria-describedby') || '').split(' ').filter(Boolean);
    control.setAttribute('aria-describedby', [...ids, err.id].join(' '));
  }
  return true;
}

// Shows an ApiError (or any Error) on the form; focuses the first invalid field.
export function showProblem(form, error) {
  clearErrors(form);
  const unplaced = [];
  for (const e of error.errors || []) if (!fieldError(form, e.field, e.message)) unplaced.push(e);
  const notice = noticeOf(form);
  const title = error.errors && error.errors.length ? 'Please correct the highlighted fields.' : (error.title || 'Something went wrong');
  replace(notice, h('div', { class: 'notice error' },
    h('strong', {}, title),
    error.detail && !(error.errors && error.errors.length) ? h('p', { class: 'small' }, error.detail) : null,
    unplaced.length ? h('ul', {}, unplaced.map((e) => h('li', {}, `${e.field}: ${e.message}`))) : null));
  const first = form.querySelector('[aria-invalid="true"]');
  if (first) first.focus(); else notice.focus?.();
}

// A success notice at the top of the form.
export function showOk(form, ...content) {
  clearErrors(form);
  replace(noticeOf(form), h('div', { class: 'notice ok' }, content));
}

// Disables the form's submit button while `work` runs; returns work's result.
export async function busy(form, work) {
  const buttons = form.querySelectorAll('button[type="submit"]');
  for (const b of buttons) b.disabled = true;
  form.setAttribute('aria-busy', 'true');
  try {
    return await work();
  } finally {
    for (const b of buttons) b.disabled = false;
    form.removeAttribute('aria-busy');
  }
}

// A page-level error box (for failed loads).
// The one notice a failed load shows; with retry, a Try again button that runs it (the notice
// is replaced by whatever retry renders, so it never piles up).
export function errorNotice(error, retry) {
  const again = retry ? h('button', { type: 'button', class: 'small' }, 'Try again') : null;
  if (again) again.addEventListener('click', () => { again.disabled = true; retry(); });
  return h('div', { class: 'notice error', role: 'alert' },
    h('strong', {}, error.title || 'Something went wrong'),
    error.detail ? h('p', { class: 'small' }, error.detail) : (error.message ? h('p', { class: 'small' }, error.message) : null),
    again);
}

// Grey bars standing in for a list while it loads, announced to screen readers by label.
// Widths come from the stylesheet: the CSP allows no inline style.
export function skeleton(label, lines = 3) {
  return h('div', { class: 'skeleton', role: 'status', aria: { label, busy: 'true' } },
    Array.from({ length: lines }, () => h('span', { class: 'skeleton-line' })));
}
