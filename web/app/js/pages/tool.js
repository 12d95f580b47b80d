// A tool's detail page: what it does and costs, its versions and usage, the tool ID, ratings,
// Add to workspace, and the tabs Overview, Integrate (snippets), Try it (run with the session)
// and Reviews.

import { ApiError, api, invokeWithSession, query as qs } from '../api.js';
import { field, h, replace, select, uid } from '../dom.js';
import { count, day, egressSummary, prettyJson, price, runtimeName, usd, when } from '../format.js';
import { busy, clearErrors, errorNotice, fieldError, showOk, showProblem } from '../forms.js';
import { renderMarkdown } from '../markdown.js';
import { schemaForm } from '../schema_form.js';
import {
  copyButton, emptyState, envKeysHeader, heartButton, publisherLink, ratingBadge, secretChooser, setPageTitle, tabs, weekQuality,
} from '../components.js';
import { navigate, requireLogin, session } from '../state.js';

const TABS = [
  { id: 'overview', title: 'Overview' },
  { id: 'integrate', title: 'Integrate' },
  { id: 'try', title: 'Try it' },
  { id: 'reviews', title: 'Reviews' },
];

// Everything the page needs about the viewer; nulls when signed out.
async function loadViewer(functionId) {
  if (!session.me) return { workspace: null, favorites: null, secrets: null };
  const [workspace, favorites, secrets] = await Promise.all([
    api('GET', '/workspace/tools').catch(() => null),
    api('GET', '/favorites?limit=200').catch(() => null),
    api('GET', '/secrets?limit=200').catch(() => null),
  ]);
  return {
    workspace,
    favorite: favorites ? (favorites.items || []).some((c) => c.function_id === functionId) : false,
    secrets: secrets ? secrets.items || [] : null,
  };
}

// "Latest (1.2.0)", then every version, a deprecated one marked so.
function versionOptions(detail) {
  return [{ value: '', label: detail.latest_version ? `Latest (${detail.latest_version})` : 'Latest' },
    ...(detail.versions || []).map((v) => ({ value: v.version, label: v.deprecated ? `${v.version} (deprecated)` : v.version }))];
}

// "12 runs · 91.6% succeeded · p50 under 8 ms", measured over the last 7 days.
function weekSummary(week) {
  if (!week || !week.executions) return 'No runs';
  return [count(week.executions, 'run'), weekQuality(week)].filter(Boolean).join(' · ');
}

