// Publish: create a tool (metadata, visibility, price), then publish versions of it (runtime,
// compute type, code, input schema, declared keys, limits, examples). The server's 422 field
// errors appear next to their fields.

import { api } from '../api.js';
import { field, h, replace, select, uid } from '../dom.js';
import { parseUsd, runtimeName, usd, usdInput, day } from '../format.js';
import { busy, clearErrors, fieldError, showOk, showProblem } from '../forms.js';
import { renderMarkdown } from '../markdown.js';
import { setPageTitle } from '../components.js';
import { navigate } from '../state.js';

const TEMPLATES = {
  lua: `-- Called once per invocation with the event and a context table.
function service_handler(event, context)
  local name = event.name or "world"
  return { statusCode = 200, body = { greeting = "Hello, " .. name } }
end
`,
  python: `def service_handler(event, context):
    """Called once per invocation with the event and a context dict."""
    name = event.get("name", "world")
    return {"statusCode": 200, "body": {"greeting": f"Hello, {name}"}}
`,
  javascript: `// Called once per invocation with the event and a context object. Synchronous only.
function service_handler(event, context) {
  const name = event.name || "world";
  return { statusCode: 200, body: { greeting: \`Hello, \${name}\` } };
}
if (typeof module !== "undefined") module.exports = { service_handler };
`,
};

function commaList(text) {
  return text.split(',').map((s) => s.trim()).filter(Boolean);
}

export async function renderCreate(container) {
  renderListing(container, null);
}

// The listing of a tool its organization owns: the same form, filled, saved with PATCH.
export async function renderEditListing(container, { params }) {
  const [functionId] = params;
  const detail = await api('GET', `/functions/${encodeURIComponent(functionId)}`);
  renderListing(container, detail);
}

