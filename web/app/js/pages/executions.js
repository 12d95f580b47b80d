// Executions: the organization's runs with status, summary and cost, and in each run's detail
// the time every stage of the chain held it; the owner of a tool also sees each run's logs. A run
// made by a connected app (an OAuth client) carries the app's name.

import { api, query as qs } from '../api.js';
import { h, replace, table } from '../dom.js';
import { usd, when } from '../format.js';
import { errorNotice, skeleton } from '../forms.js';
import { emptyState, setPageTitle } from '../components.js';
import { functionLink } from '../names.js';

// Milliseconds with enough precision for a stage that took a fraction of one.
function ms(us) {
  const v = us / 1000;
  return `${v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : Math.round(v)} ms`;
}

// The chain's hops in order: each one's name, when it began after the first, and how long it
// held the job (the API's `hops`, recorded as the job passed each stage).
function hopsTable(hops) {
  if (!hops?.length) return h('p', { class: 'muted small' }, 'No stage timings were recorded for this execution.');
  const first = hops[0].start_unix_us;
  return table('Stages of the execution', ['Stage', { label: 'Started after', num: true }, { label: 'Duration', num: true }],
    hops.map((hop) => h('tr', { data: { hop: hop.name } },
      h('td', {}, h('code', {}, hop.name)),
      h('td', { class: 'num' }, `+${ms(hop.start_unix_us - first)}`),
      h('td', { class: 'num' }, ms(hop.duration_us)))));
}

// "via Claude" beside a run that a connected app made; null for any other run.
function clientBadge(clientName) {
  if (!clientName) return null;
  return h('span', { class: 'badge accent', title: `Called by the connected app ${clientName}`, data: { client: clientName } }, `via ${clientName}`);
}

function statusBadge(code) {
  const kind = code >= 200 && code < 300 ? 'ok' : code >= 500 ? 'danger' : 'warn';
  return h('span', { class: `badge ${kind}` }, String(code));
}

export async function render(container, { query }) {
  setPageTitle('Executions');
  const functionId = query.get('function_id') || '';
  const listBox = h('div', {}, skeleton('Loading executions', 5));
  const more = h('button', { type: 'button', hidden: true }, 'Load more');
  let cursor = null;

  // The detail row under an execution: ids, cost split, and logs when the API gives them.
  async function toggleDetail(button, tr, e) {
    const open = button.getAttribute('aria-expanded') === 'true';
    const existing = tr.nextElementSibling?.classList.contains('detail-row') ? tr.nextElementSibling : null;
    if (open) {
      existing?.remove();
      button.setAttribute('aria-expanded', 'false');
      return;
    }
    button.setAttribute('aria-expanded', 'true');
    const cell = h('td', { colspan: '9' }, skeleton('Loading the execution', 3));
    const detailRow = h('tr', { class: 'detail-row', id: button.getAttribute('aria-controls') }, cell);
    tr.after(detailRow);
    try {
      const x = await api('GET', `/executions/${encodeURIComponent(e.execution_id)}`);
      replace(cell,
        h('dl', { class: 'facts' },
          h('dt', {}, 'Execution ID'), h('dd', {}, h('code', {}, x.execution_id)),
          h('dt', {}, 'Trace ID'), h('dd', {}, x.trace_id ? h('code', {}, x.trace_id) : '—'),
          x.client_name || e.client_name ? [h('dt', {}, 'Connected app'), h('dd', {}, x.client_name || e.client_name)] : null,
          h('dt', {}, 'Cost'), h('dd', {}, `compute ${usd(x.cost?.compute_micro_usd)} + function ${usd(x.cost?.function_micro_usd)} = ${usd(x.cost?.total_micro_usd)}`)),
        h('h3', {}, 'Stages'), hopsTable(x.hops),
        'logs' in x
          ? [h('h3', {}, 'Logs'), x.logs ? h('pre', { class: 'wrap logs' }, h('code', {}, x.logs)) : h('p', { class: 'muted' }, 'The handler wrote nothing.')]
          : h('p', { class: 'muted small' }, 'Logs are shown only to the organization that owns the tool.'));
    } catch (error) {
      replace(cell, errorNotice(error));
    }
  }

  const row = (e) => {
    const details = h('button', { type: 'button', class: 'small', aria: { expanded: 'false', controls: `x-${e.execution_id}`, label: `Details of execution ${e.execution_id}` } }, 'Details');
    const tr = h('tr', { data: { executionId: e.execution_id } },
      h('td', {}, when(e.created_at)),
      h('td', {}, h('span', { class: 'tool-cell' }, functionLink(e.function_id), clientBadge(e.client_name))),
      h('td', {}, e.version),
      h('td', {}, statusBadge(e.status_code)),
      h('td', { class: 'num' }, `${e.runtime_ms} ms`),
      h('td', { class: 'num' }, `${e.memory_used_mb} MB`),
      h('td', {}, e.compute_type),
      h('td', { class: 'num', title: `compute ${usd(e.cost?.compute_micro_usd)}, function ${usd(e.cost?.function_micro_usd)}` }, usd(e.cost?.total_micro_usd)),
      h('td', {}, details));
    details.addEventListener('click', () => toggleDetail(details, tr, e));
    return tr;
  };
  const headers = ['Time', 'Tool', 'Version', 'Status', { label: 'Runtime', num: true }, { label: 'Memory', num: true }, 'Compute', { label: 'Cost', num: true }, 'Details'];

  async function load(append) {
    try {
      const page = await api('GET', `/executions${qs({ function_id: functionId, limit: 50, cursor: append ? cursor : '' })}`);
      cursor = page.next_cursor || null;
      const items = page.items || [];
      if (append) listBox.querySelector('tbody').append(...items.map(row));
      else replace(listBox, items.length ? table('Executions', headers, items.map(row)) : emptyState('No executions yet. Run a tool from its Try it tab or with an API key.'));
      more.hidden = !cursor;
    } catch (error) {
      // A failed page, first or later, offers to load the list again from its start.
      replace(listBox, errorNotice(error, () => { replace(listBox, skeleton('Loading executions', 5)); load(false); }));
    }
  }
  more.addEventListener('click', () => load(true));

  replace(container,
    h('h1', {}, 'Executions'),
    h('p', { class: 'muted' }, 'Every run by your organization, newest first: status, runtime, memory, compute type and cost. A run a connected app made says which, such as “via Claude”.'),
    functionId ? h('p', {}, 'Showing one tool: ', functionLink(functionId), ' · ', h('a', { href: '/executions' }, 'Show all')) : null,
    listBox, more);
  await load(false);
}
