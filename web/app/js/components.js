// Pieces several pages share: copy buttons, tabs, tool cards with their heart, the secret
// chooser.

import { api } from './api.js';
import { h, select, toast, uid } from './dom.js';
import { count, egressBadge, egressSummary, price, runtimeName, stars } from './format.js';
import { requireLogin, session } from './state.js';

// Copies text to the clipboard; falls back to a hidden textarea where the Clipboard API is
// unavailable (plain http on a host other than localhost).
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = h('textarea', { class: 'sr-only', readonly: true, aria: { hidden: 'true' } });
    area.value = text;
    document.body.append(area);
    area.select();
    let ok = false;
    try {
      ok = document.execCommand('copy');
    } catch {
      ok = false;
    }
    area.remove();
    return ok;
  }
}

// A "Copy" button for `what` (used in its accessible name and the announcement).
export function copyButton(getText, what) {
  const button = h('button', { type: 'button', class: 'small copy', aria: { label: `Copy ${what}` } }, 'Copy');
  let timer = null;
  button.addEventListener('click', async () => {
    const ok = await copyText(getText());
    button.textContent = ok ? 'Copied' : 'Copy failed';
    toast(ok ? `Copied ${what} to the clipboard.` : `Could not copy ${what}; select it and copy by hand.`);
    clearTimeout(timer);
    timer = setTimeout(() => { button.textContent = 'Copy'; }, 2500);
  });
  return button;
}

// Accessible tabs (WAI-ARIA tabs pattern: arrow keys, Home and End move between tabs).
// `items` are [{id, title}]; onSelect(id, panel) fills the panel. Returns the container.
export function tabs(label, items, selected, onSelect) {
  const prefix = uid('tabs');
  const panel = h('div', { role: 'tabpanel', tabindex: '0', class: 'tabpanel' });
  const buttons = items.map((item) => h('button', {
    type: 'button', role: 'tab', id: `${prefix}-${item.id}`, aria: { controls: `${prefix}-panel`, selected: 'false' }, tabindex: '-1', data: { tab: item.id },
  }, item.title));
  panel.id = `${prefix}-panel`;
  const list = h('div', { role: 'tablist', class: 'tablist', aria: { label } }, buttons);

  function choose(id, focus) {
    for (const b of buttons) {
      const on = b.dataset.tab === id;
      b.setAttribute('aria-selected', String(on));
      b.tabIndex = on ? 0 : -1;
      if (on) {
        panel.setAttribute('aria-labelledby', b.id);
        if (focus) b.focus();
      }
    }
    panel.replaceChildren();
    onSelect(id, panel);
  }
  list.addEventListener('click', (e) => {
    const b = e.target.closest('[role="tab"]');
    if (b) choose(b.dataset.tab, false);
  });
  list.addEventListener('keydown', (e) => {
    const at = buttons.indexOf(document.activeElement);
    if (at < 0) return;
    let next = null;
    if (e.key === 'ArrowRight') next = (at + 1) % buttons.length;
    else if (e.key === 'ArrowLeft') next = (at - 1 + buttons.length) % buttons.length;
    else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = buttons.length - 1;
    if (next === null) return;
    e.preventDefault();
    choose(buttons[next].dataset.tab, true);
  });
  const container = h('div', { class: 'tabs' }, list, panel);
  choose(items.some((i) => i.id === selected) ? selected : items[0].id, false);
  return container;
}