export async function render(container, { params, query }) {
  const [functionId] = params;
  let detail;
  try {
    detail = await api('GET', `/functions/${encodeURIComponent(functionId)}`);
  } catch (error) {
    if (error.status === 404) {
      setPageTitle('Tool not found');
      replace(container, h('h1', {}, 'Tool not found'),
        h('p', {}, 'No tool has this ID, or it is private to another organization. '), h('a', { href: '/' }, 'Back to the marketplace'));
      return;
    }
    throw error;
  }
  setPageTitle(detail.name);
  const viewer = await loadViewer(functionId);
  const owned = Boolean(session.me && detail.organization?.id === session.me.organization.id);
  const added = Boolean(viewer.workspace && (viewer.workspace.added || []).some((t) => t.function_id === functionId));

  const workspaceBox = h('div', { class: 'actions' });
  function renderWorkspaceActions(isAdded) {
    if (owned) {
      // Deleting asks once more, in the page (no browser dialog), and says what stays.
      const remove = h('button', { type: 'button', class: 'small danger' }, 'Delete tool');
      const confirmBox = h('div', { class: 'notice warn', role: 'alert', hidden: true });
      remove.addEventListener('click', () => {
        const really = h('button', { type: 'button', class: 'danger' }, 'Delete for good');
        const cancel = h('button', { type: 'button' }, 'Cancel');
        cancel.addEventListener('click', () => { confirmBox.hidden = true; remove.focus(); });
        really.addEventListener('click', async () => {
          really.disabled = true;
          try {
            await api('DELETE', `/functions/${encodeURIComponent(functionId)}`);
            navigate('/my-tools');
          } catch (error) {
            replace(confirmBox, errorNotice(error));
          }
        });
        replace(confirmBox,
          h('p', {}, `Delete ${detail.name} with all its versions? Calls to it will fail from now on. `
            + 'The executions and charges of past calls stay on record.'),
          h('div', { class: 'row' }, really, cancel));
        confirmBox.hidden = false;
        cancel.focus();
      });
      replace(workspaceBox,
        h('span', { class: 'badge ok' }, 'Your organization owns this tool'),
        h('a', { class: 'button', href: `/publish/${functionId}` }, 'Publish a version'),
        h('a', { class: 'button', href: `/publish/${functionId}/listing` }, 'Edit listing'),
        remove, confirmBox);
      return;
    }
    if (isAdded) {
      const remove = h('button', { type: 'button', class: 'small' }, 'Remove from workspace');
      remove.addEventListener('click', async () => {
        remove.disabled = true;
        try {
          await api('DELETE', `/workspace/tools/${encodeURIComponent(functionId)}`);
          renderWorkspaceActions(false);
        } catch (error) {
          remove.disabled = false;
          replace(workspaceBox, errorNotice(error));
        }
      });
      replace(workspaceBox, h('span', { class: 'badge ok', role: 'status' }, 'In your workspace'), remove);
      return;
    }
    const add = h('button', { type: 'button', class: 'primary' }, 'Add to workspace');
    add.addEventListener('click', async () => {
      if (!session.me) {
        requireLogin();
        return;
      }
      add.disabled = true;
      try {
        await addToWorkspace(functionId);
        renderWorkspaceActions(true);
      } catch (error) {
        add.disabled = false;
        workspaceBox.append(errorNotice(error));
      }
    });
    replace(workspaceBox, add);
  }
  renderWorkspaceActions(added);

  // Kept current when the publisher unpublishes a version in the Overview's table.
  const latestFact = h('dd', { data: { stat: 'latest-version' } }, detail.latest_version || 'none published yet');
  const versionsChanged = () => replace(latestFact, detail.latest_version || 'none published yet');
  const facts = h('dl', { class: 'facts' },
    h('dt', {}, 'Tool ID'),
    h('dd', {}, h('span', { class: 'id-line' }, h('code', { class: 'tool-id' }, detail.function_id), copyButton(() => detail.function_id, 'tool ID'))),
    h('dt', {}, 'Price per execution'), h('dd', {}, detail.price_micro_usd ? `${usd(detail.price_micro_usd)} + compute` : 'Free (you pay compute only)'),
    h('dt', {}, 'Runtime'), h('dd', {}, runtimeName(detail.runtime)),
    h('dt', {}, 'Compute type'), h('dd', {}, detail.compute_type || '—'),
    h('dt', {}, 'Latest version'), latestFact,
    h('dt', {}, 'Limits'), h('dd', {}, detail.timeout_ms ? `${detail.timeout_ms.toLocaleString('en-US')} ms timeout, ${detail.memory_mb} MB memory` : '—'),
    detail.latest_version ? [h('dt', {}, 'Permissions'), h('dd', { data: { stat: 'egress' } }, egressSummary(detail.egress))] : null,
    detail.bundle ? [h('dt', {}, 'Code'), h('dd', {}, `Bundle of ${count(detail.bundle.files, 'file')}, entry ${detail.handler}`)] : null,
    h('dt', {}, 'Creator'), h('dd', {}, detail.organization?.name || '—'),
    h('dt', {}, 'Category'), h('dd', {}, [detail.category, detail.sector].filter(Boolean).join(' · ') || '—'),
    detail.tags?.length ? [h('dt', {}, 'Tags'), h('dd', {}, detail.tags.join(', '))] : null,
    h('dt', {}, 'Rating'), h('dd', {}, ratingBadge(detail.rating)),
    h('dt', {}, 'Executions'), h('dd', {}, count(detail.executions, 'run')),
    h('dt', {}, 'Last 7 days'), h('dd', { data: { stat: 'week' } }, weekSummary(detail.last_7_days)));

  const tab = query.get('tab') || 'overview';
  const tabPanels = tabs('Tool sections', TABS, tab, (id, panel) => {
    const url = new URL(window.location.href);
    if (id === 'overview') url.searchParams.delete('tab'); else url.searchParams.set('tab', id);
    window.history.replaceState({}, '', url.pathname + url.search);
    if (id === 'overview') renderOverview(panel, detail, owned, versionsChanged);
    else if (id === 'integrate') renderIntegrate(panel, detail, viewer);
    else if (id === 'try') renderTryIt(panel, detail, viewer, owned, () => renderWorkspaceActions(true));
    else renderReviews(panel, detail, owned);
  });

  replace(container,
    h('nav', { aria: { label: 'Breadcrumb' }, class: 'small' }, h('a', { href: '/' }, 'Marketplace'), ' › ', detail.name),
    h('div', { class: 'detail-head' },
      h('div', {},
        h('div', { class: 'row' }, h('h1', {}, detail.name), session.me ? heartButton(functionId, detail.name, viewer.favorite) : null),
        h('p', { class: 'muted' }, 'by ', publisherLink(detail.organization)),
        h('p', {}, detail.description),
        h('div', { class: 'badges' },
          h('span', { class: 'badge' }, runtimeName(detail.runtime)),
          detail.compute_type ? h('span', { class: 'badge' }, detail.compute_type) : null,
          h('span', { class: `badge ${detail.price_micro_usd ? 'accent' : 'ok'}` }, detail.price_micro_usd ? `${price(detail.price_micro_usd)} / run` : 'Free'),
          detail.mcp ? h('span', { class: 'badge accent' }, 'MCP') : null,
          detail.visibility === 'private' ? h('span', { class: 'badge' }, 'Private') : null)),
      workspaceBox),
    h('section', { class: 'panel', aria: { label: 'Facts' } }, facts),
    tabPanels);
}