// The form of a tool's listing: a new tool when existing is null, else existing's listing.
function renderListing(container, existing) {
  setPageTitle(existing ? `Edit the listing of ${existing.name}` : 'Publish a tool');
  const name = h('input', { type: 'text', required: true, maxlength: '100' });
  const description = h('input', { type: 'text', required: true, maxlength: '300' });
  const overview = h('textarea', { rows: '8' });
  const preview = h('div', { class: 'panel', hidden: true, aria: { label: 'Overview preview' } });
  const previewButton = h('button', { type: 'button', class: 'small', aria: { expanded: 'false' } }, 'Preview overview');
  preview.id = uid('preview');
  previewButton.setAttribute('aria-controls', preview.id);
  previewButton.addEventListener('click', () => {
    const open = preview.hidden;
    preview.hidden = !open;
    previewButton.setAttribute('aria-expanded', String(open));
    if (open) replace(preview, renderMarkdown(overview.value));
  });
  const category = h('input', { type: 'text', required: true, list: uid('categories') });
  const categories = h('datalist', { id: category.getAttribute('list') });
  const sector = h('input', { type: 'text' });
  const tags = h('input', { type: 'text' });
  const priceInput = h('input', { type: 'text', inputmode: 'decimal', value: '0' });
  const mcp = h('input', { type: 'checkbox', name: 'mcp' });
  const visibility = h('fieldset', { data: { field: 'visibility' } }, h('legend', {}, 'Visibility'),
    h('label', { class: 'choice' }, h('input', { type: 'radio', name: 'visibility', value: 'private', checked: true }), 'Private: only your organization can see and call it'),
    h('label', { class: 'choice' }, h('input', { type: 'radio', name: 'visibility', value: 'public' }), 'Public: listed in the marketplace once a version is published'));

  if (existing) {
    name.value = existing.name || '';
    description.value = existing.description || '';
    overview.value = existing.overview || '';
    category.value = existing.category || '';
    sector.value = existing.sector || '';
    tags.value = (existing.tags || []).join(', ');
    // The price new versions take; each published version keeps its own.
    priceInput.value = usdInput(existing.default_price_micro_usd ?? existing.price_micro_usd ?? 0);
    mcp.checked = Boolean(existing.mcp);
    for (const radio of visibility.querySelectorAll('input')) radio.checked = radio.value === existing.visibility;
  }
  const form = h('form', { class: 'panel', novalidate: true, aria: { label: existing ? 'Edit the listing' : 'Create a tool' } },
    h('div', { class: 'grid-2' },
      field('Name', name, { name: 'name' }),
      field('Category', category, { name: 'category', hint: 'For example Data, Utilities, AI agents.' })),
    categories,
    field('Description', description, { name: 'description', hint: 'One sentence shown on marketplace cards.' }),
    field('Overview (Markdown)', overview, { name: 'overview', hint: 'Usage documentation shown on the tool page. HTML is shown as text.' }),
    h('div', { class: 'row' }, previewButton), preview,
    h('div', { class: 'grid-2' },
      field('Sector', sector, { name: 'sector', hint: 'Optional, for example Finance or Healthcare.' }),
      field('Tags', tags, { name: 'tags', hint: 'Comma-separated, for example weather, forecast.' })),
    h('div', { class: 'grid-2' },
      field('Price per execution (USD)', priceInput, { name: 'price_micro_usd', hint: '0 for free; up to six decimals, e.g. 0.0025.' }),
      h('div', { class: 'field', data: { field: 'mcp' } }, h('span', { class: 'label' }, 'Protocol'),
        h('label', { class: 'choice' }, mcp, 'MCP server (the event is a JSON-RPC 2.0 request)'))),
    visibility,
    h('button', { type: 'submit', class: 'primary' }, existing ? 'Save listing' : 'Create tool'));

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    clearErrors(form);
    const micro = parseUsd(priceInput.value);
    if (micro === null) {
      fieldError(form, 'price_micro_usd', 'must be an amount in dollars such as 0, 0.01 or 0.0025');
      priceInput.focus();
      return;
    }
    busy(form, async () => {
      try {
        const body = {
          name: name.value.trim(),
          description: description.value.trim(),
          overview: overview.value,
          category: category.value.trim(),
          sector: sector.value.trim(),
          tags: commaList(tags.value),
          visibility: form.querySelector('input[name="visibility"]:checked').value,
          price_micro_usd: micro,
          mcp: mcp.checked,
        };
        if (existing) {
          await api('PATCH', `/functions/${encodeURIComponent(existing.function_id)}`, { body });
          await navigate(`/tools/${existing.function_id}`);
          return;
        }
        const created = await api('POST', '/functions', { body });
        await navigate(`/publish/${created.function_id}?created=1`);
      } catch (error) {
        showProblem(form, error);
      }
    });
  });

  replace(container,
    h('h1', {}, existing ? `Edit the listing of ${existing.name}` : 'Publish a tool'),
    h('p', { class: 'muted' }, existing
      ? 'What the marketplace shows, and the price new versions take (each published version keeps its own).'
      : 'Step 1 of 2: describe the tool. Next you publish its first version with the code.'),
    form);
  name.focus();
  api('GET', '/marketplace/facets').then((facets) => {
    replace(categories, (facets.category || []).map((c) => h('option', { value: c.value })));
  }).catch(() => {});
}

// "1.2.3" -> "1.2.4"; "" -> "1.0.0".
function nextVersion(latest) {
  if (!latest) return '1.0.0';
  const parts = latest.split('.').map(Number);
  parts[parts.length - 1] += 1;
  return parts.join('.');
}