// The heart that toggles a favorite. `isFavorite` is the known state; onChange(newState).
export function heartButton(functionId, name, isFavorite, onChange) {
  let on = Boolean(isFavorite);
  const button = h('button', { type: 'button', class: 'heart' });
  const show = () => {
    button.setAttribute('aria-pressed', String(on));
    button.setAttribute('aria-label', `Favorite ${name}`);
    button.title = on ? 'Remove from favorites' : 'Add to favorites';
    button.textContent = on ? '♥' : '♡';
  };
  show();
  button.addEventListener('click', async () => {
    if (!session.me) {
      requireLogin();
      return;
    }
    button.disabled = true;
    try {
      await api(on ? 'DELETE' : 'PUT', `/favorites/${encodeURIComponent(functionId)}`);
      on = !on;
      show();
      toast(on ? `${name} added to your favorites.` : `${name} removed from your favorites.`);
      if (onChange) onChange(on);
    } catch (e) {
      toast(e.detail || e.message);
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

// Rating as stars with a text alternative.
export function ratingBadge(rating) {
  const average = Number(rating?.average || 0);
  const n = Number(rating?.count || 0);
  if (n === 0) return h('span', { class: 'muted' }, 'No ratings yet');
  return h('span', { class: 'rating' },
    h('span', { class: 'stars', aria: { hidden: 'true' } }, stars(average)), ' ',
    h('span', {}, `${average.toFixed(1)} (${count(n, 'rating')})`));
}

// "99.2% succeeded · p50 under 8 ms", a tool's quality over the last 7 days (last_7_days of its
// card or detail); '' without runs.
export function weekQuality(week) {
  if (!week || !week.executions) return '';
  const parts = [];
  if (week.success_rate !== null && week.success_rate !== undefined) parts.push(`${(week.success_rate * 100).toFixed(1)}% succeeded`);
  if (week.p50_ms !== null && week.p50_ms !== undefined) parts.push(`p50 under ${week.p50_ms} ms`);
  return parts.join(' · ');
}

// A tool card: a marketplace card, a favorite card or a workspace summary (fields it lacks are
// left out). `extra` are more nodes for the bottom row (buttons).
export function toolCard(card, { extra = [], showHeart = true } = {}) {
  const link = h('a', { href: `/tools/${card.function_id}` }, card.name);
  const badges = [
    card.runtime ? h('span', { class: 'badge' }, runtimeName(card.runtime)) : null,
    card.compute_type ? h('span', { class: `badge${card.compute_type === 'GPU' ? ' warn' : ''}` }, card.compute_type) : null,
    h('span', { class: `badge ${Number(card.price_micro_usd) ? 'accent' : 'ok'}` }, Number(card.price_micro_usd) ? `${price(card.price_micro_usd)} / run` : 'Free'),
    card.mcp ? h('span', { class: 'badge accent' }, 'MCP') : null,
    egressBadge(card.egress) ? h('span', { class: 'badge warn', title: egressSummary(card.egress), data: { egress: '' } }, egressBadge(card.egress)) : null,
    card.visibility === 'private' ? h('span', { class: 'badge' }, 'Private') : null,
    card.category ? h('span', { class: 'badge' }, card.category) : null,
  ];
  const stats = [];
  if (card.rating) stats.push(ratingBadge(card.rating));
  if (card.executions !== undefined) stats.push(h('span', {}, count(card.executions, 'run')));
  const quality = weekQuality(card.last_7_days);
  if (quality) stats.push(h('span', { data: { stat: 'week' }, title: 'Over the last 7 days' }, quality));
  return h('article', { class: 'card', aria: { label: card.name }, data: { functionId: card.function_id } },
    h('div', { class: 'card-top' },
      h('h3', {}, link),
      showHeart && card.favorite !== undefined ? heartButton(card.function_id, card.name, card.favorite) : null),
    h('p', { class: 'small muted' }, 'by ', publisherLink(card.organization)),
    h('p', { class: 'desc' }, card.description || ''),
    h('div', { class: 'badges' }, badges),
    stats.length ? h('div', { class: 'stats' }, stats) : null,
    card.tags && card.tags.length ? h('p', { class: 'small muted' }, `Tags: ${card.tags.join(', ')}`) : null,
    extra.length ? h('div', { class: 'row' }, extra) : null);
}

// The publisher's page: the marketplace narrowed to the organization's tools.
export function publisherLink(organization) {
  if (!organization?.id) return organization?.name || 'unknown';
  return h('a', { href: `/?creator=${encodeURIComponent(organization.id)}`, class: 'publisher' }, organization.name || 'unknown');
}

export function cardList(label, cards, options) {
  return h('ul', { class: 'cards', aria: { label } }, cards.map((c) => h('li', {}, toolCard(c, options))));
}

// One <select> per declared key, choosing among the user's secrets. onChange(mapping) runs with
// {KEY: secret_id or ''} whenever a choice changes. `secrets` may be null (not signed in);
// `initial` ({KEY: secret_id}) preselects choices, such as a stored mapping.
export function secretChooser(declaredKeys, secrets, onChange, initial = {}) {
  const mapping = Object.fromEntries(declaredKeys.map((k) => [k, initial[k] || '']));
  const box = h('fieldset', { class: 'secret-chooser' }, h('legend', {}, 'Secrets for the declared keys'));
  if (!declaredKeys.length) return { element: null, mapping };
  if (!secrets) {
    box.append(h('p', { class: 'small muted' }, 'Sign in to choose among your secrets.'));
  } else if (!secrets.length) {
    box.append(h('p', { class: 'small' }, 'You have no secrets yet. ', h('a', { href: '/settings/secrets' }, 'Create one in Settings → Secrets'), ', then come back.'));
  }
  for (const key of declaredKeys) {
    const options = [{ value: '', label: '— choose a secret —' }, ...(secrets || []).map((s) => ({ value: s.id, label: `${s.name} (${s.id})` }))];
    const control = select(options, mapping[key], { name: `secret-${key}` });
    control.addEventListener('change', () => {
      mapping[key] = control.value;
      onChange({ ...mapping });
    });
    const id = uid('f');
    control.id = id;
    box.append(h('div', { class: 'field' }, h('label', { for: id }, h('code', {}, key)), control));
  }
  return { element: box, mapping };
}

// "X-Env-Keys" value for a mapping, or '' when the version declares no keys.
export function envKeysHeader(mapping) {
  return Object.entries(mapping).map(([k, v]) => `${k}=${v || '<secret_id>'}`).join(', ');
}

export function emptyState(...content) {
  return h('div', { class: 'panel muted' }, content);
}

export function setPageTitle(title) {
  document.title = title ? `${title} · Toolgate` : 'Toolgate';
}

// An https:// URL from the API as a URL, else null: http, javascript:, data: and anything that
// does not parse never become a link or an image.
export function httpsUrl(value) {
  if (typeof value !== 'string') return null;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' ? url : null;
  } catch {
    return null;
  }
}

// A connected app's logo: its logo_uri when that is https (loaded without a Referer, so the
// app's host does not learn which page showed it), else, or once the image fails to load, the
// first letter of its name in a square.
export function clientLogo(client, { small = false } = {}) {
  const name = client?.name || 'App';
  const cls = `client-logo${small ? ' small' : ''}`;
  const placeholder = () => h('span', { class: `${cls} placeholder`, aria: { hidden: 'true' } },
    Array.from(name.trim())[0]?.toUpperCase() || '?');
  const url = httpsUrl(client?.logo_uri);
  if (!url) return placeholder();
  const px = small ? '24' : '48';
  const img = h('img', { class: cls, src: url.href, alt: `${name} logo`, width: px, height: px, referrerpolicy: 'no-referrer', decoding: 'async' });
  img.addEventListener('error', () => img.replaceWith(placeholder()), { once: true });
  return img;
}

// What an OAuth grant or request reaches: one tool (a version or its latest) or the workspace.
export function endpointText(endpoint) {
  if (endpoint?.kind === 'function') {
    const name = endpoint.function_name || endpoint.function_id || 'one tool';
    return endpoint.version ? `${name} ${endpoint.version}` : `${name} (latest version)`;
  }
  return 'Your whole workspace';
}
