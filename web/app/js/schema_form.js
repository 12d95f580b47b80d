// A form built from a tool's input schema, for Try it: one field per property of an object
// schema (text, number, checkbox, a list for an enum, JSON for anything nested), with the
// schema's description as the hint and its required members marked. Members of an event that
// the schema does not list are kept as they are, so switching to raw JSON and back loses nothing.

import { field, h, select } from './dom.js';
import { prettyJson } from './format.js';

function kindOf(s) {
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
  if (Array.isArray(s.enum) && s.enum.length && s.enum.every((v) => ['string', 'number', 'boolean'].includes(typeof v))) return 'enum';
  if (type === 'boolean') return 'boolean';
  if (type === 'number' || type === 'integer') return 'number';
  if (type === 'string') return 'string';
  return 'json';
}

// null when the schema is not an object schema with properties: raw JSON is then the only way.
export function schemaForm(schema) {
  if (!schema || typeof schema !== 'object' || schema.type !== 'object' || !schema.properties || typeof schema.properties !== 'object') return null;
  const entries = Object.entries(schema.properties);
  if (!entries.length) return null;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const controls = entries.map(([name, raw]) => {
    const s = raw && typeof raw === 'object' ? raw : {};
    const kind = kindOf(s);
    let control;
    if (kind === 'enum') control = select([{ value: '', label: '—' }, ...s.enum.map((v) => ({ value: JSON.stringify(v), label: String(v) }))], '');
    else if (kind === 'boolean') control = h('input', { type: 'checkbox' });
    else if (kind === 'number') control = h('input', { type: 'number', step: s.type === 'integer' ? '1' : 'any' });
    else if (kind === 'string') control = h('input', { type: 'text', autocomplete: 'off' });
    else control = h('textarea', { rows: '3', spellcheck: 'false' });
    const label = required.has(name) ? `${name} (required)` : name;
    const hint = [typeof s.description === 'string' ? s.description : '', kind === 'json' ? 'JSON' : ''].filter(Boolean).join(' · ');
    return { name, kind, control, required: required.has(name), element: field(label, control, { name: `arg-${name}`, hint: hint || undefined }) };
  });
  let extra = {};

  return {
    element: h('div', { class: 'schema-form', data: { schemaForm: '' } }, controls.map((c) => c.element)),
    // Shows event in the fields.
    write(event) {
      const obj = event && typeof event === 'object' && !Array.isArray(event) ? event : {};
      extra = Object.fromEntries(Object.entries(obj).filter(([k]) => !controls.some((c) => c.name === k)));
      for (const c of controls) {
        const v = obj[c.name];
        if (c.kind === 'boolean') c.control.checked = v === true;
        else if (c.kind === 'enum') c.control.value = v === undefined ? '' : JSON.stringify(v);
        else if (c.kind === 'json') c.control.value = v === undefined ? '' : prettyJson(v);
        else c.control.value = v === undefined || v === null ? '' : String(v);
      }
    },
    // The event the fields describe, and the problems found: [{ name: 'arg-<member>', message }].
    read() {
      const event = { ...extra };
      const problems = [];
      for (const c of controls) {
        const name = `arg-${c.name}`;
        if (c.kind === 'boolean') {
          if (c.control.checked || c.required) event[c.name] = c.control.checked;
          continue;
        }
        const text = c.control.value;
        if (text === '') {
          if (c.required) problems.push({ name, message: 'is required' });
          continue;
        }
        if (c.kind === 'enum') event[c.name] = JSON.parse(text);
        else if (c.kind === 'string') event[c.name] = text;
        else if (c.kind === 'number') {
          const n = Number(text);
          if (Number.isFinite(n)) event[c.name] = n; else problems.push({ name, message: 'must be a number' });
        } else {
          try {
            event[c.name] = JSON.parse(text);
          } catch (err) {
            problems.push({ name, message: `is not valid JSON (${err.message})` });
          }
        }
      }
      return { event, problems };
    },
  };
}
