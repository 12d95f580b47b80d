// Executions: the organization's runs with status, summary and cost, and in each run's detail
// the time every stage of the chain held it; the owner of a tool also sees each run's logs. A run
// made by a connected app (an OAuth client) carries the app's name. An asynchronous call
// (Prefer: respond-async) is opened by its execution ID, since the list holds only finished
// runs: its detail shows its status while it is queued or running (read again every few
// seconds), a Cancel button until it finishes, its result or error, and its callback's
// delivery attempts.

import { api, query as qs } from '../api.js';
import { field, h, replace, table, toast } from '../dom.js';
import { prettyJson, usd, when, whenPrecise } from '../format.js';
import { clearErrors, errorNotice, fieldError, skeleton } from '../forms.js';
import { copyButton, emptyState, setPageTitle } from '../components.js';
import { functionLink } from '../names.js';

// How often an execution that is queued or running is read again while its detail is shown,
// and one whose callback is still being delivered (retried after 1, 5, 30 s, then minutes).
const REFRESH_MS = 2000;
const CALLBACK_REFRESH_MS = 5000;

// The statuses an execution ends in (docs/api.md, "Asynchronous calls").
const FINAL = new Set(['succeeded', 'failed', 'timed_out', 'cancelled']);
const STATUS = {
  queued: { text: 'Queued', kind: 'accent' },
  running: { text: 'Running', kind: 'accent' },
  succeeded: { text: 'Succeeded', kind: 'ok' },
  failed: { text: 'Failed', kind: 'danger' },
  timed_out: { text: 'Timed out', kind: 'danger' },
  cancelled: { text: 'Cancelled', kind: 'warn' },
};
// A callback's outcome, and each attempt's.
const OUTCOME_KIND = {
  pending: 'accent', delivered: 'ok', failed: 'danger',
  rejected: 'danger', retryable: 'warn', network_error: 'warn', refused: 'danger',
};

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

// The handler's HTTP status.
function statusBadge(code) {
  const kind = code >= 200 && code < 300 ? 'ok' : code >= 500 ? 'danger' : 'warn';
  return h('span', { class: `badge ${kind}` }, String(code));
}

// Where the execution is: queued, running, or how it ended.
function executionStatusBadge(status) {
  if (!status) return null;
  const s = STATUS[status] || { text: status, kind: '' };
  return h('span', { class: `badge ${s.kind}`, data: { executionStatus: status } }, s.text);
}

function outcomeBadge(outcome) {
  if (!outcome) return '—';
  return h('span', { class: `badge ${OUTCOME_KIND[outcome] || ''}`, data: { outcome } }, outcome.replace(/_/g, ' '));
}

// What a finished asynchronous call returned: the envelope a synchronous call would have, or the
// problem it would have got.
function outcomeSection(x) {
  if (x.result) {
    const r = x.result;
    const s = r.summary || {};
    return h('section', { class: 'execution-part', data: { executionResult: '' } },
      h('h3', {}, 'Result'),
      h('p', {}, statusBadge(r.statusCode),
        s.runtime_ms !== undefined ? ` · ${s.runtime_ms} ms` : '',
        s.cost ? ` · ${usd(s.cost.total_micro_usd)}` : ''),
      h('pre', { class: 'wrap' }, h('code', {}, prettyJson(r.body))));
  }
  if (x.error) {
    return h('div', { class: 'notice error execution-part', data: { executionError: x.error.code || '' } },
      h('strong', {}, x.error.title || x.error.code || 'The call failed'),
      x.error.detail ? h('p', { class: 'small' }, x.error.detail) : null);
  }
  return null;
}