async function addToWorkspace(functionId) {
  try {
    await api('POST', '/workspace/tools', { body: { function_id: functionId } });
  } catch (error) {
    if (error.status !== 409) throw error;  // already added
  }
}

function renderOverview(panel, detail, owned, versionsChanged) {
  const examples = Array.isArray(detail.examples) ? detail.examples : [];
  const keys = detail.declared_keys || [];
  replace(panel,
    h('h2', {}, 'Overview'),
    renderMarkdown(detail.overview || detail.description || ''),
    h('h2', {}, 'Usage'),
    h('p', {}, 'Call ', h('code', {}, `POST /api/v1/functions/${detail.function_id}/{version}/invoke`),
      ' with your API key in the ', h('code', {}, 'Authorization'), ' header and a JSON body ', h('code', {}, '{"event": {...}}'),
      '. The Integrate tab has complete snippets.'),
    h('h3', {}, 'Input schema'),
    detail.input_schema ? h('pre', {}, h('code', {}, prettyJson(detail.input_schema))) : h('p', { class: 'muted' }, 'None given.'),
    h('h3', {}, 'Declared keys'),
    keys.length
      ? [h('p', {}, 'This tool needs secrets of yours. Map each key to the id of one of your secrets in the ', h('code', {}, 'X-Env-Keys'), ' header:'),
        h('ul', {}, keys.map((k) => h('li', {}, h('code', {}, k))))]
      : h('p', { class: 'muted' }, 'None: omit the X-Env-Keys header.'),
    h('h3', {}, 'Examples'),
    examples.length
      ? examples.map((ex) => h('div', { class: 'example' }, h('p', {}, h('strong', {}, ex.title || 'Example')), h('pre', {}, h('code', {}, prettyJson(ex.event)))))
      : h('p', { class: 'muted' }, 'None given.'),
    h('h3', {}, 'Versions'),
    versionsTable(detail, owned, versionsChanged));
}

