// Builds a form from a tool's JSON Schema (object with properties) and reads it back as
// arguments. Scalars and enums get inputs; anything else gets a JSON text area.
import { h } from './dom.js';

function fieldFor(name, schema, required) {
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  const label = h('label', { for: `arg-${name}` }, name, required ? h('span', { class: 'req' }, ' *') : null);
  const help = schema.description ? h('div', { class: 'help' }, schema.description) : null;
  let input;
  let read;
  if (Array.isArray(schema.enum)) {
    input = h('select', { id: `arg-${name}`, 'data-field': name },
      required ? null : h('option', { value: '' }, '—'),
      schema.enum.map((v) => h('option', { value: JSON.stringify(v) }, String(v))));
    read = () => (input.value === '' ? undefined : JSON.parse(input.value));
  } else if (type === 'boolean') {
    input = h('input', { type: 'checkbox', id: `arg-${name}`, 'data-field': name, checked: schema.default === true });
    read = () => input.checked;
  } else if (type === 'number' || type === 'integer') {
    input = h('input', { type: 'number', id: `arg-${name}`, 'data-field': name, step: type === 'integer' ? '1' : 'any', value: schema.default ?? '' });
    read = () => (input.value === '' ? undefined : Number(input.value));
  } else if (type === 'string') {
    input = h('input', { type: 'text', id: `arg-${name}`, 'data-field': name, value: schema.default ?? '' });
    read = () => (input.value === '' && !required ? undefined : input.value);
  } else {
    input = h('textarea', { id: `arg-${name}`, 'data-field': name, rows: 3, placeholder: 'JSON' },
      schema.default !== undefined ? JSON.stringify(schema.default) : '');
    read = () => {
      if (input.value.trim() === '') return undefined;
      try { return JSON.parse(input.value); } catch (e) { throw { field: name, message: `${name}: not valid JSON (${e.message})` }; }
    };
  }
  return { row: h('div', { class: 'field' }, label, input, help), read, name };
}

export function schemaForm(schema) {
  const props = (schema && schema.properties) || {};
  const required = new Set((schema && schema.required) || []);
  const fields = Object.entries(props).map(([n, s]) => fieldFor(n, s || {}, required.has(n)));
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
