// Builds a form from a JSON Schema (an object with properties) and reads it back as values.
// Used for a tool's "try it" arguments and for elicitation forms (`requestedSchema`, MCP
// 2025-11-25 with SEP-1330 enums and SEP-1034 defaults):
//   string (format email / uri / date / date-time; minLength, maxLength) → text, email, url, date input
//   number / integer (minimum, maximum)                                 → number input
//   boolean                                                             → checkbox
//   enum (+ legacy enumNames), oneOf / anyOf of {const, title}          → select (titles shown)
//   array with items.enum or items.anyOf / items.oneOf of {const, title} → checkboxes (minItems, maxItems)
//   anything else                                                       → a JSON text area
// `default` pre-fills every kind. `read()` validates (required, bounds, formats, item counts)
// and throws {field, message} for the first bad field.
import { h } from './dom.js';

// [{value, label}] of an enum-like schema, or null.
export function choices(schema) {
  if (!schema) return null;
  if (Array.isArray(schema.enum)) {
    const names = Array.isArray(schema.enumNames) ? schema.enumNames : [];
    return schema.enum.map((v, i) => ({ value: v, label: String(names[i] ?? v) }));
  }
  const titled = schema.oneOf || schema.anyOf;
  if (Array.isArray(titled) && titled.length && titled.every((o) => o && 'const' in o)) {
    return titled.map((o) => ({ value: o.const, label: String(o.title ?? o.const) }));
  }
  return null;
}

const FORMATS = {
  email: { type: 'email', check: (v) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v), hint: 'an email address' },
  uri: { type: 'url', check: (v) => { try { return Boolean(new URL(v).protocol); } catch { return false; } }, hint: 'a URL such as https://example.com' },
  date: { type: 'date', check: (v) => /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(v)), hint: 'a date (YYYY-MM-DD)' },
  'date-time': { type: 'datetime-local', check: (v) => !Number.isNaN(Date.parse(v)), hint: 'a date and time' },
};

const fail = (field, message) => { throw { field, message }; };

function fieldFor(prefix, name, schema, required) {
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  const id = `${prefix}-${name}`;
  const title = schema.title && schema.title !== name ? `${schema.title} (${name})` : name;
  const label = h('label', { for: id }, title, required ? h('span', { class: 'req' }, ' *') : null);
  const help = schema.description ? h('div', { class: 'help' }, schema.description) : null;
  const single = choices(schema);
  const multi = type === 'array' ? choices(schema.items) : null;
  let input;
  let read;
  if (multi) {
    const initial = new Set((Array.isArray(schema.default) ? schema.default : []).map((v) => JSON.stringify(v)));
    const boxes = multi.map((c) => h('input', {
      type: 'checkbox', 'data-field': name, 'data-value': String(c.value),
      value: JSON.stringify(c.value), checked: initial.has(JSON.stringify(c.value)),
    }));
    input = h('div', { class: 'choices', id, 'data-field': name },
      multi.map((c, i) => h('label', { class: 'choice' }, boxes[i], ' ', c.label)));
    read = () => {
      const picked = boxes.filter((b) => b.checked).map((b) => JSON.parse(b.value));
      if (picked.length === 0 && !required && schema.minItems === undefined) return undefined;
      if (schema.minItems !== undefined && picked.length < schema.minItems) fail(name, `${title}: choose at least ${schema.minItems}`);
      if (schema.maxItems !== undefined && picked.length > schema.maxItems) fail(name, `${title}: choose at most ${schema.maxItems}`);
      return picked;
    };
  } else if (single) {
    const initial = schema.default === undefined ? '' : JSON.stringify(schema.default);
    input = h('select', { id, 'data-field': name },
      required && schema.default !== undefined ? null : h('option', { value: '' }, '—'),
      single.map((c) => h('option', { value: JSON.stringify(c.value), selected: JSON.stringify(c.value) === initial }, c.label)));
    input.value = initial;
    read = () => {
      if (input.value === '') return required ? fail(name, `${title}: choose one`) : undefined;
      return JSON.parse(input.value);
    };
  } else if (type === 'boolean') {
    input = h('input', { type: 'checkbox', id, 'data-field': name, checked: schema.default === true });
    read = () => input.checked;
  } else if (type === 'number' || type === 'integer') {
    input = h('input', { type: 'number', id, 'data-field': name, step: type === 'integer' ? '1' : 'any',
      min: schema.minimum, max: schema.maximum, value: schema.default ?? '' });
    read = () => {
      if (input.value.trim() === '') return required ? fail(name, `${title}: required`) : undefined;
      const n = Number(input.value);
      if (!Number.isFinite(n)) fail(name, `${title}: not a number`);
      if (type === 'integer' && !Number.isInteger(n)) fail(name, `${title}: must be a whole number`);
      if (schema.minimum !== undefined && n < schema.minimum) fail(name, `${title}: must be at least ${schema.minimum}`);
      if (schema.maximum !== undefined && n > schema.maximum) fail(name, `${title}: must be at most ${schema.maximum}`);
      return n;
    };
  } else if (type === 'string') {
    const format = FORMATS[schema.format];
    input = h('input', { type: format ? format.type : 'text', id, 'data-field': name, value: schema.default ?? '',
      minlength: schema.minLength, maxlength: schema.maxLength });
    read = () => {
      const v = input.value;
      if (v === '') return required ? fail(name, `${title}: required`) : undefined;
      if (schema.minLength !== undefined && v.length < schema.minLength) fail(name, `${title}: at least ${schema.minLength} characters`);
      if (schema.maxLength !== undefined && v.length > schema.maxLength) fail(name, `${title}: at most ${schema.maxLength} characters`);
      if (format && !format.check(v)) fail(name, `${title}: not ${format.hint}`);
      return v;
    };
  } else {
    input = h('textarea', { id, 'data-field': name, rows: 3, placeholder: 'JSON' },
      schema.default !== undefined ? JSON.stringify(schema.default) : '');
    read = () => {
      if (input.value.trim() === '') return undefined;
      try { return JSON.parse(input.value); } catch (e) { return fail(name, `${name}: not valid JSON (${e.message})`); }
    };
  }
  return { row: h('div', { class: 'field' }, label, input, help), read, name };
}

// `prefix` keeps element ids unique when several forms share the page.
export function schemaForm(schema, prefix = 'arg') {
  const props = (schema && schema.properties) || {};
  const required = new Set((schema && schema.required) || []);
  const fields = Object.entries(props).map(([n, s]) => fieldFor(prefix, n, s || {}, required.has(n)));
  return {
    element: h('div', { class: 'schema-form' }, fields.length ? fields.map((f) => f.row) : h('div', { class: 'help' }, 'No arguments.')),
    read() {
      const args = {};
      for (const f of fields) {
        const v = f.read();
        if (v !== undefined) args[f.name] = v;
      }
      return args;
    },
  };
}

// Renders a tools/call result: text blocks, images, and everything else as JSON.
export function renderResult(result) {
  const blocks = (result.content || []).map((c) => {
    if (c.type === 'text') return h('pre', { class: 'result-text' }, c.text);
    if (c.type === 'image') return h('img', { class: 'result-image', src: `data:${c.mimeType};base64,${c.data}`, alt: 'image result' });
    return h('pre', { class: 'result-json' }, JSON.stringify(c, null, 2));
  });
  if (result.structuredContent) blocks.push(h('pre', { class: 'result-json' }, JSON.stringify(result.structuredContent, null, 2)));
  return h('div', { class: `result ${result.isError ? 'is-error' : 'is-ok'}` },
    h('div', { class: 'result-head' }, result.isError ? 'Error' : 'Result'), blocks);
}
