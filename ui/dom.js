// Tiny DOM helpers: build elements without innerHTML (no escaping bugs, CSP-friendly).

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2).toLowerCase(), value);
    else if (key === 'class') el.className = value;
    else if (key === 'value') el.value = value;
    else if (key === 'checked') el.checked = Boolean(value);
    else el.setAttribute(key, value === true ? '' : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function clear(el, ...children) {
  el.replaceChildren();
  for (const child of children.flat(Infinity)) if (child) el.append(child);
  return el;
}

// The message of a command error ({kind, message}) or any thrown value.
export const errorText = (e) => (e && e.message) || String(e);

// Shows errors next to the field they name: inputs carry data-field="command" etc.
export function showFieldErrors(form, error, fallback) {
  for (const old of form.querySelectorAll('.field-error')) old.remove();
  for (const bad of form.querySelectorAll('.invalid')) bad.classList.remove('invalid');
  if (!error) return;
  const field = error.field && (form.querySelector(`[data-field="${error.field}"]`)
    || form.querySelector(`[data-field="${error.field.split(/[.[]/)[0]}"]`));
  const note = h('div', { class: 'field-error' }, errorText(error));
  if (field) {
    field.classList.add('invalid');
    field.after(note);
  } else {
    fallback.append(note);
  }
}
