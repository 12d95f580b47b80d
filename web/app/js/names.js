// Function names for lists that carry only ids (ledger, executions). Each id is looked up once
// per page load; an id the viewer may not see keeps showing the id.

import { api } from './api.js';
import { h } from './dom.js';

const cache = new Map();

function nameOf(functionId) {
  if (!cache.has(functionId)) {
    cache.set(functionId, api('GET', `/functions/${encodeURIComponent(functionId)}`).then((d) => d.name).catch(() => null));
  }
  return cache.get(functionId);
}

// A link to the tool whose text becomes the tool's name once known.
export function functionLink(functionId) {
  if (!functionId) return '—';
  const link = h('a', { href: `/tools/${functionId}` }, h('code', {}, `${functionId.slice(0, 8)}…`));
  link.title = functionId;
  nameOf(functionId).then((name) => {
    if (name) link.replaceChildren(name);
  });
  return link;
}