// One example's editor; `example` is {title, eventText} (the event as the author typed it).
function exampleRow(index, example, onRemove) {
  const title = h('input', { type: 'text', value: example.title || '' });
  const event = h('textarea', { rows: '4', spellcheck: 'false' });
  event.value = example.eventText;
  const remove = h('button', { type: 'button', class: 'small danger', aria: { label: `Remove example ${index + 1}` } }, 'Remove');
  remove.addEventListener('click', onRemove);
  const row = h('div', { class: 'example-row', role: 'group', aria: { label: `Example ${index + 1}` } },
    field(`Example ${index + 1} title`, title, { name: `examples[${index}].title` }),
    field(`Example ${index + 1} event (JSON)`, event, { name: `examples[${index}].event` }),
    remove);
  row.read = () => ({ title: title.value.trim(), eventText: event.value });
  return row;
}

export async function renderVersion(container, { params, query }) {
  const [functionId] = params;
  const detail = await api('GET', `/functions/${encodeURIComponent(functionId)}`);
  setPageTitle(`Publish a version of ${detail.name}`);

  const version = h('input', { type: 'text', value: nextVersion(detail.latest_version), required: true });
  const runtime = select([{ value: 'lua', label: 'Lua' }, { value: 'python', label: 'Python' }, { value: 'javascript', label: 'JavaScript' }],
    detail.runtime || 'lua', { name: 'runtime' });
  const computeType = select([{ value: 'CPU', label: 'CPU' }, { value: 'GPU', label: 'GPU (Python only)' }], detail.compute_type || 'CPU', { name: 'compute_type' });
  const code = h('textarea', { class: 'code', rows: '14', spellcheck: 'false' });
  code.value = TEMPLATES[runtime.value];
  runtime.addEventListener('change', () => {
    // Swap the template only while the author has not written code of their own.
    if (Object.values(TEMPLATES).includes(code.value)) code.value = TEMPLATES[runtime.value];
  });
  const schema = h('textarea', { rows: '6', spellcheck: 'false' });
  schema.value = detail.input_schema ? JSON.stringify(detail.input_schema, null, 2)
    : JSON.stringify({ type: 'object', properties: { name: { type: 'string' } } }, null, 2);
  const declared = h('input', { type: 'text', value: (detail.declared_keys || []).join(', ') });
  const egress = h('input', { type: 'text', value: (detail.egress || []).join(', '), placeholder: 'none' });
  const timeout = h('input', { type: 'number', min: '1', max: '900000', placeholder: '30000' });
  const memory = h('input', { type: 'number', min: '1', max: '4096', placeholder: 'runtime default' });

  const examplesBox = h('div', {});
  let rows = [];
  const redrawExamples = (values) => {
    rows = values.map((ex, i) => exampleRow(i, ex, () => {
      redrawExamples(rows.map((r) => r.read()).filter((_, j) => j !== i));
    }));
    replace(examplesBox, rows);
  };
  const initial = Array.isArray(detail.examples) && detail.examples.length ? detail.examples : [{ title: 'Say hello', event: { name: 'Ada' } }];
  redrawExamples(initial.map((ex) => ({ title: ex.title, eventText: JSON.stringify(ex.event, null, 2) })));
  const addExample = h('button', { type: 'button', class: 'small' }, 'Add an example');
  addExample.addEventListener('click', () => {
    redrawExamples([...rows.map((r) => r.read()), { title: '', eventText: '{}' }]);
    rows[rows.length - 1].querySelector('input').focus();
  });

  const form = h('form', { class: 'panel', novalidate: true, aria: { label: 'Publish a version' } },
    h('div', { class: 'grid-2' },
      field('Version', version, { name: 'version', hint: 'Dot-separated numbers such as 1.0.0; published versions never change.' }),
      field('Runtime', runtime, { name: 'runtime' })),
    h('div', { class: 'grid-2' },
      field('Compute type', computeType, { name: 'compute_type' }),
      field('Declared keys', declared, { name: 'declared_keys', hint: 'Comma-separated names of secrets callers map with X-Env-Keys, e.g. WEATHER_API_KEY.' })),
    field('Network access', egress, { name: 'egress', hint: 'Comma-separated hosts the handler may connect to, e.g. api.open-meteo.com, *.example.com:8443, or * for any public host. Empty: no network.' }),
    field('Code', code, { name: 'code', hint: 'Must define service_handler(event, context).' }),
    field('Input schema (JSON Schema)', schema, { name: 'input_schema' }),
    h('div', { class: 'grid-2' },
      field('Timeout (ms)', timeout, { name: 'timeout_ms', hint: 'Default 30,000; at most 900,000.' }),
      field('Memory (MB)', memory, { name: 'memory_mb', hint: 'Default 128 (Lua, JavaScript) or 256 (Python); at most 4,096.' })),
    h('fieldset', { data: { field: 'examples' } }, h('legend', {}, 'Examples'),
      h('p', { class: 'small muted' }, 'Shown on the tool page; the first one fills the Try it editor and the snippets.'),
      examplesBox, addExample),
    h('button', { type: 'submit', class: 'primary' }, 'Publish version'));

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    clearErrors(form);
    const body = {
      version: version.value.trim(),
      runtime: runtime.value,
      compute_type: computeType.value,
      code: code.value,
      declared_keys: commaList(declared.value),
      egress: commaList(egress.value),
      examples: [],
    };
    let bad = false;
    try {
      body.input_schema = JSON.parse(schema.value);
    } catch (err) {
      fieldError(form, 'input_schema', `is not valid JSON (${err.message})`);
      bad = true;
    }
    rows.forEach((row, i) => {
      const { title, eventText } = row.read();
      try {
        body.examples.push({ title, event: JSON.parse(eventText) });
      } catch (err) {
        fieldError(form, `examples[${i}].event`, `is not valid JSON (${err.message})`);
        bad = true;
      }
    });
    if (timeout.value) body.timeout_ms = Number(timeout.value);
    if (memory.value) body.memory_mb = Number(memory.value);
    if (bad) {
      form.querySelector('[aria-invalid="true"]')?.focus();
      return;
    }
    busy(form, async () => {
      try {
        const published = await api('POST', `/functions/${encodeURIComponent(functionId)}/versions`, { body });
        showOk(form, h('strong', {}, `Version ${published.version || body.version} is published.`), ' ',
          h('a', { href: `/tools/${functionId}` }, 'View the tool'), ' · ',
          h('a', { href: `/tools/${functionId}?tab=try` }, 'Try it'));
        versionsList.replaceChildren(...versionItems(await api('GET', `/functions/${encodeURIComponent(functionId)}`)));
        version.value = nextVersion(body.version);
        form.querySelector('.form-notice').scrollIntoView({ block: 'nearest' });
      } catch (error) {
        showProblem(form, error);
      }
    });
  });

  const versionsList = h('ul', { class: 'versions' }, versionItems(detail));
  replace(container,
    h('nav', { aria: { label: 'Breadcrumb' }, class: 'small' }, h('a', { href: '/my-tools' }, 'My Tools'), ' › ',
      h('a', { href: `/tools/${functionId}` }, detail.name), ' › Publish a version'),
    h('h1', {}, `Publish a version of ${detail.name}`),
    query.get('created') ? h('div', { class: 'notice ok', role: 'status' }, `${detail.name} is created. Step 2 of 2: publish its first version.`) : null,
    h('section', { class: 'panel', aria: { label: 'Published versions' } },
      h('h2', {}, 'Published versions'), versionsList,
      h('p', { class: 'small muted' }, `Tool ID ${detail.function_id} · ${detail.visibility} · ${detail.price_micro_usd ? `${usd(detail.price_micro_usd)} per run` : 'free'}`)),
    form);
  version.focus();
}

function versionItems(detail) {
  const versions = detail.versions || [];
  if (!versions.length) return [h('li', { class: 'muted' }, 'None yet.')];
  return versions.map((v) => h('li', {}, h('strong', {}, v.version), ` · ${runtimeName(v.runtime)} · ${v.compute_type} · ${day(v.published_at)}`));
}