// The published versions; an owner may deprecate (it still runs, marked) or unpublish (gone for
// good, its number never reused) each one; the table is read again afterwards, and
// versionsChanged() runs once detail holds the new versions.
function versionsTable(detail, owned, versionsChanged) {
  const box = h('div', {});
  const status = h('div', { role: 'status' });
  async function reload() {
    const fresh = await api('GET', `/functions/${encodeURIComponent(detail.function_id)}`);
    detail.versions = fresh.versions;
    detail.latest_version = fresh.latest_version;
    draw();
    versionsChanged();
  }
  async function act(button, method, version, body, done) {
    button.disabled = true;
    try {
      await api(method, `/functions/${encodeURIComponent(detail.function_id)}/versions/${encodeURIComponent(version)}`, body ? { body } : {});
      await reload();
      replace(status, h('p', { class: 'notice ok' }, done));
    } catch (error) {
      button.disabled = false;
      replace(status, errorNotice(error));
    }
  }
  function actions(v) {
    const deprecate = h('button', { type: 'button', class: 'small', aria: { label: `${v.deprecated ? 'Undeprecate' : 'Deprecate'} version ${v.version}` } },
      v.deprecated ? 'Undeprecate' : 'Deprecate');
    deprecate.addEventListener('click', () => act(deprecate, 'PATCH', v.version, { deprecated: !v.deprecated },
      `Version ${v.version} ${v.deprecated ? 'is no longer deprecated' : 'is deprecated; it still runs for callers pinned to it'}.`));
    // Unpublishing asks once more, in the page, and says what it means.
    const unpublish = h('button', { type: 'button', class: 'small danger', aria: { label: `Unpublish version ${v.version}` } }, 'Unpublish');
    unpublish.addEventListener('click', () => {
      const really = h('button', { type: 'button', class: 'danger' }, `Unpublish ${v.version} for good`);
      const cancel = h('button', { type: 'button' }, 'Cancel');
      cancel.addEventListener('click', () => { replace(status); unpublish.focus(); });
      really.addEventListener('click', () => act(really, 'DELETE', v.version, null, `Version ${v.version} is unpublished.`));
      replace(status, h('div', { class: 'notice warn', role: 'alert' },
        h('p', {}, `Unpublish version ${v.version}? Calls pinned to it will fail, and the number can never be published again. `
          + 'The executions and charges of past calls stay on record.'),
        h('div', { class: 'row' }, really, cancel)));
      cancel.focus();
    });
    return h('td', {}, h('div', { class: 'row' }, deprecate, unpublish));
  }
  function draw() {
    const versions = detail.versions || [];
    if (!versions.length) {
      replace(box, h('p', { class: 'muted' }, 'No version is published yet.'), status);
      return;
    }
    const headings = ['Version', 'Runtime', 'Compute type', 'Price', 'Published', ...(owned ? ['Actions'] : [])];
    replace(box,
      h('div', { class: 'table-wrap', tabindex: '0', role: 'region', aria: { label: 'Versions' } }, h('table', {},
        h('thead', {}, h('tr', {}, headings.map((t) => h('th', { scope: 'col' }, t)))),
        // A version keeps the price it was published with: callers pinned to it pay that.
        h('tbody', {}, versions.map((v) => h('tr', { data: { version: v.version } },
          h('td', {}, v.version, v.deprecated ? [' ', h('span', { class: 'badge warn' }, 'Deprecated')] : null),
          h('td', {}, runtimeName(v.runtime)), h('td', {}, v.compute_type),
          h('td', {}, Number(v.price_micro_usd) ? usd(v.price_micro_usd) : 'Free'), h('td', {}, day(v.published_at)),
          owned ? actions(v) : null))))),
      status);
  }
  draw();
  return box;
}

