// The marketplace: full-text search, filters with counts, sort, Trending and Top rated, cards
// with a heart. The search and filters live in the address (shareable, kept on reload).

import { api, query as qs } from '../api.js';
import { h, replace, select, uid } from '../dom.js';
import { count, runtimeName } from '../format.js';
import { errorNotice } from '../forms.js';
import { cardList, emptyState, ratingBadge, setPageTitle } from '../components.js';

const FILTERS = [
  // [query parameter, facet name, label]
  ['category', 'category', 'Category'],
  ['sector', 'sector', 'Sector'],
  ['runtime', 'runtime', 'Runtime'],
  ['compute_type', 'compute_type', 'Compute type'],
  ['tag', 'tags', 'Tag'],
  ['creator', 'creator', 'Creator or organization'],
  ['pricing', 'pricing', 'Pricing'],
];
const SORTS = [
  { value: 'relevance', label: 'Relevance' },
  { value: 'rating', label: 'Rating' },
  { value: 'executions', label: 'Executions' },
];
const PAGE = 24;
const HIGHLIGHTS = 3;  // short lists, so the full list starts on the first screen

function facetLabel(param, value, label) {
  if (param === 'runtime') return runtimeName(value);
  if (param === 'pricing') return value === 'free' ? 'Free' : value === 'paid' ? 'Paid' : value;
  return label || value;
}

