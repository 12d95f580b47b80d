// My Tools: the organization's own tools, the tools it added, and the user's favorites.

import { api } from '../api.js';
import { h, replace, uid } from '../dom.js';
import { errorNotice, skeleton } from '../forms.js';
import { cardList, emptyState, secretChooser, setPageTitle, tabs } from '../components.js';

const TABS = [
  { id: 'owned', title: 'Owned' },
  { id: 'added', title: 'Added' },
  { id: 'favorites', title: 'Favorites' },
];

export async function render(container, { query }) {
  setPageTitle('My Tools');
  replace(container,
    h('div', { class: 'section-head' }, h('h1', {}, 'My Tools'), h('a', { class: 'button primary', href: '/publish' }, 'Publish a new tool')),
    tabs('My tools', TABS, query.get('tab') || 'owned', (id, panel) => {
      window.history.replaceState({}, '', id === 'owned' ? '/my-tools' : `/my-tools?tab=${id}`);
      show(id, panel);
    }));
}

async function show(id, panel) {
  replace(panel, skeleton('Loading tools', 4));
  try {
    if (id === 'favorites') {
      const favorites = (await api('GET', '/favorites?limit=200')).items || [];
      replace(panel, favorites.length
        ? cardList('Favorites', favorites.map((c) => ({ ...c, favorite: c.favorite ?? true })))
        : emptyState('No favorites yet. Tap the heart on a tool in the ', h('a', { href: '/' }, 'marketplace'), ' to keep it here.'));
      return;
    }
    const workspace = await api('GET', '/workspace/tools');
    if (id === 'owned') {
      const owned = workspace.owned || [];
      replace(panel, owned.length
        ? cardList('Owned tools', owned, { showHeart: false })
        : emptyState('Your organization has not published a tool yet. ', h('a', { href: '/publish' }, 'Publish one'), '.'));
      for (const card of panel.querySelectorAll('.card')) {
        const fid = card.dataset.functionId;
        card.append(h('div', { class: 'row' },
          h('a', { class: 'button small', href: `/publish/${fid}` }, 'Publish a version'),
          h('a', { class: 'button small', href: `/executions?function_id=${fid}` }, 'Executions')));
      }
      await offerKeyBindings(panel);
      return;
    }
    const added = workspace.added || [];
    replace(panel, added.length
      ? cardList('Added tools', added, { showHeart: false })
      : emptyState('You have not added a tool yet. Open one in the ', h('a', { href: '/' }, 'marketplace'), ' and choose Add to workspace.'));
    for (const card of panel.querySelectorAll('.card')) {
      const fid = card.dataset.functionId;
      const name = card.getAttribute('aria-label');
      const remove = h('button', { type: 'button', class: 'small', aria: { label: `Remove ${name} from workspace` } }, 'Remove');
      remove.addEventListener('click', async () => {
        remove.disabled = true;
        try {
          await api('DELETE', `/workspace/tools/${encodeURIComponent(fid)}`);
          show('added', panel);
        } catch (error) {
          remove.disabled = false;
          card.append(errorNotice(error));
        }
      });
      card.append(h('div', { class: 'row' }, h('a', { class: 'button small', href: `/tools/${fid}?tab=try` }, 'Try it'), remove));
    }
    await offerKeyBindings(panel);
  } catch (error) {
    replace(panel, errorNotice(error, () => show(id, panel)));
  }
}

// "A=id1, B=id2" (the X-Env-Keys syntax) as {A: 'id1', B: 'id2'}.
function parseEnvKeys(text) {
  return Object.fromEntries(String(text || '').split(',').map((pair) => pair.split('=').map((p) => p.trim()))
    .filter(([name, id]) => name && id));
}

// A workspace tool whose latest version declares keys gets its secret mapping stored once here:
// the workspace MCP endpoint (/mcp) then passes those secrets on every call, so MCP
// clients send no X-Env-Keys.
async function offerKeyBindings(panel) {
  const cards = Array.from(panel.querySelectorAll('.card'));
  const details = await Promise.all(cards.map((card) => api('GET', `/functions/${encodeURIComponent(card.dataset.functionId)}`).catch(() => null)));
  cards.forEach((card, i) => {
    const keys = details[i]?.declared_keys || [];
    if (!keys.length) return;
    const name = card.getAttribute('aria-label');
    const box = h('div', { class: 'binding', id: uid('binding'), hidden: true });
    const open = h('button', { type: 'button', class: 'small', aria: { expanded: 'false', controls: box.id, label: `MCP secrets of ${name}` } }, 'MCP secrets');
    open.addEventListener('click', async () => {
      const opening = box.hidden;
      box.hidden = !opening;
      open.setAttribute('aria-expanded', String(opening));
      if (opening) await showBinding(box, card.dataset.functionId, name, keys);
    });
    card.append(h('div', { class: 'row' }, open), box);
  });
}

async function showBinding(box, functionId, name, keys) {
  replace(box, skeleton('Loading the mapping', 1));
  const path = `/workspace/tools/${encodeURIComponent(functionId)}/env-keys`;
  let secrets;
  let stored = null;
  try {
    secrets = (await api('GET', '/secrets?limit=200')).items || [];
    stored = (await api('GET', path)).env_keys;
  } catch (error) {
    if (!secrets || error.status !== 404) {
      replace(box, errorNotice(error, () => showBinding(box, functionId, name, keys)));
      return;
    }
  }
  let mapping = parseEnvKeys(stored);
  const chooser = secretChooser(keys, secrets, (m) => { mapping = m; }, mapping);
  const status = h('div', { role: 'status' });
  const save = h('button', { type: 'button', class: 'small primary' }, 'Save mapping');
  save.addEventListener('click', async () => {
    const missing = keys.filter((k) => !mapping[k]);
    if (missing.length) {
      replace(status, h('p', { class: 'notice error' }, `Choose a secret for ${missing.join(', ')}.`));
      return;
    }
    save.disabled = true;
    try {
      await api('PUT', path, { body: { env_keys: keys.map((k) => `${k}=${mapping[k]}`).join(',') } });
      await showBinding(box, functionId, name, keys);
      box.querySelector('[role="status"]').append(h('p', { class: 'notice ok' }, `Saved: MCP calls of ${name} from your workspace use these secrets.`));
    } catch (error) {
      save.disabled = false;
      replace(status, errorNotice(error));
    }
  });
  const actions = [save];
  if (stored) {
    const remove = h('button', { type: 'button', class: 'small danger' }, 'Remove mapping');
    remove.addEventListener('click', async () => {
      remove.disabled = true;
      try {
        await api('DELETE', path);
        await showBinding(box, functionId, name, keys);
        box.querySelector('[role="status"]').append(h('p', { class: 'notice ok' }, 'Removed: MCP calls now need X-Env-Keys.'));
      } catch (error) {
        remove.disabled = false;
        replace(status, errorNotice(error));
      }
    });
    actions.push(remove);
  }
  replace(box,
    h('p', { class: 'small' }, stored
      ? 'Stored for the workspace MCP endpoint: its calls of this tool get these secrets.'
      : 'No mapping stored: MCP clients of your workspace must send X-Env-Keys for this tool.'),
    chooser.element,
    h('div', { class: 'row' }, actions),
    status);
}