// The declared key names of a snippet ("NAME=<secret_id>" pairs).
function keysInSnippet(text) {
  return Array.from(new Set(Array.from(String(text).matchAll(/([A-Za-z_][A-Za-z0-9_]*)=<secret_id>/g), (m) => m[1])));
}

function fillSecrets(text, mapping) {
  return String(text).replace(/([A-Za-z_][A-Za-z0-9_]*)=<secret_id>/g, (all, key) => (mapping[key] ? `${key}=${mapping[key]}` : all));
}

function renderIntegrate(panel, detail, viewer) {
  const versionSelect = select(versionOptions(detail), '', { id: uid('f') });
  const chooserBox = h('div', {});
  const snippetsBox = h('div', { aria: { live: 'polite' } });
  let snippets = null;
  let mapping = {};

  function show() {
    if (!snippets) return;
    const blocks = [['curl', 'cURL'], ['python', 'Python'], ['javascript', 'JavaScript']];
    replace(snippetsBox, blocks.filter(([k]) => snippets[k]).map(([k, label]) => {
      const text = () => fillSecrets(snippets[k], mapping);
      const headingId = uid('snip');
      return h('section', { class: 'snippet', aria: { labelledby: headingId }, data: { snippet: k } },
        h('div', { class: 'row spread' }, h('h3', { id: headingId }, label), copyButton(text, `${label} snippet`)),
        h('pre', {}, h('code', {}, text())));
    }));
  }

  async function load() {
    replace(snippetsBox, h('p', { class: 'loading' }, 'Loading snippets…'));
    try {
      snippets = await api('GET', `/functions/${encodeURIComponent(detail.function_id)}/snippets${qs({ version: versionSelect.value })}`);
    } catch (error) {
      snippets = null;
      replace(snippetsBox, errorNotice(error));
      return;
    }
    const keys = keysInSnippet(snippets.curl || '');
    const chooser = secretChooser(keys, viewer.secrets, (m) => { mapping = m; show(); });
    mapping = chooser.mapping;
    replace(chooserBox, chooser.element);
    show();
  }
  versionSelect.addEventListener('change', load);

  // MCP clients connect to Toolgate directly (docs/mcp.md): the tool's own endpoint for an MCP
  // tool, and the workspace endpoint, which lists every tool the organization owns or added.
  const mcpUrl = () => `${window.location.origin}/mcp/functions/${detail.function_id}` +
    (versionSelect.value ? `/${versionSelect.value}` : '');
  const mcpBox = h('section', { class: 'snippet', data: { snippet: 'mcp' } },
    h('div', { class: 'row spread' }, h('h3', {}, 'MCP endpoint'),
      copyButton(() => detail.mcp ? mcpUrl() : `${window.location.origin}/mcp`, 'MCP URL')),
    h('pre', {}, h('code', { class: 'mcp-url' }, detail.mcp ? mcpUrl() : `${window.location.origin}/mcp`)),
    h('p', { class: 'muted' }, detail.mcp
      ? 'Streamable HTTP; send your key as Authorization. Your workspace endpoint /mcp lists this tool too.'
      : 'Streamable HTTP; once added to your workspace, this tool is listed by your workspace endpoint.'));
  versionSelect.addEventListener('change', () => {
    const code = mcpBox.querySelector('.mcp-url');
    if (detail.mcp && code) code.textContent = mcpUrl();
  });

  replace(panel,
    h('h2', {}, 'Integrate'),
    h('p', {}, 'Copy a complete call. Replace ', h('code', {}, '<API_KEY>'), ' with one of your keys (',
      h('a', { href: '/settings/keys' }, 'Settings → API keys'), '); keep keys out of client-side code and version control.'),
    h('div', { class: 'grid-2' }, h('div', { class: 'field' }, h('label', { for: versionSelect.id }, 'Version'), versionSelect)),
    chooserBox,
    snippetsBox,
    mcpBox);
  load();
}