export async function render(container, { query }) {
  setPageTitle('Marketplace');
  const state = {
    q: query.get('q') || '',
    sort: query.get('sort') || 'relevance',
    filters: Object.fromEntries(FILTERS.map(([p]) => [p, query.get(p) || ''])),
  };

  const searchInput = h('input', { type: 'search', name: 'q', value: state.q, placeholder: 'Search tools, e.g. “weather” or “pdf”', id: uid('q') });
  const searchForm = h('form', { class: 'search', role: 'search', aria: { label: 'Search the marketplace' } },
    h('label', { for: searchInput.id, class: 'sr-only' }, 'Search tools'),
    searchInput,
    h('button', { type: 'submit', class: 'primary' }, 'Search'));

  const selects = {};
  const filterFields = FILTERS.map(([param, , label]) => {
    const control = select([{ value: '', label: 'Any' }], '', { name: param, id: uid('filter') });
    selects[param] = control;
    return h('div', { class: 'field', data: { field: param } }, h('label', { for: control.id }, label), control);
  });
  const sortSelect = select(SORTS, state.sort, { name: 'sort', id: uid('sort') });
  const clearButton = h('button', { type: 'button', class: 'small' }, 'Clear filters');
  const filterForm = h('form', { aria: { label: 'Filters' } },
    filterFields,
    h('div', { class: 'field' }, h('label', { for: sortSelect.id }, 'Sort by'), sortSelect),
    clearButton);
  const details = h('details', { open: window.matchMedia('(min-width: 56rem)').matches },
    h('summary', {}, 'Filters and sort'), filterForm);

  const highlights = h('div', { class: 'highlights' });
  const status = h('p', { class: 'muted', role: 'status', aria: { live: 'polite' } });
  const results = h('div', { class: 'results' });
  const more = h('button', { type: 'button', hidden: true }, 'Load more');
  const resultsHeading = h('h2', { id: uid('results') }, 'All tools');

  replace(container,
    h('div', { class: 'section-head' }, h('h1', {}, 'Marketplace'),
      h('p', { class: 'muted' }, 'Tools published by organizations, ready to call over HTTP.')),
    searchForm,
    h('div', { class: 'market' },
      h('aside', { class: 'filters panel', aria: { label: 'Filters and sort' } }, details),
      h('div', {},
        highlights,
        h('section', { aria: { labelledby: resultsHeading.id } }, resultsHeading, status, results, more))));

  let nextCursor = null;
  let generation = 0;  // a newer search makes an older answer stale

  const params = (extra = {}) => ({ q: state.q, ...state.filters, sort: state.sort, ...extra });
  const filtering = () => Boolean(state.q || Object.values(state.filters).some(Boolean));

  function remember() {
    const url = `/${qs({ q: state.q, ...state.filters, sort: state.sort === 'relevance' ? '' : state.sort })}`;
    window.history.replaceState({}, '', url);
  }

  async function loadFacets() {
    let facets;
    try {
      facets = await api('GET', `/marketplace/facets${qs({ q: state.q, ...state.filters })}`);
    } catch {
      return;  // the selects keep their current options
    }
    for (const [param, facet] of FILTERS) {
      const control = selects[param];
      const values = facets[facet] || [];
      const current = state.filters[param];
      const options = [{ value: '', label: 'Any' },
        ...values.map((v) => ({ value: v.value, label: `${facetLabel(param, v.value, v.label || v.name)} (${v.count})` }))];
      if (current && !values.some((v) => v.value === current)) options.push({ value: current, label: `${facetLabel(param, current)} (0)` });
      control.replaceChildren(...options.map((o) => h('option', { value: o.value }, o.label)));
      control.value = current;
    }
  }

  async function loadHighlights() {
    if (filtering()) {
      highlights.replaceChildren();
      resultsHeading.textContent = 'Results';
      return;
    }
    resultsHeading.textContent = 'All tools';
    try {
      const hl = await api('GET', '/marketplace/highlights');
      // Compact ranked lists, not cards: the full list below already shows every card, so a
      // tool's card appears once on the page. Top rated leaves out what Trending names.
      const trending = (hl.trending || []).slice(0, HIGHLIGHTS);
      const shown = new Set(trending.map((c) => c.function_id));
      const topRated = (hl.top_rated || []).filter((c) => !shown.has(c.function_id)).slice(0, HIGHLIGHTS);
      const section = (title, cards, metric) => {
        const heading = h('h2', { id: uid('hl') }, title);
        return h('section', { class: 'highlight', aria: { labelledby: heading.id } }, heading,
          cards.length
            ? h('ol', { class: 'ranked', aria: { label: title } }, cards.map((c) => h('li', {},
              h('a', { href: `/tools/${encodeURIComponent(c.function_id)}` }, c.name),
              h('span', { class: 'muted small' }, ` by ${c.organization?.name || 'an organization'} · `),
              metric(c))))
            : emptyState('Nothing here yet.'));
      };
      replace(highlights,
        section('Trending', trending, (c) => h('span', { class: 'small' }, count(Number(c.executions || 0), 'run'))),
        section('Top rated', topRated, (c) => ratingBadge(c.rating)));
    } catch (error) {
      replace(highlights, errorNotice(error));
    }
  }

  async function loadResults(append_ = false) {
    const mine = ++generation;
    if (!append_) {
      status.textContent = 'Searching…';
      nextCursor = null;
    }
    try {
      const asked = qs(params({ limit: PAGE }));
      const page = await api('GET', `/marketplace${qs(params({ limit: PAGE, cursor: append_ ? nextCursor : '' }))}`);
      if (mine !== generation) return;
      const items = page.items || [];
      nextCursor = page.next_cursor || null;
      const total = page.total ?? items.length;
      status.textContent = `${count(total, 'tool')}${state.q ? ` for “${state.q}”` : ''}`;
      if (append_) {
        results.querySelector('ul.cards').append(...Array.from(cardList('', items).children));
      } else if (items.length) {
        replace(results, cardList('Tools', items));
      } else {
        replace(results, emptyState('No tool matches. Try fewer filters or other words.'));
      }
      more.hidden = !nextCursor;
      results.dataset.query = asked;  // which search the cards answer (for tests and tools)
    } catch (error) {
      if (mine !== generation) return;
      status.textContent = '';
      replace(results, errorNotice(error));
      more.hidden = true;
    }
  }

  function refresh() {
    remember();
    loadFacets();
    loadHighlights();
    return loadResults(false);
  }

  searchForm.addEventListener('submit', (e) => {
    e.preventDefault();
    state.q = searchInput.value.trim();
    if (state.q && state.sort !== 'relevance') state.sort = 'relevance';
    sortSelect.value = state.sort;
    refresh();
  });
  filterForm.addEventListener('change', (e) => {
    if (e.target === sortSelect) state.sort = sortSelect.value;
    else if (e.target.name in state.filters) state.filters[e.target.name] = e.target.value;
    refresh();
  });
  filterForm.addEventListener('submit', (e) => e.preventDefault());
  clearButton.addEventListener('click', () => {
    for (const [param] of FILTERS) state.filters[param] = '';
    state.q = '';
    searchInput.value = '';
    refresh();
  });
  more.addEventListener('click', () => loadResults(true));

  await refresh();
}
