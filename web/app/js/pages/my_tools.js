// My Tools: the organization's own tools, the tools it added, and the user's favorites.

import { api } from '../api.js';
import { h, replace } from '../dom.js';
import { errorNotice, skeleton } from '../forms.js';
import { cardList, emptyState, setPageTitle, tabs } from '../components.js';

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
  } catch (error) {
    replace(panel, errorNotice(error, () => show(id, panel)));
  }
}