function renderTryIt(panel, detail, viewer, owned, onAdded) {
  if (!session.me) {
    replace(panel, h('h2', {}, 'Try it'),
      h('p', {}, h('a', { href: `/login?next=${encodeURIComponent(`/tools/${detail.function_id}?tab=try`)}` }, 'Log in'), ' to run this tool with your organization’s balance.'));
    return;
  }
  if (!detail.latest_version) {
    replace(panel, h('h2', {}, 'Try it'), emptyState('No version is published yet.'));
    return;
  }
  const examples = Array.isArray(detail.examples) ? detail.examples : [];
  const versionSelect = select(versionOptions(detail), '', { name: 'version' });
  const eventArea = h('textarea', { name: 'event', rows: '10', spellcheck: 'false' });
  eventArea.value = examples.length ? prettyJson(examples[0].event) : '{}';
  // The fields of the input schema, with raw JSON one click away; raw JSON only when the schema
  // names no properties.
  const fields = schemaForm(detail.input_schema);
  const rawField = field('Event (JSON)', eventArea, { name: 'event', hint: 'The input payload; its shape is given by the input schema on the Overview tab.' });
  const rawToggle = h('input', { type: 'checkbox', name: 'raw' });
  let raw = !fields;
  function showMode() {
    rawField.hidden = !raw;
    if (fields) fields.element.hidden = raw;
  }
  if (fields) {
    fields.write(examples.length ? examples[0].event : {});
    rawToggle.addEventListener('change', () => {
      clearErrors(form);
      if (rawToggle.checked) {
        eventArea.value = prettyJson(fields.read().event);
      } else {
        try {
          fields.write(JSON.parse(eventArea.value));
        } catch (err) {
          rawToggle.checked = true;
          fieldError(form, 'event', `is not valid JSON (${err.message})`);
          return;
        }
      }
      raw = rawToggle.checked;
      showMode();
    });
  }
  showMode();
  const exampleSelect = examples.length > 1
    ? select(examples.map((ex, i) => ({ value: String(i), label: ex.title || `Example ${i + 1}` })), '0', { name: 'example' })
    : null;
  if (exampleSelect) {
    exampleSelect.addEventListener('change', () => {
      const event = examples[Number(exampleSelect.value)].event;
      eventArea.value = prettyJson(event);
      if (fields) fields.write(event);
    });
  }
  let mapping = {};
  const chooser = secretChooser(detail.declared_keys || [], viewer.secrets, (m) => { mapping = m; });
  mapping = chooser.mapping;

  const output = h('div', { class: 'try-output', aria: { live: 'polite' } });
  const form = h('form', { novalidate: true, aria: { label: 'Try it' } },
    h('div', { class: 'grid-2' },
      field('Version', versionSelect, { name: 'version' }),
      exampleSelect ? field('Example', exampleSelect, { name: 'example' }) : h('div')),
    fields ? h('label', { class: 'toggle' }, rawToggle, ' Edit the event as raw JSON') : null,
    fields ? fields.element : null,
    rawField,
    chooser.element,
    h('p', { class: 'small muted' }, owned
      ? 'Runs with your session. Your organization owns this tool, so you pay compute only.'
      : `Runs with your session and is billed like any call: ${detail.price_micro_usd ? `compute plus the ${usd(detail.price_micro_usd)} function fee` : 'compute only, the tool is free'}.`),
    h('button', { type: 'submit', class: 'primary' }, 'Run'));

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    clearErrors(form);
    let event;
    if (raw) {
      try {
        event = JSON.parse(eventArea.value);
      } catch (err) {
        fieldError(form, 'event', `is not valid JSON (${err.message})`);
        eventArea.focus();
        return;
      }
    } else {
      const read = fields.read();
      if (read.problems.length) {
        for (const p of read.problems) fieldError(form, p.name, p.message);
        form.querySelector('[aria-invalid="true"]')?.focus();
        return;
      }
      event = read.event;
    }
    busy(form, async () => {
      replace(output, h('p', { class: 'loading' }, 'Running…'));
      try {
        const env = Object.keys(mapping).length ? envKeysHeader(mapping) : '';
        const answer = await invokeWithSession(detail.function_id, versionSelect.value, event, env);
        showInvokeResult(output, answer, detail, async () => {
          await addToWorkspace(detail.function_id);
          onAdded();
          form.requestSubmit();
        });
      } catch (error) {
        replace(output, errorNotice(error));
      }
    });
  });

  replace(panel, h('h2', {}, 'Try it'), form, output);
}