// Where the outcome was sent (X-Callback-Url) and every attempt to deliver it.
function callbackSection(cb) {
  if (!cb) return null;
  const attempts = cb.attempts || [];
  return h('section', { class: 'execution-part', data: { callback: cb.outcome || '' } },
    h('h3', {}, 'Callback'),
    h('p', {}, 'Sent to ', h('code', {}, cb.url), ' · ', outcomeBadge(cb.outcome)),
    attempts.length
      ? table('Callback attempts', [{ label: 'Attempt', num: true }, 'Time', { label: 'Status code', num: true }, 'Outcome', 'Error'],
        attempts.map((a) => h('tr', { data: { attempt: String(a.attempt) } },
          h('td', { class: 'num' }, String(a.attempt)),
          h('td', {}, whenPrecise(a.attempted_at)),
          h('td', { class: 'num' }, a.status_code === null || a.status_code === undefined ? '—' : String(a.status_code)),
          h('td', {}, outcomeBadge(a.outcome)),
          h('td', {}, a.error || '—'))))
      : h('p', { class: 'muted small' }, cb.outcome === 'pending'
        ? 'No attempt yet: the outcome is posted once the execution has finished.'
        : 'No delivery attempts were recorded.'));
}

// The execution's detail (GET /executions/{id}) in `box`, kept current: read again every few
// seconds while it is queued or running, or its callback is pending, and `box` is on the page;
// at once after Cancel or Refresh. A change of status is announced. `fallback` is its list row,
// for what the detail lacks; `showTool` names the tool (the detail opened by ID has no row
// beside it).
function executionView(box, id, { fallback = {}, showTool = false } = {}) {
  let timer = null;
  let shown = '';  // the document on display, to leave an unchanged view alone
  let shownStatus = null;
  const path = `/executions/${encodeURIComponent(id)}`;

  async function cancel(button) {
    button.disabled = true;
    try {
      const answer = await api('POST', `${path}/cancel`);
      toast(answer?.status === 'cancelled'
        ? 'The execution is cancelled: it never ran and nothing is charged.'
        : 'The execution is being stopped: it ends cancelled, charged for the time it ran.');
    } catch (error) {
      // 409: it finished meanwhile; the view below shows how.
      toast(error.detail || error.message);
    }
    await load();
  }

  function content(x) {
    const status = x.status;
    const running = status && !FINAL.has(status);
    const recorded = 'status_code' in x || 'hops' in x;
    const actions = [];
    if (running && x.async) {
      const cancelButton = h('button', { type: 'button', class: 'small danger', data: { action: 'cancel' }, aria: { label: `Cancel execution ${x.execution_id}` } }, 'Cancel');
      cancelButton.addEventListener('click', () => cancel(cancelButton));
      if (!x.cancel_requested) actions.push(cancelButton);
    }
    if (running) {
      const refresh = h('button', { type: 'button', class: 'small', data: { action: 'refresh' } }, 'Refresh');
      refresh.addEventListener('click', () => load());
      actions.push(refresh);
    }
    return [
      h('dl', { class: 'facts' },
        h('dt', {}, 'Execution ID'), h('dd', {}, h('span', { class: 'id-line' }, h('code', {}, x.execution_id), showTool ? copyButton(() => x.execution_id, 'execution ID') : null)),
        status ? [h('dt', {}, 'Status'), h('dd', { data: { status } }, executionStatusBadge(status),
          x.cancel_requested && running ? ' cancel requested: its sandbox is being stopped' : '')] : null,
        'async' in x ? [h('dt', {}, 'Call'), h('dd', {}, x.async ? 'Asynchronous' : 'Synchronous')] : null,
        showTool ? [h('dt', {}, 'Tool'), h('dd', {}, functionLink(x.function_id), ' ', x.version || '')] : null,
        recorded || x.trace_id ? [h('dt', {}, 'Trace ID'), h('dd', {}, x.trace_id ? h('code', {}, x.trace_id) : '—')] : null,
        x.client_name || fallback.client_name ? [h('dt', {}, 'Connected app'), h('dd', {}, x.client_name || fallback.client_name)] : null,
        showTool ? [h('dt', {}, 'Created'), h('dd', {}, whenPrecise(x.created_at))] : null,
        'started_at' in x ? [h('dt', {}, 'Started'), h('dd', {}, whenPrecise(x.started_at))] : null,
        'finished_at' in x ? [h('dt', {}, 'Finished'), h('dd', {}, whenPrecise(x.finished_at))] : null,
        x.cost ? [h('dt', {}, 'Cost'), h('dd', {}, `compute ${usd(x.cost.compute_micro_usd)} + function ${usd(x.cost.function_micro_usd)} = ${usd(x.cost.total_micro_usd)}`)] : null),
      actions.length ? h('div', { class: 'row' }, actions) : null,
      running ? h('p', { class: 'muted small' }, 'Its result, stages and logs are shown once it finishes; this view updates by itself.') : null,
      outcomeSection(x),
      callbackSection(x.callback),
      recorded ? [h('h3', {}, 'Stages'), hopsTable(x.hops),
        'logs' in x
          ? [h('h3', {}, 'Logs'), x.logs ? h('pre', { class: 'wrap logs' }, h('code', {}, x.logs)) : h('p', { class: 'muted' }, 'The handler wrote nothing.')]
          : h('p', { class: 'muted small' }, 'Logs are shown only to the organization that owns the tool.')] : null,
    ];
  }

  async function load() {
    clearTimeout(timer);
    let x;
    try {
      x = await api('GET', path);
    } catch (error) {
      // An id that names nothing stays so; anything else may pass (Try again).
      const retry = error.status === 404 ? null : () => { replace(box, skeleton('Loading the execution', 3)); load(); };
      if (box.isConnected) replace(box, errorNotice(error, retry));
      return;
    }
    if (!box.isConnected) return;  // closed, or the page was left
    const text = JSON.stringify(x);
    if (text !== shown) {
      shown = text;
      // Keyboard focus stays on the same button across a refresh.
      const focused = box.contains(document.activeElement) ? document.activeElement.dataset.action : null;
      replace(box, content(x));
      if (focused) box.querySelector(`[data-action="${focused}"]`)?.focus();
      if (shownStatus !== null && x.status !== shownStatus) toast(`Execution ${x.execution_id} is ${(STATUS[x.status]?.text || x.status).toLowerCase()}.`);
      shownStatus = x.status;
    }
    const again = x.status && !FINAL.has(x.status) ? REFRESH_MS : x.callback?.outcome === 'pending' ? CALLBACK_REFRESH_MS : 0;
    if (again) timer = setTimeout(() => { if (box.isConnected) load(); }, again);
  }

  return load();
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
    await executionView(cell, e.execution_id, { fallback: e });
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

  // Open an execution by its ID: an asynchronous call is not in the list while it is queued or
  // running. ?execution=ID opens one when the page loads (a link to it, or a reload).
  const openId = query.get('execution') || '';
  const idInput = h('input', { type: 'text', required: true, autocomplete: 'off', spellcheck: 'false', value: openId, maxlength: '100' });
  const openForm = h('form', { class: 'panel', novalidate: true, aria: { label: 'Open an execution' } },
    h('div', { class: 'row' },
      field('Execution ID', idInput, { name: 'execution_id', hint: 'The execution_id of a call, such as an asynchronous one (Prefer: respond-async), which is listed below only once it has finished.' }),
      h('button', { type: 'submit', class: 'primary' }, 'Open')));
  const opened = h('section', { class: 'panel', hidden: true, aria: { label: 'Execution' }, data: { openedExecution: '' } });

  function open(id) {
    opened.hidden = false;
    opened.dataset.openedExecution = id;
    const body = h('div', {}, skeleton('Loading the execution', 3));
    replace(opened, h('h2', {}, 'Execution'), body);
    executionView(body, id, { showTool: true });
  }
  openForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    clearErrors(openForm);
    const id = idInput.value.trim();
    if (!id) {
      fieldError(openForm, 'execution_id', 'is required');
      idInput.focus();
      return;
    }
    // The address names it, so that a reload or a shared link opens it again.
    window.history.replaceState({}, '', `/executions${qs({ function_id: functionId, execution: id })}`);
    open(id);
  });

  replace(container,
    h('h1', {}, 'Executions'),
    h('p', { class: 'muted' }, 'Every run by your organization, newest first: status, runtime, memory, compute type and cost. A run a connected app made says which, such as “via Claude”.'),
    openForm, opened,
    functionId ? h('p', {}, 'Showing one tool: ', functionLink(functionId), ' · ', h('a', { href: '/executions' }, 'Show all')) : null,
    listBox, more);
  if (openId) open(openId);
  await load(false);
}