// For a 402 budget_exceeded: which limit stopped the call and when it resets, from the detail
// (it names the limit and the reset time, RFC 3339) and Retry-After (the seconds until then).
function budgetResetLine(problem, headers) {
  const named = /resets at (\d{4}-\d{2}-\d{2}T[\d:.]+Z)/.exec(problem.detail || '');
  const retryAfter = Number(headers?.get('Retry-After'));
  const at = named ? new Date(named[1]) : Number.isFinite(retryAfter) && retryAfter > 0 ? new Date(Date.now() + retryAfter * 1000) : null;
  const limit = /^(This API key's|Your organization's) (daily|monthly) spending limit of (\S+)/.exec(problem.detail || '');
  const whose = limit ? (limit[1].startsWith('This API key') ? 'this API key’s' : 'your organization’s') : 'a';
  return h('p', { data: { budget: 'reset' } },
    h('strong', {}, `Stopped by ${whose} ${limit ? `${limit[2]} ` : ''}spending limit${limit ? ` of ${limit[3]}` : ''}. `),
    at && !Number.isNaN(at.getTime()) ? `It resets at ${when(at.toISOString())}; nothing was charged.` : 'Nothing was charged.');
}

// Renders an invoke answer: the handler's result with its summary, or a platform problem.
function showInvokeResult(output, answer, detail, addAndRetry) {
  const { httpStatus, data } = answer;
  const isResult = data && typeof data === 'object' && 'statusCode' in data && 'summary' in data;
  if (!isResult) {
    const problem = new ApiError(httpStatus, data);
    const actions = [];
    if (problem.code === 'function_not_added') {
      const add = h('button', { type: 'button', class: 'primary' }, 'Add to workspace and run');
      add.addEventListener('click', () => { add.disabled = true; addAndRetry(); });
      actions.push(add);
    } else if (problem.code === 'insufficient_balance') {
      actions.push(h('a', { class: 'button', href: '/settings/billing' }, 'Top up your balance'));
    } else if (problem.code === 'budget_exceeded') {
      actions.push(h('a', { class: 'button', href: problem.detail.startsWith('This API key') ? '/settings/keys' : '/settings/billing' }, 'Review spending limits'));
    } else if (problem.code === 'not_authenticated') {
      actions.push(h('button', { type: 'button', on: { click: () => requireLogin() } }, 'Log in again'));
    }
    replace(output, h('div', { class: 'notice error', role: 'alert', data: { result: 'problem', code: problem.code } },
      h('strong', {}, `HTTP ${httpStatus} · ${problem.title}`),
      problem.detail ? h('p', { class: 'small' }, problem.detail) : null,
      problem.code === 'budget_exceeded' ? budgetResetLine(problem, answer.headers) : null,
      problem.errors.length ? h('ul', {}, problem.errors.map((e) => h('li', {}, `${e.field}: ${e.message}`))) : null,
      actions.length ? h('div', { class: 'row' }, actions) : null));
    return;
  }
  const s = data.summary || {};
  const cost = s.cost || {};
  const ok = data.statusCode >= 200 && data.statusCode < 300;
  replace(output, h('section', { class: 'panel', aria: { label: 'Result' }, data: { result: 'handler' } },
    h('div', { class: 'result-head' },
      h('h3', {}, 'Result'),
      h('span', { class: `badge ${ok ? 'ok' : 'danger'}` }, `Status ${data.statusCode}`)),
    h('h4', {}, 'Body'),
    h('pre', { class: 'wrap' }, h('code', {}, prettyJson(data.body))),
    h('h4', {}, 'Summary'),
    h('dl', { class: 'facts summary' },
      h('dt', {}, 'Runtime'), h('dd', {}, `${s.runtime_ms} ms`),
      h('dt', {}, 'Memory used'), h('dd', {}, `${s.memory_used_mb} MB`),
      h('dt', {}, 'Compute type'), h('dd', {}, s.compute_type || '—'),
      h('dt', {}, 'Cost'), h('dd', {}, `${usd(cost.total_micro_usd)} (compute ${usd(cost.compute_micro_usd)}, function ${usd(cost.function_micro_usd)})`),
      h('dt', {}, 'Execution'), h('dd', {}, h('a', { href: `/executions?function_id=${encodeURIComponent(detail.function_id)}` }, h('code', {}, s.execution_id || '—'))))));
}

async function renderReviews(panel, detail, owned) {
  replace(panel, h('h2', {}, 'Rating and reviews'), h('p', {}, ratingBadge(detail.rating)), h('p', { class: 'loading' }, 'Loading reviews…'));
  let items = [];
  let loadError = null;
  try {
    items = (await api('GET', `/functions/${encodeURIComponent(detail.function_id)}/ratings?limit=50`)).items || [];
  } catch (error) {
    loadError = error;
  }
  const list = loadError ? errorNotice(loadError) : items.length
    ? h('div', { class: 'reviews' }, items.map((r) => h('article', { class: 'review' },
      h('p', {}, h('span', { class: 'stars', aria: { hidden: 'true' } }, '★'.repeat(r.stars) + '☆'.repeat(5 - r.stars)),
        h('span', { class: 'sr-only' }, `${r.stars} of 5 stars`), ' ',
        h('strong', {}, r.organization?.name || 'A user'), r.user ? ' (you)' : '', ' ',
        h('span', { class: 'muted small' }, when(r.updated_at || r.created_at))),
      r.review ? h('p', {}, r.review) : null)))
    : emptyState('No reviews yet.');

  let form = null;
  if (session.me && !owned) {
    const starsBox = h('fieldset', { data: { field: 'stars' } }, h('legend', {}, 'Stars'),
      [5, 4, 3, 2, 1].map((n) => h('label', { class: 'choice' }, h('input', { type: 'radio', name: 'stars', value: String(n) }), `${n} star${n === 1 ? '' : 's'}`)));
    const review = h('textarea', { name: 'review', rows: '4', maxlength: '2000' });
    const mine = items.find((r) => r.user);  // the API marks the viewer's own rating
    if (mine) {
      review.value = mine.review || '';
      starsBox.querySelector(`input[value="${mine.stars}"]`).checked = true;
    }
    form = h('form', { class: 'panel', novalidate: true, aria: { label: 'Rate this tool' } },
      h('h3', {}, mine ? 'Change your rating' : 'Rate this tool'),
      h('p', { class: 'small muted' }, 'Organizations that have run a tool can rate it; you can change your rating later.'),
      starsBox,
      field('Review (optional)', review, { name: 'review' }),
      h('button', { type: 'submit', class: 'primary' }, 'Save rating'));
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const chosen = form.querySelector('input[name="stars"]:checked');
      busy(form, async () => {
        try {
          await api('PUT', `/functions/${encodeURIComponent(detail.function_id)}/rating`, {
            body: { stars: chosen ? Number(chosen.value) : 0, review: review.value.trim() || undefined },
          });
          showOk(form, 'Thank you: your rating is saved.');
          navigate(`/tools/${detail.function_id}?tab=reviews`, { replace: true });
        } catch (error) {
          showProblem(form, error);
        }
      });
    });
  }
  replace(panel, h('h2', {}, 'Rating and reviews'), h('p', {}, ratingBadge(detail.rating)), list, form);
}
